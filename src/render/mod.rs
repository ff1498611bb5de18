//! Renderings of a parsed [`crate::Gguf`]: a human-readable dump, a one-screen model summary,
//! the native JSON and gguf-py's JSON.

pub mod gguf_py;
pub mod json;
pub mod summary;
pub mod text;
