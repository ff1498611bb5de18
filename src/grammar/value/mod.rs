//! `value_type = u32`, `value(T)`, `array = element_type:value_type len:count value(element_type)[len]`
//!
//! Thirteen value types: twelve scalars (strings included) and the array, whose elements all
//! have one type and may themselves be arrays. Arrays are parsed without decoding their elements:
//! the parse checks that every element is present (walking string and nested-array elements
//! once, skipping fixed-size ones by arithmetic) and keeps the element bytes as a borrowed
//! slice, decoded lazily by [`Array::iter`] in the file's byte order.
//!
//! The data model ([`Value`], [`Array`], [`ValueType`], [`ElementType`]) is in `model.rs`;
//! this file is the grammar that reads it.

use nom_derive::{Nom, Parse};

use super::string;
use super::{
    ascii_length, count, read_record, take_declared, Ctx, FieldAt, LengthPrefix, ParseResult,
};
use crate::error::{within, ErrorKind, GrammarError, Segment};

pub(crate) mod model;

pub use model::{Array, ArrayIter, ElementType, Value, ValueType};

/// Arrays nested deeper than this are rejected, so that hostile nesting cannot exhaust the
/// stack. Real files nest at most once; gguf-py's recursion gives out near 1000.
pub const MAX_NESTING: u32 = 256;

/// Parses a value type tag.
///
/// ```
/// use gguf_grammar::grammar::{value::value_type, Ctx};
/// use gguf_grammar::ValueType;
///
/// assert_eq!(value_type(Ctx::V3_LE)(b"\x08\0\0\0").unwrap().1, ValueType::String);
/// assert!(value_type(Ctx::V3_LE)(b"\x08\0").is_err());
/// ```
pub fn value_type(ctx: Ctx) -> impl Fn(&[u8]) -> ParseResult<'_, ValueType> {
    move |input| parse_type(ctx, input)
}

/// [`value_type`] inside the grammar.
pub(crate) fn parse_type(ctx: Ctx, input: &[u8]) -> ParseResult<'_, ValueType> {
    let (rest, tag) = ctx.u32(input, "value type")?;
    known_type(input, tag).map(|ty| (rest, ty))
}

/// The value type with tag `tag`, read at the start of `input`.
fn known_type(input: &[u8], tag: u32) -> Result<ValueType, nom::Err<GrammarError>> {
    ValueType::from_tag(tag).ok_or_else(|| {
        nom::Err::Error(GrammarError::at(input, ErrorKind::UnknownValueType { tag }))
    })
}

/// Parses a value of type `ty` (the tag has been read already).
///
/// ```
/// use gguf_grammar::grammar::{value::{value, ValueType}, Ctx};
/// use gguf_grammar::Value;
///
/// assert_eq!(value(Ctx::V3_LE, ValueType::I16)(b"\xfe\xff").unwrap().1, Value::I16(-2));
/// ```
pub fn value(ctx: Ctx, ty: ValueType) -> impl Fn(&[u8]) -> ParseResult<'_, Value<'_>> {
    move |input| parse_value(ctx, ty, input)
}

/// [`value`] inside the grammar.
pub(crate) fn parse_value(ctx: Ctx, ty: ValueType, input: &[u8]) -> ParseResult<'_, Value<'_>> {
    element(ctx, ty, 0, input)
}

/// Parses an array (element type, length, elements). Arrays nested in it count towards
/// [`MAX_NESTING`].
pub fn array(ctx: Ctx) -> impl Fn(&[u8]) -> ParseResult<'_, Array<'_>> {
    move |input| parse_array(ctx, 0, input)
}

/// What precedes an array's elements.
#[derive(Nom)]
#[nom(
    GenericErrors,
    ExtraArgs(ctx: Ctx, at: &FieldAt),
    SetEndian(nom::number::Endianness::from(ctx.endian))
)]
struct ArrayHeader {
    #[nom(PreExec = "at.enter(i, Some(\"element_type\"), \"value type\");")]
    element_type: u32,
    #[nom(PreExec = "at.enter(i, None, \"array length\");", Parse = "count(ctx)")]
    len: u64,
}

/// [`array`] inside the grammar.
fn parse_array(ctx: Ctx, depth: u32, input: &[u8]) -> ParseResult<'_, Array<'_>> {
    if depth >= MAX_NESTING {
        return Err(nom::Err::Error(GrammarError::at(
            input,
            ErrorKind::NestingTooDeep { limit: MAX_NESTING },
        )));
    }
    let in_element_type = within(|| Segment::Field("element_type"));
    let (body, header) = read_record(input, Segment::Field, |i, at| {
        ArrayHeader::parse(i, ctx, at)
    })?;
    let len = header.len;
    if len == 0 && ValueType::from_tag(header.element_type).is_none() {
        let element_type = ElementType::Unknown(header.element_type);
        let (elements, rest) = body.split_at(0);
        return Ok((
            rest,
            Array {
                ctx,
                element_type,
                len: 0,
                depth,
                ascii_prefixes: false,
                elements,
            },
        ));
    }
    let element_type = known_type(input, header.element_type).map_err(in_element_type)?;
    let at_len = &input[4..];
    let declared = |needed: u64| {
        nom::Err::Error(GrammarError::at(
            at_len,
            ErrorKind::LengthPastEnd {
                construct: "array",
                declared: len,
                available: body.len() as u64,
                needed,
            },
        ))
    };
    // Every element takes at least min_size bytes: a count the input cannot hold is
    // rejected before any element is walked.
    let min_bytes = len.saturating_mul(element_type.min_size(ctx));
    if min_bytes > body.len() as u64 {
        return Err(declared(min_bytes - body.len() as u64));
    }
    // Every element takes at least a byte and the input holds them all: the count fits a usize.
    let count = usize::try_from(len).map_err(|_| declared(min_bytes))?;
    let (elements_len, ascii_prefixes) = match element_type.fixed_size() {
        Some(size) => (len * size, false),
        None => {
            let (walked, ascii_prefixes) = walk_elements(ctx, element_type, depth, body, len)?;
            ((body.len() - walked.len()) as u64, ascii_prefixes)
        }
    };
    let (rest, elements) = take_declared(body, elements_len, len, "array", at_len)?;
    Ok((
        rest,
        Array {
            ctx,
            element_type: element_type.into(),
            len: count,
            depth,
            ascii_prefixes,
            elements,
        },
    ))
}

/// Steps over `len` string or array elements, returning what follows them and, for strings,
/// whether every length prefix is ASCII ([`Array::ascii_prefixes`]).
fn walk_elements(
    ctx: Ctx,
    ty: ValueType,
    depth: u32,
    input: &[u8],
    len: u64,
) -> Result<(&[u8], bool), nom::Err<GrammarError>> {
    // Strings take the fast loop; where it stops early, the element-by-element walk
    // below resumes to report the exact error.
    let (mut input, walked, lengths) = match ty {
        ValueType::String => skip_strings(ctx, input, len),
        _ => (input, 0, u64::MAX),
    };
    // The OR of all the lengths has a byte >= 0x80 exactly when one of them does.
    let ascii_prefixes = walked == len && ascii_length(lengths);
    for index in walked..len {
        input = match ty {
            ValueType::String => string::parse(ctx, input).map(|(rest, _)| rest),
            _ => parse_array(ctx, depth + 1, input).map(|(rest, _)| rest),
        }
        .map_err(|e| {
            let after = (len - index - 1).saturating_mul(ty.min_size(ctx));
            e.map(|e| e.within(Segment::Element(index)).needs_more(after))
        })?;
    }
    Ok((input, ascii_prefixes))
}

/// The hot loop of large vocabularies: skips up to `len` strings with the length reader
/// fixed for the file's version and byte order. Returns what follows the last whole string,
/// how many were skipped, and the bitwise OR of their lengths.
fn skip_strings(ctx: Ctx, input: &[u8], len: u64) -> (&[u8], u64, u64) {
    LengthPrefix::of(ctx).specialise(|prefix| skip_loop(prefix, input, len))
}

#[inline(always)]
fn skip_loop(prefix: LengthPrefix, mut input: &[u8], len: u64) -> (&[u8], u64, u64) {
    let mut lengths = 0;
    for index in 0..len {
        match prefix.split_string(input) {
            Some((s, rest)) => {
                lengths |= s.len() as u64;
                input = rest;
            }
            None => return (input, index, lengths),
        }
    }
    (input, len, lengths)
}

/// One value of type `ty`; an array value gets nesting depth `depth`.
fn element(ctx: Ctx, ty: ValueType, depth: u32, input: &[u8]) -> ParseResult<'_, Value<'_>> {
    let what = ty.name();
    Ok(match ty {
        ValueType::U8 => ctx.u8(input, what).map(|(r, v)| (r, Value::U8(v)))?,
        ValueType::I8 => ctx.i8(input, what).map(|(r, v)| (r, Value::I8(v)))?,
        ValueType::U16 => ctx.u16(input, what).map(|(r, v)| (r, Value::U16(v)))?,
        ValueType::I16 => ctx.i16(input, what).map(|(r, v)| (r, Value::I16(v)))?,
        ValueType::U32 => ctx.u32(input, what).map(|(r, v)| (r, Value::U32(v)))?,
        ValueType::I32 => ctx.i32(input, what).map(|(r, v)| (r, Value::I32(v)))?,
        ValueType::F32 => ctx.f32(input, what).map(|(r, v)| (r, Value::F32(v)))?,
        ValueType::Bool => ctx.u8(input, what).map(|(r, v)| (r, Value::Bool(v)))?,
        ValueType::String => string::parse(ctx, input).map(|(r, s)| (r, Value::String(s)))?,
        ValueType::Array => parse_array(ctx, depth, input).map(|(r, a)| (r, Value::Array(a)))?,
        ValueType::U64 => ctx.u64(input, what).map(|(r, v)| (r, Value::U64(v)))?,
        ValueType::I64 => ctx.i64(input, what).map(|(r, v)| (r, Value::I64(v)))?,
        ValueType::F64 => ctx.f64(input, what).map(|(r, v)| (r, Value::F64(v)))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::string::GgufStr;
    use crate::grammar::test_bytes::{all_ctx, Enc};

    fn parse_ok(ctx: Ctx, ty: ValueType, bytes: &[u8]) -> Value<'_> {
        let (rest, v) = value(ctx, ty)(bytes).unwrap();
        assert!(rest.is_empty(), "{ctx:?} {ty:?}: {} bytes left", rest.len());
        v
    }

    fn error(result: ParseResult<'_, impl std::fmt::Debug>, input_len: usize) -> crate::Error {
        match result {
            Err(nom::Err::Error(e)) => e.located(input_len),
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn every_scalar_type_in_every_version_and_byte_order() {
        for ctx in all_ctx() {
            let cases: [(ValueType, &[u8], Value<'_>); 12] = [
                (ValueType::U8, &[0xfe], Value::U8(0xfe)),
                (ValueType::I8, &[0xfe], Value::I8(-2)),
                (ValueType::U16, &[0x12, 0x34], Value::U16(0x1234)),
                (ValueType::I16, &[0xff, 0xfe], Value::I16(-2)),
                (ValueType::U32, &[0, 0, 1, 2], Value::U32(0x102)),
                (ValueType::I32, &[0xff, 0xff, 0xff, 0xfd], Value::I32(-3)),
                (ValueType::F32, &[0x3f, 0xc0, 0, 0], Value::F32(1.5)),
                (ValueType::Bool, &[2], Value::Bool(2)),
                (
                    ValueType::U64,
                    &[1, 0, 0, 0, 0, 0, 0, 2],
                    Value::U64(0x0100_0000_0000_0002),
                ),
                (ValueType::I64, &[0xff; 8], Value::I64(-1)),
                (
                    ValueType::F64,
                    &[0xc0, 0x04, 0, 0, 0, 0, 0, 0],
                    Value::F64(-2.5),
                ),
                (ValueType::String, b"", Value::String(GgufStr(b"h\xc3\xa9"))),
            ];
            for (ty, be, expected) in cases {
                let bytes = if ty == ValueType::String {
                    Enc::new(ctx).string(b"h\xc3\xa9").bytes
                } else {
                    Enc::new(ctx).raw(be).bytes
                };
                assert_eq!(parse_ok(ctx, ty, &bytes), expected, "{ctx:?} {ty:?}");
            }
        }
    }

    #[test]
    fn numeric_arrays_are_decoded_lazily_in_the_files_byte_order() {
        for ctx in all_ctx() {
            let mut enc = Enc::new(ctx).u32(ValueType::I16.tag()).count(3);
            for v in [1i16, -2, 300] {
                enc = enc.raw(&v.to_be_bytes());
            }
            let Value::Array(array) = parse_ok(ctx, ValueType::Array, &enc.bytes) else {
                panic!()
            };
            assert_eq!(
                (array.element_type(), array.len()),
                (ElementType::Known(ValueType::I16), 3)
            );
            assert_eq!(array.raw_elements().len(), 6);
            let values: Vec<_> = array.iter().collect();
            assert_eq!(values, [Value::I16(1), Value::I16(-2), Value::I16(300)]);
            assert_eq!(array.get(2), Some(Value::I16(300)));
            assert_eq!(array.get(3), None);
        }
    }

    #[test]
    fn string_and_nested_arrays() {
        for ctx in all_ctx() {
            let strings = Enc::new(ctx)
                .u32(ValueType::String.tag())
                .count(3)
                .string(b"a")
                .string(b"")
                .string(b"\xff");
            let Value::Array(array) = parse_ok(ctx, ValueType::Array, &strings.bytes) else {
                panic!()
            };
            let got: Vec<_> = array.iter().map(|v| v.as_gguf_str().unwrap().0).collect();
            assert_eq!(got, [&b"a"[..], b"", b"\xff"]);
            assert_eq!(
                array.get(2).and_then(|v| v.as_gguf_str()),
                Some(GgufStr(b"\xff"))
            );

            // [[1, 2], ["x"]]: inner arrays carry their own element type
            let mut nested = Enc::new(ctx).u32(ValueType::Array.tag()).count(2);
            nested = nested.u32(ValueType::U8.tag()).count(2).raw(&[1]).raw(&[2]);
            nested = nested.u32(ValueType::String.tag()).count(1).string(b"x");
            let Value::Array(outer) = parse_ok(ctx, ValueType::Array, &nested.bytes) else {
                panic!()
            };
            let inner: Vec<Array<'_>> = outer.iter().map(|v| v.as_array().unwrap()).collect();
            assert_eq!(
                inner[0].iter().collect::<Vec<_>>(),
                [Value::U8(1), Value::U8(2)]
            );
            assert_eq!(inner[1].get(0).and_then(|v| v.as_str()), Some("x"));
        }
    }

    #[test]
    fn errors_name_the_element_and_where_it_is() {
        let ctx = Ctx::V3_LE;
        let bytes = Enc::new(ctx)
            .u32(ValueType::String.tag())
            .count(2)
            .string(b"ok")
            .count(1 << 40)
            .bytes;
        let e = error(array(ctx)(&bytes), bytes.len());
        assert_eq!(e.path.to_string(), "[1]");
        assert_eq!(e.offset, 12 + 10);
        assert!(
            matches!(e.kind, ErrorKind::LengthPastEnd { declared, available: 0, .. } if declared == 1 << 40)
        );

        let bytes = Enc::new(ctx).u32(13).bytes;
        let e = error(value_type(ctx)(&bytes), bytes.len());
        assert_eq!(
            (e.kind, e.offset),
            (ErrorKind::UnknownValueType { tag: 13 }, 0)
        );
    }

    #[test]
    fn a_short_array_header_names_its_field() {
        for ctx in all_ctx() {
            let bytes = Enc::new(ctx).u32(ValueType::U8.tag()).count(0).bytes;
            let width = ctx.count_width() as usize;
            // Cut inside the element type, then inside the length: each at its own offset.
            let e = error(array(ctx)(&bytes[..3]), 3);
            assert_eq!((e.offset, e.path.to_string()), (0, ".element_type".into()));
            assert_eq!(
                e.kind,
                ErrorKind::Truncated {
                    construct: "value type",
                    needed: 1 + width as u64
                }
            );
            let e = error(array(ctx)(&bytes[..5]), 5);
            assert_eq!((e.offset, e.path.to_string()), (4, String::new()));
            assert_eq!(
                e.kind,
                ErrorKind::Truncated {
                    construct: "array length",
                    needed: width as u64 - 1
                }
            );
        }
    }

    #[test]
    fn hostile_counts_fail_before_any_walk() {
        let ctx = Ctx::V3_LE;
        for ty in ValueType::ALL {
            let bytes = Enc::new(ctx).u32(ty.tag()).count(1 << 62).bytes;
            let e = error(array(ctx)(&bytes), bytes.len());
            assert_eq!(e.offset, 4, "{ty:?}");
            assert!(
                matches!(e.kind, ErrorKind::LengthPastEnd { .. }),
                "{ty:?}: {e}"
            );
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let ctx = Ctx::V3_LE;
        let mut enc = Enc::new(ctx);
        for _ in 0..MAX_NESTING + 1 {
            enc = enc.u32(ValueType::Array.tag()).count(1);
        }
        let bytes = enc.u32(ValueType::U8.tag()).count(0).bytes;
        let e = error(array(ctx)(&bytes), bytes.len());
        assert_eq!(e.kind, ErrorKind::NestingTooDeep { limit: MAX_NESTING });
        assert_eq!(e.path.0.len(), MAX_NESTING as usize);
    }

    /// Whether every length prefix of `strings` is ASCII, read from the bytes the encoder
    /// writes (not from the lengths' values, as the parse finds it).
    fn prefixes_ascii(ctx: Ctx, strings: &[Vec<u8>]) -> bool {
        strings
            .iter()
            .all(|s| Enc::new(ctx).count(s.len() as u64).bytes.is_ascii())
    }

    fn string_array(ctx: Ctx, strings: &[Vec<u8>]) -> Enc {
        let mut enc = Enc::new(ctx)
            .u32(ValueType::String.tag())
            .count(strings.len() as u64);
        for s in strings {
            enc = enc.string(s);
        }
        enc
    }

    #[test]
    fn the_parse_records_whether_every_length_prefix_is_ascii() {
        // Lengths whose prefix bytes are all < 0x80 (0, 127, 256 = 00 01, 0x7f7f) and ones
        // with a byte >= 0x80 in one place or another (128, 200, 0x80 << 8, 0xff00).
        let lengths = [0, 5, 127, 128, 200, 256, 0x7f7f, 0x8000, 0xff00];
        for ctx in all_ctx() {
            for &bad in &lengths {
                let strings: Vec<Vec<u8>> =
                    [3, bad, 0, 127].iter().map(|&n| vec![b'a'; n]).collect();
                let bytes = string_array(ctx, &strings).bytes;
                let (_, array) = array(ctx)(&bytes).unwrap();
                assert_eq!(
                    array.ascii_prefixes(),
                    prefixes_ascii(ctx, &strings),
                    "{ctx:?} length {bad}"
                );
            }
            // Nested: each inner array has its own answer; the outer one is not a string array.
            let inner = [vec![vec![b'x'; 200]], vec![b"ok".to_vec()]];
            let mut nested = Enc::new(ctx).u32(ValueType::Array.tag()).count(2);
            for strings in &inner {
                nested.bytes.extend(string_array(ctx, strings).bytes);
            }
            let (_, outer) = array(ctx)(&nested.bytes).unwrap();
            assert!(!outer.ascii_prefixes());
            let flags: Vec<bool> = outer
                .iter()
                .map(|v| v.as_array().unwrap().ascii_prefixes())
                .collect();
            assert_eq!(flags, [false, true], "{ctx:?}");
            // Numbers, and an empty array of strings (no prefix at all).
            let numbers = Enc::new(ctx).u32(ValueType::U8.tag()).count(1).raw(&[0x41]);
            assert!(!array(ctx)(&numbers.bytes).unwrap().1.ascii_prefixes());
            let empty = string_array(ctx, &[]).bytes;
            assert!(array(ctx)(&empty).unwrap().1.ascii_prefixes());
        }
    }
}
