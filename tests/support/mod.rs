//! Shared by the property tests, the fuzz replay test and the fuzz targets
//! (`fuzz/fuzz_targets/*.rs` include this folder by path).
#![allow(dead_code)]

pub mod alloc;
pub mod checks;
pub mod generate;
