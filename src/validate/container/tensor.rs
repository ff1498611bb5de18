//! Each tensor's descriptor: its name, dims, ggml type, size and offset.
use super::{c_str, Checker, Seen, ALL, GGML, GGML_0316, GGML_0336, GGML_43, PY, SPEC};
use crate::error::Segment;
use crate::validate::codes;
use crate::validate::References;
use crate::{GgmlType, TypeStatus};

/// ggml's `GGML_MAX_NAME`: a tensor name must be shorter.
const GGML_MAX_NAME: usize = 64;
/// The specification's limit: tensor names of at most 64 bytes.
const SPEC_MAX_NAME: usize = 64;
/// ggml's `GGML_MAX_DIMS` and the specification's "currently at most 4".
const MAX_DIMS: usize = 4;
/// `GGML_TYPE_COUNT` of the ggml vendored in llama-cpp-python 0.3.16: it knows ids 0..40
/// (mxfp4 the last), and rejects 40..42 as "invalid ggml type 40 (NONE)".
const GGML_0316_TYPE_COUNT: u32 = 40;

/// The byte size the ggml of llama-cpp-python 0.3.16 gives a tensor (`ggml_nbytes`, from the
/// strides `gguf_init_from_file` computes), in its `size_t` arithmetic: without an overflow
/// check, it wraps modulo 2^64, and for a block type `ne0 * type_size` wraps before the
/// division by the block size. `None` for a type it does not know or removed, or a row that
/// is not whole blocks (it rejects those).
///
/// ```
/// use gguf_grammar::{validate::ggml_0316_n_bytes, GgmlType};
/// assert_eq!(ggml_0316_n_bytes(GgmlType::Q4_0, &[64, 3]), Some(3 * 36));
/// assert_eq!(ggml_0316_n_bytes(GgmlType::F32, &[1 << 31, 1 << 31]), Some(0)); // 2^64 wraps
/// assert_eq!(ggml_0316_n_bytes(GgmlType::Q4_0, &[1 << 60]), Some(1 << 56)); // not 18 * 2^55
/// assert_eq!(ggml_0316_n_bytes(GgmlType::F32, &[0, 8]), Some(0));
/// assert_eq!(ggml_0316_n_bytes(GgmlType::Q2_0, &[64]), None); // type 42
/// ```
pub fn ggml_0316_n_bytes(ggml_type: GgmlType, dims: &[u64]) -> Option<u64> {
    if ggml_type.0 >= GGML_0316_TYPE_COUNT || dims.len() > MAX_DIMS {
        return None;
    }
    let (block, size) = (ggml_type.block_size()?, ggml_type.type_size()?);
    let ne = |i: usize| dims.get(i).copied().unwrap_or(1);
    if ne(0) % block != 0 {
        return None;
    }
    if (0..MAX_DIMS).any(|i| ne(i) == 0) {
        return Some(0);
    }
    let mut nb = [size, size.wrapping_mul(ne(0) / block), 0, 0];
    for j in 2..MAX_DIMS {
        nb[j] = nb[j - 1].wrapping_mul(ne(j - 1));
    }
    let first = if block == 1 {
        size.wrapping_add((ne(0) - 1).wrapping_mul(nb[0]))
    } else {
        ne(0).wrapping_mul(nb[0]) / block
    };
    Some((1..MAX_DIMS).fold(first, |n, i| {
        n.wrapping_add((ne(i) - 1).wrapping_mul(nb[i]))
    }))
}

/// gguf-py 0.19.0's `GGML_QUANT_SIZES` entry for `ggml_type`: (values per block, bytes per
/// block). It equals ggml's table except that q8_1 blocks are 40 bytes (ggml: 36) and q2_0
/// (id 42) is missing.
///
/// ```
/// use gguf_grammar::{validate::gguf_py_type_size, GgmlType};
/// assert_eq!(gguf_py_type_size(GgmlType::Q8_1), Some((32, 40)));
/// assert_eq!(gguf_py_type_size(GgmlType::Q4_K), Some((256, 144)));
/// assert_eq!(gguf_py_type_size(GgmlType::Q2_0), None);
/// ```
pub fn gguf_py_type_size(ggml_type: GgmlType) -> Option<(u64, u64)> {
    match ggml_type {
        GgmlType::Q8_1 => Some((32, 40)),
        GgmlType::Q2_0 => None,
        t => Some((t.block_size()?, t.type_size()?)),
    }
}

/// The byte size gguf-py 0.19.0 gives a tensor (`n_elements * type_size // block_size`, with
/// its own table), or `None` for a type it does not know or a size past `u64`.
///
/// ```
/// use gguf_grammar::{validate::gguf_py_n_bytes, GgmlType};
/// assert_eq!(gguf_py_n_bytes(GgmlType::Q8_1, &[32, 2]), Some(80)); // ggml: 72
/// assert_eq!(gguf_py_n_bytes(GgmlType::F32, &[]), Some(4));
/// ```
pub fn gguf_py_n_bytes(ggml_type: GgmlType, dims: &[u64]) -> Option<u64> {
    u64::try_from(gguf_py_n_bytes_exact(ggml_type, dims)?).ok()
}

/// gguf-py's byte size in 128 bits (saturated), `None` for a type it does not know.
pub(super) fn gguf_py_n_bytes_exact(ggml_type: GgmlType, dims: &[u64]) -> Option<u128> {
    let (block, size) = gguf_py_type_size(ggml_type)?;
    let bytes = exact_elements(dims).saturating_mul(u128::from(size));
    Some(bytes / u128::from(block))
}

/// The product of the dims in 128 bits, saturated (dims are at most 2^64, so a saturated
/// product is far past every limit checked against it).
fn exact_elements(dims: &[u64]) -> u128 {
    // A zero dim makes the count zero in any order, before any product can overflow.
    if dims.contains(&0) {
        return 0;
    }
    dims.iter()
        .try_fold(1u128, |acc, &d| acc.checked_mul(u128::from(d)))
        .unwrap_or(u128::MAX)
}

impl<'a> Checker<'_, 'a> {
    pub(super) fn tensors(&mut self) {
        let mut names = TensorNames::new();
        for i in 0..self.gguf.tensors.len() {
            self.tensor_name(i, &mut names);
            self.tensor_dims(i);
            self.tensor_type(i);
            self.tensor_size(i);
            self.tensor_offset(i);
        }
    }

    /// Its name: length, UTF-8, and whether an earlier tensor has it.
    fn tensor_name(&mut self, i: usize, names: &mut TensorNames<'a>) {
        let name = self.gguf.tensors[i].info.name;
        let bytes = name.as_bytes();
        if bytes.len() >= GGML_MAX_NAME {
            let spec = if bytes.len() > SPEC_MAX_NAME {
                SPEC
            } else {
                References::NONE
            };
            self.out.reject(
                codes::TENSOR_NAME_TOO_LONG,
                GGML | spec,
                self.tensor_at(i),
                format!(
                    "tensor name of {} bytes: ggml takes at most {}, the spec at most {SPEC_MAX_NAME}",
                    bytes.len(),
                    GGML_MAX_NAME - 1
                ),
            );
        }
        if name.to_str().is_err() {
            self.out.reject(
                codes::TENSOR_NAME_INVALID_UTF8,
                PY | SPEC,
                self.tensor_at(i),
                "tensor name is not UTF-8: gguf-py cannot decode it".into(),
            );
        }
        if let Some((earlier, exact)) = names.first_use(bytes, i) {
            self.out.reject(
                codes::DUPLICATE_TENSOR_NAME,
                if exact { GGML | PY } else { GGML },
                self.tensor_at(i),
                format!("tensor name already used by tensor[{earlier}]"),
            );
        }
    }

    /// Its dims: how many, and each within int64.
    fn tensor_dims(&mut self, i: usize) {
        let dims = &self.gguf.tensors[i].info.dims;
        if dims.len() > MAX_DIMS {
            self.out.reject(
                codes::TOO_MANY_DIMS,
                GGML | SPEC,
                self.tensor_at(i),
                format!(
                    "{} dims: ggml and the spec allow at most {MAX_DIMS}",
                    dims.len()
                ),
            );
        }
        if let Some(d) = dims.iter().position(|&d| d > i64::MAX as u64) {
            self.out.reject(
                codes::DIM_TOO_LARGE,
                ALL,
                self.tensor_at(i).then(Segment::Dim(d as u64)),
                format!(
                    "dim {} does not fit in an int64 (ggml reads it as negative)",
                    dims[d]
                ),
            );
        } else if dims.len() <= MAX_DIMS {
            // Its element-count check computes INT64_MAX/ne[1], /ne[2] and /ne[3].
            if let Some(d) = dims.iter().skip(1).position(|&d| d == 0) {
                self.out.reject(
                    codes::DIM_ZERO_CRASH,
                    GGML_0316,
                    self.tensor_at(i).then(Segment::Dim(d as u64 + 1)),
                    "dim 0 after the first: the ggml of llama-cpp-python 0.3.16 divides INT64_MAX by it and crashes (SIGFPE)".into(),
                );
            }
        }
    }

    /// Its ggml type: known to each ggml, and to gguf-py.
    fn tensor_type(&mut self, i: usize) {
        let ty = self.gguf.tensors[i].info.ggml_type;
        let found = match ty.status() {
            TypeStatus::Unknown => Some((
                codes::TENSOR_TYPE_UNKNOWN,
                ALL,
                format!(
                    "ggml type {} is not defined (ggml knows 0..{})",
                    ty.0,
                    GgmlType::COUNT
                ),
            )),
            TypeStatus::Removed => Some((
                codes::TENSOR_TYPE_REMOVED,
                ALL,
                format!("ggml type {} ({ty}) has been removed", ty.0),
            )),
            TypeStatus::Known if ty.0 >= GGML_0316_TYPE_COUNT => Some((
                codes::TENSOR_TYPE_UNKNOWN,
                GGML_0316,
                format!(
                    "ggml type {} ({ty}) is newer than the ggml of llama-cpp-python 0.3.16, which knows 0..{GGML_0316_TYPE_COUNT}",
                    ty.0
                ),
            )),
            TypeStatus::Known => None,
        };
        if let Some((code, rejected_by, message)) = found {
            self.out
                .reject(code, rejected_by, self.tensor_at(i), message);
        }
        if ty.status() == TypeStatus::Known && gguf_py_type_size(ty).is_none() {
            self.out.reject(
                codes::TENSOR_TYPE_NOT_IN_GGUF_PY,
                PY,
                self.tensor_at(i),
                format!("ggml type {} ({ty}) is newer than gguf-py 0.19.0", ty.0),
            );
        }
    }

    /// Its size: whole blocks per row, and a count and byte size each reference can hold.
    fn tensor_size(&mut self, i: usize) {
        let info = &self.gguf.tensors[i].info;
        let (ty, dims) = (info.ggml_type, &info.dims);
        let ne0 = dims.first().copied().unwrap_or(1);
        let divisible = match ty.block_size() {
            Some(block) if ne0 % block != 0 => {
                self.out.reject(
                    codes::TENSOR_ROW_NOT_BLOCK_MULTIPLE,
                    ALL,
                    self.tensor_at(i),
                    format!(
                        "rows of {ne0} values are not a whole number of {ty} blocks of {block}"
                    ),
                );
                false
            }
            Some(_) => true,
            None => false,
        };
        let rejected_by = size_rejecters(ty, dims, divisible);
        if !rejected_by.is_empty() {
            self.out.reject(
                codes::TENSOR_TOO_LARGE,
                rejected_by,
                self.tensor_at(i),
                format!(
                    "{} values of {ty}: the element count or byte size overflows 64 bits",
                    exact_elements(dims)
                ),
            );
        }
    }

    /// Its data offset: a multiple of the alignment.
    fn tensor_offset(&mut self, i: usize) {
        let (offset, alignment) = (self.gguf.tensors[i].info.offset, self.gguf.alignment);
        if offset % alignment != 0 {
            self.out.reject(
                codes::TENSOR_OFFSET_UNALIGNED,
                SPEC,
                self.tensor_at(i),
                format!("data offset {offset} is not a multiple of the alignment {alignment}"),
            );
        }
    }
}

/// Which references reject a tensor as too large to represent.
fn size_rejecters(ty: GgmlType, dims: &[u64], divisible: bool) -> References {
    if dims.iter().any(|&d| d > i64::MAX as u64) {
        return References::NONE; // `dim-too-large` already says so
    }
    let elements = exact_elements(dims);
    let mut rejected_by = References::NONE;
    // The 0.3.36 ggml multiplies the dims in order, skipping the check for a dim of 0 or 1:
    // it rejects when the product up to the first zero dim passes INT64_MAX.
    let mut product = 1u128;
    for (i, &ne) in dims.iter().enumerate().take(MAX_DIMS) {
        if i > 0 && ne > 1 && product > u128::from(i64::MAX as u64 / ne) {
            rejected_by = rejected_by | GGML_0336;
            break;
        }
        product *= u128::from(ne);
    }
    // The other ggml builds, evaluated exactly: INT64_MAX/ne1 <= ne0 || INT64_MAX/ne2 <= ne0*ne1 || ...
    // (the recorded ggml computes the products in int64 and misses overflows that wrap to
    // <= 0; the 0.3.16 one tests the terms in order, so its products never overflow), then
    // nelements/blck > SIZE_MAX/type_size (only the recorded ggml).
    if dims.len() <= MAX_DIMS && elements > 0 {
        let ne = |i: usize| i128::from(dims.get(i).map_or(1, |&d| d as i64));
        let max = i128::from(i64::MAX);
        // Each ne is below 2^63, so ne0*ne1 fits in i128; the triple product may not, and
        // saturating keeps the comparison exact (it is then far above the bound).
        let elements_overflow = max / ne(1) <= ne(0)
            || max / ne(2) <= ne(0) * ne(1)
            || max / ne(3) <= (ne(0) * ne(1)).saturating_mul(ne(2));
        let bytes_overflow = divisible
            && match (ty.block_size(), ty.type_size()) {
                (Some(block), Some(size)) => {
                    elements / u128::from(block) > u128::from(u64::MAX / size)
                }
                _ => false,
            };
        // The ggml of llama-cpp-python 0.3.16 has no byte-size check: its sizes wrap.
        if elements_overflow {
            rejected_by = rejected_by | GGML.difference(GGML_0336);
        } else if bytes_overflow {
            rejected_by = rejected_by | GGML_43.difference(GGML_0336);
        }
        if bytes_overflow {
            rejected_by = rejected_by | GGML_0336;
        }
    }
    // gguf-py: numpy cannot shape an array of more than 2^63 - 1 values.
    if elements > i64::MAX as u128 {
        rejected_by = rejected_by | PY;
    }
    // The spec: the element count and byte size must be representable.
    if elements > u128::from(u64::MAX) || (divisible && ty.n_bytes(dims).is_none()) {
        rejected_by = rejected_by | SPEC;
    }
    rejected_by
}

/// The tensor names seen so far, compared as gguf-py compares them (exactly) and as ggml does
/// (as C strings, up to the first NUL): one map lookup for a name without a NUL byte.
struct TensorNames<'a> {
    /// By C string: the first tensor with it, and the first whose whole name it is.
    c_strings: Seen<'a, (usize, Option<usize>)>,
    /// The names that hold a NUL byte, exactly.
    with_nul: Seen<'a, usize>,
}

impl<'a> TensorNames<'a> {
    fn new() -> Self {
        TensorNames {
            c_strings: Seen::new(),
            with_nul: Seen::new(),
        }
    }

    /// Records tensor `i` named `name`; returns the first earlier tensor with exactly this
    /// name (and `true`), else the first with the same C string (and `false`).
    fn first_use(&mut self, name: &'a [u8], i: usize) -> Option<(usize, bool)> {
        let c = c_str(name);
        let (first_c, first_whole) = self.c_strings.entry(c).or_insert((i, None));
        let earlier_c = Some(*first_c).filter(|&first| first != i);
        let earlier_exact = if c.len() == name.len() {
            let earlier = *first_whole;
            first_whole.get_or_insert(i);
            earlier
        } else {
            self.with_nul.first_use(name, i)
        };
        match earlier_exact {
            Some(first) => Some((first, true)),
            None => earlier_c.map(|first| (first, false)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_rules_follow_each_reference() {
        // nelements-overflow: ggml's int64 product wraps to 0 and it accepts; exactly, all reject.
        assert_eq!(
            size_rejecters(GgmlType::F32, &[1 << 32, 1 << 32], true),
            ALL
        );
        // nbytes-overflow: 2^62 values fit, 2^64 bytes do not (gguf-py fails on the missing
        // data; the 0.3.16 ggml does not check the byte size).
        assert_eq!(
            size_rejecters(GgmlType::F32, &[1 << 31, 1 << 31], true),
            GGML_43 | SPEC
        );
        assert_eq!(
            size_rejecters(GgmlType::F32, &[4096, 4096], true),
            References::NONE
        );
        assert_eq!(
            size_rejecters(GgmlType::F32, &[0, u64::MAX >> 1], true),
            References::NONE
        );
    }

    #[test]
    fn names_are_compared_exactly_and_as_c_strings() {
        let mut names = TensorNames::new();
        let found: Vec<_> = [&b"a"[..], b"a\0x", b"a\0y", b"a\0y", b"a", b"b"]
            .into_iter()
            .enumerate()
            .map(|(i, name)| names.first_use(name, i))
            .collect();
        assert_eq!(
            found,
            [
                None,
                Some((0, false)),
                Some((0, false)),
                Some((2, true)),
                Some((0, true)),
                None
            ]
        );
        let mut names = TensorNames::new();
        assert_eq!(names.first_use(b"a\0x", 0), None);
        assert_eq!(names.first_use(b"a", 1), Some((0, false)));
        assert_eq!(names.first_use(b"a", 2), Some((1, true)));
    }
}
