//! llama.cpp's model loader as one judgement (`gguf check --profile llama.cpp`, Python's
//! `check(profile="llama.cpp")`): what `llama_model_load_from_file` with default parameters
//! refuses, in the llama.cpp that [`LLAMA_CPP_VERSION`](super::schema::LLAMA_CPP_VERSION)
//! names. It is ggml's container rules with the tensor data ([`CONTAINER`]), the model schema
//! ([`schema::check_model`]), and a file without tensors rejected: the default load fails
//! where a vocabulary-only load succeeds. `scripts/check-llama-loader.sh` measures its
//! agreement with llama.cpp's own verdicts (`tests/llama/verdicts.json`).
//!
//! ```
//! use gguf_grammar::{validate::{loader, schema, Severity}, Gguf};
//!
//! let bytes = std::fs::read("tests/bundled/minimal-llama.gguf").unwrap();
//! let gguf = Gguf::parse(&bytes).unwrap();
//! assert!(loader::accepts(&loader::check(&gguf, bytes.len() as u64)));
//!
//! // The same model without its tensors: llama.cpp loads it only with vocab_only.
//! let mut vocab_only = gguf_grammar::write::GgufBuilder::from_gguf(&gguf);
//! vocab_only.tensors.clear();
//! let bytes = vocab_only.build().unwrap();
//! let found = loader::check(&Gguf::parse(&bytes).unwrap(), bytes.len() as u64);
//! let vocab_only = found.iter().find(|d| d.code == "schema-vocab-only").unwrap();
//! assert_eq!(vocab_only.severity, Severity::Error); // a note under `schema::check_model`
//! assert!(!schema::accepts_model(&found) && !loader::accepts(&found));
//! ```

use super::{schema, Diagnostic, Profile, Severity};
use crate::Gguf;

/// The container profile the loader's verdict includes: ggml's reader loading the data.
pub const CONTAINER: Profile = Profile::GgmlData;

/// What `--profile llama.cpp` follows.
pub const MODELS: &str = "the model loader of the llama.cpp vendored in llama-cpp-python \
     0.3.16 (llama_model_load_from_file, default parameters, CPU), as recorded in \
     tests/llama/verdicts.json";

/// The diagnostics under llama.cpp's loader: [`CONTAINER`]'s, then the schema's, with
/// `schema-vocab-only` an error. `file_len` is the length of the whole file.
pub fn check(gguf: &Gguf<'_>, file_len: u64) -> Vec<Diagnostic> {
    let mut found = super::check(gguf, file_len, CONTAINER);
    found.extend(schema::check_model(gguf));
    for d in found.iter_mut().filter(|d| d.code == "schema-vocab-only") {
        d.severity = Severity::Error;
        d.message = "no tensors: llama.cpp's default load fails (missing tensor 'token_embd.weight'); it loads a vocabulary-only file only with vocab_only".into();
    }
    found
}

/// Whether llama.cpp's loader accepts a file with these diagnostics (of [`check`]): neither
/// [`CONTAINER`] nor the schema rejects it.
pub fn accepts(diagnostics: &[Diagnostic]) -> bool {
    super::accepts(diagnostics, CONTAINER) && schema::accepts_model(diagnostics)
}
