//! # gguf-grammar
//!
//! The exact grammar of GGUF, the single-file model container of llama.cpp and ggml, as
//! composable [`nom`] parsers: one per construct ([`grammar`]), parameterised by version
//! (v1, v2, v3) and byte order, assembled into a whole-file parser that borrows everything
//! it returns from the input.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use gguf_grammar::{GgufFile, GgmlType};
//!
//! // A 22 KB LLaMA model (12 tensors, 8 tokens) that ships with the crate; memory-mapped.
//! let file = GgufFile::open("tests/conformance/cases/llama-8-tokens.gguf")?;
//! let gguf = file.parse()?;
//! assert_eq!((gguf.version().number(), gguf.alignment, gguf.tensors.len()), (3, 32, 12));
//!
//! // Typed getters say whether a key is missing or has another type.
//! assert_eq!(gguf.architecture(), Ok("llama"));
//! assert_eq!(gguf.get_u64("tokenizer.ggml.bos_token_id"), Ok(1));
//! assert!(gguf.get_str("tokenizer.ggml.bos_token_id").is_err());
//! assert_eq!(gguf.summary().parameters, Some(9824));
//!
//! // Arrays are borrowed bytes decoded lazily: a 128k-token vocabulary costs no allocation.
//! let tokens = gguf.get_array("tokenizer.ggml.tokens")?;
//! assert_eq!(tokens.len(), 8);
//! assert_eq!(tokens.iter().last().and_then(|t| t.as_str()), Some("▁été"));
//!
//! // Errors say where and in which construct: here the input ends inside the length of
//! // token 6, which starts at byte 833.
//! let err = gguf_grammar::Gguf::parse(&file.bytes()[..836]).unwrap_err();
//! assert_eq!(err.offset, 833);
//! assert_eq!(err.path.to_string(), "kv[17] \"tokenizer.ggml.tokens\"[6]");
//! # let _ = GgmlType::F32;
//! # Ok(()) }
//! ```
//!
//! Layout: [`grammar`] holds the parsers, [`Gguf`] the parsed document (and [`OwnedGguf`]
//! one that owns its bytes), [`summary`] the figures people ask first, [`GgmlType`] the
//! ggml tensor type table, [`stream`] the reader that pulls only the header from any
//! [`std::io::Read`], [`file_range`] positioned reads of tensor data, [`error`] the located
//! errors, [`escape`] the terminal escape for text from a file. The `examples/` folder of the
//! repository has short programs for the first things people do.
//!
//! Features, all on by default and none adding a dependency but `mmap`'s memmap2:
//!
//! | feature | what |
//! |---|---|
//! | `mmap` | `GgufFile` (a memory-mapped file); [`OwnedGguf::open`] maps instead of reading the header |
//! | `write` | `write`: `GgufBuilder`, byte-exact re-encoding |
//! | `validate` | `validate`: diagnostics per reference implementation and the model schema |
//! | `data` | `data`: tensor block layouts, dequantisation, byte swapping |
//!
//! The tools built on the library (renderings, edits with safe file replacement, shard sets,
//! remote headers, hashes) are the `gguf-tools` crate, test support (fixtures, mutations,
//! snapshots) `gguf-testkit`, the `gguf` command `gguf-cli`.
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]

#[cfg(feature = "data")]
pub mod data;
mod document;
pub mod elements;
pub mod error;
pub mod escape;
pub mod file_range;
pub mod ggml_type;
pub mod grammar;
mod read_buf;
pub mod stream;
pub mod summary;
#[cfg(feature = "validate")]
pub mod validate;
#[cfg(feature = "write")]
pub mod write;

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

#[cfg(feature = "mmap")]
pub use document::GgufFile;
pub use document::{alignment, Gguf, OwnedGguf, Tensor, ALIGNMENT_KEY, DEFAULT_ALIGNMENT};
pub use error::{Error, ErrorKind, GetError, ReadError};
pub use ggml_type::{GgmlType, TypeStatus};
pub use grammar::header::Header;
pub use grammar::kv::Kv;
pub use grammar::string::GgufStr;
pub use grammar::tensor_info::TensorInfo;
pub use grammar::value::{Array, ArrayIter, ElementType, Value, ValueType};
pub use grammar::{Ctx, Endian, Version};
