//! `tensor_info = name:string n_dims:u32 dims:count[n_dims] ggml_type:u32 offset:u64`

use nom_derive::{Nom, Parse};

use super::string::{self, GgufStr};
use super::{read_record, Ctx, FieldAt, ParseResult};
use crate::error::{within, Segment};
use crate::ggml_type::GgmlType;

/// A tensor descriptor as stored in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo<'a> {
    /// The tensor's name, as stored.
    pub name: GgufStr<'a>,
    /// Dimensions in file order: `dims[0]` is ne0, the fastest-varying.
    pub dims: Vec<u64>,
    /// Element type (unknown ids are kept).
    pub ggml_type: GgmlType,
    /// Offset of the tensor's data relative to the start of the tensor-data section.
    pub offset: u64,
    /// The descriptor's bytes ([`crate::Gguf::offset_of`] gives their position in the file).
    pub raw: &'a [u8],
}

/// The fixed tail after the dims: a plain record, parsed by nom-derive in the file's byte order.
#[derive(Nom)]
#[nom(
    GenericErrors,
    ExtraArgs(ctx: Ctx, at: &FieldAt),
    SetEndian(nom::number::Endianness::from(ctx.endian))
)]
struct Tail {
    #[nom(PreExec = "at.enter(i, Some(\"type\"), \"tensor type\");")]
    ggml_type: u32,
    #[nom(PreExec = "at.enter(i, Some(\"offset\"), \"tensor data offset\");")]
    offset: u64,
}

/// Parses a tensor info.
///
/// ```
/// use gguf_grammar::grammar::{tensor_info::tensor_info, Ctx, Endian, Version};
/// use gguf_grammar::GgmlType;
///
/// // v1, big endian: name "w", 2 dims [8, 2], type 1 (f16), offset 64
/// let bytes = b"\0\0\0\x01w\0\0\0\x02\0\0\0\x08\0\0\0\x02\0\0\0\x01\0\0\0\0\0\0\0\x40";
/// let ctx = Ctx { version: Version::V1, endian: Endian::Big };
/// let (_, t) = tensor_info(ctx)(bytes).unwrap();
/// assert_eq!((t.dims.as_slice(), t.ggml_type, t.offset), (&[8, 2][..], GgmlType::F16, 64));
/// ```
pub fn tensor_info(ctx: Ctx) -> impl Fn(&[u8]) -> ParseResult<'_, TensorInfo<'_>> {
    move |input| parse(ctx, input)
}

/// [`tensor_info`] inside the grammar.
pub(crate) fn parse(ctx: Ctx, input: &[u8]) -> ParseResult<'_, TensorInfo<'_>> {
    let (rest, name) = string::parse(ctx, input).map_err(within(|| Segment::Field("name")))?;
    let in_tensor = within(|| Segment::Name(name.lossy()));
    let (mut rest, n_dims) = ctx
        .u32(rest, "n_dims")
        .map_err(within(|| Segment::Field("n_dims")))
        .map_err(&in_tensor)?;
    // Room for no more dims than the input holds: n_dims is untrusted.
    let room = rest.len() as u64 / ctx.count_width();
    let mut dims = Vec::with_capacity(u64::from(n_dims).min(room) as usize);
    for index in 0..n_dims {
        let (next, dim) = ctx
            .count(rest, "dim")
            .map_err(within(|| Segment::Dim(index.into())))
            .map_err(&in_tensor)?;
        dims.push(dim);
        rest = next;
    }
    let (rest, tail) =
        read_record(rest, Segment::Field, |i, at| Tail::parse(i, ctx, at)).map_err(&in_tensor)?;
    let raw = &input[..input.len() - rest.len()];
    Ok((
        rest,
        TensorInfo {
            name,
            dims,
            ggml_type: GgmlType(tail.ggml_type),
            offset: tail.offset,
            raw,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::grammar::finish;
    use crate::grammar::test_bytes::{all_ctx, Enc};

    #[test]
    fn every_version_and_byte_order() {
        for ctx in all_ctx() {
            let bytes = Enc::new(ctx)
                .string(b"blk.0.attn_q.weight")
                .u32(3)
                .count(4096)
                .count(1)
                .count(7)
                .u32(12)
                .raw(&0x1_0000_0020u64.to_be_bytes())
                .bytes;
            let (rest, t) = tensor_info(ctx)(&bytes).unwrap();
            assert!(rest.is_empty());
            assert_eq!(t.name.to_str(), Ok("blk.0.attn_q.weight"));
            assert_eq!(t.dims, [4096, 1, 7]);
            assert_eq!((t.ggml_type, t.offset), (GgmlType::Q4_K, 0x1_0000_0020));
            assert_eq!(t.raw, &bytes[..]);
        }
    }

    #[test]
    fn truncated_dims_and_hostile_n_dims_are_located() {
        let ctx = Ctx::V3_LE;
        let bytes = Enc::new(ctx).string(b"w").u32(2).count(8).bytes;
        let e = finish(tensor_info(ctx), &bytes[..bytes.len()]).unwrap_err();
        assert_eq!(e.path.to_string(), "\"w\".dims[1]");
        assert_eq!(
            (e.offset, e.kind.bytes_needed()),
            (bytes.len() as u64, Some(8))
        );

        let bytes = Enc::new(ctx).string(b"w").u32(u32::MAX).bytes;
        let e = finish(tensor_info(ctx), &bytes).unwrap_err();
        assert_eq!(e.path.to_string(), "\"w\".dims[0]");
    }

    #[test]
    fn unknown_types_are_kept() {
        let ctx = Ctx::V3_LE;
        let bytes = Enc::new(ctx)
            .string(b"w")
            .u32(0)
            .u32(1000)
            .raw(&[0; 8])
            .bytes;
        let (_, t) = tensor_info(ctx)(&bytes).unwrap();
        assert_eq!((t.ggml_type, t.dims.len()), (GgmlType(1000), 0));
    }

    #[test]
    fn a_short_tail_names_its_field() {
        for ctx in all_ctx() {
            let bytes = Enc::new(ctx).string(b"w").u32(0).u32(1).raw(&[0; 8]).bytes;
            let tail = bytes.len() - 12;
            let e = finish(tensor_info(ctx), &bytes[..tail + 2]).unwrap_err();
            assert_eq!(
                (e.offset, e.path.to_string()),
                (tail as u64, "\"w\".type".into())
            );
            assert_eq!(
                e.kind,
                ErrorKind::Truncated {
                    construct: "tensor type",
                    needed: 10
                }
            );
            let e = finish(tensor_info(ctx), &bytes[..tail + 5]).unwrap_err();
            assert_eq!(
                (e.offset, e.path.to_string()),
                (tail as u64 + 4, "\"w\".offset".into())
            );
            assert_eq!(
                e.kind,
                ErrorKind::Truncated {
                    construct: "tensor data offset",
                    needed: 7
                }
            );
        }
    }
}
