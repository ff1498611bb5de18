//! gguf-py-compatible JSON (`gguf dump --format gguf-py`): the document gguf-py 0.19.0's
//! `gguf-dump --json --json-array FILE` prints, built from our parse.
//!
//! ```text
//! {"filename": F, "endian": "LITTLE",
//!  "metadata": {"GGUF.version": {"index": 0, "type": "UINT32", "offset": 4, "value": 3},
//!               "GGUF.tensor_count": {...}, "GGUF.kv_count": {...},
//!               KEY: {"index": I, "type": "STRING", "offset": O, "value": V},
//!               KEY: {"index": I, "type": "ARRAY", "offset": O, "array_types": ["UINT32"], "value": [...]}},
//!  "tensors": {NAME: {"index": I, "shape": [ne0, ...], "type": "Q4_K", "offset": O}}}
//! ```
//!
//! As gguf-py builds it: the three header fields come first as pseudo key/values; each
//! `offset` is where the key/value or tensor info starts in the file (not the tensor data);
//! type names are gguf-py's enum names; `array_types` follows the *first* element of each
//! nested array, and an array's value is the flat list of every leaf, as `ReaderField.contents()`
//! returns it (the strings of a string array; the numbers otherwise, where a string leaf
//! contributes its bytes). A float32 prints as the float64 it widens to, NaN and infinities as
//! Python's `NaN`, `Infinity` and `-Infinity`.
//!
//! gguf-dump fails on a string it cannot decode as UTF-8 (and gguf-py's reader on such a key
//! or tensor name); so does [`write()`], with [`io::ErrorKind::InvalidData`], before writing
//! anything unusable: render into a buffer and print it only on success.

use std::io::{self, Write};

use super::chunk::{self, Chunk, NUMBER_MAX};
use super::json::{integer, string};
use super::json_str::str_value;
use gguf_grammar::grammar::string::GgufStr;
use gguf_grammar::grammar::value::{Array, Value, ValueType};
use gguf_grammar::grammar::Endian;
use gguf_grammar::Gguf;

/// Writes the gguf-py JSON document for `gguf`; `filename` is printed as `gguf-dump` prints
/// the path it was given.
///
/// ```
/// let bytes = std::fs::read("../../tests/conformance/cases/kv-only.gguf").unwrap();
/// let gguf = gguf_grammar::Gguf::parse(&bytes).unwrap();
/// let mut out = Vec::new();
/// gguf_tools::render::gguf_py::write(&gguf, "kv-only.gguf", &mut out).unwrap();
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.contains(r#""GGUF.version": {"index": 0, "type": "UINT32", "offset": 4, "value": 3}"#));
/// assert!(text.contains(r#""test.answer": {"index": 5, "type": "UINT32", "offset": 108, "value": 42}"#));
/// ```
pub fn write(gguf: &Gguf<'_>, filename: &str, out: &mut impl Write) -> io::Result<()> {
    let mut chunk = Chunk::new(out);
    document(gguf, filename, &mut chunk)?;
    chunk.finish()
}

fn document<W: Write>(gguf: &Gguf<'_>, filename: &str, out: &mut Chunk<'_, W>) -> io::Result<()> {
    out.write_all(b"{\"filename\": ")?;
    string(GgufStr(filename.as_bytes()), out)?;
    let endian = match gguf.endian() {
        Endian::Little => "LITTLE",
        Endian::Big => "BIG",
    };
    write!(out, ", \"endian\": \"{endian}\", \"metadata\": {{")?;
    let width = gguf.header.ctx.count_width();
    let header = [
        (
            "GGUF.version",
            "UINT32",
            4,
            u64::from(gguf.version().number()),
        ),
        ("GGUF.tensor_count", "UINT64", 8, gguf.header.tensor_count),
        ("GGUF.kv_count", "UINT64", 8 + width, gguf.header.kv_count),
    ];
    for (index, (name, ty, offset, value)) in header.into_iter().enumerate() {
        let comma = if index == 0 { "" } else { ", " };
        write!(
            out,
            "{comma}\"{name}\": {{\"index\": {index}, \"type\": \"{ty}\", \"offset\": {offset}, \"value\": {value}}}"
        )?;
    }
    for (i, kv) in gguf.kvs.iter().enumerate() {
        out.write_all(b", ")?;
        utf8_string(kv.key, out)?;
        write!(
            out,
            ": {{\"index\": {}, \"type\": \"{}\", \"offset\": {}",
            i + header.len(),
            type_name(kv.value.value_type()),
            gguf.offset_of(kv.raw).unwrap_or(0)
        )?;
        match kv.value {
            Value::Array(array) => {
                out.write_all(b", \"array_types\": [")?;
                for (t, ty) in type_chain(array).iter().enumerate() {
                    let comma = if t == 0 { "" } else { ", " };
                    write!(out, "{comma}\"{}\"", type_name(*ty))?;
                }
                out.write_all(b"], \"value\": [")?;
                let strings = type_chain(array).last() == Some(&ValueType::String);
                leaves(array, strings, &mut true, out)?;
                out.write_all(b"]}")?;
            }
            scalar => {
                out.write_all(b", \"value\": ")?;
                leaf(
                    scalar,
                    scalar.value_type() == ValueType::String,
                    &mut true,
                    out,
                )?;
                out.write_all(b"}")?;
            }
        }
    }
    out.write_all(b"}, \"tensors\": {")?;
    for (i, tensor) in gguf.tensors.iter().enumerate() {
        let info = &tensor.info;
        if i > 0 {
            out.write_all(b", ")?;
        }
        utf8_string(info.name, out)?;
        write!(out, ": {{\"index\": {i}, \"shape\": [")?;
        for (d, dim) in info.dims.iter().enumerate() {
            write!(out, "{}{dim}", if d == 0 { "" } else { ", " })?;
        }
        let ty = info.ggml_type;
        let name = ty
            .name()
            .map_or_else(|| ty.0.to_string(), str::to_ascii_uppercase);
        write!(
            out,
            "], \"type\": \"{name}\", \"offset\": {}}}",
            gguf.offset_of(info.raw).unwrap_or(0)
        )?;
    }
    out.write_all(b"}}\n")
}

/// gguf-py's `GGUFValueType` name: `UINT8`, ..., `STRING`, `ARRAY`, `FLOAT64`.
fn type_name(ty: ValueType) -> String {
    ty.name().to_ascii_uppercase()
}

/// gguf-py's `field.types[1:]`: the element type, then, while that is an array, its first
/// element's type, and so on (an empty array adds nothing).
fn type_chain(array: Array<'_>) -> Vec<ValueType> {
    let mut chain = Vec::new();
    let mut current = array;
    while let Some(first) = current.iter().next() {
        chain.push(first.value_type());
        match first {
            Value::Array(inner) => current = inner,
            _ => break,
        }
    }
    chain
}

/// Every leaf of `array`, nested arrays flattened, comma-separated.
fn leaves<W: Write>(
    array: Array<'_>,
    strings: bool,
    first: &mut bool,
    out: &mut Chunk<'_, W>,
) -> io::Result<()> {
    if let (true, Some(strs)) = (strings, array.strs()) {
        // Checked as UTF-8 a run at a time, so most strings skip `utf8_string`'s own check.
        let mut is_first = *first; // a local the loop keeps in a register
        for s in strs {
            match s {
                Ok(text) => out.str_element(text, &mut is_first)?,
                Err(e) => return Err(not_utf8(e.bytes(array), e.valid_up_to)),
            }
        }
        *first = is_first;
        return Ok(());
    }
    if !strings && chunk::numbers::<Python, _>(array, first, out)? {
        return Ok(());
    }
    super::each_element(array, |element| match element {
        Value::Array(inner) => leaves(inner, strings, first, out),
        scalar => leaf(scalar, strings, first, out),
    })
}

/// One leaf as `contents()` gives it: decoded as a string when the field's innermost type is
/// a string, else as a number (a string leaf then contributes each of its bytes).
fn leaf(value: Value<'_>, strings: bool, first: &mut bool, out: &mut impl Write) -> io::Result<()> {
    let mut sep = |out: &mut dyn Write| -> io::Result<()> {
        if !std::mem::take(first) {
            out.write_all(b", ")?;
        }
        Ok(())
    };
    match value {
        Value::String(s) if strings => {
            sep(out)?;
            utf8_string(s, out)
        }
        Value::String(s) => {
            for &byte in s.as_bytes() {
                sep(out)?;
                integer(byte, out)?;
            }
            Ok(())
        }
        _ if strings => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "a nested array mixes strings and numbers: gguf-py would decode a number's bytes as text",
        )),
        Value::Array(_) => Ok(()), // flattened by `leaves`
        scalar => {
            sep(out)?;
            let mut text = [0; NUMBER_MAX];
            let len = number(scalar, &mut text);
            out.write_all(&text[..len])
        }
    }
}

/// A number or bool as Python's `json.dumps` prints it, at the start of `dst` (nothing for a
/// string or array); returns the length.
fn number(value: Value<'_>, dst: &mut [u8; NUMBER_MAX]) -> usize {
    chunk::scalar::<Python>(value, dst)
}

/// Python's `json.dumps` of a float (a float32 widened to float64): the shortest round-trip
/// form, `NaN`, `Infinity`, `-Infinity`.
struct Python;

impl chunk::Floats for Python {
    #[inline(always)]
    fn f32(v: f32, dst: &mut [u8; NUMBER_MAX]) -> usize {
        Self::f64(v.into(), dst)
    }

    #[inline(always)]
    fn f64(v: f64, dst: &mut [u8; NUMBER_MAX]) -> usize {
        match v {
            v if v.is_nan() => chunk::literal(b"NaN", dst),
            f64::INFINITY => chunk::literal(b"Infinity", dst),
            f64::NEG_INFINITY => chunk::literal(b"-Infinity", dst),
            v => super::float::format(v, dst),
        }
    }
}

/// A JSON string, or the error gguf-py raises for bytes that are not UTF-8.
fn utf8_string(s: GgufStr<'_>, out: &mut impl Write) -> io::Result<()> {
    match simdutf8::compat::from_utf8(s.as_bytes()) {
        Ok(text) => str_value(text, out),
        Err(e) => Err(not_utf8(s, e.valid_up_to())),
    }
}

/// The error gguf-py raises for bytes that are not UTF-8.
fn not_utf8(s: GgufStr<'_>, valid_up_to: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "\"{}\" is not UTF-8 (at byte {valid_up_to}): gguf-py cannot decode it",
            gguf_grammar::escape::terminal(s.as_bytes())
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(path: &str) -> io::Result<serde_json::Value> {
        let bytes = std::fs::read(std::path::Path::new("../..").join(path)).unwrap();
        let gguf = Gguf::parse(&bytes).unwrap();
        let mut out = Vec::new();
        write(&gguf, path, &mut out)?;
        Ok(serde_json::from_slice(&out).unwrap())
    }

    #[test]
    fn nested_arrays_flatten_as_gguf_py_does() {
        // gguf-dump prints [[1,2],[3,4,5]] as array_types ["ARRAY", "UINT32"], value [1..5]
        let doc = render("tests/conformance/cases/array-nested.gguf").unwrap();
        let field = &doc["metadata"]["test.array.nested"];
        assert_eq!(field["array_types"], serde_json::json!(["ARRAY", "UINT32"]));
        assert_eq!(field["value"], serde_json::json!([1, 2, 3, 4, 5]));
    }

    #[test]
    fn strings_gguf_py_cannot_decode_are_errors() {
        let err = render("tests/conformance/cases/string-invalid-utf8.gguf").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("not UTF-8"), "{err}");
    }

    #[test]
    fn floats_print_as_python_prints_the_widened_value() {
        let mut out = Vec::new();
        for v in [f64::from(0.1f32), f64::NAN, f64::NEG_INFINITY] {
            let mut text = [0; NUMBER_MAX];
            let len = <Python as chunk::Floats>::f64(v, &mut text);
            out.extend_from_slice(&text[..len]);
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "0.10000000149011612NaN-Infinity"
        );
    }
}
