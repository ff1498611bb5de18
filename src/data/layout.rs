//! The grammar of a block: which fields one block of each ggml type holds, in order.
//!
//! Every ggml tensor is a sequence of blocks; a block of type `t` holds
//! [`GgmlType::block_size`] values in [`GgmlType::type_size`] bytes. This table says what
//! those bytes are, field by field, as ggml's `ggml-common.h` declares the block structs.
//! Dequantisation ([`super::dequant`]) reads blocks with these offsets, byte-order
//! conversion ([`super::swap`]) swaps the multi-byte fields, and `grammar/GRAMMAR.md`'s
//! block-layout section is [`markdown`]'s output.
//!
//! ```
//! use gguf_grammar::data::layout::{layout, Scalar};
//! use gguf_grammar::GgmlType;
//!
//! let q4_k = layout(GgmlType::Q4_K).unwrap();
//! let names: Vec<_> = q4_k.fields.iter().map(|f| f.name).collect();
//! assert_eq!(names, ["d", "dmin", "scales", "qs"]);
//! assert_eq!(q4_k.fields[0].scalar, Scalar::F16);
//! assert_eq!(q4_k.byte_len(), 144); // = GgmlType::Q4_K.type_size()
//! assert_eq!(q4_k.offset_of("qs"), Some(16));
//! ```

use crate::GgmlType;

/// How one element of a field is stored. Multi-byte scalars are in the file's byte order
/// (little-endian in every file ggml writes on a little-endian machine).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    /// IEEE 754 binary16.
    F16,
    /// bfloat16: the top 16 bits of an IEEE 754 binary32.
    BF16,
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary64.
    F64,
    /// Two's-complement integers.
    I8,
    /// 16-bit two's complement.
    I16,
    /// 32-bit two's complement.
    I32,
    /// 64-bit two's complement.
    I64,
    /// A byte of packed bit fields (quants, high bits, sub-scales).
    U8,
    /// 16 bits of packed bit fields.
    U16,
    /// 32 bits of packed bit fields.
    U32,
    /// OCP microscaling E8M0 scale: an exponent byte, value `2^(e-127)`.
    E8M0,
    /// Unsigned E4M3 float (4-bit exponent with bias 7, 3-bit mantissa), one byte.
    UE4M3,
}

impl Scalar {
    /// Bytes per element.
    pub const fn width(self) -> usize {
        match self {
            Scalar::I8 | Scalar::U8 | Scalar::E8M0 | Scalar::UE4M3 => 1,
            Scalar::F16 | Scalar::BF16 | Scalar::I16 | Scalar::U16 => 2,
            Scalar::F32 | Scalar::I32 | Scalar::U32 => 4,
            Scalar::F64 | Scalar::I64 => 8,
        }
    }

    /// The name used in `GRAMMAR.md`.
    pub const fn name(self) -> &'static str {
        match self {
            Scalar::F16 => "f16",
            Scalar::BF16 => "bf16",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
            Scalar::U32 => "u32",
            Scalar::E8M0 => "e8m0",
            Scalar::UE4M3 => "ue4m3",
        }
    }
}

/// One field of a block: `count` elements of `scalar`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// ggml's name for the field (`d`, `qs`, ...).
    pub name: &'static str,
    /// How each element is stored.
    pub scalar: Scalar,
    /// Number of elements.
    pub count: usize,
    /// What the field means, for porters.
    pub meaning: &'static str,
}

/// The fields of one block of a ggml type, in storage order, without padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockLayout {
    /// The type.
    pub ggml_type: GgmlType,
    /// Values per block (ggml's `blck_size`).
    pub values: usize,
    /// The fields, in order.
    pub fields: &'static [Field],
}

impl BlockLayout {
    /// Bytes per block: the sum of the fields' sizes (equal to ggml's `type_size`).
    pub const fn byte_len(&self) -> usize {
        let mut n = 0;
        let mut i = 0;
        while i < self.fields.len() {
            n += self.fields[i].scalar.width() * self.fields[i].count;
            i += 1;
        }
        n
    }

    /// Byte offset of the field called `name` within the block.
    pub fn offset_of(&self, name: &str) -> Option<usize> {
        let mut offset = 0;
        for f in self.fields {
            if f.name == name {
                return Some(offset);
            }
            offset += f.scalar.width() * f.count;
        }
        None
    }
}

const fn f(name: &'static str, scalar: Scalar, count: usize, meaning: &'static str) -> Field {
    Field {
        name,
        scalar,
        count,
        meaning,
    }
}

const fn b(id: u32, values: usize, fields: &'static [Field]) -> BlockLayout {
    BlockLayout {
        ggml_type: GgmlType(id),
        values,
        fields,
    }
}

use Scalar::*;

const D: Field = f("d", F16, 1, "scale");
const K: usize = 256;

/// Every block layout, one per known ggml type, by id.
#[rustfmt::skip]
pub const LAYOUTS: [BlockLayout; 35] = [
    b(0, 1, &[f("x", F32, 1, "the value")]),
    b(1, 1, &[f("x", F16, 1, "the value")]),
    b(2, 32, &[D, f("qs", U8, 16, "4-bit quants: low nibbles are values 0..16, high nibbles 16..32; value = d * (q - 8)")]),
    b(3, 32, &[D, f("m", F16, 1, "minimum"), f("qs", U8, 16, "4-bit quants as in q4_0; value = d * q + m")]),
    b(6, 32, &[D, f("qh", U8, 4, "bit i of this little-endian u32 is the 5th bit of value i"), f("qs", U8, 16, "low 4 bits as in q4_0; value = d * (q - 16)")]),
    b(7, 32, &[D, f("m", F16, 1, "minimum"), f("qh", U8, 4, "5th bits as in q5_0"), f("qs", U8, 16, "low 4 bits as in q4_0; value = d * q + m")]),
    b(8, 32, &[D, f("qs", I8, 32, "value = d * q")]),
    b(9, 32, &[D, f("s", F16, 1, "d * sum(qs)"), f("qs", I8, 32, "value = d * q")]),
    b(10, K, &[f("scales", U8, 16, "per 16 values: low nibble scales d, high nibble scales dmin"), f("qs", U8, 64, "2-bit quants: byte j of each 32-byte half holds values j, j+32, j+64, j+96 of that half's 128 (bits 0-1, 2-3, 4-5, 6-7); value = d*sc*q - dmin*m"), D, f("dmin", F16, 1, "scale of the minimums")]),
    b(11, K, &[f("hmask", U8, 32, "bit b of byte l is the 3rd bit (inverted: 0 means subtract 4) of value 32*b + l"), f("qs", U8, 64, "low 2 bits, packed as in q2_K"), f("scales", U8, 12, "16 6-bit signed scales (minus 32): low nibbles in bytes 0-7, high 2 bits in bytes 8-11"), D]),
    b(12, K, &[D, f("dmin", F16, 1, "scale of the minimums"), f("scales", U8, 12, "8 6-bit scales and 8 6-bit minimums, packed (see below)"), f("qs", U8, 128, "4-bit quants: byte l of each 32-byte chunk c holds values 64c + l (low nibble) and 64c + 32 + l (high); value = d*sc*q - dmin*m")]),
    b(13, K, &[D, f("dmin", F16, 1, "scale of the minimums"), f("scales", U8, 12, "as in q4_K"), f("qh", U8, 32, "bit b of byte l is the 5th bit of value 32*b + l"), f("qs", U8, 128, "low 4 bits as in q4_K")]),
    b(14, K, &[f("ql", U8, 128, "low 4 bits: byte l of each 64-byte half h holds values 128h + l (low nibble) and 128h + 64 + l (high)"), f("qh", U8, 64, "high 2 bits: byte l of each 32-byte half h holds values 128h + 32s + l in bits 2s, 2s+1"), f("scales", I8, 16, "per 16 values"), D]),
    b(15, K, &[f("d", F32, 1, "scale"), f("qs", I8, K, "value = d * q"), f("bsums", I16, 16, "sums of groups of 16 quants")]),
    b(16, K, &[D, f("qs", U16, 32, "per 32 values, two u32 (as u16 pairs): 4 grid indices (bytes), then 4 7-bit sign indices and a 4-bit scale")]),
    b(17, K, &[D, f("qs", U16, 32, "9-bit grid index and 7-bit sign index per 8 values"), f("scales", U8, 8, "4-bit scales, two per byte")]),
    b(18, K, &[D, f("qs", U8, 64, "grid indices, 4 values each"), f("scales", U32, 8, "per 32 values: 4 7-bit sign indices and a 4-bit scale")]),
    b(19, K, &[D, f("qs", U8, 32, "low 8 bits of 11-bit grid indices"), f("qh", U16, 8, "per 32 values: 4 3-bit index tops, a 3-bit scale and the sign of delta")]),
    b(20, 32, &[D, f("qs", U8, 16, "4-bit indices into the iq4_nl table, packed as in q4_0")]),
    b(21, K, &[D, f("qs", U8, 64, "low 8 bits of 9-bit grid indices"), f("qh", U8, 8, "9th bits"), f("signs", U8, 32, "one sign bit per value"), f("scales", U8, 4, "4-bit scales, two per byte; value scale = d * (1 + 2*sc)")]),
    b(22, K, &[D, f("qs", U8, 32, "low 8 bits of 10-bit grid indices"), f("signs", U8, 32, "one sign bit per value"), f("qh", U8, 8, "top 2 bits of the indices"), f("scales", U8, 8, "4-bit scales, two per byte")]),
    b(23, K, &[D, f("scales_h", U16, 1, "high 2 bits of 8 6-bit scales"), f("scales_l", U8, 4, "low 4 bits of the scales"), f("qs", U8, 128, "4-bit indices into the iq4_nl table, 32 values per 16 bytes as in q4_0")]),
    b(24, 1, &[f("x", I8, 1, "the value")]),
    b(25, 1, &[f("x", I16, 1, "the value")]),
    b(26, 1, &[f("x", I32, 1, "the value")]),
    b(27, 1, &[f("x", I64, 1, "the value")]),
    b(28, 1, &[f("x", F64, 1, "the value")]),
    b(29, K, &[f("qs", U8, 32, "low 8 bits of 11-bit grid indices"), f("qh", U8, 16, "per 8 values a nibble: 3 index bits and the sign of delta"), f("scales", U16, 4, "3-bit scales; the top nibbles of the 4 u16 form the f16 scale d")]),
    b(30, 1, &[f("x", BF16, 1, "the value")]),
    b(34, K, &[f("qs", U8, 48, "ternary digits, 5 per byte (base 3, scaled by 256/243)"), f("qh", U8, 4, "4 more ternary digits per byte"), D]),
    b(35, K, &[f("qs", U8, 64, "2-bit quants packed as in q2_K; value = d * (q - 1)"), D]),
    b(39, 32, &[f("e", E8M0, 1, "shared exponent"), f("qs", U8, 16, "4-bit E2M1 codes, packed as in q4_0")]),
    b(40, 64, &[f("d", UE4M3, 4, "one scale per 16 values"), f("qs", U8, 32, "4-bit E2M1 codes: byte l of each 8-byte group g holds values 16g + l (low nibble) and 16g + 8 + l (high)")]),
    b(41, 128, &[D, f("qs", U8, 16, "one bit per value: bit j % 8 of byte j / 8 is value j; value = d if set, -d if clear")]),
    b(42, 64, &[D, f("qs", U8, 16, "2-bit quants: bits 2(j % 4), 2(j % 4) + 1 of byte j / 4 are value j; value = (q - 1) * d")]),
];

/// The layout of one block of `ty`, or `None` for removed and unknown ids.
pub fn layout(ty: GgmlType) -> Option<&'static BlockLayout> {
    LAYOUTS.iter().find(|l| l.ggml_type == ty)
}

/// The block-layout table as Markdown, as it appears in `grammar/GRAMMAR.md`.
pub fn markdown() -> String {
    let mut s = String::from("| id | type | values | bytes | fields (in order: name scalar[count] — meaning) |\n|---|---|---|---|---|\n");
    for l in &LAYOUTS {
        let fields: Vec<String> = l
            .fields
            .iter()
            .map(|f| {
                let n = if f.count == 1 {
                    String::new()
                } else {
                    format!("[{}]", f.count)
                };
                format!("`{} {}{}` — {}", f.name, f.scalar.name(), n, f.meaning)
            })
            .collect();
        s += &format!(
            "| {} | {} | {} | {} | {} |\n",
            l.ggml_type.0,
            l.ggml_type,
            l.values,
            l.byte_len(),
            fields.join("<br>")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TypeStatus;

    #[test]
    fn fields_add_up_to_ggml_sizes() {
        for l in &LAYOUTS {
            let t = l.ggml_type;
            assert_eq!(Some(l.byte_len() as u64), t.type_size(), "{t}");
            assert_eq!(Some(l.values as u64), t.block_size(), "{t}");
        }
    }

    #[test]
    fn one_layout_per_known_type() {
        for id in 0..GgmlType::COUNT {
            let t = GgmlType(id);
            assert_eq!(layout(t).is_some(), t.status() == TypeStatus::Known, "{t}");
        }
    }

    #[test]
    fn grammar_md_holds_the_table() {
        let md = include_str!("../../grammar/GRAMMAR.md");
        let table = markdown();
        if !md.contains(&table) {
            panic!("GRAMMAR.md must hold layout::markdown() verbatim; it is now:\n{table}");
        }
    }
}
