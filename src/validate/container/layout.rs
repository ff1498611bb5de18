//! The layout: the alignment (the key that sets it, as each reference finds it), ggml's
//! sequential placement of the tensor data, and where the data lie in the file.

use super::tensor::{ggml_0316_n_bytes, gguf_py_n_bytes_exact};
use super::{c_str, Checker, GGML, GGML_0316, GGML_43, GGML_DATA, PY, SPEC};
use crate::error::Segment;
use crate::grammar::align_up;
use crate::grammar::value::Value;
use crate::validate::codes;
use crate::validate::diagnostics::At;
use crate::validate::{Reference, References};
use crate::Gguf;

/// The key that sets the alignment.
const ALIGNMENT_KEY: &[u8] = crate::ALIGNMENT_KEY.as_bytes();

/// The alignment ggml uses: it finds `general.alignment` with `strcmp`, so a key that is
/// `general.alignment` followed by a NUL byte and more counts; a u32 power of two, else 32
/// (any other value makes ggml reject the file). The ggml of llama-cpp-python 0.3.16 also
/// takes an array of one u32 (`gguf_get_val_u32` checks the element type and count only),
/// which the other ggml rejects (`alignment-type`). Returned with the builds that place the
/// data with it: both, unless it comes from such an array (then only 0.3.16's gets that far).
fn ggml_alignment(gguf: &Gguf<'_>) -> (u64, References) {
    let found = ggml_alignment_kv(gguf).and_then(|i| alignment_u32(gguf.kvs[i].value));
    let n = found.map(|(n, _)| n).filter(|n| n.is_power_of_two());
    (crate::alignment(n), found.map_or(GGML, |(_, who)| who))
}

/// The u32 the alignment kv holds, and the ggml builds that take it: a u32 (every ggml) or
/// an array of one u32 (only the ggml of llama-cpp-python 0.3.16).
fn alignment_u32(value: Value<'_>) -> Option<(u32, References)> {
    match value {
        Value::U32(n) => Some((n, GGML)),
        Value::Array(a) if a.len() == 1 => match a.iter().next() {
            Some(Value::U32(n)) => Some((n, GGML_0316)),
            _ => None,
        },
        _ => None,
    }
}

fn ggml_alignment_kv(gguf: &Gguf<'_>) -> Option<usize> {
    gguf.kvs
        .iter()
        .position(|kv| c_str(kv.key.as_bytes()) == ALIGNMENT_KEY)
}

impl Checker<'_, '_> {
    pub(super) fn alignment(&mut self) {
        let gguf = self.gguf;
        // ggml finds the key with strcmp, gguf-py and the spec by exact bytes: almost always
        // the same kv, which then answers to all of them.
        let ggml_kv = ggml_alignment_kv(gguf);
        let exact_kv = gguf
            .kvs
            .iter()
            .position(|kv| kv.key.as_bytes() == ALIGNMENT_KEY);
        let targets = match (ggml_kv, exact_kv) {
            (Some(g), Some(e)) if g == e => vec![(g, GGML | PY | SPEC)],
            (g, e) => g
                .map(|g| (g, GGML))
                .into_iter()
                .chain(e.map(|e| (e, PY | SPEC)))
                .collect(),
        };
        for (index, who) in targets {
            self.alignment_value(index, who);
        }
    }

    /// The rules on the alignment kv at `index`, for the references `who` read it.
    fn alignment_value(&mut self, index: usize, who: References) {
        let value = self.gguf.kvs[index].value;
        // The references that read a u32 from it (an array of one u32 counts for 0.3.16's
        // ggml only); the rest reject its type (0.3.16's ggml aborts in an assertion).
        let (n, readers) = match value {
            Value::U32(n) => (Some(n), who),
            _ => match alignment_u32(value) {
                Some((n, takers)) => (Some(n), who & takers),
                None => (None, References::NONE),
            },
        };
        let n = n.filter(|_| !readers.is_empty());
        let wrong_type = who.difference(readers);
        if !wrong_type.is_empty() {
            let aborts = if wrong_type.contains(Reference::Ggml0316) {
                " (the ggml of llama-cpp-python 0.3.16 aborts: GGML_ASSERT in gguf_get_val_u32)"
            } else {
                ""
            };
            self.out.reject(
                codes::ALIGNMENT_TYPE,
                wrong_type,
                self.kv_at(index),
                format!(
                    "general.alignment is {}, not uint32{aborts}",
                    type_label(value)
                ),
            );
        }
        match n {
            None => {}
            Some(0) => self.out.reject(
                codes::ALIGNMENT_ZERO,
                readers,
                self.kv_at(index),
                "general.alignment is 0".into(),
            ),
            Some(n) => {
                let ggml_py = readers & (GGML | PY);
                if !n.is_power_of_two() && !ggml_py.is_empty() {
                    self.out.reject(
                        codes::ALIGNMENT_NOT_POWER_OF_TWO,
                        ggml_py,
                        self.kv_at(index),
                        format!("general.alignment {n} is not a power of two, as ggml and gguf-py require"),
                    );
                }
                if n % 8 != 0 && readers.contains(Reference::Spec) {
                    self.out.reject(
                        codes::ALIGNMENT_NOT_MULTIPLE_OF_8,
                        SPEC,
                        self.kv_at(index),
                        format!(
                            "general.alignment {n} is not a multiple of 8, as the spec requires"
                        ),
                    );
                }
            }
        }
    }

    /// ggml's layout: each tensor exactly where the previous one ends, padded to the
    /// alignment, in tensor-info order; the padded data start inside the file. The two ggml
    /// builds place the data alike unless a tensor's size differs between them (0.3.16's
    /// wraps, or it does not know the type): then each is judged on its own.
    pub(super) fn ggml_layout(&mut self) {
        let gguf = self.gguf;
        if gguf.tensors.is_empty() {
            return;
        }
        let (alignment, who) = ggml_alignment(gguf);
        let start = align_up(gguf.tensor_infos_end, alignment).unwrap_or(u64::MAX);
        if start > self.file_len && !(who & GGML_43).is_empty() {
            // The 0.3.16 ggml seeks past the end without complaint.
            self.out.reject(
                codes::DATA_START_PAST_EOF,
                who & GGML_43,
                At::bytes(gguf.tensor_infos_end..start),
                format!(
                    "the tensor data starts at {start} (padded to {alignment}), past the end of the file at {}",
                    self.file_len
                ),
            );
        }
        let recorded = placement(
            gguf.tensors.iter().map(|t| t.n_bytes),
            gguf,
            alignment,
            false,
        );
        let vendored = placement(
            gguf.tensors
                .iter()
                .map(|t| ggml_0316_n_bytes(t.info.ggml_type, &t.info.dims)),
            gguf,
            alignment,
            true,
        );
        if recorded == vendored {
            self.report_placement(recorded, who, start, alignment);
        } else {
            self.report_placement(recorded, who & GGML_43, start, alignment);
            self.report_placement(vendored, who & GGML_0316, start, alignment);
        }
    }

    /// The diagnostics of one placement of the tensor data, for the ggml builds `who`.
    fn report_placement(&mut self, placed: Placement, who: References, start: u64, alignment: u64) {
        if who.is_empty() {
            return;
        }
        let offset_at = |i: usize| self.tensor_at(i).then(Segment::Field("offset"));
        match placed {
            Placement::NotSequential { tensor, expected } => self.out.reject(
                codes::TENSOR_OFFSET_NOT_SEQUENTIAL,
                who,
                offset_at(tensor),
                format!(
                    "data offset {}: ggml expects {expected}, where the previous tensor ends padded to {alignment}",
                    self.gguf.tensors[tensor].info.offset
                ),
            ),
            Placement::Overflow { tensor } => self.out.reject(
                codes::DATA_SIZE_OVERFLOW,
                who,
                offset_at(tensor),
                "the padded tensor sizes add up past 2^64 bytes".into(),
            ),
            // A tensor without a size has been rejected for its type or shape already.
            Placement::Unsized => {}
            Placement::Size(size) => {
                // ggml loading the data reads the whole padded section (0.3.16's reads
                // nothing, successfully, when it is empty).
                let readers = if size == 0 {
                    who & GGML_DATA & GGML_43
                } else {
                    who & GGML_DATA
                };
                let end = start.checked_add(size).filter(|&end| end > self.file_len);
                if let (Some(end), false) = (end, readers.is_empty()) {
                    self.out.reject(
                        codes::DATA_SECTION_PAST_EOF,
                        readers,
                        At::bytes(start..end),
                        format!(
                            "the padded tensor data ends at {end}, past the end of the file at {}",
                            self.file_len
                        ),
                    );
                }
            }
        }
    }

    /// Where the tensors' data lie: inside the file, overlapping, with gaps, trailing bytes.
    pub(super) fn data_layout(&mut self) {
        let mut ranges = Vec::with_capacity(self.gguf.tensors.len());
        for i in 0..self.gguf.tensors.len() {
            if let Some(range) = self.tensor_data(i) {
                ranges.push(range);
            }
        }
        ranges.sort_unstable();
        self.overlaps_and_gaps(&ranges);
        self.trailing_bytes(&ranges);
    }

    /// The rules on where tensor `i`'s data lie; its byte range and index, when its size is
    /// known.
    fn tensor_data(&mut self, i: usize) -> Option<(u64, u64, usize)> {
        let tensor = &self.gguf.tensors[i];
        let Some(start) = tensor.data_offset else {
            self.out.reject(
                codes::TENSOR_DATA_PAST_EOF,
                GGML_DATA | PY | SPEC,
                self.tensor_at(i),
                "the data offset overflows 64 bits".into(),
            );
            return None;
        };
        let past =
            |n: u128| n > 0 && u128::from(start).saturating_add(n) > u128::from(self.file_len);
        let py_n_bytes = gguf_py_n_bytes_exact(tensor.info.ggml_type, &tensor.info.dims);
        let mut rejected_by = References::NONE;
        if tensor.n_bytes.is_some_and(|n| past(n.into())) {
            rejected_by = rejected_by | SPEC;
        }
        if py_n_bytes.is_some_and(past) {
            rejected_by = rejected_by | PY;
        }
        if !rejected_by.is_empty() {
            let n = tensor.n_bytes.map(u128::from).or(py_n_bytes).unwrap_or(0);
            let end = start.saturating_add(n.try_into().unwrap_or(u64::MAX));
            self.out.reject(
                codes::TENSOR_DATA_PAST_EOF,
                rejected_by,
                self.tensor_at(i).spanning(Some(start..end)),
                format!(
                    "{n} bytes of data at {start} run past the end of the file at {}",
                    self.file_len
                ),
            );
        }
        let n = tensor.n_bytes?;
        Some((start, start.saturating_add(n), i))
    }

    /// Overlaps and gaps between the data of tensors, given as (start, end, index) sorted by
    /// start: each is compared against the furthest end seen so far (not only the previous
    /// tensor's), so a tensor inside a long earlier one overlaps it, wherever it sorts.
    fn overlaps_and_gaps(&mut self, ranges: &[(u64, u64, usize)]) {
        let Some(&(_, first_end, first)) = ranges.first() else {
            return;
        };
        let mut furthest = (first_end, first);
        for &(b_start, b_end, b) in &ranges[1..] {
            let (a_end, a) = furthest;
            if b_start < a_end {
                self.out.report(
                    codes::TENSOR_OVERLAP,
                    self.tensor_at(b).spanning(Some(b_start..a_end.min(b_end))),
                    format!("data overlaps tensor[{a}]'s"),
                );
            } else if b_start > align_up(a_end, self.gguf.alignment).unwrap_or(u64::MAX) {
                self.out.report(
                    codes::TENSOR_GAP,
                    self.tensor_at(b).spanning(Some(a_end..b_start)),
                    format!("{} unused bytes after tensor[{a}]'s data", b_start - a_end),
                );
            }
            if b_end > a_end {
                furthest = (b_end, b);
            }
        }
    }

    /// Bytes after the padded end of the last tensor's data (or, with no tensors, after
    /// the header).
    fn trailing_bytes(&mut self, ranges: &[(u64, u64, usize)]) {
        let gguf = self.gguf;
        let end = match ranges.iter().map(|r| r.1).max() {
            Some(end) => align_up(end, gguf.alignment).unwrap_or(u64::MAX),
            None if gguf.tensors.is_empty() => gguf.tensor_data_offset,
            None => return,
        };
        if self.file_len > end {
            self.out.report(
                codes::TRAILING_BYTES,
                At::bytes(end..self.file_len),
                format!(
                    "{} bytes after the padded end of the tensor data",
                    self.file_len - end
                ),
            );
        }
    }
}

/// Where a ggml build puts the tensor data, given each tensor's size in it.
#[derive(Debug, PartialEq)]
enum Placement {
    /// Every tensor in place: the padded size of the data section.
    Size(u64),
    /// A tensor not where the previous one ends, padded.
    NotSequential { tensor: usize, expected: u64 },
    /// The padded sizes add up past 2^64.
    Overflow { tensor: usize },
    /// A tensor the build gives no size (rejected for its type or shape).
    Unsized,
}

/// Lays the tensors out one after the other as ggml does, each size padded to `alignment`:
/// with `GGML_PAD`'s wrapping arithmetic when `wrapping_pad` (0.3.16's ggml), else exactly.
fn placement(
    sizes: impl Iterator<Item = Option<u64>>,
    gguf: &Gguf<'_>,
    alignment: u64,
    wrapping_pad: bool,
) -> Placement {
    let mut expected = 0u64;
    for (tensor, (n_bytes, t)) in sizes.zip(&gguf.tensors).enumerate() {
        if t.info.offset != expected {
            return Placement::NotSequential { tensor, expected };
        }
        let Some(n_bytes) = n_bytes else {
            return Placement::Unsized;
        };
        let padded = if wrapping_pad {
            Some(n_bytes.wrapping_add(alignment - 1) & !(alignment - 1))
        } else {
            align_up(n_bytes, alignment)
        };
        match padded.and_then(|padded| expected.checked_add(padded)) {
            Some(next) => expected = next,
            None => return Placement::Overflow { tensor },
        }
    }
    Placement::Size(expected)
}

/// `uint64`, `array of uint32`, ...
fn type_label(value: Value<'_>) -> String {
    match value {
        Value::Array(a) => format!("array of {}", a.element_type()),
        other => other.value_type().to_string(),
    }
}
