//! `file = header kv[kv_count] tensor_info[tensor_count] padding tensor_data`
//!
//! The tensor data starts at `align_up(end of the tensor infos, alignment)`, where the
//! alignment is the u32 value of `general.alignment` when present and non-zero, else 32.
//! The grammar stops at the end of the tensor infos: padding and tensor data are located
//! (offsets and sizes), not read, so a header can be parsed from a prefix of the file.

use super::header::header;
use super::kv::kv;
use super::tensor_info::tensor_info;
use super::value::Value;
use super::{align_up, Endian, PResult};
use crate::document::{Gguf, Tensor};
use crate::error::Segment;

/// The alignment when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: u64 = 32;

/// Parses a whole GGUF header (header, key/values, tensor infos) from the start of a file.
/// Errors are located: their offsets are absolute in `input`. `endian` forces a byte order;
/// `None` detects it. The returned rest is everything after the tensor infos.
///
/// ```
/// use gguf_grammar::grammar::file::file;
///
/// let bytes = b"GGUF\x03\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
/// let (rest, gguf) = file(None)(bytes).unwrap();
/// assert_eq!((rest.len(), gguf.tensor_data_offset), (0, 32));
/// ```
pub fn file(endian: Option<Endian>) -> impl Fn(&[u8]) -> PResult<'_, Gguf<'_>> {
    move |input| parse_file(input, endian).map_err(|e| e.map(|e| e.located(input.len())))
}

fn parse_file(input: &[u8], endian: Option<Endian>) -> PResult<'_, Gguf<'_>> {
    let (mut rest, header) = header(endian)(input)?;
    let ctx = header.ctx;

    // Capacities are bounded by what the input can hold, never by the untrusted counts.
    // The fewest bytes a kv (empty key, u8 value) and a tensor info (empty name, no dims)
    // take: capacities and "bytes needed" are bounded with them, never by untrusted counts.
    let min_kv = ctx.count_width() + 5;
    let min_tensor = ctx.count_width() + 16;
    let infos_min = header.tensor_count.saturating_mul(min_tensor);
    let mut kvs = Vec::with_capacity(header.kv_count.min(rest.len() as u64 / min_kv) as usize);
    for index in 0..header.kv_count {
        let (next, pair) = kv(ctx)(rest).map_err(|e| {
            let after = (header.kv_count - index - 1).saturating_mul(min_kv);
            e.map(|e| {
                e.within(Segment::Kv(index))
                    .needs_more(after.saturating_add(infos_min))
            })
        })?;
        kvs.push(pair);
        rest = next;
    }

    let mut infos =
        Vec::with_capacity(header.tensor_count.min(rest.len() as u64 / min_tensor) as usize);
    for index in 0..header.tensor_count {
        let (next, info) = tensor_info(ctx)(rest).map_err(|e| {
            let after = (header.tensor_count - index - 1).saturating_mul(min_tensor);
            e.map(|e| e.within(Segment::Tensor(index)).needs_more(after))
        })?;
        infos.push(info);
        rest = next;
    }

    let tensor_infos_end = (input.len() - rest.len()) as u64;
    let alignment = kvs
        .iter()
        .find(|pair| pair.key.as_bytes() == b"general.alignment")
        .and_then(|pair| match pair.value {
            Value::U32(n) if n > 0 => Some(u64::from(n)),
            _ => None,
        })
        .unwrap_or(DEFAULT_ALIGNMENT);
    // Cannot overflow: the end of the infos is an in-memory length and alignment < 2^32.
    let tensor_data_offset = align_up(tensor_infos_end, alignment).unwrap_or(u64::MAX);
    let tensors = infos
        .into_iter()
        .map(|info| Tensor {
            data_offset: tensor_data_offset.checked_add(info.offset),
            n_bytes: info.ggml_type.n_bytes(&info.dims),
            info,
        })
        .collect();
    Ok((
        rest,
        Gguf {
            header,
            kvs,
            tensors,
            alignment,
            tensor_infos_end,
            tensor_data_offset,
            bytes: input,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::test_bytes::{all_ctx, Enc};
    use crate::grammar::value::ValueType;
    use crate::grammar::{Ctx, Version};
    use crate::GgmlType;

    /// Two kvs (one if no alignment) and two tensors: `a` f32 [4, 2] at 0, `b` f16 [3] at 64.
    fn whole_file(ctx: Ctx, alignment: Option<u32>) -> Vec<u8> {
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
            let (rest, gguf) = file(None)(&bytes).unwrap();
            assert!(rest.is_empty());
            assert_eq!(gguf.header.ctx, ctx);
            assert_eq!(gguf.kvs.len(), 1);
            assert_eq!(gguf.get("general.name").and_then(|v| v.as_str()), Some("t"));
            assert_eq!(gguf.tensor_infos_end, bytes.len() as u64);
            assert_eq!(gguf.alignment, 32);
            let start = gguf.tensor_data_offset;
            assert_eq!((start % 32, start >= bytes.len() as u64), (0, true));
            let a = &gguf.tensors[0];
            assert_eq!(
                (a.info.dims.as_slice(), a.info.ggml_type),
                (&[4, 2][..], GgmlType::F32)
            );
            assert_eq!((a.data_offset, a.n_bytes), (Some(start), Some(32)));
            let b = gguf.tensor("b").unwrap();
            assert_eq!((b.data_offset, b.n_bytes), (Some(start + 64), Some(6)));
            let kv_at = gguf.offset_of(gguf.kvs[0].raw).unwrap();
            assert_eq!(kv_at, if ctx.version == Version::V1 { 16 } else { 24 });
        }
    }

    #[test]
    fn general_alignment_moves_the_data_start() {
        let bytes = whole_file(Ctx::V3_LE, Some(64));
        let (_, gguf) = file(None)(&bytes).unwrap();
        assert_eq!(gguf.alignment, 64);
        assert_eq!(
            gguf.tensor_data_offset,
            bytes.len().next_multiple_of(64) as u64
        );
    }

    #[test]
    fn errors_are_located_and_name_the_kv() {
        let bytes = whole_file(Ctx::V3_LE, None);
        let cut = &bytes[..24 + 8 + 12 + 4 + 8];
        let nom::Err::Error(e) = file(None)(cut).unwrap_err() else {
            panic!()
        };
        assert_eq!(e.path.to_string(), "kv[0] \"general.name\"");
        assert_eq!(e.offset, 24 + 8 + 12 + 4);
        assert!(
            e.to_string()
                .contains("string length 1 exceeds the 0 bytes left"),
            "{e}"
        );
    }
}
