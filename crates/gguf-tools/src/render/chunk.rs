//! The element loops of the JSON renderings: numbers and strings formatted straight into a
//! buffer of the renderer's own, handed to the output a chunk at a time.
//!
//! Each element asks once for room for its longest form, then writes its separator, digits
//! or quoted text with fixed-size moves and advances by what it wrote. Writing each piece
//! through `Write` instead (a capacity check and often a `memcpy` call per piece, three or
//! four pieces per element) cost more than formatting the element itself. Whatever does not
//! fit that pattern (long strings, strings that need escaping) goes through [`Write`].

use std::io::{self, Write};

use super::copy::copy_short;
use super::float;
use super::json_str::{needs_escape, short_needs_escape, str_value};
use gguf_grammar::grammar::value::{Array, Value, ValueType};

/// The longest text one number or bool takes in either JSON rendering
/// (`-1.7976931348623157e308`, `-9223372036854775808`, `-Infinity`).
pub(super) const NUMBER_MAX: usize = float::MAX_LEN;

/// Strings up to this length that need no escaping are copied in place in one piece;
/// longer ones go through [`str_value`].
const SHORT: usize = 64;

/// A buffer in front of `out`, one per rendering; what it holds is written when it fills
/// and by [`Chunk::finish`].
pub(super) struct Chunk<'w, W: Write> {
    buf: Vec<u8>,
    len: usize,
    out: &'w mut W,
}

impl<'w, W: Write> Chunk<'w, W> {
    /// Elements hand on at least 64 KiB at a time, which a `BufWriter` of up to that
    /// capacity (the CLI's) passes straight to its writer instead of copying it again.
    const SIZE: usize = (1 << 16) + 256;

    pub(super) fn new(out: &'w mut W) -> Self {
        Chunk {
            buf: vec![0; Self::SIZE],
            len: 0,
            out,
        }
    }

    /// The free part of the buffer, at least `n` (<= `SIZE`) bytes: written bytes are
    /// handed on first when fewer are left.
    #[inline(always)]
    fn room(&mut self, n: usize) -> io::Result<&mut [u8]> {
        if self.buf.len() - self.len < n {
            self.flush()?;
        }
        Ok(&mut self.buf[self.len..])
    }

    /// Hands on everything written so far.
    pub(super) fn finish(mut self) -> io::Result<()> {
        self.flush()
    }

    /// `", "` unless `*first` (which it clears), then `number`'s text for `value`.
    #[inline(always)]
    fn number<T>(
        &mut self,
        value: T,
        first: &mut bool,
        number: impl FnOnce(T, &mut [u8; NUMBER_MAX]) -> usize,
    ) -> io::Result<()> {
        let skip = separator_len(first);
        let room = self.room(2 + NUMBER_MAX)?;
        room[..2].copy_from_slice(b", ");
        let Some(text) = room[skip..].first_chunk_mut::<NUMBER_MAX>() else {
            return Err(io::Error::other(
                "not reached: room for a number was asked for",
            ));
        };
        let len = number(value, text);
        self.len += skip + len;
        Ok(())
    }

    /// `", "` unless `*first` (which it clears), then `text` as a JSON string.
    #[inline(always)]
    pub(super) fn str_element(&mut self, text: &str, first: &mut bool) -> io::Result<()> {
        let bytes = text.as_bytes();
        let skip = separator_len(first);
        // Most tokens. The escape test reads the text where it is: reading back a copy just
        // written piece by piece would stall on store forwarding.
        if let (0..=16, Some(room)) = (
            bytes.len(),
            self.buf
                .get_mut(self.len..)
                .and_then(|r| r.first_chunk_mut::<24>()),
        ) {
            if !short_needs_escape(bytes) {
                room[..2].copy_from_slice(b", ");
                room[skip] = b'"';
                copy_short(&mut room[skip + 1..], bytes);
                room[skip + 1 + bytes.len()] = b'"';
                self.len += skip + bytes.len() + 2;
                return Ok(());
            }
        }
        self.str_element_slow(text, skip)
    }

    /// [`Chunk::str_element`] for longer strings, those that need escaping, and where the
    /// buffer is nearly full; `skip` is the separator's length.
    #[inline(never)]
    fn str_element_slow(&mut self, text: &str, skip: usize) -> io::Result<()> {
        let bytes = text.as_bytes();
        if bytes.len() <= SHORT && !needs_escape(bytes) {
            let room = self.room(SHORT + 4)?;
            room[..2].copy_from_slice(b", ");
            room[skip] = b'"';
            room[skip + 1..skip + 1 + bytes.len()].copy_from_slice(bytes);
            room[skip + 1 + bytes.len()] = b'"';
            self.len += skip + bytes.len() + 2;
            return Ok(());
        }
        self.write_all(&b", "[2 - skip..])?;
        str_value(text, self)
    }

    fn flush(&mut self) -> io::Result<()> {
        let written = std::mem::take(&mut self.len);
        self.out.write_all(&self.buf[..written])
    }
}

impl<W: Write> Write for Chunk<'_, W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if bytes.len() >= Self::SIZE {
            self.flush()?;
            return self.out.write(bytes);
        }
        let room = self.room(bytes.len())?;
        room[..bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Chunk::flush(self)?;
        self.out.flush()
    }
}

/// What goes before the next element: nothing before the first.
pub(super) fn separator(first: &mut bool) -> &'static [u8] {
    &b", "[2 - separator_len(first)..]
}

/// How many bytes of `", "` go before the next element: none for the first.
fn separator_len(first: &mut bool) -> usize {
    if std::mem::take(first) {
        0
    } else {
        2
    }
}

/// How a JSON rendering prints floats; integers and bools print alike in both.
pub(super) trait Floats {
    fn f32(v: f32, dst: &mut [u8; NUMBER_MAX]) -> usize;
    fn f64(v: f64, dst: &mut [u8; NUMBER_MAX]) -> usize;
}

/// A number or bool at the start of `dst` (nothing for a string or array); returns the
/// length.
pub(super) fn scalar<F: Floats>(value: Value<'_>, dst: &mut [u8; NUMBER_MAX]) -> usize {
    match value {
        Value::U8(v) => integer(v, dst),
        Value::I8(v) => integer(v, dst),
        Value::U16(v) => integer(v, dst),
        Value::I16(v) => integer(v, dst),
        Value::U32(v) => integer(v, dst),
        Value::I32(v) => integer(v, dst),
        Value::U64(v) => integer(v, dst),
        Value::I64(v) => integer(v, dst),
        Value::F32(v) => F::f32(v, dst),
        Value::F64(v) => F::f64(v, dst),
        Value::Bool(byte) => boolean(byte, dst),
        Value::String(_) | Value::Array(_) => 0,
    }
}

/// Every element of a numeric or bool `array`, `", "`-separated (before the first too
/// unless `*first`), into `chunk`; `false`, with nothing written, for strings and nested
/// arrays. One loop per element type, each with its formatter inlined.
pub(super) fn numbers<F: Floats, W: Write>(
    array: Array<'_>,
    first: &mut bool,
    chunk: &mut Chunk<'_, W>,
) -> io::Result<bool> {
    // A local copy the loops keep in a register.
    let mut is_first = *first;
    macro_rules! each {
        ($values:expr, $format:expr) => {
            for v in $values {
                chunk.number(v, &mut is_first, $format)?;
            }
        };
    }
    match array.element_type().known() {
        Some(ValueType::U8) => each!(array.numbers::<u8>().into_iter().flatten(), integer),
        Some(ValueType::I8) => each!(array.numbers::<i8>().into_iter().flatten(), integer),
        Some(ValueType::U16) => each!(array.numbers::<u16>().into_iter().flatten(), integer),
        Some(ValueType::I16) => each!(array.numbers::<i16>().into_iter().flatten(), integer),
        Some(ValueType::U32) => each!(array.numbers::<u32>().into_iter().flatten(), integer),
        Some(ValueType::I32) => each!(array.numbers::<i32>().into_iter().flatten(), integer),
        Some(ValueType::U64) => each!(array.numbers::<u64>().into_iter().flatten(), integer),
        Some(ValueType::I64) => each!(array.numbers::<i64>().into_iter().flatten(), integer),
        Some(ValueType::F32) => each!(array.numbers::<f32>().into_iter().flatten(), F::f32),
        Some(ValueType::F64) => each!(array.numbers::<f64>().into_iter().flatten(), F::f64),
        Some(ValueType::Bool) => each!(array.raw_elements().iter().copied(), boolean),
        Some(ValueType::String | ValueType::Array) | None => return Ok(false),
    }
    *first = is_first;
    Ok(true)
}

/// `true` or `false` at the start of `dst`; returns the length.
#[inline(always)]
fn boolean(byte: u8, dst: &mut [u8; NUMBER_MAX]) -> usize {
    literal(if byte != 0 { b"true" } else { b"false" }, dst)
}

/// An integer's decimal digits at the start of `dst`; returns their count.
#[inline(always)]
pub(super) fn integer<I: itoa::Integer + TryInto<u8>>(v: I, dst: &mut [u8; NUMBER_MAX]) -> usize {
    // Single digits (token types, flags) are most of a vocabulary's integers: one byte
    // without `itoa`'s general path.
    match v.try_into() {
        Ok(digit @ 0..=9) => {
            dst[0] = b'0' + digit;
            1
        }
        _ => {
            let mut itoa = itoa::Buffer::new();
            let digits = itoa.format(v).as_bytes();
            copy_short(dst, digits);
            digits.len()
        }
    }
}

/// `text` at the start of `dst`; returns its length.
pub(super) fn literal(text: &[u8], dst: &mut [u8; NUMBER_MAX]) -> usize {
    copy_short(dst, text);
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixed-size paths write what the general one writes, for every length around
    /// their limits, a byte to escape at every position or none, first or not.
    #[test]
    fn str_elements_are_written_as_str_value_writes_them() {
        let mut texts = Vec::new();
        for len in 0..=SHORT + 3 {
            let plain: String = "abcdéfghijklmnopqrstuvwxyz0123456789"
                .chars()
                .cycle()
                .take(len)
                .collect();
            texts.push(plain.clone());
            for at in 0..len {
                for special in [
                    '"', '\\', '\n', '\u{1}', '\u{7f}', '\u{85}', '\u{9f}', '\u{a0}', '\u{61c}',
                    '\u{600}', '\u{200e}', '\u{2013}', '\u{2028}', '\u{202e}', '\u{2069}', '▁',
                ] {
                    let mut text: Vec<char> = plain.chars().collect();
                    text[at] = special;
                    texts.push(text.into_iter().collect());
                }
            }
        }
        for first in [true, false] {
            let (mut ours, mut expected) = (Vec::new(), Vec::new());
            let mut chunk = Chunk::new(&mut ours);
            let mut is_first = first;
            for text in &texts {
                chunk.str_element(text, &mut is_first).unwrap();
                if !first || !std::ptr::eq(text, &texts[0]) {
                    expected.extend_from_slice(b", ");
                }
                let escaped = gguf_grammar::escape::json_str(text);
                expected.extend_from_slice(format!("\"{escaped}\"").as_bytes());
            }
            chunk.finish().unwrap();
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                String::from_utf8(expected).unwrap()
            );
        }
    }

    /// Strings longer than the buffer, with and without escapes, around a partly filled
    /// buffer: the paths that hand bytes on before or instead of buffering them.
    #[test]
    fn strings_longer_than_the_buffer_are_written_whole() {
        let size = Chunk::<Vec<u8>>::SIZE;
        let mut texts = vec!["short".to_string()];
        for len in [size - 3, size, size + 1, 3 * size] {
            texts.push("é".repeat(len / 2));
            texts.push(format!("{}\n\"{}", "a".repeat(len), "b".repeat(7)));
            texts.push("tail".to_string());
        }
        let (mut ours, mut expected) = (Vec::new(), Vec::new());
        let mut chunk = Chunk::new(&mut ours);
        let mut first = true;
        for (i, text) in texts.iter().enumerate() {
            chunk.str_element(text, &mut first).unwrap();
            if i > 0 {
                expected.extend_from_slice(b", ");
            }
            str_value(text, &mut expected).unwrap();
        }
        chunk.finish().unwrap();
        assert!(
            ours == expected,
            "{} bytes, expected {}",
            ours.len(),
            expected.len()
        );
    }
}
