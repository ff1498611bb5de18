//! Reading a written file back: [`GgufBuilder::verify`] and [`GgufBuilder::verify_file`].

use super::file::{GgufBuilder, Kept};
use super::WriteError;
use crate::document::Gguf;
use crate::error::Error;
use crate::file_range::RangeError;

/// Why written bytes are not what the builder meant to write (see [`GgufBuilder::verify`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The source file's data region changed (or could not be read) while being copied.
    #[error("the written file is wrong: the source changed while being copied: {0}")]
    SourceChanged(RangeError),
    /// The written file ended, while being checked, before the bytes it should hold.
    #[error("the written file is wrong: it was cut short while being checked: it ends at byte {end}, inside the {len} bytes at offset {offset}")]
    CutShort {
        /// Where the bytes being checked start.
        offset: u64,
        /// How many bytes were being checked.
        len: u64,
        /// Where the file now ends.
        end: u64,
    },
    /// Reading the written file back failed.
    #[error("the written file is wrong: reading it back: {0}")]
    ReadBack(std::io::Error),
    /// Reading the written file's header back failed.
    #[error("the written file is wrong: reading its header back: {0}")]
    ReadHeader(RangeError),
    /// The builder cannot lay the file out (so nothing it wrote can be right).
    #[error("the written file is wrong: {0}")]
    Layout(Box<WriteError>),
    /// The written header does not parse.
    #[error("the written file is wrong: it does not parse: {0}")]
    DoesNotParse(Error),
    /// The written header puts the tensor data elsewhere than the layout does.
    #[error("the written file is wrong: its data starts at {found}, not {expected}")]
    DataStart {
        /// Where the written header says the data starts.
        found: u64,
        /// Where the layout puts it.
        expected: u64,
    },
    /// The written file has another length than the layout's.
    #[error("the written file is wrong: it is {found} bytes long, not {expected}")]
    Length {
        /// The written file's length.
        found: u64,
        /// The layout's length.
        expected: u64,
    },
    /// The source's data region is not in the written file byte for byte.
    #[error("the written file is wrong: the source's tensor data is not there byte for byte")]
    KeptData,
    /// The data of added tensors is not in the written file byte for byte.
    #[error("the written file is wrong: the added tensor data differs")]
    AddedData,
    /// The padding after the data is not zeros.
    #[error("the written file is wrong: the padding after the data is not zeros")]
    Padding,
}

impl Kept<'_> {
    /// Whether `written` holds the region byte for byte at `at`; a file is read again to
    /// compare.
    fn matches(&self, written: Written<'_>, at: u64) -> Result<bool, VerifyError> {
        match (*self, written) {
            (Kept::Bytes(bytes), written) => written.holds(at, bytes),
            (Kept::File { file, start, len }, Written::File { file: copy, .. }) => {
                crate::file_range::holds_copy(copy, at, file, start, len).map_err(changed)
            }
            (Kept::File { file, start, len }, Written::Bytes(_)) => match written.region(at, len) {
                Some(copied) => crate::file_range::range_is(file, start, copied).map_err(changed),
                None => Ok(false),
            },
        }
    }
}

fn changed(e: RangeError) -> VerifyError {
    VerifyError::SourceChanged(e)
}

/// The output [`GgufBuilder::verify`] checks: bytes in memory, or a file of `len` bytes read
/// with positioned reads (no memory map, so a file cut short meanwhile is an error, not a
/// SIGBUS).
#[derive(Clone, Copy)]
enum Written<'a> {
    Bytes(&'a [u8]),
    File { file: &'a std::fs::File, len: u64 },
}

impl Written<'_> {
    fn len(&self) -> u64 {
        match *self {
            Written::Bytes(bytes) => bytes.len() as u64,
            Written::File { len, .. } => len,
        }
    }

    /// The `len` bytes at `at` of written bytes in memory (`None` for a file, or when they
    /// end first).
    fn region(&self, at: u64, len: u64) -> Option<&[u8]> {
        let Written::Bytes(bytes) = *self else {
            return None;
        };
        let at = usize::try_from(at).ok()?;
        bytes.get(at..at.checked_add(usize::try_from(len).ok()?)?)
    }

    /// Whether the bytes at `at` are `expected` (`false` when the output ends first).
    fn holds(&self, at: u64, expected: &[u8]) -> Result<bool, VerifyError> {
        let len = expected.len() as u64;
        match *self {
            Written::Bytes(_) => Ok(self.region(at, len) == Some(expected)),
            Written::File { file, len: size } => {
                if !matches!(at.checked_add(len), Some(end) if end <= size) {
                    return Ok(false);
                }
                crate::file_range::range_is(file, at, expected).map_err(|e| match e {
                    RangeError::Shrank { offset, len, end } => {
                        VerifyError::CutShort { offset, len, end }
                    }
                    RangeError::Read(e) | RangeError::Write(e) => VerifyError::ReadBack(e),
                })
            }
        }
    }

    /// Whether the `len` bytes at `at` are zeros, compared in pieces of at most
    /// [`crate::file_range::COPY_BUFFER`] bytes.
    fn holds_zeros(&self, at: u64, len: u64) -> Result<bool, VerifyError> {
        let zeros = vec![
            0u8;
            usize::try_from(len).map_or(crate::file_range::COPY_BUFFER, |n| n
                .min(crate::file_range::COPY_BUFFER))
        ];
        let mut done = 0;
        while done < len {
            let n = usize::try_from(len - done).map_or(zeros.len(), |left| left.min(zeros.len()));
            if !self.holds(at.saturating_add(done), &zeros[..n])? {
                return Ok(false);
            }
            done += n as u64;
        }
        Ok(true)
    }
}

impl GgufBuilder<'_> {
    /// Checks that `written` (the bytes [`write_to`](GgufBuilder::write_to) produced, read
    /// back) parses, starts its data where the layout says, and holds the source's data
    /// region and every added tensor's bytes unchanged: what `gguf_tools::edit` verifies before
    /// it replaces a file.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use gguf_grammar::write::GgufBuilder;
    /// use gguf_grammar::{Ctx, GgmlType};
    ///
    /// let data = [1u8; 64];
    /// let mut builder = GgufBuilder::new(Ctx::V3_LE);
    /// builder.tensor("t", &[16], GgmlType::F32, &data);
    /// let mut bytes = builder.build()?;
    /// builder.verify(&bytes)?;
    /// *bytes.last_mut().unwrap() ^= 1;
    /// assert!(builder.verify(&bytes).is_err());
    /// # Ok(()) }
    /// ```
    pub fn verify(&self, written: &[u8]) -> Result<(), VerifyError> {
        self.verify_written(written, Written::Bytes(written))
    }

    /// [`verify`](GgufBuilder::verify) for a written file, read with positioned reads: the
    /// header into memory (its size is the builder's own), the data through a bounded buffer.
    /// No memory map, so a file another process cuts short meanwhile is reported (where it
    /// ends, what was being checked), never a SIGBUS.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use gguf_grammar::write::GgufBuilder;
    /// use gguf_grammar::{Ctx, GgmlType};
    ///
    /// let mut builder = GgufBuilder::new(Ctx::V3_LE);
    /// builder.tensor("t", &[16], GgmlType::F32, &[1u8; 64]);
    /// let path = std::env::temp_dir().join(format!("verify-file-{}.gguf", std::process::id()));
    /// std::fs::write(&path, builder.build()?)?;
    /// let file = std::fs::OpenOptions::new().read(true).write(true).open(&path)?;
    /// builder.verify_file(&file)?;
    /// let len = file.metadata()?.len();
    /// file.set_len(len - 1)?; // as another process could, meanwhile
    /// let err = builder.verify_file(&file).unwrap_err();
    /// std::fs::remove_file(&path)?;
    /// assert_eq!(err.to_string(), format!("the written file is wrong: it is {} bytes long, not {len}", len - 1));
    /// # Ok(()) }
    /// ```
    pub fn verify_file(&self, file: &std::fs::File) -> Result<(), VerifyError> {
        let len = file.metadata().map_err(VerifyError::ReadBack)?.len();
        let layout = self
            .layout()
            .map_err(|e| VerifyError::Layout(Box::new(e)))?;
        let mut head = vec![0u8; (layout.head.len() as u64 + layout.zeros).min(len) as usize];
        crate::file_range::read_exact_at(file, 0, &mut head).map_err(VerifyError::ReadHeader)?;
        self.verify_written(&head, Written::File { file, len })
    }

    /// The checks of [`verify`](GgufBuilder::verify): `head` holds at least the written
    /// header, `written` the whole output.
    fn verify_written(&self, head: &[u8], written: Written<'_>) -> Result<(), VerifyError> {
        let gguf =
            Gguf::parse_with(head, Some(self.ctx.endian)).map_err(VerifyError::DoesNotParse)?;
        let layout = self
            .layout()
            .map_err(|e| VerifyError::Layout(Box::new(e)))?;
        let start = layout.head.len() as u64 + layout.zeros;
        let kept = self.source.data;
        if (kept.len() > 0 || layout.added.len() as u64 + layout.tail > 0)
            && gguf.tensor_data_offset != start
        {
            return Err(VerifyError::DataStart {
                found: gguf.tensor_data_offset,
                expected: start,
            });
        }
        let added_at = start + kept.len();
        let tail_at = added_at + layout.added.len() as u64;
        let end = tail_at + layout.tail;
        if written.len() != end {
            return Err(VerifyError::Length {
                found: written.len(),
                expected: end,
            });
        }
        if !kept.matches(written, start)? {
            return Err(VerifyError::KeptData);
        }
        if !written.holds(added_at, &layout.added)? {
            return Err(VerifyError::AddedData);
        }
        if !written.holds_zeros(tail_at, layout.tail)? {
            return Err(VerifyError::Padding);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ggml_type::GgmlType;
    use crate::grammar::Ctx;

    #[test]
    fn a_written_file_cut_short_while_being_checked_is_a_located_error() {
        // The length was taken, then another process cut the file: with a memory map, the
        // read past the cut would be a SIGBUS; here it is an error saying where the file ends.
        let data = vec![7u8; 4096];
        let mut builder = GgufBuilder::new(Ctx::V3_LE);
        builder.tensor("t", &[1024], GgmlType::F32, &data);
        let bytes = builder.build().unwrap();
        let path =
            std::env::temp_dir().join(format!("cut-while-checked-{}.gguf", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let len = bytes.len() as u64;
        builder
            .verify_written(&bytes, Written::File { file: &file, len })
            .unwrap();
        file.set_len(len - 100).unwrap();
        let err = builder
            .verify_written(&bytes, Written::File { file: &file, len })
            .unwrap_err()
            .to_string();
        std::fs::remove_file(&path).unwrap();
        let data_at = len - 4096;
        assert_eq!(
            err,
            format!("the written file is wrong: it was cut short while being checked: it ends at byte {}, inside the 4096 bytes at offset {data_at}", len - 100)
        );
    }
}
