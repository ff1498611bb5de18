//! The buffer a header is read into (a leaf: [`crate::document`] and [`crate::stream`] both
//! use it).

use std::io::{self, Read};

/// Bytes pulled at a time.
pub const CHUNK: u64 = 64 * 1024;

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
    /// the time (`git show a987a41:BENCHMARKS.md`, "Fourth pass"). This memory maps no file,
    /// so no other process can make reading it fail (SIGBUS).
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
    pub(crate) fn for_file(_file_len: u64) -> ReadBuf {
        ReadBuf::Heap(Vec::new())
    }

    #[cfg(feature = "mmap")]
    pub(crate) fn for_file(file_len: u64) -> ReadBuf {
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
    pub(crate) fn fill(&mut self, reader: &mut dyn Read, want: u64) -> io::Result<bool> {
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
