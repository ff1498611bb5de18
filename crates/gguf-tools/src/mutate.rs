//! The mutator (`gguf mutate`): from one file, one broken (or oddly valid) file per rule of
//! the validation table, each with the verdict the crate's validator gives it under every
//! profile ([`crate::fixtures::Verdict`]).
//!
//! Each [`Rule`] names the diagnostic codes it must provoke; [`Mutation::provokes_expected`]
//! checks the validator's verdict against that, so a rule that stops doing what it says is
//! caught. Rules that need a parsed file (re-encoding with [`GgufBuilder`], or patching a field
//! found through the document's spans) do not apply to a file that does not parse; `bad-magic`
//! and `version-4` apply to any file of at least 8 bytes.
//!
//! ```
//! use gguf_tools::{fixtures, mutate};
//!
//! let base = fixtures::minimal_llama();
//! let m = mutate::apply("duplicate-key", &base).expect("applies");
//! assert!(m.provokes_expected());
//! assert_eq!(m.verdict.expect(), "invalid");
//! let all = mutate::applicable(&base);
//! assert!(all.iter().all(|m| m.provokes_expected()));
//!
//! // A file that does not parse: only the header-field rules apply.
//! let names: Vec<_> = mutate::applicable(&fixtures::truncated_metadata())
//!     .iter()
//!     .map(|m| m.rule.name)
//!     .collect();
//! assert_eq!(names, ["bad-magic", "version-4"]);
//! ```

use crate::fixtures::Verdict;
use gguf_grammar::grammar::align_up;
use gguf_grammar::grammar::value::ElementType;
use gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_grammar::{Endian, GgmlType, Gguf, Value, ValueType, Version};

/// One way to break a file.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// Stable name, e.g. `duplicate-key`.
    pub name: &'static str,
    /// What the rule does to the file.
    pub description: &'static str,
    /// The diagnostic codes the result must have (any one of them); empty: none at all
    /// (the mutation must stay accepted by every profile).
    pub expects: &'static [&'static str],
    apply: fn(&Input<'_>) -> Option<Vec<u8>>,
}

/// A mutated file and what the validator says about it.
#[derive(Clone, Debug)]
pub struct Mutation {
    /// The rule applied.
    pub rule: &'static Rule,
    /// The mutated file.
    pub bytes: Vec<u8>,
    /// The validator's verdict on it.
    pub verdict: Verdict,
    /// Whether every profile accepted the file before the mutation. Only then does the rule's
    /// expectation hold: a mutation can fix an error the file had, or be hidden by it.
    pub source_valid: bool,
}

impl Mutation {
    /// Whether a mutation of a valid file misses the diagnostic its rule names: the rule and
    /// the validator disagree. (Mutations of invalid files are not judged.)
    pub fn disagrees(&self) -> bool {
        self.source_valid && !self.provokes_expected()
    }

    /// Whether the verdict has one of the codes the rule expects (or, for a rule that expects
    /// none, whether every profile accepts it).
    pub fn provokes_expected(&self) -> bool {
        if self.rule.expects.is_empty() {
            self.verdict.expect() == "valid"
        } else {
            self.rule
                .expects
                .iter()
                .any(|code| self.verdict.codes.contains(code))
        }
    }
}

/// The file being mutated: its bytes and, when it parses, the document.
struct Input<'a> {
    bytes: &'a [u8],
    gguf: Option<Gguf<'a>>,
}

impl Rule {
    /// The mutated bytes, or `None` when the rule does not apply to `bytes`.
    pub fn apply(&'static self, bytes: &[u8]) -> Option<Mutation> {
        let input = Input {
            bytes,
            gguf: Gguf::parse(bytes).ok(),
        };
        let out = (self.apply)(&input)?;
        let source_valid = input.gguf.as_ref().is_some_and(|g| {
            let found = gguf_grammar::validate::diagnose(g, bytes.len() as u64);
            gguf_grammar::validate::accepts(&found, gguf_grammar::validate::Profile::Strict)
        });
        Some(Mutation {
            rule: self,
            verdict: Verdict::of(&out),
            bytes: out,
            source_valid,
        })
    }
}

/// Applies the rule named `name` to `bytes` (`None`: no such rule, or it does not apply).
pub fn apply(name: &str, bytes: &[u8]) -> Option<Mutation> {
    RULES.iter().find(|r| r.name == name)?.apply(bytes)
}

/// Every rule that applies to `bytes`, applied, in the order of [`RULES`].
pub fn applicable(bytes: &[u8]) -> Vec<Mutation> {
    RULES.iter().filter_map(|r| r.apply(bytes)).collect()
}

const fn rule(
    name: &'static str,
    description: &'static str,
    expects: &'static [&'static str],
    apply: fn(&Input<'_>) -> Option<Vec<u8>>,
) -> Rule {
    Rule {
        name,
        description,
        expects,
        apply,
    }
}

const CUT: &[&str] = &["truncated", "length-past-end"];

/// Every rule, in a fixed order.
pub static RULES: &[Rule] = &[
    rule("bad-magic", "the magic becomes \"GGML\"", &["bad-magic"], |i| {
        let mut out = at_least(i.bytes, 8)?.to_vec();
        out[..4].copy_from_slice(b"GGML");
        Some(out)
    }),
    rule("version-1", "re-encoded as GGUF v1 (u32 counts and lengths)", &["version-1"], |i| {
        rebuild(i, |b| {
            b.version(Version::V1);
        })
    }),
    rule("version-4", "the version field becomes 4 (in a file that starts with GGUF)", &["unsupported-version"], |i| {
        let mut out = at_least(i.bytes, 8)?.to_vec();
        out.starts_with(b"GGUF").then_some(())?;
        let four = match i.gguf.as_ref().map(|g| g.endian()) {
            Some(Endian::Big) => 4u32.to_be_bytes(),
            _ => 4u32.to_le_bytes(),
        };
        out[4..8].copy_from_slice(&four);
        Some(out)
    }),
    rule("byte-swap", "re-encoded in the other byte order (header and metadata)", &["big-endian"], |i| {
        let gguf = i.gguf.as_ref()?;
        (gguf.endian() == Endian::Little).then_some(())?;
        rebuild(i, |b| {
            b.endian(Endian::Big);
        })
    }),
    rule("truncate-first-kv", "cut in the middle of the first key/value", CUT, |i| {
        let g = i.gguf.as_ref()?;
        cut_inside(i.bytes, g, g.kvs.first()?.raw)
    }),
    rule("truncate-last-kv", "cut in the middle of the last key/value", CUT, |i| {
        let g = i.gguf.as_ref()?;
        cut_inside(i.bytes, g, g.kvs.last()?.raw)
    }),
    rule("truncate-first-tensor-info", "cut in the middle of the first tensor info", CUT, |i| {
        let g = i.gguf.as_ref()?;
        cut_inside(i.bytes, g, g.tensors.first()?.info.raw)
    }),
    rule("truncate-last-tensor-info", "cut in the middle of the last tensor info", CUT, |i| {
        let g = i.gguf.as_ref()?;
        cut_inside(i.bytes, g, g.tensors.last()?.info.raw)
    }),
    rule("duplicate-key", "the first key/value appended again", &["duplicate-key"], |i| {
        let first = i.gguf.as_ref()?.kvs.first()?;
        let (key, value) = (first.key.as_bytes().to_vec(), OwnedValue::from(first.value));
        rebuild(i, |b| {
            b.kv(key, value);
        })
    }),
    rule("empty-key", "a key/value with an empty key appended", &["empty-key"], |i| {
        rebuild(i, |b| {
            b.kv("", 0u32);
        })
    }),
    rule("key-reserved-by-gguf-py", "a key/value `GGUF.version` appended", &["key-reserved-by-gguf-py"], |i| {
        rebuild(i, |b| {
            b.kv("GGUF.version", 3u32);
        })
    }),
    rule("key-invalid-utf8", "a key with a byte 0xff appended", &["key-invalid-utf8"], |i| {
        rebuild(i, |b| {
            b.kv(b"general.\xff", 1u8);
        })
    }),
    rule("key-syntax", "a key `General Name` (not dotted lower_snake_case) appended", &["key-syntax"], |i| {
        rebuild(i, |b| {
            b.kv("General Name", "x");
        })
    }),
    rule("string-invalid-utf8", "a string value of bytes ff fe appended", &["string-invalid-utf8"], |i| {
        rebuild(i, |b| {
            b.kv("test.bytes", OwnedValue::string(b"\xff\xfe".to_vec()));
        })
    }),
    rule("bool-invalid", "a bool stored as the byte 2 appended", &["bool-invalid"], |i| {
        rebuild(i, |b| {
            b.kv("test.flag", OwnedValue::Bool(2));
        })
    }),
    rule("nested-array", "an array of arrays of u8 appended", &["array-nested"], |i| {
        rebuild(i, |b| {
            let inner = OwnedValue::array(ValueType::U8, [1u8, 2]);
            b.kv("test.nested", OwnedValue::array(ValueType::Array, [inner]));
        })
    }),
    rule("empty-array-type-13", "an empty array of element type 13 appended", &["array-type-unknown"], |i| {
        rebuild(i, |b| {
            b.kv("test.empty", OwnedValue::array(ElementType::Unknown(13), Vec::<OwnedValue>::new()));
        })
    }),
    rule("alignment-0", "general.alignment set to 0", &["alignment-zero"], |i| {
        rebuild(i, |b| {
            b.set("general.alignment", 0u32);
        })
    }),
    rule("alignment-3", "general.alignment set to 3", &["alignment-not-power-of-two"], |i| {
        rebuild(i, |b| {
            b.set("general.alignment", 3u32);
        })
    }),
    rule("alignment-u64", "general.alignment set to 32 as a uint64", &["alignment-type"], |i| {
        rebuild(i, |b| {
            b.set("general.alignment", 32u64);
        })
    }),
    rule("unknown-value-type", "the first key/value's type tag becomes 13", &["unknown-value-type"], |i| {
        let g = i.gguf.as_ref()?;
        let kv = g.kvs.first()?;
        let at = g.offset_of(kv.raw)? + g.header.ctx.count_width() + kv.key.as_bytes().len() as u64;
        patch(i.bytes, g, at, 13, 4)
    }),
    rule("string-length-past-end", "the first string value (not the file's last construct) claims one byte more than the file has left", &["length-past-end"], |i| {
        let g = i.gguf.as_ref()?;
        let kv = not_last(g, |v| matches!(v, Value::String(_)))?;
        let at = g.offset_of(kv.raw)? + g.header.ctx.count_width() + kv.key.as_bytes().len() as u64 + 4;
        let left = (i.bytes.len() as u64).checked_sub(at + g.header.ctx.count_width())?;
        patch(i.bytes, g, at, left + 1, g.header.ctx.count_width())
    }),
    rule("array-count-past-end", "the first array (not the file's last construct) claims more elements than the file has bytes left", &["length-past-end"], |i| {
        let g = i.gguf.as_ref()?;
        let kv = not_last(g, |v| matches!(v, Value::Array(_)))?;
        let at = g.offset_of(kv.raw)? + g.header.ctx.count_width() + kv.key.as_bytes().len() as u64 + 8;
        let left = (i.bytes.len() as u64).checked_sub(at + g.header.ctx.count_width())?;
        patch(i.bytes, g, at, left + 1, g.header.ctx.count_width())
    }),
    rule("n-dims-5", "the first tensor gets 5 dims (trailing 1s)", &["too-many-dims"], |i| {
        i.gguf.as_ref()?.tensors.first()?;
        rebuild(i, |b| {
            let dims = &mut b.tensors[0].dims;
            dims.resize(5, 1);
        })
    }),
    rule("unknown-ggml-type", "the first tensor's type becomes 43 (past ggml's table)", &["tensor-type-unknown"], |i| {
        i.gguf.as_ref()?.tensors.first()?;
        rebuild(i, |b| b.tensors[0].ggml_type = GgmlType(GgmlType::COUNT))
    }),
    rule("removed-ggml-type", "the first tensor's type becomes 4 (q4_2, removed)", &["tensor-type-removed"], |i| {
        i.gguf.as_ref()?.tensors.first()?;
        rebuild(i, |b| b.tensors[0].ggml_type = GgmlType(4))
    }),
    rule("duplicate-tensor-name", "the last tensor renamed to the first's name", &["duplicate-tensor-name"], |i| {
        let g = i.gguf.as_ref()?;
        (g.tensors.len() >= 2).then_some(())?;
        let name = g.tensors[0].info.name.as_bytes().to_vec();
        rebuild(i, |b| b.tensors.last_mut().map_or((), |t| t.name = name))
    }),
    rule("tensor-name-too-long", "the first tensor renamed to 64 bytes", &["tensor-name-too-long"], |i| {
        i.gguf.as_ref()?.tensors.first()?;
        rebuild(i, |b| b.tensors[0].name = vec![b'x'; 64])
    }),
    rule("offset-gap", "the last tensor moved one alignment further (the file grows to hold it)", &["tensor-offset-not-sequential"], |i| {
        let g = i.gguf.as_ref()?;
        let last = g.tensors.last()?;
        // The file grows by one alignment: only up to the writer's cap, never by a file value.
        (g.alignment <= gguf_grammar::write::MAX_ALIGNMENT).then_some(())?;
        let mut out = patch_offset(i.bytes, g, last, last.info.offset.checked_add(g.alignment)?)?;
        out.resize(out.len() + usize::try_from(g.alignment).ok()?, 0);
        Some(out)
    }),
    rule("offset-overlap", "the last tensor moved onto the first (which has data)", &["tensor-offset-not-sequential"], |i| {
        let g = i.gguf.as_ref()?;
        (g.tensors.len() >= 2).then_some(())?;
        let (first, last) = (&g.tensors[0], g.tensors.last()?);
        (first.n_bytes? > 0 && first.info.offset != last.info.offset).then_some(())?;
        patch_offset(i.bytes, g, last, g.tensors[0].info.offset)
    }),
    rule("tensor-past-eof", "the last tensor moved to the end of the file", &["tensor-data-past-eof"], |i| {
        let g = i.gguf.as_ref()?;
        let last = g.tensors.last()?;
        let end = (i.bytes.len() as u64).checked_sub(g.tensor_data_offset)?;
        patch_offset(i.bytes, g, last, align_up(end, g.alignment)?)
    }),
    rule("trailing-bytes", "7 bytes appended after the end (a note: no reference rejects a valid file for it)", &[], |i| {
        i.gguf.as_ref()?;
        let mut out = i.bytes.to_vec();
        out.extend_from_slice(b"\0garbag");
        Some(out)
    }),
];

fn at_least(bytes: &[u8], n: usize) -> Option<&[u8]> {
    (bytes.len() >= n).then_some(bytes)
}

/// The file re-encoded with `edit` applied to its builder (tensor data kept).
fn rebuild(i: &Input<'_>, edit: impl FnOnce(&mut GgufBuilder<'_>)) -> Option<Vec<u8>> {
    let mut b = GgufBuilder::from_gguf(i.gguf.as_ref()?);
    edit(&mut b);
    b.build().ok()
}

/// The file cut in the middle of `part` (a construct's bytes).
fn cut_inside(bytes: &[u8], g: &Gguf<'_>, part: &[u8]) -> Option<Vec<u8>> {
    let start = usize::try_from(g.offset_of(part)?).ok()?;
    Some(bytes[..start + part.len() / 2].to_vec())
}

/// The first key/value whose value matches and after which the file has more constructs.
fn not_last<'g, 'a>(
    g: &'g Gguf<'a>,
    wanted: fn(&Value<'a>) -> bool,
) -> Option<&'g gguf_grammar::Kv<'a>> {
    let n = g.kvs.len();
    g.kvs
        .iter()
        .enumerate()
        .find(|(k, kv)| wanted(&kv.value) && (k + 1 < n || !g.tensors.is_empty()))
        .map(|(_, kv)| kv)
}

/// `bytes` with the `width`-byte field at `at` set to `value` in the file's byte order.
fn patch(bytes: &[u8], g: &Gguf<'_>, at: u64, value: u64, width: u64) -> Option<Vec<u8>> {
    let at = usize::try_from(at).ok()?;
    let width = usize::try_from(width).ok()?;
    let field = match g.endian() {
        Endian::Little => value.to_le_bytes()[..width].to_vec(),
        Endian::Big => value.to_be_bytes()[8 - width..].to_vec(),
    };
    let mut out = bytes.to_vec();
    out.get_mut(at..at + width)?.copy_from_slice(&field);
    Some(out)
}

/// `bytes` with the tensor's relative offset (the last 8 bytes of its info) set to `offset`.
fn patch_offset(
    bytes: &[u8],
    g: &Gguf<'_>,
    tensor: &gguf_grammar::Tensor<'_>,
    offset: u64,
) -> Option<Vec<u8>> {
    let raw = tensor.info.raw;
    let at = g.offset_of(raw)? + raw.len() as u64 - 8;
    patch(bytes, g, at, offset, 8)
}

impl Mutation {
    /// This mutation's line of a `manifest.json`: [`Verdict::json`] with the rule's name and
    /// expected codes first: `{"rule", "expects", "file", "size", "sha256", "expect",
    /// "profiles", "schema", "codes", "error"}`, `file` being the name it is written under.
    pub fn manifest_entry(&self, file: &str) -> String {
        let verdict = self.verdict.json(file, &self.bytes);
        let expects: Vec<String> = self
            .rule
            .expects
            .iter()
            .map(|c| format!("\"{c}\""))
            .collect();
        format!(
            "{{\"rule\": \"{}\", \"expects\": [{}], {}",
            self.rule.name,
            expects.join(", "),
            &verdict[1..]
        )
    }
}
