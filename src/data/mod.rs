//! The grammar of tensor data: where a tensor's bytes are, what one block of each ggml
//! type holds, and what those bytes mean as numbers.
//!
//! - [`layout`]: the block layouts, one table shared by everything below;
//! - [`dequant`]: blocks to `f32`, bit-identical to gguf-py 0.19.0's `gguf.quants.dequantize`;
//! - [`f16`](mod@f16): half precision to and from `f32`, as numpy converts;
//! - (hashes as `llama-gguf-hash` prints them are `gguf_tools::hash`);
//! - [`swap`]: tensor data in the other byte order, as gguf-py's `gguf-convert-endian`;
//! - [`Tensor::data`]: a tensor's bytes, checked against the file's length.
//!
//! ```
//! use gguf_grammar::data::dequant::dequantize;
//! use gguf_grammar::GgmlType;
//!
//! // One q8_0 block: f16 scale 0.5 (0x3800), then 32 signed quants.
//! let mut block = vec![0x00, 0x38];
//! block.extend((0..32).map(|i| (i as i8 - 16) as u8));
//! let values = dequantize(GgmlType::Q8_0, &block, 32).unwrap();
//! assert_eq!(values[0], -8.0);
//! assert_eq!(values[31], 7.5);
//! ```

pub mod dequant;
pub mod f16;
mod grids;
pub mod layout;
pub mod swap;

use std::fmt;

use crate::{GgmlType, Tensor};

/// Why tensor data could not be located or decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DataError {
    /// The type has no block layout (removed or unknown id) or no size for this shape.
    #[error("tensor {name}: type {ggml_type} with dims {dims:?} has no defined size")]
    NoSize {
        /// The tensor's name, escaped for display.
        name: String,
        /// The tensor's type.
        ggml_type: GgmlType,
        /// The tensor's dims.
        dims: Vec<u64>,
    },
    /// The data's absolute offset does not fit in 64 bits: the data start plus the tensor's
    /// relative offset overflows.
    #[error(
        "tensor {name}: the data start plus its relative offset {relative:#x} overflows 64 bits"
    )]
    OffsetOverflows {
        /// The tensor's name, escaped for display.
        name: String,
        /// Its offset relative to the data start, as stored.
        relative: u64,
    },
    /// The data starts or ends past the end of the file.
    #[error("tensor {name}: {needed} bytes of data at offset {offset:#x} ({offset}) run past the end of the file ({file_len} bytes)")]
    PastEnd {
        /// The tensor's name, escaped for display.
        name: String,
        /// Absolute offset of the data.
        offset: u64,
        /// The tensor's size in bytes.
        needed: u64,
        /// The file's length.
        file_len: u64,
    },
    /// The type is known but this crate cannot dequantise it (gguf-py cannot either).
    #[error("type {0} cannot be dequantised (gguf-py 0.19.0 does not support it either)")]
    Unsupported(GgmlType),
    /// The type's byte order cannot be converted (gguf-py's `gguf-convert-endian` refuses it too).
    #[error("type {0} cannot be converted to the other byte order (gguf-py's gguf-convert-endian refuses it too)")]
    CannotSwap(GgmlType),
    /// A byte buffer or output buffer that is not a whole number of blocks, or whose sizes disagree.
    #[error("type {ggml_type}: {bytes} bytes do not hold {values} values ({block} values per {size}-byte block)")]
    Mismatch {
        /// The type.
        ggml_type: GgmlType,
        /// Bytes given.
        bytes: usize,
        /// Values asked for.
        values: usize,
        /// Values per block.
        block: usize,
        /// Bytes per block.
        size: usize,
    },
}

struct Name<'a>(&'a [u8]);

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", crate::escape::terminal(self.0))
    }
}

impl<'a> Tensor<'a> {
    /// The tensor's bytes in `file` (the whole file the header was parsed from), checked
    /// against its length: an error, never a short slice, when the file ends early.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use gguf_grammar::{write::GgufBuilder, Ctx, Endian, GgmlType, Gguf, Version};
    ///
    /// let values = [1.0f32, 2.0].map(f32::to_le_bytes).concat();
    /// let bytes = GgufBuilder::new(Ctx { version: Version::V3, endian: Endian::Little })
    ///     .tensor("w", &[2], GgmlType::F32, &values)
    ///     .build()?;
    /// let gguf = Gguf::parse(&bytes)?;
    /// let t = &gguf.tensors[0];
    /// assert_eq!(t.data(&bytes)?.len(), 8);
    /// // A truncated file: the error names the tensor, the offset and the shortfall.
    /// let end = t.data_offset.unwrap() as usize + 7;
    /// let err = t.data(&bytes[..end]).unwrap_err();
    /// assert!(err.to_string().contains("8 bytes of data at offset 0x40 (64) run past the end of the file (71 bytes)"), "{err}");
    /// # Ok(()) }
    /// ```
    pub fn data<'f>(&self, file: &'f [u8]) -> Result<&'f [u8], DataError> {
        let range = self.data_range(file.len() as u64)?;
        // The range lies within the file's length, so in usize.
        Ok(&file[range.start as usize..range.end as usize])
    }

    /// Where the tensor's bytes lie in a file of `file_len` bytes, checked as
    /// [`data`](Tensor::data) checks them: for reading them from a file with
    /// [`crate::file_range::read_exact_at`] rather than a memory map.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use gguf_grammar::{write::GgufBuilder, Ctx, GgmlType, Gguf};
    ///
    /// let bytes = GgufBuilder::new(Ctx::V3_LE).tensor("w", &[2], GgmlType::F32, &[0; 8]).build()?;
    /// let t = &Gguf::parse(&bytes)?.tensors[0];
    /// assert_eq!(t.data_range(bytes.len() as u64)?, 64..72);
    /// assert!(t.data_range(71).is_err());
    /// # Ok(()) }
    /// ```
    pub fn data_range(&self, file_len: u64) -> Result<std::ops::Range<u64>, DataError> {
        let name = || Name(self.info.name.as_bytes()).to_string();
        let needed = self.n_bytes.ok_or_else(|| DataError::NoSize {
            name: name(),
            ggml_type: self.info.ggml_type,
            dims: self.info.dims.clone(),
        })?;
        let offset = self.data_offset.ok_or_else(|| DataError::OffsetOverflows {
            name: name(),
            relative: self.info.offset,
        })?;
        // A start past the end is an error even for an empty tensor.
        if offset > file_len || file_len - offset < needed {
            return Err(DataError::PastEnd {
                name: name(),
                offset,
                needed,
                file_len,
            });
        }
        Ok(offset..offset + needed)
    }
}

/// The number of rows (values of dims 1 and up) of a tensor with `dims` whose data is
/// `n_bytes` long: 0 when it holds no data, whatever its other dims (whose product may
/// then exceed `u64::MAX`).
///
/// ```
/// assert_eq!(gguf_grammar::data::rows(&[4, 3, 2], 96), 6);
/// assert_eq!(gguf_grammar::data::rows(&[4, u64::MAX, u64::MAX, 0], 0), 0);
/// ```
pub fn rows(dims: &[u64], n_bytes: usize) -> u64 {
    if n_bytes == 0 {
        return 0;
    }
    // Non-empty data bounds the product of the dims (Tensor::data checked the size).
    dims.iter()
        .skip(1)
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .unwrap_or(0)
}
