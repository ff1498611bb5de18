//! The stable, diff-friendly snapshot of a GGUF file (`gguf snapshot`, and the crate's own
//! `snapshots/`): one line per fact, so a change to a file shows as a change to the lines of
//! the keys and tensors it touched.
//!
//! ```text
//! version: 3
//! endian: little
//! file_size: 1766807
//! alignment: 32
//! tensor_infos_end: 1766807
//! tensor_data_offset: 1766816
//! kvs: 16
//!   @24 general.architecture string = "gpt2"
//!   @459 tokenizer.ggml.tokens array = [string; 50257] ["!", "\"", "#", ..., "<|endoftext|>"] sha256:1b0b4d1f22889586
//! tensors: 1
//!   token_embd.weight q8_0 [576, 49152] offset=0 data_offset=1785664 n_bytes=30081024
//! ```
//!
//! Each key/value line gives the pair's offset, key, type and value (scalars as `gguf dump`
//! prints them). Arrays of up to [`SHOWN`] elements are shown whole; longer ones by their first
//! and last [`ENDS`] elements; every array ends with the first 16 hex digits of the SHA-256 of
//! its element bytes as stored, so any change to any element changes the line. Each tensor
//! line gives its name, type, dims (`ne0` first), relative offset, absolute data offset and
//! byte size (`?` where undefined). Keys and names from the file are escaped for the
//! terminal.
//!
//! ```
//! use gguf_grammar::Gguf;
//! use gguf_testkit::{fixtures, snapshot};
//!
//! let bytes = fixtures::minimal_llama();
//! let text = snapshot::render(&Gguf::parse(&bytes)?);
//! assert!(text.contains("\n  @24 general.architecture string = \"llama\"\n"), "{text}");
//! assert!(text.contains("\n  output_norm.weight f32 [32] offset=9024 "), "{text}");
//! // In a Rust project's tests: insta::assert_snapshot!(snapshot::render(&gguf));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt::Write as _;

use crate::fixtures::sha256_hex;
use gguf_grammar::escape::Terminal;
use gguf_grammar::{Array, Gguf, Value};
use gguf_tools::render::text;

/// Arrays up to this long are shown whole.
pub const SHOWN: usize = 8;
/// Longer arrays show this many elements at each end.
pub const ENDS: usize = 3;

/// The snapshot of `gguf`. Its `file_size` is the length of the bytes `gguf` was parsed
/// from: parse the whole file, or give the size with [`render_with_size`].
pub fn render(gguf: &Gguf<'_>) -> String {
    render_with_size(gguf, gguf.bytes.len() as u64)
}

/// The snapshot of `gguf` parsed from the header of a file of `file_size` bytes (as
/// [`gguf_tools::source::Source::read_header`] gives them): the same text as [`render`] of the
/// whole file.
///
/// ```
/// use gguf_grammar::{stream, Gguf};
/// use gguf_testkit::{fixtures, snapshot};
///
/// let bytes = fixtures::minimal_llama();
/// let header = stream::read_header(&bytes[..], None)?;
/// let whole = snapshot::render(&Gguf::parse(&bytes)?);
/// assert_eq!(snapshot::render_with_size(&header.gguf(), bytes.len() as u64), whole);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn render_with_size(gguf: &Gguf<'_>, file_size: u64) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_snapshot(gguf, file_size, &mut out);
    out
}

fn write_snapshot(gguf: &Gguf<'_>, file_size: u64, out: &mut String) -> std::fmt::Result {
    writeln!(out, "version: {}", gguf.version())?;
    writeln!(out, "endian: {}", gguf.endian().name())?;
    writeln!(out, "file_size: {file_size}")?;
    writeln!(out, "alignment: {}", gguf.alignment)?;
    writeln!(out, "tensor_infos_end: {}", gguf.tensor_infos_end)?;
    writeln!(out, "tensor_data_offset: {}", gguf.tensor_data_offset)?;
    writeln!(out, "kvs: {}", gguf.kvs.len())?;
    for pair in &gguf.kvs {
        let offset = gguf.offset_of(pair.raw).unwrap_or_default();
        let ty = pair.value.value_type();
        let key = Terminal(pair.key.as_bytes());
        writeln!(out, "  @{offset} {key} {ty} = {}", value(pair.value))?;
    }
    writeln!(out, "tensors: {}", gguf.tensors.len())?;
    for t in &gguf.tensors {
        let i = &t.info;
        let known = |n: Option<u64>| n.map_or("?".to_string(), |n| n.to_string());
        writeln!(
            out,
            "  {} {} {:?} offset={} data_offset={} n_bytes={}",
            Terminal(i.name.as_bytes()),
            i.ggml_type,
            i.dims,
            i.offset,
            known(t.data_offset),
            known(t.n_bytes)
        )?;
    }
    Ok(())
}

fn value(value: Value<'_>) -> String {
    match value {
        Value::Array(array) => describe_array(array),
        // Committed snapshots quote strings with Debug (every control and bidi character
        // escaped): the format stays as pipelines recorded it.
        Value::String(s) => format!("{s:?}"),
        scalar => {
            let mut out = Vec::new();
            // Writing to a Vec cannot fail.
            let _ = text::value(scalar, &mut out);
            String::from_utf8_lossy(&out).into_owned()
        }
    }
}

fn describe_array(array: Array<'_>) -> String {
    let elements: Vec<String> = if array.len() <= SHOWN {
        array.iter().map(value).collect()
    } else {
        let first = array.iter().take(ENDS).map(value);
        let skip = array.len() - ENDS;
        let last = array.iter().skip(skip).map(value);
        first.chain(["...".to_string()]).chain(last).collect()
    };
    let sha = sha256_hex(array.raw_elements());
    format!(
        "[{}; {}] [{}] sha256:{}",
        array.element_type(),
        array.len(),
        elements.join(", "),
        &sha[..16]
    )
}
