//! Python's text forms of template values: `str()` (what `{{ x }}` prints in jinja2), `repr()`
//! (how containers print their items) and `json.dumps` (transformers' `tojson` filter).

use crate::bounds::{MAX_VALUE_BYTES, MAX_VALUE_ITEMS};
use minijinja::value::{Enumerator, Object, ObjectRepr};
use minijinja::value::{Value, ValueKind};
use minijinja::{Error, ErrorKind};
use std::fmt::Write;
use std::sync::Arc;

/// Python's `None` as transformers binds it to `tools` and `documents` when they are not
/// given: unlike minijinja's `none`, iterating over it is an error (`'NoneType' object is not
/// iterable`), as in jinja2. The `none` test is true for it (see [`is_none`]).
#[derive(Debug)]
pub struct PyNone;

impl Object for PyNone {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::NonEnumerable
    }

    fn is_true(self: &Arc<Self>) -> bool {
        false
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("None")
    }
}

/// What jinja2's `map`, `select`, `reject`, `selectattr` and `rejectattr` return: a Python
/// generator. It iterates like a list, but it is always true, has no length and is not JSON
/// serializable (so `x | map(...) | tojson` fails as in transformers; `| list` first works).
#[derive(Debug)]
pub struct PyGenerator(pub Vec<Value>);

impl Object for PyGenerator {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Iterable
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.0.clone())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        None
    }

    fn is_true(self: &Arc<Self>) -> bool {
        true
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<generator object>")
    }
}

/// The `none` test: minijinja's none or [`PyNone`].
pub fn is_none(value: &Value) -> bool {
    value.is_none() || value.downcast_object_ref::<PyNone>().is_some()
}

/// Containers nested deeper than this are an error rather than a deep recursion.
const MAX_DEPTH: usize = 64;

/// `str(value)` as jinja2 prints an expression: `None`, `True`, `1.0`, `['a', 1]`, `{'k': 'v'}`;
/// an undefined value prints nothing.
pub fn py_str(value: &Value, out: &mut String) -> Result<(), Error> {
    match value.kind() {
        ValueKind::Undefined => Ok(()),
        ValueKind::String => {
            out.push_str(value.as_str().unwrap_or_default());
            Ok(())
        }
        _ => py_repr(value, out, 0, &mut 0),
    }
}

/// `repr(value)`.
fn py_repr(value: &Value, out: &mut String, depth: usize, nodes: &mut usize) -> Result<(), Error> {
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    match value.kind() {
        ValueKind::Undefined => {}
        ValueKind::None => out.push_str("None"),
        ValueKind::Bool => out.push_str(if value.is_true() { "True" } else { "False" }),
        ValueKind::Number => number(value, out, false)?,
        ValueKind::String => repr_str(value.as_str().unwrap_or_default(), out),
        ValueKind::Map => {
            out.push('{');
            for (i, key) in value.try_iter()?.enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                check_size(out, nodes)?;
                py_repr(&key, out, depth + 1, nodes)?;
                out.push_str(": ");
                py_repr(&value.get_item(&key)?, out, depth + 1, nodes)?;
            }
            out.push('}');
        }
        ValueKind::Seq | ValueKind::Iterable => {
            out.push('[');
            for (i, item) in value.try_iter()?.enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                check_size(out, nodes)?;
                py_repr(&item, out, depth + 1, nodes)?;
            }
            out.push(']');
        }
        _ => {
            let _ = write!(out, "{value}");
        }
    }
    Ok(())
}

/// Stops text that grows past [`MAX_VALUE_BYTES`], or that prints more than
/// [`MAX_VALUE_ITEMS`] items (a list holding itself twice, nested, prints exponentially long).
fn check_size(out: &str, items: &mut usize) -> Result<(), Error> {
    *items += 1;
    if out.len() > MAX_VALUE_BYTES || *items > MAX_VALUE_ITEMS {
        return Err(
            Error::new(ErrorKind::InvalidOperation, "value size limit").with_source(TooLarge)
        );
    }
    Ok(())
}

/// The source of the error a value past the size bounds gives (found again by downcasting).
#[derive(Debug)]
pub(crate) struct TooLarge;

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a value larger than MAX_VALUE_BYTES or MAX_VALUE_ITEMS")
    }
}

impl std::error::Error for TooLarge {}

fn too_deep() -> Error {
    Error::new(ErrorKind::InvalidOperation, "value nested too deeply")
}

/// Python's `repr` of a string: single quotes unless the text holds `'` and no `"`.
fn repr_str(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_py_printable(c) => out.push(c),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push(quote);
}

/// An approximation of Python's `str.isprintable` (Unicode categories C* and Z* other than
/// the ASCII space are not printable): controls, line/paragraph separators, format
/// characters and unassigned planes are escaped.
fn is_py_printable(c: char) -> bool {
    let u = c as u32;
    !(u < 0x20
        || (0x7f..=0xa0).contains(&u)
        || u == 0xad
        || (0x2000..=0x200f).contains(&u)
        || (0x2028..=0x202f).contains(&u)
        || (0x205f..=0x206f).contains(&u)
        || u == 0x3000
        || u == 0xfeff
        || (0xd800..=0xdfff).contains(&u)
        || (0xe000..=0xf8ff).contains(&u)
        || (0xfff9..=0xfffb).contains(&u))
}

/// A number as Python prints it: integers in decimal, floats as `repr(float)` (`1.0`,
/// `1e+16`, `1.5e-05`, `inf`; `json` spells the last `Infinity`).
fn number(value: &Value, out: &mut String, json: bool) -> Result<(), Error> {
    if value.is_integer() {
        let _ = write!(out, "{value}");
        return Ok(());
    }
    let f = f64::try_from(value.clone())
        .map_err(|_| Error::new(ErrorKind::InvalidOperation, "not a number"))?;
    float(f, out, json);
    Ok(())
}

fn float(f: f64, out: &mut String, json: bool) {
    if f.is_nan() {
        out.push_str(if json { "NaN" } else { "nan" });
        return;
    }
    if f.is_infinite() {
        let sign = if f < 0.0 { "-" } else { "" };
        let _ = write!(out, "{sign}{}", if json { "Infinity" } else { "inf" });
        return;
    }
    // Rust's `{:e}` gives the shortest round-trip digits, as Python's repr does.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    out.push_str(sign);
    if (-4..16).contains(&exp) {
        if exp < 0 {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        } else {
            let point = exp as usize + 1;
            if digits.len() <= point {
                out.push_str(&digits);
                for _ in digits.len()..point {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
}

/// The arguments of Python's `json.dumps` that transformers' `tojson` passes on.
#[derive(Clone, Debug, Default)]
pub struct JsonOptions {
    /// Escape every non-ASCII character as `\uXXXX`.
    pub ensure_ascii: bool,
    /// Pretty-print with this indent (a number of spaces, or the string itself).
    pub indent: Option<String>,
    /// `(item separator, key separator)`; `None` is json.dumps' default.
    pub separators: Option<(String, String)>,
    /// Sort the keys of every mapping.
    pub sort_keys: bool,
}

/// `json.dumps(value, ...)` with Python's exact spacing, escapes and float forms.
pub fn json_dumps(value: &Value, opts: &JsonOptions, out: &mut String) -> Result<(), Error> {
    let (item, key) = match &opts.separators {
        Some((i, k)) => (i.as_str(), k.as_str()),
        None if opts.indent.is_some() => (",", ": "),
        None => (", ", ": "),
    };
    let seps = (item, key);
    json_value(value, opts, seps, 0, out, &mut 0)
}

fn json_value(
    value: &Value,
    opts: &JsonOptions,
    seps: (&str, &str),
    depth: usize,
    out: &mut String,
    nodes: &mut usize,
) -> Result<(), Error> {
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    check_size(out, nodes)?;
    if is_none(value) {
        out.push_str("null");
        return Ok(());
    }
    match value.kind() {
        ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number => number(value, out, true)?,
        ValueKind::String => json_str(value.as_str().unwrap_or_default(), opts.ensure_ascii, out),
        ValueKind::Map => {
            let mut keys: Vec<Value> = value.try_iter()?.collect();
            if opts.sort_keys {
                keys.sort();
            }
            json_container(keys.len(), opts, seps, depth, out, ('{', '}'), |i, out| {
                let key = &keys[i];
                match key.kind() {
                    ValueKind::String => {
                        json_str(key.as_str().unwrap_or_default(), opts.ensure_ascii, out)
                    }
                    // json.dumps turns scalar keys into strings.
                    ValueKind::None => out.push_str("\"null\""),
                    ValueKind::Bool => out.push_str(if key.is_true() {
                        "\"true\""
                    } else {
                        "\"false\""
                    }),
                    ValueKind::Number => {
                        out.push('"');
                        number(key, out, true)?;
                        out.push('"');
                    }
                    _ => return Err(not_serializable(key)),
                }
                out.push_str(seps.1);
                json_value(&value.get_item(key)?, opts, seps, depth + 1, out, nodes)
            })?;
        }
        // An iterable that is not a list is a Python generator or range: not serializable.
        ValueKind::Seq => {
            let items: Vec<Value> = value.try_iter()?.collect();
            json_container(items.len(), opts, seps, depth, out, ('[', ']'), |i, out| {
                json_value(&items[i], opts, seps, depth + 1, out, nodes)
            })?;
        }
        _ => return Err(not_serializable(value)),
    }
    Ok(())
}

fn not_serializable(value: &Value) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("Object of type {} is not JSON serializable", value.kind()),
    )
}

fn json_container(
    len: usize,
    opts: &JsonOptions,
    seps: (&str, &str),
    depth: usize,
    out: &mut String,
    (open, close): (char, char),
    mut item: impl FnMut(usize, &mut String) -> Result<(), Error>,
) -> Result<(), Error> {
    out.push(open);
    if len == 0 {
        out.push(close);
        return Ok(());
    }
    let newline = |out: &mut String, level: usize| {
        if let Some(indent) = &opts.indent {
            out.push('\n');
            for _ in 0..level {
                out.push_str(indent);
            }
        }
    };
    for i in 0..len {
        if i > 0 {
            out.push_str(seps.0);
        }
        newline(out, depth + 1);
        item(i, out)?;
    }
    newline(out, depth);
    out.push(close);
    Ok(())
}

fn json_str(s: &str, ensure_ascii: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if ensure_ascii && !c.is_ascii() => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f64) -> String {
        let mut s = String::new();
        float(x, &mut s, false);
        s
    }

    #[test]
    fn floats_print_as_python_repr() {
        // Expected strings are Python 3's repr() of the same floats.
        assert_eq!(f(1.0), "1.0");
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(-2.5), "-2.5");
        assert_eq!(f(1e16), "1e+16");
        assert_eq!(f(123456789012345.0), "123456789012345.0");
        assert_eq!(f(1.5e-5), "1.5e-05");
        assert_eq!(f(0.0001), "0.0001");
        assert_eq!(f(1.2345e-7), "1.2345e-07");
        assert_eq!(f(3.0e100), "3e+100");
    }

    #[test]
    fn strings_repr_as_python() {
        let mut s = String::new();
        repr_str("it's", &mut s);
        assert_eq!(s, "\"it's\"");
        s.clear();
        repr_str("a'\"\n\u{1}é", &mut s);
        assert_eq!(s, "'a\\'\"\\n\\x01é'");
    }
}
