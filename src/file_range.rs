//! Positioned reads of a file's byte ranges: how tensor data is read, copied and checked
//! without a memory map, so that a file another process truncates meanwhile gives a located
//! error ([`RangeError::Shrank`]) where a map would end the process with SIGBUS.

use std::fs::File;
use std::io::{self, Write};

/// One positioned read: the file's cursor is not used on Unix and Windows; elsewhere the
/// cursor is moved (there is no positioned read to use).
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_read(file, buf, offset)
    }
    #[cfg(not(any(unix, windows)))]
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = file;
        file.seek(SeekFrom::Start(offset))?;
        file.read(buf)
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
/// use gguf_grammar::file_range::{read_exact_at, RangeError};
///
/// let file = std::fs::File::open("tests/conformance/cases/llama-8-tokens.gguf")?;
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
        match read_at(file, &mut buf[done..], at) {
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
/// let file = std::fs::File::open("tests/conformance/cases/llama-8-tokens.gguf")?;
/// let mut out = Vec::new();
/// gguf_grammar::file_range::copy_range(&file, 4, 4, &mut out)?;
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
/// let file = std::fs::File::open("tests/conformance/cases/llama-8-tokens.gguf")?;
/// assert!(gguf_grammar::file_range::range_is(&file, 0, b"GGUF")?);
/// assert!(!gguf_grammar::file_range::range_is(&file, 0, b"GGUG")?);
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
/// let file = std::fs::File::open("tests/conformance/cases/llama-8-tokens.gguf")?;
/// // The version (3, little-endian) is four bytes after the magic; the count of tensors is not.
/// assert!(gguf_grammar::file_range::holds_copy(&file, 4, &file, 4, 4)?);
/// assert!(!gguf_grammar::file_range::holds_copy(&file, 0, &file, 4, 4)?);
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
