//! llama.cpp's model loader as one judgement (`gguf check --profile llama.cpp`, Python's
//! `check(profile="llama.cpp")`): what `llama_model_load_from_file` with default parameters
//! refuses, in the llama.cpp of [`Release::NEWEST`](crate::Release::NEWEST). It is the container rules of that llama.cpp's own ggml with the tensor data
//! ([`CONTAINER`]: `ggml-0.3.16-data`, which knows 40 types and crashes on a zero dim after
//! the first), the model schema ([`schema::check_model`]), and a file without tensors
//! rejected: the default load fails where a vocabulary-only load succeeds. `scripts/check-llama-loader.sh` measures its
//! agreement with llama.cpp's own verdicts (`tests/llama/verdicts.json`).
//!
//! ```
//! use gguf_grammar::{validate::Severity, Gguf};
//! use gguf_llama::{loader, schema};
//!
//! let bytes = std::fs::read("../../tests/bundled/minimal-llama.gguf").unwrap();
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

use gguf_grammar::validate::{self, Diagnostic, Profile, Severity};
use gguf_grammar::Gguf;

use crate::schema;

/// The container profile the loader's verdict includes: the reader of the same llama.cpp's
/// ggml loading the data.
pub const CONTAINER: Profile = Profile::Ggml0316Data;

/// What `--profile llama.cpp` follows.
pub const MODELS: &str = "the model loader of the llama.cpp vendored in llama-cpp-python \
     0.3.16 (llama_model_load_from_file, default parameters, CPU), as recorded in \
     tests/llama/verdicts.json";

/// The diagnostics under llama.cpp's loader: [`CONTAINER`]'s, then the schema's, with
/// `schema-vocab-only` an error. `file_len` is the length of the whole file.
pub fn check(gguf: &Gguf<'_>, file_len: u64) -> Vec<Diagnostic> {
    let mut found = validate::check(gguf, file_len, CONTAINER);
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
    validate::accepts(diagnostics, CONTAINER) && schema::accepts_model(diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gguf_grammar::write::{GgufBuilder, TensorSpec};
    use gguf_grammar::GgmlType;

    /// minimal-llama with one more tensor.
    fn with_tensor(dims: &[u64], ggml_type: GgmlType, data: Vec<u8>) -> Vec<u8> {
        let bytes = std::fs::read("../../tests/bundled/minimal-llama.gguf").unwrap();
        let gguf = Gguf::parse(&bytes).unwrap();
        let mut builder = GgufBuilder::from_gguf(&gguf);
        builder.tensors.push(TensorSpec {
            name: b"extra".to_vec(),
            dims: dims.to_vec(),
            ggml_type,
            offset: None,
            data: data.into(),
        });
        builder.build().unwrap()
    }

    /// The loader's llama.cpp (llama-cpp-python 0.3.16) knows 40 ggml types and dies of a
    /// zero dim after the first: its container rules are that ggml's, not the newer one's.
    #[test]
    fn container_rules_are_those_of_the_loader_s_own_ggml() {
        for (dims, ty, data, code) in [
            (
                &[64][..],
                GgmlType::NVFP4,
                vec![0; 36],
                "tensor-type-unknown",
            ),
            (&[64], GgmlType::Q2_0, vec![0; 18], "tensor-type-unknown"),
            (&[8, 0], GgmlType::F32, vec![], "dim-zero-crash"),
        ] {
            let bytes = with_tensor(dims, ty, data);
            let gguf = Gguf::parse(&bytes).unwrap();
            let found = check(&gguf, bytes.len() as u64);
            assert!(
                found
                    .iter()
                    .any(|d| d.code == code && d.severity == Severity::Error),
                "{ty} {dims:?}: {found:#?}"
            );
            assert!(!accepts(&found));
            // The newer ggml takes the tensor itself.
            let ggml = validate::check(&gguf, bytes.len() as u64, Profile::GgmlData);
            assert!(!ggml.iter().any(|d| d.code == code), "{ty} {dims:?}");
        }
    }
}
