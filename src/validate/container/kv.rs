//! Key/value pairs: keys (empty, duplicate, reserved, too long, not UTF-8, not the spec's
//! syntax) and values (strings, bools, arrays).

use super::{Checker, Seen, GGML, GGML_43, GGML_MAX_STRING, PY, SPEC};
use crate::error::Segment;
use crate::grammar::value::{Array, ElementType, Value, ValueType};
use crate::validate::codes;
use crate::validate::diagnostics::{span_of, At};
use crate::GgufStr;

/// ggml's `GGUF_MAX_ARRAY_ELEMENTS`.
const GGML_MAX_ARRAY: u64 = 1 << 30;
/// The specification's limit on a key's length.
const SPEC_MAX_KEY: usize = 65535;
/// Field names gguf-py's reader puts before the file's own key/values.
const GGUF_PY_SYNTHETIC: [&[u8]; 3] = [b"GGUF.version", b"GGUF.tensor_count", b"GGUF.kv_count"];

/// The first string found breaking a rule, with its index, and how many do.
type Offenders<'a> = (Option<(u64, GgufStr<'a>)>, u64);

impl<'a> Checker<'_, 'a> {
    pub(super) fn kvs(&mut self) {
        let gguf = self.gguf;
        let mut first = Seen::new();
        for (i, kv) in gguf.kvs.iter().enumerate() {
            let key = kv.key.as_bytes();
            if key.is_empty() {
                self.out.reject(
                    codes::EMPTY_KEY,
                    GGML | SPEC,
                    self.kv_at(i),
                    "empty key (the ggml of llama-cpp-python 0.3.16 aborts: GGML_ASSERT(!key.empty()))".into(),
                );
            }
            if let Some(earlier) = first.first_use(key, i) {
                self.out.reject(
                    codes::DUPLICATE_KEY,
                    GGML | PY,
                    self.kv_at(i),
                    format!(
                        "key \"{}\" already appears at kv[{earlier}]",
                        kv.key.lossy()
                    ),
                );
            }
            if GGUF_PY_SYNTHETIC.contains(&key) {
                self.out.reject(
                    codes::KEY_RESERVED_BY_GGUF_PY,
                    PY,
                    self.kv_at(i),
                    format!(
                        "gguf-py names its own header field \"{}\", so it sees a duplicate",
                        kv.key.lossy()
                    ),
                );
            }
            self.key_syntax(i, kv.key);
            self.value(
                kv.value,
                &|| At::kv(gguf, i).then(Segment::Field("value")),
                true,
            );
        }
    }

    fn key_syntax(&mut self, i: usize, key: GgufStr<'a>) {
        let bytes = key.as_bytes();
        if bytes.len() as u64 > GGML_MAX_STRING {
            self.out.reject(
                codes::STRING_TOO_LONG,
                GGML_43,
                self.kv_at(i),
                format!(
                    "key of {} bytes: ggml reads strings of at most 2^30 bytes",
                    bytes.len()
                ),
            );
        }
        if bytes.len() > SPEC_MAX_KEY {
            self.out.reject(
                codes::KEY_TOO_LONG,
                SPEC,
                self.kv_at(i),
                format!(
                    "key of {} bytes: the spec allows at most {SPEC_MAX_KEY}",
                    bytes.len()
                ),
            );
        }
        match simdutf8::compat::from_utf8(bytes) {
            Err(e) => self.out.reject(
                codes::KEY_INVALID_UTF8,
                PY | SPEC,
                self.kv_at(i),
                format!(
                    "key is not UTF-8 (at byte {}): gguf-py cannot decode it",
                    e.valid_up_to()
                ),
            ),
            Ok(text) if !text.is_ascii() => self.out.reject(
                codes::KEY_NOT_ASCII,
                SPEC,
                self.kv_at(i),
                "key is not ASCII: the spec requires ASCII keys".into(),
            ),
            Ok(text) if !text.is_empty() && !is_snake_case_path(text) => self.out.reject(
                codes::KEY_SYNTAX,
                SPEC,
                self.kv_at(i),
                "key is not dot-separated lower_snake_case segments, as the spec requires".into(),
            ),
            Ok(_) => {}
        }
    }

    /// Rules on a value found `at` (`top`: the kv's own value, not an array element).
    fn value(&mut self, value: Value<'a>, at: &dyn Fn() -> At, top: bool) {
        match value {
            Value::String(s) => {
                let invalid = simdutf8::basic::from_utf8(s.as_bytes()).is_err();
                let long = s.len() as u64 > GGML_MAX_STRING;
                let one = |bad: bool| (bad.then_some((0, s)), u64::from(bad));
                self.strings(one(invalid), one(long), 1, top, at)
            }
            Value::Bool(b) if b > 1 => self.out.reject(
                codes::BOOL_INVALID,
                SPEC,
                at(),
                format!("bool byte {b}: only 0 and 1 are defined"),
            ),
            Value::Array(array) => self.array(array, at, top),
            _ => {}
        }
    }

    fn array(&mut self, array: Array<'a>, at: &dyn Fn() -> At, top: bool) {
        let span = self.span(array.raw_elements());
        let here = || at().spanning(span.clone());
        if array.len() as u64 > GGML_MAX_ARRAY {
            self.out.reject(
                codes::ARRAY_TOO_LONG,
                GGML_43,
                here(),
                format!("array of {} elements: ggml reads at most 2^30", array.len()),
            );
        }
        let element_type = match array.element_type() {
            ElementType::Known(ty) => ty,
            ElementType::Unknown(tag) => {
                return self.out.reject(
                    codes::ARRAY_TYPE_UNKNOWN,
                    GGML | SPEC,
                    here(),
                    format!(
                        "empty array of element type {tag}: ggml rejects a type outside 0..=12 \
                         (gguf-py reads no element, so never sees it)"
                    ),
                );
            }
        };
        match element_type {
            ValueType::String => {
                // One SIMD pass per run of strings joined by ASCII length prefixes, with no
                // walk when every prefix is ASCII (crate::elements::Strs::invalid); no string
                // can be too long in fewer bytes than the limit.
                let invalid = array
                    .strs()
                    .map(|strs| strs.invalid().map(|e| (e.index, e.bytes(array))));
                let long = array
                    .strings()
                    .filter(|_| array.raw_elements().len() as u64 > GGML_MAX_STRING)
                    .map(|strings| {
                        (0..)
                            .zip(strings)
                            .filter(|(_, s)| s.len() as u64 > GGML_MAX_STRING)
                    });
                self.strings(
                    first_and_count(invalid.into_iter().flatten()),
                    first_and_count(long.into_iter().flatten()),
                    array.len() as u64,
                    top,
                    at,
                );
            }
            ValueType::Bool => {
                let bytes = array.raw_elements();
                if let Some(first) = bytes.iter().position(|&b| b > 1) {
                    let bad = bytes.iter().filter(|&&b| b > 1).count();
                    self.out.reject(
                        codes::BOOL_INVALID,
                        SPEC,
                        here(),
                        format!(
                            "{bad} of {} bool bytes are neither 0 nor 1 (first at [{first}])",
                            array.len()
                        ),
                    );
                }
            }
            ValueType::Array => {
                if top {
                    self.out.reject(
                        codes::ARRAY_NESTED,
                        GGML,
                        here(),
                        "array of arrays: ggml reads only arrays of scalars and strings".into(),
                    );
                }
                for (i, element) in array.iter().enumerate() {
                    let element_at = || here().then(Segment::Element(i as u64));
                    self.value(element, &element_at, false);
                }
            }
            _ => {}
        }
    }

    /// UTF-8 and length rules over `count` strings, given the first string (with its index)
    /// that is not UTF-8 and the first that is too long, each with how many there are (one
    /// diagnostic per rule, naming the first). A kv's own value of one string (`top`, count
    /// 1) is named without an element index.
    fn strings(
        &mut self,
        (invalid, n_invalid): Offenders<'a>,
        (long, n_long): Offenders<'a>,
        count: u64,
        top: bool,
        at: &dyn Fn() -> At,
    ) {
        let in_array = count != 1 || !top;
        let gguf = self.gguf;
        let element_at = |i: u64, s: GgufStr<'_>| {
            let at = at().spanning(span_of(gguf, s.as_bytes()));
            if in_array {
                at.then(Segment::Element(i))
            } else {
                at
            }
        };
        let of_count = |n: u64| {
            if in_array {
                format!(" ({n} of {count} strings)")
            } else {
                String::new()
            }
        };
        if let Some((i, s)) = invalid {
            self.out.reject(
                codes::STRING_INVALID_UTF8,
                SPEC,
                element_at(i, s),
                format!(
                    "string is not UTF-8{}: the spec requires UTF-8",
                    of_count(n_invalid)
                ),
            );
        }
        if let Some((i, s)) = long {
            self.out.reject(
                codes::STRING_TOO_LONG,
                GGML_43,
                element_at(i, s),
                format!(
                    "string of {} bytes{}: ggml reads strings of at most 2^30 bytes",
                    s.len(),
                    of_count(n_long)
                ),
            );
        }
    }
}

/// The first item and how many there are.
fn first_and_count<T>(mut items: impl Iterator<Item = T>) -> (Option<T>, u64) {
    let first = items.next();
    let rest = items.count() as u64;
    let count = if first.is_some() { rest + 1 } else { 0 };
    (first, count)
}

/// `a.b_c.d0`: dot-separated, non-empty segments of lowercase ASCII letters, digits and `_`.
fn is_snake_case_path(key: &str) -> bool {
    key.split('.').all(|segment| {
        !segment.is_empty()
            && segment
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_syntax() {
        assert!(is_snake_case_path("general.base_model.0.name"));
        assert!(is_snake_case_path("tokenizer.ggml.bos_token_id"));
        for bad in ["", "a..b", ".a", "a.", "General.name", "a-b", "a b"] {
            assert!(!is_snake_case_path(bad), "{bad}");
        }
    }
}
