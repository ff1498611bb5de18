//! Where each field of a parsed construct is: the spans the byte map draws, taken from the
//! slices the parse returned and the widths the grammar reads with, with fields named as
//! error paths name them ([`Segment`]).
//!
//! ```
//! use gguf_grammar::grammar::{kv::kv, Ctx};
//!
//! let bytes = b"\x01\0\0\0\0\0\0\0n\x04\0\0\0\x2a\0\0\0";
//! let (_, pair) = kv(Ctx::V3_LE)(bytes).unwrap();
//! let fields: Vec<String> = pair.spans(0).iter().map(|s| format!("{} {:?}", s.path(), s.range)).collect();
//! assert_eq!(fields, [".key_len 0..8", ".key 8..9", ".type 9..13", ".value 13..17"]);
//! ```

use std::ops::Range;

use super::header::Header;
use super::kv::Kv;
use super::string::GgufStr;
use super::tensor_info::TensorInfo;
use super::value::Array;
use crate::error::{ConstructPath, Segment};

/// A field of a construct and where its bytes are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// The field, as a path segment: `header.magic`, `.key`, `.dims[1]`...
    pub field: Segment,
    /// Its bytes, as offsets in the input (from the `start` the construct was given).
    pub range: Range<u64>,
}

impl Span {
    /// The field as a path (`.key_len`, `header.version`).
    pub fn path(&self) -> ConstructPath {
        ConstructPath(vec![self.field.clone()])
    }
}

/// Consecutive fields from `start`, each `(field, width)`.
fn consecutive<const N: usize>(start: u64, fields: [(Segment, u64); N]) -> [Span; N] {
    let mut at = start;
    fields.map(|(field, width)| {
        let range = at..at + width;
        at = range.end;
        Span { field, range }
    })
}

/// The width of a length prefix: where a string's bytes start in the construct's bytes.
fn prefix_width(raw: &[u8], string_bytes: &[u8]) -> u64 {
    // The parse returned both slices from one input, the string's after the construct's start.
    (string_bytes.as_ptr() as usize - raw.as_ptr() as usize) as u64
}

/// The field that holds the length of the string field `field`.
fn length_field(field: &'static str) -> &'static str {
    match field {
        "key" => "key_len",
        "name" => "name_len",
        "value" => "value_len",
        _ => "len",
    }
}

/// A length-prefixed string field starting at `at` whose bytes `s` start at `bytes_at`: the
/// length (`key_len`, `name_len`, `value_len`) and the bytes (`key`, `name`, `value`).
pub fn string(field: &'static str, at: u64, s: GgufStr<'_>, bytes_at: u64) -> [Span; 2] {
    [
        Span {
            field: Segment::Field(length_field(field)),
            range: at..bytes_at,
        },
        Span {
            field: Segment::Field(field),
            range: bytes_at..bytes_at + s.len() as u64,
        },
    ]
}

impl Header {
    /// `magic version tensor_count kv_count`, from the start of the file.
    pub fn spans(&self) -> [Span; 4] {
        let width = self.ctx.count_width();
        consecutive(
            0,
            [
                (Segment::Header("magic"), 4),
                (Segment::Header("version"), 4),
                (Segment::Header("tensor_count"), width),
                (Segment::Header("kv_count"), width),
            ],
        )
    }
}

impl Kv<'_> {
    /// `key_len key type value`, for a pair whose bytes start at `start`.
    pub fn spans(&self, start: u64) -> [Span; 4] {
        let bytes_at = start + prefix_width(self.raw, self.key.as_bytes());
        let [key_len, key] = string("key", start, self.key, bytes_at);
        let ty = Span {
            field: Segment::Field("type"),
            range: key.range.end..key.range.end + 4,
        };
        let value = Span {
            field: Segment::Field("value"),
            range: ty.range.end..start + self.raw.len() as u64,
        };
        [key_len, key, ty, value]
    }
}

impl TensorInfo<'_> {
    /// `name_len name n_dims dims[0..n_dims] type offset`, for a descriptor whose bytes start
    /// at `start`.
    pub fn spans(&self, start: u64) -> Vec<Span> {
        let width = prefix_width(self.raw, self.name.as_bytes());
        let [name_len, name] = string("name", start, self.name, start + width);
        let n_dims = Span {
            field: Segment::Field("n_dims"),
            range: name.range.end..name.range.end + 4,
        };
        let dims_at = n_dims.range.end;
        let dims = (0..self.dims.len() as u64).map(|d| Span {
            field: Segment::Dim(d),
            range: dims_at + d * width..dims_at + (d + 1) * width,
        });
        let tail_at = dims_at + self.dims.len() as u64 * width;
        let tail = consecutive(
            tail_at,
            [(Segment::Field("type"), 4), (Segment::Field("offset"), 8)],
        );
        [name_len, name, n_dims]
            .into_iter()
            .chain(dims)
            .chain(tail)
            .collect()
    }
}

impl Array<'_> {
    /// `element_type len`, for an array whose encoding starts at `start`; its elements follow.
    pub fn spans(&self, start: u64) -> [Span; 2] {
        consecutive(
            start,
            [
                (Segment::Field("element_type"), 4),
                (Segment::Field("len"), self.ctx().count_width()),
            ],
        )
    }

    /// The bytes of `element_type len` before the elements.
    pub fn header_len(&self) -> u64 {
        4 + self.ctx().count_width()
    }
}

#[cfg(test)]
mod tests {
    use crate::grammar::test_bytes::{all_ctx, Enc};
    use crate::grammar::{finish, header, kv, tensor_info, value::ValueType};

    /// Spans that follow one another from `start` to `end`.
    fn tiles(spans: &[super::Span], start: u64, end: u64) {
        let mut at = start;
        for s in spans {
            assert_eq!(s.range.start, at, "{s:?}");
            at = s.range.end;
        }
        assert_eq!(at, end);
    }

    #[test]
    fn spans_tile_each_construct_in_every_version_and_byte_order() {
        for ctx in all_ctx() {
            let bytes = Enc::new(ctx)
                .string(b"general.name")
                .u32(ValueType::String.tag())
                .string(b"tiny")
                .bytes;
            let (_, pair) = kv::kv(ctx)(&bytes).unwrap();
            tiles(&pair.spans(5), 5, 5 + bytes.len() as u64);

            let bytes = Enc::new(ctx)
                .string(b"blk.0.attn_q.weight")
                .u32(3)
                .count(4096)
                .count(1)
                .count(7)
                .u32(12)
                .raw(&(1u64 << 33).to_be_bytes())
                .bytes;
            let (_, info) = tensor_info::tensor_info(ctx)(&bytes).unwrap();
            let spans = info.spans(0);
            assert_eq!(spans.len(), 3 + 3 + 2);
            tiles(&spans, 0, bytes.len() as u64);
        }
    }

    #[test]
    fn header_spans_are_where_the_parser_names_its_errors() {
        // Cut inside each field: the error names the field whose span holds the cut.
        let bytes = b"GGUF\x03\0\0\0\x02\0\0\0\0\0\0\0\x05\0\0\0\0\0\0\0";
        let (_, h) = header::header(None)(bytes).unwrap();
        for span in h.spans() {
            let cut = span.range.end as usize - 1;
            let e = finish(header::header(None), &bytes[..cut]).unwrap_err();
            assert_eq!(e.path.to_string(), span.path().to_string(), "cut at {cut}");
        }
    }
}
