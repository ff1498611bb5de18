//! Reading just the header of a GGUF file from any [`Read`], however large the file.
//!
//! The reader pulls 64 KiB, tries to parse, and when the parse runs out of input pulls what
//! the error says is missing ([`crate::ErrorKind::bytes_needed`], a lower bound on the rest of the
//! header), rounded up to 64 KiB. It never reads more than the header plus 64 KiB, and its
//! buffer only ever holds bytes actually read: a hostile length grows it by the bytes the
//! reader really delivers, never by the declared amount.

use std::io::Read;

use crate::document::OwnedGguf;
use crate::error::ReadError;
use crate::grammar::Endian;
use crate::read_buf::ReadBuf;

pub use crate::read_buf::CHUNK;

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
/// let file = std::fs::File::open("tests/conformance/cases/llama-8-tokens.gguf")?;
/// let header = read_header(file, None)?;
/// assert_eq!(header.gguf().kvs.len(), 25);
/// # Ok(()) }
/// ```
pub fn read_header<R: Read>(mut reader: R, endian: Option<Endian>) -> Result<OwnedGguf, ReadError> {
    read_growing(&mut reader, endian, None)
}

/// Reads the header of a regular file `file_len` bytes long from `reader` (at its start, or
/// at the offset the file's bytes start at): as [`read_header`], but the reads are sized for
/// a file, where reading past the header costs only the reading, and a header is never
/// looked for past `file_len`.
pub fn read_file_header<R: Read>(mut reader: R, file_len: u64) -> Result<OwnedGguf, ReadError> {
    read_growing(&mut reader, None, Some(file_len))
}

// `OwnedGguf::open` is here, beside the reader it uses without the `mmap` feature, so that
// the document does not depend on the reader.
impl OwnedGguf {
    /// Opens the file at `path` and parses its header. With the `mmap` feature (a default)
    /// the file is memory-mapped and [`OwnedGguf::bytes`] is the whole file, tensor data
    /// included; without it only the header is read into memory (as
    /// [`crate::stream::read_file_header`]), and tensor data is read with
    /// [`crate::file_range`].
    pub fn open(path: impl AsRef<std::path::Path>) -> Result<Self, ReadError> {
        #[cfg(feature = "mmap")]
        {
            Ok(OwnedGguf::from_map(crate::GgufFile::open(path)?)?)
        }
        #[cfg(not(feature = "mmap"))]
        {
            let file = std::fs::File::open(path)?;
            let len = file.metadata()?.len();
            read_file_header(file, len)
        }
    }
}

/// Reads from `reader` until its bytes hold a whole header, parsing once per read and
/// keeping the parse that succeeds. Of a stream (`file_len` `None`) it reads what each
/// failed parse says is missing, rounded up to [`CHUNK`]; of a regular file `file_len`
/// bytes long, where reading past the header costs only the reading, see [`file_read_size`].
fn read_growing(
    reader: &mut dyn Read,
    endian: Option<Endian>,
    file_len: Option<u64>,
) -> Result<OwnedGguf, ReadError> {
    let mut buf = match file_len {
        Some(len) => ReadBuf::for_file(len),
        None => ReadBuf::Heap(Vec::new()),
    };
    let mut want = CHUNK;
    let mut at_eof = false;
    loop {
        at_eof |= buf.fill(reader, want)?;
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
            Some(_) => file_read_size(needed, buf.bytes().len() as u64),
            None => needed.div_ceil(CHUNK).saturating_mul(CHUNK),
        };
    }
}

/// How much more to read of a regular file whose first `read` bytes end inside the header,
/// `needed` more bytes being the least it still takes. A parse that fails has walked what
/// was read, so a good guess reads the rest of the header at once: four times `needed`,
/// which counts each string still to come as its 8-byte length alone (tokens and merges
/// average 12–20 bytes with their text), and at least as much again as was read so far.
/// Rounded up to [`FILE_RETRY_UNIT`], a huge page. In all, at most four times the header
/// (and one unit) is read. On the corpus, SmolLM2 and a 262k vocabulary, each followed by
/// tensor data, four times walks 43 % of one parse in failed attempts where reading `needed`
/// (or doubling) walked 89 %, and reads 11 MB past the 34 MB of headers instead of 8 MB
/// (`git show a987a41:BENCHMARKS.md`, "Fourth pass"); rounding to 2 MiB rather than 64 KiB
/// reads SmolLM2's 1.8 MB header in two attempts instead of three ("Fifth pass").
fn file_read_size(needed: u64, read: u64) -> u64 {
    needed
        .saturating_mul(4)
        .max(read)
        .div_ceil(FILE_RETRY_UNIT)
        .saturating_mul(FILE_RETRY_UNIT)
}

/// What a regular file's retries are rounded up to: a 2 MiB huge page. The first read stays
/// one [`CHUNK`], so a small header (a shard's, a model with a short vocabulary) costs one
/// small read; a first read of 1 or 2 MiB cost small headers more than it saved large ones
/// (`git show a987a41:BENCHMARKS.md`, "Fifth pass").
const FILE_RETRY_UNIT: u64 = 2 << 20;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Gguf;
    use std::io::{self, Cursor};

    fn corpus(name: &str) -> Vec<u8> {
        std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/corpus")
                .join(name),
        )
        .unwrap()
    }

    #[test]
    fn a_regular_file_is_read_to_about_its_header_not_to_its_end() {
        let bytes = corpus("ggml-vocab-llama-bpe.gguf");
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
    fn a_file_longer_than_its_length_said_is_read_on_into_larger_memory() {
        let bytes = corpus("ggml-vocab-llama-spm.gguf");
        for stated in [0, 1, 1000, CHUNK + 1, bytes.len() as u64 - 1] {
            let header = read_growing(&mut &bytes[..], None, Some(stated)).unwrap();
            assert_eq!(header.bytes(), &bytes[..], "stated length {stated}");
        }
        // And one shorter than its length said ends in a located error.
        let cut = &bytes[..bytes.len() / 2];
        let e = read_growing(&mut &cut[..], None, Some(bytes.len() as u64)).unwrap_err();
        let ReadError::Parse(e) = e else {
            panic!("{e:?}")
        };
        assert_eq!(Err(e), Gguf::parse(cut));
    }

    #[test]
    fn each_retry_reads_four_times_the_least_still_needed_and_never_less_than_was_read() {
        assert_eq!(file_read_size(1, CHUNK), FILE_RETRY_UNIT);
        assert_eq!(file_read_size(FILE_RETRY_UNIT, CHUNK), 4 * FILE_RETRY_UNIT);
        assert_eq!(
            file_read_size(FILE_RETRY_UNIT + 1, CHUNK),
            5 * FILE_RETRY_UNIT
        );
        assert_eq!(file_read_size(1, 3 * FILE_RETRY_UNIT), 3 * FILE_RETRY_UNIT);
        assert_eq!(file_read_size(u64::MAX, 0), u64::MAX);
    }
}
