//! Where a GGUF file's bytes come from: a regular file, standard input (`-`), or anything
//! else that can be read (a pipe, `/dev/stdin`, `<(cat f)`, a character device), read as a
//! stream.
//!
//! Every command that needs only the header asks a [`Source`] for it
//! ([`Source::read_header`]): the header is read into memory and parsed once, the memory
//! bounded by the header's own size plus one [`stream::CHUNK`](gguf_grammar::stream::CHUNK) (a
//! regular file's by four times the header, and by the file), and never by a count or
//! length read from the file (see [`gguf_grammar::stream`]). No memory map of the file is kept open
//! while the result is printed, so a file truncated by another process meanwhile cannot kill
//! the reader (SIGBUS).
//!
//! A FIFO with no writer blocks until one opens it, as `cat` does; `/dev/zero` and
//! `/dev/urandom` end with an error once the bytes fail to be a header.
//!
//! Tensor data is read with positioned reads ([`gguf_grammar::file_range`]) rather than
//! through a map: a file that another process truncates meanwhile gives a located error
//! (`RangeError::Shrank`), where a memory map would end the process with SIGBUS.
//!
//! Behind the `remote` feature, [`http`] reads a header over HTTP(S) range requests.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use gguf_tools::source::Source;
//!
//! let mut source = Source::open("../../tests/conformance/cases/llama-8-tokens.gguf".as_ref())?;
//! let (header, file_len) = source.read_header()?;
//! assert_eq!(header.gguf().kvs.len(), 25);
//! assert_eq!(header.bytes().len() as u64, header.gguf().tensor_data_offset);
//! assert_eq!(file_len, 21792);
//! # Ok(()) }
//! ```

use std::fs::File;
use std::io::{self, Read, Seek};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use gguf_grammar::error::ReadError;
use gguf_grammar::stream::{read_file_header, read_header};
use gguf_grammar::OwnedGguf;

#[cfg(feature = "remote")]
pub mod http;

/// The most a header may take by default, from any source (a regular file, a stream, a URL):
/// 256 MiB. Real headers are at most tens of megabytes (a 256k-token vocabulary), and a
/// hostile length cannot be told from a large header before it is read, so without a limit a
/// 4 KiB sparse file claiming a 3 GB string would cost 3 GB of memory. Raise it per process
/// with [`set_max_header`] (`gguf --max-header BYTES`).
pub const MAX_HEADER: u64 = 256 << 20;

static LIMIT: AtomicU64 = AtomicU64::new(MAX_HEADER);

/// Sets the most a header may take in this process, from every source ([`Source`],
/// [`crate::set::ShardFile`], remote reads); [`MAX_HEADER`] unless set.
pub fn set_max_header(bytes: u64) {
    LIMIT.store(bytes, Ordering::Relaxed);
}

/// The most a header may take in this process (see [`set_max_header`]).
pub fn max_header() -> u64 {
    LIMIT.load(Ordering::Relaxed)
}

/// What a parse `e` of at most the first `limit` bytes of an input means: of a stream (`len`
/// `None`, `read` bytes read), a header larger than the limit when `read` reached it; of a
/// regular file `len` bytes long, a header larger than the limit when the file is longer and
/// could hold the rest of it, else the file's own error, its figures (bytes left, bytes
/// needed) counted to the end of the file rather than to the limit.
pub fn limited(
    mut e: gguf_grammar::Error,
    limit: u64,
    len: Option<u64>,
    read: u64,
) -> Result<gguf_grammar::Error, io::Error> {
    let Some(needed) = e.kind.bytes_needed() else {
        return Ok(e);
    };
    let beyond = match len {
        None if read >= limit => 0,
        Some(len) if len > limit => len - limit,
        _ => return Ok(e),
    };
    if needed > beyond {
        use gguf_grammar::ErrorKind;
        if let ErrorKind::Truncated { needed, .. } | ErrorKind::LengthPastEnd { needed, .. } =
            &mut e.kind
        {
            *needed -= beyond;
        }
        if let ErrorKind::LengthPastEnd { available, .. } = &mut e.kind {
            *available += beyond;
        }
        if len.is_some() {
            return Ok(e);
        }
    }
    let at = match e.path.to_string() {
        path if path.is_empty() => String::new(),
        path => format!("{path}: "),
    };
    Err(io::Error::other(format!(
        "offset {:#x} ({}): {at}the header is larger than {limit} bytes, the most read into \
         memory (raise it with --max-header BYTES)",
        e.offset, e.offset
    )))
}

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
    Invalid(#[from] gguf_grammar::Error),
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
    /// [`OwnedGguf::bytes`]) with the length of the whole input. The header may take at most
    /// [`max_header`] bytes. Of a stream, the rest of the input is read (and dropped) to
    /// learn its length, so a stream that never ends never returns, as with
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
        let limit = max_header();
        let cut = |e: ReadError, read: u64| match e {
            ReadError::Parse(e) => match limited(e, limit, self.len, read) {
                Ok(e) => e.into(),
                Err(too_large) => io_err(&self.path)(too_large),
            },
            e => read_error(e),
        };
        if let Some(len) = self.len {
            // Straight from the file: a wrapper would hide its `read_buf`, and `read_to_end`
            // would zero the buffer before each read.
            let header = read_file_header((&mut self.reader).take(limit), len.min(limit))
                .map_err(|e| cut(e, 0))?;
            return Ok((header, len));
        }
        let mut counted = Counting {
            inner: &mut self.reader,
            read: 0,
        };
        let header = read_header((&mut counted).take(limit), None);
        let header = header.map_err(|e| cut(e, counted.read))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::SeekFrom;

    #[test]
    fn an_open_regular_file_is_read_as_a_file_from_its_offset_and_anything_else_as_a_stream() {
        let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        let bytes =
            std::fs::read(root.join("tests/conformance/cases/llama-8-tokens.gguf")).unwrap();
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
        let whole = gguf_grammar::Gguf::parse(&bytes).unwrap();
        assert_eq!(header.bytes(), &bytes[..whole.tensor_data_offset as usize]);

        let device = Source::from_open(Path::new("-"), File::open("/dev/null").unwrap()).unwrap();
        assert_eq!(device.len, None);
    }
}
