//! Byte order: the one type reading, writing and the element iterators use. [`Endian`] is
//! the order a file declares, known at run time; [`Little`] and [`Big`] are the same orders
//! as zero-sized types, for loops compiled once per order (gimli's `Endianity`). All three
//! are [`ByteOrder`]s, which read and write every [`Number`].
//!
//! ```
//! use gguf_grammar::grammar::{Big, ByteOrder, Endian, Little};
//!
//! assert_eq!(Endian::Big.read::<u32>(&[0, 0, 1, 2]), 0x0102);
//! assert_eq!(Little.read::<u16>(&[2, 1]), Big.read::<u16>(&[1, 2]));
//! let mut out = Vec::new();
//! Endian::Little.write(-2i16, &mut out);
//! Big.write(1.5f32, &mut out);
//! assert_eq!(out, [0xfe, 0xff, 0x3f, 0xc0, 0, 0]);
//! ```

use super::value::ValueType;

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

/// Little endian, as a type (see [`ByteOrder`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Little;

/// Big endian, as a type (see [`ByteOrder`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Big;

/// A byte order that reads and writes numbers: [`Endian`], [`Little`] or [`Big`].
pub trait ByteOrder: Copy {
    /// Whether the order is big endian.
    fn is_big(self) -> bool;

    /// The order as an [`Endian`].
    #[inline(always)]
    fn endian(self) -> Endian {
        if self.is_big() {
            Endian::Big
        } else {
            Endian::Little
        }
    }

    /// The number stored in `bytes` (which has the number's size; other lengths read 0).
    #[inline(always)]
    fn read<T: Number>(self, bytes: &[u8]) -> T {
        if self.is_big() {
            T::from_be(bytes)
        } else {
            T::from_le(bytes)
        }
    }

    /// Appends `value`'s bytes to `out`.
    #[inline(always)]
    fn write<T: Number>(self, value: T, out: &mut Vec<u8>) {
        if self.is_big() {
            value.write_be(out)
        } else {
            value.write_le(out)
        }
    }
}

impl ByteOrder for Endian {
    #[inline(always)]
    fn is_big(self) -> bool {
        self == Endian::Big
    }
}

impl ByteOrder for Little {
    #[inline(always)]
    fn is_big(self) -> bool {
        false
    }
}

impl ByteOrder for Big {
    #[inline(always)]
    fn is_big(self) -> bool {
        true
    }
}

/// A fixed-size numeric element type: `u8` … `u64`, `i8` … `i64`, `f32`, `f64`.
pub trait Number: bytemuck::Pod + private::Sealed {
    /// The GGUF value type this Rust type reads.
    const TYPE: ValueType;
    /// Decodes one element from its bytes in little-endian order (`bytes` has the type's size).
    fn from_le(bytes: &[u8]) -> Self;
    /// Decodes one element from its bytes in big-endian order (`bytes` has the type's size).
    fn from_be(bytes: &[u8]) -> Self;
    /// Appends the element's bytes in little-endian order.
    fn write_le(self, out: &mut Vec<u8>);
    /// Appends the element's bytes in big-endian order.
    fn write_be(self, out: &mut Vec<u8>);
}

mod private {
    pub trait Sealed {}
}

macro_rules! numbers {
    ($($t:ty => $ty:ident),*) => {$(
        impl private::Sealed for $t {}
        impl Number for $t {
            const TYPE: ValueType = ValueType::$ty;
            #[inline(always)]
            fn from_le(bytes: &[u8]) -> Self {
                bytes.try_into().map_or(Self::default(), <$t>::from_le_bytes)
            }
            #[inline(always)]
            fn from_be(bytes: &[u8]) -> Self {
                bytes.try_into().map_or(Self::default(), <$t>::from_be_bytes)
            }
            #[inline(always)]
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes())
            }
            #[inline(always)]
            fn write_be(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_be_bytes())
            }
        }
    )*};
}

numbers!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32,
         u64 => U64, i64 => I64, f32 => F32, f64 => F64);
