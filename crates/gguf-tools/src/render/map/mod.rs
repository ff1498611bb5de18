//! The annotated byte map of a header (`gguf map`): one row per construct, in file order, each
//! with its exact span, its construct path (as error messages name it) and its meaning.
//!
//! Rows come in preorder: a group (the header, a key/value pair, an array, a tensor info)
//! comes before the rows of its parts, which are one level deeper. Every span is taken from
//! the parsed document (the borrowed slices of [`Gguf`]), never recomputed from the bytes.
//! Runs of equal elements in fixed-size arrays share one row ([`Row::count`] elements).
//!
//! The rows are made here ([`rows`]); each of the three renderings has a file of its own:
//! [`write_text`] (aligned terminal rows, file text escaped, `text.rs`), [`write_json`] (one
//! JSON object per row, `jsonl.rs`) and [`write_html`] (a self-contained page with a tree and
//! a hex pane, `html.rs`).

mod html;
mod jsonl;
mod text;

pub use html::{write_html, write_html_within, BROWSER_MAX_PAGE, MAX_PAGE, VIEW_JS};
pub use jsonl::{write_json, write_json_of_file};
pub use text::write_text;

use std::fmt::Write as _;

use super::text::Scalar;
use gguf_grammar::error::{ConstructPath as Path, Segment};
use gguf_grammar::grammar::span::{self, Span};
use gguf_grammar::grammar::string::GgufStr;
use gguf_grammar::grammar::value::{Array, Value};
use gguf_grammar::Gguf;

/// One construct of the header and its bytes.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a, 'r> {
    /// Absolute offset of the first byte.
    pub offset: u64,
    /// Number of bytes.
    pub len: u64,
    /// Nesting level: 0 for the top-level constructs, one more for each enclosing group.
    pub depth: u32,
    /// What the bytes are: `magic`, `version`, `count`, `kv`, `string_len`, `string`,
    /// `value_type`, `value`, `array`, `elements`, `tensor_info`, `n_dims`, `dim`, `ggml_type`,
    /// `offset`, `header`, `padding` or `tensor_data`.
    pub kind: &'static str,
    /// The construct path, e.g. `kv[15] "tokenizer.ggml.tokens"[99018]` (file names in it are
    /// shown as [`gguf_grammar::error::ConstructPath`] shows them: invalid UTF-8 as `\xNN`).
    pub path: &'r str,
    /// The decoded meaning.
    pub meaning: Meaning<'a, 'r>,
    /// For a run of equal array elements, how many (the row spans all of them); else 1.
    pub count: u64,
}

/// What a row's bytes mean.
#[derive(Debug, Clone, Copy)]
pub enum Meaning<'a, 'r> {
    /// A description made by the crate (numbers, type names).
    Note(&'r str),
    /// Text read from the file (a key, a tensor name, a string value).
    Text(GgufStr<'a>),
}

/// Calls `each` with every row of `gguf`'s map, in file order; `file_size` is the length of the
/// whole file (for the tensor-data row). Stops at the first error `each` returns.
///
/// ```
/// use gguf_tools::render::map::{rows, Meaning};
/// use gguf_grammar::{write::GgufBuilder, Ctx};
///
/// let bytes = GgufBuilder::new(Ctx::V3_LE).kv("general.name", "tiny").build().unwrap();
/// let gguf = gguf_grammar::Gguf::parse(&bytes).unwrap();
/// let mut found = Vec::new();
/// rows(&gguf, bytes.len() as u64, |row| {
///     if let Meaning::Text(s) = row.meaning {
///         found.push((row.offset, row.len, row.path.to_string(), s.to_str().unwrap().to_string()));
///     }
///     Ok::<(), ()>(())
/// })
/// .unwrap();
/// assert_eq!(found[0], (32, 12, r#"kv[0] "general.name".key"#.to_string(), "general.name".to_string()));
/// assert_eq!(found[1], (56, 4, r#"kv[0] "general.name".value"#.to_string(), "tiny".to_string()));
/// ```
pub fn rows<'a, E>(
    gguf: &Gguf<'a>,
    file_size: u64,
    mut each: impl FnMut(&Row<'a, '_>) -> Result<(), E>,
) -> Result<(), E> {
    Walker {
        gguf,
        path: String::new(),
        note: String::new(),
        each: &mut each,
    }
    .file(file_size)
}

struct Walker<'g, 'a, F> {
    gguf: &'g Gguf<'a>,
    /// The current path; each level appends its segment and truncates it again.
    path: String,
    note: String,
    each: &'g mut F,
}

impl<'a, E, F: FnMut(&Row<'a, '_>) -> Result<(), E>> Walker<'_, 'a, F> {
    fn emit(
        &mut self,
        offset: u64,
        len: u64,
        depth: u32,
        kind: &'static str,
        text: Option<GgufStr<'a>>,
        count: u64,
    ) -> Result<(), E> {
        let meaning = match text {
            Some(s) => Meaning::Text(s),
            None => Meaning::Note(&self.note),
        };
        (self.each)(&Row {
            offset,
            len,
            depth,
            kind,
            path: &self.path,
            meaning,
            count,
        })
    }

    /// Sets the note, the path suffix (appended to `base`), and emits.
    #[allow(clippy::too_many_arguments)]
    fn field(
        &mut self,
        base: usize,
        suffix: &str,
        offset: u64,
        len: u64,
        depth: u32,
        kind: &'static str,
        note: std::fmt::Arguments<'_>,
    ) -> Result<(), E> {
        self.path.truncate(base);
        self.path.push_str(suffix);
        self.note.clear();
        let _ = self.note.write_fmt(note);
        self.emit(offset, len, depth, kind, None, 1)
    }

    /// The row of `span`, named `base + its field`.
    fn span(
        &mut self,
        base: usize,
        span: &Span,
        depth: u32,
        kind: &'static str,
        note: std::fmt::Arguments<'_>,
    ) -> Result<(), E> {
        self.path.truncate(base);
        let _ = write!(self.path, "{}", span.path());
        self.note.clear();
        let _ = self.note.write_fmt(note);
        let len = span.range.end - span.range.start;
        self.emit(span.range.start, len, depth, kind, None, 1)
    }

    fn offset(&self, part: &[u8]) -> u64 {
        // Every slice handed out by the parsed document lies inside its input.
        self.gguf.offset_of(part).unwrap_or(0)
    }

    fn file(&mut self, file_size: u64) -> Result<(), E> {
        let gguf = self.gguf;
        let header = gguf.header;
        self.path.clear();
        self.path.push_str("header");
        self.note.clear();
        let _ = write!(
            self.note,
            "GGUF v{}, {} endian, {} tensors, {} key/values",
            gguf.version().number(),
            gguf.endian().name(),
            header.tensor_count,
            header.kv_count
        );
        let [magic, version, tensor_count, kv_count] = header.spans();
        self.emit(0, kv_count.range.end, 0, "header", None, 1)?;
        self.span(0, &magic, 1, "magic", format_args!("\"GGUF\""))?;
        self.span(
            0,
            &version,
            1,
            "version",
            format_args!(
                "{} ({} endian)",
                gguf.version().number(),
                gguf.endian().name()
            ),
        )?;
        for (span, n) in [
            (tensor_count, header.tensor_count),
            (kv_count, header.kv_count),
        ] {
            self.span(0, &span, 1, "count", format_args!("{n}"))?;
        }
        for (index, pair) in gguf.kvs.iter().enumerate() {
            self.path.clear();
            let path = [Segment::Kv(index as u64), Segment::Name(pair.key.lossy())];
            let _ = write!(self.path, "{}", Path(path.into()));
            let base = self.path.len();
            let start = self.offset(pair.raw);
            self.note.clear();
            let _ = write!(self.note, "{}", TypeName(pair.value));
            self.emit(start, pair.raw.len() as u64, 0, "kv", None, 1)?;
            let [key_len, key, ty_span, value] = pair.spans(start);
            self.string(base, &key_len, &key, pair.key, 1)?;
            let ty = pair.value.value_type();
            self.span(
                base,
                &ty_span,
                1,
                "value_type",
                format_args!("{} ({})", ty, ty.tag()),
            )?;
            self.value(base, &value, pair.value, 1)?;
        }
        for (index, tensor) in gguf.tensors.iter().enumerate() {
            let info = &tensor.info;
            self.path.clear();
            let path = [
                Segment::Tensor(index as u64),
                Segment::Name(info.name.lossy()),
            ];
            let _ = write!(self.path, "{}", Path(path.into()));
            let base = self.path.len();
            let start = self.offset(info.raw);
            self.note.clear();
            let _ = write!(self.note, "{} {:?}", info.ggml_type, info.dims);
            self.emit(start, info.raw.len() as u64, 0, "tensor_info", None, 1)?;
            let spans = info.spans(start);
            let [name_len, name, n_dims] = [&spans[0], &spans[1], &spans[2]];
            self.string(base, name_len, name, info.name, 1)?;
            self.span(
                base,
                n_dims,
                1,
                "n_dims",
                format_args!("{}", info.dims.len()),
            )?;
            let dims = &spans[3..3 + info.dims.len()];
            for (span, dim) in dims.iter().zip(&info.dims) {
                self.span(base, span, 1, "dim", format_args!("{dim}"))?;
            }
            let [ty, offset] = [&spans[3 + info.dims.len()], &spans[4 + info.dims.len()]];
            self.span(
                base,
                ty,
                1,
                "ggml_type",
                format_args!("{} ({})", info.ggml_type, info.ggml_type.0),
            )?;
            let absolute = match tensor.data_offset {
                Some(abs) => format!("data at {abs}"),
                None => "data offset overflows".to_string(),
            };
            self.span(
                base,
                offset,
                1,
                "offset",
                format_args!("{} (relative; {absolute})", info.offset),
            )?;
        }
        let padding = gguf.tensor_data_offset - gguf.tensor_infos_end;
        if padding > 0 {
            self.field(
                0,
                "padding",
                gguf.tensor_infos_end,
                padding,
                0,
                "padding",
                format_args!("{padding} bytes to align the data to {}", gguf.alignment),
            )?;
        }
        let data_len = file_size.saturating_sub(gguf.tensor_data_offset);
        self.field(
            0,
            "tensor_data",
            gguf.tensor_data_offset,
            data_len,
            0,
            "tensor_data",
            format_args!(
                "{} tensors, {data_len} bytes (not read)",
                gguf.tensors.len()
            ),
        )
    }

    /// A length-prefixed string: the length row and the bytes row, both at `depth`.
    fn string(
        &mut self,
        base: usize,
        len: &Span,
        bytes: &Span,
        s: GgufStr<'a>,
        depth: u32,
    ) -> Result<(), E> {
        self.span(base, len, depth, "string_len", format_args!("{}", s.len()))?;
        self.path.truncate(base);
        let _ = write!(self.path, "{}", bytes.path());
        let n = bytes.range.end - bytes.range.start;
        self.emit(bytes.range.start, n, depth, "string", Some(s), 1)
    }

    /// A value of any type at `span` (a kv's `.value`, or an element `[i]`).
    fn value(&mut self, base: usize, span: &Span, value: Value<'a>, depth: u32) -> Result<(), E> {
        let element = matches!(span.field, Segment::Element(_));
        match value {
            // An array element: one row for its length and bytes.
            Value::String(s) if element => {
                self.path.truncate(base);
                let _ = write!(self.path, "{}", span.path());
                let len = span.range.end - span.range.start;
                self.emit(span.range.start, len, depth, "string", Some(s), 1)
            }
            Value::String(s) => {
                let [len, bytes] =
                    span::string("value", span.range.start, s, self.offset(s.as_bytes()));
                self.string(base, &len, &bytes, s, depth)
            }
            Value::Array(array) => {
                self.span(
                    base,
                    span,
                    depth,
                    "array",
                    format_args!("{}", TypeName(value)),
                )?;
                // A kv's array elements are `kv[n] "key"[i]`, as errors name them; a nested
                // array's are `...[i][j]`.
                let children = if element { self.path.len() } else { base };
                self.array(children, span.range.start, array, depth + 1)
            }
            scalar => self.span(
                base,
                span,
                depth,
                "value",
                format_args!("{}", Scalar(scalar)),
            ),
        }
    }

    /// The parts of the array starting at `at` (its element type), named `base + ...`.
    fn array(&mut self, base: usize, at: u64, array: Array<'a>, depth: u32) -> Result<(), E> {
        let ty = array.element_type();
        let [element_type, len] = array.spans(at);
        self.span(
            base,
            &element_type,
            depth,
            "value_type",
            format_args!("{} ({})", ty, ty.tag()),
        )?;
        self.span(base, &len, depth, "count", format_args!("{}", array.len()))?;
        let elements_at = self.offset(array.raw_elements());
        match ty.fixed_size() {
            Some(size) => self.runs(base, elements_at, size, array, depth),
            None => {
                let mut iter = array.iter();
                let mut index = 0u64;
                let mut next_at = elements_at;
                while let Some(element) = iter.next() {
                    let end = match element {
                        Value::String(s) => self.offset(s.as_bytes()) + s.len() as u64,
                        // A nested array ends where the next element starts (or the array ends).
                        _ => match iter.clone().next() {
                            Some(Value::Array(next)) => {
                                self.offset(next.raw_elements()) - next.header_len()
                            }
                            _ => elements_at + array.raw_elements().len() as u64,
                        },
                    };
                    let span = Span {
                        field: Segment::Element(index),
                        range: next_at..end,
                    };
                    self.value(base, &span, element, depth)?;
                    next_at = end;
                    index += 1;
                }
                Ok(())
            }
        }
    }

    /// Fixed-size elements: one row per run of equal values.
    fn runs(
        &mut self,
        base: usize,
        at: u64,
        size: u64,
        array: Array<'a>,
        depth: u32,
    ) -> Result<(), E> {
        let raw = array.raw_elements();
        let size_usize = size as usize;
        let mut index = 0u64;
        let mut iter = array.iter().peekable();
        while let Some(first) = iter.next() {
            let first_bytes = &raw[index as usize * size_usize..][..size_usize];
            let mut count = 1u64;
            while iter.peek().is_some() {
                let i = (index + count) as usize * size_usize;
                if &raw[i..i + size_usize] != first_bytes {
                    break;
                }
                iter.next();
                count += 1;
            }
            self.path.truncate(base);
            let _ = write!(self.path, "{}", Path(vec![Segment::Element(index)]));
            self.note.clear();
            let _ = write!(self.note, "{}", Scalar(first));
            if count > 1 {
                let _ = write!(
                    self.note,
                    " (\u{d7}{count}, through [{}])",
                    index + count - 1
                );
            }
            self.emit(at + index * size, count * size, depth, "value", None, count)?;
            index += count;
        }
        Ok(())
    }
}

/// A value's type: `uint32`, `string`, `array[string; 128256]`.
struct TypeName<'a>(Value<'a>);

impl std::fmt::Display for TypeName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Value::Array(a) => write!(f, "array[{}; {}]", a.element_type(), a.len()),
            v => write!(f, "{}", v.value_type()),
        }
    }
}

/// Which rows to show: those overlapping `from..to` whose path contains `path`.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only rows ending after this offset.
    pub from: Option<u64>,
    /// Only rows starting before this offset.
    pub to: Option<u64>,
    /// Only rows whose path contains this text.
    pub path: Option<String>,
}

impl Filter {
    /// Whether `row` is shown.
    pub fn keeps(&self, row: &Row<'_, '_>) -> bool {
        let end = row.offset.saturating_add(row.len.max(1));
        self.from.is_none_or(|from| end > from)
            && self.to.is_none_or(|to| row.offset < to)
            && self.path.as_deref().is_none_or(|p| row.path.contains(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_type_names_are_the_specs() {
        assert_eq!(TypeName(Value::U8(1)).to_string(), "uint8");
    }
}
