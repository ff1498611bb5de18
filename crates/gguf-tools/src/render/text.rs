//! The human-readable dump (`gguf dump`), in the spirit of gguf-py's `gguf-dump`: the
//! header, every key/value (long arrays abbreviated) and every tensor.

use std::io::{self, Write};

use super::OrElse;
use gguf_grammar::escape::Terminal;
use gguf_grammar::grammar::value::Value;
use gguf_grammar::Gguf;

/// Arrays longer than this show their first elements and a count of the rest.
pub const ARRAY_PREVIEW: usize = 8;

/// Writes the dump of `gguf`; `file_size` is the length of the whole file.
///
/// ```
/// let bytes = std::fs::read("../../tests/conformance/cases/kv-only.gguf").unwrap();
/// let gguf = gguf_grammar::Gguf::parse(&bytes).unwrap();
/// let mut out = Vec::new();
/// gguf_tools::render::text::write(&gguf, bytes.len() as u64, &mut out).unwrap();
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.contains("test.answer = 42"), "{text}");
/// ```
pub fn write(gguf: &Gguf<'_>, file_size: u64, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "GGUF v{}, {} endian, {} bytes; alignment {}, tensor data at {}",
        gguf.version().number(),
        gguf.endian().name(),
        file_size,
        gguf.alignment,
        gguf.tensor_data_offset
    )?;
    writeln!(out, "{} key/value pairs:", gguf.kvs.len())?;
    let width = gguf.kvs.len().to_string().len();
    for (i, pair) in gguf.kvs.iter().enumerate() {
        let ty = match pair.value {
            Value::Array(a) => format!("[{}; {}]", a.element_type(), a.len()),
            v => v.value_type().to_string(),
        };
        let key = Terminal(pair.key.as_bytes());
        write!(out, "  {:>width$}: {ty:<16} {key} = ", i + 1)?;
        value(pair.value, out)?;
        writeln!(out)?;
    }
    writeln!(out, "{} tensors:", gguf.tensors.len())?;
    let width = gguf.tensors.len().to_string().len();
    for (i, tensor) in gguf.tensors.iter().enumerate() {
        let info = &tensor.info;
        let dims: Vec<String> = info.dims.iter().map(u64::to_string).collect();
        writeln!(
            out,
            "  {:>width$}: {:<8} {:<24} {} at {} ({} bytes)",
            i + 1,
            info.ggml_type.to_string(),
            format!("[{}]", dims.join(", ")),
            Terminal(info.name.as_bytes()),
            OrElse(tensor.data_offset, "?"),
            OrElse(tensor.n_bytes, "?"),
        )?;
    }
    Ok(())
}

/// Writes a string value between double quotes, escaped for the terminal by [`Terminal`]; a
/// quote inside it is written `\"` (Terminal writes a backslash as `\\`, so this stays
/// unambiguous and an array preview cannot be made to show elements it does not have).
fn quoted(bytes: &[u8], out: &mut impl Write) -> io::Result<()> {
    out.write_all(b"\"")?;
    for (i, part) in bytes.split(|&b| b == b'"').enumerate() {
        if i > 0 {
            out.write_all(b"\\\"")?;
        }
        write!(out, "{}", Terminal(part))?;
    }
    out.write_all(b"\"")
}

/// A number or a bool as the dump shows it (the snapshot format and the byte map share it);
/// a string or an array shows its type name only.
pub(crate) struct Scalar<'a>(pub(crate) Value<'a>);

impl std::fmt::Display for Scalar<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Value::U8(v) => write!(f, "{v}"),
            Value::I8(v) => write!(f, "{v}"),
            Value::U16(v) => write!(f, "{v}"),
            Value::I16(v) => write!(f, "{v}"),
            Value::U32(v) => write!(f, "{v}"),
            Value::I32(v) => write!(f, "{v}"),
            Value::U64(v) => write!(f, "{v}"),
            Value::I64(v) => write!(f, "{v}"),
            Value::F32(v) => write!(f, "{v:?}"),
            Value::F64(v) => write!(f, "{v:?}"),
            Value::Bool(0) => f.write_str("false"),
            Value::Bool(1) => f.write_str("true"),
            Value::Bool(byte) => write!(f, "true (byte {byte})"),
            Value::String(_) | Value::Array(_) => write!(f, "{}", self.0.value_type()),
        }
    }
}

/// Writes one value as the dump shows it (gguf-testkit's snapshot format shares it for
/// scalars).
pub fn value(value: Value<'_>, out: &mut impl Write) -> io::Result<()> {
    match value {
        Value::String(s) => quoted(s.as_bytes(), out),
        Value::Array(array) => {
            out.write_all(b"[")?;
            for (i, element) in array.iter().take(ARRAY_PREVIEW).enumerate() {
                if i > 0 {
                    out.write_all(b", ")?;
                }
                self::value(element, out)?;
            }
            if array.len() > ARRAY_PREVIEW {
                write!(out, ", ... {} more", array.len() - ARRAY_PREVIEW)?;
            }
            out.write_all(b"]")
        }
        scalar => write!(out, "{}", Scalar(scalar)),
    }
}
