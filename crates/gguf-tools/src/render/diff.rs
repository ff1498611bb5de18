//! What differs between two models (`gguf diff`): key/values added, removed or changed,
//! tensor descriptors added, removed or changed, and optionally tensors whose bytes differ.
//!
//! Keys and tensors are matched by name and occurrence: the second key of a name in one
//! model with the second of that name in the other (a duplicate is then a change like any
//! other, named `NAME (occurrence 2)`), so the comparison does not depend on argument order. Values compare by type and
//! value, whatever the files' versions and byte orders (floats bit for bit); a changed array
//! is summarised by its lengths and the first index that differs.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use gguf_tools::render::diff;
//! use gguf_grammar::write::GgufBuilder;
//! use gguf_grammar::{Ctx, GgmlType, Gguf};
//!
//! let w = [0u8; 64];
//! let a = GgufBuilder::new(Ctx::V3_LE).kv("n", 1u32).kv("old", "x")
//!     .tensor("t", &[16], GgmlType::F32, &w).build()?;
//! let b = GgufBuilder::new(Ctx::V3_LE).kv("n", 2u32).kv("new", "y")
//!     .tensor("t", &[8, 2], GgmlType::F32, &w).build()?;
//! let d = diff::compare(&Gguf::parse(&a)?, &Gguf::parse(&b)?);
//! let mut text = Vec::new();
//! diff::write_text(&d, &mut text)?;
//! assert_eq!(String::from_utf8(text)?, "\
//! key changed    n: uint32 1 -> uint32 2
//! key removed    old: string \"x\"
//! key added      new: string \"y\"
//! tensor changed t: f32 [16] at 0 -> f32 [8, 2] at 0
//! ");
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::io::{self, Write};

use crate::render::json;
use gguf_grammar::escape::terminal;
use gguf_grammar::grammar::string::GgufStr;
use gguf_grammar::grammar::value::Value;
use gguf_grammar::{Gguf, Tensor};

/// Everything that differs; empty when the models are equal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diff {
    /// Key/values: removed and changed in the first model's order, then added.
    pub keys: Vec<Change>,
    /// Tensor descriptors, in the same order.
    pub tensors: Vec<Change>,
    /// Names of tensors in both whose bytes differ (filled by [`data_differences`]).
    pub data: Vec<String>,
}

/// One difference: `old` only when removed, `new` only when added, both when changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The key or tensor name (invalid UTF-8 as `\xNN`).
    pub name: String,
    /// The first model's value or descriptor, summarised.
    pub old: Option<String>,
    /// The second model's.
    pub new: Option<String>,
    /// For a changed array: lengths and the first index that differs.
    pub detail: Option<String>,
}

impl Diff {
    /// Whether nothing differs.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.tensors.is_empty() && self.data.is_empty()
    }
}

/// Compares the metadata and tensor descriptors (dims, type, relative offset) of `a` and `b`.
pub fn compare(a: &Gguf<'_>, b: &Gguf<'_>) -> Diff {
    compare_with(a, b, true)
}

/// [`compare`], with tensor offsets left out when `offsets` is false (for a shard set, whose
/// offsets are relative to each shard, against a single file).
pub fn compare_with(a: &Gguf<'_>, b: &Gguf<'_>, offsets: bool) -> Diff {
    let describe = |t: &&Tensor<'_>| descriptor(t, offsets);
    let keys = changes(
        a.kvs.iter().map(|kv| (kv.key.as_bytes(), kv.value)),
        b.kvs.iter().map(|kv| (kv.key.as_bytes(), kv.value)),
        |x, y| same(*x, *y),
        |v| summary(*v),
        |x, y| array_detail(*x, *y),
    );
    let tensors = changes(
        a.tensors.iter().map(|t| (t.info.name.as_bytes(), t)),
        b.tensors.iter().map(|t| (t.info.name.as_bytes(), t)),
        |x, y| describe(x) == describe(y),
        describe,
        |_, _| None,
    );
    Diff {
        keys,
        tensors,
        data: Vec::new(),
    }
}

/// Names of the tensors present in both `a` and `b` (pairs of a name and where its data
/// is) whose data `differ` says differ, in `a`'s order. Tensors are matched by name and
/// occurrence, as descriptors are. `differ` reads the data (from memory, or from files with
/// [`gguf_grammar::file_range::read_exact_at`]) and its error ends the comparison.
///
/// ```
/// use gguf_tools::render::diff::data_differences;
///
/// let a: [(&[u8], &[u8]); 2] = [(b"w", &[1, 2]), (b"v", &[3])];
/// let b: [(&[u8], &[u8]); 2] = [(b"v", &[3]), (b"w", &[1, 9])];
/// let same_size_and_differ = |x: &&[u8], y: &&[u8]| Ok::<_, ()>(x.len() == y.len() && x != y);
/// assert_eq!(data_differences(&a, &b, same_size_and_differ), Ok(vec!["w".to_string()]));
/// ```
pub fn data_differences<T, E>(
    a: &[(&[u8], T)],
    b: &[(&[u8], T)],
    mut differ: impl FnMut(&T, &T) -> Result<bool, E>,
) -> Result<Vec<String>, E> {
    let a = occurrences(a.iter().map(|(name, t)| (*name, t)));
    let theirs: HashMap<(&[u8], usize), &T> = occurrences(b.iter().map(|(name, t)| (*name, t)))
        .into_iter()
        .collect();
    let mut found = Vec::new();
    for (key, data) in a {
        if let Some(other) = theirs.get(&key) {
            if differ(data, other)? {
                found.push(shown(key));
            }
        }
    }
    Ok(found)
}

/// Each item keyed by its name and how many items of that name came before it.
fn occurrences<'x, T>(items: impl Iterator<Item = (&'x [u8], T)>) -> Vec<((&'x [u8], usize), T)> {
    let mut count: HashMap<&[u8], usize> = HashMap::new();
    items
        .map(|(name, item)| {
            let n = count.entry(name).or_default();
            *n += 1;
            ((name, *n - 1), item)
        })
        .collect()
}

/// A name as shown in a change: the name, and which occurrence after the first.
fn shown((name, n): (&[u8], usize)) -> String {
    match n {
        0 => GgufStr(name).lossy(),
        n => format!("{} (occurrence {})", GgufStr(name).lossy(), n + 1),
    }
}

fn changes<'x, T: 'x>(
    a: impl Iterator<Item = (&'x [u8], T)>,
    b: impl Iterator<Item = (&'x [u8], T)>,
    same: impl Fn(&T, &T) -> bool,
    show: impl Fn(&T) -> String,
    detail: impl Fn(&T, &T) -> Option<String>,
) -> Vec<Change> {
    let a = occurrences(a);
    let b = occurrences(b);
    let in_b: HashMap<(&[u8], usize), &T> = b.iter().map(|(key, item)| (*key, item)).collect();
    let in_a: HashMap<(&[u8], usize), ()> = a.iter().map(|(key, _)| (*key, ())).collect();
    let mut found = Vec::new();
    for (key, x) in &a {
        let change = |old, new, detail| Change {
            name: shown(*key),
            old,
            new,
            detail,
        };
        match in_b.get(key) {
            None => found.push(change(Some(show(x)), None, None)),
            Some(y) if !same(x, y) => {
                found.push(change(Some(show(x)), Some(show(y)), detail(x, y)))
            }
            Some(_) => {}
        }
    }
    for (key, y) in &b {
        if !in_a.contains_key(key) {
            found.push(Change {
                name: shown(*key),
                old: None,
                new: Some(show(y)),
                detail: None,
            });
        }
    }
    found
}

/// Equal type and value; floats bit for bit; arrays element by element.
fn same(a: Value<'_>, b: Value<'_>) -> bool {
    match (a, b) {
        (Value::F32(x), Value::F32(y)) => x.to_bits() == y.to_bits(),
        (Value::F64(x), Value::F64(y)) => x.to_bits() == y.to_bits(),
        (Value::Array(x), Value::Array(y)) => {
            x.element_type() == y.element_type()
                && x.len() == y.len()
                && x.iter().zip(y.iter()).all(|(p, q)| same(p, q))
        }
        _ => a == b,
    }
}

fn array_detail(a: Value<'_>, b: Value<'_>) -> Option<String> {
    let (Value::Array(x), Value::Array(y)) = (a, b) else {
        return None;
    };
    let first = x.iter().zip(y.iter()).position(|(p, q)| !same(p, q));
    let lengths = match x.len() == y.len() {
        true => format!("length {}", x.len()),
        false => format!("length {} -> {}", x.len(), y.len()),
    };
    Some(match first {
        Some(i) => format!("{lengths}, first difference at [{i}]"),
        None => format!("{lengths}, equal up to the shorter"),
    })
}

/// `type value` for scalars, `[type; length]` for arrays.
fn summary(value: Value<'_>) -> String {
    let ty = value.value_type();
    match value {
        Value::U8(v) => format!("{ty} {v}"),
        Value::I8(v) => format!("{ty} {v}"),
        Value::U16(v) => format!("{ty} {v}"),
        Value::I16(v) => format!("{ty} {v}"),
        Value::U32(v) => format!("{ty} {v}"),
        Value::I32(v) => format!("{ty} {v}"),
        Value::U64(v) => format!("{ty} {v}"),
        Value::I64(v) => format!("{ty} {v}"),
        Value::F32(v) => format!("{ty} {v:?}"),
        Value::F64(v) => format!("{ty} {v:?}"),
        Value::Bool(v) => format!(
            "{ty} {}",
            if v == 0 {
                "false".into()
            } else if v == 1 {
                "true".into()
            } else {
                format!("byte {v}")
            }
        ),
        Value::String(s) => format!("{ty} \"{}\"", s.lossy()),
        Value::Array(a) => format!("[{}; {}]", a.element_type(), a.len()),
    }
}

fn descriptor(t: &Tensor<'_>, offset: bool) -> String {
    let dims: Vec<String> = t.info.dims.iter().map(u64::to_string).collect();
    let described = format!("{} [{}]", t.info.ggml_type, dims.join(", "));
    match offset {
        true => format!("{described} at {}", t.info.offset),
        false => described,
    }
}

/// One line per difference: `key added|removed|changed NAME: OLD -> NEW`, the same for
/// tensors, and `data differs NAME`. Text from the files is escaped for the terminal.
pub fn write_text(diff: &Diff, out: &mut impl Write) -> io::Result<()> {
    for (what, list) in [("key", &diff.keys), ("tensor", &diff.tensors)] {
        for c in list {
            let (verb, body) = match (&c.old, &c.new) {
                (Some(old), Some(new)) => ("changed", format!("{old} -> {new}")),
                (Some(old), None) => ("removed", old.clone()),
                (None, Some(new)) => ("added", new.clone()),
                (None, None) => continue,
            };
            let label = format!("{what} {verb}");
            write!(
                out,
                "{label:<14} {}: {}",
                terminal(c.name.as_bytes()),
                terminal(body.as_bytes())
            )?;
            if let Some(detail) = &c.detail {
                write!(out, " ({detail})")?;
            }
            writeln!(out)?;
        }
    }
    for name in &diff.data {
        writeln!(out, "{:<14} {}", "data differs", terminal(name.as_bytes()))?;
    }
    Ok(())
}

/// `{"equal": BOOL, "keys": [CHANGE...], "tensors": [CHANGE...], "data": [NAME...]}`, each
/// change `{"name", "change": "added"|"removed"|"changed", "old", "new", "detail"}` (absent
/// parts null).
pub fn write_json(diff: &Diff, out: &mut impl Write) -> io::Result<()> {
    fn text(s: &str, out: &mut impl Write) -> io::Result<()> {
        json::string(GgufStr(s.as_bytes()), out)
    }
    fn optional(s: &Option<String>, out: &mut impl Write) -> io::Result<()> {
        match s {
            Some(s) => text(s, out),
            None => out.write_all(b"null"),
        }
    }
    write!(out, "{{\"equal\": {}", diff.is_empty())?;
    for (field, list) in [("keys", &diff.keys), ("tensors", &diff.tensors)] {
        write!(out, ", \"{field}\": [")?;
        for (i, c) in list.iter().enumerate() {
            let change = match (&c.old, &c.new) {
                (Some(_), Some(_)) => "changed",
                (Some(_), None) => "removed",
                _ => "added",
            };
            out.write_all(if i == 0 {
                b"{\"name\": "
            } else {
                b", {\"name\": "
            })?;
            text(&c.name, out)?;
            write!(out, ", \"change\": \"{change}\", \"old\": ")?;
            optional(&c.old, out)?;
            out.write_all(b", \"new\": ")?;
            optional(&c.new, out)?;
            out.write_all(b", \"detail\": ")?;
            optional(&c.detail, out)?;
            out.write_all(b"}")?;
        }
        out.write_all(b"]")?;
    }
    out.write_all(b", \"data\": [")?;
    for (i, name) in diff.data.iter().enumerate() {
        if i > 0 {
            out.write_all(b", ")?;
        }
        text(name, out)?;
    }
    out.write_all(b"]}\n")
}
