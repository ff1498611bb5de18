//! Judgement, kept apart from parsing: diagnostics about files that decode but break a rule
//! of the specification or of a reference reader.
//!
//! Each [`Diagnostic`] has a stable code, a severity, the byte span and path of what it is
//! about, a message, and the references that reject a file for it. A [`Profile`] accepts a
//! file when no error-severity diagnostic names it among its rejecters.

use std::ops::Range;

use crate::error::ConstructPath;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// Worth knowing; no reference rejects the file for it.
    Note,
    /// Suspicious or unconventional, not fatal.
    Warning,
    /// The file breaks a rule.
    Error,
}

/// One finding about a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// What kind of finding it is, e.g. [`codes::DUPLICATE_KEY`] (`duplicate-key`).
    pub code: Code,
    /// How serious it is.
    pub severity: Severity,
    /// Byte range of what the diagnostic is about, when it has one.
    pub span: Option<Range<u64>>,
    /// The construct it is about, e.g. `kv[3] "general.alignment"`.
    pub path: ConstructPath,
    /// What is wrong, in a sentence.
    pub message: String,
    /// The references that reject a file for this (empty: none do).
    pub rejected_by: References,
}

mod code;
pub mod codes;
mod container;
mod diagnostics;
mod reference;

pub use code::{check_code_list, readme_table, Code};
pub use container::{ggml_0316_n_bytes, gguf_py_n_bytes, gguf_py_type_size};
pub use diagnostics::MAX_PER_KIND;
pub use diagnostics::{At, Diagnostics};
pub use reference::{Profile, Reference, References};

use crate::error::{Error, ErrorKind};
use crate::Gguf;

impl Severity {
    /// `note`, `warning` or `error`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Every container diagnostic about a parsed file, whichever references they concern;
/// `file_len` is the length of the whole file (the parse may have seen only its header).
///
/// ```
/// use gguf_grammar::{validate, Gguf};
///
/// let bytes = std::fs::read("tests/conformance/cases/duplicate-key.gguf").unwrap();
/// let gguf = Gguf::parse(&bytes).unwrap();
/// let found = validate::diagnose(&gguf, bytes.len() as u64);
/// assert_eq!(found[0].code, "duplicate-key");
/// assert_eq!(found[0].path.to_string(), "kv[1] \"test.dup\"");
/// ```
pub fn diagnose(gguf: &Gguf<'_>, file_len: u64) -> Vec<Diagnostic> {
    container::diagnose(gguf, file_len)
}

/// The diagnostics that matter under `profile`: those it rejects the file for, and the
/// warnings and notes no reference rejects for. The profile accepts the file when
/// [`accepts`] says so.
///
/// ```
/// use gguf_grammar::{validate::{self, Profile}, Gguf};
///
/// let bytes = std::fs::read("tests/conformance/cases/tensor-offset-gap.gguf").unwrap();
/// let gguf = Gguf::parse(&bytes).unwrap();
/// let ggml = validate::check(&gguf, bytes.len() as u64, Profile::Ggml);
/// assert!(!validate::accepts(&ggml, Profile::Ggml));
/// assert!(ggml.iter().any(|d| d.code == "tensor-offset-not-sequential"));
/// let py = validate::check(&gguf, bytes.len() as u64, Profile::GgufPy);
/// assert!(validate::accepts(&py, Profile::GgufPy)); // gguf-py takes offsets as given
/// ```
pub fn check(gguf: &Gguf<'_>, file_len: u64, profile: Profile) -> Vec<Diagnostic> {
    let mut found = diagnose(gguf, file_len);
    found.retain(|d| d.rejected_by.is_empty() || profile.rejects(d.rejected_by));
    found
}

/// Whether `profile` accepts a file with these diagnostics: none of them is one it rejects for.
pub fn accepts(diagnostics: &[Diagnostic], profile: Profile) -> bool {
    !diagnostics.iter().any(|d| profile.rejects(d.rejected_by))
}

/// A file that does not parse, as a diagnostic every reference rejects it for, at the parse
/// error's offset and path. Its code names the kind of failure: `bad-magic`,
/// `unsupported-version`, `unknown-value-type`, `truncated`, `length-past-end`,
/// `nesting-too-deep`.
///
/// ```
/// use gguf_grammar::{validate, Gguf};
///
/// let err = Gguf::parse(b"GGUF\x04\0\0\0").unwrap_err();
/// let d = validate::parse_failure(&err);
/// assert_eq!((d.code.name(), d.span.clone(), d.path.to_string()), ("unsupported-version", Some(4..4), "header.version".into()));
/// assert_eq!(d.rejected_by.len(), 8);
/// ```
pub fn parse_failure(err: &Error) -> Diagnostic {
    let code = match err.kind {
        ErrorKind::BadMagic { .. } => codes::BAD_MAGIC,
        ErrorKind::UnsupportedVersion { .. } => codes::UNSUPPORTED_VERSION,
        ErrorKind::UnknownValueType { .. } => codes::UNKNOWN_VALUE_TYPE,
        ErrorKind::Truncated { .. } => codes::TRUNCATED,
        ErrorKind::LengthPastEnd { .. } => codes::LENGTH_PAST_END,
        ErrorKind::NestingTooDeep { .. } => codes::NESTING_TOO_DEEP,
        _ => codes::PARSE_ERROR,
    };
    Diagnostic {
        code,
        severity: Severity::Error,
        span: Some(err.offset..err.offset),
        path: err.path.clone(),
        message: err.kind.to_string(),
        rejected_by: References::ALL,
    }
}
