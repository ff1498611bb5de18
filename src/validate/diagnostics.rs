//! The one sink the container and schema checks report into: it builds every diagnostic the
//! same way, locates it the same way, and keeps memory bounded by counting, not storing, what
//! goes past [`MAX_PER_KIND`] of one kind.

use std::collections::HashMap;
use std::ops::Range;

use super::{Code, Diagnostic, References, Severity};
use crate::error::{ConstructPath, Segment};
use crate::Gguf;

/// Diagnostics of one kind (code, rejecting references, severity) kept per file; the rest
/// are counted and reported as one "and N more" diagnostic of the same kind, so that memory
/// stays bounded (300,000 empty keys give 100 diagnostics, not 300,000) and the verdict of
/// every profile is unchanged.
pub const MAX_PER_KIND: u64 = 100;

/// What a diagnostic is about: its byte span, when it has one, and its construct's path.
#[derive(Clone, Debug, Default)]
pub struct At {
    /// The bytes the diagnostic is about, when it is about bytes.
    pub span: Option<Range<u64>>,
    /// The construct it is about.
    pub path: ConstructPath,
}

impl At {
    /// A header field, e.g. `header.version`.
    pub fn header(field: &'static str, span: Range<u64>) -> At {
        At {
            span: Some(span),
            path: ConstructPath(vec![Segment::Header(field)]),
        }
    }

    /// Bytes of the file that belong to no one construct (no path).
    pub fn bytes(span: Range<u64>) -> At {
        At {
            span: Some(span),
            path: ConstructPath::default(),
        }
    }

    /// The `index`-th key/value pair: `kv[3] "general.alignment"`, over the whole pair.
    pub fn kv(gguf: &Gguf<'_>, index: usize) -> At {
        let kv = &gguf.kvs[index];
        At {
            span: span_of(gguf, kv.raw),
            path: ConstructPath(vec![
                Segment::Kv(index as u64),
                Segment::Name(kv.key.lossy()),
            ]),
        }
    }

    /// The `index`-th tensor: `tensor[2] "output.weight"`, over its descriptor.
    pub fn tensor(gguf: &Gguf<'_>, index: usize) -> At {
        let info = &gguf.tensors[index].info;
        At {
            span: span_of(gguf, info.raw),
            path: ConstructPath(vec![
                Segment::Tensor(index as u64),
                Segment::Name(info.name.lossy()),
            ]),
        }
    }

    /// The same construct, one step further in: a field, a dim, an array element.
    pub fn then(mut self, segment: Segment) -> At {
        self.path.0.push(segment);
        self
    }

    /// The same construct, pointing at `span` instead.
    pub fn spanning(self, span: Option<Range<u64>>) -> At {
        At { span, ..self }
    }
}

/// Where `part` (a slice of the parsed input) lies in the file.
pub fn span_of(gguf: &Gguf<'_>, part: &[u8]) -> Option<Range<u64>> {
    let start = gguf.offset_of(part)?;
    Some(start..start + part.len() as u64)
}

/// A kind of diagnostic, for the per-kind cap.
type Kind = (Code, References, Severity);

/// Collects the diagnostics of one check of one file.
#[derive(Debug, Default)]
pub struct Diagnostics {
    kept: Vec<Diagnostic>,
    /// How many diagnostics of each kind were reported (kept or not).
    reported: HashMap<Kind, u64>,
}

impl Diagnostics {
    /// Records that the references in `rejected_by` (at least one, all among those the
    /// code's entry in [`Code`] names) reject the file for this: an error.
    pub fn reject(&mut self, code: Code, rejected_by: References, at: At, message: String) {
        debug_assert!(
            !rejected_by.is_empty() && code.rejected_by().contains_all(rejected_by),
            "{code} is not rejected by {rejected_by:?}"
        );
        self.push(code, Severity::Error, rejected_by, at, message);
    }

    /// Records a finding no reference rejects a file for, with the code's severity.
    pub fn report(&mut self, code: Code, at: At, message: String) {
        self.push(code, code.severity(), References::NONE, at, message);
    }

    /// Records a diagnostic rejected by `rejected_by`; one a reference rejects for is an
    /// error, whatever `severity` says.
    fn push(
        &mut self,
        code: Code,
        severity: Severity,
        rejected_by: References,
        at: At,
        message: String,
    ) {
        let severity = if rejected_by.is_empty() {
            severity
        } else {
            Severity::Error
        };
        let seen = self
            .reported
            .entry((code, rejected_by, severity))
            .or_default();
        *seen += 1;
        if *seen <= MAX_PER_KIND {
            self.kept.push(Diagnostic {
                code,
                severity,
                span: at.span,
                path: at.path,
                message,
                rejected_by,
            });
        }
    }

    /// The diagnostics kept, in the order they were reported, then one "and N more" per
    /// kind that went past the cap (in the order of code, references and severity).
    pub fn finish(self) -> Vec<Diagnostic> {
        let mut kept = self.kept;
        let mut more: Vec<_> = self
            .reported
            .into_iter()
            .filter(|&(_, n)| n > MAX_PER_KIND)
            .collect();
        more.sort_unstable();
        for ((code, rejected_by, severity), n) in more {
            kept.push(Diagnostic {
                code,
                severity,
                span: None,
                path: ConstructPath::default(),
                message: format!("and {} more like the above", n - MAX_PER_KIND),
                rejected_by,
            });
        }
        kept
    }
}
