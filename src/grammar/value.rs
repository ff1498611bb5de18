//! `value_type = u32`, `value(T)`, `array = element_type:value_type len:count value(element_type)[len]`
//!
//! Thirteen value types: twelve scalars (strings included) and the array, whose elements all
//! have one type and may themselves be arrays. Arrays are parsed without decoding their elements:
//! the parse checks that every element is present (walking string and nested-array elements
//! once, skipping fixed-size ones by arithmetic) and keeps the element bytes as a borrowed
//! slice, decoded lazily by [`Array::iter`] in the file's byte order.

use super::string::{string, GgufStr};
use super::{take_declared, Ctx, Endian, PResult, Version};
use crate::error::{within, Error, ErrorKind, Segment};

/// Arrays nested deeper than this are rejected, so that hostile nesting cannot exhaust the
/// stack. Real files nest at most once; gguf-py's recursion gives out near 1000.
pub const MAX_NESTING: u32 = 256;

/// The type tag of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ValueType {
    /// 0: unsigned 8-bit integer.
    U8 = 0,
    /// 1: signed 8-bit integer.
    I8 = 1,
    /// 2: unsigned 16-bit integer.
    U16 = 2,
    /// 3: signed 16-bit integer.
    I16 = 3,
    /// 4: unsigned 32-bit integer.
    U32 = 4,
    /// 5: signed 32-bit integer.
    I32 = 5,
    /// 6: IEEE 754 single.
    F32 = 6,
    /// 7: bool, one byte (0 false, 1 true; other bytes are kept as read).
    Bool = 7,
    /// 8: length-prefixed string.
    String = 8,
    /// 9: array of values of one type.
    Array = 9,
    /// 10: unsigned 64-bit integer.
    U64 = 10,
    /// 11: signed 64-bit integer.
    I64 = 11,
    /// 12: IEEE 754 double.
    F64 = 12,
}

impl ValueType {
    /// Every value type, in tag order.
    pub const ALL: [ValueType; 13] = [
        ValueType::U8,
        ValueType::I8,
        ValueType::U16,
        ValueType::I16,
        ValueType::U32,
        ValueType::I32,
        ValueType::F32,
        ValueType::Bool,
        ValueType::String,
        ValueType::Array,
        ValueType::U64,
        ValueType::I64,
        ValueType::F64,
    ];

    /// The type with tag `tag`, if it is one of the 13.
    pub fn from_tag(tag: u32) -> Option<Self> {
        Self::ALL.get(usize::try_from(tag).ok()?).copied()
    }

    /// The tag stored in the file.
    pub fn tag(self) -> u32 {
        self as u32
    }

    /// The specification's name: `uint8`, `int8`, ..., `string`, `array`, `float64`.
    ///
    /// ```
    /// use gguf_grammar::ValueType;
    /// assert_eq!(ValueType::from_tag(6).map(ValueType::name), Some("float32"));
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            ValueType::U8 => "uint8",
            ValueType::I8 => "int8",
            ValueType::U16 => "uint16",
            ValueType::I16 => "int16",
            ValueType::U32 => "uint32",
            ValueType::I32 => "int32",
            ValueType::F32 => "float32",
            ValueType::Bool => "bool",
            ValueType::String => "string",
            ValueType::Array => "array",
            ValueType::U64 => "uint64",
            ValueType::I64 => "int64",
            ValueType::F64 => "float64",
        }
    }

    /// Bytes per value for the fixed-size types; `None` for strings and arrays.
    pub fn fixed_size(self) -> Option<u64> {
        match self {
            ValueType::U8 | ValueType::I8 | ValueType::Bool => Some(1),
            ValueType::U16 | ValueType::I16 => Some(2),
            ValueType::U32 | ValueType::I32 | ValueType::F32 => Some(4),
            ValueType::U64 | ValueType::I64 | ValueType::F64 => Some(8),
            ValueType::String | ValueType::Array => None,
        }
    }

    /// The fewest bytes a value of this type can take (a string's length, an array's tag
    /// and count).
    fn min_size(self, ctx: Ctx) -> u64 {
        match self {
            ValueType::String => ctx.count_width(),
            ValueType::Array => 4 + ctx.count_width(),
            fixed => fixed.fixed_size().unwrap_or(1),
        }
    }
}

impl std::fmt::Display for ValueType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A decoded metadata value, borrowing strings and array elements from the input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    /// uint8
    U8(u8),
    /// int8
    I8(i8),
    /// uint16
    U16(u16),
    /// int16
    I16(i16),
    /// uint32
    U32(u32),
    /// int32
    I32(i32),
    /// float32 (bits preserved, NaN payloads included)
    F32(f32),
    /// bool: the byte exactly as stored (see [`Value::as_bool`])
    Bool(u8),
    /// string
    String(GgufStr<'a>),
    /// array
    Array(Array<'a>),
    /// uint64
    U64(u64),
    /// int64
    I64(i64),
    /// float64 (bits preserved)
    F64(f64),
}

impl<'a> Value<'a> {
    /// The value's type tag.
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::U8(_) => ValueType::U8,
            Value::I8(_) => ValueType::I8,
            Value::U16(_) => ValueType::U16,
            Value::I16(_) => ValueType::I16,
            Value::U32(_) => ValueType::U32,
            Value::I32(_) => ValueType::I32,
            Value::F32(_) => ValueType::F32,
            Value::Bool(_) => ValueType::Bool,
            Value::String(_) => ValueType::String,
            Value::Array(_) => ValueType::Array,
            Value::U64(_) => ValueType::U64,
            Value::I64(_) => ValueType::I64,
            Value::F64(_) => ValueType::F64,
        }
    }

    /// Any unsigned integer, widened to u64.
    ///
    /// ```
    /// use gguf_grammar::Value;
    /// assert_eq!(Value::U16(7).as_u64(), Some(7));
    /// assert_eq!(Value::I32(7).as_u64(), None);
    /// ```
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::U8(v) => Some(v.into()),
            Value::U16(v) => Some(v.into()),
            Value::U32(v) => Some(v.into()),
            Value::U64(v) => Some(v),
            _ => None,
        }
    }

    /// Any integer, signed or unsigned, whose value fits in an i64.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::I8(v) => Some(v.into()),
            Value::I16(v) => Some(v.into()),
            Value::I32(v) => Some(v.into()),
            Value::I64(v) => Some(v),
            _ => self.as_u64().and_then(|v| i64::try_from(v).ok()),
        }
    }

    /// A float32 or float64, as f64.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::F32(v) => Some(v.into()),
            Value::F64(v) => Some(v),
            _ => None,
        }
    }

    /// A bool: any non-zero byte is true (as ggml and gguf-py read it).
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(byte) => Some(byte != 0),
            _ => None,
        }
    }

    /// A string, if it is one and is valid UTF-8.
    pub fn as_str(&self) -> Option<&'a str> {
        self.as_gguf_str()?.to_str().ok()
    }

    /// A string's raw bytes, whatever their encoding.
    pub fn as_gguf_str(&self) -> Option<GgufStr<'a>> {
        match *self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// An array.
    pub fn as_array(&self) -> Option<Array<'a>> {
        match *self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// An array value: element type, length and the undecoded element bytes.
///
/// ```
/// use gguf_grammar::grammar::{value::array, Ctx};
/// use gguf_grammar::Value;
///
/// // element type 4 (uint32), 2 elements
/// let bytes = b"\x04\0\0\0\x02\0\0\0\0\0\0\0\x07\0\0\0\x09\0\0\0";
/// let (_, arr) = array(Ctx::V3_LE, 0)(bytes).unwrap();
/// assert_eq!(arr.len(), 2);
/// assert_eq!(arr.iter().collect::<Vec<_>>(), [Value::U32(7), Value::U32(9)]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Array<'a> {
    ctx: Ctx,
    element_type: ValueType,
    len: u64,
    depth: u32,
    elements: &'a [u8],
}

impl<'a> Array<'a> {
    /// The type every element has.
    pub fn element_type(&self) -> ValueType {
        self.element_type
    }

    /// Number of elements.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The element bytes exactly as stored (after the element type and length).
    pub fn raw_elements(&self) -> &'a [u8] {
        self.elements
    }

    /// The version and byte order the elements are encoded with.
    pub fn ctx(&self) -> Ctx {
        self.ctx
    }

    /// Decodes the elements one by one.
    pub fn iter(&self) -> ArrayIter<'a> {
        ArrayIter {
            array: *self,
            rest: self.elements,
            left: self.len,
        }
    }

    /// The element at `index`: O(1) for fixed-size types, a walk for strings and arrays.
    pub fn get(&self, index: u64) -> Option<Value<'a>> {
        if index >= self.len {
            return None;
        }
        match self.element_type.fixed_size() {
            Some(size) => {
                let start = usize::try_from(index * size).ok()?;
                let (_, v) = element(
                    self.ctx,
                    self.element_type,
                    self.depth + 1,
                    &self.elements[start..],
                )
                .ok()?;
                Some(v)
            }
            None => self.iter().nth(usize::try_from(index).ok()?),
        }
    }
}

/// Iterator over an [`Array`]'s elements.
#[derive(Clone, Debug)]
pub struct ArrayIter<'a> {
    array: Array<'a>,
    rest: &'a [u8],
    left: u64,
}

impl<'a> Iterator for ArrayIter<'a> {
    type Item = Value<'a>;

    fn next(&mut self) -> Option<Value<'a>> {
        if self.left == 0 {
            return None;
        }
        let Array {
            ctx,
            element_type,
            depth,
            ..
        } = self.array;
        // The parse that built the array checked every element, so this cannot fail.
        let (rest, value) = element(ctx, element_type, depth + 1, self.rest).ok()?;
        self.rest = rest;
        self.left -= 1;
        Some(value)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.left).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

impl ExactSizeIterator for ArrayIter<'_> {}

/// Parses a value type tag.
pub fn value_type(ctx: Ctx) -> impl Fn(&[u8]) -> PResult<'_, ValueType> {
    move |input| {
        let (rest, tag) = ctx.u32(input, "value type")?;
        match ValueType::from_tag(tag) {
            Some(ty) => Ok((rest, ty)),
            None => Err(nom::Err::Error(Error::at(
                input,
                ErrorKind::UnknownValueType { tag },
            ))),
        }
    }
}

/// Parses a value of type `ty` (the tag has been read already).
///
/// ```
/// use gguf_grammar::grammar::{value::{value, ValueType}, Ctx};
/// use gguf_grammar::Value;
///
/// assert_eq!(value(Ctx::V3_LE, ValueType::I16)(b"\xfe\xff").unwrap().1, Value::I16(-2));
/// ```
pub fn value(ctx: Ctx, ty: ValueType) -> impl Fn(&[u8]) -> PResult<'_, Value<'_>> {
    move |input| element(ctx, ty, 0, input)
}

/// Parses an array (element type, length, elements) nested `depth` arrays deep.
pub fn array(ctx: Ctx, depth: u32) -> impl Fn(&[u8]) -> PResult<'_, Array<'_>> {
    move |input| {
        if depth >= MAX_NESTING {
            return Err(nom::Err::Error(Error::at(
                input,
                ErrorKind::NestingTooDeep { limit: MAX_NESTING },
            )));
        }
        let (at_len, element_type) =
            value_type(ctx)(input).map_err(within(|| Segment::Field("element_type")))?;
        let (body, len) = ctx.count(at_len, "array length")?;
        let declared = |needed: u64| {
            nom::Err::Error(Error::at(
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
        let elements_len = match element_type.fixed_size() {
            Some(size) => len * size,
            None => {
                let walked = walk_elements(ctx, element_type, depth, body, len)?;
                (body.len() - walked.len()) as u64
            }
        };
        let (rest, elements) = take_declared(body, elements_len, len, "array", at_len)?;
        Ok((
            rest,
            Array {
                ctx,
                element_type,
                len,
                depth,
                elements,
            },
        ))
    }
}

/// Steps over `len` string or array elements, returning what follows them.
fn walk_elements(
    ctx: Ctx,
    ty: ValueType,
    depth: u32,
    input: &[u8],
    len: u64,
) -> Result<&[u8], nom::Err<Error>> {
    // Strings take the fast loop; where it stops early, the element-by-element walk
    // below resumes to report the exact error.
    let (mut input, walked) = match ty {
        ValueType::String => skip_strings(ctx, input, len),
        _ => (input, 0),
    };
    for index in walked..len {
        input = match ty {
            ValueType::String => string(ctx)(input).map(|(rest, _)| rest),
            _ => array(ctx, depth + 1)(input).map(|(rest, _)| rest),
        }
        .map_err(|e| {
            let after = (len - index - 1).saturating_mul(ty.min_size(ctx));
            e.map(|e| e.within(Segment::Element(index)).needs_more(after))
        })?;
    }
    Ok(input)
}

/// The hot loop of large vocabularies: skips up to `len` strings with the length reader
/// fixed for the file's version and byte order. Returns what follows the last whole string
/// and how many were skipped.
fn skip_strings(ctx: Ctx, input: &[u8], len: u64) -> (&[u8], u64) {
    match (ctx.version, ctx.endian) {
        (Version::V1, Endian::Little) => skip_loop(input, len, |b| u32::from_le_bytes(b).into()),
        (Version::V1, Endian::Big) => skip_loop(input, len, |b| u32::from_be_bytes(b).into()),
        (_, Endian::Little) => skip_loop(input, len, u64::from_le_bytes),
        (_, Endian::Big) => skip_loop(input, len, u64::from_be_bytes),
    }
}

#[inline(always)]
fn skip_loop<const N: usize>(
    mut input: &[u8],
    len: u64,
    read_len: impl Fn([u8; N]) -> u64,
) -> (&[u8], u64) {
    for index in 0..len {
        match split_string(input, &read_len) {
            Some((_, rest)) => input = rest,
            None => return (input, index),
        }
    }
    (input, len)
}

/// One step of every walk over string elements (the parse's skip loop and
/// [`crate::elements::Strings`]): the string at the start of `input` and what follows it,
/// with the length read by `read_len` from an `N`-byte prefix; `None` if it does not fit.
#[inline(always)]
pub(crate) fn split_string<const N: usize>(
    input: &[u8],
    read_len: impl Fn([u8; N]) -> u64,
) -> Option<(&[u8], &[u8])> {
    let (head, rest) = input.split_first_chunk::<N>()?;
    match usize::try_from(read_len(*head)) {
        Ok(n) if n <= rest.len() => Some(rest.split_at(n)),
        _ => None,
    }
}

/// One value of type `ty`; an array value gets nesting depth `depth`.
fn element(ctx: Ctx, ty: ValueType, depth: u32, input: &[u8]) -> PResult<'_, Value<'_>> {
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
        ValueType::String => string(ctx)(input).map(|(r, s)| (r, Value::String(s)))?,
        ValueType::Array => array(ctx, depth)(input).map(|(r, a)| (r, Value::Array(a)))?,
        ValueType::U64 => ctx.u64(input, what).map(|(r, v)| (r, Value::U64(v)))?,
        ValueType::I64 => ctx.i64(input, what).map(|(r, v)| (r, Value::I64(v)))?,
        ValueType::F64 => ctx.f64(input, what).map(|(r, v)| (r, Value::F64(v)))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::test_bytes::{all_ctx, Enc};

    fn parse_ok(ctx: Ctx, ty: ValueType, bytes: &[u8]) -> Value<'_> {
        let (rest, v) = value(ctx, ty)(bytes).unwrap();
        assert!(rest.is_empty(), "{ctx:?} {ty:?}: {} bytes left", rest.len());
        v
    }

    fn error(result: PResult<'_, impl std::fmt::Debug>, input_len: usize) -> Error {
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
            assert_eq!((array.element_type(), array.len()), (ValueType::I16, 3));
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
        let e = error(array(ctx, 0)(&bytes), bytes.len());
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
    fn hostile_counts_fail_before_any_walk() {
        let ctx = Ctx::V3_LE;
        for ty in ValueType::ALL {
            let bytes = Enc::new(ctx).u32(ty.tag()).count(1 << 62).bytes;
            let e = error(array(ctx, 0)(&bytes), bytes.len());
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
        let e = error(array(ctx, 0)(&bytes), bytes.len());
        assert_eq!(e.kind, ErrorKind::NestingTooDeep { limit: MAX_NESTING });
        assert_eq!(e.path.0.len(), MAX_NESTING as usize);
    }
}
