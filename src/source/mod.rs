//! Where a GGUF file's bytes come from: a regular file, standard input (`-`), or anything
//! else that can be read (a pipe, `/dev/stdin`, `<(cat f)`, a character device), read as a
//! stream.
//!
//! Every command that needs only the header asks a [`Source`] for it
//! ([`Source::read_header`]): the header is read into memory, bounded by its own size plus
//! one [`stream::CHUNK`](crate::stream::CHUNK) (a regular file's by twice that, and by the
//! file), and never by a count or length read from the file (see [`crate::stream`]). No memory map is kept open while the result is printed, so a
//! file truncated by another process meanwhile cannot kill the reader (SIGBUS).
//!
//! A FIFO with no writer blocks until one opens it, as `cat` does; `/dev/zero` and
//! `/dev/urandom` end with an error once the bytes fail to be a header.
//!
//! Behind the `remote` feature, [`http`] reads a header over HTTP(S) range requests.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use gguf_grammar::source::Source;
//!
//! let mut source = Source::open("tests/conformance/cases/minimal-llama.gguf".as_ref())?;
//! let mut buf = Vec::new();
//! let (gguf, file_len) = source.read_header(&mut buf)?;
//! assert_eq!(gguf.kvs.len(), 25);
//! assert_eq!(file_len, 21792);
//! # Ok(()) }
//! ```

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::document::Gguf;
use crate::error::ReadError;
use crate::stream::{read_header, CHUNK};

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
    /// Opens `path`: `-` is standard input; a directory is an error; a regular file is read
    /// with its length known; anything else is read as a stream to its end.
    pub fn open(path: &Path) -> Result<Source, SourceError> {
        let io_err = |source| SourceError::Io {
            path: path.to_path_buf(),
            source,
        };
        if path == Path::new("-") {
            return Ok(Source {
                path: path.to_path_buf(),
                reader: Box::new(io::stdin()),
                len: None,
            });
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

    /// Reads the header into `buf` and parses it; returns it with the length of the whole
    /// input. For a stream, the header may take at most [`MAX_STREAMED_HEADER`] bytes, and
    /// the rest of the input is read (and dropped) to learn its length, so a stream that
    /// never ends never returns, as with `wc -c`.
    pub fn read_header<'b>(
        &mut self,
        buf: &'b mut Vec<u8>,
    ) -> Result<(Gguf<'b>, u64), SourceError> {
        let io_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| SourceError::Io { path, source }
        };
        if let Some(len) = self.len {
            read_file_header(&mut self.reader, buf).map_err(|e| match e {
                ReadError::Io(e) => io_err(&self.path)(e),
                ReadError::Parse(e) => e.into(),
            })?;
            return Ok((Gguf::parse(buf)?, len));
        }
        let mut counted = Counting {
            inner: &mut self.reader,
            read: 0,
        };
        let limit = if self.len.is_some() {
            u64::MAX
        } else {
            MAX_STREAMED_HEADER
        };
        *buf = match read_header((&mut counted).take(limit), None) {
            Ok(owned) => owned.into_bytes(),
            Err(ReadError::Io(e)) => return Err(io_err(&self.path)(e)),
            Err(ReadError::Parse(e)) => return Err(e.into()),
        };
        let len = match self.len {
            Some(len) => len,
            None => {
                let rest =
                    io::copy(&mut counted.inner, &mut io::sink()).map_err(io_err(&self.path))?;
                counted.read + rest
            }
        };
        Ok((Gguf::parse(buf)?, len))
    }
}

/// [`read_header`] for a regular file, where reading past the header consumes nothing a
/// caller still needs: each retry reads at least as much again as was read so far, so a
/// large header is parsed a few times rather than once per shortfall the parse reports (the
/// stream's rule, which a 262k-string vocabulary makes dozens of parses). `buf` ends holding
/// the header, as [`read_header`]'s result does; the file bounds what is read.
fn read_file_header(reader: &mut dyn Read, buf: &mut Vec<u8>) -> Result<(), ReadError> {
    let mut want = CHUNK;
    loop {
        let at_eof = (reader.take(want).read_to_end(buf)? as u64) < want;
        let needed = match Gguf::parse(buf) {
            Ok(gguf) => {
                let data_start = usize::try_from(gguf.tensor_data_offset).unwrap_or(usize::MAX);
                buf.truncate(data_start);
                return Ok(());
            }
            Err(e) => match e.kind.bytes_needed() {
                Some(needed) if !at_eof => needed,
                _ => return Err(e.into()),
            },
        };
        want = needed
            .max(buf.len() as u64)
            .div_ceil(CHUNK)
            .saturating_mul(CHUNK);
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
