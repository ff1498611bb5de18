//! llama.cpp's knowledge of GGUF models, per llama.cpp release ([`Release`]): which
//! architectures it loads and what keys and tensors (with their shapes) each has
//! ([`schema`]), its loader's verdict ([`loader`]), the hyperparameters it reads per layer
//! ([`hparams`]), its vocabulary and pre-tokenizer names and its sliding-window layouts. The
//! container itself (grammar, writer, container rules) is `gguf-grammar`'s; a new llama.cpp
//! release is a release of this crate, never of the grammar.
//!
//! ```
//! use gguf_grammar::Gguf;
//! use gguf_llama::loader;
//!
//! let bytes = std::fs::read("../../tests/bundled/minimal-llama.gguf").unwrap();
//! let gguf = Gguf::parse(&bytes).unwrap();
//! assert!(loader::accepts(&loader::check(&gguf, bytes.len() as u64)));
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]

pub mod codes;
pub mod hparams;
pub mod loader;
mod release;
pub mod schema;

pub use release::{Release, Releases};
