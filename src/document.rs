//! What a parse returns: the whole header of a GGUF file, borrowed from its bytes.

use crate::error::{Error, GetError};
use crate::ggml_type::GgmlType;
use crate::grammar::file::{file, File};
use crate::grammar::header::Header;
use crate::grammar::kv::Kv;
use crate::grammar::string::GgufStr;
use crate::grammar::tensor_info::TensorInfo;
use crate::grammar::value::Array;
use crate::grammar::value::Value;
use crate::grammar::{align_up, finish};
use crate::grammar::{Endian, Version};
use crate::read_buf::ReadBuf;
use crate::summary::Summary;

/// The key whose u32 value sets the alignment of the tensor data.
pub const ALIGNMENT_KEY: &str = "general.alignment";

/// The alignment of the tensor data when a file does not set one.
pub const DEFAULT_ALIGNMENT: u64 = 32;

/// The alignment of the tensor data, given the u32 value of the first
/// [`ALIGNMENT_KEY`] pair (`None` when there is none or its value is not a u32): that value
/// when it is non-zero, else [`DEFAULT_ALIGNMENT`]. The parser, the writer and the
/// validator all place data with this rule.
///
/// ```
/// use gguf_grammar::alignment;
/// assert_eq!((alignment(Some(64)), alignment(Some(0)), alignment(None)), (64, 32, 32));
/// ```
pub fn alignment(first_alignment_u32: Option<u32>) -> u64 {
    first_alignment_u32
        .filter(|&n| n > 0)
        .map_or(DEFAULT_ALIGNMENT, u64::from)
}

/// A parsed GGUF file: header, key/values in file order (duplicates kept), tensor
/// descriptors, and the layout of the tensor data. Everything borrows from the input.
///
/// ```
/// # fn main() -> Result<(), gguf_grammar::Error> {
/// use gguf_grammar::Gguf;
///
/// // A 22 KB LLaMA model with an 8-token vocabulary that ships with the crate.
/// let bytes = std::fs::read("tests/conformance/cases/llama-8-tokens.gguf").unwrap();
/// let gguf = Gguf::parse(&bytes)?;
/// assert_eq!(gguf.architecture(), Ok("llama"));
/// assert_eq!(gguf.get_u64("llama.block_count"), Ok(1));
/// let tokens = gguf.get_array("tokenizer.ggml.tokens").unwrap();
/// assert_eq!(tokens.len(), 8);
/// assert_eq!(tokens.get(1).and_then(|t| t.as_str()), Some("<s>"));
/// assert_eq!(gguf.tensor("output_norm.weight").map(|t| t.data_offset), Some(Some(2464)));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Gguf<'a> {
    /// Version, byte order and counts.
    pub header: Header,
    /// Every key/value pair in file order; duplicates are kept.
    pub kvs: Vec<Kv<'a>>,
    /// Every tensor descriptor in file order.
    pub tensors: Vec<Tensor<'a>>,
    /// `general.alignment` when it is a non-zero u32, else 32.
    pub alignment: u64,
    /// Offset of the first byte after the tensor infos.
    pub tensor_infos_end: u64,
    /// Start of the tensor data: `align_up(tensor_infos_end, alignment)` (aligned even when
    /// there are no tensors, as the specification and gguf-py do).
    pub tensor_data_offset: u64,
    /// The input the document was parsed from.
    pub bytes: &'a [u8],
}

/// A tensor descriptor with its place in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tensor<'a> {
    /// The descriptor as stored.
    pub info: TensorInfo<'a>,
    /// Absolute offset of the tensor's data: tensor-data start + relative offset
    /// (`None` if the sum overflows).
    pub data_offset: Option<u64>,
    /// Size of the tensor's data from the ggml type table (`None` for unknown or removed
    /// types, a row length that is not a multiple of the block size, or overflow).
    pub n_bytes: Option<u64>,
}

impl<'a> Gguf<'a> {
    /// Parses a GGUF file (or a prefix of one that holds the whole header), detecting the
    /// byte order.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse_with(bytes, None)
    }

    /// Parses with a forced byte order (`None` detects it from the version field).
    pub fn parse_with(bytes: &'a [u8], endian: Option<Endian>) -> Result<Self, Error> {
        let (rest, parsed) = finish(file(endian), bytes)?;
        let tensor_infos_end = (bytes.len() - rest.len()) as u64;
        Ok(Gguf::lay_out(parsed, tensor_infos_end, bytes))
    }

    /// Places what the grammar read: the alignment, the data start and each tensor's data.
    fn lay_out(parsed: File<'a>, tensor_infos_end: u64, bytes: &'a [u8]) -> Self {
        let File {
            header,
            kvs,
            tensor_infos,
        } = parsed;
        let first_alignment = kvs
            .iter()
            .find(|pair| pair.key.as_bytes() == ALIGNMENT_KEY.as_bytes())
            .and_then(|pair| match pair.value {
                Value::U32(n) => Some(n),
                _ => None,
            });
        let alignment = alignment(first_alignment);
        // Cannot overflow: the end of the infos is an in-memory length and alignment < 2^32.
        let tensor_data_offset = align_up(tensor_infos_end, alignment).unwrap_or(u64::MAX);
        let tensors = tensor_infos
            .into_iter()
            .map(|info| Tensor {
                data_offset: tensor_data_offset.checked_add(info.offset),
                n_bytes: info.ggml_type.n_bytes(&info.dims),
                info,
            })
            .collect();
        Gguf {
            header,
            kvs,
            tensors,
            alignment,
            tensor_infos_end,
            tensor_data_offset,
            bytes,
        }
    }

    /// The first value stored under `key`.
    pub fn get(&self, key: &str) -> Option<Value<'a>> {
        self.get_kv(key).map(|pair| pair.value)
    }

    /// The first value under `key`, if `read` accepts it, else why not.
    fn get_as<T>(
        &self,
        key: &str,
        expected: &'static str,
        read: impl FnOnce(&Value<'a>) -> Option<T>,
    ) -> Result<T, GetError> {
        let value = self
            .get(key)
            .ok_or_else(|| GetError::Missing { key: key.into() })?;
        read(&value).ok_or_else(|| GetError::WrongType {
            key: key.into(),
            expected,
            found: value.value_type(),
        })
    }

    /// The string under `key` (the first pair with that key).
    pub fn get_str(&self, key: &str) -> Result<&'a str, GetError> {
        let text = self.get_as(key, "a string", |v| v.as_gguf_str())?;
        text.to_str()
            .map_err(|_| GetError::NotUtf8 { key: key.into() })
    }

    /// The unsigned integer (u8, u16, u32 or u64) under `key`, widened to u64.
    pub fn get_u64(&self, key: &str) -> Result<u64, GetError> {
        self.get_as(key, "an unsigned integer", Value::as_u64)
    }

    /// The integer under `key` (any width, signed or not) when it fits an i64.
    pub fn get_i64(&self, key: &str) -> Result<i64, GetError> {
        self.get_as(key, "an integer that fits an i64", Value::as_i64)
    }

    /// The float32 or float64 under `key`, as f64.
    pub fn get_f64(&self, key: &str) -> Result<f64, GetError> {
        self.get_as(key, "a float", Value::as_f64)
    }

    /// The bool under `key` (any non-zero byte is true).
    pub fn get_bool(&self, key: &str) -> Result<bool, GetError> {
        self.get_as(key, "a bool", Value::as_bool)
    }

    /// The array under `key`.
    pub fn get_array(&self, key: &str) -> Result<Array<'a>, GetError> {
        self.get_as(key, "an array", Value::as_array)
    }

    /// `general.architecture`, e.g. `"llama"`: the prefix of the model's hyperparameter keys.
    pub fn architecture(&self) -> Result<&'a str, GetError> {
        self.get_str("general.architecture")
    }

    /// `general.name`, the model's human-readable name.
    pub fn name(&self) -> Result<&'a str, GetError> {
        self.get_str("general.name")
    }

    /// Parameter count, size label, bits per weight and hyperparameters.
    pub fn summary(&self) -> Summary<'a> {
        Summary::of(self)
    }

    /// The first key/value pair whose key is `key`.
    pub fn get_kv(&self, key: &str) -> Option<&Kv<'a>> {
        self.kvs
            .iter()
            .find(|pair| pair.key.as_bytes() == key.as_bytes())
    }

    /// The first tensor named `name`.
    pub fn tensor(&self, name: &str) -> Option<&Tensor<'a>> {
        self.tensors
            .iter()
            .find(|t| t.info.name.as_bytes() == name.as_bytes())
    }

    /// Byte order of the file.
    pub fn endian(&self) -> Endian {
        self.header.ctx.endian
    }

    /// GGUF version (its number is [`Version::number`]).
    pub fn version(&self) -> Version {
        self.header.ctx.version
    }

    /// Where `part` (a slice of the parsed input, such as [`Kv::raw`]) starts in the file,
    /// or `None` if it does not lie inside the input.
    pub fn offset_of(&self, part: &[u8]) -> Option<u64> {
        let start = self.bytes.as_ptr() as usize;
        let at = part.as_ptr() as usize;
        let end = start + self.bytes.len();
        (start..=end)
            .contains(&at)
            .then(|| (at - start) as u64)
            .filter(|offset| offset + part.len() as u64 <= self.bytes.len() as u64)
    }

    /// The vocabulary size: the number of `tokenizer.ggml.tokens`, else `{arch}.vocab_size`.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = gguf_grammar::OwnedGguf::open("tests/conformance/cases/llama-8-tokens.gguf")?;
    /// assert_eq!(model.gguf().n_vocab(), Some(8));
    /// # Ok(()) }
    /// ```
    pub fn n_vocab(&self) -> Option<u64> {
        crate::summary::Hparams::read(self).n_vocab()
    }

    /// The tokens of `tokenizer.ggml.tokens`, each checked as UTF-8 as it is read.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = gguf_grammar::OwnedGguf::open("tests/conformance/cases/llama-8-tokens.gguf")?;
    /// let tokens: Vec<&str> = model.gguf().tokens()?.collect::<Result<_, _>>().map_err(|e| e.to_string())?;
    /// assert_eq!(tokens[..3], ["<unk>", "<s>", "</s>"]);
    /// # Ok(()) }
    /// ```
    pub fn tokens(&self) -> Result<crate::elements::Strs<'a>, GetError> {
        const KEY: &str = "tokenizer.ggml.tokens";
        let array = self.get_array(KEY)?;
        array.strs().ok_or_else(|| GetError::WrongType {
            key: KEY.to_owned(),
            expected: "an array of strings",
            found: crate::ValueType::Array,
        })
    }
}

impl<'a> Tensor<'a> {
    /// The tensor's name, as stored (its `Display` escapes it for a terminal).
    pub fn name(&self) -> GgufStr<'a> {
        self.info.name
    }

    /// Dimensions in file order: `dims()[0]` is ne0, the fastest-varying.
    pub fn dims(&self) -> &[u64] {
        &self.info.dims
    }

    /// The element type (unknown ids are kept).
    pub fn ggml_type(&self) -> GgmlType {
        self.info.ggml_type
    }

    /// Absolute offset of the tensor's data in the file (`None` if it overflows).
    pub fn offset(&self) -> Option<u64> {
        self.data_offset
    }

    /// Size of the tensor's data in bytes (`None` for unknown or removed types, a row
    /// length that is not a multiple of the block size, or overflow).
    pub fn n_bytes(&self) -> Option<u64> {
        self.n_bytes
    }
}

/// A memory-mapped GGUF file: only the pages a parse touches are read from disk.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use gguf_grammar::GgufFile;
///
/// let file = GgufFile::open("tests/conformance/cases/basic-v2-le.gguf")?;
/// let gguf = file.parse()?;
/// assert_eq!(gguf.version(), gguf_grammar::Version::V2);
/// # Ok(()) }
/// ```
#[cfg(feature = "mmap")]
#[derive(Debug)]
pub struct GgufFile {
    map: Option<memmap2::Mmap>,
}

#[cfg(feature = "mmap")]
impl GgufFile {
    /// Maps the file at `path` read-only.
    pub fn open(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        let file = std::fs::File::open(path)?;
        // mmap of a zero-length file fails on some platforms; an empty file is simply empty.
        let map = if file.metadata()?.len() == 0 {
            None
        } else {
            Some(map_read_only(&file)?)
        };
        Ok(GgufFile { map })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }

    /// Parses the mapped file.
    pub fn parse(&self) -> Result<Gguf<'_>, Error> {
        Gguf::parse(self.bytes())
    }
}

/// A parsed GGUF file that owns its bytes, so that it can be returned from a function or
/// kept in a struct: [`OwnedGguf::gguf`] gives the [`Gguf`] with every accessor.
///
/// It keeps the bytes (memory-mapped by [`OwnedGguf::open`], read into memory by
/// [`OwnedGguf::from_vec`] and [`crate::stream::read_header`]) together with the [`Gguf`]
/// parsed from them when it was made, so [`OwnedGguf::gguf`] costs a borrow, not a parse
/// (on the 7.8 MB Llama 3 tokenizer: under 1 ns instead of 1.3 ms, `benches/parse.rs`).
/// The document borrows from the bytes beside it through the `self_cell` crate, without
/// `unsafe` code of this crate's own.
///
/// ```
/// use gguf_grammar::{write::GgufBuilder, Ctx, OwnedGguf};
///
/// fn load() -> Result<OwnedGguf, gguf_grammar::Error> {
///     let bytes = GgufBuilder::new(Ctx::V3_LE).set("general.architecture", "llama").build().unwrap();
///     OwnedGguf::from_vec(bytes)
/// }
/// let model = load()?;
/// assert_eq!(model.gguf().architecture(), Ok("llama"));
/// # Ok::<(), gguf_grammar::Error>(())
/// ```
pub struct OwnedGguf(ParsedBytes);

impl std::fmt::Debug for OwnedGguf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let gguf = self.gguf();
        f.debug_struct("OwnedGguf")
            .field("bytes", &self.bytes().len())
            .field("header", &gguf.header)
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
enum OwnedBytes {
    Read(ReadBuf),
    #[cfg(feature = "mmap")]
    Mapped(GgufFile),
}

impl OwnedBytes {
    fn bytes(&self) -> &[u8] {
        match self {
            OwnedBytes::Read(bytes) => bytes.bytes(),
            #[cfg(feature = "mmap")]
            OwnedBytes::Mapped(file) => file.bytes(),
        }
    }

    fn into_read(self) -> ReadBuf {
        match self {
            OwnedBytes::Read(bytes) => bytes,
            #[cfg(feature = "mmap")]
            OwnedBytes::Mapped(file) => ReadBuf::Heap(file.bytes().to_vec()),
        }
    }
}

self_cell::self_cell!(
    /// The bytes and the document parsed from them.
    struct ParsedBytes {
        owner: OwnedBytes,
        #[covariant]
        dependent: Gguf,
    }
);

impl OwnedGguf {
    /// Takes `bytes` (a whole file, or a prefix holding its header) and parses them.
    pub fn from_vec(bytes: Vec<u8>) -> Result<Self, Error> {
        Self::from_vec_with(bytes, None)
    }

    /// As [`OwnedGguf::from_vec`] with a forced byte order (`None` detects it).
    pub fn from_vec_with(bytes: Vec<u8>, endian: Option<Endian>) -> Result<Self, Error> {
        Self::parse(OwnedBytes::Read(ReadBuf::Heap(bytes)), endian)
    }

    /// Parses a memory-mapped file.
    #[cfg(feature = "mmap")]
    pub(crate) fn from_map(file: GgufFile) -> Result<Self, Error> {
        Self::parse(OwnedBytes::Mapped(file), None)
    }

    fn parse(bytes: OwnedBytes, endian: Option<Endian>) -> Result<Self, Error> {
        ParsedBytes::try_new(bytes, |bytes| Gguf::parse_with(bytes.bytes(), endian)).map(OwnedGguf)
    }

    /// Parses the header at the start of `bytes`, a prefix of a file read to find it, and
    /// keeps only the header in view: the document's [`Gguf::bytes`] end at the data start
    /// (or where `bytes` end, if sooner), so bytes read past the header never pass for the
    /// file's tensor data (see [`crate::write::GgufBuilder::from_gguf`]). On failure the
    /// buffer comes back with the error, for the reader to read more into it and try again:
    /// this parse is the only one a header read needs.
    pub(crate) fn header_from_prefix(
        bytes: ReadBuf,
        endian: Option<Endian>,
    ) -> Result<Self, (ReadBuf, Error)> {
        ParsedBytes::try_new_or_recover(OwnedBytes::Read(bytes), |owner| {
            let mut gguf = Gguf::parse_with(owner.bytes(), endian)?;
            let end = usize::try_from(gguf.tensor_data_offset)
                .map_or(gguf.bytes.len(), |end| end.min(gguf.bytes.len()));
            gguf.bytes = &gguf.bytes[..end];
            Ok(gguf)
        })
        .map(OwnedGguf)
        .map_err(|(owner, e)| (owner.into_read(), e))
    }

    /// The bytes the document was parsed from: the whole file when mapped or given whole;
    /// for a header read on its own ([`crate::stream::read_header`],
    /// `gguf_tools::source::Source::read_header`), the header up to its data start.
    pub fn bytes(&self) -> &[u8] {
        self.gguf().bytes
    }

    /// [`OwnedGguf::bytes`], owned: without a copy when they were given as a `Vec` (or read
    /// from a stream), a copy when they were mapped or read from a regular file (into
    /// anonymous memory, see `gguf_tools::source::Source::read_header`).
    pub fn into_bytes(self) -> Vec<u8> {
        let len = self.bytes().len();
        let mut bytes = self.0.into_owner().into_read().into_vec();
        bytes.truncate(len);
        bytes
    }

    /// The parsed document, kept since this value was made.
    pub fn gguf(&self) -> &Gguf<'_> {
        self.0.borrow_dependent()
    }
}

/// The crate's one use of `unsafe`.
///
/// Who still maps: only the library API that hands out a file's bytes as one `&[u8]`,
/// [`GgufFile::open`] and [`OwnedGguf::open`] (used by library callers, the examples and
/// tests). Nothing else in the crate or the `gguf` CLI does: commands read headers into
/// memory (`gguf_tools::source::Source::read_header`), tensor data with positioned reads
/// ([`crate::file_range::read_exact_at`], [`crate::file_range::copy_range`]), and writers verify the
/// file they wrote the same way ([`crate::write::GgufBuilder::verify_file`],
/// [`crate::file_range::holds_copy`]), so no command can die of SIGBUS.
///
/// Safety: `memmap2::Mmap::map` is unsafe because the mapping aliases a file that another
/// process could truncate or modify while we hold it; the bytes would then change under a
/// `&[u8]`, and reading a page past a truncation raises SIGBUS, which ends the process. The
/// crate only ever reads the mapping and never relies on it staying unchanged between reads
/// for memory safety: every access is bounds-checked against the mapping's length fixed at
/// map time. Concurrent truncation of a model file while a caller inspects it through these
/// two functions is outside what they defend against, as with every mmap-based reader
/// (ggml's included); a caller that must survive it reads with [`crate::file_range`] instead.
#[cfg(feature = "mmap")]
#[allow(unsafe_code)]
fn map_read_only(file: &std::fs::File) -> std::io::Result<memmap2::Mmap> {
    unsafe { memmap2::Mmap::map(file) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::file::tests::whole_file;
    use crate::grammar::test_bytes::all_ctx;
    use crate::grammar::Ctx;
    use std::path::Path;

    #[test]
    fn tensors_are_placed_after_the_aligned_infos() {
        for ctx in all_ctx() {
            let bytes = whole_file(ctx, None);
            let gguf = Gguf::parse(&bytes).unwrap();
            assert_eq!(gguf.alignment, 32);
            assert_eq!(gguf.tensor_infos_end, bytes.len() as u64);
            let start = gguf.tensor_data_offset;
            assert_eq!((start % 32, start >= bytes.len() as u64), (0, true));
            let a = gguf.tensor("a").unwrap();
            assert_eq!((a.data_offset, a.n_bytes), (Some(start), Some(32)));
            let b = gguf.tensor("b").unwrap();
            assert_eq!((b.data_offset, b.n_bytes), (Some(start + 64), Some(6)));
        }
    }

    #[test]
    fn general_alignment_moves_the_data_start() {
        let bytes = whole_file(Ctx::V3_LE, Some(64));
        let gguf = Gguf::parse(&bytes).unwrap();
        assert_eq!(gguf.alignment, 64);
        assert_eq!(
            gguf.tensor_data_offset,
            bytes.len().next_multiple_of(64) as u64
        );
        let zero = whole_file(Ctx::V3_LE, Some(0));
        assert_eq!(Gguf::parse(&zero).unwrap().alignment, 32);
    }

    #[test]
    #[cfg(feature = "write")]
    fn typed_getters_tell_missing_from_wrong_type() {
        use crate::write::GgufBuilder;
        use crate::ValueType;
        let bytes = GgufBuilder::new(Ctx::V3_LE)
            .set("general.architecture", "llama")
            .set("llama.block_count", 30u32)
            .set("llama.rope.freq_base", 10000.0f32)
            .set("x.signed", -3i32)
            .set("x.flag", true)
            .set("x.bad", crate::write::OwnedValue::String(vec![0xff]))
            .build()
            .unwrap();
        let gguf = Gguf::parse(&bytes).unwrap();
        assert_eq!(gguf.architecture(), Ok("llama"));
        assert_eq!(gguf.get_u64("llama.block_count"), Ok(30));
        assert_eq!(gguf.get_i64("x.signed"), Ok(-3));
        assert_eq!(gguf.get_f64("llama.rope.freq_base"), Ok(10000.0));
        assert_eq!(gguf.get_bool("x.flag"), Ok(true));
        let missing = GetError::Missing {
            key: "general.name".into(),
        };
        assert_eq!(gguf.name(), Err(missing));
        assert_eq!(
            gguf.get_u64("x.signed"),
            Err(GetError::WrongType {
                key: "x.signed".into(),
                expected: "an unsigned integer",
                found: ValueType::I32
            })
        );
        assert_eq!(
            gguf.get_array("x.flag").unwrap_err().to_string(),
            "key \"x.flag\" holds bool, not an array"
        );
        assert_eq!(
            gguf.get_str("x.bad"),
            Err(GetError::NotUtf8 {
                key: "x.bad".into()
            })
        );
    }

    #[test]
    fn an_owned_document_can_leave_the_function_that_read_it() {
        fn load(path: &Path) -> Result<OwnedGguf, crate::ReadError> {
            OwnedGguf::open(path)
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let owned = load(&root.join("tests/corpus/ggml-vocab-llama-spm.gguf")).unwrap();
        let gguf = owned.gguf();
        assert_eq!(gguf.architecture(), Ok("llama"));
        assert_eq!(gguf.bytes.as_ptr_range(), owned.bytes().as_ptr_range());
        // The parse is kept, not redone on each call.
        assert!(std::ptr::eq(gguf, owned.gguf()));
        fn can_cross_threads<T: Send + Sync>(_: &T) {}
        can_cross_threads(&owned);
        assert!(
            format!("{owned:?}").starts_with("OwnedGguf { bytes: 723"),
            "{owned:?}"
        );
        let err = OwnedGguf::from_vec(b"GGUF\x03\0\0\0".to_vec()).unwrap_err();
        assert!(matches!(err.kind, crate::ErrorKind::Truncated { .. }));
        assert!(matches!(
            load(&root.join("no-such.gguf")),
            Err(crate::ReadError::Io(_))
        ));
    }

    #[test]
    fn error_debug_is_the_located_message() {
        let err = Gguf::parse(b"GGML").unwrap_err();
        assert_eq!(format!("{err:?}"), err.to_string());
        assert!(format!("{err:?}").starts_with("offset 0x0 (0): header.magic: "));
    }
}
