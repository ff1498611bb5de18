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
use crate::Gguf;

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
    let mut buf = Vec::new();
    let mut want = CHUNK;
    let mut at_eof = false;
    let data_start = loop {
        at_eof |= fill(&mut reader, &mut buf, want)?;
        let needed = match Gguf::parse_with(&buf, endian) {
            Ok(gguf) => break gguf.tensor_data_offset,
            Err(e) => match e.kind.bytes_needed() {
                Some(needed) if !at_eof => needed,
                _ => return Err(e.into()),
            },
        };
        want = needed.div_ceil(CHUNK).saturating_mul(CHUNK);
    };
    // Keep the header only: bytes past the data start are an arbitrary slice of the tensor
    // data, which must not pass for the whole of it (see `GgufBuilder::from_gguf`).
    buf.truncate(usize::try_from(data_start).unwrap_or(usize::MAX));
    Ok(OwnedGguf::from_vec_with(buf, endian)?)
}

/// Appends up to `want` bytes from `reader` to `buf`; true when the reader is exhausted.
fn fill<R: Read>(reader: &mut R, buf: &mut Vec<u8>, want: u64) -> io::Result<bool> {
    let got = reader.by_ref().take(want).read_to_end(buf)? as u64;
    Ok(got < want)
}
