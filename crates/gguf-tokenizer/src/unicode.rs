//! llama.cpp's `unicode.cpp`: code point flags, UTF-8 as llama.cpp decodes it, the GPT-2 byte
//! alphabet, lowercase and its one-code-point "NFD".

use std::sync::OnceLock;

use crate::unicode_data::{LOWERCASE, RANGES_FLAGS, RANGES_NFD, UPPERCASE, WHITESPACE};

pub(crate) const UNDEFINED: u16 = 0x0001;
pub(crate) const NUMBER: u16 = 0x0002;
pub(crate) const LETTER: u16 = 0x0004;
pub(crate) const ACCENT_MARK: u16 = 0x0010;
pub(crate) const PUNCTUATION: u16 = 0x0020;
pub(crate) const SYMBOL: u16 = 0x0040;
pub(crate) const CONTROL: u16 = 0x0080;
pub(crate) const MASK_CATEGORIES: u16 = 0x00FF;
pub(crate) const WHITESPACE_FLAG: u16 = 0x0100;
pub(crate) const LOWERCASE_FLAG: u16 = 0x0200;
pub(crate) const UPPERCASE_FLAG: u16 = 0x0400;
pub(crate) const NFD_FLAG: u16 = 0x0800;

const MAX_CODEPOINTS: usize = 0x110000;

/// The flags of one code point (`unicode_cpt_flags`).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct Flags(pub u16);

impl Flags {
    pub fn is_number(self) -> bool {
        self.0 & NUMBER != 0
    }
    pub fn is_letter(self) -> bool {
        self.0 & LETTER != 0
    }
    pub fn is_punctuation(self) -> bool {
        self.0 & PUNCTUATION != 0
    }
    pub fn is_symbol(self) -> bool {
        self.0 & SYMBOL != 0
    }
    pub fn is_control(self) -> bool {
        self.0 & CONTROL != 0
    }
    pub fn is_accent_mark(self) -> bool {
        self.0 & ACCENT_MARK != 0
    }
    pub fn is_whitespace(self) -> bool {
        self.0 & WHITESPACE_FLAG != 0
    }
    pub fn category(self) -> u16 {
        self.0 & MASK_CATEGORIES
    }
}

fn flags_table() -> &'static [u16] {
    static TABLE: OnceLock<Vec<u16>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = vec![UNDEFINED; MAX_CODEPOINTS];
        for w in RANGES_FLAGS.windows(2) {
            let (start, flags) = w[0];
            let end = (w[1].0 as usize).min(MAX_CODEPOINTS);
            t[start as usize..end].fill(flags);
        }
        for &c in WHITESPACE {
            t[c as usize] |= WHITESPACE_FLAG;
        }
        for &(_, lower) in LOWERCASE {
            t[lower as usize] |= LOWERCASE_FLAG;
        }
        for &(_, upper) in UPPERCASE {
            t[upper as usize] |= UPPERCASE_FLAG;
        }
        for &(_, _, nfd) in RANGES_NFD {
            t[nfd as usize] |= NFD_FLAG;
        }
        t
    })
}

/// `unicode_cpt_flags_from_cpt`: UNDEFINED past U+10FFFF.
pub(crate) fn flags(cpt: u32) -> Flags {
    Flags(
        flags_table()
            .get(cpt as usize)
            .copied()
            .unwrap_or(UNDEFINED),
    )
}

/// `unicode_len_utf8`: the sequence length a lead byte announces (1 for a continuation byte).
pub(crate) fn len_utf8(byte: u8) -> usize {
    const LOOKUP: [usize; 16] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4];
    LOOKUP[(byte >> 4) as usize]
}

/// `unicode_cpt_from_utf8`: one code point at `*offset`, or `None` (offset unchanged) where
/// llama.cpp throws. It checks lead and continuation bits only: overlong forms, surrogates
/// and values up to 0x1FFFFF decode.
pub(crate) fn cpt_from_utf8(s: &[u8], offset: &mut usize) -> Option<u32> {
    let o = *offset;
    let b0 = s[o] as u32;
    let cont = |i: usize| s.get(o + i).is_some_and(|&b| b & 0xC0 == 0x80);
    let (cpt, n) = if b0 & 0x80 == 0 {
        (b0, 1)
    } else if b0 & 0x40 == 0 {
        return None;
    } else if b0 & 0x20 == 0 {
        if !cont(1) {
            return None;
        }
        (((b0 & 0x1F) << 6) | (s[o + 1] as u32 & 0x3F), 2)
    } else if b0 & 0x10 == 0 {
        if !(cont(1) && cont(2)) {
            return None;
        }
        (
            ((b0 & 0x0F) << 12) | ((s[o + 1] as u32 & 0x3F) << 6) | (s[o + 2] as u32 & 0x3F),
            3,
        )
    } else if b0 & 0x08 == 0 {
        if !(cont(1) && cont(2) && cont(3)) {
            return None;
        }
        (
            ((b0 & 0x07) << 18)
                | ((s[o + 1] as u32 & 0x3F) << 12)
                | ((s[o + 2] as u32 & 0x3F) << 6)
                | (s[o + 3] as u32 & 0x3F),
            4,
        )
    } else {
        return None;
    };
    *offset = o + n;
    Some(cpt)
}

/// `unicode_cpts_from_utf8`: each undecodable byte becomes U+FFFD.
pub(crate) fn cpts_from_utf8(s: &[u8]) -> Vec<u32> {
    let mut out = Vec::with_capacity(s.len());
    let mut offset = 0;
    while offset < s.len() {
        match cpt_from_utf8(s, &mut offset) {
            Some(c) => out.push(c),
            None => {
                offset += 1;
                out.push(0xFFFD);
            }
        }
    }
    out
}

/// `unicode_cpt_to_utf8`; `None` past U+10FFFF, where llama.cpp throws "invalid codepoint".
/// Surrogates are encoded like any other value.
pub(crate) fn cpt_to_utf8(cpt: u32, out: &mut Vec<u8>) -> Option<()> {
    if cpt <= 0x7F {
        out.push(cpt as u8);
    } else if cpt <= 0x7FF {
        out.extend_from_slice(&[0xC0 | (cpt >> 6) as u8 & 0x1F, 0x80 | (cpt as u8 & 0x3F)]);
    } else if cpt <= 0xFFFF {
        out.extend_from_slice(&[
            0xE0 | (cpt >> 12) as u8 & 0x0F,
            0x80 | (cpt >> 6) as u8 & 0x3F,
            0x80 | (cpt as u8 & 0x3F),
        ]);
    } else if cpt <= 0x10FFFF {
        out.extend_from_slice(&[
            0xF0 | (cpt >> 18) as u8 & 0x07,
            0x80 | (cpt >> 12) as u8 & 0x3F,
            0x80 | (cpt >> 6) as u8 & 0x3F,
            0x80 | (cpt as u8 & 0x3F),
        ]);
    } else {
        return None;
    }
    Some(())
}

/// `unicode_tolower`.
pub(crate) fn tolower(cpt: u32) -> u32 {
    if cpt < 0x80 {
        return u32::from((cpt as u8).to_ascii_lowercase());
    }
    match LOWERCASE.binary_search_by_key(&cpt, |&(c, _)| c) {
        Ok(i) => LOWERCASE[i].1,
        Err(_) => cpt,
    }
}

/// `unicode_cpts_normalize_nfd`'s map of one code point.
pub(crate) fn nfd(cpt: u32) -> u32 {
    // The table starts with 0 -> 0, then the first code point that changes.
    if cpt < RANGES_NFD[1].0 {
        return cpt;
    }
    let i = RANGES_NFD.partition_point(|&(first, _, _)| first <= cpt);
    match i.checked_sub(1).map(|i| RANGES_NFD[i]) {
        Some((first, last, to)) if first <= cpt && cpt <= last => to,
        _ => cpt,
    }
}

/// `unicode_cpt_is_han`.
pub(crate) fn is_han(cpt: u32) -> bool {
    matches!(cpt,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0x2CEB0..=0x2EBEF | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

/// The GPT-2 byte alphabet: byte -> the code point that stands for it.
fn byte_to_cpt_table() -> &'static [u32; 256] {
    static TABLE: OnceLock<[u32; 256]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        let mut n = 0;
        for b in 0..256u32 {
            let printable = (0x21..=0x7E).contains(&b)
                || (0xA1..=0xAC).contains(&b)
                || (0xAE..=0xFF).contains(&b);
            t[b as usize] = if printable {
                b
            } else {
                n += 1;
                255 + n
            };
        }
        t
    })
}

/// `unicode_byte_to_utf8`, appended.
pub(crate) fn byte_to_utf8(byte: u8, out: &mut Vec<u8>) {
    let _ = cpt_to_utf8(byte_to_cpt_table()[byte as usize], out);
}

/// `unicode_utf8_to_byte` by code point: the byte a GPT-2 alphabet code point stands for.
pub(crate) fn cpt_to_byte(cpt: u32) -> Option<u8> {
    static REV: OnceLock<std::collections::HashMap<u32, u8>> = OnceLock::new();
    let rev = REV.get_or_init(|| {
        byte_to_cpt_table()
            .iter()
            .enumerate()
            .map(|(b, &c)| (c, b as u8))
            .collect()
    });
    rev.get(&cpt).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ASCII shortcuts of `tolower` and `nfd` give what the tables give.
    #[test]
    fn fast_paths_match_the_tables() {
        for c in 0..0x100u32 {
            let lower = match LOWERCASE.binary_search_by_key(&c, |&(c, _)| c) {
                Ok(i) => LOWERCASE[i].1,
                Err(_) => c,
            };
            assert_eq!(tolower(c), lower, "tolower {c:#x}");
            let to = RANGES_NFD
                .iter()
                .find(|&&(first, last, _)| first <= c && c <= last)
                .map_or(c, |&(_, _, to)| to);
            assert_eq!(nfd(c), to, "nfd {c:#x}");
        }
    }
}
