//! The writer: serialises a document in any version and byte order, byte-exact for every
//! file the parser accepts.
//!
//! One type does all writing: [`GgufBuilder`]. Start it empty ([`GgufBuilder::new`]) to create
//! a file, or from a parsed file ([`GgufBuilder::from_gguf`]) to edit or convert one; change
//! its key/values and tensor descriptors (plain public fields, plus helpers); then
//! [`build`](GgufBuilder::build) a `Vec<u8>` or [`write_to`](GgufBuilder::write_to) any
//! [`Write`]. [`write()`] is `GgufBuilder::from_gguf(gguf).build()`.
//!
//! # What a written file holds
//!
//! `header kv* tensor_info* padding data`, encoded with the same [`Ctx`] (version widths and
//! byte order) the parser reads with. The alignment is the parser's: the first
//! `general.alignment` key when it is a non-zero u32, else 32.
//!
//! The **data region** is the source file's bytes from its tensor-data start to its end, kept
//! verbatim (tensor bytes, padding between tensors, anything trailing), followed by the data
//! of tensors added with [`tensor`](GgufBuilder::tensor) or
//! [`tensor_at`](GgufBuilder::tensor_at). Relative tensor offsets therefore stay valid
//! whatever happens to the header. Tensor data is never byte-swapped: converting a file to
//! the other byte order converts its header only (the layout of a quantised block is
//! type-specific and outside the container).
//!
//! The **padding** between the tensor infos and the data region is the source file's padding,
//! byte for byte, when the new header has the source's length and alignment (so a round trip
//! is exact even for non-zero padding or a file that ends inside its padding); otherwise it is
//! zeros up to the re-aligned data start. A file without any data region ends right after its
//! tensor infos, as llama.cpp's vocabulary files do.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use gguf_grammar::write::{GgufBuilder, OwnedValue};
//! use gguf_grammar::{Ctx, Endian, GgmlType, Gguf, ValueType, Version};
//!
//! let weights: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0].iter().flat_map(|x| x.to_le_bytes()).collect();
//! let bytes = GgufBuilder::new(Ctx::V3_LE)
//!     .kv("general.architecture", "llama")
//!     .kv("llama.block_count", 1u32)
//!     .kv("tokenizer.ggml.tokens", OwnedValue::array(ValueType::String, ["<s>", "</s>"]))
//!     .alignment(64)
//!     .tensor("output_norm.weight", &[4], GgmlType::F32, &weights)
//!     .build()?;
//!
//! let gguf = Gguf::parse(&bytes)?;
//! assert_eq!((gguf.alignment, gguf.tensor_data_offset % 64), (64, 0));
//! let t = gguf.tensor("output_norm.weight").unwrap();
//! let start = t.data_offset.unwrap() as usize;
//! assert_eq!(&bytes[start..start + 16], &weights[..]);
//!
//! // Byte-exact round trip, and conversion to big-endian v2 and back.
//! assert_eq!(gguf_grammar::write::write(&gguf)?, bytes);
//! let big = GgufBuilder::from_gguf(&gguf)
//!     .ctx(Ctx { version: Version::V2, endian: Endian::Big })
//!     .build()?;
//! let back = GgufBuilder::from_gguf(&Gguf::parse(&big)?).ctx(Ctx::V3_LE).build()?;
//! assert_eq!(back, bytes);
//! # Ok(()) }
//! ```

use std::borrow::Cow;
use std::io::{Read, Write};

use crate::document::Gguf;
use crate::ggml_type::GgmlType;
use crate::grammar::header::MAGIC;
use crate::grammar::value::{value_enum, with_fixed_size_variants, ElementType, MAX_NESTING};
use crate::grammar::{align_up, Ctx, Endian, Version};
use crate::{Array, Value};

/// The largest alignment the writer pads to: 16 MiB (2^24).
///
/// ggml accepts any power of two, and the padding it implies is at most `alignment - 1`
/// zero bytes. Readers align tensor data for SIMD loads (ggml writes 32) or for memory
/// mapping (pages of 4 KiB to 64 KiB, huge pages of 2 MiB); 16 MiB leaves room above every
/// one of those while keeping a corrupt or mistyped value (`general.alignment=2147483648`)
/// from turning a small file into gigabytes of zeros.
pub const MAX_ALIGNMENT: u64 = 1 << 24;

/// Why a document could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// A count, length or dim does not fit the version's width (u32 in v1).
    #[error("{what} {value} does not fit in the {width}-byte field of GGUF v{version}")]
    TooLarge {
        /// The field, e.g. `"string length"`.
        what: &'static str,
        /// The value that does not fit.
        value: u64,
        /// The field's width in bytes.
        width: u64,
        /// The version written.
        version: u32,
    },
    /// Arrays nested deeper than the parser reads ([`MAX_NESTING`]).
    #[error("arrays nested more than {limit} deep")]
    NestingTooDeep {
        /// The depth limit.
        limit: u32,
    },
    /// A tensor's data would be placed before the end of the source file's data region,
    /// which is kept verbatim.
    #[error(
        "tensor {name:?}: data at offset {offset} overlaps the kept data region (ends at {kept})"
    )]
    OverlapsKeptData {
        /// The tensor's name (lossily decoded).
        name: String,
        /// The requested relative offset.
        offset: u64,
        /// Length of the kept data region.
        kept: u64,
    },
    /// The source file does not hold every tensor's bytes (its data region ends early or its
    /// data start lies past its end): writing would silently drop tensor data. Call
    /// [`GgufBuilder::allow_missing_data`] to write the descriptors anyway.
    #[error("tensor {name:?}: its data ({needed} bytes at relative offset {offset}) is not in the source, whose data region holds {have} bytes; writing would lose it")]
    MissingTensorData {
        /// The first tensor whose bytes are missing (lossily decoded).
        name: String,
        /// Its relative offset.
        offset: u64,
        /// Its size in bytes (0 when its type has no known size).
        needed: u64,
        /// Length of the source's data region.
        have: u64,
    },
    /// The alignment differs from the source's while tensors still point into the kept data
    /// region: their offsets follow the old alignment, which ggml checks
    /// (`tensor-offset-not-sequential`), and the writer does not move tensor data.
    #[error("the alignment changes from {from} to {to} but the tensor data keeps the old layout; remove the tensors or keep the alignment")]
    AlignmentChanged {
        /// The source's alignment.
        from: u64,
        /// The new alignment.
        to: u64,
    },
    /// Zero padding would be written for an alignment above [`MAX_ALIGNMENT`].
    #[error("alignment {alignment} is above the largest this writer pads to ({MAX_ALIGNMENT})")]
    AlignmentTooLarge {
        /// The requested alignment.
        alignment: u64,
    },
    /// An offset computation overflowed u64.
    #[error("tensor {name:?}: offset overflows")]
    OffsetOverflow {
        /// The tensor's name (lossily decoded).
        name: String,
    },
    /// The output could not be written.
    #[error("write error: {0}")]
    Io(#[from] std::io::Error),
    /// The source file's data region could not be copied (see
    /// [`GgufBuilder::from_header_and_file`]): it shrank, or reading it failed.
    #[error("tensor data: {0}")]
    Source(crate::file_range::RangeError),
    /// The file written by [`GgufBuilder::write_file`] is not what was meant to be written.
    #[error("{0}")]
    Verify(VerifyError),
}

with_fixed_size_variants!(value_enum! {
    /// A metadata value you create or edit: owns its strings and array elements.
    ///
    /// The parser's [`Value`] borrows from the file; `OwnedValue::from(value)` copies one.
    /// Conversions exist from every scalar Rust type, `bool`, `&str` and `String`.
    ///
    /// ```
    /// use gguf_grammar::write::OwnedValue;
    /// use gguf_grammar::ValueType;
    ///
    /// assert_eq!(OwnedValue::from(7u32), OwnedValue::U32(7));
    /// assert_eq!(OwnedValue::from(true), OwnedValue::Bool(1));
    /// assert_eq!(OwnedValue::from("hi"), OwnedValue::String(b"hi".to_vec()));
    /// let scores = OwnedValue::array(ValueType::F32, [0.5f32, -1.0]);
    /// assert_eq!(scores.value_type(), ValueType::Array);
    /// ```
    #[derive(Clone, Debug, PartialEq)]
    pub enum OwnedValue {
        /// string: the bytes written (conventionally UTF-8)
        String(Vec<u8>) => String,
        /// array
        Array(OwnedArray) => Array,
        /// an array kept as a parsed file's element bytes (what [`GgufBuilder::from_gguf`] keeps)
        RawArray(RawArray) => Array,
    }
});

/// An owned array: the element type written in the file and the elements.
///
/// Elements are written as they are: an element whose type is not `element_type` gives a
/// file that says one type and stores another (which is how tests build such files).
#[derive(Clone, Debug, PartialEq)]
pub struct OwnedArray {
    /// The element type tag written.
    pub element_type: ElementType,
    /// The elements.
    pub elements: Vec<OwnedValue>,
}

/// An array copied from a parsed file as its element bytes, not as one [`OwnedValue`] per
/// element: a 10 MB array costs 10 MB, not 32 bytes per element. It is written as the same
/// bytes when the output has the source's version and byte order, and re-encoded element by
/// element otherwise.
///
/// ```
/// use gguf_grammar::write::{GgufBuilder, OwnedValue, RawArray};
/// use gguf_grammar::{Ctx, Endian, Gguf, Value};
///
/// let bytes = GgufBuilder::new(Ctx::V3_LE).kv("ids", OwnedValue::array(gguf_grammar::ValueType::U16, [1u16, 2])).build().unwrap();
/// let gguf = Gguf::parse(&bytes).unwrap();
/// let raw = RawArray::new(gguf.get("ids").unwrap().as_array().unwrap());
/// assert_eq!(raw.array().iter().collect::<Vec<_>>(), [Value::U16(1), Value::U16(2)]);
/// let big = GgufBuilder::new(Ctx { endian: Endian::Big, ..Ctx::V3_LE })
///     .kv("ids", OwnedValue::RawArray(raw))
///     .build()
///     .unwrap();
/// let ids = Gguf::parse(&big).unwrap().get_array("ids").unwrap();
/// assert_eq!(ids.iter().collect::<Vec<_>>(), [Value::U16(1), Value::U16(2)]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RawArray {
    ctx: Ctx,
    element_type: ElementType,
    len: usize,
    elements: Vec<u8>,
}

impl RawArray {
    /// A copy of `array`'s element bytes.
    pub fn new(array: Array<'_>) -> Self {
        RawArray {
            ctx: array.ctx(),
            element_type: array.element_type(),
            len: array.len(),
            elements: array.raw_elements().to_vec(),
        }
    }

    /// The array, to decode its elements.
    pub fn array(&self) -> Array<'_> {
        Array::from_parsed(self.ctx, self.element_type, self.len, &self.elements)
    }
}

impl OwnedValue {
    /// An array of `element_type` holding `elements`.
    ///
    /// ```
    /// use gguf_grammar::write::OwnedValue;
    /// use gguf_grammar::ValueType;
    ///
    /// let empty = OwnedValue::array(ValueType::String, Vec::<OwnedValue>::new());
    /// let nested = OwnedValue::array(ValueType::Array, [
    ///     OwnedValue::array(ValueType::U8, [1u8, 2]),
    ///     OwnedValue::array(ValueType::U8, [3u8]),
    /// ]);
    /// # let _ = (empty, nested);
    /// ```
    pub fn array<T: Into<OwnedValue>>(
        element_type: impl Into<ElementType>,
        elements: impl IntoIterator<Item = T>,
    ) -> Self {
        OwnedValue::Array(OwnedArray {
            element_type: element_type.into(),
            elements: elements.into_iter().map(Into::into).collect(),
        })
    }

    /// A string from any bytes (not necessarily UTF-8).
    pub fn string(bytes: impl Into<Vec<u8>>) -> Self {
        OwnedValue::String(bytes.into())
    }
}

/// `From<Value>`: the fixed-size variants copied one to one, from the shared list.
macro_rules! owned_from_value {
    ($($(#[$doc:meta])* $fixed:ident($payload:ty),)*) => {
        impl From<Value<'_>> for OwnedValue {
            fn from(value: Value<'_>) -> Self {
                match value {
                    $(Value::$fixed(v) => OwnedValue::$fixed(v),)*
                    Value::String(s) => OwnedValue::String(s.as_bytes().to_vec()),
                    // The parse checked every element is present: the allocation is bounded
                    // by the input's length.
                    Value::Array(a) => OwnedValue::array(a.element_type(), a.iter()),
                }
            }
        }
    };
}

with_fixed_size_variants!(owned_from_value! {});

macro_rules! owned_from {
    ($($ty:ty => $variant:ident),* $(,)?) => {$(
        impl From<$ty> for OwnedValue {
            fn from(v: $ty) -> Self {
                OwnedValue::$variant(v)
            }
        }
    )*};
}

owned_from!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, f32 => F32,
    u64 => U64, i64 => I64, f64 => F64, OwnedArray => Array);

impl From<bool> for OwnedValue {
    fn from(v: bool) -> Self {
        OwnedValue::Bool(u8::from(v))
    }
}

impl From<&str> for OwnedValue {
    fn from(v: &str) -> Self {
        OwnedValue::String(v.as_bytes().to_vec())
    }
}

impl From<String> for OwnedValue {
    fn from(v: String) -> Self {
        OwnedValue::String(v.into_bytes())
    }
}

/// A key/value pair to write.
#[derive(Clone, Debug, PartialEq)]
pub struct OwnedKv {
    /// The key's bytes.
    pub key: Vec<u8>,
    /// The value.
    pub value: OwnedValue,
}

/// A tensor descriptor to write, with the data it brings (if any).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSpec<'a> {
    /// The name's bytes.
    pub name: Vec<u8>,
    /// Dimensions, ne0 first.
    pub dims: Vec<u64>,
    /// The ggml type id written.
    pub ggml_type: GgmlType,
    /// Offset relative to the data start; `None`: after the previous tensor's data, aligned.
    pub offset: Option<u64>,
    /// Bytes to place at the offset (empty for tensors whose data is in the kept region of
    /// a source file, or when only the descriptor is wanted).
    pub data: Cow<'a, [u8]>,
}

/// What is kept from the file a builder was made from.
#[derive(Clone, Debug, Default)]
struct Source<'a> {
    /// Offset of the end of the tensor infos.
    infos_end: u64,
    /// The file's alignment.
    alignment: u64,
    /// The bytes between the tensor infos and the data start (shorter if the file ends).
    padding: &'a [u8],
    /// The bytes from the data start to the end of the file.
    data: Kept<'a>,
    /// The first tensor whose bytes the data region does not wholly hold.
    missing: Option<Missing>,
}

/// Where the source's data region is: in memory, or in a file read with positioned reads.
#[derive(Clone, Copy, Debug)]
enum Kept<'a> {
    Bytes(&'a [u8]),
    File {
        file: &'a std::fs::File,
        start: u64,
        len: u64,
    },
}

impl Default for Kept<'_> {
    fn default() -> Self {
        Kept::Bytes(&[])
    }
}

impl Kept<'_> {
    fn len(&self) -> u64 {
        match *self {
            Kept::Bytes(bytes) => bytes.len() as u64,
            Kept::File { len, .. } => len,
        }
    }

    fn write_to(&self, out: &mut (impl Write + ?Sized)) -> Result<(), WriteError> {
        match *self {
            Kept::Bytes(bytes) => Ok(out.write_all(bytes)?),
            Kept::File { file, start, len } => crate::file_range::copy_range(file, start, len, out)
                .map_err(|e| match e {
                    crate::file_range::RangeError::Write(e) => WriteError::Io(e),
                    e => WriteError::Source(e),
                }),
        }
    }

    /// Whether `written` holds the region byte for byte at `at`; a file is read again to
    /// compare.
    fn matches(&self, written: Written<'_>, at: u64) -> Result<bool, VerifyError> {
        match (*self, written) {
            (Kept::Bytes(bytes), written) => written.holds(at, bytes),
            (Kept::File { file, start, len }, Written::File { file: copy, .. }) => {
                crate::file_range::holds_copy(copy, at, file, start, len).map_err(changed)
            }
            (Kept::File { file, start, len }, Written::Bytes(_)) => match written.region(at, len) {
                Some(copied) => crate::file_range::range_is(file, start, copied).map_err(changed),
                None => Ok(false),
            },
        }
    }
}

fn changed(e: crate::file_range::RangeError) -> VerifyError {
    VerifyError(format!("the source changed while being copied: {e}"))
}

/// The output [`GgufBuilder::verify`] checks: bytes in memory, or a file of `len` bytes read
/// with positioned reads (no memory map, so a file cut short meanwhile is an error, not a
/// SIGBUS).
#[derive(Clone, Copy)]
enum Written<'a> {
    Bytes(&'a [u8]),
    File { file: &'a std::fs::File, len: u64 },
}

impl Written<'_> {
    fn len(&self) -> u64 {
        match *self {
            Written::Bytes(bytes) => bytes.len() as u64,
            Written::File { len, .. } => len,
        }
    }

    /// The `len` bytes at `at` of written bytes in memory (`None` for a file, or when they
    /// end first).
    fn region(&self, at: u64, len: u64) -> Option<&[u8]> {
        let Written::Bytes(bytes) = *self else {
            return None;
        };
        let at = usize::try_from(at).ok()?;
        bytes.get(at..at.checked_add(usize::try_from(len).ok()?)?)
    }

    /// Whether the bytes at `at` are `expected` (`false` when the output ends first).
    fn holds(&self, at: u64, expected: &[u8]) -> Result<bool, VerifyError> {
        let len = expected.len() as u64;
        match *self {
            Written::Bytes(_) => Ok(self.region(at, len) == Some(expected)),
            Written::File { file, len: size } => {
                if !matches!(at.checked_add(len), Some(end) if end <= size) {
                    return Ok(false);
                }
                crate::file_range::range_is(file, at, expected).map_err(|e| match e {
                    crate::file_range::RangeError::Shrank { offset, len, end } => VerifyError(format!(
                        "it was cut short while being checked: it ends at byte {end}, inside the {len} bytes at offset {offset}"
                    )),
                    e => VerifyError(format!("reading it back: {e}")),
                })
            }
        }
    }

    /// Whether the `len` bytes at `at` are zeros, compared in pieces of at most
    /// [`crate::file_range::COPY_BUFFER`] bytes.
    fn holds_zeros(&self, at: u64, len: u64) -> Result<bool, VerifyError> {
        let zeros = vec![
            0u8;
            usize::try_from(len).map_or(crate::file_range::COPY_BUFFER, |n| n
                .min(crate::file_range::COPY_BUFFER))
        ];
        let mut done = 0;
        while done < len {
            let n = usize::try_from(len - done).map_or(zeros.len(), |left| left.min(zeros.len()));
            if !self.holds(at.saturating_add(done), &zeros[..n])? {
                return Ok(false);
            }
            done += n as u64;
        }
        Ok(true)
    }
}

/// The first tensor of `gguf` whose bytes a data region of `data_len` bytes does not hold.
fn first_missing(gguf: &Gguf<'_>, data_len: u64) -> Option<Missing> {
    gguf.tensors.iter().find_map(|t| {
        let needed = t.n_bytes.unwrap_or(0);
        // A tensor of unknown size is present when at least its start is.
        let end = t.info.offset.checked_add(needed.max(1));
        let present = end.is_some_and(|end| end <= data_len)
            || (needed == 0 && t.info.offset <= data_len && t.n_bytes.is_some());
        (!present).then(|| Missing {
            name: String::from_utf8_lossy(t.info.name.as_bytes()).into_owned(),
            offset: t.info.offset,
            needed,
        })
    })
}

/// A source tensor whose bytes are not in the source's data region.
#[derive(Clone, Debug)]
struct Missing {
    name: String,
    offset: u64,
    needed: u64,
}

/// Builds a GGUF file: key/values in order (duplicates allowed), tensor descriptors and data.
///
/// Methods that add or change things take `&mut self` and return it, so calls chain on a
/// temporary (`GgufBuilder::new(ctx).kv(..).build()`) and work on a variable alike.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use gguf_grammar::write::GgufBuilder;
/// use gguf_grammar::{Ctx, Gguf};
///
/// let bytes = std::fs::read("tests/conformance/cases/minimal-llama.gguf")?;
/// let gguf = Gguf::parse(&bytes)?;
///
/// // Edit: every tensor byte stays; the data start is re-aligned if the header size changes.
/// let mut edit = GgufBuilder::from_gguf(&gguf);
/// edit.set("general.name", "renamed").remove("tokenizer.ggml.scores");
/// edit.rename("general.architecture", "general.arch");
/// let edited = edit.build()?;
/// let back = Gguf::parse(&edited)?;
/// assert_eq!(back.get("general.name").and_then(|v| v.as_str()), Some("renamed"));
/// assert!(back.get("tokenizer.ggml.scores").is_none());
/// assert_eq!(back.get("general.arch").and_then(|v| v.as_str()), Some("llama"));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct GgufBuilder<'a> {
    /// Version and byte order written.
    pub ctx: Ctx,
    /// Key/value pairs in file order.
    pub kvs: Vec<OwnedKv>,
    /// Tensor descriptors in file order.
    pub tensors: Vec<TensorSpec<'a>>,
    source: Source<'a>,
    allow_missing_data: bool,
}

impl<'a> GgufBuilder<'a> {
    /// An empty file of version and byte order `ctx`.
    pub fn new(ctx: Ctx) -> Self {
        GgufBuilder {
            ctx,
            kvs: Vec::new(),
            tensors: Vec::new(),
            source: Source::default(),
            allow_missing_data: false,
        }
    }

    /// Everything in `gguf`: its version and byte order, key/values, tensor descriptors, and
    /// (borrowed, copied verbatim on output) its padding and data region.
    ///
    /// When `gguf.bytes` does not hold every tensor's bytes (a header read on its own with
    /// [`crate::stream::read_header`], a truncated file, a data start past the end), writing
    /// fails with [`WriteError::MissingTensorData`] unless [`allow_missing_data`] is called:
    /// a builder never writes a file that silently lacks tensor data its source described.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use gguf_grammar::write::{GgufBuilder, WriteError};
    /// use gguf_grammar::{Ctx, GgmlType, Gguf};
    ///
    /// let data = [0u8; 64];
    /// let bytes = GgufBuilder::new(Ctx::V3_LE).tensor("t", &[16], GgmlType::F32, &data).build()?;
    /// let header_only = &bytes[..bytes.len() - 64];
    /// let mut builder = GgufBuilder::from_gguf(&Gguf::parse(header_only)?);
    /// assert!(matches!(builder.build(), Err(WriteError::MissingTensorData { .. })));
    /// assert_eq!(builder.allow_missing_data().build()?, header_only);
    /// # Ok(()) }
    /// ```
    ///
    /// [`allow_missing_data`]: GgufBuilder::allow_missing_data
    pub fn from_gguf(gguf: &Gguf<'a>) -> Self {
        let bytes = gguf.bytes;
        let len = bytes.len() as u64;
        let slice = |from: u64, to: u64| {
            let to = usize::try_from(to.min(len)).unwrap_or(bytes.len());
            let from = usize::try_from(from).unwrap_or(to).min(to);
            &bytes[from..to]
        };
        let data = slice(gguf.tensor_data_offset, len);
        let missing = first_missing(gguf, data.len() as u64);
        GgufBuilder {
            allow_missing_data: false,
            ctx: gguf.header.ctx,
            kvs: gguf
                .kvs
                .iter()
                .map(|pair| OwnedKv {
                    key: pair.key.as_bytes().to_vec(),
                    value: match pair.value {
                        Value::Array(array) => OwnedValue::RawArray(RawArray::new(array)),
                        scalar => scalar.into(),
                    },
                })
                .collect(),
            tensors: gguf
                .tensors
                .iter()
                .map(|t| TensorSpec {
                    name: t.info.name.as_bytes().to_vec(),
                    dims: t.info.dims.clone(),
                    ggml_type: t.info.ggml_type,
                    offset: Some(t.info.offset),
                    data: Cow::Borrowed(&[]),
                })
                .collect(),
            source: Source {
                infos_end: gguf.tensor_infos_end,
                alignment: gguf.alignment,
                padding: slice(gguf.tensor_infos_end, gguf.tensor_data_offset),
                data: Kept::Bytes(data),
                missing,
            },
        }
    }

    /// Like [`from_gguf`](GgufBuilder::from_gguf) over a header held in memory (such as
    /// `gguf_tools::source::Source::read_header` or [`crate::stream::read_header`] give),
    /// with the data region read from `file`, `file_len` bytes long, when writing: with
    /// positioned reads through a bounded buffer, never a memory map, so a file truncated by
    /// another process meanwhile makes writing fail with [`WriteError::Source`] instead of
    /// ending the process (SIGBUS). [`verify`](GgufBuilder::verify) reads the region again.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use gguf_grammar::stream::read_file_header;
    /// use gguf_grammar::write::GgufBuilder;
    ///
    /// let path = std::path::Path::new("tests/conformance/cases/minimal-llama.gguf");
    /// let file = std::fs::File::open(path)?;
    /// let len = file.metadata()?.len();
    /// let header = read_file_header(&file, len)?;
    /// let mut builder = GgufBuilder::from_header_and_file(header.gguf(), &file, len);
    /// builder.set("general.architecture", "llama");
    /// let out = builder.build()?;
    /// builder.verify(&out)?;
    /// assert_eq!(out, std::fs::read(path)?);
    /// # Ok(()) }
    /// ```
    pub fn from_header_and_file(gguf: &Gguf<'a>, file: &'a std::fs::File, file_len: u64) -> Self {
        let mut builder = GgufBuilder::from_gguf(gguf);
        let start = gguf.tensor_data_offset.min(file_len);
        let len = file_len - start;
        builder.source.data = Kept::File { file, start, len };
        builder.source.missing = first_missing(gguf, len);
        builder
    }

    /// Writes the file even though the source does not hold every tensor's bytes (see
    /// [`from_gguf`](GgufBuilder::from_gguf)): the descriptors are written as they are and
    /// whatever data the source has is kept.
    pub fn allow_missing_data(&mut self) -> &mut Self {
        self.allow_missing_data = true;
        self
    }

    /// Sets the version and byte order written.
    pub fn ctx(&mut self, ctx: Ctx) -> &mut Self {
        self.ctx = ctx;
        self
    }

    /// Sets the version written.
    pub fn version(&mut self, version: Version) -> &mut Self {
        self.ctx.version = version;
        self
    }

    /// Sets the byte order written.
    pub fn endian(&mut self, endian: Endian) -> &mut Self {
        self.ctx.endian = endian;
        self
    }

    /// Appends a key/value pair (even if the key exists: duplicates are allowed).
    pub fn kv(&mut self, key: impl AsRef<[u8]>, value: impl Into<OwnedValue>) -> &mut Self {
        self.kvs.push(OwnedKv {
            key: key.as_ref().to_vec(),
            value: value.into(),
        });
        self
    }

    /// Sets `general.alignment` to the u32 `alignment` (replacing the first such key, or
    /// appending one), which the layout then follows.
    pub fn alignment(&mut self, alignment: u32) -> &mut Self {
        self.set(crate::ALIGNMENT_KEY, alignment)
    }

    /// The value of the first pair whose key is `key`.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Option<&OwnedValue> {
        self.position(key.as_ref()).map(|i| &self.kvs[i].value)
    }

    /// Replaces the value of the first pair whose key is `key` (keeping its position), or
    /// appends the pair if there is none.
    pub fn set(&mut self, key: impl AsRef<[u8]>, value: impl Into<OwnedValue>) -> &mut Self {
        match self.position(key.as_ref()) {
            Some(i) => self.kvs[i].value = value.into(),
            None => {
                self.kv(key, value);
            }
        }
        self
    }

    /// Removes every pair whose key is `key` (duplicates included).
    pub fn remove(&mut self, key: impl AsRef<[u8]>) -> &mut Self {
        self.kvs.retain(|pair| pair.key != key.as_ref());
        self
    }

    /// Renames the first pair whose key is `from`; false if there is none.
    pub fn rename(&mut self, from: impl AsRef<[u8]>, to: impl AsRef<[u8]>) -> bool {
        match self.position(from.as_ref()) {
            Some(i) => {
                self.kvs[i].key = to.as_ref().to_vec();
                true
            }
            None => false,
        }
    }

    fn position(&self, key: &[u8]) -> Option<usize> {
        self.kvs.iter().position(|pair| pair.key == key)
    }

    /// Appends a tensor whose data follows the previous tensor's, at the next aligned
    /// offset, and is padded to the alignment (as llama.cpp and gguf-py write data).
    pub fn tensor(
        &mut self,
        name: impl AsRef<[u8]>,
        dims: &[u64],
        ggml_type: GgmlType,
        data: &'a [u8],
    ) -> &mut Self {
        self.push_tensor(name, dims, ggml_type, None, data)
    }

    /// Appends a tensor with an explicit relative `offset` (aligned or not), placing `data`
    /// there (the data region is zero-filled up to it). With empty `data` only the descriptor
    /// is written: offsets past the end of the data are allowed.
    pub fn tensor_at(
        &mut self,
        name: impl AsRef<[u8]>,
        dims: &[u64],
        ggml_type: GgmlType,
        offset: u64,
        data: &'a [u8],
    ) -> &mut Self {
        self.push_tensor(name, dims, ggml_type, Some(offset), data)
    }

    fn push_tensor(
        &mut self,
        name: impl AsRef<[u8]>,
        dims: &[u64],
        ggml_type: GgmlType,
        offset: Option<u64>,
        data: &'a [u8],
    ) -> &mut Self {
        self.tensors.push(TensorSpec {
            name: name.as_ref().to_vec(),
            dims: dims.to_vec(),
            ggml_type,
            offset,
            data: Cow::Borrowed(data),
        });
        self
    }

    /// The first tensor named `name`, to change its descriptor.
    pub fn tensor_mut(&mut self, name: impl AsRef<[u8]>) -> Option<&mut TensorSpec<'a>> {
        self.tensors.iter_mut().find(|t| t.name == name.as_ref())
    }

    /// Removes every tensor descriptor named `name` (its bytes in a kept data region stay).
    pub fn remove_tensor(&mut self, name: impl AsRef<[u8]>) -> &mut Self {
        self.tensors.retain(|t| t.name != name.as_ref());
        self
    }

    /// The layout's alignment, as the parser will read it: the first `general.alignment`
    /// when it is a non-zero u32, else 32.
    pub fn layout_alignment(&self) -> u64 {
        crate::alignment(match self.get(crate::ALIGNMENT_KEY) {
            Some(OwnedValue::U32(n)) => Some(*n),
            _ => None,
        })
    }

    /// Serialises the file.
    pub fn build(&self) -> Result<Vec<u8>, WriteError> {
        let mut out = Vec::new();
        self.write_to(&mut out)?;
        Ok(out)
    }

    /// Serialises the file to `out`, returning the number of bytes written. The kept data
    /// region is written straight from the source (a memory map stays a memory map).
    pub fn write_to(&self, out: &mut (impl Write + ?Sized)) -> Result<u64, WriteError> {
        let layout = self.layout()?;
        out.write_all(&layout.head)?;
        std::io::copy(&mut std::io::repeat(0).take(layout.zeros), out)?;
        self.source.data.write_to(out)?;
        out.write_all(&layout.added)?;
        std::io::copy(&mut std::io::repeat(0).take(layout.tail), out)?;
        Ok(layout.head.len() as u64
            + layout.zeros
            + self.source.data.len()
            + layout.added.len() as u64
            + layout.tail)
    }

    /// Writes the file to a new file at `path`, which must not exist yet, and checks what was
    /// written as [`verify_file`](GgufBuilder::verify_file) does; returns the bytes written.
    /// Kept tensor data is copied from its source through a bounded buffer, so memory stays
    /// the size of the header whatever the model's size (unlike [`build`](GgufBuilder::build),
    /// which holds the whole file). A file that fails to be written or checked is removed.
    /// Replacing an existing file safely (a temporary file beside it, checked, then renamed)
    /// is `gguf_tools::edit::write_atomically`.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use gguf_grammar::{write::GgufBuilder, OwnedGguf};
    ///
    /// let model = OwnedGguf::open("tests/conformance/cases/minimal-llama.gguf")?;
    /// let mut builder = GgufBuilder::from_gguf(model.gguf());
    /// builder.set("general.name", "renamed");
    /// let path = std::env::temp_dir().join(format!("write-file-{}.gguf", std::process::id()));
    /// let written = builder.write_file(&path)?;
    /// assert_eq!(written, std::fs::metadata(&path)?.len());
    /// assert!(builder.write_file(&path).is_err()); // never over an existing file
    /// assert_eq!(OwnedGguf::open(&path)?.gguf().name()?, "renamed");
    /// std::fs::remove_file(&path)?;
    /// # Ok(()) }
    /// ```
    pub fn write_file(&self, path: impl AsRef<std::path::Path>) -> Result<u64, WriteError> {
        let path = path.as_ref();
        let file = std::fs::File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)?;
        let written = (|| {
            let mut out = std::io::BufWriter::new(&file);
            let n = self.write_to(&mut out)?;
            out.flush()?;
            drop(out);
            self.verify_file(&file).map_err(WriteError::Verify)?;
            Ok(n)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(path);
        }
        written
    }

    /// Checks that `written` (the bytes [`write_to`](GgufBuilder::write_to) produced, read
    /// back) parses, starts its data where the layout says, and holds the source's data
    /// region and every added tensor's bytes unchanged: what `gguf_tools::edit` verifies before
    /// it replaces a file.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use gguf_grammar::write::GgufBuilder;
    /// use gguf_grammar::{Ctx, GgmlType};
    ///
    /// let data = [1u8; 64];
    /// let mut builder = GgufBuilder::new(Ctx::V3_LE);
    /// builder.tensor("t", &[16], GgmlType::F32, &data);
    /// let mut bytes = builder.build()?;
    /// builder.verify(&bytes)?;
    /// *bytes.last_mut().unwrap() ^= 1;
    /// assert!(builder.verify(&bytes).is_err());
    /// # Ok(()) }
    /// ```
    pub fn verify(&self, written: &[u8]) -> Result<(), VerifyError> {
        self.verify_written(written, Written::Bytes(written))
    }

    /// [`verify`](GgufBuilder::verify) for a written file, read with positioned reads: the
    /// header into memory (its size is the builder's own), the data through a bounded buffer.
    /// No memory map, so a file another process cuts short meanwhile is reported (where it
    /// ends, what was being checked), never a SIGBUS.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use gguf_grammar::write::GgufBuilder;
    /// use gguf_grammar::{Ctx, GgmlType};
    ///
    /// let mut builder = GgufBuilder::new(Ctx::V3_LE);
    /// builder.tensor("t", &[16], GgmlType::F32, &[1u8; 64]);
    /// let path = std::env::temp_dir().join(format!("verify-file-{}.gguf", std::process::id()));
    /// std::fs::write(&path, builder.build()?)?;
    /// let file = std::fs::OpenOptions::new().read(true).write(true).open(&path)?;
    /// builder.verify_file(&file)?;
    /// let len = file.metadata()?.len();
    /// file.set_len(len - 1)?; // as another process could, meanwhile
    /// let err = builder.verify_file(&file).unwrap_err();
    /// std::fs::remove_file(&path)?;
    /// assert_eq!(err.to_string(), format!("the written file is wrong: it is {} bytes long, not {len}", len - 1));
    /// # Ok(()) }
    /// ```
    pub fn verify_file(&self, file: &std::fs::File) -> Result<(), VerifyError> {
        let io = |e: std::io::Error| VerifyError(format!("reading it back: {e}"));
        let len = file.metadata().map_err(io)?.len();
        let layout = self.layout().map_err(|e| VerifyError(e.to_string()))?;
        let mut head = vec![0u8; (layout.head.len() as u64 + layout.zeros).min(len) as usize];
        crate::file_range::read_exact_at(file, 0, &mut head)
            .map_err(|e| VerifyError(format!("reading its header back: {e}")))?;
        self.verify_written(&head, Written::File { file, len })
    }

    /// The checks of [`verify`](GgufBuilder::verify): `head` holds at least the written
    /// header, `written` the whole output.
    fn verify_written(&self, head: &[u8], written: Written<'_>) -> Result<(), VerifyError> {
        let gguf = Gguf::parse_with(head, Some(self.ctx.endian))
            .map_err(|e| VerifyError(format!("it does not parse: {e}")))?;
        let layout = self.layout().map_err(|e| VerifyError(e.to_string()))?;
        let start = layout.head.len() as u64 + layout.zeros;
        let kept = self.source.data;
        if (kept.len() > 0 || layout.added.len() as u64 + layout.tail > 0)
            && gguf.tensor_data_offset != start
        {
            return Err(VerifyError(format!(
                "its data starts at {}, not {start}",
                gguf.tensor_data_offset
            )));
        }
        let added_at = start + kept.len();
        let tail_at = added_at + layout.added.len() as u64;
        let end = tail_at + layout.tail;
        if written.len() != end {
            return Err(VerifyError(format!(
                "it is {} bytes long, not {end}",
                written.len()
            )));
        }
        if !kept.matches(written, start)? {
            return Err(VerifyError(
                "the source's tensor data is not there byte for byte".into(),
            ));
        }
        if !written.holds(added_at, &layout.added)? {
            return Err(VerifyError("the added tensor data differs".into()));
        }
        if !written.holds_zeros(tail_at, layout.tail)? {
            return Err(VerifyError(
                "the padding after the data is not zeros".into(),
            ));
        }
        Ok(())
    }

    /// The header and padding bytes, when writing them over the start of the source file is
    /// the whole edit: nothing was added to the data region and the data start is unchanged.
    /// Writing them in place is fast but not atomic: an interrupted write leaves a damaged file.
    pub fn in_place_patch(&self) -> Result<Option<Vec<u8>>, WriteError> {
        let layout = self.layout()?;
        let mut head = layout.head;
        let unchanged = layout.added.is_empty()
            && layout.tail == 0
            && head.len() as u64 + layout.zeros
                == self.source.infos_end + self.source.padding.len() as u64;
        // The padding is at most MAX_ALIGNMENT bytes (see layout).
        head.resize(head.len() + layout.zeros as usize, 0);
        Ok(unchanged.then_some(head))
    }

    /// Encodes the header and tensor infos, resolves tensor offsets and places added data.
    fn layout(&self) -> Result<Layout, WriteError> {
        if let (Some(missing), false) = (&self.source.missing, self.allow_missing_data) {
            return Err(WriteError::MissingTensorData {
                name: missing.name.clone(),
                offset: missing.offset,
                needed: missing.needed,
                have: self.source.data.len(),
            });
        }
        let alignment = self.layout_alignment();
        let kept = self.source.data.len();
        let points_into_kept = |t: &TensorSpec<'_>| t.data.is_empty() && t.offset.is_some();
        if kept > 0
            && alignment != self.source.alignment
            && self.tensors.iter().any(points_into_kept)
        {
            return Err(WriteError::AlignmentChanged {
                from: self.source.alignment,
                to: alignment,
            });
        }
        let placed = self.place_tensors(alignment, kept)?;

        let mut enc = Encoder {
            ctx: self.ctx,
            out: Vec::new(),
        };
        enc.header(self.tensors.len() as u64, self.kvs.len() as u64)?;
        for pair in &self.kvs {
            enc.kv(&pair.key, &pair.value)?;
        }
        for (tensor, place) in self.tensors.iter().zip(&placed) {
            enc.tensor_info(&tensor.name, &tensor.dims, tensor.ggml_type, place.offset)?;
        }
        let mut head = enc.out;

        // Data added after the kept region: each tensor's bytes at its offset, zeros between;
        // the zeros after the last byte of data are streamed (`tail`).
        let mut added = Vec::new();
        let mut added_len = 0;
        for (tensor, place) in self.tensors.iter().zip(&placed) {
            let Some(end) = place.end else { continue };
            if alignment > MAX_ALIGNMENT && tensor.offset.is_none() {
                return Err(WriteError::AlignmentTooLarge { alignment });
            }
            // Placed data starts at or after `kept` (see place_tensors).
            added_len = added_len.max(end - kept);
            let Ok(from) = usize::try_from(place.offset - kept) else {
                return Err(overflow(tensor));
            };
            let to = from + tensor.data.len();
            if added.len() < to {
                added.resize(to, 0);
            }
            added[from..to].copy_from_slice(&tensor.data);
        }
        let tail = added_len - added.len() as u64;

        let infos_end = head.len() as u64;
        if infos_end == self.source.infos_end && alignment == self.source.alignment {
            head.extend_from_slice(self.source.padding);
        }
        let mut zeros = 0;
        if kept > 0 || added_len > 0 {
            // The header is in memory: its aligned end cannot overflow.
            let data_start = align_up(infos_end, alignment).unwrap_or(infos_end);
            zeros = data_start.saturating_sub(head.len() as u64);
            if zeros > 0 && alignment > MAX_ALIGNMENT {
                return Err(WriteError::AlignmentTooLarge { alignment });
            }
        }
        Ok(Layout {
            head,
            zeros,
            added,
            tail,
        })
    }

    /// Each tensor's relative offset and, for tensors that bring data, where it ends.
    fn place_tensors(&self, alignment: u64, kept: u64) -> Result<Vec<Placed>, WriteError> {
        let mut cursor = kept;
        let mut placed = Vec::with_capacity(self.tensors.len());
        for tensor in &self.tensors {
            let len = tensor.data.len() as u64;
            let place = match tensor.offset {
                Some(offset) if len == 0 => Placed { offset, end: None },
                Some(offset) if offset < kept => {
                    return Err(WriteError::OverlapsKeptData {
                        name: String::from_utf8_lossy(&tensor.name).into_owned(),
                        offset,
                        kept,
                    })
                }
                Some(offset) => Placed {
                    offset,
                    end: Some(offset.checked_add(len).ok_or_else(|| overflow(tensor))?),
                },
                None => {
                    let offset = align_up(cursor, alignment).ok_or_else(|| overflow(tensor))?;
                    let end = offset
                        .checked_add(len)
                        .and_then(|end| align_up(end, alignment))
                        .ok_or_else(|| overflow(tensor))?;
                    Placed {
                        offset,
                        end: Some(end),
                    }
                }
            };
            cursor = cursor.max(place.end.unwrap_or(cursor));
            placed.push(place);
        }
        Ok(placed)
    }
}

/// Where a tensor goes: its relative offset and, if it brings data, the end of the span
/// written for it (its data, then zeros up to the alignment for sequential tensors).
struct Placed {
    offset: u64,
    end: Option<u64>,
}

fn overflow(tensor: &TensorSpec<'_>) -> WriteError {
    WriteError::OffsetOverflow {
        name: String::from_utf8_lossy(&tensor.name).into_owned(),
    }
}

/// The bytes before the kept data region (the header, then `zeros` zero bytes of padding,
/// written as a stream) and the bytes after it (added data, then `tail` zero bytes).
struct Layout {
    head: Vec<u8>,
    zeros: u64,
    added: Vec<u8>,
    tail: u64,
}

/// Why written bytes are not what the builder meant to write (see [`GgufBuilder::verify`]).
#[derive(Debug, thiserror::Error)]
#[error("the written file is wrong: {0}")]
pub struct VerifyError(pub String);

/// Writes `gguf` back in its own version and byte order: `write(parse(bytes)) == bytes` for
/// every file the parser accepts.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let bytes = std::fs::read("tests/conformance/cases/minimal-llama.gguf")?;
/// let gguf = gguf_grammar::Gguf::parse(&bytes)?;
/// assert_eq!(gguf_grammar::write::write(&gguf)?, bytes); // tensor data included
/// # Ok(()) }
/// ```
pub fn write(gguf: &Gguf<'_>) -> Result<Vec<u8>, WriteError> {
    // Byte-exact: tensor data the source lacks is lacking in the copy too, nothing more.
    GgufBuilder::from_gguf(gguf).allow_missing_data().build()
}

/// Encodes fields with a [`Ctx`]'s widths and byte order: the parser's readers, reversed,
/// with one writer per construct of `src/grammar/` (header, string, value, kv, tensor info).
struct Encoder {
    ctx: Ctx,
    out: Vec<u8>,
}

macro_rules! fixed_width_writer {
    ($($name:ident: $ty:ty),*) => {$(
        fn $name(&mut self, v: $ty) {
            match self.ctx.endian {
                Endian::Little => self.out.extend_from_slice(&v.to_le_bytes()),
                Endian::Big => self.out.extend_from_slice(&v.to_be_bytes()),
            }
        }
    )*};
}

impl Encoder {
    fixed_width_writer!(u16: u16, u32: u32, u64: u64, f32: f32, f64: f64);

    /// A count, length or dim: u32 in v1, u64 in v2 and v3.
    fn count(&mut self, n: u64, what: &'static str) -> Result<(), WriteError> {
        match self.ctx.version {
            Version::V1 => {
                let n = u32::try_from(n).map_err(|_| WriteError::TooLarge {
                    what,
                    value: n,
                    width: 4,
                    version: 1,
                })?;
                self.u32(n);
            }
            Version::V2 | Version::V3 => self.u64(n),
        }
        Ok(())
    }

    /// `header = magic version tensor_count kv_count`
    fn header(&mut self, tensor_count: u64, kv_count: u64) -> Result<(), WriteError> {
        self.out.extend_from_slice(&MAGIC);
        self.u32(self.ctx.version.number());
        self.count(tensor_count, "tensor count")?;
        self.count(kv_count, "kv count")
    }

    /// `kv = key:string value_type value(value_type)`
    fn kv(&mut self, key: &[u8], value: &OwnedValue) -> Result<(), WriteError> {
        self.string(key)?;
        self.u32(value.value_type().tag());
        self.value(value, 0)
    }

    /// `tensor_info = name:string n_dims:u32 dims:count[n_dims] ggml_type:u32 offset:u64`
    fn tensor_info(
        &mut self,
        name: &[u8],
        dims: &[u64],
        ggml_type: GgmlType,
        offset: u64,
    ) -> Result<(), WriteError> {
        self.string(name)?;
        let n_dims = u32::try_from(dims.len()).map_err(|_| WriteError::TooLarge {
            what: "n_dims",
            value: dims.len() as u64,
            width: 4,
            version: self.ctx.version.number(),
        })?;
        self.u32(n_dims);
        for &dim in dims {
            self.count(dim, "dim")?;
        }
        self.u32(ggml_type.0);
        self.u64(offset);
        Ok(())
    }

    /// `string = len:count bytes[len]`
    fn string(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        self.count(bytes.len() as u64, "string length")?;
        self.out.extend_from_slice(bytes);
        Ok(())
    }

    /// A value without its type tag; `depth` is the nesting of arrays around it.
    fn value(&mut self, value: &OwnedValue, depth: u32) -> Result<(), WriteError> {
        match value {
            OwnedValue::U8(v) | OwnedValue::Bool(v) => self.out.push(*v),
            OwnedValue::I8(v) => self.out.extend_from_slice(&v.to_le_bytes()),
            OwnedValue::U16(v) => self.u16(*v),
            OwnedValue::I16(v) => self.u16(*v as u16),
            OwnedValue::U32(v) => self.u32(*v),
            OwnedValue::I32(v) => self.u32(*v as u32),
            OwnedValue::F32(v) => self.f32(*v),
            OwnedValue::U64(v) => self.u64(*v),
            OwnedValue::I64(v) => self.u64(*v as u64),
            OwnedValue::F64(v) => self.f64(*v),
            OwnedValue::String(s) => self.string(s)?,
            OwnedValue::Array(array) => {
                if depth >= MAX_NESTING {
                    return Err(WriteError::NestingTooDeep { limit: MAX_NESTING });
                }
                self.u32(array.element_type.tag());
                self.count(array.elements.len() as u64, "array length")?;
                for element in &array.elements {
                    self.value(element, depth + 1)?;
                }
            }
            OwnedValue::RawArray(raw) => {
                if depth >= MAX_NESTING {
                    return Err(WriteError::NestingTooDeep { limit: MAX_NESTING });
                }
                self.u32(raw.element_type.tag());
                self.count(raw.len as u64, "array length")?;
                if raw.ctx == self.ctx {
                    self.out.extend_from_slice(&raw.elements);
                } else {
                    for element in raw.array().iter() {
                        let element = match element {
                            Value::Array(inner) => OwnedValue::RawArray(RawArray::new(inner)),
                            scalar => scalar.into(),
                        };
                        self.value(&element, depth + 1)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Each construct's writer, read back by its parser in every version and byte order.
#[cfg(test)]
mod construct_tests {
    use super::*;
    use crate::grammar::test_bytes::all_ctx;
    use crate::grammar::{header, kv, string, tensor_info, value};
    use crate::ValueType;

    fn encoder(ctx: Ctx) -> Encoder {
        Encoder {
            ctx,
            out: Vec::new(),
        }
    }

    #[test]
    fn header_round_trips() {
        for ctx in all_ctx() {
            let mut enc = encoder(ctx);
            enc.header(3, 70_000).unwrap();
            let (rest, h) = header::header(Some(ctx.endian))(&enc.out).unwrap();
            assert!(rest.is_empty());
            assert_eq!((h.ctx, h.tensor_count, h.kv_count), (ctx, 3, 70_000));
        }
    }

    #[test]
    fn string_round_trips() {
        for ctx in all_ctx() {
            let mut enc = encoder(ctx);
            enc.string(b"h\xc3\xa9\xff").unwrap();
            let (rest, s) = string::string(ctx)(&enc.out).unwrap();
            assert_eq!((rest, s.as_bytes()), (&b""[..], &b"h\xc3\xa9\xff"[..]));
        }
    }

    #[test]
    fn every_value_type_round_trips() {
        let nested = OwnedValue::Array(OwnedArray {
            element_type: ValueType::Array.into(),
            elements: vec![OwnedValue::Array(OwnedArray {
                element_type: ValueType::String.into(),
                elements: vec![OwnedValue::String(b"x".to_vec())],
            })],
        });
        let values = [
            OwnedValue::U8(0xfe),
            OwnedValue::I8(-2),
            OwnedValue::U16(0x1234),
            OwnedValue::I16(-2),
            OwnedValue::U32(0x0102_0304),
            OwnedValue::I32(-3),
            OwnedValue::F32(1.5),
            OwnedValue::Bool(2),
            OwnedValue::String(b"llama".to_vec()),
            nested,
            OwnedValue::U64(1 << 40),
            OwnedValue::I64(-1),
            OwnedValue::F64(-2.5),
        ];
        for ctx in all_ctx() {
            for original in &values {
                let mut enc = encoder(ctx);
                enc.value(original, 0).unwrap();
                let ty = original.value_type();
                let (rest, parsed) = value::value(ctx, ty)(&enc.out).unwrap();
                assert!(rest.is_empty(), "{ctx:?} {ty:?}");
                assert_eq!(&OwnedValue::from(parsed), original, "{ctx:?}");
            }
        }
    }

    #[test]
    fn kv_round_trips() {
        for ctx in all_ctx() {
            let mut enc = encoder(ctx);
            enc.kv(b"general.alignment", &OwnedValue::U32(64)).unwrap();
            let (rest, pair) = kv::kv(ctx)(&enc.out).unwrap();
            assert!(rest.is_empty());
            assert_eq!(pair.key.as_bytes(), b"general.alignment");
            assert_eq!(pair.value, Value::U32(64));
            assert_eq!(pair.raw, &enc.out[..]);
        }
    }

    #[test]
    fn tensor_info_round_trips() {
        for ctx in all_ctx() {
            let mut enc = encoder(ctx);
            enc.tensor_info(
                b"blk.0.attn_q.weight",
                &[4096, 1, 7],
                GgmlType::Q4_K,
                1 << 33,
            )
            .unwrap();
            let (rest, info) = tensor_info::tensor_info(ctx)(&enc.out).unwrap();
            assert!(rest.is_empty());
            assert_eq!(info.name.as_bytes(), b"blk.0.attn_q.weight");
            assert_eq!(
                (info.dims.as_slice(), info.ggml_type),
                (&[4096, 1, 7][..], GgmlType::Q4_K)
            );
            assert_eq!((info.offset, info.raw), (1 << 33, &enc.out[..]));
        }
    }

    #[test]
    fn v1_refuses_counts_past_u32() {
        let ctx = Ctx {
            version: Version::V1,
            endian: Endian::Little,
        };
        let err = encoder(ctx).header(1 << 32, 0).unwrap_err();
        assert!(
            matches!(
                err,
                WriteError::TooLarge {
                    what: "tensor count",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_written_file_cut_short_while_being_checked_is_a_located_error() {
        // The length was taken, then another process cut the file: with a memory map, the
        // read past the cut would be a SIGBUS; here it is an error saying where the file ends.
        let data = vec![7u8; 4096];
        let mut builder = GgufBuilder::new(Ctx::V3_LE);
        builder.tensor("t", &[1024], GgmlType::F32, &data);
        let bytes = builder.build().unwrap();
        let path =
            std::env::temp_dir().join(format!("cut-while-checked-{}.gguf", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let len = bytes.len() as u64;
        builder
            .verify_written(&bytes, Written::File { file: &file, len })
            .unwrap();
        file.set_len(len - 100).unwrap();
        let err = builder
            .verify_written(&bytes, Written::File { file: &file, len })
            .unwrap_err()
            .to_string();
        std::fs::remove_file(&path).unwrap();
        let data_at = len - 4096;
        assert_eq!(
            err,
            format!("the written file is wrong: it was cut short while being checked: it ends at byte {}, inside the 4096 bytes at offset {data_at}", len - 100)
        );
    }
}
