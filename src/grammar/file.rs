//! `file = header kv[kv_count] tensor_info[tensor_count] padding tensor_data`
//!
//! The grammar stops at the end of the tensor infos: padding and tensor data are located
//! by [`crate::Gguf`] (offsets and sizes, see [`crate::alignment`]), not read, so a header
//! can be parsed from a prefix of the file.

use super::header::{self, Header};
use super::kv::{self, Kv};
use super::tensor_info::{self, TensorInfo};
use super::{Endian, ParseResult};
use crate::error::Segment;

/// What the grammar reads from the start of a GGUF file: everything before the padding
/// and the tensor data (which ends where the rest [`file()`] returns begins).
/// [`crate::Gguf`] adds the layout (alignment, data offsets, sizes).
#[derive(Clone, Debug, PartialEq)]
pub struct File<'a> {
    /// Version, byte order and counts.
    pub header: Header,
    /// Every key/value pair in file order; duplicates are kept.
    pub kvs: Vec<Kv<'a>>,
    /// Every tensor descriptor in file order.
    pub tensor_infos: Vec<TensorInfo<'a>>,
}

/// Parses a whole GGUF header (header, key/values, tensor infos) from the start of a file.
/// Errors are located: their offsets are absolute in `input`. `endian` forces a byte order;
/// `None` detects it. The returned rest is everything after the tensor infos.
///
/// ```
/// use gguf_grammar::grammar::file::file;
///
/// let bytes = b"GGUF\x03\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
/// let (rest, parsed) = file(None)(bytes).unwrap();
/// assert_eq!((rest.len(), parsed.header.kv_count, parsed.kvs.len()), (0, 0, 0));
/// ```
pub fn file(endian: Option<Endian>) -> impl Fn(&[u8]) -> ParseResult<'_, File<'_>> {
    move |input| parse(input, endian)
}

fn parse(input: &[u8], endian: Option<Endian>) -> ParseResult<'_, File<'_>> {
    let (mut rest, header) = header::parse(endian, input)?;
    let ctx = header.ctx;

    // The fewest bytes a kv (empty key, u8 value) and a tensor info (empty name, no dims)
    // take: capacities and "bytes needed" are bounded with them, never by untrusted counts.
    let min_kv = ctx.count_width() + 5;
    let min_tensor = ctx.count_width() + 16;
    let infos_min = header.tensor_count.saturating_mul(min_tensor);
    let mut kvs = Vec::with_capacity(header.kv_count.min(rest.len() as u64 / min_kv) as usize);
    for index in 0..header.kv_count {
        let (next, pair) = kv::parse(ctx, rest).map_err(|e| {
            let after = (header.kv_count - index - 1).saturating_mul(min_kv);
            e.map(|e| {
                e.within(Segment::Kv(index))
                    .needs_more(after.saturating_add(infos_min))
            })
        })?;
        kvs.push(pair);
        rest = next;
    }

    let mut tensor_infos =
        Vec::with_capacity(header.tensor_count.min(rest.len() as u64 / min_tensor) as usize);
    for index in 0..header.tensor_count {
        let (next, info) = tensor_info::parse(ctx, rest).map_err(|e| {
            let after = (header.tensor_count - index - 1).saturating_mul(min_tensor);
            e.map(|e| e.within(Segment::Tensor(index)).needs_more(after))
        })?;
        tensor_infos.push(info);
        rest = next;
    }

    Ok((
        rest,
        File {
            header,
            kvs,
            tensor_infos,
        },
    ))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::grammar::finish;
    use crate::grammar::test_bytes::{all_ctx, Enc};
    use crate::grammar::value::ValueType;
    use crate::grammar::{Ctx, Version};
    use crate::GgmlType;

    /// Two kvs (one if no alignment) and two tensors: `a` f32 [4, 2] at 0, `b` f16 [3] at 64.
    pub(crate) fn whole_file(ctx: Ctx, alignment: Option<u32>) -> Vec<u8> {
        let n_kv = 1 + u64::from(alignment.is_some());
        let mut enc = Enc::new(ctx);
        enc.bytes.extend(b"GGUF"); // the magic is never byte-swapped
        let mut enc = enc.u32(ctx.version.number()).count(2).count(n_kv);
        enc = enc
            .string(b"general.name")
            .u32(ValueType::String.tag())
            .string(b"t");
        if let Some(a) = alignment {
            enc = enc
                .string(b"general.alignment")
                .u32(ValueType::U32.tag())
                .u32(a);
        }
        enc = enc
            .string(b"a")
            .u32(2)
            .count(4)
            .count(2)
            .u32(0)
            .raw(&0u64.to_be_bytes());
        enc = enc
            .string(b"b")
            .u32(1)
            .count(3)
            .u32(1)
            .raw(&64u64.to_be_bytes());
        enc.bytes
    }

    #[test]
    fn whole_header_in_every_version_and_byte_order() {
        for ctx in all_ctx() {
            let bytes = whole_file(ctx, None);
            let (rest, parsed) = file(None)(&bytes).unwrap();
            assert!(rest.is_empty());
            assert_eq!(parsed.header.ctx, ctx);
            assert_eq!(parsed.kvs.len(), 1);
            assert_eq!(parsed.kvs[0].value.as_str(), Some("t"));
            let a = &parsed.tensor_infos[0];
            assert_eq!(
                (a.dims.as_slice(), a.ggml_type, a.offset),
                (&[4, 2][..], GgmlType::F32, 0)
            );
            let b = &parsed.tensor_infos[1];
            assert_eq!(
                (b.name.as_bytes(), b.ggml_type, b.offset),
                (&b"b"[..], GgmlType::F16, 64)
            );
            let kv_at = parsed.kvs[0].raw.as_ptr() as usize - bytes.as_ptr() as usize;
            assert_eq!(kv_at, if ctx.version == Version::V1 { 16 } else { 24 });
        }
    }

    #[test]
    fn errors_are_located_and_name_the_kv() {
        let bytes = whole_file(Ctx::V3_LE, None);
        let cut = &bytes[..24 + 8 + 12 + 4 + 8];
        let e = finish(file(None), cut).unwrap_err();
        assert_eq!(e.path.to_string(), "kv[0] \"general.name\"");
        assert_eq!(e.offset, 24 + 8 + 12 + 4);
        assert!(
            e.to_string()
                .contains("string length 1 exceeds the 0 bytes left"),
            "{e}"
        );
    }
}
