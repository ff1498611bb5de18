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
//! let file = GgufFile::open("tests/corpus/ggml-vocab-llama-bpe.gguf")?; // memory-mapped
//! let gguf = file.parse()?;
//! assert_eq!((gguf.version(), gguf.alignment, gguf.tensors.len()), (3, 32, 0));
//!
//! // Typed getters: any unsigned integer widens to u64, strings are checked UTF-8.
//! assert_eq!(gguf.get("general.architecture").and_then(|v| v.as_str()), Some("llama"));
//! assert_eq!(gguf.get("tokenizer.ggml.bos_token_id").and_then(|v| v.as_u64()), Some(128000));
//!
//! // Arrays are borrowed bytes decoded lazily: 128,256 tokens cost no allocation.
//! let tokens = gguf.get("tokenizer.ggml.tokens").and_then(|v| v.as_array()).unwrap();
//! assert_eq!(tokens.len(), 128256);
//! assert_eq!(tokens.iter().last().and_then(|t| t.as_str()), Some("<|reserved_special_token_250|>"));
//!
//! // Errors say where and in which construct.
//! let err = gguf_grammar::Gguf::parse(&file.bytes()[..1_500_000]).unwrap_err();
//! assert!(err.to_string().starts_with("offset 0x"), "{err}");
//! assert!(err.path.to_string().starts_with("kv[15] \"tokenizer.ggml.tokens\"["), "{err}");
//! # let _ = GgmlType::F32;
//! # Ok(()) }
//! ```
//!
//! Layout: [`grammar`] holds the parsers, [`Gguf`] the parsed document, [`GgmlType`] the
//! ggml tensor type table, [`stream`] the reader that pulls only the header from any
//! [`std::io::Read`], [`render`] the text and JSON dumps, [`error`] the located errors.
#![deny(unsafe_code)]
#![deny(missing_docs)]

mod document;
pub mod edit;
pub mod error;
pub mod ggml_type;
pub mod grammar;
pub mod render;
pub mod set;
pub mod source;
pub mod stream;
pub mod validate;
pub mod write;

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub use document::{Gguf, GgufFile, Tensor};
pub use error::{Error, ErrorKind};
pub use ggml_type::{GgmlType, TypeStatus};
pub use grammar::header::Header;
pub use grammar::kv::Kv;
pub use grammar::string::GgufStr;
pub use grammar::tensor_info::TensorInfo;
pub use grammar::value::{Array, ArrayIter, Value, ValueType};
pub use grammar::{Ctx, Endian, Version};
