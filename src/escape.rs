//! Text from a file is data, not terminal commands: the one function every human-readable
//! output uses to print keys, names and strings read from a file.
//!
//! JSON output does not use it: JSON escaping keeps the text exact, and [`json_str`] escapes
//! the same characters as `\uXXXX`, so that no JSON output carries them raw either.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

/// `bytes` made safe to print on a terminal: valid UTF-8 passes through except control
/// characters (C0 but for none, DEL, C1), the line and paragraph separators (U+2028, U+2029)
/// and the bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A–U+202E,
/// U+2066–U+2069), which become `\u{..}` escapes
/// (`\n`, `\r`, `\t`, `\e` for the common ones); a backslash becomes `\\` so that an escape
/// cannot be forged; bytes that are not UTF-8 become `\xNN`. Borrows when nothing needs
/// escaping.
///
/// ```
/// use gguf_grammar::escape::terminal;
///
/// assert_eq!(terminal(b"tokenizer.ggml.model"), "tokenizer.ggml.model");
/// assert_eq!(terminal(b"red\x1b[31m\x07"), "red\\e[31m\\u{7}");
/// assert_eq!(terminal("a\u{202e}b".as_bytes()), "a\\u{202e}b");
/// assert_eq!(terminal(b"\xff\\n"), "\\xff\\\\n");
/// ```
pub fn terminal(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.chars().any(needs_escape) => Cow::Borrowed(text),
        _ => Cow::Owned(Terminal(bytes).to_string()),
    }
}

/// `text` with its control, separator and bidi characters escaped as [`terminal`] escapes
/// them, but its backslashes kept: for a message that already holds escaped parts (a key
/// name shown by [`terminal`]), which escaping again would double (`\\x00`). Text escaped
/// by [`terminal`] passes unchanged.
///
/// ```
/// use gguf_grammar::escape::{controls, terminal};
///
/// let name = terminal(b"a\x00b\x1b");
/// assert_eq!(controls(&format!("key {name}: bad")), "key a\\u{0}b\\e: bad");
/// assert_eq!(controls("raw\u{202e}"), "raw\\u{202e}");
/// ```
pub fn controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\\' && needs_escape(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => out.push('\\'),
            c if needs_escape(c) => out.push_str(&Terminal(c.to_string().as_bytes()).to_string()),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `text` as the inside of a JSON string (without the quotes): `"` and `\` escaped, `\n`,
/// `\r`, `\t`, and every other character [`terminal`] escapes (control characters, C1, the
/// line and paragraph separators, the bidi formatting characters) as `\uXXXX`. Still exact
/// JSON: a parser gives back `text`; but a document printed on a terminal, logged or pasted
/// into JavaScript carries none of them raw. Borrows when nothing needs escaping. Every JSON
/// output writes strings through it (the fast writers of `gguf_tools::render::json` check
/// for these characters first).
///
/// ```
/// use gguf_grammar::escape::json_str;
///
/// assert_eq!(json_str("tokenizer.ggml.model"), "tokenizer.ggml.model");
/// assert_eq!(json_str("a\"b\\c\n\u{1b}"), "a\\\"b\\\\c\\n\\u001b");
/// assert_eq!(json_str("\u{85}\u{202e}\u{2028}\u{7f}"), "\\u0085\\u202e\\u2028\\u007f");
/// assert_eq!(json_str("naïve ▁token 🦙"), "naïve ▁token 🦙");
/// ```
pub fn json_str(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c == '"' || needs_escape(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // Every such character is in the Basic Multilingual Plane: four digits.
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Displays bytes as [`terminal`] returns them, without an intermediate `String`.
#[derive(Debug, Clone, Copy)]
pub struct Terminal<'a>(pub &'a [u8]);

impl fmt::Display for Terminal<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.0.utf8_chunks() {
            for c in chunk.valid().chars() {
                if needs_escape(c) {
                    match c {
                        '\n' => f.write_str("\\n")?,
                        '\r' => f.write_str("\\r")?,
                        '\t' => f.write_str("\\t")?,
                        '\x1b' => f.write_str("\\e")?,
                        '\\' => f.write_str("\\\\")?,
                        c => write!(f, "\\u{{{:x}}}", c as u32)?,
                    }
                } else {
                    f.write_char(c)?;
                }
            }
            for byte in chunk.invalid() {
                write!(f, "\\x{byte:02x}")?;
            }
        }
        Ok(())
    }
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || c == '\\'
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::terminal;

    #[test]
    fn every_control_and_bidi_character_is_escaped() {
        for c in (0u32..0x20)
            .chain(0x7f..0xa0)
            .chain([0x61c, 0x200e, 0x200f])
        {
            let c = char::from_u32(c).unwrap();
            let shown = terminal(c.to_string().as_bytes()).into_owned();
            assert!(
                shown.starts_with('\\') && !shown.contains(c),
                "{c:?} -> {shown:?}"
            );
        }
        for c in (0x2028..=0x202e).chain(0x2066..=0x2069) {
            let c = char::from_u32(c).unwrap();
            assert_eq!(
                terminal(c.to_string().as_bytes()),
                format!("\\u{{{:x}}}", c as u32)
            );
        }
    }

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(
            terminal("naïve ▁token 🦙".as_bytes()),
            std::borrow::Cow::Borrowed("naïve ▁token 🦙")
        ));
    }
}
