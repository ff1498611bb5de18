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

use std::io::{self, Write};

use crate::render::json;
use gguf_grammar::escape::terminal;
use gguf_grammar::grammar::string::GgufStr;
use gguf_grammar::grammar::value::Value;
use gguf_grammar::{Gguf, Kv, Tensor};

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
    let mut diff = Diff::default();
    let _ = for_each_change(a, b, offsets, |section, change| {
        match section {
            Section::Keys => diff.keys.push(change),
            Section::Tensors => diff.tensors.push(change),
        }
        Ok::<(), std::convert::Infallible>(())
    });
    diff
}

/// The list a [`Change`] belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// [`Diff::keys`].
    Keys,
    /// [`Diff::tensors`].
    Tensors,
}

/// The changes [`compare_with`] finds, handed to `found` one at a time in its order (keys,
/// then tensors) and kept nowhere: beyond the two parsed headers, memory is a few words per
/// key and tensor. An error from `found` ends the comparison.
pub fn for_each_change<E>(
    a: &Gguf<'_>,
    b: &Gguf<'_>,
    offsets: bool,
    mut found: impl FnMut(Section, Change) -> Result<(), E>,
) -> Result<(), E> {
    fn change(
        name: (&[u8], usize),
        old: Option<String>,
        new: Option<String>,
        detail: Option<String>,
    ) -> Change {
        Change {
            name: shown(name),
            old,
            new,
            detail,
        }
    }
    each_pair(&a.kvs, &b.kvs, kv_key, |name, x, y| {
        let (x, y) = (x.map(|kv| kv.value), y.map(|kv| kv.value));
        match (x, y) {
            (Some(x), Some(y)) if same(x, y) => Ok(()),
            (Some(x), Some(y)) => found(
                Section::Keys,
                change(name, Some(summary(x)), Some(summary(y)), array_detail(x, y)),
            ),
            (x, y) => found(
                Section::Keys,
                change(name, x.map(summary), y.map(summary), None),
            ),
        }
    })?;
    each_pair(&a.tensors, &b.tensors, tensor_name, |name, x, y| {
        let describe = |t: &Tensor<'_>| descriptor(t, offsets);
        let (x, y) = (x.map(describe), y.map(describe));
        match x == y {
            true => Ok(()),
            false => found(Section::Tensors, change(name, x, y, None)),
        }
    })
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
    let mut found = Vec::new();
    each_pair(a, b, first, |name, x, y| {
        if let (Some((_, x)), Some((_, y))) = (x, y) {
            if differ(x, y)? {
                found.push(shown(name));
            }
        }
        Ok(())
    })?;
    Ok(found)
}

/// Matches the items of `a` and `b` by name and occurrence (the k-th item of a name in `a`
/// with the k-th of that name in `b`) and calls `visit` with each item of `a` in order and
/// its match in `b` if any, then with each item of `b` that has none, in order; each with
/// its name and occurrence (from 0). The matching sorts indices by name (a stable sort keeps
/// each name's occurrences in order): a few words per item, no name copied.
fn each_pair<X, E>(
    a: &[X],
    b: &[X],
    name: fn(&X) -> &[u8],
    mut visit: impl FnMut((&[u8], usize), Option<&X>, Option<&X>) -> Result<(), E>,
) -> Result<(), E> {
    let sorted = |items: &[X]| {
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.sort_by(|&x, &y| name(&items[x]).cmp(name(&items[y])));
        order
    };
    let occurrences = |items: &[X], order: &[usize]| {
        let mut occurrence = vec![0; items.len()];
        for pair in order.windows(2) {
            if name(&items[pair[0]]) == name(&items[pair[1]]) {
                occurrence[pair[1]] = occurrence[pair[0]] + 1;
            }
        }
        occurrence
    };
    let (a_order, b_order) = (sorted(a), sorted(b));
    let (a_occurrence, b_occurrence) = (occurrences(a, &a_order), occurrences(b, &b_order));
    let mut partner: Vec<Option<usize>> = vec![None; a.len()];
    let mut matched = vec![false; b.len()];
    let (mut i, mut j) = (0, 0);
    while let (Some(&x), Some(&y)) = (a_order.get(i), b_order.get(j)) {
        let by_name = name(&a[x]).cmp(name(&b[y]));
        match by_name.then(a_occurrence[x].cmp(&b_occurrence[y])) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                partner[x] = Some(y);
                matched[y] = true;
                (i, j) = (i + 1, j + 1);
            }
        }
    }
    drop((a_order, b_order));
    for (x, item) in a.iter().enumerate() {
        let other = partner[x].map(|y| &b[y]);
        visit((name(item), a_occurrence[x]), Some(item), other)?;
    }
    for (y, item) in b.iter().enumerate() {
        if !matched[y] {
            visit((name(item), b_occurrence[y]), None, Some(item))?;
        }
    }
    Ok(())
}

fn kv_key<'k>(kv: &'k Kv<'_>) -> &'k [u8] {
    kv.key.as_bytes()
}

fn tensor_name<'t>(t: &'t Tensor<'_>) -> &'t [u8] {
    t.info.name.as_bytes()
}

fn first<'p, T>(pair: &'p (&[u8], T)) -> &'p [u8] {
    pair.0
}

/// A name as shown in a change: the name, and which occurrence after the first.
fn shown((name, n): (&[u8], usize)) -> String {
    match n {
        0 => GgufStr(name).lossy(),
        n => format!("{} (occurrence {})", GgufStr(name).lossy(), n + 1),
    }
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
    for (section, list) in [
        (Section::Keys, &diff.keys),
        (Section::Tensors, &diff.tensors),
    ] {
        list.iter()
            .try_for_each(|c| write_text_change(section, c, out))?;
    }
    diff.data
        .iter()
        .try_for_each(|name| write_text_data(name, out))
}

/// The line of one change in [`write_text`].
pub fn write_text_change(section: Section, c: &Change, out: &mut impl Write) -> io::Result<()> {
    let what = match section {
        Section::Keys => "key",
        Section::Tensors => "tensor",
    };
    let (verb, body) = match (&c.old, &c.new) {
        (Some(old), Some(new)) => ("changed", format!("{old} -> {new}")),
        (Some(old), None) => ("removed", old.clone()),
        (None, Some(new)) => ("added", new.clone()),
        (None, None) => return Ok(()),
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
    writeln!(out)
}

/// The line of a tensor whose data differs in [`write_text`].
pub fn write_text_data(name: &str, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{:<14} {}", "data differs", terminal(name.as_bytes()))
}

/// `{"equal": BOOL, "keys": [CHANGE...], "tensors": [CHANGE...], "data": [NAME...]}`, each
/// change `{"name", "change": "added"|"removed"|"changed", "old", "new", "detail"}` (absent
/// parts null).
pub fn write_json(diff: &Diff, out: &mut impl Write) -> io::Result<()> {
    let mut json = JsonWriter::start(diff.is_empty(), out)?;
    for (section, list) in [
        (Section::Keys, &diff.keys),
        (Section::Tensors, &diff.tensors),
    ] {
        list.iter().try_for_each(|c| json.change(section, c))?;
    }
    json.finish(&diff.data)
}

/// [`write_json`] a change at a time, for changes that are not kept: [`JsonWriter::start`]
/// (whether the models are equal must be known first), [`JsonWriter::change`] for each change
/// in [`for_each_change`]'s order, [`JsonWriter::finish`] with the tensors whose data differ.
#[derive(Debug)]
pub struct JsonWriter<'w, W> {
    out: &'w mut W,
    section: Section,
    first: bool,
}

impl<'w, W: Write> JsonWriter<'w, W> {
    /// Writes the document's start.
    pub fn start(equal: bool, out: &'w mut W) -> io::Result<Self> {
        write!(out, "{{\"equal\": {equal}, \"keys\": [")?;
        Ok(JsonWriter {
            out,
            section: Section::Keys,
            first: true,
        })
    }

    /// Writes one change (its section after those of earlier ones).
    pub fn change(&mut self, section: Section, c: &Change) -> io::Result<()> {
        let out = &mut *self.out;
        if section != self.section {
            out.write_all(b"], \"tensors\": [")?;
            (self.section, self.first) = (Section::Tensors, true);
        }
        let change = match (&c.old, &c.new) {
            (Some(_), Some(_)) => "changed",
            (Some(_), None) => "removed",
            _ => "added",
        };
        out.write_all(match std::mem::take(&mut self.first) {
            true => b"{\"name\": ",
            false => b", {\"name\": ",
        })?;
        text(&c.name, out)?;
        write!(out, ", \"change\": \"{change}\", \"old\": ")?;
        optional(&c.old, out)?;
        out.write_all(b", \"new\": ")?;
        optional(&c.new, out)?;
        out.write_all(b", \"detail\": ")?;
        optional(&c.detail, out)?;
        out.write_all(b"}")
    }

    /// Writes the tensors whose data differ and the document's end.
    pub fn finish(self, data: &[String]) -> io::Result<()> {
        let out = self.out;
        if self.section == Section::Keys {
            out.write_all(b"], \"tensors\": [")?;
        }
        out.write_all(b"], \"data\": [")?;
        for (i, name) in data.iter().enumerate() {
            if i > 0 {
                out.write_all(b", ")?;
            }
            text(name, out)?;
        }
        out.write_all(b"]}\n")
    }
}

fn text(s: &str, out: &mut impl Write) -> io::Result<()> {
    json::string(GgufStr(s.as_bytes()), out)
}

fn optional(s: &Option<String>, out: &mut impl Write) -> io::Result<()> {
    match s {
        Some(s) => text(s, out),
        None => out.write_all(b"null"),
    }
}
