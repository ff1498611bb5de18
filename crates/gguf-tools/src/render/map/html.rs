//! `gguf map --html`: the self-contained page.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::jsonl::path_and_value;
use super::rows;
use crate::render::json;
use gguf_grammar::grammar::string::GgufStr;
use gguf_grammar::Gguf;

/// `/*VIEW*/` by the viewer.
const HTML_TEMPLATE: &str = include_str!("map.html");

/// The viewer (tree, hex pane, search), shared with `web/inspector.html`.
pub const VIEW_JS: &str = include_str!("map_view.js");

/// Writes the self-contained HTML page: a collapsible tree of every row beside a hex pane of
/// the header's bytes, with search over keys and tensor names. Nothing is loaded from the
/// network; the data is inline as JSON (`<` escaped) and the header bytes as base64.
///
/// To keep the page near the header's own size, the elements of string arrays are not written
/// as rows: their array row carries the byte length of each element (`lens`) and the page
/// derives their spans from it and shows their text from the bytes.
///
/// ```
/// use gguf_tools::render::map::write_html;
/// use gguf_grammar::{write::GgufBuilder, Ctx};
///
/// let bytes = GgufBuilder::new(Ctx::V3_LE).kv("general.name", "</script>").build().unwrap();
/// let gguf = gguf_grammar::Gguf::parse(&bytes).unwrap();
/// let mut page = Vec::new();
/// write_html(&gguf, bytes.len() as u64, "tiny.gguf", &mut page).unwrap();
/// let page = String::from_utf8(page).unwrap();
/// assert!(page.starts_with("<!DOCTYPE html>"));
/// assert_eq!(page.matches("</script>").count(), 2); // the page's own two scripts only
/// ```
pub fn write_html(
    gguf: &Gguf<'_>,
    file_size: u64,
    title: &str,
    out: &mut impl Write,
) -> io::Result<()> {
    write_html_within(gguf, file_size, title, MAX_PAGE, out)
}

/// The most bytes [`write_html`] writes: 128 MiB. Real headers give pages of 1.5 to 5 times
/// their size (the Llama 3 vocabulary's 7.8 MB header: an 11.7 MB page), but a crafted 4 MB
/// header gave 211 MB and a million tensor infos 566 MB, more than a browser can open.
pub const MAX_PAGE: u64 = 128 << 20;

/// The most any page may take, whatever limit is asked for: V8's longest string (2^29 - 24
/// UTF-16 units), which the page's data must fit in to be parsed (Chromium shows nothing,
/// "Unexpected end of JSON input", for longer).
pub const BROWSER_MAX_PAGE: u64 = (1 << 29) - 24;

/// The error of a page that would be larger than `limit` bytes.
fn page_too_large(limit: u64) -> io::Error {
    io::Error::other(format!(
        "the page would be larger than {limit} bytes (raise the limit with --max-page BYTES, at \
         most {BROWSER_MAX_PAGE}, the longest text a browser parses; `gguf map --json` has no limit)"
    ))
}

/// [`write_html`] with a size limit of `limit` bytes (at most [`BROWSER_MAX_PAGE`]): a page
/// that would be larger is an error before anything is written, its data never built past
/// the limit.
pub fn write_html_within(
    gguf: &Gguf<'_>,
    file_size: u64,
    title: &str,
    limit: u64,
    out: &mut impl Write,
) -> io::Result<()> {
    let limit = limit.min(BROWSER_MAX_PAGE);
    let (head, rest) = HTML_TEMPLATE
        .split_once("/*DATA*/")
        .expect("the template has a data marker");
    let (middle, tail) = rest
        .split_once("/*VIEW*/")
        .expect("the template has a viewer marker");
    out.write_all(head.as_bytes())?;
    let mut data = Vec::new();
    html_data(gguf, file_size, title, limit, &mut data)?;
    let escapes = data.iter().filter(|&&b| b == b'<').count();
    let page = [
        head.len(),
        data.len(),
        5 * escapes,
        middle.len(),
        VIEW_JS.len(),
        tail.len(),
    ];
    if page.iter().sum::<usize>() as u64 > limit {
        return Err(page_too_large(limit));
    }
    // Inside <script>, `<` could open `</script>`: JSON allows it escaped.
    let mut from = 0;
    for (i, &b) in data.iter().enumerate() {
        if b == b'<' {
            out.write_all(&data[from..i])?;
            out.write_all(b"\\u003c")?;
            from = i + 1;
        }
    }
    out.write_all(&data[from..])?;
    out.write_all(middle.as_bytes())?;
    out.write_all(VIEW_JS.as_bytes())?;
    out.write_all(tail.as_bytes())
}

/// The page's data: `{"title", "file_size", "count_width", "little", "bytes": base64,
/// "rows": [[offset, length, depth, kind, path, value, count, lens?], ...]}`.
fn html_data(
    gguf: &Gguf<'_>,
    file_size: u64,
    title: &str,
    limit: u64,
    out: &mut Vec<u8>,
) -> io::Result<()> {
    out.extend_from_slice(b"{\"title\": ");
    json::string(GgufStr(title.as_bytes()), out)?;
    write!(
        out,
        ", \"file_size\": {file_size}, \"count_width\": {}, \"little\": {}, \"bytes\": \"",
        gguf.header.ctx.count_width(),
        gguf.endian() == gguf_grammar::Endian::Little
    )?;
    let held = usize::try_from(gguf.tensor_data_offset)
        .map_or(gguf.bytes.len(), |start| start.min(gguf.bytes.len()));
    base64(&gguf.bytes[..held], out);
    out.extend_from_slice(b"\", \"rows\": [");
    let mut first = true;
    // Rows of string elements are folded into their array's `lens`, which is written into the
    // array's row (it comes before them) when the array ends.
    let mut open: Option<OpenArray> = None;
    rows(gguf, file_size, |row| -> io::Result<()> {
        if out.len() as u64 > limit {
            return Err(page_too_large(limit));
        }
        if let Some(array) = &mut open {
            if row.depth == array.depth + 1 && row.kind == "string" && row.path.ends_with(']') {
                array.lens.push(row.len);
                return Ok(());
            }
            if row.depth <= array.depth || row.kind == "array" {
                close_array(open.take(), out);
            }
        }
        if !first {
            out.push(b',');
        }
        first = false;
        write!(
            out,
            "\n[{},{},{},\"{}\",",
            row.offset, row.len, row.depth, row.kind
        )?;
        path_and_value(row, b",", out)?;
        write!(out, ",{}]", row.count)?;
        if row.kind == "array" {
            open = Some(OpenArray {
                depth: row.depth,
                insert_at: out.len() - 1,
                lens: Vec::new(),
            });
        }
        Ok(())
    })?;
    close_array(open, out);
    out.extend_from_slice(b"]}");
    Ok(())
}

/// An array row whose string elements are being folded.
struct OpenArray {
    depth: u32,
    /// Where in the output the row's closing `]` is.
    insert_at: usize,
    /// Byte length of each element (length prefix included).
    lens: Vec<u64>,
}

/// Writes the element lengths of a string array into its row.
fn close_array(open: Option<OpenArray>, out: &mut Vec<u8>) {
    let Some(array) = open.filter(|a| !a.lens.is_empty()) else {
        return;
    };
    let mut lens = String::from(",[");
    for (i, len) in array.lens.iter().enumerate() {
        if i > 0 {
            lens.push(',');
        }
        let _ = write!(lens, "{len}");
    }
    lens.push(']');
    out.splice(array.insert_at..array.insert_at, lens.into_bytes());
}

/// Standard base64 with padding.
fn base64(bytes: &[u8], out: &mut Vec<u8>) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]);
            } else {
                out.push(b'=');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_4648_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            let mut out = Vec::new();
            base64(plain.as_bytes(), &mut out);
            assert_eq!(out, encoded.as_bytes());
        }
    }
}
