//! Reading just the header of a GGUF file from any [`Read`], however large the file.
//!
//! The reader pulls 64 KiB, tries to parse, and when the parse runs out of input pulls what
//! the error says is missing ([`crate::ErrorKind::bytes_needed`], a lower bound on the rest of the
//! header), rounded up to 64 KiB. It never reads more than the header plus 64 KiB, and its
//! buffer only ever holds bytes actually read: a hostile length grows it by the bytes the
//! reader really delivers, never by the declared amount.

use std::io::{self, Read};

use crate::document::OwnedGguf;
use crate::error::ReadError;
use crate::grammar::Endian;

/// Bytes pulled at a time.
pub const CHUNK: u64 = 64 * 1024;

/// Reads the header of a GGUF file from `reader` and returns it parsed, owning the header's
/// bytes: those up to the data start (fewer when the file ends first), never any tensor data
/// (it reads at most [`CHUNK`] bytes past the header). `endian` forces a byte order; `None`
/// detects it.
///
/// A hostile count or length (say 2^62 strings) cannot be told from a large header until the
/// reader runs dry, so the reader is read to its end before the error is reported; bound what
/// you are willing to hold in memory with [`Read::take`], e.g. `read_header(file.take(1 << 30), None)`.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use gguf_grammar::stream::read_header;
///
/// let file = std::fs::File::open("tests/conformance/cases/minimal-llama.gguf")?;
/// let header = read_header(file, None)?;
/// assert_eq!(header.gguf().kvs.len(), 25);
/// # Ok(()) }
/// ```
pub fn read_header<R: Read>(mut reader: R, endian: Option<Endian>) -> Result<OwnedGguf, ReadError> {
    read_growing(&mut reader, endian, None)
}

/// Reads from `reader` until its bytes hold a whole header, parsing once per read and
/// keeping the parse that succeeds. Of a stream (`file_len` `None`) it reads what each
/// failed parse says is missing, rounded up to [`CHUNK`]; of a regular file `file_len`
/// bytes long, where reading past the header costs only the reading, see [`file_read_size`].
pub(crate) fn read_growing(
    reader: &mut dyn Read,
    endian: Option<Endian>,
    file_len: Option<u64>,
) -> Result<OwnedGguf, ReadError> {
    let mut buf = Vec::new();
    let mut want = CHUNK;
    let mut at_eof = false;
    loop {
        if let Some(len) = file_len {
            // Bounded by the file, not by a count read from it.
            let left = len.saturating_sub(buf.len() as u64);
            buf.reserve_exact(usize::try_from(want.min(left)).unwrap_or(0));
        }
        at_eof |= fill(reader, &mut buf, want)?;
        let e = match OwnedGguf::header_from_prefix(buf, endian) {
            Ok(header) => return Ok(header),
            Err((back, e)) => {
                buf = back;
                e
            }
        };
        let needed = match e.kind.bytes_needed() {
            Some(needed) if !at_eof => needed,
            _ => return Err(e.into()),
        };
        want = match file_len {
            Some(_) => file_read_size(needed, buf.len() as u64),
            None => needed.div_ceil(CHUNK).saturating_mul(CHUNK),
        };
    }
}

/// How much more to read of a regular file whose first `read` bytes end inside the header,
/// `needed` more bytes being the least it still takes. A parse that fails has walked what
/// was read, so a good guess reads the rest of the header at once: four times `needed`,
/// which counts each string still to come as its 8-byte length alone (tokens and merges
/// average 12–20 bytes with their text), and at least as much again as was read so far.
/// In all, at most four times the header is read. On the corpus, SmolLM2 and a 262k
/// vocabulary, each followed by tensor data, this walks 43 % of one parse in failed attempts
/// where reading `needed` (or doubling) walked 89 %, and reads 11 MB past the 34 MB of
/// headers instead of 8 MB (`BENCHMARKS.md`, "Fourth pass").
fn file_read_size(needed: u64, read: u64) -> u64 {
    needed
        .saturating_mul(4)
        .max(read)
        .div_ceil(CHUNK)
        .saturating_mul(CHUNK)
}

/// Appends up to `want` bytes from `reader` to `buf`; true when the reader is exhausted.
fn fill(reader: &mut dyn Read, buf: &mut Vec<u8>, want: u64) -> io::Result<bool> {
    let got = reader.take(want).read_to_end(buf)? as u64;
    Ok(got < want)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Gguf;
    use std::io::Cursor;

    #[test]
    fn a_regular_file_is_read_to_about_its_header_not_to_its_end() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/corpus/ggml-vocab-llama-bpe.gguf"
        );
        let bytes = std::fs::read(path).unwrap();
        let data_len = 100u64 << 30;
        // The tokenizer followed by 100 GB of tensor data, as a file of known length.
        let mut file = Cursor::new(&bytes[..]).chain(io::repeat(7).take(data_len));
        let file_len = bytes.len() as u64 + data_len;
        let header = read_growing(&mut file, None, Some(file_len)).unwrap();
        let whole = Gguf::parse(&bytes).unwrap();
        // The file ends 4 bytes short of its aligned data start: padding, in this copy.
        let mut with_padding = bytes.clone();
        with_padding.resize(whole.tensor_data_offset as usize, 7);
        assert_eq!(
            *header.gguf(),
            Gguf {
                bytes: &with_padding,
                ..whole.clone()
            }
        );
        let (header_part, data_part) = file.into_inner();
        let read = header_part.position() + (data_len - data_part.limit());
        assert!(read > bytes.len() as u64, "read {read}");
        assert!(read <= 4 * whole.tensor_data_offset + CHUNK, "read {read}");
        // What was read past the header is not in view: it never passes for tensor data.
        assert_eq!(header.bytes().len() as u64, whole.tensor_data_offset);
        assert_eq!(header.into_bytes(), with_padding);
    }

    #[test]
    fn each_retry_reads_four_times_the_least_still_needed_and_never_less_than_was_read() {
        assert_eq!(file_read_size(1, 0), CHUNK);
        assert_eq!(file_read_size(CHUNK, CHUNK), 4 * CHUNK);
        assert_eq!(file_read_size(1, 10 * CHUNK), 10 * CHUNK);
        assert_eq!(file_read_size(u64::MAX, 0), u64::MAX);
    }
}
