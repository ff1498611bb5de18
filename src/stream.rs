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

/// Reads the header of a regular file `file_len` bytes long from `reader` (at its start, or
/// at the offset the file's bytes start at): as [`read_header`], but the reads are sized for
/// a file, where reading past the header costs only the reading, and a header is never
/// looked for past `file_len`.
pub fn read_file_header<R: Read>(mut reader: R, file_len: u64) -> Result<OwnedGguf, ReadError> {
    read_growing(&mut reader, None, Some(file_len))
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
/// (`BENCHMARKS.md`, "Fourth pass"); rounding to 2 MiB rather than 64 KiB reads SmolLM2's
/// 1.8 MB header in two attempts instead of three ("Fifth pass").
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
/// (`BENCHMARKS.md`, "Fifth pass").
const FILE_RETRY_UNIT: u64 = 2 << 20;

/// The most address space a regular file's [`ReadBuf::Anonymous`] reserves up front; a
/// larger header moves to a larger buffer as it is read.
#[cfg(feature = "mmap")]
const ANONYMOUS_RESERVE: u64 = 1 << 30;

/// The bytes read from the start of an input while its header is looked for.
#[derive(Debug)]
pub(crate) enum ReadBuf {
    /// On the heap, grown as bytes arrive (a stream, or bytes given whole).
    Heap(Vec<u8>),
    /// A regular file's: anonymous memory as long as the file (up to [`ANONYMOUS_RESERVE`]),
    /// only reserved until read into, and asked for in huge pages where the kernel offers
    /// them. Read into heap memory, the 7.8 MB Llama 3 tokenizer costs a page fault per
    /// 4 KiB (about 2,000, most of `gguf dump`'s time); in huge pages the process takes half
    /// the time (`BENCHMARKS.md`, "Fourth pass"). This memory maps no file, so no other
    /// process can make reading it fail (SIGBUS).
    #[cfg(feature = "mmap")]
    Anonymous {
        /// The memory; `len` bytes of it hold what was read.
        map: memmap2::MmapMut,
        /// How much was read.
        len: usize,
    },
}

impl ReadBuf {
    /// An empty buffer for a regular file `file_len` bytes long: anonymous memory, or the
    /// heap if the address space cannot be had.
    #[cfg(not(feature = "mmap"))]
    fn for_file(_file_len: u64) -> ReadBuf {
        ReadBuf::Heap(Vec::new())
    }

    #[cfg(feature = "mmap")]
    fn for_file(file_len: u64) -> ReadBuf {
        let reserve = usize::try_from(file_len.min(ANONYMOUS_RESERVE)).unwrap_or(0);
        match anonymous(reserve) {
            Ok(map) => ReadBuf::Anonymous { map, len: 0 },
            Err(_) => ReadBuf::Heap(Vec::new()),
        }
    }

    /// The bytes read.
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            ReadBuf::Heap(bytes) => bytes,
            #[cfg(feature = "mmap")]
            ReadBuf::Anonymous { map, len } => &map[..*len],
        }
    }

    /// The bytes read, on the heap.
    pub(crate) fn into_vec(self) -> Vec<u8> {
        match self {
            ReadBuf::Heap(bytes) => bytes,
            #[cfg(feature = "mmap")]
            ReadBuf::Anonymous { map, len } => map[..len].to_vec(),
        }
    }

    /// Appends up to `want` bytes from `reader`; true when the reader is exhausted. The
    /// buffer grows only by bytes actually read, never by `want`, which may come from a
    /// hostile count.
    fn fill(&mut self, reader: &mut dyn Read, want: u64) -> io::Result<bool> {
        match self {
            ReadBuf::Heap(buf) => {
                let got = reader.take(want).read_to_end(buf)? as u64;
                Ok(got < want)
            }
            #[cfg(feature = "mmap")]
            ReadBuf::Anonymous { map, len } => fill_anonymous(map, len, reader, want),
        }
    }
}

/// Appends up to `want` bytes from `reader` to the `len` bytes of `map`, growing it when full.
#[cfg(feature = "mmap")]
fn fill_anonymous(
    map: &mut memmap2::MmapMut,
    len: &mut usize,
    reader: &mut dyn Read,
    want: u64,
) -> io::Result<bool> {
    let mut left = want;
    while left > 0 {
        if *len == map.len() {
            // Full (the file grew, or is larger than the reserve): look before growing.
            let mut probe = [0u8; 64];
            let n = match reader.read(&mut probe) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                return Ok(true);
            }
            let mut larger = anonymous(map.len().saturating_mul(2).max(CHUNK as usize))?;
            larger[..*len].copy_from_slice(&map[..*len]);
            larger[*len..*len + n].copy_from_slice(&probe[..n]);
            *map = larger;
            *len += n;
            left = left.saturating_sub(n as u64);
            continue;
        }
        let room =
            usize::try_from(left).map_or(map.len() - *len, |left| left.min(map.len() - *len));
        match reader.read(&mut map[*len..*len + room]) {
            Ok(0) => return Ok(true),
            Ok(n) => {
                *len += n;
                left -= n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}

#[cfg(feature = "mmap")]
/// `len` bytes of zeroed anonymous memory, in huge pages where the kernel offers them.
fn anonymous(len: usize) -> io::Result<memmap2::MmapMut> {
    let map = memmap2::MmapMut::map_anon(len)?;
    // Only advice: without huge pages the memory works the same, in 4 KiB pages.
    #[cfg(target_os = "linux")]
    let _ = map.advise(memmap2::Advice::HugePage);
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Gguf;
    use std::io::Cursor;

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
