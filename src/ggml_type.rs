//! The ggml tensor element types: what a tensor info's type id means and how
//! many bytes a tensor of that type and shape takes.
//!
//! The table follows ggml exactly: `enum ggml_type` in `ggml/include/ggml.h`
//! (where `GGML_TYPE_COUNT` is 43), the `type_traits` table in
//! `ggml/src/ggml.c` (`type_name`, `blck_size`, `type_size`) and the block
//! structs of `ggml/src/ggml-common.h` (whose `sizeof` gives `type_size`).
//!
//! Every id is in one of three states ([`TypeStatus`]):
//!
//! - **known**: ids ggml defines today, with a block size (values per block)
//!   and a type size (bytes per block);
//! - **removed**: ids ggml once used and still reserves but no longer loads:
//!   4 and 5 (`q4_2`, `q4_3`), 31–33 (`q4_0_4_4`, `q4_0_4_8`, `q4_0_8_8`)
//!   and 36–38 (`iq4_nl_4_4`, `iq4_nl_4_8`, `iq4_nl_8_8`). ggml keeps them in
//!   its table with a block size of 0, so its reader rejects any tensor that
//!   uses them;
//! - **unknown**: every id from 43 up, which ggml's reader rejects as
//!   an invalid type.
//!
//! # Differences with gguf-py
//!
//! gguf-py (`gguf.constants.GGML_QUANT_SIZES`, checked against gguf 0.19.0)
//! agrees with this table on every id it defines, with two exceptions:
//!
//! - **`q8_1`** (id 9): ggml's `block_q8_1` is two `f16` (`d` and `s`) and 32
//!   `i8` quants, **36** bytes per 32 values; gguf-py says 40 (as if `d` and
//!   `s` were `f32`). This table follows ggml, which is what llama.cpp reads
//!   files with, so a `[32, 2]` `q8_1` tensor is 72 bytes here and 80 in gguf-py.
//! - **`q2_0`** (id 42) is not in gguf-py 0.19.0's `GGMLQuantizationType`, which
//!   refuses files that use it; ggml reads it (64 values in 18 bytes).

use std::fmt;

/// A ggml tensor element type id as stored in a tensor info. Open newtype: unknown ids are kept.
///
/// The wrapped `u32` is the raw id from the file; any value is allowed, and
/// [`status`](GgmlType::status) tells whether ggml knows it. There is one
/// associated constant per id ggml defines.
///
/// # Examples
///
/// ```
/// use gguf_grammar::GgmlType;
///
/// let t = GgmlType::Q4_K;
/// assert_eq!(t, GgmlType(12));
/// assert_eq!(t.name(), Some("q4_K"));
/// assert_eq!(t.block_size(), Some(256));
/// assert_eq!(t.type_size(), Some(144));
/// // A 4096 x 4096 q4_K matrix: 16 blocks per row, 4096 rows.
/// assert_eq!(t.n_bytes(&[4096, 4096]), Some(16 * 144 * 4096));
/// assert_eq!(t.to_string(), "q4_K");
///
/// // A row that is not a whole number of blocks has no size.
/// assert_eq!(t.n_bytes(&[100, 2]), None);
///
/// // q8_1 blocks are 36 bytes in ggml (gguf-py 0.19.0 says 40).
/// assert_eq!(GgmlType::Q8_1.n_bytes(&[32, 2]), Some(72));
///
/// // Removed ids keep a name but have no size; unknown ids have neither.
/// assert_eq!(GgmlType(4).name(), Some("q4_2"));
/// assert_eq!(GgmlType(4).n_bytes(&[32]), None);
/// assert_eq!(GgmlType(1000).name(), None);
/// assert_eq!(GgmlType(1000).to_string(), "unknown(1000)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GgmlType(pub u32);

/// What the table knows about an id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeStatus {
    /// ggml defines the id today: it has a name, a block size and a type size.
    Known,
    /// ggml used the id once and reserves it, but no longer reads tensors of
    /// that type (its table gives it a block size of 0). It has a historical
    /// name but no sizes.
    Removed,
    /// ggml has never defined the id (every id from [`GgmlType::COUNT`] up).
    Unknown,
}

/// One row of the table: what ggml says about one id.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// The id; equal to the entry's index in [`TABLE`].
    id: u32,
    /// ggml's `type_name` for known ids; the historical name for removed ids.
    name: &'static str,
    /// ggml's `blck_size`: values per block (0 for removed ids, as in ggml).
    block: u64,
    /// ggml's `type_size`: bytes per block (0 for removed ids, as in ggml).
    size: u64,
    /// Known or removed (unknown ids have no entry).
    status: TypeStatus,
    /// The string ggml's `ggml_type_name` returns today; differs from `name`
    /// only for removed ids.
    ggml_name: &'static str,
}

/// An id ggml defines: `name` as ggml's `type_name`, `block` values in `size` bytes.
const fn known(id: u32, name: &'static str, block: u64, size: u64) -> Entry {
    Entry {
        id,
        name,
        block,
        size,
        status: TypeStatus::Known,
        ggml_name: name,
    }
}

/// An id ggml has removed: historical `name`, and the placeholder `ggml_name`
/// ggml's table now carries for it.
const fn removed(id: u32, name: &'static str, ggml_name: &'static str) -> Entry {
    Entry {
        id,
        name,
        block: 0,
        size: 0,
        status: TypeStatus::Removed,
        ggml_name,
    }
}

/// `QK_K`, the super-block size of the k-quants, i-quants and ternary quants.
const QK_K: u64 = 256;

/// The table, one row per id from 0 to `GGML_TYPE_COUNT - 1` in id order, each with the
/// documented constant it defines (removed ids have none): `TABLE` and the `GgmlType`
/// constants are generated from this one list.
///
/// Sizes are the `sizeof` of the block structs in `ggml-common.h`; `f16`
/// below means `ggml_half` (2 bytes).
macro_rules! ggml_types {
    ($([$($(#[$doc:meta])* $constant:ident)?] $row:ident($id:literal, $($arg:expr),*),)*) => {
        const TABLE: [Entry; GgmlType::COUNT as usize] = [$($row($id, $($arg),*)),*];

        impl GgmlType {
            $($($(#[$doc])* pub const $constant: GgmlType = GgmlType($id);)?)*
        }
    };
}

ggml_types! {
    [/// `f32`: 32-bit IEEE float, 4 bytes per value.
     F32] known(0, "f32", 1, 4),          // float
    [/// `f16`: 16-bit IEEE half float, 2 bytes per value.
     F16] known(1, "f16", 1, 2),          // ggml_fp16_t
    [/// `q4_0`: 32 values in 18 bytes.
     Q4_0] known(2, "q4_0", 32, 18),       // block_q4_0: f16 d, u8 qs[16]
    [/// `q4_1`: 32 values in 20 bytes.
     Q4_1] known(3, "q4_1", 32, 20),       // block_q4_1: f16 d, f16 m, u8 qs[16]
    [] removed(4, "q4_2", "DEPRECATED"),
    [] removed(5, "q4_3", "DEPRECATED"),
    [/// `q5_0`: 32 values in 22 bytes.
     Q5_0] known(6, "q5_0", 32, 22),       // block_q5_0: f16 d, u8 qh[4], u8 qs[16]
    [/// `q5_1`: 32 values in 24 bytes.
     Q5_1] known(7, "q5_1", 32, 24),       // block_q5_1: f16 d, f16 m, u8 qh[4], u8 qs[16]
    [/// `q8_0`: 32 values in 34 bytes.
     Q8_0] known(8, "q8_0", 32, 34),       // block_q8_0: f16 d, i8 qs[32]
    [/// `q8_1`: 32 values in 36 bytes (gguf-py 0.19.0 says 40; ggml is followed here).
     Q8_1] known(9, "q8_1", 32, 36),       // block_q8_1: f16 d, f16 s, i8 qs[32] (gguf-py 0.19.0: 40)
    [/// `q2_K`: 256 values in 84 bytes.
     Q2_K] known(10, "q2_K", QK_K, 84),    // block_q2_K: u8 scales[16], u8 qs[64], f16 d, f16 dmin
    [/// `q3_K`: 256 values in 110 bytes.
     Q3_K] known(11, "q3_K", QK_K, 110),   // block_q3_K: u8 hmask[32], u8 qs[64], u8 scales[12], f16 d
    [/// `q4_K`: 256 values in 144 bytes.
     Q4_K] known(12, "q4_K", QK_K, 144),   // block_q4_K: f16 d, f16 dmin, u8 scales[12], u8 qs[128]
    [/// `q5_K`: 256 values in 176 bytes.
     Q5_K] known(13, "q5_K", QK_K, 176),   // block_q5_K: f16 d, dmin, u8 scales[12], qh[32], qs[128]
    [/// `q6_K`: 256 values in 210 bytes.
     Q6_K] known(14, "q6_K", QK_K, 210),   // block_q6_K: u8 ql[128], u8 qh[64], i8 scales[16], f16 d
    [/// `q8_K`: 256 values in 292 bytes.
     Q8_K] known(15, "q8_K", QK_K, 292),   // block_q8_K: f32 d, i8 qs[256], i16 bsums[16]
    [/// `iq2_xxs`: 256 values in 66 bytes.
     IQ2_XXS] known(16, "iq2_xxs", QK_K, 66), // block_iq2_xxs: f16 d, u16 qs[32]
    [/// `iq2_xs`: 256 values in 74 bytes.
     IQ2_XS] known(17, "iq2_xs", QK_K, 74),  // block_iq2_xs: f16 d, u16 qs[32], u8 scales[8]
    [/// `iq3_xxs`: 256 values in 98 bytes.
     IQ3_XXS] known(18, "iq3_xxs", QK_K, 98), // block_iq3_xxs: f16 d, u8 qs[96]
    [/// `iq1_s`: 256 values in 50 bytes.
     IQ1_S] known(19, "iq1_s", QK_K, 50),   // block_iq1_s: f16 d, u8 qs[32], u16 qh[8]
    [/// `iq4_nl`: 32 values in 18 bytes.
     IQ4_NL] known(20, "iq4_nl", 32, 18),    // block_iq4_nl: f16 d, u8 qs[16]
    [/// `iq3_s`: 256 values in 110 bytes.
     IQ3_S] known(21, "iq3_s", QK_K, 110),  // block_iq3_s: f16 d, u8 qs[64], qh[8], signs[32], scales[4]
    [/// `iq2_s`: 256 values in 82 bytes.
     IQ2_S] known(22, "iq2_s", QK_K, 82),   // block_iq2_s: f16 d, u8 qs[64], u8 qh[8], u8 scales[8]
    [/// `iq4_xs`: 256 values in 136 bytes.
     IQ4_XS] known(23, "iq4_xs", QK_K, 136), // block_iq4_xs: f16 d, u16 scales_h, u8 scales_l[4], u8 qs[128]
    [/// `i8`: 8-bit signed integer, 1 byte per value.
     I8] known(24, "i8", 1, 1),          // int8_t
    [/// `i16`: 16-bit signed integer, 2 bytes per value.
     I16] known(25, "i16", 1, 2),         // int16_t
    [/// `i32`: 32-bit signed integer, 4 bytes per value.
     I32] known(26, "i32", 1, 4),         // int32_t
    [/// `i64`: 64-bit signed integer, 8 bytes per value.
     I64] known(27, "i64", 1, 8),         // int64_t
    [/// `f64`: 64-bit IEEE float, 8 bytes per value.
     F64] known(28, "f64", 1, 8),         // double
    [/// `iq1_m`: 256 values in 56 bytes.
     IQ1_M] known(29, "iq1_m", QK_K, 56),   // block_iq1_m: u8 qs[32], u8 qh[16], u8 scales[8]
    [/// `bf16`: bfloat16, 2 bytes per value.
     BF16] known(30, "bf16", 1, 2),        // ggml_bf16_t
    [] removed(31, "q4_0_4_4", "TYPE_Q4_0_4_4 REMOVED, use Q4_0 with runtime repacking"),
    [] removed(32, "q4_0_4_8", "TYPE_Q4_0_4_8 REMOVED, use Q4_0 with runtime repacking"),
    [] removed(33, "q4_0_8_8", "TYPE_Q4_0_8_8 REMOVED, use Q4_0 with runtime repacking"),
    [/// `tq1_0`: ternary, 256 values in 54 bytes.
     TQ1_0] known(34, "tq1_0", QK_K, 54),   // block_tq1_0: u8 qs[48], u8 qh[4], f16 d
    [/// `tq2_0`: ternary, 256 values in 66 bytes.
     TQ2_0] known(35, "tq2_0", QK_K, 66),   // block_tq2_0: u8 qs[64], f16 d
    [] removed(36, "iq4_nl_4_4", "TYPE_IQ4_NL_4_4 REMOVED, use IQ4_NL with runtime repacking"),
    [] removed(37, "iq4_nl_4_8", "TYPE_IQ4_NL_4_8 REMOVED, use IQ4_NL with runtime repacking"),
    [] removed(38, "iq4_nl_8_8", "TYPE_IQ4_NL_8_8 REMOVED, use IQ4_NL with runtime repacking"),
    [/// `mxfp4`: 32 FP4 (E2M1) values and one E8M0 scale, 17 bytes.
     MXFP4] known(39, "mxfp4", 32, 17),     // block_mxfp4: u8 e (E8M0 scale), u8 qs[16]
    [/// `nvfp4`: 64 FP4 (E2M1) values and four UE4M3 scales, 36 bytes.
     NVFP4] known(40, "nvfp4", 64, 36),     // block_nvfp4: u8 d[4] (UE4M3 scales), u8 qs[32]
    [/// `q1_0`: 128 one-bit values in 18 bytes.
     Q1_0] known(41, "q1_0", 128, 18),     // block_q1_0: f16 d, u8 qs[16]
    [/// `q2_0`: 64 two-bit values in 18 bytes (not in gguf-py 0.19.0).
     Q2_0] known(42, "q2_0", 64, 18),      // block_q2_0: f16 d, u8 qs[16] (not in gguf-py 0.19.0)
}

// The table is indexed by id, and sizes are present exactly for known ids.
const _: () = {
    let mut i = 0;
    while i < TABLE.len() {
        let e = &TABLE[i];
        assert!(e.id as usize == i, "TABLE must be indexed by id");
        match e.status {
            TypeStatus::Known => assert!(e.block > 0 && e.size > 0),
            TypeStatus::Removed => assert!(e.block == 0 && e.size == 0),
            TypeStatus::Unknown => panic!("TABLE holds no unknown ids"),
        }
        i += 1;
    }
};

impl GgmlType {
    /// ggml's `GGML_TYPE_COUNT`: one past the highest id ggml defines. Every id
    /// below it is [known](TypeStatus::Known) or [removed](TypeStatus::Removed);
    /// every id from it up is [unknown](TypeStatus::Unknown).
    pub const COUNT: u32 = 43;

    /// The table row for this id, if ggml has one (known or removed).
    fn entry(self) -> Option<&'static Entry> {
        usize::try_from(self.0).ok().and_then(|i| TABLE.get(i))
    }

    /// The row for this id if it is known (so has sizes).
    fn known_entry(self) -> Option<&'static Entry> {
        self.entry().filter(|e| e.status == TypeStatus::Known)
    }

    /// Whether ggml defines this id, has removed it, or has never defined it.
    ///
    /// ```
    /// use gguf_grammar::GgmlType;
    ///
    /// assert_eq!(format!("{:?}", GgmlType::F32.status()), "Known");
    /// assert_eq!(format!("{:?}", GgmlType(31).status()), "Removed");
    /// assert_eq!(format!("{:?}", GgmlType(43).status()), "Unknown");
    /// ```
    #[must_use]
    pub fn status(self) -> TypeStatus {
        self.entry().map_or(TypeStatus::Unknown, |e| e.status)
    }

    /// ggml's `type_name` for a known id (e.g. `"f32"`, `"q4_K"`, `"iq2_xxs"`,
    /// `"bf16"`); for a removed id its historical name, the lower-cased enum
    /// name (`"q4_2"`, `"q4_0_4_4"`, `"iq4_nl_8_8"`); `None` for an unknown id.
    ///
    /// For the placeholder string ggml itself now prints for removed ids, see
    /// [`ggml_type_name`](GgmlType::ggml_type_name).
    #[must_use]
    pub fn name(self) -> Option<&'static str> {
        self.entry().map(|e| e.name)
    }

    /// The string ggml's `ggml_type_name()` returns for this id today, as it
    /// appears in ggml's error messages: the same as [`name`](GgmlType::name)
    /// for known ids, `"DEPRECATED"` for ids 4 and 5, and e.g.
    /// `"TYPE_Q4_0_4_4 REMOVED, use Q4_0 with runtime repacking"` for ids
    /// 31–33 and 36–38; `None` for an unknown id (ggml rejects those before
    /// naming them).
    #[must_use]
    pub fn ggml_type_name(self) -> Option<&'static str> {
        self.entry().map(|e| e.ggml_name)
    }

    /// Values per block (ggml's `blck_size`): 1 for plain scalar types, 32,
    /// 64, 128 or 256 for block-quantized ones. `None` unless the id is known.
    #[must_use]
    pub fn block_size(self) -> Option<u64> {
        self.known_entry().map(|e| e.block)
    }

    /// Bytes per block (ggml's `type_size`). `None` unless the id is known.
    #[must_use]
    pub fn type_size(self) -> Option<u64> {
        self.known_entry().map(|e| e.size)
    }

    /// Whether a known type is block-quantized (more than one value per block),
    /// as ggml's `ggml_is_quantized`; `None` unless the id is known.
    #[must_use]
    pub fn is_quantized(self) -> Option<bool> {
        self.known_entry().map(|e| e.block > 1)
    }

    /// The bytes a contiguous tensor of this type and shape takes:
    /// `(ne0 / block) * type_size * ne1 * ne2 * ...`, as ggml's `ggml_nbytes`.
    ///
    /// `dims` are in file order, `ne0` (the row length, contiguous) first; no
    /// dims means a single value (`ne0 = 1`). A zero dim gives `Some(0)`.
    ///
    /// `None` when the id is not known, when `ne0` is not a multiple of the
    /// block size (ggml refuses such tensors), or when the size does not fit
    /// in a `u64`. Never panics.
    ///
    /// ```
    /// use gguf_grammar::GgmlType;
    ///
    /// assert_eq!(GgmlType::F32.n_bytes(&[]), Some(4));
    /// assert_eq!(GgmlType::F16.n_bytes(&[8, 3]), Some(48));
    /// assert_eq!(GgmlType::Q4_0.n_bytes(&[64, 2, 2]), Some(2 * 18 * 2 * 2));
    /// assert_eq!(GgmlType::Q4_0.n_bytes(&[16, 2]), None); // half a block per row
    /// assert_eq!(GgmlType::F32.n_bytes(&[1 << 31, 1 << 31]), None); // 2^64 bytes
    /// ```
    #[must_use]
    pub fn n_bytes(self, dims: &[u64]) -> Option<u64> {
        let e = self.known_entry()?;
        let (&ne0, rest) = dims.split_first().unwrap_or((&1, &[]));
        if ne0 % e.block != 0 {
            return None;
        }
        if rest.contains(&0) {
            return Some(0);
        }
        let row = (ne0 / e.block).checked_mul(e.size)?;
        rest.iter().try_fold(row, |acc, &d| acc.checked_mul(d))
    }

    /// The number of values in a tensor of shape `dims`: their product, `1` for
    /// no dims, `0` if any dim is zero, and `None` if it does not fit in a `u64`.
    ///
    /// ```
    /// use gguf_grammar::GgmlType;
    ///
    /// assert_eq!(GgmlType::n_elements(&[]), Some(1));
    /// assert_eq!(GgmlType::n_elements(&[4096, 32000]), Some(4096 * 32000));
    /// assert_eq!(GgmlType::n_elements(&[u64::MAX, 2]), None);
    /// ```
    #[must_use]
    pub fn n_elements(dims: &[u64]) -> Option<u64> {
        if dims.contains(&0) {
            return Some(0);
        }
        dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d))
    }

    /// The id with this [`name`](GgmlType::name) (known or removed), matched
    /// without regard to ASCII case, so `"q4_k"` and `"Q4_K"` both give
    /// [`GgmlType::Q4_K`]. `None` if no id has that name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<GgmlType> {
        TABLE
            .iter()
            .find(|e| e.name.eq_ignore_ascii_case(name))
            .map(|e| GgmlType(e.id))
    }
}

impl fmt::Display for GgmlType {
    /// The [`name`](GgmlType::name) (historical for removed ids), or
    /// `unknown(N)` for an id ggml has never defined.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.pad(name),
            None => f.pad(&format!("unknown({})", self.0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts() -> serde_json::Value {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/conformance/verdicts.json"
        );
        let text = std::fs::read_to_string(path).expect("read verdicts.json");
        serde_json::from_str(&text).expect("parse verdicts.json")
    }

    fn case<'a>(v: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
        v["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("case {name} missing"))
    }

    /// (name, type id, shape, gguf-py `n_elements`, gguf-py `n_bytes`, ggml size)
    /// for every tensor both readers accepted in a case.
    fn tensors(c: &serde_json::Value) -> Vec<(String, u32, Vec<u64>, u64, u64, u64)> {
        let ggml = c["ggml_meta"]["tensors"].as_array().expect("ggml tensors");
        c["gguf_py"]["tensors"]
            .as_array()
            .expect("gguf_py tensors")
            .iter()
            .map(|t| {
                let name = t["name"].as_str().unwrap().to_owned();
                let size = ggml
                    .iter()
                    .find(|g| g["name"] == t["name"])
                    .and_then(|g| g["size"].as_u64())
                    .unwrap_or_else(|| panic!("ggml size of {name}"));
                let shape = t["shape"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_u64().unwrap())
                    .collect();
                let ty = u32::try_from(t["type"].as_u64().unwrap()).unwrap();
                let n_el = t["n_elements"].as_u64().unwrap();
                let n_bytes = t["n_bytes"].as_u64().unwrap();
                (name, ty, shape, n_el, n_bytes, size)
            })
            .collect()
    }

    #[test]
    fn all_types_match_ggml_sizes() {
        let v = verdicts();
        let c = case(&v, "tensor-all-types");
        let ts = tensors(c);
        assert_eq!(ts.len(), 33);
        for (name, ty, shape, n_el, py_bytes, ggml_size) in ts {
            let t = GgmlType(ty);
            assert_eq!(t.status(), TypeStatus::Known, "{name}");
            assert_eq!(t.n_bytes(&shape), Some(ggml_size), "{name}");
            assert_eq!(GgmlType::n_elements(&shape), Some(n_el), "{name}");
            // one block per tensor (4 values for the plain types)
            let block = t.block_size().unwrap();
            assert_eq!(shape, [if block == 1 { 4 } else { block }], "{name}");
            // the corpus names each tensor type_<id>_<ggml name>
            assert_eq!(name, format!("type_{ty}_{t}"));
            // gguf-py agrees here: q8_1 is not among these tensors
            assert_eq!(py_bytes, ggml_size, "{name}");
        }
    }

    #[test]
    fn every_case_both_readers_accept_matches_ggml_sizes() {
        let v = verdicts();
        let mut checked = 0;
        for c in v["cases"].as_array().unwrap() {
            if c["ggml_meta"]["ok"] != true || c["gguf_py"]["ok"] != true {
                continue;
            }
            for (name, ty, shape, n_el, _, ggml_size) in tensors(c) {
                let t = GgmlType(ty);
                assert_eq!(t.n_bytes(&shape), Some(ggml_size), "{} {name}", c["name"]);
                assert_eq!(GgmlType::n_elements(&shape), Some(n_el), "{name}");
                checked += 1;
            }
        }
        assert!(checked > 60, "only {checked} tensors checked");
    }

    #[test]
    fn q8_1_is_36_bytes_as_in_ggml() {
        assert_eq!(GgmlType::Q8_1.block_size(), Some(32));
        assert_eq!(GgmlType::Q8_1.type_size(), Some(36));
        let v = verdicts();
        let ts = tensors(case(&v, "tensor-q8-1"));
        let (_, ty, shape, _, py_bytes, ggml_size) = &ts[0];
        assert_eq!(*ty, 9);
        assert_eq!(shape, &[32, 2]);
        assert_eq!(*ggml_size, 72);
        assert_eq!(*py_bytes, 80); // gguf-py's 40-byte blocks
        assert_eq!(GgmlType::Q8_1.n_bytes(shape), Some(72));
    }

    #[test]
    fn mxfp4_and_q2_0() {
        let v = verdicts();
        let ts = tensors(case(&v, "tensor-mxfp4"));
        let (_, ty, shape, _, _, ggml_size) = &ts[0];
        assert_eq!(GgmlType(*ty), GgmlType::MXFP4);
        assert_eq!(GgmlType::MXFP4.n_bytes(shape), Some(*ggml_size));
        assert_eq!(*ggml_size, 34);

        // gguf-py 0.19.0 refuses id 42; ggml reads one 18-byte block of 64 values.
        let c = case(&v, "ggml-type-42");
        assert_eq!(c["ggml_meta"]["ok"], true);
        assert_eq!(c["gguf_py"]["ok"], false);
        assert_eq!(c["ggml_meta"]["tensors"][0]["size"], 18);
        assert_eq!(GgmlType::Q2_0.n_bytes(&[64]), Some(18));
        assert_eq!(GgmlType::Q2_0.name(), Some("q2_0"));
        assert_eq!(GgmlType::Q2_0.status(), TypeStatus::Known);
    }

    #[test]
    fn rejected_type_ids_as_ggml() {
        let v = verdicts();
        for (case_name, id, status) in [
            ("ggml-type-4", 4, TypeStatus::Removed),
            ("ggml-type-31", 31, TypeStatus::Removed),
            ("ggml-type-43", 43, TypeStatus::Unknown),
            ("ggml-type-1000", 1000, TypeStatus::Unknown),
        ] {
            let c = case(&v, case_name);
            assert_eq!(c["ggml_meta"]["ok"], false, "{case_name}");
            let t = GgmlType(id);
            assert_eq!(t.status(), status, "{case_name}");
            assert_eq!(t.block_size(), None);
            assert_eq!(t.type_size(), None);
            assert_eq!(t.n_bytes(&[32]), None);
            let reason = c["ggml_meta"]["reason"].as_str().unwrap();
            match t.ggml_type_name() {
                // ggml names removed types in its message
                Some(ggml_name) => assert!(
                    reason.contains(&format!("of type {id} ({ggml_name})")),
                    "{reason}"
                ),
                None => assert!(reason.contains("invalid ggml type"), "{reason}"),
            }
        }
        let c = case(&v, "q4-0-row-not-block-multiple");
        assert_eq!(c["ggml_meta"]["ok"], false);
        assert_eq!(GgmlType::Q4_0.n_bytes(&[16, 2]), None);
    }

    #[test]
    fn removed_and_unknown() {
        let removed = [
            (4, "q4_2"),
            (5, "q4_3"),
            (31, "q4_0_4_4"),
            (32, "q4_0_4_8"),
            (33, "q4_0_8_8"),
            (36, "iq4_nl_4_4"),
            (37, "iq4_nl_4_8"),
            (38, "iq4_nl_8_8"),
        ];
        for id in 0..GgmlType::COUNT {
            let t = GgmlType(id);
            match removed.iter().find(|r| r.0 == id) {
                Some(&(_, name)) => {
                    assert_eq!(t.status(), TypeStatus::Removed);
                    assert_eq!(t.name(), Some(name));
                    assert_eq!(t.to_string(), name);
                    assert_eq!(t.is_quantized(), None);
                    assert_eq!(t.n_bytes(&[]), None);
                }
                None => {
                    assert_eq!(t.status(), TypeStatus::Known);
                    assert!(t.block_size().unwrap() > 0);
                    assert!(t.type_size().unwrap() > 0);
                    assert_eq!(t.ggml_type_name(), t.name());
                }
            }
            assert_eq!(GgmlType::from_name(t.name().unwrap()), Some(t));
        }
        assert_eq!(GgmlType(4).ggml_type_name(), Some("DEPRECATED"));
        assert_eq!(
            GgmlType(36).ggml_type_name(),
            Some("TYPE_IQ4_NL_4_4 REMOVED, use IQ4_NL with runtime repacking")
        );
        for id in [43, 44, 100, 1000, u32::MAX] {
            let t = GgmlType(id);
            assert_eq!(t.status(), TypeStatus::Unknown);
            assert_eq!(t.name(), None);
            assert_eq!(t.ggml_type_name(), None);
            assert_eq!(t.block_size(), None);
            assert_eq!(t.type_size(), None);
            assert_eq!(t.is_quantized(), None);
            assert_eq!(t.n_bytes(&[1]), None);
            assert_eq!(t.to_string(), format!("unknown({id})"));
        }
        assert_eq!(GgmlType::from_name("Q4_K"), Some(GgmlType::Q4_K));
        assert_eq!(GgmlType::from_name("BF16"), Some(GgmlType::BF16));
        assert_eq!(GgmlType::from_name("q4_k_m"), None);
        assert_eq!(
            format!("{:>6}|{:<5}|", GgmlType::F32, GgmlType::Q8_0),
            "   f32|q8_0 |"
        );
    }

    /// The sizes again, as `ggml-common.h`'s `static_assert`s write them, with
    /// `h` = `sizeof(ggml_half)`.
    #[test]
    fn sizes_follow_the_block_structs() {
        let h = 2;
        let k = QK_K;
        let expected: [(GgmlType, u64, u64); 35] = [
            (GgmlType::F32, 1, 4),
            (GgmlType::F16, 1, h),
            (GgmlType::Q4_0, 32, h + 32 / 2),
            (GgmlType::Q4_1, 32, 2 * h + 32 / 2),
            (GgmlType::Q5_0, 32, h + 4 + 32 / 2),
            (GgmlType::Q5_1, 32, 2 * h + 4 + 32 / 2),
            (GgmlType::Q8_0, 32, h + 32),
            (GgmlType::Q8_1, 32, 2 * h + 32),
            (GgmlType::Q2_K, k, 2 * h + k / 16 + k / 4),
            (GgmlType::Q3_K, k, h + k / 4 + k / 8 + 12),
            (GgmlType::Q4_K, k, 2 * h + 12 + k / 2),
            (GgmlType::Q5_K, k, 2 * h + 12 + k / 2 + k / 8),
            (GgmlType::Q6_K, k, h + k / 16 + 3 * k / 4),
            (GgmlType::Q8_K, k, 4 + k + k / 16 * 2),
            (GgmlType::IQ2_XXS, k, h + k / 8 * 2),
            (GgmlType::IQ2_XS, k, h + k / 8 * 2 + k / 32),
            (GgmlType::IQ3_XXS, k, h + 3 * (k / 8)),
            (GgmlType::IQ1_S, k, h + k / 8 + k / 16),
            (GgmlType::IQ4_NL, 32, h + 32 / 2),
            (GgmlType::IQ3_S, k, h + 13 * (k / 32) + k / 64),
            (GgmlType::IQ2_S, k, h + k / 4 + k / 16),
            (GgmlType::IQ4_XS, k, h + 2 + k / 64 + k / 2),
            (GgmlType::I8, 1, 1),
            (GgmlType::I16, 1, 2),
            (GgmlType::I32, 1, 4),
            (GgmlType::I64, 1, 8),
            (GgmlType::F64, 1, 8),
            (GgmlType::IQ1_M, k, k / 8 + k / 16 + k / 32),
            (GgmlType::BF16, 1, 2),
            (GgmlType::TQ1_0, k, h + k / 64 + (k - 4 * k / 64) / 5),
            (GgmlType::TQ2_0, k, h + k / 4),
            (GgmlType::MXFP4, 32, 1 + 32 / 2),
            (GgmlType::NVFP4, 64, 64 / 16 + 64 / 2),
            (GgmlType::Q1_0, 128, h + 128 / 8),
            (GgmlType::Q2_0, 64, h + 64 / 4),
        ];
        for (t, block, size) in expected {
            assert_eq!(t.block_size(), Some(block), "{t}");
            assert_eq!(t.type_size(), Some(size), "{t}");
            assert_eq!(t.is_quantized(), Some(block > 1), "{t}");
        }
        let known = (0..GgmlType::COUNT)
            .filter(|&id| GgmlType(id).status() == TypeStatus::Known)
            .count();
        assert_eq!(known, expected.len());
    }

    /// gguf-py 0.19.0's `GGML_QUANT_SIZES` (id, block, size): equal to ours
    /// except `q8_1` (40 there) and `q2_0` (absent there).
    #[test]
    fn gguf_py_differences() {
        const GGUF_PY: [(u32, u64, u64); 34] = [
            (0, 1, 4),
            (1, 1, 2),
            (2, 32, 18),
            (3, 32, 20),
            (6, 32, 22),
            (7, 32, 24),
            (8, 32, 34),
            (9, 32, 40),
            (10, 256, 84),
            (11, 256, 110),
            (12, 256, 144),
            (13, 256, 176),
            (14, 256, 210),
            (15, 256, 292),
            (16, 256, 66),
            (17, 256, 74),
            (18, 256, 98),
            (19, 256, 50),
            (20, 32, 18),
            (21, 256, 110),
            (22, 256, 82),
            (23, 256, 136),
            (24, 1, 1),
            (25, 1, 2),
            (26, 1, 4),
            (27, 1, 8),
            (28, 1, 8),
            (29, 256, 56),
            (30, 1, 2),
            (34, 256, 54),
            (35, 256, 66),
            (39, 32, 17),
            (40, 64, 36),
            (41, 128, 18),
        ];
        let mut differ = Vec::new();
        for id in 0..GgmlType::COUNT {
            let t = GgmlType(id);
            let ours = t.block_size().zip(t.type_size());
            let theirs = GGUF_PY.iter().find(|p| p.0 == id).map(|p| (p.1, p.2));
            if ours != theirs {
                differ.push(id);
            }
        }
        assert_eq!(differ, [9, 42]);
    }

    #[test]
    fn overflow_and_edges() {
        let f32 = GgmlType::F32;
        // nbytes-overflow case: 2^62 values fit, 2^64 bytes do not.
        assert_eq!(GgmlType::n_elements(&[1 << 31, 1 << 31]), Some(1 << 62));
        assert_eq!(f32.n_bytes(&[1 << 31, 1 << 31]), None);
        assert_eq!(f32.n_bytes(&[1 << 31, 1 << 29]), Some(1 << 62));
        assert_eq!(f32.n_bytes(&[u64::MAX]), None);
        assert_eq!(GgmlType::I8.n_bytes(&[u64::MAX]), Some(u64::MAX));
        assert_eq!(GgmlType::I8.n_bytes(&[u64::MAX, 2]), None);
        assert_eq!(GgmlType::n_elements(&[u64::MAX, 1, 1, 2]), None);
        // u64::MAX rows of one q8_K block each: 292 * (2^64 - 1) bytes
        assert_eq!(GgmlType::Q8_K.n_bytes(&[256, u64::MAX]), None);
        // zero dims: no bytes, whatever the others
        assert_eq!(f32.n_bytes(&[8, 0]), Some(0));
        assert_eq!(f32.n_bytes(&[u64::MAX, u64::MAX, 0]), Some(0));
        assert_eq!(GgmlType::Q4_0.n_bytes(&[0, 7]), Some(0));
        assert_eq!(GgmlType::Q4_0.n_bytes(&[16, 0]), None); // rows still half a block
        assert_eq!(GgmlType::n_elements(&[u64::MAX, u64::MAX, 0]), Some(0));
        // no dims: one value
        assert_eq!(GgmlType::n_elements(&[]), Some(1));
        assert_eq!(GgmlType::F64.n_bytes(&[]), Some(8));
        assert_eq!(GgmlType::Q4_0.n_bytes(&[]), None);
        // ggml reads up to 4 dims, but longer shapes are still computed
        assert_eq!(GgmlType::F16.n_bytes(&[2, 2, 2, 2, 2]), Some(64));
    }

    #[test]
    fn no_panics_anywhere() {
        let dims: [&[u64]; 8] = [
            &[],
            &[0],
            &[1],
            &[u64::MAX],
            &[256, u64::MAX],
            &[u64::MAX, u64::MAX, u64::MAX, u64::MAX],
            &[1 << 32, 1 << 32],
            &[4096, 4096, 1, 1],
        ];
        let ids = (0..300).chain([u32::MAX / 2, u32::MAX - 1, u32::MAX]);
        for id in ids {
            let t = GgmlType(id);
            let _ = (t.status(), t.name(), t.ggml_type_name(), t.to_string());
            let _ = (t.block_size(), t.type_size(), t.is_quantized());
            for d in dims {
                let _ = (t.n_bytes(d), GgmlType::n_elements(d));
            }
        }
        assert_eq!(GgmlType::from_name(""), None);
    }
}
