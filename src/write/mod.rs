//! The writer: serialises a document in any version and byte order, byte-exact for every
//! file the parser accepts.
//!
//! One type does all writing: [`GgufBuilder`]. Start it empty ([`GgufBuilder::new`]) to create
//! a file, or from a parsed file ([`GgufBuilder::from_gguf`]) to edit or convert one; change
//! its key/values and tensor descriptors (plain public fields, plus helpers); then
//! [`build`](GgufBuilder::build) a `Vec<u8>` or [`write_to`](GgufBuilder::write_to) any
//! [`Write`](std::io::Write). [`write()`] is `GgufBuilder::from_gguf(gguf).build()`.
//!
//! # What a written file holds
//!
//! `header kv* tensor_info* padding data`, encoded with the same [`Ctx`] (version widths and
//! byte order) the parser reads with. The alignment is the parser's: the first
//! `general.alignment` key when it is a non-zero u32, else 32.
//!
//! The **data region** is the source file's bytes from its tensor-data start to its end, kept
//! verbatim (tensor bytes, padding between tensors, anything trailing), followed by the data
//! of tensors added with [`tensor`](GgufBuilder::tensor) or
//! [`tensor_at`](GgufBuilder::tensor_at). Relative tensor offsets therefore stay valid
//! whatever happens to the header. Tensor data is never byte-swapped: converting a file to
//! the other byte order converts its header only (the layout of a quantised block is
//! type-specific and outside the container).
//!
//! The **padding** between the tensor infos and the data region is the source file's padding,
//! byte for byte, when the new header has the source's length and alignment (so a round trip
//! is exact even for non-zero padding or a file that ends inside its padding); otherwise it is
//! zeros up to the re-aligned data start. A file without any data region ends right after its
//! tensor infos, as llama.cpp's vocabulary files do.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use gguf_grammar::write::{GgufBuilder, OwnedValue};
//! use gguf_grammar::{Ctx, Endian, GgmlType, Gguf, ValueType, Version};
//!
//! let weights: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0].iter().flat_map(|x| x.to_le_bytes()).collect();
//! let bytes = GgufBuilder::new(Ctx::V3_LE)
//!     .kv("general.architecture", "llama")
//!     .kv("llama.block_count", 1u32)
//!     .kv("tokenizer.ggml.tokens", OwnedValue::array(ValueType::String, ["<s>", "</s>"]))
//!     .alignment(64)
//!     .tensor("output_norm.weight", &[4], GgmlType::F32, &weights)
//!     .build()?;
//!
//! let gguf = Gguf::parse(&bytes)?;
//! assert_eq!((gguf.alignment, gguf.tensor_data_offset % 64), (64, 0));
//! let t = gguf.tensor("output_norm.weight").unwrap();
//! let start = t.data_offset.unwrap() as usize;
//! assert_eq!(&bytes[start..start + 16], &weights[..]);
//!
//! // Byte-exact round trip, and conversion to big-endian v2 and back.
//! assert_eq!(gguf_grammar::write::write(&gguf)?, bytes);
//! let big = GgufBuilder::from_gguf(&gguf)
//!     .ctx(Ctx { version: Version::V2, endian: Endian::Big })
//!     .build()?;
//! let back = GgufBuilder::from_gguf(&Gguf::parse(&big)?).ctx(Ctx::V3_LE).build()?;
//! assert_eq!(back, bytes);
//! # Ok(()) }
//! ```

mod file;
mod header;
mod kv;
mod string;
mod tensor_info;
mod value;
mod verify;

pub use file::GgufBuilder;
pub use kv::OwnedKv;
pub use tensor_info::TensorSpec;
pub use value::{OwnedArray, OwnedValue, RawArray};
pub use verify::VerifyError;

use crate::document::Gguf;
use crate::elements::Number;
use crate::grammar::{ByteOrder, Ctx, Version};

/// The largest alignment the writer pads to: 16 MiB (2^24).
///
/// ggml accepts any power of two, and the padding it implies is at most `alignment - 1`
/// zero bytes. Readers align tensor data for SIMD loads (ggml writes 32) or for memory
/// mapping (pages of 4 KiB to 64 KiB, huge pages of 2 MiB); 16 MiB leaves room above every
/// one of those while keeping a corrupt or mistyped value (`general.alignment=2147483648`)
/// from turning a small file into gigabytes of zeros.
pub const MAX_ALIGNMENT: u64 = 1 << 24;

/// Why a document could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// A count, length or dim does not fit the version's width (u32 in v1).
    #[error("{what} {value} does not fit in the {width}-byte field of GGUF v{version}")]
    TooLarge {
        /// The field, e.g. `"string length"`.
        what: &'static str,
        /// The value that does not fit.
        value: u64,
        /// The field's width in bytes.
        width: u64,
        /// The version written.
        version: u32,
    },
    /// Arrays nested deeper than the parser reads ([`MAX_NESTING`](crate::grammar::value::MAX_NESTING)).
    #[error("arrays nested more than {limit} deep")]
    NestingTooDeep {
        /// The depth limit.
        limit: u32,
    },
    /// A tensor's data would be placed before the end of the source file's data region,
    /// which is kept verbatim.
    #[error(
        "tensor {name:?}: data at offset {offset} overlaps the kept data region (ends at {kept})"
    )]
    OverlapsKeptData {
        /// The tensor's name (lossily decoded).
        name: String,
        /// The requested relative offset.
        offset: u64,
        /// Length of the kept data region.
        kept: u64,
    },
    /// The source file does not hold every tensor's bytes (its data region ends early or its
    /// data start lies past its end): writing would silently drop tensor data. Call
    /// [`GgufBuilder::allow_missing_data`] to write the descriptors anyway.
    #[error("tensor {name:?}: its data ({needed} bytes at relative offset {offset}) is not in the source, whose data region holds {have} bytes; writing would lose it")]
    MissingTensorData {
        /// The first tensor whose bytes are missing (lossily decoded).
        name: String,
        /// Its relative offset.
        offset: u64,
        /// Its size in bytes (0 when its type has no known size).
        needed: u64,
        /// Length of the source's data region.
        have: u64,
    },
    /// The alignment differs from the source's while tensors still point into the kept data
    /// region: their offsets follow the old alignment, which ggml checks
    /// (`tensor-offset-not-sequential`), and the writer does not move tensor data.
    #[error("the alignment changes from {from} to {to} but the tensor data keeps the old layout; remove the tensors or keep the alignment")]
    AlignmentChanged {
        /// The source's alignment.
        from: u64,
        /// The new alignment.
        to: u64,
    },
    /// Zero padding would be written for an alignment above [`MAX_ALIGNMENT`].
    #[error("alignment {alignment} is above the largest this writer pads to ({MAX_ALIGNMENT})")]
    AlignmentTooLarge {
        /// The requested alignment.
        alignment: u64,
    },
    /// An offset computation overflowed u64.
    #[error("tensor {name:?}: offset overflows")]
    OffsetOverflow {
        /// The tensor's name (lossily decoded).
        name: String,
    },
    /// The output could not be written.
    #[error("write error: {0}")]
    Io(#[from] std::io::Error),
    /// The source file's data region could not be copied (see
    /// [`GgufBuilder::from_header_and_file`]): it shrank, or reading it failed.
    #[error("tensor data: {0}")]
    Source(crate::file_range::RangeError),
    /// The file written by [`GgufBuilder::write_file`] is not what was meant to be written.
    #[error("{0}")]
    Verify(VerifyError),
}

/// Writes `gguf` back in its own version and byte order: `write(parse(bytes)) == bytes` for
/// every file the parser accepts.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let bytes = std::fs::read("tests/conformance/cases/llama-8-tokens.gguf")?;
/// let gguf = gguf_grammar::Gguf::parse(&bytes)?;
/// assert_eq!(gguf_grammar::write::write(&gguf)?, bytes); // tensor data included
/// # Ok(()) }
/// ```
pub fn write(gguf: &Gguf<'_>) -> Result<Vec<u8>, WriteError> {
    // Byte-exact: tensor data the source lacks is lacking in the copy too, nothing more.
    GgufBuilder::from_gguf(gguf).allow_missing_data().build()
}

/// Encodes fields with a [`Ctx`]'s widths and byte order: the parser's readers, reversed,
/// with one writer per construct of `src/grammar/` (header, string, value, kv, tensor info).
struct Encoder {
    ctx: Ctx,
    out: Vec<u8>,
}

impl Encoder {
    /// A number in the context's byte order.
    fn put<T: Number>(&mut self, v: T) {
        self.ctx.endian.write(v, &mut self.out)
    }

    /// A count, length or dim: u32 in v1, u64 in v2 and v3.
    pub(super) fn count(&mut self, n: u64, what: &'static str) -> Result<(), WriteError> {
        match self.ctx.version {
            Version::V1 => {
                let n = u32::try_from(n).map_err(|_| WriteError::TooLarge {
                    what,
                    value: n,
                    width: 4,
                    version: 1,
                })?;
                self.put(n);
            }
            Version::V2 | Version::V3 => self.put(n),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::Endian;

    #[test]
    fn v1_refuses_counts_past_u32() {
        let ctx = Ctx {
            version: Version::V1,
            endian: Endian::Little,
        };
        let err = encoder(ctx).header(1 << 32, 0).unwrap_err();
        assert!(
            matches!(
                err,
                WriteError::TooLarge {
                    what: "tensor count",
                    ..
                }
            ),
            "{err}"
        );
    }

    pub(super) fn encoder(ctx: Ctx) -> Encoder {
        Encoder {
            ctx,
            out: Vec::new(),
        }
    }
}
