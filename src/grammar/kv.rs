//! `kv = key:string value_type value(value_type)`

use super::string::{self, GgufStr};
use super::value::{self, Value};
use super::{Ctx, ParseResult};
use crate::error::{within, Segment};

/// A metadata key/value pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Kv<'a> {
    /// The key, as stored (conventionally dotted ASCII snake_case).
    pub key: GgufStr<'a>,
    /// The typed value.
    pub value: Value<'a>,
    /// The pair's bytes, from the key's length to the end of the value
    /// ([`crate::Gguf::offset_of`] gives their position in the file).
    pub raw: &'a [u8],
}

/// Parses a key/value pair. Errors inside the value name the key in their path.
///
/// ```
/// use gguf_grammar::grammar::{kv::kv, Ctx};
/// use gguf_grammar::Value;
///
/// let bytes = b"\x01\0\0\0\0\0\0\0n\x04\0\0\0\x2a\0\0\0";
/// let (rest, pair) = kv(Ctx::V3_LE)(bytes).unwrap();
/// assert_eq!((pair.key.to_str(), pair.value), (Ok("n"), Value::U32(42)));
/// assert_eq!((rest.len(), pair.raw.len()), (0, bytes.len()));
/// ```
pub fn kv(ctx: Ctx) -> impl Fn(&[u8]) -> ParseResult<'_, Kv<'_>> {
    move |input| parse(ctx, input)
}

/// [`kv`] inside the grammar.
pub(crate) fn parse(ctx: Ctx, input: &[u8]) -> ParseResult<'_, Kv<'_>> {
    let (rest, key) = string::parse(ctx, input).map_err(within(|| Segment::Field("key")))?;
    let name = || Segment::Name(key.lossy());
    let (rest, ty) = value::parse_type(ctx, rest)
        .map_err(within(|| Segment::Field("type")))
        .map_err(within(name))?;
    let (rest, value) = value::parse_value(ctx, ty, rest).map_err(within(name))?;
    let raw = &input[..input.len() - rest.len()];
    Ok((rest, Kv { key, value, raw }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::grammar::finish;
    use crate::grammar::test_bytes::{all_ctx, Enc};
    use crate::grammar::value::ValueType;

    #[test]
    fn key_and_value_in_every_version_and_byte_order() {
        for ctx in all_ctx() {
            let bytes = Enc::new(ctx)
                .string(b"general.alignment")
                .u32(ValueType::U32.tag())
                .u32(64)
                .bytes;
            let (rest, pair) = kv(ctx)(&bytes).unwrap();
            assert!(rest.is_empty());
            assert_eq!(pair.key.to_str(), Ok("general.alignment"));
            assert_eq!(pair.value, Value::U32(64));
            assert_eq!(pair.raw, &bytes[..]);
        }
    }

    #[test]
    fn errors_name_the_key() {
        let ctx = Ctx::V3_LE;
        let bytes = Enc::new(ctx)
            .string(b"a.b")
            .u32(ValueType::U64.tag())
            .u32(1)
            .bytes;
        let e = finish(kv(ctx), &bytes).unwrap_err();
        assert_eq!(e.path.to_string(), "\"a.b\"");
        assert_eq!(e.offset, 8 + 3 + 4);
        assert_eq!(e.kind.bytes_needed(), Some(4));
        let bytes = Enc::new(ctx).string(b"a.b").u32(99).bytes;
        let e = finish(kv(ctx), &bytes).unwrap_err();
        assert_eq!(e.path.to_string(), "\"a.b\".type");
        assert_eq!(e.kind, ErrorKind::UnknownValueType { tag: 99 });
    }

    #[test]
    fn a_cut_pair_is_located_in_the_pair_alone() {
        // The issue's case: 15 bytes of a pair, cut inside the value type tag.
        let ctx = Ctx::V3_LE;
        let bytes = Enc::new(ctx)
            .string(b"abcde")
            .u32(ValueType::U8.tag())
            .bytes;
        let e = finish(kv(ctx), &bytes[..15]).unwrap_err();
        assert_eq!((e.offset, e.kind.bytes_needed()), (13, Some(2)));
        assert_eq!(
            e.to_string(),
            "offset 0xd (13): \"abcde\".type: input ends inside the value type (at least 2 more bytes needed)"
        );
    }
}
