//! Parse errors: what was expected, where, and inside which construct.
//!
//! Every error carries a byte offset and a [`ConstructPath`] naming the construct it occurred in,
//! e.g. `kv[27] "tokenizer.ggml.tokens"[40213]` or `tensor[3] "blk.0.attn_q.weight".dims[1]`.
//!
//! An [`Error`]'s offset is counted from the start of the input the parser was given: the file
//! for [`crate::Gguf::parse`], the construct's own bytes for a construct parser of
//! [`crate::grammar`] called on its own. Inside the grammar, where each parser sees only the
//! rest of its input, an error travels as an `Unlocated` (crate-private) that counts the bytes
//! *remaining* after the failure point, and each public parser turns it into an [`Error`].

use std::fmt;

/// A GGUF parse error: kind, byte offset and construct path.
///
/// ```
/// use gguf_grammar::{Gguf, ErrorKind};
///
/// let err = Gguf::parse(b"GGML\x03\0\0\0").unwrap_err();
/// assert_eq!(err.offset, 0);
/// assert!(matches!(err.kind, ErrorKind::BadMagic { .. }));
/// assert_eq!(err.to_string(), "offset 0x0 (0): header.magic: expected \"GGUF\", found \"GGML\"");
/// ```
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("offset {offset:#x} ({offset}): {}{kind}", PathPrefix(path))]
pub struct Error {
    /// What went wrong.
    pub kind: ErrorKind,
    /// Byte offset of the failure, from the start of the input the parser was given.
    pub offset: u64,
    /// The construct the failure occurred in, outermost first.
    pub path: ConstructPath,
}

/// The located message, as [`fmt::Display`] prints it, so that `fn main() -> Result<..>`
/// and `unwrap()` show where and why.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The ways GGUF bytes can fail to decode.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file does not start with the bytes `GGUF`.
    BadMagic {
        /// The first four bytes found instead (fewer if the input is shorter).
        found: Vec<u8>,
    },
    /// A version other than 1, 2 or 3: its layout is unknown.
    UnsupportedVersion {
        /// The version as read in the detected byte order.
        version: u32,
    },
    /// A value type tag outside 0..=12.
    UnknownValueType {
        /// The tag read.
        tag: u32,
    },
    /// The input ends inside a fixed-size field.
    Truncated {
        /// The field being read, e.g. `"string length"`.
        construct: &'static str,
        /// At least this many more bytes past the end of the input are needed to finish
        /// what was being parsed (the field's missing bytes plus the least the fields and
        /// constructs after it take).
        needed: u64,
    },
    /// A length or count read from the file claims more bytes than the input has left.
    LengthPastEnd {
        /// What the length counts, e.g. `"string"` or `"array of uint32"`.
        construct: &'static str,
        /// The declared length (in bytes for strings, in elements for arrays).
        declared: u64,
        /// Bytes left in the input after the length field.
        available: u64,
        /// At least this many more bytes are needed to finish what was being parsed
        /// (saturated at `u64::MAX`).
        needed: u64,
    },
    /// Arrays nested deeper than [`crate::grammar::value::MAX_NESTING`].
    NestingTooDeep {
        /// The depth limit.
        limit: u32,
    },
    /// An error from a nom combinator (should not occur with the crate's own parsers).
    Nom(nom::error::ErrorKind),
}

impl ErrorKind {
    /// For a truncated input, how many more bytes past its end are needed at least;
    /// `None` for errors more bytes cannot fix. The streaming reader is driven by this.
    pub fn bytes_needed(&self) -> Option<u64> {
        match *self {
            ErrorKind::Truncated { needed, .. } | ErrorKind::LengthPastEnd { needed, .. } => {
                Some(needed)
            }
            _ => None,
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::BadMagic { found } => {
                write!(f, "expected \"GGUF\", found \"{}\"", found.escape_ascii())
            }
            ErrorKind::UnsupportedVersion { version } => {
                write!(f, "unsupported version {version} (known: 1, 2, 3)")
            }
            ErrorKind::UnknownValueType { tag } => {
                write!(f, "unknown value type {tag} (known: 0..=12)")
            }
            ErrorKind::Truncated { construct, needed } => write!(
                f,
                "input ends inside the {construct} (at least {needed} more byte{} needed)",
                if *needed == 1 { "" } else { "s" }
            ),
            ErrorKind::LengthPastEnd {
                construct,
                declared,
                available,
                ..
            } => write!(
                f,
                "{construct} length {declared} exceeds the {available} bytes left"
            ),
            ErrorKind::NestingTooDeep { limit } => {
                write!(f, "arrays nested more than {limit} deep")
            }
            ErrorKind::Nom(kind) => write!(f, "{}", kind.description()),
        }
    }
}

/// Where in the file's structure an error occurred: a list of segments, outermost first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConstructPath(pub Vec<Segment>);

/// One step of a [`ConstructPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A part of the header: `header.magic`, `header.version`, ...
    Header(&'static str),
    /// The n-th key/value pair: `kv[n]`.
    Kv(u64),
    /// The n-th tensor info: `tensor[n]`.
    Tensor(u64),
    /// A key or tensor name, shown quoted (lossily decoded for display only).
    Name(String),
    /// The n-th element of an array: `[n]`.
    Element(u64),
    /// The n-th dimension of a tensor info: `.dims[n]`.
    Dim(u64),
    /// A named field: `.key`, `.value`, `.name`, `.type`, `.offset`.
    Field(&'static str),
}

impl fmt::Display for ConstructPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Header(field) => write!(f, "header.{field}")?,
                Segment::Kv(n) => write!(f, "kv[{n}]")?,
                Segment::Tensor(n) => write!(f, "tensor[{n}]")?,
                Segment::Name(name) => {
                    // Names arrive displayed (invalid UTF-8 already as `\xNN`): quote them
                    // without escaping those backslashes a second time; every other
                    // character goes through the one terminal escape.
                    f.write_str(if i == 0 { "\"" } else { " \"" })?;
                    for c in name.chars() {
                        match c {
                            '"' => f.write_str("\\\"")?,
                            '\\' => f.write_str("\\")?,
                            c => {
                                let mut utf8 = [0; 4];
                                let text = c.encode_utf8(&mut utf8).as_bytes();
                                write!(f, "{}", crate::escape::Terminal(text))?
                            }
                        }
                    }
                    f.write_str("\"")?;
                }
                Segment::Element(n) => write!(f, "[{n}]")?,
                Segment::Dim(n) => write!(f, ".dims[{n}]")?,
                Segment::Field(field) => write!(f, ".{field}")?,
            }
        }
        Ok(())
    }
}

struct PathPrefix<'p>(&'p ConstructPath);

impl fmt::Display for PathPrefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 .0.is_empty() {
            Ok(())
        } else {
            write!(f, "{}: ", self.0)
        }
    }
}

/// An error inside the grammar, not yet located: `remaining` counts the input bytes left
/// after the failure point, which is all a parser that sees only the rest of its input can
/// know. The public parsers turn it into an [`Error`] with [`Unlocated::located`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unlocated {
    pub(crate) kind: ErrorKind,
    pub(crate) remaining: u64,
    pub(crate) path: ConstructPath,
}

impl Unlocated {
    /// An error at the start of `input`.
    pub(crate) fn at(input: &[u8], kind: ErrorKind) -> Self {
        Unlocated {
            kind,
            remaining: input.len() as u64,
            path: ConstructPath::default(),
        }
    }

    /// The error with its offset counted from the start of an input of `input_len` bytes:
    /// the input the outermost parser was called with.
    pub(crate) fn located(self, input_len: usize) -> Error {
        Error {
            kind: self.kind,
            offset: (input_len as u64).saturating_sub(self.remaining),
            path: self.path,
        }
    }

    /// For a truncation, raises the bytes still needed by `more` (what the constructs after
    /// the truncated one take at least).
    pub(crate) fn needs_more(mut self, more: u64) -> Self {
        if let ErrorKind::Truncated { needed, .. } | ErrorKind::LengthPastEnd { needed, .. } =
            &mut self.kind
        {
            *needed = needed.saturating_add(more);
        }
        self
    }

    /// Prepends a segment to the path (errors gain context as they travel outwards).
    pub(crate) fn within(mut self, segment: Segment) -> Self {
        self.path.0.insert(0, segment);
        self
    }
}

/// What nom-derive's records raise: `Complete` marks a field the input ends inside (see
/// `grammar::record`), anything else is a combinator failure.
impl<'a> nom::error::ParseError<&'a [u8]> for Unlocated {
    fn from_error_kind(input: &'a [u8], kind: nom::error::ErrorKind) -> Self {
        Unlocated::at(input, ErrorKind::Nom(kind))
    }

    fn append(_input: &'a [u8], _kind: nom::error::ErrorKind, other: Self) -> Self {
        other
    }
}

/// Adds the segment `make` builds (only on failure) to the path of a nom error.
pub(crate) fn within(
    make: impl Fn() -> Segment,
) -> impl Fn(nom::Err<Unlocated>) -> nom::Err<Unlocated> {
    move |err| err.map(|e| e.within(make()))
}

/// Why a typed getter such as [`crate::Gguf::get_str`] returned no value.
///
/// ```
/// use gguf_grammar::{error::GetError, write::GgufBuilder, Ctx, Gguf, ValueType};
///
/// let bytes = GgufBuilder::new(Ctx::V3_LE).set("general.name", 7u32).build().unwrap();
/// let gguf = Gguf::parse(&bytes).unwrap();
/// assert_eq!(
///     gguf.get_str("general.name").unwrap_err(),
///     GetError::WrongType { key: "general.name".into(), expected: "a string", found: ValueType::U32 }
/// );
/// assert_eq!(gguf.get_str("general.nme").unwrap_err().to_string(), "no key \"general.nme\"");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GetError {
    /// No key/value pair has the key.
    #[error("no key {key:?}")]
    Missing {
        /// The key asked for.
        key: String,
    },
    /// The first pair with the key holds a value of another type (or a number out of the
    /// asked type's range).
    #[error("key {key:?} holds {found}, not {expected}")]
    WrongType {
        /// The key asked for.
        key: String,
        /// What the getter reads, e.g. `"an unsigned integer"`.
        expected: &'static str,
        /// The type of the value stored.
        found: crate::ValueType,
    },
    /// The first pair with the key holds a string that is not valid UTF-8.
    #[error("key {key:?} holds a string that is not UTF-8")]
    NotUtf8 {
        /// The key asked for.
        key: String,
    },
}

/// Why a GGUF file could not be read: the reader failed, or its bytes are not GGUF.
/// Its `Debug` is its message, as for [`Error`].
#[derive(thiserror::Error)]
pub enum ReadError {
    /// Reading failed.
    #[error("read error: {0}")]
    Io(#[from] std::io::Error),
    /// The bytes are not a GGUF header (including: the input ended inside it).
    #[error(transparent)]
    Parse(#[from] Error),
}

impl fmt::Debug for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
