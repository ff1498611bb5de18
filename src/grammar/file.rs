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
