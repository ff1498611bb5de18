//! `value_type = u32`, `value(T)`, `array = element_type:value_type len:count value(element_type)[len]`
//!
//! Thirteen value types: twelve scalars (strings included) and the array, whose elements all
//! have one type and may themselves be arrays. Arrays are parsed without decoding their elements:
//! the parse checks that every element is present (walking string and nested-array elements
//! once, skipping fixed-size ones by arithmetic) and keeps the element bytes as a borrowed
//! slice, decoded lazily by [`Array::iter`] in the file's byte order.

use nom_derive::{Nom, Parse};

use super::string::{self, GgufStr};
use super::{
    ascii_length, count, locate, record, take_declared, Ctx, LengthPrefix, PResult, Parsed,
};
use crate::error::{within, ErrorKind, Segment, Unlocated};

/// Arrays nested deeper than this are rejected, so that hostile nesting cannot exhaust the
/// stack. Real files nest at most once; gguf-py's recursion gives out near 1000.
pub const MAX_NESTING: u32 = 256;

/// One row per value type, in tag order: variant, tag, the specification's name, the short
/// name `gguf edit` takes in `KEY=TYPE:VALUE`, and the size of a value (`None` for strings
/// and arrays). The enum and every table about value types come from this one list.
macro_rules! value_types {
    ($($(#[$doc:meta])* $variant:ident = $tag:literal, $name:literal, $short:literal, $size:expr;)*) => {
        /// The type tag of a value.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ValueType {
            $($(#[$doc])* $variant = $tag,)*
        }

        impl ValueType {
            /// Every value type, in tag order.
            pub const ALL: [ValueType; 13] = [$(ValueType::$variant),*];

            /// The specification's name: `uint8`, `int8`, ..., `string`, `array`, `float64`.
            ///
            /// ```
            /// use gguf_grammar::ValueType;
            /// assert_eq!(ValueType::from_tag(6).map(ValueType::name), Some("float32"));
            /// ```
            pub fn name(self) -> &'static str {
                match self {
                    $(ValueType::$variant => $name,)*
                }
            }

            /// The short name `gguf edit --set KEY=TYPE:VALUE` takes: `u8`, `i8`, ..., `f64`,
            /// `bool`, `string`, `array`.
            ///
            /// ```
            /// use gguf_grammar::ValueType;
            /// assert_eq!(ValueType::U16.short_name(), "u16");
            /// ```
            pub fn short_name(self) -> &'static str {
                match self {
                    $(ValueType::$variant => $short,)*
                }
            }

            /// Bytes per value for the fixed-size types; `None` for strings and arrays.
            pub fn fixed_size(self) -> Option<u64> {
                match self {
                    $(ValueType::$variant => $size,)*
                }
            }
        }
    };
}

value_types! {
    /// 0: unsigned 8-bit integer.
    U8 = 0, "uint8", "u8", Some(1);
    /// 1: signed 8-bit integer.
    I8 = 1, "int8", "i8", Some(1);
    /// 2: unsigned 16-bit integer.
    U16 = 2, "uint16", "u16", Some(2);
    /// 3: signed 16-bit integer.
    I16 = 3, "int16", "i16", Some(2);
    /// 4: unsigned 32-bit integer.
    U32 = 4, "uint32", "u32", Some(4);
    /// 5: signed 32-bit integer.
    I32 = 5, "int32", "i32", Some(4);
    /// 6: IEEE 754 single.
    F32 = 6, "float32", "f32", Some(4);
    /// 7: bool, one byte (0 false, 1 true; other bytes are kept as read).
    Bool = 7, "bool", "bool", Some(1);
    /// 8: length-prefixed string.
    String = 8, "string", "string", None;
    /// 9: array of values of one type.
    Array = 9, "array", "array", None;
    /// 10: unsigned 64-bit integer.
    U64 = 10, "uint64", "u64", Some(8);
    /// 11: signed 64-bit integer.
    I64 = 11, "int64", "i64", Some(8);
    /// 12: IEEE 754 double.
    F64 = 12, "float64", "f64", Some(8);
}

impl ValueType {
    /// The type with tag `tag`, if it is one of the 13.
    pub fn from_tag(tag: u32) -> Option<Self> {
        Self::ALL.get(usize::try_from(tag).ok()?).copied()
    }

    /// The tag stored in the file.
    pub fn tag(self) -> u32 {
        self as u32
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

/// An array's element type: one of the thirteen value types, or a tag outside them. Only an
/// empty array can carry an unknown tag: no element is ever decoded with it, so the parse
/// keeps it (gguf-py reads such an array; ggml rejects it, see the `array-type-unknown`
/// diagnostic).
///
/// ```
/// use gguf_grammar::grammar::value::ElementType;
/// use gguf_grammar::ValueType;
///
/// assert_eq!(ElementType::Known(ValueType::U8), ValueType::U8);
/// assert_eq!(ElementType::Unknown(13).to_string(), "unknown type 13");
/// assert_eq!(ElementType::Unknown(13).known(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// One of the thirteen value types.
    Known(ValueType),
    /// A tag outside them, as stored in the file.
    Unknown(u32),
}

impl ElementType {
    /// The element type read from tag `tag`.
    pub fn from_tag(tag: u32) -> Self {
        ValueType::from_tag(tag).map_or(ElementType::Unknown(tag), ElementType::Known)
    }

    /// The value type, if the tag is a known one.
    pub fn known(self) -> Option<ValueType> {
        match self {
            ElementType::Known(ty) => Some(ty),
            ElementType::Unknown(_) => None,
        }
    }

    /// The tag stored in the file.
    pub fn tag(self) -> u32 {
        match self {
            ElementType::Known(ty) => ty.tag(),
            ElementType::Unknown(tag) => tag,
        }
    }

    /// Bytes per element for the fixed-size types; `None` for strings, arrays and unknown tags.
    pub fn fixed_size(self) -> Option<u64> {
        self.known().and_then(ValueType::fixed_size)
    }
}

impl From<ValueType> for ElementType {
    fn from(ty: ValueType) -> Self {
        ElementType::Known(ty)
    }
}

impl PartialEq<ValueType> for ElementType {
    fn eq(&self, other: &ValueType) -> bool {
        *self == ElementType::Known(*other)
    }
}

impl std::fmt::Display for ElementType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ElementType::Known(ty) => ty.fmt(f),
            ElementType::Unknown(tag) => write!(f, "unknown type {tag}"),
        }
    }
}

/// Passes the variants that every value enum shares (the eleven fixed-size types, each with
/// its payload) to `$then!`, after `$then`'s own tokens: the one list behind [`Value`] and
/// [`crate::write::OwnedValue`], so that a new type is one line here.
macro_rules! with_fixed_size_variants {
    ($then:ident! { $($args:tt)* }) => {
        $then! {
            $($args)*
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
            /// bool: the byte as stored or written (0 false, 1 true; any other byte is kept)
            Bool(u8),
            /// uint64
            U64(u64),
            /// int64
            I64(i64),
            /// float64 (bits preserved)
            F64(f64),
        }
    };
}

/// Declares a value enum and its `value_type()`: the variants written out (strings and
/// arrays, each `Variant(Payload) => ValueType`), then the fixed-size ones
/// [`with_fixed_size_variants`] passes.
macro_rules! value_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident $(<$lt:lifetime>)? {
            $($(#[$own_doc:meta])* $own:ident($own_payload:ty) => $own_type:ident,)*
        }
        $($(#[$doc:meta])* $fixed:ident($payload:ty),)*
    ) => {
        $(#[$meta])*
        pub enum $name $(<$lt>)? {
            $($(#[$doc])* $fixed($payload),)*
            $($(#[$own_doc])* $own($own_payload),)*
        }

        impl $(<$lt>)? $name $(<$lt>)? {
            /// The value's type tag.
            pub fn value_type(&self) -> $crate::grammar::value::ValueType {
                use $crate::grammar::value::ValueType;
                match self {
                    $(Self::$fixed(_) => ValueType::$fixed,)*
                    $(Self::$own(_) => ValueType::$own_type,)*
                }
            }
        }
    };
}
#[cfg(feature = "write")]
pub(crate) use {value_enum, with_fixed_size_variants};

with_fixed_size_variants!(value_enum! {
    /// A decoded metadata value, borrowing strings and array elements from the input.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub enum Value<'a> {
        /// string
        String(GgufStr<'a>) => String,
        /// array
        Array(Array<'a>) => Array,
    }
});

impl<'a> Value<'a> {
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
    element_type: ElementType,
    len: usize,
    depth: u32,
    /// A string array whose every length prefix has only bytes < 0x80, as found by the parse
    /// (see [`Array::ascii_prefixes`]).
    ascii_prefixes: bool,
    elements: &'a [u8],
}

impl<'a> Array<'a> {
    /// The type every element has (an unknown tag only when the array is empty).
    pub fn element_type(&self) -> ElementType {
        self.element_type
    }

    /// Number of elements. The parse checked that the input holds them all, so the count a
    /// file declares always fits a `usize`.
    pub fn len(&self) -> usize {
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

    /// Whether this is a string array the parse found every length prefix of to be ASCII
    /// (all bytes < 0x80). Such a prefix cannot complete or start a multi-byte UTF-8 sequence,
    /// so the element bytes are valid UTF-8 as a whole exactly when every string is
    /// ([`crate::elements::Strs::invalid`] relies on it). `false` for an array not built by a
    /// parse.
    pub(crate) fn ascii_prefixes(&self) -> bool {
        self.ascii_prefixes
    }

    /// The array over `elements`, which a parse of an array with this context, element type
    /// and length returned as [`Array::raw_elements`] (the writer's copy of a parsed array).
    #[cfg(feature = "write")]
    pub(crate) fn from_parsed(
        ctx: Ctx,
        element_type: ElementType,
        len: usize,
        elements: &'a [u8],
    ) -> Self {
        Array {
            ctx,
            element_type,
            len,
            depth: 0,
            ascii_prefixes: false,
            elements,
        }
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
    pub fn get(&self, index: usize) -> Option<Value<'a>> {
        if index >= self.len {
            return None;
        }
        let ty = self.element_type.known()?;
        match ty.fixed_size() {
            Some(size) => {
                let start = index.checked_mul(usize::try_from(size).ok()?)?;
                let (_, v) = element(self.ctx, ty, self.depth + 1, &self.elements[start..]).ok()?;
                Some(v)
            }
            None => self.iter().nth(index),
        }
    }
}

/// Iterator over an [`Array`]'s elements.
#[derive(Clone, Debug)]
pub struct ArrayIter<'a> {
    array: Array<'a>,
    rest: &'a [u8],
    left: usize,
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
        // The parse that built the array checked every element (and kept an unknown element
        // type only for an empty array), so this cannot fail.
        let (rest, value) = element(ctx, element_type.known()?, depth + 1, self.rest).ok()?;
        self.rest = rest;
        self.left -= 1;
        Some(value)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for ArrayIter<'_> {}

/// Parses a value type tag.
///
/// ```
/// use gguf_grammar::grammar::{value::value_type, Ctx};
/// use gguf_grammar::ValueType;
///
/// assert_eq!(value_type(Ctx::V3_LE)(b"\x08\0\0\0").unwrap().1, ValueType::String);
/// assert_eq!(value_type(Ctx::V3_LE)(b"\x08\0").unwrap_err().offset, 0);
/// ```
pub fn value_type(ctx: Ctx) -> impl Fn(&[u8]) -> PResult<'_, ValueType> {
    move |input| locate(input, parse_type(ctx, input))
}

/// [`value_type`] inside the grammar.
pub(crate) fn parse_type(ctx: Ctx, input: &[u8]) -> Parsed<'_, ValueType> {
    let (rest, tag) = ctx.u32(input, "value type")?;
    known_type(input, tag).map(|ty| (rest, ty))
}

/// The value type with tag `tag`, read at the start of `input`.
fn known_type(input: &[u8], tag: u32) -> Result<ValueType, nom::Err<Unlocated>> {
    ValueType::from_tag(tag)
        .ok_or_else(|| nom::Err::Error(Unlocated::at(input, ErrorKind::UnknownValueType { tag })))
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
    move |input| locate(input, parse_value(ctx, ty, input))
}

/// [`value`] inside the grammar.
pub(crate) fn parse_value(ctx: Ctx, ty: ValueType, input: &[u8]) -> Parsed<'_, Value<'_>> {
    element(ctx, ty, 0, input)
}

/// Parses an array (element type, length, elements) nested `depth` arrays deep.
pub fn array(ctx: Ctx, depth: u32) -> impl Fn(&[u8]) -> PResult<'_, Array<'_>> {
    move |input| locate(input, parse_array(ctx, depth, input))
}

/// What precedes an array's elements.
#[derive(Nom)]
#[nom(
    GenericErrors,
    ExtraArgs(ctx: Ctx),
    SetEndian(nom::number::Endianness::from(ctx.endian))
)]
struct ArrayHeader {
    #[nom(Complete)]
    element_type: u32,
    #[nom(Complete, Parse = "count(ctx)")]
    len: u64,
}

/// [`array`] inside the grammar.
fn parse_array(ctx: Ctx, depth: u32, input: &[u8]) -> Parsed<'_, Array<'_>> {
    if depth >= MAX_NESTING {
        return Err(nom::Err::Error(Unlocated::at(
            input,
            ErrorKind::NestingTooDeep { limit: MAX_NESTING },
        )));
    }
    let in_element_type = within(|| Segment::Field("element_type"));
    let fields = [("value type", 4), ("array length", ctx.count_width())];
    let (body, header) = record(input, &fields, ArrayHeader::parse(input, ctx)).map_err(|e| {
        let at_element_type = matches!(&e, nom::Err::Error(e) if e.remaining == input.len() as u64);
        if at_element_type {
            in_element_type(e)
        } else {
            e
        }
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
        nom::Err::Error(Unlocated::at(
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
) -> Result<(&[u8], bool), nom::Err<Unlocated>> {
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
fn element(ctx: Ctx, ty: ValueType, depth: u32, input: &[u8]) -> Parsed<'_, Value<'_>> {
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
    use crate::grammar::test_bytes::{all_ctx, Enc};

    fn parse_ok(ctx: Ctx, ty: ValueType, bytes: &[u8]) -> Value<'_> {
        let (rest, v) = value(ctx, ty)(bytes).unwrap();
        assert!(rest.is_empty(), "{ctx:?} {ty:?}: {} bytes left", rest.len());
        v
    }

    fn error(result: PResult<'_, impl std::fmt::Debug>, _input_len: usize) -> crate::Error {
        match result {
            Err(e) => e,
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
    fn a_short_array_header_names_its_field() {
        for ctx in all_ctx() {
            let bytes = Enc::new(ctx).u32(ValueType::U8.tag()).count(0).bytes;
            let width = ctx.count_width() as usize;
            // Cut inside the element type, then inside the length: each at its own offset.
            let e = error(array(ctx, 0)(&bytes[..3]), 3);
            assert_eq!((e.offset, e.path.to_string()), (0, ".element_type".into()));
            assert_eq!(
                e.kind,
                ErrorKind::Truncated {
                    construct: "value type",
                    needed: 1 + width as u64
                }
            );
            let e = error(array(ctx, 0)(&bytes[..5]), 5);
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
                let (_, array) = array(ctx, 0)(&bytes).unwrap();
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
            let (_, outer) = array(ctx, 0)(&nested.bytes).unwrap();
            assert!(!outer.ascii_prefixes());
            let flags: Vec<bool> = outer
                .iter()
                .map(|v| v.as_array().unwrap().ascii_prefixes())
                .collect();
            assert_eq!(flags, [false, true], "{ctx:?}");
            // Numbers, and an empty array of strings (no prefix at all).
            let numbers = Enc::new(ctx).u32(ValueType::U8.tag()).count(1).raw(&[0x41]);
            assert!(!array(ctx, 0)(&numbers.bytes).unwrap().1.ascii_prefixes());
            let empty = string_array(ctx, &[]).bytes;
            assert!(array(ctx, 0)(&empty).unwrap().1.ascii_prefixes());
        }
    }
}
