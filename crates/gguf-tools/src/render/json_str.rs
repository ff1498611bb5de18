//! JSON string text, below the writers that use it: whether bytes need escaping (a word at
//! a time) and a string written quoted and escaped.

use std::io::{self, Write};

/// A JSON string, escaped by [`gguf_grammar::escape::json_str`] (which also escapes C1,
/// bidi controls and line separators).
pub(super) fn str_value(text: &str, out: &mut impl Write) -> io::Result<()> {
    out.write_all(b"\"")?;
    match needs_escape(text.as_bytes()) {
        false => out.write_all(text.as_bytes())?,
        true => out.write_all(gguf_grammar::escape::json_str(text).as_bytes())?,
    }
    out.write_all(b"\"")
}

/// Whether `bytes` may hold a character [`str_value`] escapes: eight bytes at a time (see
/// [`escapes_in_word`]; never false when one does).
pub(super) fn needs_escape(bytes: &[u8]) -> bool {
    let special = escapes_in_word;
    let word = |chunk: &[u8]| chunk.try_into().map_or(0, u64::from_le_bytes);
    let half = |chunk: &[u8]| {
        chunk
            .try_into()
            .map_or(0, |b| u64::from(u32::from_le_bytes(b)))
    };
    let len = bytes.len();
    let Some(last) = len.checked_sub(8) else {
        // Shorter than a word: bytes gathered into one, some twice (a yes/no test does not
        // mind), the rest filled with bytes that never need escaping; no byte-by-byte loop.
        let packed = match bytes {
            [] => return false,
            [first, ..] if len < 4 => {
                let (middle, end) = (bytes[len / 2], bytes[len - 1]);
                u64::from_le_bytes([*first, middle, end, b'a', b'a', b'a', b'a', b'a'])
            }
            _ => half(&bytes[..4]) | half(&bytes[len - 4..]) << 32,
        };
        return special(packed) != 0;
    };
    let chunks = bytes.chunks_exact(8);
    // The last word overlaps the chunks where the length is not a multiple of 8.
    let found = chunks.fold(special(word(&bytes[last..])), |found, chunk| {
        found | special(word(chunk))
    });
    found != 0
}

/// Whether `bytes` may hold a character [`str_value`] escapes; up to 16 bytes,
/// one or two words loaded straight from the text (overlapping, or bytes gathered twice,
/// which a yes/no test does not mind), no loop.
#[inline(always)]
pub(super) fn short_needs_escape(bytes: &[u8]) -> bool {
    let n = bytes.len();
    let word = |at: usize| {
        bytes
            .get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_le_bytes)
    };
    let half = |at: usize| {
        bytes
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map_or(0, |b| u64::from(u32::from_le_bytes(b)))
    };
    let found = match n {
        0 => 0,
        1..=3 => escapes_in_word(u64::from_le_bytes([
            bytes[0],
            bytes[n / 2],
            bytes[n - 1],
            b'a',
            b'a',
            b'a',
            b'a',
            b'a',
        ])),
        4..=7 => escapes_in_word(half(0) | half(n - 4) << 32),
        8..=16 => escapes_in_word(word(0)) | escapes_in_word(word(n - 8)),
        _ => return needs_escape(bytes),
    };
    found != 0
}

/// Nonzero when any byte of the little-endian word `x` is a control character, `"` or `\\`,
/// or starts a character [`gguf_grammar::escape::json_str`] escapes beyond them (C1
/// `C2 80..9F`, U+061C `D8 9C`, the bidi controls and separators `E2 80 xx` and `E2 81 xx`,
/// a lead byte in the last place counting whatever follows): "Bit Twiddling Hacks"'
/// zero-byte and less-than tests. Never zero when a byte needs escaping; sometimes nonzero
/// when none does (a `E2 80` dash, a lead byte in the last place), which only takes the
/// slower path.
pub(super) fn escapes_in_word(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v;
    let is = |v: u64, byte: u8| has_zero(v ^ (ONES * u64::from(byte))) & HIGH;
    let ascii = ((x.wrapping_sub(ONES * 0x20) & !x)
        | has_zero(x ^ (ONES * u64::from(b'"')))
        | has_zero(x ^ (ONES * u64::from(b'\\')))
        | has_zero(x ^ (ONES * 0x7f)))
        & HIGH;
    // Each lead byte's mark moved onto the byte after it (the high bit of each byte).
    let (c2, d8, e2) = (is(x, 0xc2), is(x, 0xd8), is(x, 0xe2));
    let c1 = (c2 << 8) & is(x & (ONES * 0xe0), 0x80);
    let arabic_mark = (d8 << 8) & is(x, 0x9c);
    let punctuation = (e2 << 8) & is(x & (ONES * 0xfe), 0x80);
    let last = (c2 | d8 | e2) & (0x80 << 56);
    ascii | c1 | arabic_mark | punctuation | last
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact on ASCII; on other bytes it may only err towards escaping.
    #[test]
    fn needs_escape_matches_the_byte_by_byte_rule() {
        let rule = |b: u8| b < 0x20 || b == b'"' || b == b'\\' || b == 0x7f;
        for len in 1..=17 {
            for at in 0..len {
                for first in 0..=255u8 {
                    // Neighbours >= 0x80 and just above 0x20 are where borrows could mislead.
                    for fill in [b'a', 0x80, 0xff, 0x20, 0x21, 0x5d] {
                        let mut bytes = vec![fill; len];
                        bytes[at] = first;
                        let expected = bytes.iter().any(|&b| rule(b));
                        match bytes.is_ascii() {
                            true => assert_eq!(needs_escape(&bytes), expected, "{bytes:x?}"),
                            false => assert!(!expected || needs_escape(&bytes), "{bytes:x?}"),
                        }
                    }
                }
            }
        }
        assert!(!needs_escape(b""));
    }

    /// Every character `json_str` escapes is found at every place in every length, among
    /// ASCII and multi-byte neighbours (the lead bytes C2, D8, E2 among them).
    #[test]
    fn needs_escape_finds_every_character_json_str_escapes() {
        let escaped: Vec<char> = (0..0x3000u32)
            .filter_map(char::from_u32)
            .filter(|c| gguf_grammar::escape::json_str(&c.to_string()) != c.to_string())
            .collect();
        assert!(escaped.contains(&'\u{85}') && escaped.contains(&'\u{2029}'));
        for fill in ['a', '\u{a0}', '\u{600}', '\u{2013}', '▁'] {
            for len in 1..=12 {
                for at in 0..len {
                    for &c in &escaped {
                        let mut text: Vec<char> = vec![fill; len];
                        text[at] = c;
                        let text: String = text.into_iter().collect();
                        assert!(needs_escape(text.as_bytes()), "{text:?}");
                    }
                }
            }
        }
        assert!(!needs_escape("▁festival".as_bytes()));
        assert!(!needs_escape("naïve".as_bytes()));
    }
}
