//! Where a GGUF file's bytes come from: a regular file, standard input (`-`), or anything
//! else that can be read (a pipe, `/dev/stdin`, `<(cat f)`, a character device), read as a
//! stream.
//!
//! Every command that needs only the header asks a [`Source`] for it
//! ([`Source::read_header`]): the header is read into memory and parsed once, the memory
//! bounded by the header's own size plus one [`stream::CHUNK`](crate::stream::CHUNK) (a
//! regular file's by four times the header, and by the file), and never by a count or
//! length read from the file (see [`crate::stream`]). No memory map of the file is kept open
//! while the result is printed, so a file truncated by another process meanwhile cannot kill
//! the reader (SIGBUS).
//!
//! A FIFO with no writer blocks until one opens it, as `cat` does; `/dev/zero` and
//! `/dev/urandom` end with an error once the bytes fail to be a header.
//!
//! Tensor data is read with positioned reads ([`read_exact_at`], [`copy_range`]) rather than
//! through a map: a file that another process truncates meanwhile gives a located error
//! ([`RangeError::Shrank`]), where a memory map would end the process with SIGBUS.
//!
//! Behind the `remote` feature, [`http`] reads a header over HTTP(S) range requests.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use gguf_grammar::source::Source;
//!
//! let mut source = Source::open("tests/conformance/cases/minimal-llama.gguf".as_ref())?;
//! let (header, file_len) = source.read_header()?;
//! assert_eq!(header.gguf().kvs.len(), 25);
//! assert_eq!(header.bytes().len() as u64, header.gguf().tensor_data_offset);
//! assert_eq!(file_len, 21792);
//! # Ok(()) }
//! ```

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::document::OwnedGguf;
use crate::error::ReadError;
use crate::stream::read_growing;

#[cfg(feature = "remote")]
pub mod http;

/// The most a header read from a stream may take (1 GiB): real headers are at most tens of
/// megabytes (a 256k-token vocabulary), and a stream has no length to bound a hostile count
/// by. A regular file's header is bounded by the file.
pub const MAX_STREAMED_HEADER: u64 = 1 << 30;

/// Why a source could not give a header.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// The path names a directory.
    #[error("{}: is a directory", .0.display())]
    IsADirectory(PathBuf),
    /// The source could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path (`-` for standard input).
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// The bytes are not a GGUF header (including: the input ends inside it).
    #[error(transparent)]
    Invalid(#[from] crate::Error),
}

/// An opened input.
pub struct Source {
    path: PathBuf,
    reader: Box<dyn Read>,
    /// The length of a regular file, known before reading.
    len: Option<u64>,
}

impl Source {
    /// Opens `path`: `-` is standard input (when redirected from a regular file, that file
    /// from its current offset on); a directory is an error; a regular file is read with its
    /// length known; anything else is read as a stream to its end.
    pub fn open(path: &Path) -> Result<Source, SourceError> {
        let io_err = |source| SourceError::Io {
            path: path.to_path_buf(),
            source,
        };
        if path == Path::new("-") {
            // Standard input redirected from a regular file is read as that file, from
            // where its offset stands; a pipe or terminal (or a closed fd 0) as a stream.
            let stdin = io::stdin().as_fd().try_clone_to_owned();
            return match stdin
                .map(File::from)
                .map(|file| Source::from_open(path, file))
            {
                Ok(Ok(source)) => Ok(source),
                _ => Ok(Source {
                    path: path.to_path_buf(),
                    reader: Box::new(io::stdin()),
                    len: None,
                }),
            };
        }
        let meta = std::fs::metadata(path).map_err(io_err)?;
        if meta.is_dir() {
            return Err(SourceError::IsADirectory(path.to_path_buf()));
        }
        let file = File::open(path).map_err(io_err)?;
        Ok(Source {
            path: path.to_path_buf(),
            reader: Box::new(file),
            len: meta.is_file().then_some(meta.len()),
        })
    }

    /// An already open `file`, read from its current offset: a regular file as the bytes
    /// from that offset to its end (one read of about the header, as a named file), anything
    /// else as a stream. Fails only when the file cannot be asked its kind or offset.
    fn from_open(path: &Path, mut file: File) -> io::Result<Source> {
        let meta = file.metadata()?;
        let len = match meta.is_file() {
            true => Some(meta.len().saturating_sub(file.stream_position()?)),
            false => None,
        };
        Ok(Source {
            path: path.to_path_buf(),
            reader: Box::new(file),
            len,
        })
    }

    /// Reads the header and parses it, once; returns it (owning the header's bytes, see
    /// [`OwnedGguf::bytes`]) with the length of the whole input. For a stream, the header may
    /// take at most [`MAX_STREAMED_HEADER`] bytes, and the rest of the input is read (and
    /// dropped) to learn its length, so a stream that never ends never returns, as with
    /// `wc -c`.
    pub fn read_header(&mut self) -> Result<(OwnedGguf, u64), SourceError> {
        let io_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| SourceError::Io { path, source }
        };
        let read_error = |e| match e {
            ReadError::Io(e) => io_err(&self.path)(e),
            ReadError::Parse(e) => e.into(),
        };
        if let Some(len) = self.len {
            // Straight from the file: a wrapper would hide its `read_buf`, and `read_to_end`
            // would zero the buffer before each read.
            let header = read_growing(&mut self.reader, None, Some(len)).map_err(read_error)?;
            return Ok((header, len));
        }
        let mut counted = Counting {
            inner: &mut self.reader,
            read: 0,
        };
        let header = read_growing(&mut (&mut counted).take(MAX_STREAMED_HEADER), None, None)
            .map_err(read_error)?;
        let rest = io::copy(&mut counted.inner, &mut io::sink()).map_err(io_err(&self.path))?;
        Ok((header, counted.read + rest))
    }
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("path", &self.path)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// Counts the bytes read through it.
struct Counting<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// Why a range of a file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RangeError {
    /// The file ended before the range did: it was cut short after its length was taken
    /// (another process truncated it while it was being read).
    #[error("the source shrank while being read: it ends at byte {end}, inside the {len} bytes at offset {offset}")]
    Shrank {
        /// Where the range starts.
        offset: u64,
        /// Its length.
        len: u64,
        /// Where the file now ends.
        end: u64,
    },
    /// Reading failed.
    #[error("reading the source: {0}")]
    Read(io::Error),
    /// Writing the copy failed.
    #[error("writing: {0}")]
    Write(io::Error),
}

/// The largest buffer [`copy_range`] uses, whatever the length copied.
pub const COPY_BUFFER: usize = 1 << 20;

/// Fills `buf` from `file` at `offset` with positioned reads (the file's cursor is not
/// used, so a file can be read from several places at once).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use gguf_grammar::source::{read_exact_at, RangeError};
///
/// let file = std::fs::File::open("tests/conformance/cases/minimal-llama.gguf")?;
/// let mut magic = [0u8; 4];
/// read_exact_at(&file, 0, &mut magic)?;
/// assert_eq!(&magic, b"GGUF");
/// let past_the_end = read_exact_at(&file, 21790, &mut magic).unwrap_err();
/// assert!(matches!(past_the_end, RangeError::Shrank { end: 21792, .. }));
/// # Ok(()) }
/// ```
pub fn read_exact_at(file: &File, offset: u64, buf: &mut [u8]) -> Result<(), RangeError> {
    let mut done = 0;
    while done < buf.len() {
        // `done` is within the buffer, so the sum is at most the range's end.
        let at = offset.saturating_add(done as u64);
        match file.read_at(&mut buf[done..], at) {
            Ok(0) => {
                return Err(RangeError::Shrank {
                    offset,
                    len: buf.len() as u64,
                    end: file.metadata().map_or(at, |m| m.len().min(at)),
                })
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(RangeError::Read(e)),
        }
    }
    Ok(())
}

/// Copies the `len` bytes of `file` at `offset` to `out` through a buffer of at most
/// [`COPY_BUFFER`] bytes, with positioned reads.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let file = std::fs::File::open("tests/conformance/cases/minimal-llama.gguf")?;
/// let mut out = Vec::new();
/// gguf_grammar::source::copy_range(&file, 4, 4, &mut out)?;
/// assert_eq!(out, 3u32.to_le_bytes());
/// # Ok(()) }
/// ```
pub fn copy_range(
    file: &File,
    offset: u64,
    len: u64,
    out: &mut (impl Write + ?Sized),
) -> Result<(), RangeError> {
    let mut buf = vec![0u8; usize::try_from(len).map_or(COPY_BUFFER, |n| n.min(COPY_BUFFER))];
    let mut done = 0;
    while done < len {
        let n = usize::try_from(len - done).map_or(buf.len(), |left| left.min(buf.len()));
        let at = offset.saturating_add(done);
        read_exact_at(file, at, &mut buf[..n]).map_err(|e| match e {
            RangeError::Shrank { end, .. } => RangeError::Shrank { offset, len, end },
            e => e,
        })?;
        out.write_all(&buf[..n]).map_err(RangeError::Write)?;
        done += n as u64;
    }
    Ok(())
}

/// Whether the `expected.len()` bytes of `file` at `offset` are `expected`, read with
/// positioned reads through a buffer of at most [`COPY_BUFFER`] bytes: how a written copy
/// is checked against its source without a memory map.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let file = std::fs::File::open("tests/conformance/cases/minimal-llama.gguf")?;
/// assert!(gguf_grammar::source::range_is(&file, 0, b"GGUF")?);
/// assert!(!gguf_grammar::source::range_is(&file, 0, b"GGUG")?);
/// # Ok(()) }
/// ```
pub fn range_is(file: &File, offset: u64, expected: &[u8]) -> Result<bool, RangeError> {
    let mut buf = vec![0u8; expected.len().min(COPY_BUFFER)];
    for (i, part) in expected.chunks(COPY_BUFFER).enumerate() {
        // Within the range, which starts at `offset` and is `expected.len()` long.
        let at = offset.saturating_add((i * COPY_BUFFER) as u64);
        read_exact_at(file, at, &mut buf[..part.len()])?;
        if buf[..part.len()] != *part {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether `copy` holds, at `copy_offset`, the `len` bytes of `original` at
/// `original_offset`: both read with positioned reads through two buffers of at most
/// [`COPY_BUFFER`] bytes, so a written copy is checked against its source without a memory
/// map. A copy that ends before the range does is `Ok(false)`; the original ending early (it
/// shrank) or failing to read is an error.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let file = std::fs::File::open("tests/conformance/cases/minimal-llama.gguf")?;
/// // The version (3, little-endian) is four bytes after the magic; the count of tensors is not.
/// assert!(gguf_grammar::source::holds_copy(&file, 4, &file, 4, 4)?);
/// assert!(!gguf_grammar::source::holds_copy(&file, 0, &file, 4, 4)?);
/// # Ok(()) }
/// ```
pub fn holds_copy(
    copy: &File,
    copy_offset: u64,
    original: &File,
    original_offset: u64,
    len: u64,
) -> Result<bool, RangeError> {
    let size = usize::try_from(len).map_or(COPY_BUFFER, |n| n.min(COPY_BUFFER));
    let (mut want, mut got) = (vec![0u8; size], vec![0u8; size]);
    let mut done = 0;
    while done < len {
        let n = usize::try_from(len - done).map_or(size, |left| left.min(size));
        read_exact_at(
            original,
            original_offset.saturating_add(done),
            &mut want[..n],
        )
        .map_err(|e| match e {
            RangeError::Shrank { end, .. } => RangeError::Shrank {
                offset: original_offset,
                len,
                end,
            },
            e => e,
        })?;
        match read_exact_at(copy, copy_offset.saturating_add(done), &mut got[..n]) {
            Ok(()) if want[..n] == got[..n] => done += n as u64,
            Ok(()) | Err(RangeError::Shrank { .. }) => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::SeekFrom;

    #[test]
    fn an_open_regular_file_is_read_as_a_file_from_its_offset_and_anything_else_as_a_stream() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(root.join("tests/conformance/cases/minimal-llama.gguf")).unwrap();
        // 1000 bytes that a shell (or `head -c 1000`) already consumed, then the model.
        let path = std::env::temp_dir().join(format!("gguf-source-{}", std::process::id()));
        std::fs::write(&path, [&[0xab; 1000][..], &bytes].concat()).unwrap();
        let mut file = File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        file.seek(SeekFrom::Start(1000)).unwrap();
        let mut source = Source::from_open(Path::new("-"), file).unwrap();
        assert_eq!(source.len, Some(bytes.len() as u64));
        let (header, len) = source.read_header().unwrap();
        assert_eq!(len, bytes.len() as u64);
        let whole = crate::Gguf::parse(&bytes).unwrap();
        assert_eq!(header.bytes(), &bytes[..whole.tensor_data_offset as usize]);

        let device = Source::from_open(Path::new("-"), File::open("/dev/null").unwrap()).unwrap();
        assert_eq!(device.len, None);
    }
}
