//! `string = len:count bytes:u8[len]`
//!
//! A length-prefixed byte string: the length is a u32 in v1 and a u64 in v2 and v3. The bytes
//! are borrowed as they are; UTF-8 is checked on access ([`GgufStr::to_str`]) and by validation,
//! never by the grammar, so a file with a non-UTF-8 string still parses losslessly.

use super::{take_declared, Ctx, ParseResult};

/// A GGUF string: borrowed bytes, conventionally UTF-8.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct GgufStr<'a>(pub &'a [u8]);

impl<'a> GgufStr<'a> {
    /// The raw bytes, exactly as stored.
    pub fn as_bytes(self) -> &'a [u8] {
        self.0
    }

    /// The string, if its bytes are valid UTF-8.
    ///
    /// ```
    /// use gguf_grammar::GgufStr;
    /// assert_eq!(GgufStr(b"llama").to_str(), Ok("llama"));
    /// assert!(GgufStr(b"\xc3\x28").to_str().is_err());
    /// ```
    pub fn to_str(self) -> Result<&'a str, std::str::Utf8Error> {
        std::str::from_utf8(self.0)
    }

    /// Number of bytes.
    pub fn len(self) -> usize {
        self.0.len()
    }

    /// Whether the string has no bytes.
    pub fn is_empty(self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for GgufStr<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.to_str() {
            Ok(s) => write!(f, "{s:?}"),
            Err(_) => write!(f, "b\"{}\"", self.0.escape_ascii()),
        }
    }
}

/// Displays the string safe for a terminal (as [`crate::escape::terminal`]: control
/// and bidi characters and backslashes escaped, invalid UTF-8 as `\xNN`), honouring width,
/// fill, alignment and precision (`{:<24}`, `{:.8}`). The bytes as stored are
/// [`GgufStr::as_bytes`].
///
/// ```
/// use gguf_grammar::GgufStr;
///
/// assert_eq!(format!("[{:<8}]", GgufStr(b"llama")), "[llama   ]");
/// assert_eq!(format!("[{:>6}]", GgufStr(b"a\x1b[2J")), "[a\\e[2J]");
/// assert_eq!(GgufStr(b"\xff\\").to_string(), "\\xff\\\\");
/// ```
impl std::fmt::Display for GgufStr<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = crate::escape::Terminal(self.0);
        if f.width().is_none() && f.precision().is_none() {
            std::fmt::Display::fmt(&shown, f)
        } else {
            f.pad(&shown.to_string())
        }
    }
}

impl GgufStr<'_> {
    /// The text with invalid UTF-8 sequences as `\xNN` and nothing else escaped, as Python's
    /// `bytes.decode("utf-8", "backslashreplace")` gives it: not for a terminal (see
    /// [`Display`](std::fmt::Display)), but for output that escapes in its own way.
    ///
    /// ```
    /// use gguf_grammar::GgufStr;
    /// assert_eq!(GgufStr(b"a\xff\n").lossy(), "a\\xff\n");
    /// ```
    pub fn lossy(self) -> String {
        let mut text = String::with_capacity(self.0.len());
        for chunk in self.0.utf8_chunks() {
            text.push_str(chunk.valid());
            for byte in chunk.invalid() {
                text.push_str(&format!("\\x{byte:02x}"));
            }
        }
        text
    }
}

/// Parses a length-prefixed string.
///
/// ```
/// use gguf_grammar::grammar::{string::string, Ctx};
///
/// let (rest, s) = string(Ctx::V3_LE)(b"\x05\0\0\0\0\0\0\0llama!").unwrap();
/// assert_eq!((s.to_str().unwrap(), rest), ("llama", &b"!"[..]));
/// ```
pub fn string(ctx: Ctx) -> impl Fn(&[u8]) -> ParseResult<'_, GgufStr<'_>> {
    move |input| parse(ctx, input)
}

/// [`string`] inside the grammar.
pub(crate) fn parse(ctx: Ctx, input: &[u8]) -> ParseResult<'_, GgufStr<'_>> {
    let (rest, len) = ctx.count(input, "string length")?;
    let (rest, bytes) = take_declared(rest, len, len, "string", input)?;
    Ok((rest, GgufStr(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::grammar::finish;
    use crate::grammar::{Endian, Version};

    #[test]
    fn every_version_and_byte_order() {
        for (version, endian, bytes) in [
            (Version::V1, Endian::Little, &b"\x02\0\0\0hi"[..]),
            (Version::V1, Endian::Big, b"\0\0\0\x02hi"),
            (Version::V2, Endian::Little, b"\x02\0\0\0\0\0\0\0hi"),
            (Version::V3, Endian::Big, b"\0\0\0\0\0\0\0\x02hi"),
        ] {
            let (rest, s) = string(Ctx { version, endian })(bytes).unwrap();
            assert_eq!((rest, s.as_bytes()), (&b""[..], &b"hi"[..]));
        }
    }

    #[test]
    fn invalid_utf8_is_kept_and_shown_escaped() {
        let (_, s) = string(Ctx::V3_LE)(b"\x03\0\0\0\0\0\0\0a\xff\xfe").unwrap();
        assert_eq!(s.as_bytes(), b"a\xff\xfe");
        assert!(s.to_str().is_err());
        assert_eq!(s.lossy(), "a\\xff\\xfe");
        assert_eq!(s.to_string(), "a\\xff\\xfe");
    }

    #[test]
    fn a_short_length_field_is_located_in_the_string_alone() {
        let e = finish(string(Ctx::V3_LE), b"\x05\0\0").unwrap_err();
        assert_eq!((e.offset, e.kind.bytes_needed()), (0, Some(5)));
        assert_eq!(
            e.to_string(),
            "offset 0x0 (0): input ends inside the string length (at least 5 more bytes needed)"
        );
    }

    #[test]
    fn hostile_length_is_an_error_at_the_length_field() {
        let input = b"\0\0\0\0\0\x01\0\0abc";
        let e = finish(string(Ctx::V3_LE), input).unwrap_err();
        assert_eq!(e.offset, 0);
        assert_eq!(
            e.kind,
            ErrorKind::LengthPastEnd {
                construct: "string",
                declared: 1 << 40,
                available: 3,
                needed: (1 << 40) - 3
            }
        );
        assert_eq!(
            e.to_string(),
            "offset 0x0 (0): string length 1099511627776 exceeds the 3 bytes left"
        );
    }
}
