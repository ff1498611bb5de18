//! The values a writer owns ([`OwnedValue`], arrays in either form) and their writer.

use super::{Encoder, WriteError};
use crate::grammar::value::model::{value_enum, with_fixed_size_variants};
use crate::grammar::value::{ElementType, MAX_NESTING};
use crate::grammar::Ctx;
use crate::{Array, Value};

with_fixed_size_variants!(value_enum! {
    /// A metadata value you create or edit: owns its strings and array elements.
    ///
    /// The parser's [`Value`] borrows from the file; `OwnedValue::from(value)` copies one.
    /// Conversions exist from every scalar Rust type, `bool`, `&str` and `String`.
    ///
    /// ```
    /// use gguf_grammar::write::OwnedValue;
    /// use gguf_grammar::ValueType;
    ///
    /// assert_eq!(OwnedValue::from(7u32), OwnedValue::U32(7));
    /// assert_eq!(OwnedValue::from(true), OwnedValue::Bool(1));
    /// assert_eq!(OwnedValue::from("hi"), OwnedValue::String(b"hi".to_vec()));
    /// let scores = OwnedValue::array(ValueType::F32, [0.5f32, -1.0]);
    /// assert_eq!(scores.value_type(), ValueType::Array);
    /// ```
    #[derive(Clone, Debug, PartialEq)]
    pub enum OwnedValue {
        /// string: the bytes written (conventionally UTF-8)
        String(Vec<u8>) => String,
        /// array
        Array(OwnedArray) => Array,
        /// an array kept as a parsed file's element bytes (what [`GgufBuilder::from_gguf`](super::GgufBuilder::from_gguf) keeps)
        RawArray(RawArray) => Array,
    }
});

/// An owned array: the element type written in the file and the elements.
///
/// Elements are written as they are: an element whose type is not `element_type` gives a
/// file that says one type and stores another (which is how tests build such files).
#[derive(Clone, Debug, PartialEq)]
pub struct OwnedArray {
    /// The element type tag written.
    pub element_type: ElementType,
    /// The elements.
    pub elements: Vec<OwnedValue>,
}

/// An array copied from a parsed file as its element bytes, not as one [`OwnedValue`] per
/// element: a 10 MB array costs 10 MB, not 32 bytes per element. It is written as the same
/// bytes when the output has the source's version and byte order, and re-encoded element by
/// element otherwise.
///
/// ```
/// use gguf_grammar::write::{GgufBuilder, OwnedValue, RawArray};
/// use gguf_grammar::{Ctx, Endian, Gguf, Value};
///
/// let bytes = GgufBuilder::new(Ctx::V3_LE).kv("ids", OwnedValue::array(gguf_grammar::ValueType::U16, [1u16, 2])).build().unwrap();
/// let gguf = Gguf::parse(&bytes).unwrap();
/// let raw = RawArray::new(gguf.get("ids").unwrap().as_array().unwrap());
/// assert_eq!(raw.array().iter().collect::<Vec<_>>(), [Value::U16(1), Value::U16(2)]);
/// let big = GgufBuilder::new(Ctx { endian: Endian::Big, ..Ctx::V3_LE })
///     .kv("ids", OwnedValue::RawArray(raw))
///     .build()
///     .unwrap();
/// let ids = Gguf::parse(&big).unwrap().get_array("ids").unwrap();
/// assert_eq!(ids.iter().collect::<Vec<_>>(), [Value::U16(1), Value::U16(2)]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RawArray {
    ctx: Ctx,
    element_type: ElementType,
    len: usize,
    elements: Vec<u8>,
}

impl RawArray {
    /// A copy of `array`'s element bytes.
    pub fn new(array: Array<'_>) -> Self {
        RawArray {
            ctx: array.ctx(),
            element_type: array.element_type(),
            len: array.len(),
            elements: array.raw_elements().to_vec(),
        }
    }

    /// The array, to decode its elements.
    pub fn array(&self) -> Array<'_> {
        Array::from_parsed(self.ctx, self.element_type, self.len, &self.elements)
    }
}

impl OwnedValue {
    /// An array of `element_type` holding `elements`.
    ///
    /// ```
    /// use gguf_grammar::write::OwnedValue;
    /// use gguf_grammar::ValueType;
    ///
    /// let empty = OwnedValue::array(ValueType::String, Vec::<OwnedValue>::new());
    /// let nested = OwnedValue::array(ValueType::Array, [
    ///     OwnedValue::array(ValueType::U8, [1u8, 2]),
    ///     OwnedValue::array(ValueType::U8, [3u8]),
    /// ]);
    /// # let _ = (empty, nested);
    /// ```
    pub fn array<T: Into<OwnedValue>>(
        element_type: impl Into<ElementType>,
        elements: impl IntoIterator<Item = T>,
    ) -> Self {
        OwnedValue::Array(OwnedArray {
            element_type: element_type.into(),
            elements: elements.into_iter().map(Into::into).collect(),
        })
    }

    /// A string from any bytes (not necessarily UTF-8).
    pub fn string(bytes: impl Into<Vec<u8>>) -> Self {
        OwnedValue::String(bytes.into())
    }
}

/// `From<Value>`: the fixed-size variants copied one to one, from the shared list.
macro_rules! owned_from_value {
    ($($(#[$doc:meta])* $fixed:ident($payload:ty),)*) => {
        impl From<Value<'_>> for OwnedValue {
            fn from(value: Value<'_>) -> Self {
                match value {
                    $(Value::$fixed(v) => OwnedValue::$fixed(v),)*
                    Value::String(s) => OwnedValue::String(s.as_bytes().to_vec()),
                    // The parse checked every element is present: the allocation is bounded
                    // by the input's length.
                    Value::Array(a) => OwnedValue::array(a.element_type(), a.iter()),
                }
            }
        }
    };
}

with_fixed_size_variants!(owned_from_value! {});

macro_rules! owned_from {
    ($($ty:ty => $variant:ident),* $(,)?) => {$(
        impl From<$ty> for OwnedValue {
            fn from(v: $ty) -> Self {
                OwnedValue::$variant(v)
            }
        }
    )*};
}

owned_from!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, f32 => F32,
    u64 => U64, i64 => I64, f64 => F64, OwnedArray => Array);

impl From<bool> for OwnedValue {
    fn from(v: bool) -> Self {
        OwnedValue::Bool(u8::from(v))
    }
}

impl From<&str> for OwnedValue {
    fn from(v: &str) -> Self {
        OwnedValue::String(v.as_bytes().to_vec())
    }
}

impl From<String> for OwnedValue {
    fn from(v: String) -> Self {
        OwnedValue::String(v.into_bytes())
    }
}

impl Encoder {
    /// A value without its type tag; `depth` is the nesting of arrays around it.
    pub(super) fn value(&mut self, value: &OwnedValue, depth: u32) -> Result<(), WriteError> {
        match value {
            OwnedValue::U8(v) | OwnedValue::Bool(v) => self.out.push(*v),
            OwnedValue::I8(v) => self.put(*v),
            OwnedValue::U16(v) => self.put(*v),
            OwnedValue::I16(v) => self.put(*v),
            OwnedValue::U32(v) => self.put(*v),
            OwnedValue::I32(v) => self.put(*v),
            OwnedValue::F32(v) => self.put(*v),
            OwnedValue::U64(v) => self.put(*v),
            OwnedValue::I64(v) => self.put(*v),
            OwnedValue::F64(v) => self.put(*v),
            OwnedValue::String(s) => self.string(s)?,
            OwnedValue::Array(array) => {
                if depth >= MAX_NESTING {
                    return Err(WriteError::NestingTooDeep { limit: MAX_NESTING });
                }
                self.put(array.element_type.tag());
                self.count(array.elements.len() as u64, "array length")?;
                for element in &array.elements {
                    self.value(element, depth + 1)?;
                }
            }
            OwnedValue::RawArray(raw) => {
                if depth >= MAX_NESTING {
                    return Err(WriteError::NestingTooDeep { limit: MAX_NESTING });
                }
                self.put(raw.element_type.tag());
                self.count(raw.len as u64, "array length")?;
                if raw.ctx == self.ctx {
                    self.out.extend_from_slice(&raw.elements);
                } else {
                    for element in raw.array().iter() {
                        let element = match element {
                            Value::Array(inner) => OwnedValue::RawArray(RawArray::new(inner)),
                            scalar => scalar.into(),
                        };
                        self.value(&element, depth + 1)?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::test_bytes::all_ctx;
    use crate::grammar::value;
    use crate::write::tests::encoder;
    use crate::ValueType;

    #[test]
    fn every_value_type_round_trips() {
        let nested = OwnedValue::Array(OwnedArray {
            element_type: ValueType::Array.into(),
            elements: vec![OwnedValue::Array(OwnedArray {
                element_type: ValueType::String.into(),
                elements: vec![OwnedValue::String(b"x".to_vec())],
            })],
        });
        let values = [
            OwnedValue::U8(0xfe),
            OwnedValue::I8(-2),
            OwnedValue::U16(0x1234),
            OwnedValue::I16(-2),
            OwnedValue::U32(0x0102_0304),
            OwnedValue::I32(-3),
            OwnedValue::F32(1.5),
            OwnedValue::Bool(2),
            OwnedValue::String(b"llama".to_vec()),
            nested,
            OwnedValue::U64(1 << 40),
            OwnedValue::I64(-1),
            OwnedValue::F64(-2.5),
        ];
        for ctx in all_ctx() {
            for original in &values {
                let mut enc = encoder(ctx);
                enc.value(original, 0).unwrap();
                let ty = original.value_type();
                let (rest, parsed) = value::value(ctx, ty)(&enc.out).unwrap();
                assert!(rest.is_empty(), "{ctx:?} {ty:?}");
                assert_eq!(&OwnedValue::from(parsed), original, "{ctx:?}");
            }
        }
    }
}
