//! The layout: the alignment (the key that sets it, as each reference finds it), ggml's
//! sequential placement of the tensor data, and where the data lie in the file.

use super::tensor::gguf_py_n_bytes_exact;
use super::{c_str, Checker, GGML, GGML_DATA, PY, SPEC};
use crate::error::Segment;
use crate::grammar::align_up;
use crate::grammar::value::Value;
use crate::validate::diagnostics::At;
use crate::validate::Code;
use crate::validate::{Reference, References};
use crate::Gguf;

/// The key that sets the alignment.
const ALIGNMENT_KEY: &[u8] = crate::ALIGNMENT_KEY.as_bytes();

/// The alignment ggml uses: it finds `general.alignment` with `strcmp`, so a key that is
/// `general.alignment` followed by a NUL byte and more counts; a u32 power of two, else 32
/// (any other value makes ggml reject the file).
fn ggml_alignment(gguf: &Gguf<'_>) -> u64 {
    crate::alignment(
        ggml_alignment_kv(gguf).and_then(|i| match gguf.kvs[i].value {
            Value::U32(n) if n.is_power_of_two() => Some(n),
            _ => None,
        }),
    )
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
        match self.gguf.kvs[index].value {
            Value::U32(0) => self.out.reject(
                Code::AlignmentZero,
                who,
                self.kv_at(index),
                "general.alignment is 0".into(),
            ),
            Value::U32(n) => {
                if !n.is_power_of_two() {
                    self.out.reject(
                        Code::AlignmentNotPowerOfTwo,
                        who & (GGML | PY),
                        self.kv_at(index),
                        format!("general.alignment {n} is not a power of two, as ggml and gguf-py require"),
                    );
                }
                if n % 8 != 0 && who.contains(Reference::Spec) {
                    self.out.reject(
                        Code::AlignmentNotMultipleOf8,
                        SPEC,
                        self.kv_at(index),
                        format!(
                            "general.alignment {n} is not a multiple of 8, as the spec requires"
                        ),
                    );
                }
            }
            other => self.out.reject(
                Code::AlignmentType,
                who,
                self.kv_at(index),
                format!("general.alignment is {}, not uint32", type_label(other)),
            ),
        }
    }

    /// ggml's layout: each tensor exactly where the previous one ends, padded to the
    /// alignment, in tensor-info order; the padded data start inside the file.
    pub(super) fn ggml_layout(&mut self) {
        let gguf = self.gguf;
        if gguf.tensors.is_empty() {
            return;
        }
        let alignment = ggml_alignment(gguf);
        let start = align_up(gguf.tensor_infos_end, alignment).unwrap_or(u64::MAX);
        if start > self.file_len {
            self.out.reject(
                Code::DataStartPastEof,
                GGML,
                At::bytes(gguf.tensor_infos_end..start),
                format!(
                    "the tensor data starts at {start} (padded to {alignment}), past the end of the file at {}",
                    self.file_len
                ),
            );
        }
        let Some(size) = self.ggml_data_size(alignment) else {
            return;
        };
        // ggml loading the data reads the whole padded section.
        if let Some(end) = start.checked_add(size).filter(|&end| end > self.file_len) {
            self.out.reject(
                Code::DataSectionPastEof,
                GGML_DATA,
                At::bytes(start..end),
                format!(
                    "the padded tensor data ends at {end}, past the end of the file at {}",
                    self.file_len
                ),
            );
        }
    }

    /// The size of the tensor data as ggml lays it out (each tensor padded to `alignment`),
    /// or `None` after reporting the first tensor it cannot place.
    fn ggml_data_size(&mut self, alignment: u64) -> Option<u64> {
        let mut expected = 0u64;
        for (i, tensor) in self.gguf.tensors.iter().enumerate() {
            let offset_at = || self.tensor_at(i).then(Segment::Field("offset"));
            if tensor.info.offset != expected {
                self.out.reject(
                    Code::TensorOffsetNotSequential,
                    GGML,
                    offset_at(),
                    format!(
                        "data offset {}: ggml expects {expected}, where the previous tensor ends padded to {alignment}",
                        tensor.info.offset
                    ),
                );
                return None;
            }
            // A tensor without a size has been rejected for its type or shape already.
            let n_bytes = tensor.n_bytes?;
            match align_up(n_bytes, alignment).and_then(|padded| expected.checked_add(padded)) {
                Some(next) => expected = next,
                None => {
                    self.out.reject(
                        Code::DataSizeOverflow,
                        GGML,
                        offset_at(),
                        "the padded tensor sizes add up past 2^64 bytes".into(),
                    );
                    return None;
                }
            }
        }
        Some(expected)
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
                Code::TensorDataPastEof,
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
                Code::TensorDataPastEof,
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
                    Code::TensorOverlap,
                    self.tensor_at(b).spanning(Some(b_start..a_end.min(b_end))),
                    format!("data overlaps tensor[{a}]'s"),
                );
            } else if b_start > align_up(a_end, self.gguf.alignment).unwrap_or(u64::MAX) {
                self.out.report(
                    Code::TensorGap,
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
                Code::TrailingBytes,
                At::bytes(end..self.file_len),
                format!(
                    "{} bytes after the padded end of the tensor data",
                    self.file_len - end
                ),
            );
        }
    }
}

/// `uint64`, `array of uint32`, ...
fn type_label(value: Value<'_>) -> String {
    match value {
        Value::Array(a) => format!("array of {}", a.element_type()),
        other => other.value_type().to_string(),
    }
}
