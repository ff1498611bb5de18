//! The GGUF grammar: one nom parser per construct, composed into [`file::file`].
//!
//! Every parser takes a [`Ctx`] (version and byte order) and a `&[u8]`, and borrows what it
//! returns from that slice. The modules follow the productions of `grammar/GRAMMAR.md` in order:
//!
//! | module | production |
//! |---|---|
//! | [`header`] | magic, version (with byte-order detection), tensor and kv counts |
//! | [`string`] | length-prefixed byte string |
//! | [`value`] | value type tag, scalar, array (homogeneous, may nest) |
//! | [`kv`] | metadata key/value pair |
//! | [`tensor_info`] | name, n_dims, dims, ggml type, relative offset |
//! | [`file`](mod@file) | header, kvs, tensor infos, alignment and tensor-data start |
//!
//! Every parser is a nom parser, `Fn(&[u8]) -> IResult<&[u8], T, GrammarError>`
//! ([`ParseResult`]), so the constructs combine with nom's own combinators; nesting depth and
//! every other bound are kept inside. A parser's [`GrammarError`] counts the bytes left at the
//! failure point; [`finish`] runs a parser and turns its error into a located [`Error`], with
//! the offset from the start of the input, the construct path and what was expected.
//! Fixed-width fields are read with nom's streaming number parsers: [`Ctx`]'s readers one at
//! a time, nom-derive's records (header counts, array header, tensor-info tail) several at
//! once.
//!
//! A container of its own, built from the GGUF parsers and nom's combinators: a 4-byte tag,
//! a u32 count, then that many GGUF strings.
//!
//! ```
//! use gguf_grammar::grammar::{finish, string::string, Ctx, ParseResult};
//! use gguf_grammar::GgufStr;
//! use nom::{bytes::complete::tag, error::context, multi::length_count, number::complete::le_u32};
//! use nom::sequence::preceded;
//!
//! fn names(input: &[u8]) -> ParseResult<'_, Vec<GgufStr<'_>>> {
//!     let string = string(Ctx::V3_LE);
//!     preceded(tag("NAMES"), context("names", length_count(le_u32, string)))(input)
//! }
//!
//! let bytes = b"NAMES\x02\0\0\0\x01\0\0\0\0\0\0\0a\x09\0\0\0\0\0\0\0bc";
//! let err = finish(names, bytes).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "offset 0x12 (18): .names: string length 9 exceeds the 2 bytes left"
//! );
//!
//! let ok = b"NAMES\x01\0\0\0\x01\0\0\0\0\0\0\0a!";
//! let (rest, names) = finish(names, ok).unwrap();
//! assert_eq!((names[0].as_bytes(), rest), (&b"a"[..], &b"!"[..]));
//! ```

pub mod endian;
pub mod file;
pub mod header;
pub mod kv;
pub mod span;
pub mod string;
pub mod tensor_info;
pub mod value;

use nom::number::streaming as number;

pub use endian::{Big, ByteOrder, Endian, Little};

use std::cell::Cell;

use crate::error::{Error, ErrorKind, GrammarError, Segment};

/// What every grammar parser returns: nom's `IResult` over bytes, with a [`GrammarError`].
pub type ParseResult<'a, O> = nom::IResult<&'a [u8], O, GrammarError>;

/// Runs `parser` on `input` and locates its error from the start of `input`: the finishing
/// step of a parse (as nom's `Finish`), after which an error says its offset, construct path
/// and what was expected.
///
/// ```
/// use gguf_grammar::grammar::{finish, header::header};
///
/// let err = finish(header(None), b"GGUF\x03\0\0\0\x02\0").unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "offset 0x8 (8): header.tensor_count: input ends inside the tensor count (at least 14 more bytes needed)"
/// );
/// ```
pub fn finish<'a, O>(
    mut parser: impl FnMut(&'a [u8]) -> ParseResult<'a, O>,
    input: &'a [u8],
) -> Result<(&'a [u8], O), Error> {
    parser(input).map_err(|err| match err {
        nom::Err::Error(e) | nom::Err::Failure(e) => e.located(input.len()),
        // The crate's parsers turn a short input into an error; nom's streaming
        // combinators in a user's parser may not.
        nom::Err::Incomplete(needed) => {
            let needed = match needed {
                nom::Needed::Size(n) => n.get() as u64,
                nom::Needed::Unknown => 1,
            };
            GrammarError::at(&[], truncated_kind("input", needed)).located(input.len())
        }
    })
}

/// A GGUF version whose layout is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    /// GGUF v1: counts, string lengths, array lengths and dims are u32.
    V1 = 1,
    /// GGUF v2: as v1 but those widths are u64.
    V2 = 2,
    /// GGUF v3: as v2 (v3 added big-endian support).
    V3 = 3,
}

impl Version {
    /// The version number as stored in the file.
    pub fn number(self) -> u32 {
        self as u32
    }

    /// The version with number `n`, if its layout is known.
    pub fn from_number(n: u32) -> Option<Self> {
        match n {
            1 => Some(Version::V1),
            2 => Some(Version::V2),
            3 => Some(Version::V3),
            _ => None,
        }
    }
}

/// The version number, as stored in the file (`3` for [`Version::V3`]).
impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.number())
    }
}

/// What every parser needs to know about the file: version (field widths) and byte order.
///
/// ```
/// use gguf_grammar::grammar::{Ctx, Endian, Version};
///
/// let ctx = Ctx { version: Version::V1, endian: Endian::Big };
/// assert_eq!(ctx.count_width(), 4); // v1 counts are u32
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ctx {
    /// Field widths follow the version.
    pub version: Version,
    /// Byte order of every multi-byte field.
    pub endian: Endian,
}

macro_rules! fixed_width_reader {
    ($name:ident, $ty:ty) => {
        #[doc = concat!("Reads a `", stringify!($ty), "` in the context's byte order; `what` names the field in errors.")]
        #[inline]
        pub(crate) fn $name<'a>(self, input: &'a [u8], what: &'static str) -> ParseResult<'a, $ty> {
            field(input, what, number::$name(self.endian.into()))
        }
    };
    ($name:ident, $ty:ty, single byte) => {
        #[doc = concat!("Reads a `", stringify!($ty), "`; `what` names the field in errors.")]
        #[inline]
        pub(crate) fn $name<'a>(self, input: &'a [u8], what: &'static str) -> ParseResult<'a, $ty> {
            field(input, what, number::$name)
        }
    };
}

impl Ctx {
    /// Little-endian GGUF v3, what llama.cpp writes today.
    pub const V3_LE: Ctx = Ctx {
        version: Version::V3,
        endian: Endian::Little,
    };

    fixed_width_reader!(u8, u8, single byte);
    fixed_width_reader!(i8, i8, single byte);
    fixed_width_reader!(u16, u16);
    fixed_width_reader!(i16, i16);
    fixed_width_reader!(u32, u32);
    fixed_width_reader!(i32, i32);
    fixed_width_reader!(u64, u64);
    fixed_width_reader!(i64, i64);
    fixed_width_reader!(f32, f32);
    fixed_width_reader!(f64, f64);

    /// Reads a count, length or dim: u32 in v1, u64 in v2 and v3.
    #[inline]
    pub(crate) fn count<'a>(self, input: &'a [u8], what: &'static str) -> ParseResult<'a, u64> {
        field(input, what, count(self))
    }

    /// Bytes a count, length or dim takes: 4 in v1, 8 in v2 and v3.
    pub fn count_width(self) -> u64 {
        LengthPrefix::of(self).width() as u64
    }
}

/// How a count, length or dim is stored: u32 in v1, u64 in v2 and v3, in the file's byte
/// order. The one place that decides a count's width; every count is read through it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LengthPrefix {
    U32Le,
    U32Be,
    U64Le,
    U64Be,
}

impl LengthPrefix {
    /// The prefix of `ctx`'s version and byte order.
    #[inline]
    pub(crate) fn of(ctx: Ctx) -> Self {
        match (ctx.version, ctx.endian) {
            (Version::V1, Endian::Little) => LengthPrefix::U32Le,
            (Version::V1, Endian::Big) => LengthPrefix::U32Be,
            (Version::V2 | Version::V3, Endian::Little) => LengthPrefix::U64Le,
            (Version::V2 | Version::V3, Endian::Big) => LengthPrefix::U64Be,
        }
    }

    /// Bytes the prefix takes.
    #[inline]
    pub(crate) fn width(self) -> usize {
        match self {
            LengthPrefix::U32Le | LengthPrefix::U32Be => 4,
            LengthPrefix::U64Le | LengthPrefix::U64Be => 8,
        }
    }

    /// The number at the start of `input` and what follows it; `None` if `input` is shorter
    /// than the prefix.
    #[inline(always)]
    pub(crate) fn read(self, input: &[u8]) -> Option<(u64, &[u8])> {
        self.read_then(input, |n, rest| Some((n, rest)))
    }

    /// One step of every walk over string elements: the string at the start of `input` and
    /// what follows it; `None` if it does not fit.
    #[inline(always)]
    pub(crate) fn split_string(self, input: &[u8]) -> Option<(&[u8], &[u8])> {
        self.read_then(input, |len, rest| match usize::try_from(len) {
            Ok(n) if n <= rest.len() => Some(rest.split_at(n)),
            _ => None,
        })
    }

    /// [`LengthPrefix::split_string`] over text: the string at the start of `input` and what
    /// follows it; `None` if it does not fit or does not start and end on character boundaries.
    #[inline(always)]
    pub(crate) fn split_text(self, input: &str) -> Option<(&str, &str)> {
        let width = self.width();
        self.read_then(input.as_bytes(), |len, _| {
            let text = input.get(width..)?;
            let n = usize::try_from(len).ok()?;
            text.is_char_boundary(n).then(|| text.split_at(n))
        })
    }

    /// Reads the number at the start of `input` and passes it and what follows to `then`,
    /// inside each width's own branch (so a caller's loop has no shared tail to merge).
    #[inline(always)]
    fn read_then<'a, R>(
        self,
        input: &'a [u8],
        then: impl Fn(u64, &'a [u8]) -> Option<R>,
    ) -> Option<R> {
        match self {
            LengthPrefix::U32Le => {
                read_prefix(input, |b: [u8; 4]| Little.read::<u32>(&b).into(), then)
            }
            LengthPrefix::U32Be => {
                read_prefix(input, |b: [u8; 4]| Big.read::<u32>(&b).into(), then)
            }
            LengthPrefix::U64Le => read_prefix(input, |b: [u8; 8]| Little.read(&b), then),
            LengthPrefix::U64Be => read_prefix(input, |b: [u8; 8]| Big.read(&b), then),
        }
    }

    /// Calls `f` with `self` as a constant, so that a loop in `f` (inlined) is compiled once
    /// per width and byte order, without a match per element.
    #[inline(always)]
    pub(crate) fn specialise<R>(self, f: impl FnOnce(Self) -> R) -> R {
        match self {
            LengthPrefix::U32Le => f(LengthPrefix::U32Le),
            LengthPrefix::U32Be => f(LengthPrefix::U32Be),
            LengthPrefix::U64Le => f(LengthPrefix::U64Le),
            LengthPrefix::U64Be => f(LengthPrefix::U64Be),
        }
    }
}

/// Whether every byte of a length prefix holding `len` is ASCII (< 0x80), in either width
/// and byte order.
#[inline(always)]
pub(crate) fn ascii_length(len: u64) -> bool {
    len & 0x8080_8080_8080_8080 == 0
}

#[inline(always)]
fn read_prefix<'a, const N: usize, R>(
    input: &'a [u8],
    decode: impl Fn([u8; N]) -> u64,
    then: impl Fn(u64, &'a [u8]) -> Option<R>,
) -> Option<R> {
    let (head, rest) = input.split_first_chunk::<N>()?;
    then(decode(*head), rest)
}

/// nom's streaming reader of a count, length or dim in `ctx`'s width and byte order (a short
/// input is `Incomplete`, as with nom's number parsers). Generic over the error type, as
/// nom-derive's records that use it (`#[nom(Parse = "count(ctx)")]`) require.
pub(crate) fn count<'a, E: nom::error::ParseError<&'a [u8]>>(
    ctx: Ctx,
) -> impl Fn(&'a [u8]) -> nom::IResult<&'a [u8], u64, E> {
    let prefix = LengthPrefix::of(ctx);
    move |input| match prefix.read(input) {
        Some((n, rest)) => Ok((rest, n)),
        None => Err(nom::Err::Incomplete(nom::Needed::new(
            prefix.width() - input.len(),
        ))),
    }
}

fn truncated_kind(what: &'static str, needed: u64) -> ErrorKind {
    ErrorKind::Truncated {
        construct: what,
        needed,
    }
}

/// Reads the field `what` with one of nom's streaming parsers; a short input becomes an
/// error at the field that says how many bytes are missing.
#[inline]
fn field<'a, O>(
    input: &'a [u8],
    what: &'static str,
    parser: impl FnOnce(&'a [u8]) -> ParseResult<'a, O>,
) -> ParseResult<'a, O> {
    parser(input).map_err(|err| match err {
        nom::Err::Incomplete(needed) => {
            let needed = match needed {
                nom::Needed::Size(n) => n.get() as u64,
                nom::Needed::Unknown => 1,
            };
            nom::Err::Error(GrammarError::at(input, truncated_kind(what, needed)))
        }
        other => other,
    })
}

/// Which field of a nom-derive record is being read. Each field of a record names itself
/// beside its declaration, with its construct-path segment (if it adds one) and what a
/// truncation error calls it:
/// `#[nom(PreExec = "at.enter(i, Some(\"tensor_count\"), \"tensor count\");")]`.
#[derive(Default)]
pub(crate) struct FieldAt(Cell<Option<Field>>);

#[derive(Clone, Copy)]
struct Field {
    segment: Option<&'static str>,
    what: &'static str,
    /// Input bytes left where the field starts.
    remaining: usize,
}

impl FieldAt {
    /// Called by a field's `PreExec`, with the input the field starts at.
    #[inline(always)]
    pub(crate) fn enter(&self, input: &[u8], segment: Option<&'static str>, what: &'static str) {
        let remaining = input.len();
        self.0.set(Some(Field {
            segment,
            what,
            remaining,
        }));
    }
}

/// Reads a nom-derive record of fixed-width fields with `parse` (the record's derived
/// parser, given the tracker its fields enter). An input that ends inside a field is an
/// error at that field, in the path under `segment`, counting the bytes missing up to the
/// end of the record: its size is what `parse` reads of the input padded with zeros.
#[inline]
pub(crate) fn read_record<'a, O>(
    input: &'a [u8],
    segment: fn(&'static str) -> Segment,
    parse: impl for<'i> Fn(&'i [u8], &FieldAt) -> nom::IResult<&'i [u8], O, GrammarError>,
) -> ParseResult<'a, O> {
    let at = FieldAt::default();
    match parse(input, &at) {
        Err(nom::Err::Incomplete(needed)) => {
            let mut padded = [0; 64];
            let n = input.len().min(padded.len());
            padded[..n].copy_from_slice(&input[..n]);
            let needed = match parse(&padded, &FieldAt::default()) {
                Ok((rest, _)) => (padded.len() - rest.len()).saturating_sub(input.len()) as u64,
                Err(_) => match needed {
                    nom::Needed::Size(n) => n.get() as u64,
                    nom::Needed::Unknown => 1,
                },
            };
            let Some(field) = at.0.get() else {
                return Err(nom::Err::Error(GrammarError::at(
                    input,
                    truncated_kind("input", needed),
                )));
            };
            let kind = truncated_kind(field.what, needed.max(1));
            let e = GrammarError {
                kind,
                remaining: field.remaining as u64,
                path: Default::default(),
            };
            Err(nom::Err::Error(match field.segment {
                Some(name) => e.within(segment(name)),
                None => e,
            }))
        }
        parsed => parsed,
    }
}

/// Splits `len` bytes off the front of `input`, or fails with [`ErrorKind::LengthPastEnd`]
/// reported at `length_field`, where the untrusted `declared` length was read from.
#[inline]
pub(crate) fn take_declared<'a>(
    input: &'a [u8],
    len: u64,
    declared: u64,
    what: &'static str,
    length_field: &[u8],
) -> ParseResult<'a, &'a [u8]> {
    match usize::try_from(len) {
        Ok(n) if n <= input.len() => Ok((&input[n..], &input[..n])),
        _ => Err(nom::Err::Error(GrammarError::at(
            length_field,
            ErrorKind::LengthPastEnd {
                construct: what,
                declared,
                available: input.len() as u64,
                needed: len - input.len() as u64,
            },
        ))),
    }
}

/// Rounds `offset` up to a multiple of `alignment`; `None` on overflow or a zero alignment.
///
/// ```
/// use gguf_grammar::grammar::align_up;
/// assert_eq!(align_up(64, 32), Some(64));
/// assert_eq!(align_up(65, 32), Some(96));
/// assert_eq!(align_up(49, 48), Some(96));
/// assert_eq!(align_up(u64::MAX, 32), None);
/// assert_eq!(align_up(64, 0), None);
/// ```
pub fn align_up(offset: u64, alignment: u64) -> Option<u64> {
    match offset.checked_rem(alignment)? {
        0 => Some(offset),
        rem => offset.checked_add(alignment - rem),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_follow_byte_order_and_version_width() {
        let bytes = [1, 0, 0, 0, 0, 0, 0, 2, 9];
        let le1 = Ctx {
            version: Version::V1,
            endian: Endian::Little,
        };
        let be3 = Ctx {
            version: Version::V3,
            endian: Endian::Big,
        };
        assert_eq!(le1.count(&bytes, "n").unwrap(), (&bytes[4..], 1));
        assert_eq!(
            be3.count(&bytes, "n").unwrap(),
            (&bytes[8..], 0x0100_0000_0000_0002)
        );
        assert_eq!(Ctx::V3_LE.u16(&bytes, "n").unwrap().1, 1);
        assert_eq!(be3.u16(&bytes, "n").unwrap().1, 0x0100);
    }

    #[test]
    fn short_reads_say_how_much_is_missing() {
        let err = Ctx::V3_LE.u64(&[1, 2, 3], "kv count").unwrap_err();
        let nom::Err::Error(e) = err else { panic!() };
        let e = e.located(10);
        assert_eq!(
            e.kind,
            ErrorKind::Truncated {
                construct: "kv count",
                needed: 5
            }
        );
        assert_eq!(e.offset, 7);
    }

    #[test]
    fn declared_lengths_past_the_end_are_errors_not_allocations() {
        let err = take_declared(&[1, 2, 3], u64::MAX, u64::MAX, "string", &[]).unwrap_err();
        let nom::Err::Error(e) = err else { panic!() };
        assert_eq!(e.kind.bytes_needed(), Some(u64::MAX - 3));
        assert_eq!(
            take_declared(&[1, 2, 3], 2, 2, "s", &[]).unwrap(),
            (&[3][..], &[1, 2][..])
        );
    }
}

/// Hand-built bytes for the construct tests, in any version and byte order.
#[cfg(test)]
pub(crate) mod test_bytes {
    use super::{Ctx, Endian, Version};

    /// Every version in both byte orders.
    pub fn all_ctx() -> impl Iterator<Item = Ctx> {
        [Endian::Little, Endian::Big]
            .into_iter()
            .flat_map(|endian| {
                [Version::V1, Version::V2, Version::V3]
                    .into_iter()
                    .map(move |version| Ctx { version, endian })
            })
    }

    /// A byte buffer that encodes fields in `ctx`'s widths and byte order.
    pub struct Enc {
        pub ctx: Ctx,
        pub bytes: Vec<u8>,
    }

    impl Enc {
        pub fn new(ctx: Ctx) -> Self {
            Enc {
                ctx,
                bytes: Vec::new(),
            }
        }

        /// Appends `be` or its reverse, as the byte order asks.
        pub fn raw(mut self, be: &[u8]) -> Self {
            match self.ctx.endian {
                Endian::Big => self.bytes.extend_from_slice(be),
                Endian::Little => self.bytes.extend(be.iter().rev()),
            }
            self
        }

        pub fn u32(self, v: u32) -> Self {
            self.raw(&v.to_be_bytes())
        }

        pub fn count(self, v: u64) -> Self {
            match self.ctx.version {
                Version::V1 => self.u32(v as u32),
                _ => self.raw(&v.to_be_bytes()),
            }
        }

        pub fn string(self, s: &[u8]) -> Self {
            let mut enc = self.count(s.len() as u64);
            enc.bytes.extend_from_slice(s);
            enc
        }
    }
}
