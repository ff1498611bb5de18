//! `gguf map --json`: one JSON object per row and line.

use std::io::{self, Write};

use super::{rows, Filter, Meaning, Row};
use crate::render::json;
use gguf_grammar::grammar::string::GgufStr;
use gguf_grammar::Gguf;

/// Writes one JSON object per row and line:
/// `{"offset": N, "length": N, "depth": N, "kind": K, "path": P, "value": V, "count": N}`,
/// where `value` is the exact string for text read from the file (`{"bytes_hex": ...}` when it
/// is not UTF-8) and the crate's description otherwise. Paths are exact JSON of the path text.
///
/// ```
/// use gguf_tools::render::map::{write_json, Filter};
/// use gguf_grammar::{write::GgufBuilder, Ctx};
///
/// let bytes = GgufBuilder::new(Ctx::V3_LE).kv("general.name", "tiny").build().unwrap();
/// let gguf = gguf_grammar::Gguf::parse(&bytes).unwrap();
/// let mut out = Vec::new();
/// write_json(&gguf, bytes.len() as u64, &Filter::default(), &mut out).unwrap();
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.lines().next().unwrap().starts_with(r#"{"offset": 0, "length": 24, "depth": 0, "kind": "header""#));
/// ```
pub fn write_json(
    gguf: &Gguf<'_>,
    file_size: u64,
    filter: &Filter,
    out: &mut impl Write,
) -> io::Result<()> {
    json_rows(gguf, file_size, filter, None, out)
}

/// Like [`write_json`], with `"file": FILE` first in every row: the rows of several files
/// (the shards of a set) in one stream. `file` is written as exact JSON of its bytes
/// (`{"bytes_hex": ...}` when it is not UTF-8).
///
/// ```
/// use gguf_tools::render::map::{write_json_of_file, Filter};
/// use gguf_grammar::{write::GgufBuilder, Ctx};
///
/// let bytes = GgufBuilder::new(Ctx::V3_LE).kv("general.name", "tiny").build().unwrap();
/// let gguf = gguf_grammar::Gguf::parse(&bytes).unwrap();
/// let mut out = Vec::new();
/// write_json_of_file(&gguf, bytes.len() as u64, b"m-00001-of-00002.gguf", &Filter::default(), &mut out).unwrap();
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.starts_with(r#"{"file": "m-00001-of-00002.gguf", "offset": 0, "length": 24,"#));
/// ```
pub fn write_json_of_file(
    gguf: &Gguf<'_>,
    file_size: u64,
    file: &[u8],
    filter: &Filter,
    out: &mut impl Write,
) -> io::Result<()> {
    json_rows(gguf, file_size, filter, Some(file), out)
}

fn json_rows(
    gguf: &Gguf<'_>,
    file_size: u64,
    filter: &Filter,
    file: Option<&[u8]>,
    out: &mut impl Write,
) -> io::Result<()> {
    rows(gguf, file_size, |row| {
        if !filter.keeps(row) {
            return Ok(());
        }
        out.write_all(b"{")?;
        if let Some(file) = file {
            out.write_all(b"\"file\": ")?;
            json::string(GgufStr(file), out)?;
            out.write_all(b", ")?;
        }
        write!(
            out,
            "\"offset\": {}, \"length\": {}, \"depth\": {}, \"kind\": \"{}\", \"path\": ",
            row.offset, row.len, row.depth, row.kind
        )?;
        path_and_value(row, b", \"value\": ", out)?;
        writeln!(out, ", \"count\": {}}}", row.count)
    })
}

/// A row's path and value as JSON strings, with `between` between them.
pub(super) fn path_and_value(
    row: &Row<'_, '_>,
    between: &[u8],
    out: &mut impl Write,
) -> io::Result<()> {
    json::string(GgufStr(row.path.as_bytes()), out)?;
    out.write_all(between)?;
    match row.meaning {
        Meaning::Note(note) => json::string(GgufStr(note.as_bytes()), out),
        Meaning::Text(s) => json::string(s, out),
    }
}
