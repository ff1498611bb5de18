//! Renderings of a parsed [`gguf_grammar::Gguf`]: a human-readable dump, a one-screen model summary,
//! the native JSON and gguf-py's JSON, the annotated byte map.

mod chunk;
mod copy;
pub mod diff;
mod float;
pub mod gguf_py;
pub mod json;
mod json_str;
pub mod map;
pub mod summary;
pub mod text;

use gguf_grammar::grammar::value::{Array, Value, ValueType};

/// Calls `each` on every element of `array` in order: numbers, bools and strings through the
/// bulk readers of [`gguf_grammar::elements`], nested arrays through [`Array::iter`].
fn each_element<'a>(
    array: Array<'a>,
    mut each: impl FnMut(Value<'a>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    macro_rules! numbers {
        ($t:ty, $variant:ident) => {
            array
                .numbers::<$t>()
                .into_iter()
                .flatten()
                .try_for_each(|v| each(Value::$variant(v)))
        };
    }
    let Some(element_type) = array.element_type().known() else {
        return Ok(()); // an unknown element type: the array is empty
    };
    match element_type {
        ValueType::U8 => numbers!(u8, U8),
        ValueType::I8 => numbers!(i8, I8),
        ValueType::U16 => numbers!(u16, U16),
        ValueType::I16 => numbers!(i16, I16),
        ValueType::U32 => numbers!(u32, U32),
        ValueType::I32 => numbers!(i32, I32),
        ValueType::U64 => numbers!(u64, U64),
        ValueType::I64 => numbers!(i64, I64),
        ValueType::F32 => numbers!(f32, F32),
        ValueType::F64 => numbers!(f64, F64),
        ValueType::Bool => array
            .raw_elements()
            .iter()
            .try_for_each(|&b| each(Value::Bool(b))),
        ValueType::String => array
            .strings()
            .into_iter()
            .flatten()
            .try_for_each(|s| each(Value::String(s))),
        ValueType::Array => array.iter().try_for_each(each),
    }
}

/// Displays a figure that may be missing (an overflowing offset, a size ggml does not
/// define) as the figure or as a placeholder.
struct OrElse(Option<u64>, &'static str);

impl std::fmt::Display for OrElse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(n) => write!(f, "{n}"),
            None => f.write_str(self.1),
        }
    }
}
