//! The native JSON rendering (`gguf dump --json`): every key/value in file order with full
//! array values, and every tensor descriptor.
//!
//! ```text
//! {"version": 3, "endian": "little", "alignment": 32, "tensor_data_offset": N, "file_size": N,
//!  "metadata": [{"key": K, "type": "uint32", "value": 42},
//!               {"key": K, "type": "array", "element_type": "string", "len": 2, "value": ["a", "b"]},
//!               {"key": K, "type": "array", "element_type": "array", "len": 1,
//!                "value": [{"element_type": "uint8", "len": 1, "value": [7]}]}],
//!  "tensors": [{"name": N, "dims": [ne0, ...], "type": "q4_K", "type_id": 12,
//!               "offset": REL, "data_offset": ABS, "n_bytes": N}]}
//! ```
//!
//! Type names are the specification's (`uint8` ... `float64`). Floats print in their shortest
//! round-trip form; NaN and infinities, which JSON lacks, print as the strings `"nan"`,
//! `"inf"`, `"-inf"`. A string that is not UTF-8 prints as `{"bytes_hex": "..."}`. A tensor
//! type id ggml never defined prints as `null`, as do a `data_offset` or `n_bytes` that cannot
//! be computed.

use std::io::{self, Write};

use super::chunk::{self, Chunk, NUMBER_MAX};
use super::json_str::str_value;
use super::OrElse;
use gguf_grammar::grammar::string::GgufStr;
use gguf_grammar::grammar::value::{Array, Value};
use gguf_grammar::Gguf;

/// Writes the native JSON document for `gguf`; `file_size` is the length of the whole file.
///
/// ```
/// let bytes = std::fs::read("../../tests/conformance/cases/kv-only.gguf").unwrap();
/// let gguf = gguf_grammar::Gguf::parse(&bytes).unwrap();
/// let mut out = Vec::new();
/// gguf_tools::render::json::write(&gguf, bytes.len() as u64, &mut out).unwrap();
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.contains(r#"{"key": "test.answer", "type": "uint32", "value": 42}"#));
/// ```
pub fn write(gguf: &Gguf<'_>, file_size: u64, out: &mut impl Write) -> io::Result<()> {
    let mut chunk = Chunk::new(out);
    document(gguf, file_size, &mut chunk)?;
    chunk.finish()
}

fn document<W: Write>(gguf: &Gguf<'_>, file_size: u64, out: &mut Chunk<'_, W>) -> io::Result<()> {
    write!(
        out,
        "{{\"version\": {}, \"endian\": \"{}\", \"alignment\": {}, \"tensor_data_offset\": {}, \"file_size\": {},\n \"metadata\": [",
        gguf.version().number(),
        gguf.endian().name(),
        gguf.alignment,
        gguf.tensor_data_offset,
        file_size
    )?;
    for (i, pair) in gguf.kvs.iter().enumerate() {
        out.write_all(if i == 0 { b"\n  " } else { b",\n  " })?;
        out.write_all(b"{\"key\": ")?;
        string(pair.key, out)?;
        write!(out, ", \"type\": \"{}\", ", pair.value.value_type())?;
        match pair.value {
            Value::Array(array) => array_fields(array, out)?,
            scalar => {
                out.write_all(b"\"value\": ")?;
                value(scalar, out)?;
            }
        }
        out.write_all(b"}")?;
    }
    out.write_all(b"],\n \"tensors\": [")?;
    for (i, tensor) in gguf.tensors.iter().enumerate() {
        let info = &tensor.info;
        out.write_all(if i == 0 { b"\n  " } else { b",\n  " })?;
        out.write_all(b"{\"name\": ")?;
        string(info.name, out)?;
        out.write_all(b", \"dims\": [")?;
        for (d, dim) in info.dims.iter().enumerate() {
            write!(out, "{}{dim}", if d == 0 { "" } else { ", " })?;
        }
        out.write_all(b"], \"type\": ")?;
        match info.ggml_type.name() {
            Some(name) => write!(out, "\"{name}\"")?,
            None => out.write_all(b"null")?,
        }
        write!(
            out,
            ", \"type_id\": {}, \"offset\": {}, \"data_offset\": {}, \"n_bytes\": {}}}",
            info.ggml_type.0,
            info.offset,
            OrElse(tensor.data_offset, "null"),
            OrElse(tensor.n_bytes, "null")
        )?;
    }
    out.write_all(b"]}\n")
}

/// `"element_type": T, "len": N, "value": [...]`
fn array_fields<W: Write>(array: Array<'_>, out: &mut Chunk<'_, W>) -> io::Result<()> {
    write!(
        out,
        "\"element_type\": \"{}\", \"len\": {}, \"value\": [",
        array.element_type(),
        array.len()
    )?;
    let mut first = true;
    if let Some(strs) = array.strs() {
        // Checked as UTF-8 a run at a time, so most strings skip `string`'s own check.
        strs.try_each(|s| match s {
            Ok(text) => out.str_element(text, &mut first),
            Err(e) => {
                out.write_all(chunk::separator(&mut first))?;
                string(e.bytes(array), out)
            }
        })?;
    } else if !chunk::numbers::<Native, _>(array, &mut first, out)? {
        super::each_element(array, |element| {
            out.write_all(chunk::separator(&mut first))?;
            value(element, out)
        })?;
    }
    out.write_all(b"]")
}

fn value<W: Write>(value: Value<'_>, out: &mut Chunk<'_, W>) -> io::Result<()> {
    match value {
        Value::String(s) => string(s, out),
        Value::Array(array) => {
            out.write_all(b"{")?;
            array_fields(array, out)?;
            out.write_all(b"}")
        }
        scalar => {
            let mut text = [0; NUMBER_MAX];
            let len = number(scalar, &mut text);
            out.write_all(&text[..len])
        }
    }
}

/// A number or bool at the start of `dst` (nothing for a string or array); returns the
/// length.
fn number(value: Value<'_>, dst: &mut [u8; NUMBER_MAX]) -> usize {
    chunk::scalar::<Native>(value, dst)
}

/// Floats in their shortest round-trip form; non-finite ones, which JSON lacks, as the
/// strings `"nan"`, `"inf"`, `"-inf"`.
struct Native;

impl chunk::Floats for Native {
    #[inline(always)]
    fn f32(v: f32, dst: &mut [u8; NUMBER_MAX]) -> usize {
        if v.is_finite() {
            super::float::format(v, dst)
        } else {
            chunk::literal(non_finite(v.into()), dst)
        }
    }

    #[inline(always)]
    fn f64(v: f64, dst: &mut [u8; NUMBER_MAX]) -> usize {
        if v.is_finite() {
            super::float::format(v, dst)
        } else {
            chunk::literal(non_finite(v), dst)
        }
    }
}

/// An integer in decimal, as `Display` prints it.
pub(super) fn integer<I: itoa::Integer + TryInto<u8>>(
    v: I,
    out: &mut impl Write,
) -> io::Result<()> {
    let mut text = [0; NUMBER_MAX];
    let len = chunk::integer(v, &mut text);
    out.write_all(&text[..len])
}

fn non_finite(v: f64) -> &'static [u8] {
    match v {
        f64::INFINITY => b"\"inf\"",
        f64::NEG_INFINITY => b"\"-inf\"",
        _ => b"\"nan\"",
    }
}

/// A JSON string, or `{"bytes_hex": ...}` for bytes that are not UTF-8.
pub fn string(s: GgufStr<'_>, out: &mut impl Write) -> io::Result<()> {
    let Ok(text) = simdutf8::basic::from_utf8(s.as_bytes()) else {
        out.write_all(b"{\"bytes_hex\": \"")?;
        for byte in s.as_bytes() {
            write!(out, "{byte:02x}")?;
        }
        return out.write_all(b"\"}");
    };
    str_value(text, out)
}

/// `value` as serde_json writes it (indented as `{:#}` prints it when `pretty`), with its
/// strings escaped by [`gguf_grammar::escape::json_str`]: how the CLI prints a `serde_json::Value`.
///
/// ```
/// let mut out = Vec::new();
/// let value = serde_json::json!({"name": ["a\u{202e}b\u{85}\n", 1]});
/// gguf_tools::render::json::write_value(&value, false, &mut out).unwrap();
/// assert_eq!(String::from_utf8(out).unwrap(), r#"{"name":["a\u202eb\u0085\n",1]}"#);
/// ```
pub fn write_value(
    value: &serde_json::Value,
    pretty: bool,
    out: &mut impl Write,
) -> io::Result<()> {
    use serde::Serialize;
    use serde_json::ser::{CompactFormatter, PrettyFormatter, Serializer};
    let written = match pretty {
        true => value.serialize(&mut Serializer::with_formatter(
            out,
            Escaping(PrettyFormatter::new()),
        )),
        false => value.serialize(&mut Serializer::with_formatter(
            out,
            Escaping(CompactFormatter),
        )),
    };
    written.map_err(io::Error::from)
}

/// A serde_json formatter `F` whose strings [`gguf_grammar::escape::json_str`] escapes
/// beyond serde_json's own escapes (which leave C1, bidi controls and separators raw).
struct Escaping<F>(F);

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for Escaping<F> {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        text: &str,
    ) -> io::Result<()> {
        w.write_all(gguf_grammar::escape::json_str(text).as_bytes())
    }
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Accepts `left` bytes, then fails every write.
    struct FailsAfter {
        left: usize,
    }

    impl Write for FailsAfter {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            if self.left == 0 {
                return Err(io::Error::new(io::ErrorKind::BrokenPipe, "full"));
            }
            let n = bytes.len().min(self.left);
            self.left -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_write_error_inside_a_string_array_is_returned() {
        use gguf_grammar::grammar::{value::ValueType, Ctx};
        use gguf_grammar::write::{GgufBuilder, OwnedValue};
        // Valid and invalid strings, several chunks of output in all.
        let strings = (0..30_000u32).map(|i| match i % 1_000 {
            7 => OwnedValue::string(b"\xff".to_vec()),
            _ => OwnedValue::string(format!("t{i}\"q")),
        });
        let bytes = GgufBuilder::new(Ctx::V3_LE)
            .kv("tokens", OwnedValue::array(ValueType::String, strings))
            .build()
            .unwrap();
        let gguf = Gguf::parse(&bytes).unwrap();
        let mut whole = Vec::new();
        write(&gguf, bytes.len() as u64, &mut whole).unwrap();
        for left in [0, 100, 70_000, 200_000, whole.len() - 1] {
            let e = write(&gguf, bytes.len() as u64, &mut FailsAfter { left }).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::BrokenPipe, "{left}");
        }
        write(
            &gguf,
            bytes.len() as u64,
            &mut FailsAfter { left: whole.len() },
        )
        .unwrap();
    }

    fn json_string(bytes: &[u8]) -> String {
        let mut out = Vec::new();
        string(GgufStr(bytes), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_escape_and_round_trip_through_a_json_parser() {
        for text in ["plain", "q\"b\\s", "\n\t\r\u{0}\u{1f}\u{7f}", "é€😀", ""] {
            let json = json_string(text.as_bytes());
            assert_eq!(serde_json::from_str::<String>(&json).unwrap(), text);
        }
        assert_eq!(json_string(b"\xc3\x28"), r#"{"bytes_hex": "c328"}"#);
    }

    #[test]
    fn integers_print_as_display_prints_them() {
        fn check<I: itoa::Integer + TryInto<u8> + std::fmt::Display + Copy>(values: &[I]) {
            for &v in values {
                let mut out = Vec::new();
                integer(v, &mut out).unwrap();
                assert_eq!(String::from_utf8(out).unwrap(), v.to_string());
            }
        }
        check(&[0u8, 9, 10, 255]);
        check(&[i8::MIN, -1, 0, 9, 10, i8::MAX]);
        check(&[0u32, 1, 9, 10, 256, 265, u32::MAX]);
        check(&[i32::MIN, -10, -9, -1, 0, 5, 9, 10, 261, i32::MAX]);
        check(&[u64::MAX, 9, 10, 1 << 40]);
        check(&[i64::MIN, -1, 0, 9, i64::MAX]);
    }

    #[test]
    fn floats_are_shortest_round_trip_and_non_finite_are_strings() {
        let render = |v: Value<'_>| {
            let mut out = Vec::new();
            let mut chunk = Chunk::new(&mut out);
            value(v, &mut chunk).unwrap();
            chunk.finish().unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(render(Value::F32(0.1)), "0.1");
        assert_eq!(render(Value::F32(f32::MIN_POSITIVE / 8.0)), "1.469368e-39");
        assert_eq!(render(Value::F64(-0.0)), "-0.0");
        assert_eq!(render(Value::F32(f32::NAN)), "\"nan\"");
        assert_eq!(render(Value::F64(f64::NEG_INFINITY)), "\"-inf\"");
        assert_eq!(render(Value::Bool(2)), "true");
    }
}
