//! Renderings of a parsed [`crate::Gguf`]: a human-readable dump and the native JSON.

pub mod json;
pub mod text;
