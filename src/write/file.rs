//! [`GgufBuilder`]: what is written, and where each part goes.

use std::borrow::Cow;
use std::io::{Read, Write};

use super::{Encoder, OwnedKv, OwnedValue, RawArray, TensorSpec, WriteError, MAX_ALIGNMENT};
use crate::document::Gguf;
use crate::ggml_type::GgmlType;
use crate::grammar::{align_up, Ctx, Endian, Version};
use crate::Value;

/// What is kept from the file a builder was made from.
#[derive(Clone, Debug, Default)]
pub(super) struct Source<'a> {
    /// Offset of the end of the tensor infos.
    infos_end: u64,
    /// The file's alignment.
    alignment: u64,
    /// The bytes between the tensor infos and the data start (shorter if the file ends).
    padding: &'a [u8],
    /// The bytes from the data start to the end of the file.
    pub(super) data: Kept<'a>,
    /// The first tensor whose bytes the data region does not wholly hold.
    missing: Option<Missing>,
}

/// Where the source's data region is: in memory, or in a file read with positioned reads.
#[derive(Clone, Copy, Debug)]
pub(super) enum Kept<'a> {
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
    pub(super) fn len(&self) -> u64 {
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
/// let bytes = std::fs::read("tests/conformance/cases/llama-8-tokens.gguf")?;
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
    pub(super) source: Source<'a>,
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
    /// let path = std::path::Path::new("tests/conformance/cases/llama-8-tokens.gguf");
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
    /// let model = OwnedGguf::open("tests/conformance/cases/llama-8-tokens.gguf")?;
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
    pub(super) fn layout(&self) -> Result<Layout, WriteError> {
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
pub(super) struct Layout {
    pub(super) head: Vec<u8>,
    pub(super) zeros: u64,
    pub(super) added: Vec<u8>,
    pub(super) tail: u64,
}
