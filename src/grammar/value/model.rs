//! The value data model: the thirteen value types and the decoded values, borrowed from the
//! input; arrays decode their elements lazily, with the grammar of [`super`].

use super::element;
use crate::grammar::string::GgufStr;
use crate::grammar::Ctx;

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
    pub(super) fn min_size(self, ctx: Ctx) -> u64 {
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
/// let (_, arr) = array(Ctx::V3_LE)(bytes).unwrap();
/// assert_eq!(arr.len(), 2);
/// assert_eq!(arr.iter().collect::<Vec<_>>(), [Value::U32(7), Value::U32(9)]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Array<'a> {
    pub(super) ctx: Ctx,
    pub(super) element_type: ElementType,
    pub(super) len: usize,
    pub(super) depth: u32,
    /// A string array whose every length prefix has only bytes < 0x80, as found by the parse
    /// (see [`Array::ascii_prefixes`]).
    pub(super) ascii_prefixes: bool,
    pub(super) elements: &'a [u8],
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
