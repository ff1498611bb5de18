//! llama.cpp's model loader as one judgement per release (`gguf check --profile llama.cpp`
//! for [`Release::NEWEST`], `llama.cpp-0.3.16` for the older one; Python's
//! `check(profile="llama.cpp")`): what `llama_model_load_from_file` with default parameters
//! refuses. It is the container rules of that llama.cpp's own ggml with the tensor data
//! ([`container`]: `ggml-0.3.16-data`, which knows 40 types and crashes on a zero dim after
//! the first, or `ggml-0.3.36-data`), the model schema ([`schema::check_model_in`]), and a
//! file without tensors rejected: the default load fails where a vocabulary-only load
//! ([`Load::VocabOnly`]) succeeds. `scripts/check-llama-loader.sh` measures its agreement
//! with each release's own verdicts (`tests/llama/verdicts.json`,
//! `tests/llama/verdicts-0.3.36.json`).
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

use crate::{schema, Release};

/// The container profile the loader's verdict includes: the reader of the same llama.cpp's
/// ggml loading the data.
pub const fn container(release: Release) -> Profile {
    match release {
        Release::LlamaCppPython0316 => Profile::Ggml0316Data,
        Release::LlamaCppPython0336 => Profile::Ggml0336Data,
    }
}

/// [`container`] of [`Release::NEWEST`].
pub const CONTAINER: Profile = container(Release::NEWEST);

/// The name of the profile of `release`'s loader: `llama.cpp` for [`Release::NEWEST`],
/// `llama.cpp-0.3.16` for the older release (as the container profiles `ggml-0.3.16`).
pub const fn profile_name(release: Release) -> &'static str {
    match release {
        Release::LlamaCppPython0316 => "llama.cpp-0.3.16",
        Release::LlamaCppPython0336 => "llama.cpp",
    }
}

/// The release whose loader the profile `name` ([`profile_name`]) follows; `llama.cpp-0.3.36`
/// names the newest release too.
pub fn profile_release(name: &str) -> Option<Release> {
    if name == "llama.cpp-0.3.36" {
        return Some(Release::LlamaCppPython0336);
    }
    Release::ALL
        .iter()
        .copied()
        .find(|&r| profile_name(r) == name)
}

/// What the profile of `release`'s loader follows.
pub const fn models(release: Release) -> &'static str {
    match release {
        Release::LlamaCppPython0316 => {
            "the model loader of the llama.cpp vendored in llama-cpp-python 0.3.16 \
             (llama_model_load_from_file, default parameters, CPU), as recorded in \
             tests/llama/verdicts.json"
        }
        Release::LlamaCppPython0336 => {
            "the model loader of the llama.cpp vendored in llama-cpp-python 0.3.36 \
             (llama_model_load_from_file, default parameters, CPU), as recorded in \
             tests/llama/verdicts-0.3.36.json"
        }
    }
}

/// What `--profile llama.cpp` follows: [`models`] of [`Release::NEWEST`].
pub const MODELS: &str = models(Release::NEWEST);

/// How llama.cpp is asked to load the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    /// `llama_model_load_from_file` with default parameters: the whole model.
    Model,
    /// With `vocab_only` (as `llama-tokenize` loads): hyperparameters and vocabulary, no
    /// tensors; a file without tensors is then no error.
    VocabOnly,
}

/// The diagnostics under llama.cpp [`Release::NEWEST`]'s loader (see [`check_in`]).
pub fn check(gguf: &Gguf<'_>, file_len: u64) -> Vec<Diagnostic> {
    check_in(gguf, file_len, Release::NEWEST, Load::Model)
}

/// The diagnostics under llama.cpp `release`'s loader: [`container`]'s, then the schema's,
/// with `schema-vocab-only` an error for a [`Load::Model`]. `file_len` is the length of the
/// whole file.
pub fn check_in(gguf: &Gguf<'_>, file_len: u64, release: Release, load: Load) -> Vec<Diagnostic> {
    let mut found = validate::check(gguf, file_len, container(release));
    found.extend(schema::check_model_in(gguf, release));
    if load == Load::Model {
        for d in found.iter_mut().filter(|d| d.code == "schema-vocab-only") {
            d.severity = Severity::Error;
            d.message = format!("no tensors: the default load of the {} fails (missing tensor 'token_embd.weight'); it loads a vocabulary-only file only with vocab_only", release.name());
        }
    }
    found
}

/// Whether llama.cpp [`Release::NEWEST`]'s loader accepts a file with these diagnostics (of
/// [`check`]).
pub fn accepts(diagnostics: &[Diagnostic]) -> bool {
    accepts_in(diagnostics, Release::NEWEST)
}

/// Whether llama.cpp `release`'s loader accepts a file with these diagnostics (of
/// [`check_in`]): neither [`container`] nor the schema rejects it.
pub fn accepts_in(diagnostics: &[Diagnostic], release: Release) -> bool {
    validate::accepts(diagnostics, container(release)) && schema::accepts_model(diagnostics)
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
            let found = check_in(
                &gguf,
                bytes.len() as u64,
                Release::LlamaCppPython0316,
                Load::Model,
            );
            assert!(
                found
                    .iter()
                    .any(|d| d.code == code && d.severity == Severity::Error),
                "{ty} {dims:?}: {found:#?}"
            );
            assert!(!accepts_in(&found, Release::LlamaCppPython0316));
            // The newer ggml takes the tensor itself.
            let ggml = validate::check(&gguf, bytes.len() as u64, Profile::GgmlData);
            assert!(!ggml.iter().any(|d| d.code == code), "{ty} {dims:?}");
        }
    }
}
