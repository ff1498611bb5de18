//! The GGUF grammar: one nom parser per construct, composed into [`file::file`].
//!
//! Every parser takes a [`Ctx`] (version and byte order) and a `&[u8]`, and borrows what it
//! returns from that slice. The modules follow the productions of `grammar/GRAMMAR.md` in order:
//!
//! | module | production |
//! |---|---|
//! | [`header`] | magic, version (with byte-order detection), tensor and kv counts |
//! | [`string`] | length-prefixed byte string |
//! | [`value`] | value type tag, scalar, array (homogeneous, may nest) |
//! | [`kv`] | metadata key/value pair |
//! | [`tensor_info`] | name, n_dims, dims, ggml type, relative offset |
//! | [`file`](mod@file) | header, kvs, tensor infos, alignment and tensor-data start |
//!
//! Errors raised inside the grammar record their offset as the number of bytes remaining
//! (see [`crate::error`]); [`file::file`] returns located errors.

pub mod file;
pub mod header;
pub mod kv;
pub mod string;
pub mod tensor_info;
pub mod value;

use crate::error::{Error, ErrorKind};

/// The result type of every grammar parser.
pub type PResult<'a, O> = nom::IResult<&'a [u8], O, Error>;

/// Byte order of every multi-byte field after the magic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endian {
    /// Little endian: what llama.cpp writes.
    Little,
    /// Big endian (byte-swapped files, written by gguf-py for big-endian hosts).
    Big,
}

impl Endian {
    /// `"little"` or `"big"`.
    pub fn name(self) -> &'static str {
        match self {
            Endian::Little => "little",
            Endian::Big => "big",
        }
    }
}

impl From<Endian> for nom::number::Endianness {
    fn from(endian: Endian) -> Self {
        match endian {
            Endian::Little => nom::number::Endianness::Little,
            Endian::Big => nom::number::Endianness::Big,
        }
    }
}

/// A GGUF version whose layout is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    /// GGUF v1: counts, string lengths, array lengths and dims are u32.
    V1 = 1,
    /// GGUF v2: as v1 but those widths are u64.
    V2 = 2,
    /// GGUF v3: as v2 (v3 added big-endian support).
    V3 = 3,
}

impl Version {
    /// The version number as stored in the file.
    pub fn number(self) -> u32 {
        self as u32
    }

    /// The version with number `n`, if its layout is known.
    pub fn from_number(n: u32) -> Option<Self> {
        match n {
            1 => Some(Version::V1),
            2 => Some(Version::V2),
            3 => Some(Version::V3),
            _ => None,
        }
    }
}

/// What every parser needs to know about the file: version (field widths) and byte order.
///
/// ```
/// use gguf_grammar::grammar::{Ctx, Endian, Version};
///
/// let ctx = Ctx { version: Version::V1, endian: Endian::Big };
/// // v1 counts are u32
/// assert_eq!(ctx.count(&[0, 0, 0, 7, 0xff], "count").unwrap(), (&[0xff][..], 7));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ctx {
    /// Field widths follow the version.
    pub version: Version,
    /// Byte order of every multi-byte field.
    pub endian: Endian,
}

macro_rules! fixed_width_reader {
    ($name:ident, $ty:ty) => {
        #[doc = concat!("Reads a `", stringify!($ty), "` in the context's byte order; `what` names the field in errors.")]
        #[inline]
        pub fn $name<'a>(self, input: &'a [u8], what: &'static str) -> PResult<'a, $ty> {
            const N: usize = std::mem::size_of::<$ty>();
            match input.first_chunk::<N>() {
                Some(bytes) => {
                    let value = match self.endian {
                        Endian::Little => <$ty>::from_le_bytes(*bytes),
                        Endian::Big => <$ty>::from_be_bytes(*bytes),
                    };
                    Ok((&input[N..], value))
                }
                None => Err(truncated(input, what, N)),
            }
        }
    };
}

impl Ctx {
    /// Little-endian GGUF v3, what llama.cpp writes today.
    pub const V3_LE: Ctx = Ctx {
        version: Version::V3,
        endian: Endian::Little,
    };

    fixed_width_reader!(u8, u8);
    fixed_width_reader!(i8, i8);
    fixed_width_reader!(u16, u16);
    fixed_width_reader!(i16, i16);
    fixed_width_reader!(u32, u32);
    fixed_width_reader!(i32, i32);
    fixed_width_reader!(u64, u64);
    fixed_width_reader!(i64, i64);
    fixed_width_reader!(f32, f32);
    fixed_width_reader!(f64, f64);

    /// Reads a count, length or dim: u32 in v1, u64 in v2 and v3.
    #[inline]
    pub fn count<'a>(self, input: &'a [u8], what: &'static str) -> PResult<'a, u64> {
        match self.version {
            Version::V1 => self.u32(input, what).map(|(rest, n)| (rest, u64::from(n))),
            Version::V2 | Version::V3 => self.u64(input, what),
        }
    }

    /// Bytes a count, length or dim takes: 4 in v1, 8 in v2 and v3.
    pub fn count_width(self) -> u64 {
        match self.version {
            Version::V1 => 4,
            Version::V2 | Version::V3 => 8,
        }
    }

    /// The count reader as a standalone parser, for nom-derive's `Parse = "..."`.
    pub fn count_parser(self, what: &'static str) -> impl Fn(&[u8]) -> PResult<'_, u64> {
        move |input| self.count(input, what)
    }
}

/// The error for an input that ends `want` bytes into a field of `want` bytes, at `input`.
fn truncated(input: &[u8], what: &'static str, want: usize) -> nom::Err<Error> {
    nom::Err::Error(Error::at(
        input,
        ErrorKind::Truncated {
            construct: what,
            needed: (want - input.len()) as u64,
        },
    ))
}

/// Splits `len` bytes off the front of `input`, or fails with [`ErrorKind::LengthPastEnd`]
/// reported at `length_field`, where the untrusted `declared` length was read from.
#[inline]
pub fn take_declared<'a>(
    input: &'a [u8],
    len: u64,
    declared: u64,
    what: &'static str,
    length_field: &[u8],
) -> PResult<'a, &'a [u8]> {
    match usize::try_from(len) {
        Ok(n) if n <= input.len() => Ok((&input[n..], &input[..n])),
        _ => Err(nom::Err::Error(Error::at(
            length_field,
            ErrorKind::LengthPastEnd {
                construct: what,
                declared,
                available: input.len() as u64,
                needed: len - input.len() as u64,
            },
        ))),
    }
}

/// Turns nom's `Incomplete` (from the nom-derive generated records) into a located
/// [`ErrorKind::Truncated`] at the start of the record.
pub(crate) fn complete<'a, O>(
    input: &'a [u8],
    what: &'static str,
    result: PResult<'a, O>,
) -> PResult<'a, O> {
    result.map_err(|err| match err {
        nom::Err::Incomplete(needed) => nom::Err::Error(Error::at(
            input,
            ErrorKind::Truncated {
                construct: what,
                needed: match needed {
                    nom::Needed::Size(n) => n.get() as u64,
                    nom::Needed::Unknown => 1,
                },
            },
        )),
        other => other,
    })
}

/// Rounds `offset` up to a multiple of `alignment` (which must be non-zero);
/// `None` on overflow.
///
/// ```
/// use gguf_grammar::grammar::align_up;
/// assert_eq!(align_up(64, 32), Some(64));
/// assert_eq!(align_up(65, 32), Some(96));
/// assert_eq!(align_up(49, 48), Some(96));
/// assert_eq!(align_up(u64::MAX, 32), None);
/// ```
pub fn align_up(offset: u64, alignment: u64) -> Option<u64> {
    match offset % alignment {
        0 => Some(offset),
        rem => offset.checked_add(alignment - rem),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_follow_byte_order_and_version_width() {
        let bytes = [1, 0, 0, 0, 0, 0, 0, 2, 9];
        let le1 = Ctx {
            version: Version::V1,
            endian: Endian::Little,
        };
        let be3 = Ctx {
            version: Version::V3,
            endian: Endian::Big,
        };
        assert_eq!(le1.count(&bytes, "n").unwrap(), (&bytes[4..], 1));
        assert_eq!(
            be3.count(&bytes, "n").unwrap(),
            (&bytes[8..], 0x0100_0000_0000_0002)
        );
        assert_eq!(Ctx::V3_LE.u16(&bytes, "n").unwrap().1, 1);
        assert_eq!(be3.u16(&bytes, "n").unwrap().1, 0x0100);
    }

    #[test]
    fn short_reads_say_how_much_is_missing() {
        let err = Ctx::V3_LE.u64(&[1, 2, 3], "kv count").unwrap_err();
        let nom::Err::Error(e) = err else { panic!() };
        assert_eq!(
            e.kind,
            ErrorKind::Truncated {
                construct: "kv count",
                needed: 5
            }
        );
        assert_eq!(e.located(10).offset, 7);
    }

    #[test]
    fn declared_lengths_past_the_end_are_errors_not_allocations() {
        let err = take_declared(&[1, 2, 3], u64::MAX, u64::MAX, "string", &[]).unwrap_err();
        let nom::Err::Error(e) = err else { panic!() };
        assert_eq!(e.kind.bytes_needed(), Some(u64::MAX - 3));
        assert_eq!(
            take_declared(&[1, 2, 3], 2, 2, "s", &[]).unwrap(),
            (&[3][..], &[1, 2][..])
        );
    }
}

/// Hand-built bytes for the construct tests, in any version and byte order.
#[cfg(test)]
pub(crate) mod test_bytes {
    use super::{Ctx, Endian, Version};

    /// Every version in both byte orders.
    pub fn all_ctx() -> impl Iterator<Item = Ctx> {
        [Endian::Little, Endian::Big]
            .into_iter()
            .flat_map(|endian| {
                [Version::V1, Version::V2, Version::V3]
                    .into_iter()
                    .map(move |version| Ctx { version, endian })
            })
    }

    /// A byte buffer that encodes fields in `ctx`'s widths and byte order.
    pub struct Enc {
        pub ctx: Ctx,
        pub bytes: Vec<u8>,
    }

    impl Enc {
        pub fn new(ctx: Ctx) -> Self {
            Enc {
                ctx,
                bytes: Vec::new(),
            }
        }

        /// Appends `be` or its reverse, as the byte order asks.
        pub fn raw(mut self, be: &[u8]) -> Self {
            match self.ctx.endian {
                Endian::Big => self.bytes.extend_from_slice(be),
                Endian::Little => self.bytes.extend(be.iter().rev()),
            }
            self
        }

        pub fn u32(self, v: u32) -> Self {
            self.raw(&v.to_be_bytes())
        }

        pub fn count(self, v: u64) -> Self {
            match self.ctx.version {
                Version::V1 => self.u32(v as u32),
                _ => self.raw(&v.to_be_bytes()),
            }
        }

        pub fn string(self, s: &[u8]) -> Self {
            let mut enc = self.count(s.len() as u64);
            enc.bytes.extend_from_slice(s);
            enc
        }
    }
}
