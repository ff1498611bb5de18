//! `header = magic version tensor_count kv_count`
//!
//! The magic is the four bytes `GGUF` in every byte order. The version is a u32; read as
//! little endian, a value whose low 16 bits are zero means the file is byte-swapped (big
//! endian) — gguf-py's rule. The counts are u32 in v1 and u64 in v2 and v3.

use nom_derive::{Nom, Parse};

use super::{count, read_record, Ctx, Endian, FieldAt, ParseResult, Version};
use crate::error::{ErrorKind, GrammarError, Segment};

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

/// The magic and the version as a little-endian u32 (the byte order is decided from it).
#[derive(Nom)]
#[nom(GenericErrors, LittleEndian, ExtraArgs(at: &FieldAt))]
struct MagicAndVersion {
    #[nom(PreExec = "at.enter(i, Some(\"magic\"), \"magic\");")]
    magic: u32,
    #[nom(PreExec = "at.enter(i, Some(\"version\"), \"version\");")]
    version_le: u32,
}

/// The counts after the version, whose width follows the version.
#[derive(Nom)]
#[nom(GenericErrors, ExtraArgs(ctx: Ctx, at: &FieldAt))]
struct Counts {
    #[nom(
        PreExec = "at.enter(i, Some(\"tensor_count\"), \"tensor count\");",
        Parse = "count(ctx)"
    )]
    tensor_count: u64,
    #[nom(
        PreExec = "at.enter(i, Some(\"kv_count\"), \"kv count\");",
        Parse = "count(ctx)"
    )]
    kv_count: u64,
}

/// Parses the header. `endian` forces a byte order; `None` detects it from the version.
///
/// ```
/// use gguf_grammar::grammar::{finish, header::header, Endian, Version};
///
/// let bytes = b"GGUF\x03\0\0\0\x02\0\0\0\0\0\0\0\x05\0\0\0\0\0\0\0";
/// let (rest, h) = header(None)(bytes).unwrap();
/// assert!(rest.is_empty());
/// assert_eq!((h.ctx.version, h.ctx.endian), (Version::V3, Endian::Little));
/// assert_eq!((h.tensor_count, h.kv_count), (2, 5));
/// // A short input is an error at the field it ends in: here the kv count, at offset 16.
/// assert_eq!(finish(header(None), &bytes[..19]).unwrap_err().offset, 16);
/// ```
pub fn header(endian: Option<Endian>) -> impl Fn(&[u8]) -> ParseResult<'_, Header> {
    move |input| parse(endian, input)
}

/// [`header`] inside the grammar.
pub(crate) fn parse(endian: Option<Endian>, input: &[u8]) -> ParseResult<'_, Header> {
    let (rest, ctx) = magic_and_version(input, endian)?;
    let (rest, counts) = read_record(rest, Segment::Header, |i, at| Counts::parse(i, ctx, at))?;
    Ok((
        rest,
        Header {
            ctx,
            tensor_count: counts.tensor_count,
            kv_count: counts.kv_count,
        },
    ))
}

fn magic_and_version(input: &[u8], endian: Option<Endian>) -> ParseResult<'_, Ctx> {
    let in_header = |field| move |e: GrammarError| e.within(Segment::Header(field));
    if !input.starts_with(&MAGIC[..input.len().min(4)]) {
        let found = input[..input.len().min(4)].to_vec();
        let e = GrammarError::at(input, ErrorKind::BadMagic { found });
        return Err(nom::Err::Error(in_header("magic")(e)));
    }
    let (rest, fixed) = read_record(input, Segment::Header, |i, at| {
        MagicAndVersion::parse(i, at)
    })?;
    let at_version = &input[4..];
    let le_version = fixed.version_le;
    debug_assert_eq!(fixed.magic.to_le_bytes(), MAGIC);
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
        let e = GrammarError::at(
            at_version,
            ErrorKind::UnsupportedVersion { version: number },
        );
        nom::Err::Error(in_header("version")(e))
    })?;
    Ok((rest, Ctx { version, endian }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::finish;

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
        let e = finish(header(Some(Endian::Big)), &bytes).unwrap_err();
        assert_eq!(
            e.kind,
            ErrorKind::UnsupportedVersion {
                version: 0x0300_0000
            }
        );
        assert_eq!(e.offset, 4);
    }

    #[test]
    fn bad_magic_and_versions() {
        let err = |bytes: &[u8]| finish(header(None), bytes).unwrap_err();
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
                needed: 6
            }
        );
        let e = err(b"GGUF\x04\0\0\0");
        assert_eq!(e.kind, ErrorKind::UnsupportedVersion { version: 4 });
        assert_eq!(
            e.to_string(),
            "offset 0x4 (4): header.version: unsupported version 4 (known: 1, 2, 3)"
        );
    }

    #[test]
    fn a_short_input_is_an_error_at_the_field_it_ends_in() {
        let err = |bytes: &[u8]| finish(header(None), bytes).unwrap_err();
        for version in [1, 3] {
            let bytes = header_bytes(version, Endian::Little, (1, 2));
            let width = if version == 1 { 4 } else { 8 };
            // (cut, offset, path, field, bytes needed to finish the header)
            let cases = [
                // magic and version: the counts' width is not known yet
                (2, 0, "header.magic", "magic", 6),
                (6, 4, "header.version", "version", 2),
                (9, 8, "header.tensor_count", "tensor count", 2 * width - 1),
                (
                    8 + width + 3,
                    8 + width,
                    "header.kv_count",
                    "kv count",
                    width - 3,
                ),
            ];
            for (cut, offset, path, construct, needed) in cases {
                let e = err(&bytes[..cut as usize]);
                assert_eq!(
                    (e.offset, e.path.to_string()),
                    (offset, path.into()),
                    "v{version} cut {cut}"
                );
                assert_eq!(
                    e.kind,
                    ErrorKind::Truncated { construct, needed },
                    "v{version} cut {cut}"
                );
            }
        }
    }
}
