//! # gguf-tools
//!
//! What the `gguf` command is made of, as a library over [`gguf_grammar`]: renderings of a
//! parsed file ([`render`]: text, native JSON, gguf-py's JSON, the byte map, diffs), metadata
//! edits and safe file replacement ([`edit`]), shard sets and split/merge ([`set`]), where
//! bytes come from ([`source`]: files, standard input, HTTP ranges), llama-gguf-hash's hashes
//! ([`hash`]), deterministic sample files ([`fixtures`]), mutations of them ([`mutate`]) and
//! the snapshot text ([`snapshot`]).
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod codes;
pub mod edit;
pub mod fixtures;
pub mod hash;
pub mod mutate;
pub mod render;
pub mod same_file;
pub mod set;
pub mod snapshot;
pub mod source;
