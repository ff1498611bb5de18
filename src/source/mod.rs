//! Where bytes come from. Behind the `remote` feature: [`http`], a GGUF header read over
//! HTTP(S) range requests.

#[cfg(feature = "remote")]
pub mod http;
