//! # gguf-testkit
//!
//! Test support over [`gguf_grammar`], for this workspace's crates and for other projects'
//! tests: deterministic sample files ([`fixtures`]), one broken (or oddly valid) file per
//! validation rule ([`mutate`]) and the diff-friendly snapshot text ([`snapshot`]). The `gguf`
//! command's `fixtures`, `mutate` and `snapshot` subcommands print them.
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod fixtures;
pub mod mutate;
pub mod snapshot;
