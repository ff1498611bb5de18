//! `gguf map`'s terminal rendering.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::{rows, Filter, Meaning, Row};
use gguf_grammar::escape::Terminal;
use gguf_grammar::Gguf;

/// Raw bytes shown in a text row; longer spans show their start and end.
const HEX_SHOWN: u64 = 8;

/// Writes the terminal rendering: `OFFSET_HEX OFFSET LENGTH  HEX  PATH  MEANING`, file text
/// escaped with [`gguf_grammar::escape::terminal`]'s rules, colour with ANSI escapes when
/// `colour` is set.
///
/// ```
/// use gguf_tools::render::map::{write_text, Filter};
/// use gguf_grammar::{write::GgufBuilder, Ctx};
///
/// let bytes = GgufBuilder::new(Ctx::V3_LE).kv("general.name", "red\x1b[31m").build().unwrap();
/// let gguf = gguf_grammar::Gguf::parse(&bytes).unwrap();
/// let mut out = Vec::new();
/// write_text(&gguf, bytes.len() as u64, &Filter::default(), false, &mut out).unwrap();
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.contains(r#"kv[0] "general.name".value  "red\e[31m""#), "{text}");
/// assert!(!text.contains('\x1b'));
/// ```
pub fn write_text(
    gguf: &Gguf<'_>,
    file_size: u64,
    filter: &Filter,
    colour: bool,
    out: &mut impl Write,
) -> io::Result<()> {
    let (dim, path_on, off) = if colour {
        ("\x1b[2m", "\x1b[36m", "\x1b[0m")
    } else {
        ("", "", "")
    };
    rows(gguf, file_size, |row| {
        if !filter.keeps(row) {
            return Ok(());
        }
        let indent = "  ".repeat(row.depth as usize);
        write!(
            out,
            "{dim}{:#010x} {:>10}{off} {:>8}  {:<27}  {indent}{path_on}{}{off}  ",
            row.offset,
            row.offset,
            row.len,
            Hex(gguf, row),
            Terminal(row.path.as_bytes()),
        )?;
        match row.meaning {
            Meaning::Note(note) => writeln!(out, "{note}"),
            // Quotes inside are escaped too, so the text's end is never in doubt.
            Meaning::Text(s) => writeln!(
                out,
                "\"{}\"",
                Terminal(s.as_bytes()).to_string().replace('"', "\\\"")
            ),
        }
    })
}

/// A row's bytes in hex (those the parse holds; the tensor data is not read).
struct Hex<'g, 'r>(&'g Gguf<'g>, &'r Row<'g, 'r>);

impl std::fmt::Display for Hex<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Hex(gguf, row) = self;
        let held = gguf.bytes.len() as u64;
        let start = row.offset.min(held) as usize;
        let end = row.offset.saturating_add(row.len).min(held) as usize;
        let bytes = &gguf.bytes[start..end];
        let mut text = String::new();
        let shown: Vec<&u8> = if bytes.len() as u64 <= HEX_SHOWN {
            bytes.iter().collect()
        } else {
            bytes[..5].iter().chain(&bytes[bytes.len() - 2..]).collect()
        };
        for (i, byte) in shown.iter().enumerate() {
            if i == 5 && bytes.len() as u64 > HEX_SHOWN {
                text.push_str(" ..");
            }
            if !text.is_empty() {
                text.push(' ');
            }
            let _ = write!(text, "{byte:02x}");
        }
        f.pad(&text)
    }
}
