//! `kv = key:string value_type value(value_type)`

use super::string::{string, GgufStr};
use super::value::{value, value_type, Value};
use super::{Ctx, PResult};
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
pub fn kv(ctx: Ctx) -> impl Fn(&[u8]) -> PResult<'_, Kv<'_>> {
    move |input| {
        let (rest, key) = string(ctx)(input).map_err(within(|| Segment::Field("key")))?;
        let name = || Segment::Name(key.to_string());
        let (rest, ty) = value_type(ctx)(rest)
            .map_err(within(|| Segment::Field("type")))
            .map_err(within(name))?;
        let (rest, value) = value(ctx, ty)(rest).map_err(within(name))?;
        let raw = &input[..input.len() - rest.len()];
        Ok((rest, Kv { key, value, raw }))
    }
}
