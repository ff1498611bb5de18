//! Judgement, kept apart from parsing: diagnostics about files that decode but break a rule
//! of the specification or of a reference reader.
//!
//! Each [`Diagnostic`] has a stable code, a severity, the byte span and path of what it is
//! about, a message, and the references that reject a file for it. A [`Profile`] accepts a
//! file when no error-severity diagnostic names it among its rejecters.

use std::ops::Range;

use crate::error::Path;

/// A reference whose accept/reject verdict the diagnostics model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reference {
    /// ggml's C reader (`gguf_init_from_file`) reading metadata only (`no_alloc = true`).
    Ggml,
    /// ggml's C reader also loading the tensor data.
    GgmlData,
    /// gguf-py 0.19.0's `GGUFReader(path)`.
    GgufPy,
    /// The GGUF specification.
    Spec,
}

/// Which rules a check applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Profile {
    /// What ggml's C reader accepts when reading metadata only.
    Ggml,
    /// What ggml's C reader accepts when it also loads tensor data.
    GgmlData,
    /// What gguf-py 0.19.0's `GGUFReader(path)` accepts.
    GgufPy,
    /// The GGUF specification's rules.
    Spec,
    /// All of them.
    Strict,
}

impl Profile {
    /// Whether a diagnostic rejected by `rejected_by` makes this profile reject the file.
    pub fn rejects(self, rejected_by: &[Reference]) -> bool {
        match self {
            Profile::Ggml => rejected_by.contains(&Reference::Ggml),
            Profile::GgmlData => rejected_by.contains(&Reference::GgmlData),
            Profile::GgufPy => rejected_by.contains(&Reference::GgufPy),
            Profile::Spec => rejected_by.contains(&Reference::Spec),
            Profile::Strict => !rejected_by.is_empty(),
        }
    }
}

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
    /// Stable identifier, e.g. `"duplicate-key"`; never reused for another meaning.
    pub code: &'static str,
    /// How serious it is.
    pub severity: Severity,
    /// Byte range of what the diagnostic is about, when it has one.
    pub span: Option<Range<u64>>,
    /// The construct it is about, e.g. `kv[3] "general.alignment"`.
    pub path: Path,
    /// What is wrong, in a sentence.
    pub message: String,
    /// The references that reject a file for this (empty: none do).
    pub rejected_by: &'static [Reference],
}

pub mod schema;
