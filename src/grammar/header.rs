//! `header = magic version tensor_count kv_count`
//!
//! The magic is the four bytes `GGUF` in every byte order. The version is a u32; read as
//! little endian, a value whose low 16 bits are zero means the file is byte-swapped (big
//! endian) — gguf-py's rule. The counts are u32 in v1 and u64 in v2 and v3.

use nom_derive::Nom;

use super::{complete, Ctx, Endian, PResult, Version};
use crate::error::{Error, ErrorKind, Segment};

/// The four bytes every GGUF file starts with.
pub const MAGIC: [u8; 4] = *b"GGUF";

/// A decoded GGUF header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Version and byte order, which every later construct is parsed with.
    pub ctx: Ctx,
    /// Number of tensor infos that follow the key/value pairs.
    pub tensor_count: u64,
    /// Number of key/value pairs that follow the header.
    pub kv_count: u64,
}

/// The counts after the version: a plain record whose width follows the version.
#[derive(Nom)]
#[nom(GenericErrors, ExtraArgs(ctx: Ctx))]
struct Counts {
    #[nom(Parse = "count(ctx)")]
    tensor_count: u64,
    #[nom(Parse = "count(ctx)")]
    kv_count: u64,
}

/// nom's streaming count reader (u32 in v1, u64 otherwise), generic over the error type as
/// nom-derive's `GenericErrors` requires.
fn count<'a, E: nom::error::ParseError<&'a [u8]>>(
    ctx: Ctx,
) -> impl Fn(&'a [u8]) -> nom::IResult<&'a [u8], u64, E> {
    move |input| match ctx.version {
        Version::V1 => nom::number::streaming::u32(ctx.endian.into())(input)
            .map(|(rest, n)| (rest, u64::from(n))),
        Version::V2 | Version::V3 => nom::number::streaming::u64(ctx.endian.into())(input),
    }
}

/// Parses the header. `endian` forces a byte order; `None` detects it from the version.
///
/// ```
/// use gguf_grammar::grammar::{header::header, Endian, Version};
///
/// let bytes = b"GGUF\x03\0\0\0\x02\0\0\0\0\0\0\0\x05\0\0\0\0\0\0\0";
/// let (rest, h) = header(None)(bytes).unwrap();
/// assert!(rest.is_empty());
/// assert_eq!((h.ctx.version, h.ctx.endian), (Version::V3, Endian::Little));
/// assert_eq!((h.tensor_count, h.kv_count), (2, 5));
/// ```
pub fn header(endian: Option<Endian>) -> impl Fn(&[u8]) -> PResult<'_, Header> {
    move |input| {
        let (rest, ctx) = magic_and_version(input, endian)?;
        let (rest, counts) = complete(rest, "header counts", Counts::parse(rest, ctx))
            .map_err(crate::error::within(|| Segment::Header("counts")))?;
        Ok((
            rest,
            Header {
                ctx,
                tensor_count: counts.tensor_count,
                kv_count: counts.kv_count,
            },
        ))
    }
}

fn magic_and_version(input: &[u8], endian: Option<Endian>) -> PResult<'_, Ctx> {
    let magic_error =
        |kind| nom::Err::Error(Error::at(input, kind).within(Segment::Header("magic")));
    if !input.starts_with(&MAGIC[..input.len().min(4)]) {
        let found = input[..input.len().min(4)].to_vec();
        return Err(magic_error(ErrorKind::BadMagic { found }));
    }
    if input.len() < 4 {
        return Err(magic_error(ErrorKind::Truncated {
            construct: "magic",
            needed: (4 - input.len()) as u64,
        }));
    }
    let at_version = &input[4..];
    let in_version = crate::error::within(|| Segment::Header("version"));
    let (rest, le_version) = Ctx::V3_LE.u32(at_version, "version").map_err(&in_version)?;
    let endian = endian.unwrap_or(if le_version & 0xffff == 0 {
        Endian::Big
    } else {
        Endian::Little
    });
    let number = match endian {
        Endian::Little => le_version,
        Endian::Big => le_version.swap_bytes(),
    };
    let version = Version::from_number(number).ok_or_else(|| {
        in_version(nom::Err::Error(Error::at(
            at_version,
            ErrorKind::UnsupportedVersion { version: number },
        )))
    })?;
    Ok((rest, Ctx { version, endian }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header_bytes(version: u32, endian: Endian, counts: (u64, u64)) -> Vec<u8> {
        let mut bytes = MAGIC.to_vec();
        let put32 = |b: &mut Vec<u8>, v: u32| match endian {
            Endian::Little => b.extend(v.to_le_bytes()),
            Endian::Big => b.extend(v.to_be_bytes()),
        };
        put32(&mut bytes, version);
        for n in [counts.0, counts.1] {
            if version == 1 {
                put32(&mut bytes, n as u32);
            } else {
                match endian {
                    Endian::Little => bytes.extend(n.to_le_bytes()),
                    Endian::Big => bytes.extend(n.to_be_bytes()),
                }
            }
        }
        bytes
    }

    #[test]
    fn every_version_in_both_byte_orders() {
        for endian in [Endian::Little, Endian::Big] {
            for version in [Version::V1, Version::V2, Version::V3] {
                let bytes = header_bytes(version.number(), endian, (3, 70000));
                let (rest, h) = header(None)(&bytes).unwrap();
                assert!(rest.is_empty());
                assert_eq!(h.ctx, Ctx { version, endian });
                assert_eq!((h.tensor_count, h.kv_count), (3, 70000));
                let width = if version == Version::V1 { 4 } else { 8 };
                assert_eq!(bytes.len(), 8 + 2 * width);
            }
        }
    }

    #[test]
    fn forced_byte_order_overrides_detection() {
        let bytes = header_bytes(3, Endian::Little, (0, 0));
        let err = header(Some(Endian::Big))(&bytes).unwrap_err();
        let nom::Err::Error(e) = err else { panic!() };
        assert_eq!(
            e.kind,
            ErrorKind::UnsupportedVersion {
                version: 0x0300_0000
            }
        );
        assert_eq!(e.located(bytes.len()).offset, 4);
    }

    #[test]
    fn bad_magic_and_versions() {
        let err = |bytes: &[u8]| match header(None)(bytes).unwrap_err() {
            nom::Err::Error(e) => e.located(bytes.len()),
            _ => panic!(),
        };
        assert_eq!(
            err(b"GGML\x03\0\0\0").kind,
            ErrorKind::BadMagic {
                found: b"GGML".to_vec()
            }
        );
        assert_eq!(
            err(b"GG").kind,
            ErrorKind::Truncated {
                construct: "magic",
                needed: 2
            }
        );
        let e = err(b"GGUF\x04\0\0\0");
        assert_eq!(e.kind, ErrorKind::UnsupportedVersion { version: 4 });
        assert_eq!(
            e.to_string(),
            "offset 0x4 (4): header.version: unsupported version 4 (known: 1, 2, 3)"
        );
        let e = err(&header_bytes(3, Endian::Little, (1, 2))[..19]);
        assert_eq!(
            e.kind,
            ErrorKind::Truncated {
                construct: "header counts",
                needed: 5
            }
        );
        assert_eq!(e.offset, 8);
    }
}
