//! # gguf-tools
//!
//! What the `gguf` command is made of, as a library over [`gguf_grammar`]: renderings of a
//! parsed file ([`render`]: text, native JSON, gguf-py's JSON, the byte map, diffs), metadata
//! edits and safe file replacement ([`edit`]), shard sets and split/merge ([`set`]), where
//! bytes come from ([`source`]: files, standard input, HTTP ranges) and llama-gguf-hash's hashes
//! ([`hash`]). Test support (fixtures, mutations, snapshots) is the `gguf-testkit` crate.
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod codes;
pub mod edit;
pub mod hash;
pub mod render;
pub mod same_file;
pub mod set;
pub mod source;

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
