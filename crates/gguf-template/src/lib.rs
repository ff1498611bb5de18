//! Chat templates in GGUF files: the one piece of a model file that is code.
//!
//! - [`read`]: every template a file carries (`tokenizer.chat_template` and
//!   `tokenizer.chat_template.NAME`) and the special tokens a template sees.
//! - [`render`]: a conversation rendered as transformers renders it, in a sandbox with
//!   bounded fuel, recursion, output and time.

pub mod lint;
pub mod pyfmt;
pub mod read;
pub mod render;
pub mod screen;

pub use read::{templates, ChatTemplate, SpecialTokens};
pub use render::{render, Conversation, Limits, RenderError};
