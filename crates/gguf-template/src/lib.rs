//! Chat templates in GGUF files: the one piece of a model file that is code.
//!
//! - [`mod@read`]: every template a file carries (`tokenizer.chat_template` and
//!   `tokenizer.chat_template.NAME`) and the special tokens a template sees.
//! - [`mod@render`]: a conversation rendered as transformers renders it, in a sandbox with
//!   bounded fuel, recursion, output and time.
//! - [`family`]: the family llama.cpp detects (its built-in formatter).
//! - [`lint`]: what is wrong with a template (does not parse, does not render, raises, names
//!   tokens the vocabulary lacks, never opens the assistant's turn).
//! - [`minja`]: what llama.cpp's Jinja engine refuses although jinja2 parses it.
//! - [`mod@screen`]: a static screen for the building blocks of template injections.
//! - [`sandbox`] and [`bounds`]: how a render is bounded (nesting, work, value sizes, time).
//!
//! `scripts/check-templates.sh` renders every template of llama.cpp's `models/templates/`, of
//! the corpus and of SmolLM2 with a fixed set of conversations here, in transformers and in
//! llama.cpp, and requires ours to equal transformers' byte for byte.
//!
//! Known engine differences from jinja2 that no reference template reaches: `cycler`,
//! `joiner` and `lipsum` are not defined; `Markup` (`|safe`) escapes only in `+`; a template
//! that reaches one of the bounds of [`bounds`] stops (jinja2 has none).

pub mod bounds;
pub mod codes;
pub mod family;
pub mod lint;
pub mod minja;
pub mod pyfmt;
pub mod read;
pub mod render;
pub mod report;
pub mod sandbox;
pub mod screen;

pub use read::{templates, ChatTemplate, SpecialTokens};
pub use render::{render, Conversation, Limits, RenderError};

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
