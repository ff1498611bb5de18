//! Reading every element of an [`Array`] at the speed of the parse.
//!
//! [`Array::iter`] builds a [`Value`](crate::Value) per element through the grammar's parsers;
//! the methods here skip that for the two shapes large headers are made of:
//!
//! - **string arrays** (vocabularies, merges): [`Array::strings`] walks the length prefixes
//!   with the parse's own loop and yields the raw bytes; [`Array::strs`] yields them as
//!   checked `&str`, validating UTF-8 with SIMD over the whole run of elements at once;
//!   [`Array::string_index`] builds, in one pass, an offsets table for O(1) random access.
//! - **numeric arrays** (scores, token types): [`Array::as_slice`] is a zero-copy view when the
//!   file's byte order is the machine's and the bytes are aligned; [`Array::numbers`],
//!   [`Array::decode_into`] and [`Array::to_vec`] decode in one pass otherwise.
//!
//! The parse checked that every element is present, so none of this can fail on a parsed
//! array; it never panics on one built by hand either, and nothing allocates more than the
//! element bytes can hold.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use gguf_grammar::write::{GgufBuilder, OwnedValue};
//! use gguf_grammar::{Ctx, Gguf, ValueType};
//!
//! let bytes = GgufBuilder::new(Ctx::V3_LE)
//!     .kv("tokenizer.ggml.tokens", OwnedValue::array(ValueType::String, ["<s>", "é", "x"]))
//!     .kv("tokenizer.ggml.scores", OwnedValue::array(ValueType::F32, [0.0f32, -1.5, 2.0]))
//!     .build()?;
//! let gguf = Gguf::parse(&bytes)?;
//!
//! let tokens = gguf.get("tokenizer.ggml.tokens").and_then(|v| v.as_array()).unwrap();
//! let text: Vec<&str> = tokens.strs().unwrap().collect::<Result<_, _>>().unwrap();
//! assert_eq!(text, ["<s>", "é", "x"]);
//! let index = tokens.string_index().unwrap();
//! assert_eq!(index.get(1).map(|s| s.as_bytes()), Some("é".as_bytes()));
//!
//! let scores = gguf.get("tokenizer.ggml.scores").and_then(|v| v.as_array()).unwrap();
//! assert_eq!(scores.to_vec::<f32>(), Some(vec![0.0, -1.5, 2.0]));
//! assert!(scores.to_vec::<u32>().is_none()); // the element type must match
//! # Ok(()) }
//! ```

use std::marker::PhantomData;

use crate::grammar::string::GgufStr;
use crate::grammar::value::{Array, ValueType};
use crate::grammar::{ascii_length, Big, ByteOrder, Endian, LengthPrefix, Little};

/// Bytes [`Strs`] checks as UTF-8 at a time: large enough to amortise the call, small enough
/// that the bytes are still in cache when the strings are read.
pub const BLOCK: usize = 64 << 10;

/// The strings of a string array as raw bytes, from [`Array::strings`].
#[derive(Clone, Debug)]
pub struct Strings<'a> {
    rest: &'a [u8],
    left: u64,
    prefix: LengthPrefix,
}

impl<'a> Iterator for Strings<'a> {
    type Item = GgufStr<'a>;

    #[inline(always)]
    fn next(&mut self) -> Option<GgufStr<'a>> {
        if self.left == 0 {
            return None;
        }
        let (s, rest) = self.prefix.split_string(self.rest)?;
        self.rest = rest;
        self.left -= 1;
        Some(GgufStr(s))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        // Never more than the parse found room for; an array built by hand may hold fewer.
        let left = usize::try_from(self.left).unwrap_or(usize::MAX);
        (0, Some(left))
    }

    /// The parse's loop, compiled once per prefix width and byte order (`sum`, `count`,
    /// `for_each` come here).
    fn fold<B, F: FnMut(B, GgufStr<'a>) -> B>(self, init: B, mut f: F) -> B {
        let Strings {
            mut rest,
            left,
            prefix,
        } = self;
        prefix.specialise(|prefix| {
            let mut acc = init;
            for _ in 0..left {
                let Some((s, tail)) = prefix.split_string(rest) else {
                    break;
                };
                rest = tail;
                acc = f(acc, GgufStr(s));
            }
            acc
        })
    }
}

impl Strings<'_> {
    /// Steps over the strings up to the first whose length prefix has a byte >= 0x80 (or to
    /// the end), in the parse's loop; returns how many.
    fn skip_ascii_prefixed(&mut self) -> u64 {
        let (mut rest, left) = (self.rest, self.left);
        let skipped = self.prefix.specialise(|prefix| {
            let mut skipped = 0;
            while skipped < left {
                match prefix.split_string(rest) {
                    Some((s, after)) if ascii_length(s.len() as u64) => rest = after,
                    _ => break,
                }
                skipped += 1;
            }
            skipped
        });
        self.rest = rest;
        self.left -= skipped;
        skipped
    }
}

/// The strings of a string array as checked UTF-8, from [`Array::strs`].
///
/// UTF-8 is checked with SIMD over whole blocks of elements, length prefixes included, rather
/// than string by string. This is exact because of one fact: if some bytes are valid UTF-8,
/// a slice of them is valid exactly when both its ends are character boundaries (neither end
/// falls on a continuation byte). So iterating checks up to [`BLOCK`] bytes at a time, keeps
/// their longest valid prefix as text, and cuts each string from that text with a test of
/// its two ends, the only per-string cost beyond the parse's own walk. A string the text
/// cannot give (it is invalid, or a length prefix next to it holds bytes >= 0x80 that make the
/// block invalid or run into the string) starts a new block, and if it is still not inside
/// one it is checked on its own.
///
/// [`Strs::invalid`] needs no walk at all for an array whose length prefixes are all ASCII.
#[derive(Clone, Debug)]
pub struct Strs<'a> {
    /// The strings from here on, cut from the current block's checked text.
    block: TextStrings<'a>,
    elements: &'a [u8],
    /// The number of strings in the array, so that an error can name its element's index.
    len: u64,
    ascii_prefixes: bool,
}

/// The walk of [`Strings`] over text: `left` counts the strings to the end of the array, which
/// `rest` (the unread part of the current block) may not hold.
#[derive(Clone, Debug)]
struct TextStrings<'a> {
    rest: &'a str,
    left: u64,
    prefix: LengthPrefix,
}

impl<'a> TextStrings<'a> {
    /// The next string, if it is inside `rest` with character boundaries at both ends
    /// (`prefix` is `self.prefix`, passed in so that a caller can make it a constant).
    #[inline(always)]
    fn next_in(&mut self, prefix: LengthPrefix) -> Option<&'a str> {
        if self.left == 0 {
            return None;
        }
        let (s, rest) = prefix.split_text(self.rest)?;
        self.rest = rest;
        self.left -= 1;
        Some(s)
    }
}

/// Where `part`, a slice of `elements`, starts in it.
fn offset(elements: &[u8], part: &[u8]) -> usize {
    part.as_ptr() as usize - elements.as_ptr() as usize
}

impl<'a> Strs<'a> {
    /// The next string when the current block cannot give it: from a new block that starts
    /// at its length prefix or, failing that, checked on its own. Takes and returns the walk
    /// by value, so that the caller's loop can keep it in registers.
    #[cold]
    #[inline(never)]
    fn next_block(
        mut block: TextStrings<'a>,
        elements: &'a [u8],
        len: u64,
    ) -> (TextStrings<'a>, Option<Result<&'a str, StrError>>) {
        if block.left == 0 {
            return (block, None);
        }
        let start = offset(elements, block.rest.as_bytes());
        let prefix = block.prefix;
        let Some((s, after)) = elements.get(start..).and_then(|e| prefix.split_string(e)) else {
            return (block, None);
        };
        let end = elements.len() - after.len();
        // A prefix byte >= 0x80 stops any block at once: go straight to the string's own check.
        if elements[start..start + prefix.width()].is_ascii() {
            let stop = elements.len().min(end.max(start.saturating_add(BLOCK)));
            block.rest = valid_prefix(&elements[start..stop]);
            if let Some(text) = block.next_in(prefix) {
                return (block, Some(Ok(text)));
            }
        }
        let index = len - block.left;
        block.left -= 1;
        block.rest = valid_prefix(&elements[end..end]);
        (block, Some(check_alone(elements, s, index)))
    }

    /// Only the strings that are not UTF-8: the check validation makes, with no per-string
    /// work beyond a walk of the length prefixes. A length prefix whose bytes are all ASCII
    /// (< 0x80) can neither complete nor start a multi-byte sequence, so the bytes of a run of
    /// strings joined by such prefixes are valid exactly when every string is: each run is
    /// checked by one SIMD pass and a valid one is skipped whole. When the parse found every
    /// prefix of the array ASCII, the whole array is one run and is not even walked.
    ///
    /// ```
    /// use gguf_grammar::grammar::{value::array, Ctx};
    ///
    /// let bytes = b"\x08\0\0\0\x02\0\0\0\0\0\0\0\x02\0\0\0\0\0\0\0ab\x01\0\0\0\0\0\0\0\xff";
    /// let (_, arr) = array(Ctx::V3_LE)(bytes).unwrap();
    /// let invalid: Vec<u64> = arr.strs().unwrap().invalid().map(|e| e.index).collect();
    /// assert_eq!(invalid, [1]);
    /// ```
    pub fn invalid(self) -> impl Iterator<Item = StrError> + 'a {
        let elements = self.elements;
        let mut walk = Strings {
            rest: &elements[offset(elements, self.block.rest.as_bytes())..],
            left: self.block.left,
            prefix: self.block.prefix,
        };
        if self.block.left == self.len
            && self.ascii_prefixes
            && simdutf8::basic::from_utf8(elements).is_ok()
        {
            walk.left = 0;
        }
        let mut index = self.len - walk.left;
        // The strings of an invalid run, to check one by one, and the index of the next.
        let mut alone = (
            Strings {
                left: 0,
                ..walk.clone()
            },
            0,
        );
        std::iter::from_fn(move || loop {
            for s in alone.0.by_ref() {
                alone.1 += 1;
                if let Err(e) = check_alone(elements, s.as_bytes(), alone.1 - 1) {
                    return Some(e);
                }
            }
            let from = walk.clone();
            let first = walk.next()?.as_bytes();
            let run = 1 + walk.skip_ascii_prefixed();
            let start = offset(elements, first);
            let end = elements.len() - walk.rest.len();
            if simdutf8::basic::from_utf8(&elements[start..end]).is_err() {
                alone = (Strings { left: run, ..from }, index);
            }
            index += run;
        })
    }

    /// Runs `each` over the strings in a loop compiled once per length prefix width and byte
    /// order (as `fold` does), stopping at its first error.
    #[inline(always)]
    pub fn try_each<E>(
        mut self,
        mut each: impl FnMut(Result<&'a str, StrError>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.block.prefix.specialise(|prefix| {
            while let Some(item) = self.next_with(prefix) {
                each(item)?;
            }
            Ok(())
        })
    }

    /// [`Iterator::next`] with `prefix` (`self.block.prefix`) passed in, so that a caller
    /// can make it a constant.
    #[inline(always)]
    fn next_with(&mut self, prefix: LengthPrefix) -> Option<Result<&'a str, StrError>> {
        match self.block.next_in(prefix) {
            Some(text) => Some(Ok(text)),
            None => {
                let (block, item) = Self::next_block(self.block.clone(), self.elements, self.len);
                self.block = block;
                item
            }
        }
    }
}

/// The longest valid UTF-8 prefix of `bytes`, always a slice of `bytes` (the walks find their
/// place by its address).
fn valid_prefix(bytes: &[u8]) -> &str {
    // compat stops at the first error; basic then yields the valid prefix as a &str.
    let valid = match simdutf8::compat::from_utf8(bytes) {
        Ok(text) => return text,
        Err(e) => &bytes[..e.valid_up_to()],
    };
    simdutf8::basic::from_utf8(valid)
        .or_else(|_| std::str::from_utf8(&valid[..0]))
        .unwrap_or_default()
}

impl<'a> Iterator for Strs<'a> {
    type Item = Result<&'a str, StrError>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        self.next_with(self.block.prefix)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.block.left).unwrap_or(usize::MAX);
        (0, Some(left))
    }

    /// The loop compiled once per prefix width and byte order (`count`, `sum` and
    /// `for_each` come here).
    fn fold<B, F: FnMut(B, Self::Item) -> B>(mut self, init: B, mut f: F) -> B {
        self.block.prefix.specialise(|prefix| {
            let mut acc = init;
            loop {
                while let Some(text) = self.block.next_in(prefix) {
                    acc = f(acc, Ok(text));
                }
                let (block, item) = Self::next_block(self.block.clone(), self.elements, self.len);
                self.block = block;
                match item {
                    Some(item) => acc = f(acc, item),
                    None => return acc,
                }
            }
        })
    }
}

/// The UTF-8 check of one string outside a valid run.
#[cold]
#[inline(never)]
fn check_alone<'a>(elements: &[u8], s: &'a [u8], index: u64) -> Result<&'a str, StrError> {
    simdutf8::compat::from_utf8(s).map_err(|e| StrError {
        index,
        offset: offset(elements, s),
        len: s.len(),
        valid_up_to: e.valid_up_to(),
    })
}

/// A string element that is not UTF-8: which element, where its bytes are, and where the
/// first invalid sequence starts. It owns nothing, so it can leave the function that read
/// the file (`?` into `Box<dyn Error>`); [`bytes`](StrError::bytes) gives the string back.
///
/// ```
/// use gguf_grammar::grammar::{value::array, Ctx};
///
/// let bytes = b"\x08\0\0\0\x01\0\0\0\0\0\0\0\x02\0\0\0\0\0\0\0a\xff";
/// let (_, arr) = array(Ctx::V3_LE)(bytes).unwrap();
/// let err = arr.strs().unwrap().next().unwrap().unwrap_err();
/// assert_eq!(err.to_string(), "[0]: string of 2 bytes is not UTF-8 (invalid sequence at byte 1)");
/// assert_eq!(err.bytes(arr).as_bytes(), b"a\xff");
/// let boxed: Box<dyn std::error::Error> = err.into();
/// # let _ = boxed;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StrError {
    /// The element's index in the array.
    pub index: u64,
    /// Where the element's bytes start in the array's element bytes
    /// ([`Array::raw_elements`]), after its length prefix.
    pub offset: usize,
    /// The element's length in bytes.
    pub len: usize,
    /// Bytes of valid UTF-8 before the first invalid sequence.
    pub valid_up_to: usize,
}

impl StrError {
    /// The element's bytes as stored in `array`, the array it was read from.
    ///
    /// # Panics
    /// When `array` is not that array and does not have as many element bytes.
    pub fn bytes<'a>(&self, array: Array<'a>) -> GgufStr<'a> {
        GgufStr(&array.raw_elements()[self.offset..self.offset + self.len])
    }
}

impl std::fmt::Display for StrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[{}]: string of {} bytes is not UTF-8 (invalid sequence at byte {})",
            self.index, self.len, self.valid_up_to
        )
    }
}

impl std::error::Error for StrError {}

/// O(1) access by index to the strings of a string array, from [`Array::string_index`].
#[derive(Clone, Debug)]
pub struct StringIndex<'a> {
    elements: &'a [u8],
    /// Where each string's bytes start, followed by the end of the last one.
    bounds: Vec<usize>,
    prefix_width: usize,
}

impl<'a> StringIndex<'a> {
    /// The string at `index`.
    pub fn get(&self, index: usize) -> Option<GgufStr<'a>> {
        let start = *self.bounds.get(index)?;
        let next = *self.bounds.get(index.checked_add(1)?)?;
        // Every string but the last ends where the next one's length prefix begins.
        let end = if index + 2 == self.bounds.len() {
            next
        } else {
            next - self.prefix_width
        };
        self.elements.get(start..end).map(GgufStr)
    }

    /// Number of strings indexed.
    pub fn len(&self) -> usize {
        self.bounds.len() - 1
    }

    /// Whether there are no strings.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

pub use crate::grammar::endian::Number;

/// The elements of a numeric array decoded one by one, from [`Array::numbers`].
#[derive(Clone, Debug)]
pub struct Numbers<'a, T> {
    chunks: std::slice::ChunksExact<'a, u8>,
    endian: Endian,
    number: PhantomData<T>,
}

impl<T: Number> Iterator for Numbers<'_, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        Some(self.endian.read(self.chunks.next()?))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }

    /// One loop per byte order (`sum`, `for_each` and `collect` come here), so that the
    /// order is not tested per element.
    fn fold<B, F: FnMut(B, T) -> B>(self, init: B, f: F) -> B {
        match self.endian {
            Endian::Little => self.chunks.map(|b| Little.read(b)).fold(init, f),
            Endian::Big => self.chunks.map(|b| Big.read(b)).fold(init, f),
        }
    }
}

impl<T: Number> ExactSizeIterator for Numbers<'_, T> {}

/// The byte order of the machine running this code.
const NATIVE: Endian = if cfg!(target_endian = "little") {
    Endian::Little
} else {
    Endian::Big
};

impl<'a> Array<'a> {
    /// The strings of a string array as raw bytes, walked by the parse's own loop (`None` if
    /// the elements are not strings).
    ///
    /// ```
    /// use gguf_grammar::grammar::{value::array, Ctx};
    ///
    /// // element type 8 (string), 2 elements: "ab", "\xff"
    /// let bytes = b"\x08\0\0\0\x02\0\0\0\0\0\0\0\x02\0\0\0\0\0\0\0ab\x01\0\0\0\0\0\0\0\xff";
    /// let (_, arr) = array(Ctx::V3_LE)(bytes).unwrap();
    /// let raw: Vec<&[u8]> = arr.strings().unwrap().map(|s| s.as_bytes()).collect();
    /// assert_eq!(raw, [&b"ab"[..], b"\xff"]);
    /// ```
    pub fn strings(&self) -> Option<Strings<'a>> {
        (self.element_type() == ValueType::String).then(|| Strings {
            rest: self.raw_elements(),
            left: self.len() as u64,
            prefix: LengthPrefix::of(self.ctx()),
        })
    }

    /// The strings of a string array as `&str`, each one `Err` if it is not UTF-8 (`None` if
    /// the elements are not strings). UTF-8 is checked with SIMD over long runs of
    /// elements at once (see [`Strs`]).
    ///
    /// ```
    /// use gguf_grammar::grammar::{value::array, Ctx};
    ///
    /// let bytes = b"\x08\0\0\0\x02\0\0\0\0\0\0\0\x02\0\0\0\0\0\0\0ab\x01\0\0\0\0\0\0\0\xff";
    /// let (_, arr) = array(Ctx::V3_LE)(bytes).unwrap();
    /// let mut strs = arr.strs().unwrap();
    /// assert_eq!(strs.next(), Some(Ok("ab")));
    /// let err = strs.next().unwrap().unwrap_err();
    /// assert_eq!((err.index, err.valid_up_to), (1, 0));
    /// assert_eq!(err.to_string(), "[1]: string of 1 bytes is not UTF-8 (invalid sequence at byte 0)");
    /// ```
    pub fn strs(&self) -> Option<Strs<'a>> {
        let strings = self.strings()?;
        let elements = self.raw_elements();
        Some(Strs {
            block: TextStrings {
                rest: valid_prefix(&elements[..0]),
                left: strings.left,
                prefix: strings.prefix,
            },
            elements,
            len: strings.left,
            ascii_prefixes: self.ascii_prefixes(),
        })
    }

    /// An offsets table over a string array, built in one pass, for O(1) access by index
    /// (`None` if the elements are not strings). It takes one `usize` per string.
    pub fn string_index(&self) -> Option<StringIndex<'a>> {
        let strings = self.strings()?;
        let elements = self.raw_elements();
        // At most one entry per length prefix the bytes can hold, whatever the count says.
        let prefix_width = strings.prefix.width();
        let mut bounds = Vec::with_capacity(
            strings
                .size_hint()
                .1
                .unwrap_or(0)
                .min(elements.len() / prefix_width)
                + 1,
        );
        let mut end = 0;
        for s in strings {
            let start = offset(elements, s.as_bytes());
            bounds.push(start);
            end = start + s.len();
        }
        bounds.push(end);
        Some(StringIndex {
            elements,
            bounds,
            prefix_width,
        })
    }

    /// The elements as a slice of `T`, without copying: `Some` only when the element type is
    /// `T`'s, the file's byte order is this machine's and the bytes are aligned for `T`
    /// (otherwise use [`Array::to_vec`] or [`Array::decode_into`]).
    ///
    /// ```
    /// use gguf_grammar::grammar::{value::array, Ctx};
    ///
    /// let bytes = b"\x04\0\0\0\x02\0\0\0\0\0\0\0\x07\0\0\0\x09\0\0\0"; // uint32 [7, 9]
    /// let (_, arr) = array(Ctx::V3_LE)(bytes).unwrap();
    /// if let Some(view) = arr.as_slice::<u32>() {
    ///     assert_eq!(view, [7, 9]); // little-endian machine, aligned bytes
    /// }
    /// assert_eq!(arr.to_vec::<u32>(), Some(vec![7, 9])); // always
    /// ```
    pub fn as_slice<T: Number>(&self) -> Option<&'a [T]> {
        if self.element_type() != T::TYPE || self.ctx().endian != NATIVE {
            return None;
        }
        bytemuck::try_cast_slice(self.raw_elements()).ok()
    }

    /// The elements decoded one by one as `T` in the file's byte order (`None` if the
    /// element type is not `T`'s).
    pub fn numbers<T: Number>(&self) -> Option<Numbers<'a, T>> {
        (self.element_type() == T::TYPE).then(|| Numbers {
            chunks: self.raw_elements().chunks_exact(std::mem::size_of::<T>()),
            endian: self.ctx().endian,
            number: PhantomData,
        })
    }

    /// Appends the elements, decoded as `T`, to `out` in one pass; returns `false` (appending
    /// nothing) if the element type is not `T`'s.
    ///
    /// ```
    /// use gguf_grammar::grammar::{value::array, Ctx, Endian, Version};
    ///
    /// let bytes = b"\0\0\0\x05\0\0\0\0\0\0\0\x02\xff\xff\xff\xfe\0\0\0\x03"; // big-endian int32 [-2, 3]
    /// let ctx = Ctx { version: Version::V3, endian: Endian::Big };
    /// let (_, arr) = array(ctx)(bytes).unwrap();
    /// let mut out = vec![1];
    /// assert!(arr.decode_into::<i32>(&mut out));
    /// assert_eq!(out, [1, -2, 3]);
    /// ```
    pub fn decode_into<T: Number>(&self, out: &mut Vec<T>) -> bool {
        if self.element_type() != T::TYPE {
            return false;
        }
        let chunks = self.raw_elements().chunks_exact(std::mem::size_of::<T>());
        out.reserve_exact(chunks.len());
        // One loop per byte order, so that each compiles to a plain copy or byte swap.
        match self.ctx().endian {
            Endian::Little => out.extend(chunks.map(|b| Little.read::<T>(b))),
            Endian::Big => out.extend(chunks.map(|b| Big.read::<T>(b))),
        }
        true
    }

    /// The elements decoded as `T` into a vector allocated once (`None` if the element type
    /// is not `T`'s).
    pub fn to_vec<T: Number>(&self) -> Option<Vec<T>> {
        let mut out = Vec::new();
        self.decode_into(&mut out).then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::test_bytes::{all_ctx, Enc};
    use crate::grammar::value::array;
    use crate::grammar::Ctx;
    use crate::Value;

    fn parse(bytes: &[u8]) -> Array<'_> {
        array(Ctx::V3_LE)(bytes).unwrap().1
    }

    fn parse_in(ctx: Ctx, bytes: &[u8]) -> Array<'_> {
        array(ctx)(bytes).unwrap().1
    }

    /// Strings chosen so that the run check and the per-string check both matter: a length
    /// of 200 puts a byte >= 0x80 in the prefix; "\xc3" ends in a cut sequence that the next
    /// prefix byte 0xa9 (length 169) would complete if strings were not checked apart.
    fn strings() -> Vec<Vec<u8>> {
        vec![
            b"plain".to_vec(),
            "é€😀".as_bytes().to_vec(),
            vec![],
            vec![b'x'; 200],
            b"\xc3".to_vec(),
            vec![b'y'; 169],
            b"ok".to_vec(),
            b"\xff\xfe".to_vec(),
        ]
    }

    fn encode(ctx: Ctx, strings: &[Vec<u8>]) -> Vec<u8> {
        let mut enc = Enc::new(ctx)
            .u32(ValueType::String.tag())
            .count(strings.len() as u64);
        for s in strings {
            enc = enc.string(s);
        }
        enc.bytes
    }

    #[test]
    fn strings_strs_and_index_agree_with_iter_in_every_version_and_byte_order() {
        let strings = strings();
        for ctx in all_ctx() {
            let bytes = encode(ctx, &strings);
            let arr = parse_in(ctx, &bytes);
            let expected: Vec<&[u8]> = arr
                .iter()
                .map(|v| v.as_gguf_str().unwrap().as_bytes())
                .collect();
            assert_eq!(expected, strings, "{ctx:?}");

            let raw: Vec<&[u8]> = arr.strings().unwrap().map(|s| s.as_bytes()).collect();
            assert_eq!(raw, expected, "{ctx:?}");

            let index = arr.string_index().unwrap();
            assert_eq!(index.len(), strings.len());
            for (i, s) in expected.iter().enumerate() {
                assert_eq!(
                    index.get(i).map(|s| s.as_bytes()),
                    Some(*s),
                    "{ctx:?} [{i}]"
                );
            }
            assert_eq!(index.get(strings.len()), None);

            let checked: Vec<_> = arr.strs().unwrap().collect();
            let prefix = if ctx.version == crate::Version::V1 {
                4
            } else {
                8
            };
            let mut at = 0;
            for (i, (got, s)) in checked.iter().zip(&expected).enumerate() {
                at += prefix;
                match std::str::from_utf8(s) {
                    Ok(text) => assert_eq!(got, &Ok(text), "{ctx:?} [{i}]"),
                    Err(e) => assert_eq!(
                        got,
                        &Err(StrError {
                            index: i as u64,
                            offset: at,
                            len: s.len(),
                            valid_up_to: e.valid_up_to()
                        }),
                        "{ctx:?} [{i}]"
                    ),
                }
                if let Err(e) = got {
                    assert_eq!(e.bytes(arr).as_bytes(), *s, "{ctx:?} [{i}]");
                }
                at += s.len();
            }
            assert_eq!(checked.len(), strings.len());
        }
    }

    #[test]
    fn invalid_finds_exactly_the_errors_strs_yields() {
        // Valid runs of short strings, long strings (non-ASCII prefixes) and invalid strings
        // in every arrangement of up to four.
        let pieces: [&[u8]; 5] = [b"ok", "é".as_bytes(), &[b'z'; 130], b"\xc3", b"a\xff"];
        for ctx in all_ctx() {
            for n in 0..=4u32 {
                for pick in 0..5usize.pow(n) {
                    let strings: Vec<Vec<u8>> = (0..n)
                        .map(|k| pieces[pick / 5usize.pow(k) % 5].to_vec())
                        .collect();
                    let bytes = encode(ctx, &strings);
                    let arr = parse_in(ctx, &bytes);
                    let expected: Vec<StrError> =
                        arr.strs().unwrap().filter_map(Result::err).collect();
                    let found: Vec<StrError> = arr.strs().unwrap().invalid().collect();
                    assert_eq!(found, expected, "{ctx:?} {strings:x?}");
                    let by_std = strings.iter().filter(|s| std::str::from_utf8(s).is_err());
                    assert_eq!(found.len(), by_std.count());
                }
            }
        }
    }

    #[test]
    fn blocks_end_inside_characters_and_strings() {
        // Multi-byte strings over several blocks, so that block edges fall inside characters
        // and strings; one string longer than a block; invalid strings here and there.
        let mut strings: Vec<Vec<u8>> = (0..40_000)
            .map(|i| "é€😀".repeat(i % 5).into_bytes())
            .collect();
        strings[7_000] = b"\xe2\x82".to_vec();
        strings[20_000] = "😀".repeat(BLOCK / 3).into_bytes();
        strings[30_001] = b"ok\xff".to_vec();
        for ctx in all_ctx() {
            let bytes = encode(ctx, &strings);
            let arr = parse_in(ctx, &bytes);
            let checked: Vec<_> = arr.strs().unwrap().collect();
            assert_eq!(checked.len(), strings.len());
            for (i, (got, s)) in checked.iter().zip(&strings).enumerate() {
                match (got, std::str::from_utf8(s)) {
                    (Ok(text), Ok(expected)) => assert_eq!(*text, expected, "{ctx:?} [{i}]"),
                    (Err(e), Err(expected)) => {
                        assert_eq!(e.valid_up_to, expected.valid_up_to(), "{ctx:?} [{i}]")
                    }
                    _ => panic!("{ctx:?} [{i}]: {got:?}"),
                }
            }
            let invalid: Vec<u64> = arr.strs().unwrap().invalid().map(|e| e.index).collect();
            assert_eq!(invalid, [7_000, 30_001], "{ctx:?}");
        }
    }

    #[test]
    fn valid_prefix_is_the_longest_valid_prefix_as_std_finds_it() {
        // Every cut of text with characters of each width, and the same with bytes of each
        // kind (ASCII, continuation, lead, never valid) put in one place or at the end.
        let text = "a\u{e9}\u{20ac}\u{1f600}b\u{e9}\u{20ac}\u{1f600}".as_bytes();
        let mut cases = Vec::new();
        for end in 0..=text.len() {
            cases.push(text[..end].to_vec());
            for bad in [b'x', 0x80, 0xc3, 0xe2, 0xf0, 0xff] {
                let mut after = text[..end].to_vec();
                after.push(bad);
                cases.push(after);
                let mut inside = text[..end].to_vec();
                inside.insert(end / 2, bad);
                cases.push(inside);
            }
        }
        for bytes in cases {
            let expected = match std::str::from_utf8(&bytes) {
                Ok(_) => bytes.len(),
                Err(e) => e.valid_up_to(),
            };
            let got = valid_prefix(&bytes);
            assert_eq!(got.len(), expected, "{bytes:x?}");
            assert_eq!(got.as_ptr(), bytes.as_ptr(), "{bytes:x?}");
        }
    }

    #[test]
    fn a_run_that_is_valid_as_a_whole_still_checks_each_string() {
        // "\xc3" then the length 0xa9 = 169: the bytes c3 a9 form "é" across the boundary,
        // so the element bytes are valid UTF-8 while the first string is not.
        let strings = [b"\xc3".to_vec(), vec![b'y'; 169]];
        let bytes = encode(Ctx::V3_LE, &strings);
        let arr = parse(&bytes);
        assert!(std::str::from_utf8(arr.raw_elements()).is_ok());
        let checked: Vec<_> = arr.strs().unwrap().map(|r| r.is_ok()).collect();
        assert_eq!(checked, [false, true]);
    }

    /// What [`Strs`] and [`Strs::invalid`] must find, string by string, by std's check.
    fn assert_checked_as_std_does(arr: Array<'_>, strings: &[Vec<u8>], what: &str) {
        let expected: Vec<Result<&str, usize>> = strings
            .iter()
            .map(|s| std::str::from_utf8(s).map_err(|e| e.valid_up_to()))
            .collect();
        let got: Vec<Result<&str, usize>> = arr
            .strs()
            .unwrap()
            .map(|r| r.map_err(|e| e.valid_up_to))
            .collect();
        assert_eq!(got, expected, "{what}: strs");
        let folded = arr.strs().unwrap().fold(Vec::new(), |mut all, r| {
            all.push(r.map_err(|e| e.valid_up_to));
            all
        });
        assert_eq!(folded, expected, "{what}: fold");
        let invalid: Vec<(u64, usize)> = arr
            .strs()
            .unwrap()
            .invalid()
            .map(|e| (e.index, e.valid_up_to))
            .collect();
        let expected_invalid: Vec<(u64, usize)> = (0..)
            .zip(&expected)
            .filter_map(|(i, r)| r.err().map(|at| (i, at)))
            .collect();
        assert_eq!(invalid, expected_invalid, "{what}: invalid");
        // From part way through, as a caller that stops iterating and asks for the rest.
        for k in 1..=strings.len() {
            let mut strs = arr.strs().unwrap();
            strs.by_ref().take(k).for_each(drop);
            let rest: Vec<(u64, usize)> =
                strs.invalid().map(|e| (e.index, e.valid_up_to)).collect();
            let expected_rest: Vec<(u64, usize)> = expected_invalid
                .iter()
                .copied()
                .filter(|&(i, _)| i >= k as u64)
                .collect();
            assert_eq!(rest, expected_rest, "{what}: invalid after {k}");
        }
    }

    #[test]
    fn length_prefixes_that_splice_into_strings_are_never_taken_for_text() {
        let cases: [(&str, Vec<Vec<u8>>); 6] = [
            // Little-endian: the length 0xa9 = 169 starts with a continuation byte that
            // completes the cut "\xc3" before it.
            (
                "cut, then prefix a9",
                vec![b"\xc3".to_vec(), vec![b'y'; 169]],
            ),
            // Big-endian: the length 0xc3 = 195 ends with a lead byte that the string
            // after it, starting with a continuation byte, completes.
            ("prefix c3, then continuation", {
                let mut s = b"\xa9".to_vec();
                s.resize(195, b'z');
                vec![b"ok".to_vec(), s]
            }),
            // Prefixes >= 0x80 next to valid strings: every string valid, the whole not.
            (
                "long valid strings",
                vec![
                    vec![b'x'; 128],
                    "é".repeat(100).into_bytes(),
                    b"a".to_vec(),
                    vec![b'y'; 255],
                ],
            ),
            // Every prefix ASCII: the one SIMD pass fails and the strings are looked at.
            (
                "short, one invalid",
                vec![b"ab".to_vec(), b"c\xff".to_vec(), "€".as_bytes().to_vec()],
            ),
            (
                "short, last cut",
                vec![b"ab".to_vec(), b"\xe2\x82".to_vec()],
            ),
            (
                "short, all valid",
                vec![b"ab".to_vec(), "😀".as_bytes().to_vec(), vec![]],
            ),
        ];
        for ctx in all_ctx() {
            for (what, strings) in &cases {
                let bytes = encode(ctx, strings);
                assert_checked_as_std_does(
                    parse_in(ctx, &bytes),
                    strings,
                    &format!("{ctx:?} {what}"),
                );
                // The same array nested one level down.
                let mut nested = Enc::new(ctx).u32(ValueType::Array.tag()).count(1);
                nested.bytes.extend(&bytes);
                let outer = parse_in(ctx, &nested.bytes);
                let inner = outer.iter().next().and_then(|v| v.as_array()).unwrap();
                assert_checked_as_std_does(inner, strings, &format!("{ctx:?} {what}, nested"));
            }
        }
    }

    #[test]
    fn random_strings_of_troublesome_bytes_are_checked_as_std_does() {
        // Bytes that start, continue, complete or break multi-byte sequences, in strings whose
        // lengths put such bytes in the prefixes too.
        let alphabet = [
            b'a', 0, 0x7f, 0x80, 0xa9, 0xbf, 0xc3, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0xff,
        ];
        let lengths = [0, 1, 2, 3, 4, 127, 128, 169, 191, 192, 195, 255, 256, 257];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for ctx in all_ctx() {
            for round in 0..300 {
                let strings: Vec<Vec<u8>> = (0..next(12))
                    .map(|_| {
                        let len = lengths[next(lengths.len())];
                        // Mostly valid text with a troublesome byte here and there.
                        let mut s: Vec<u8> = "aé€😀".repeat(len).into_bytes();
                        s.truncate(len);
                        for _ in 0..next(3) {
                            if len > 0 {
                                s[next(len)] = alphabet[next(alphabet.len())];
                            }
                        }
                        s
                    })
                    .collect();
                let bytes = encode(ctx, &strings);
                assert_checked_as_std_does(
                    parse_in(ctx, &bytes),
                    &strings,
                    &format!("{ctx:?} round {round}"),
                );
            }
        }
    }

    #[test]
    fn empty_and_non_string_arrays() {
        let bytes = encode(Ctx::V3_LE, &[]);
        let arr = parse(&bytes);
        assert_eq!(arr.strings().unwrap().count(), 0);
        assert_eq!(arr.strs().unwrap().count(), 0);
        let index = arr.string_index().unwrap();
        assert!(index.is_empty());
        assert_eq!(index.get(0), None);

        let numbers = Enc::new(Ctx::V3_LE)
            .u32(ValueType::U8.tag())
            .count(1)
            .raw(&[7]);
        let arr = parse(&numbers.bytes);
        assert!(arr.strings().is_none() && arr.strs().is_none() && arr.string_index().is_none());
        assert_eq!(arr.to_vec::<u8>(), Some(vec![7]));
        assert_eq!(arr.to_vec::<i8>(), None);
    }

    #[test]
    fn numbers_decode_as_iter_does_in_every_version_and_byte_order() {
        fn check<T: Number + std::fmt::Debug>(
            ctx: Ctx,
            values: &[T],
            encode: impl Fn(T) -> Vec<u8>,
            wrap: impl Fn(T) -> Value<'static>,
        ) {
            let mut enc = Enc::new(ctx).u32(T::TYPE.tag()).count(values.len() as u64);
            for &v in values {
                // Enc writes big-endian bytes and reverses them for little-endian contexts.
                enc = enc.raw(&encode(v));
            }
            let arr = parse_in(ctx, &enc.bytes);
            let expected: Vec<Value<'_>> = arr.iter().collect();
            assert_eq!(
                expected,
                values.iter().map(|&v| wrap(v)).collect::<Vec<_>>(),
                "{ctx:?}"
            );
            let decoded = arr.to_vec::<T>().unwrap();
            assert_eq!(
                decoded.iter().map(|&v| wrap(v)).collect::<Vec<_>>(),
                expected
            );
            let iterated: Vec<T> = arr.numbers::<T>().unwrap().collect();
            assert_eq!(
                bytemuck::cast_slice::<T, u8>(&iterated),
                bytemuck::cast_slice::<T, u8>(&decoded)
            );
            let folded = arr.numbers::<T>().unwrap().fold(Vec::new(), |mut all, v| {
                all.push(v);
                all
            });
            assert_eq!(
                bytemuck::cast_slice::<T, u8>(&folded),
                bytemuck::cast_slice::<T, u8>(&decoded)
            );
            if let Some(view) = arr.as_slice::<T>() {
                assert_eq!(ctx.endian, NATIVE);
                assert_eq!(
                    bytemuck::cast_slice::<T, u8>(view),
                    bytemuck::cast_slice::<T, u8>(&decoded)
                );
            }
        }
        for ctx in all_ctx() {
            check(ctx, &[1u8, 255], |v| v.to_be_bytes().to_vec(), Value::U8);
            check(ctx, &[-1i8, 5], |v| v.to_be_bytes().to_vec(), Value::I8);
            check(ctx, &[300u16, 1], |v| v.to_be_bytes().to_vec(), Value::U16);
            check(ctx, &[-300i16], |v| v.to_be_bytes().to_vec(), Value::I16);
            check(
                ctx,
                &[7u32, 1 << 31],
                |v| v.to_be_bytes().to_vec(),
                Value::U32,
            );
            check(ctx, &[-2i32, 3], |v| v.to_be_bytes().to_vec(), Value::I32);
            // Long enough for the vectorised loops' bodies, not only their scalar tails.
            let long: Vec<i32> = (-40..37).map(|v| v * 1_000_003).collect();
            check(ctx, &long, |v| v.to_be_bytes().to_vec(), Value::I32);
            let long: Vec<f32> = long.iter().map(|&v| v as f32 / 7.0).collect();
            check(ctx, &long, |v| v.to_be_bytes().to_vec(), Value::F32);
            let long: Vec<u16> = (0..77).map(|v| v * 851).collect();
            check(ctx, &long, |v| v.to_be_bytes().to_vec(), Value::U16);
            check(
                ctx,
                &[u64::MAX, 2],
                |v| v.to_be_bytes().to_vec(),
                Value::U64,
            );
            check(ctx, &[i64::MIN], |v| v.to_be_bytes().to_vec(), Value::I64);
            check(
                ctx,
                &[0.1f32, -0.0, f32::INFINITY],
                |v| v.to_be_bytes().to_vec(),
                Value::F32,
            );
            check(
                ctx,
                &[1e300f64, f64::MIN_POSITIVE],
                |v| v.to_be_bytes().to_vec(),
                Value::F64,
            );
        }
    }

    #[test]
    fn a_view_needs_alignment() {
        // Element bytes at offset 12 of a buffer: aligned for u32 in a Vec<u32>-backed buffer
        // shifted by 0, misaligned when shifted by 1.
        let enc = Enc::new(Ctx::V3_LE)
            .u32(ValueType::U32.tag())
            .count(2)
            .u32(7)
            .u32(9);
        let mut storage = vec![0u32; 8];
        let buf: &mut [u8] = bytemuck::cast_slice_mut(&mut storage);
        buf[..enc.bytes.len()].copy_from_slice(&enc.bytes);
        let aligned = parse(&buf[..enc.bytes.len()]);
        if NATIVE == Endian::Little {
            assert_eq!(aligned.as_slice::<u32>(), Some(&[7u32, 9][..]));
        }
        buf.copy_within(0..enc.bytes.len(), 1);
        let misaligned = parse(&buf[1..=enc.bytes.len()]);
        assert_eq!(misaligned.as_slice::<u32>(), None);
        assert_eq!(misaligned.to_vec::<u32>(), Some(vec![7, 9]));
    }
}
