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
//! use gguf_testkit::{fixtures, mutate};
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
use gguf_grammar::summary::{arch_key, keys};
use gguf_grammar::validate::Code;
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
    pub expects: &'static [Code],
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
            self.rule.expects.iter().any(|code| {
                self.verdict.codes.contains(code) || self.verdict.schema_codes.contains(code)
            })
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
    expects: &'static [Code],
    apply: fn(&Input<'_>) -> Option<Vec<u8>>,
) -> Rule {
    Rule {
        name,
        description,
        expects,
        apply,
    }
}

const CUT: &[Code] = &[
    gguf_grammar::validate::codes::TRUNCATED,
    gguf_grammar::validate::codes::LENGTH_PAST_END,
];

/// Every rule, in a fixed order.
pub static RULES: &[Rule] = &[
    rule("bad-magic", "the magic becomes \"GGML\"", &[gguf_grammar::validate::codes::BAD_MAGIC], |i| {
        let mut out = at_least(i.bytes, 8)?.to_vec();
        out[..4].copy_from_slice(b"GGML");
        Some(out)
    }),
    rule("version-1", "re-encoded as GGUF v1 (u32 counts and lengths)", &[gguf_grammar::validate::codes::VERSION_1], |i| {
        rebuild(i, |b| {
            b.version(Version::V1);
        })
    }),
    rule("version-4", "the version field becomes 4 (in a file that starts with GGUF)", &[gguf_grammar::validate::codes::UNSUPPORTED_VERSION], |i| {
        let mut out = at_least(i.bytes, 8)?.to_vec();
        out.starts_with(b"GGUF").then_some(())?;
        let four = match i.gguf.as_ref().map(|g| g.endian()) {
            Some(Endian::Big) => 4u32.to_be_bytes(),
            _ => 4u32.to_le_bytes(),
        };
        out[4..8].copy_from_slice(&four);
        Some(out)
    }),
    rule("byte-swap", "re-encoded in the other byte order (header and metadata)", &[gguf_grammar::validate::codes::BIG_ENDIAN], |i| {
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
    rule("duplicate-key", "the first key/value appended again", &[gguf_grammar::validate::codes::DUPLICATE_KEY], |i| {
        let first = i.gguf.as_ref()?.kvs.first()?;
        let (key, value) = (first.key.as_bytes().to_vec(), OwnedValue::from(first.value));
        rebuild(i, |b| {
            b.kv(key, value);
        })
    }),
    rule("empty-key", "a key/value with an empty key appended", &[gguf_grammar::validate::codes::EMPTY_KEY], |i| {
        rebuild(i, |b| {
            b.kv("", 0u32);
        })
    }),
    rule("key-reserved-by-gguf-py", "a key/value `GGUF.version` appended", &[gguf_grammar::validate::codes::KEY_RESERVED_BY_GGUF_PY], |i| {
        rebuild(i, |b| {
            b.kv("GGUF.version", 3u32);
        })
    }),
    rule("key-invalid-utf8", "a key with a byte 0xff appended", &[gguf_grammar::validate::codes::KEY_INVALID_UTF8], |i| {
        rebuild(i, |b| {
            b.kv(b"general.\xff", 1u8);
        })
    }),
    rule("key-syntax", "a key `General Name` (not dotted lower_snake_case) appended", &[gguf_grammar::validate::codes::KEY_SYNTAX], |i| {
        rebuild(i, |b| {
            b.kv("General Name", "x");
        })
    }),
    rule("string-invalid-utf8", "a string value of bytes ff fe appended", &[gguf_grammar::validate::codes::STRING_INVALID_UTF8], |i| {
        rebuild(i, |b| {
            b.kv("test.bytes", OwnedValue::string(b"\xff\xfe".to_vec()));
        })
    }),
    rule("bool-invalid", "a bool stored as the byte 2 appended", &[gguf_grammar::validate::codes::BOOL_INVALID], |i| {
        rebuild(i, |b| {
            b.kv("test.flag", OwnedValue::Bool(2));
        })
    }),
    rule("nested-array", "an array of arrays of u8 appended", &[gguf_grammar::validate::codes::ARRAY_NESTED], |i| {
        rebuild(i, |b| {
            let inner = OwnedValue::array(ValueType::U8, [1u8, 2]);
            b.kv("test.nested", OwnedValue::array(ValueType::Array, [inner]));
        })
    }),
    rule("empty-array-type-13", "an empty array of element type 13 appended", &[gguf_grammar::validate::codes::ARRAY_TYPE_UNKNOWN], |i| {
        rebuild(i, |b| {
            b.kv("test.empty", OwnedValue::array(ElementType::Unknown(13), Vec::<OwnedValue>::new()));
        })
    }),
    rule("alignment-0", "general.alignment set to 0", &[gguf_grammar::validate::codes::ALIGNMENT_ZERO], |i| {
        rebuild(i, |b| {
            b.set("general.alignment", 0u32);
        })
    }),
    rule("alignment-3", "general.alignment set to 3", &[gguf_grammar::validate::codes::ALIGNMENT_NOT_POWER_OF_TWO], |i| {
        rebuild(i, |b| {
            b.set("general.alignment", 3u32);
        })
    }),
    rule("alignment-u64", "general.alignment set to 32 as a uint64", &[gguf_grammar::validate::codes::ALIGNMENT_TYPE], |i| {
        rebuild(i, |b| {
            b.set("general.alignment", 32u64);
        })
    }),
    rule("unknown-value-type", "the first key/value's type tag becomes 13", &[gguf_grammar::validate::codes::UNKNOWN_VALUE_TYPE], |i| {
        let g = i.gguf.as_ref()?;
        let kv = g.kvs.first()?;
        let at = g.offset_of(kv.raw)? + g.header.ctx.count_width() + kv.key.as_bytes().len() as u64;
        patch(i.bytes, g, at, 13, 4)
    }),
    rule("string-length-past-end", "the first string value (not the file's last construct) claims one byte more than the file has left", &[gguf_grammar::validate::codes::LENGTH_PAST_END], |i| {
        let g = i.gguf.as_ref()?;
        let kv = not_last(g, |v| matches!(v, Value::String(_)))?;
        let at = g.offset_of(kv.raw)? + g.header.ctx.count_width() + kv.key.as_bytes().len() as u64 + 4;
        let left = (i.bytes.len() as u64).checked_sub(at + g.header.ctx.count_width())?;
        patch(i.bytes, g, at, left + 1, g.header.ctx.count_width())
    }),
    rule("array-count-past-end", "the first array (not the file's last construct) claims more elements than the file has bytes left", &[gguf_grammar::validate::codes::LENGTH_PAST_END], |i| {
        let g = i.gguf.as_ref()?;
        let kv = not_last(g, |v| matches!(v, Value::Array(_)))?;
        let at = g.offset_of(kv.raw)? + g.header.ctx.count_width() + kv.key.as_bytes().len() as u64 + 8;
        let left = (i.bytes.len() as u64).checked_sub(at + g.header.ctx.count_width())?;
        patch(i.bytes, g, at, left + 1, g.header.ctx.count_width())
    }),
    rule("n-dims-5", "the first tensor gets 5 dims (trailing 1s)", &[gguf_grammar::validate::codes::TOO_MANY_DIMS], |i| {
        i.gguf.as_ref()?.tensors.first()?;
        rebuild(i, |b| {
            let dims = &mut b.tensors[0].dims;
            dims.resize(5, 1);
        })
    }),
    rule("unknown-ggml-type", "the first tensor's type becomes 43 (past ggml's table)", &[gguf_grammar::validate::codes::TENSOR_TYPE_UNKNOWN], |i| {
        i.gguf.as_ref()?.tensors.first()?;
        rebuild(i, |b| b.tensors[0].ggml_type = GgmlType(GgmlType::COUNT))
    }),
    rule("removed-ggml-type", "the first tensor's type becomes 4 (q4_2, removed)", &[gguf_grammar::validate::codes::TENSOR_TYPE_REMOVED], |i| {
        i.gguf.as_ref()?.tensors.first()?;
        rebuild(i, |b| b.tensors[0].ggml_type = GgmlType(4))
    }),
    rule("duplicate-tensor-name", "the last tensor renamed to the first's name", &[gguf_grammar::validate::codes::DUPLICATE_TENSOR_NAME], |i| {
        let g = i.gguf.as_ref()?;
        (g.tensors.len() >= 2).then_some(())?;
        let name = g.tensors[0].info.name.as_bytes().to_vec();
        rebuild(i, |b| b.tensors.last_mut().map_or((), |t| t.name = name))
    }),
    rule("tensor-name-too-long", "the first tensor renamed to 64 bytes", &[gguf_grammar::validate::codes::TENSOR_NAME_TOO_LONG], |i| {
        i.gguf.as_ref()?.tensors.first()?;
        rebuild(i, |b| b.tensors[0].name = vec![b'x'; 64])
    }),
    rule("offset-gap", "the last tensor moved one alignment further (the file grows to hold it)", &[gguf_grammar::validate::codes::TENSOR_OFFSET_NOT_SEQUENTIAL], |i| {
        let g = i.gguf.as_ref()?;
        let last = g.tensors.last()?;
        // The file grows by one alignment: only up to the writer's cap, never by a file value.
        (g.alignment <= gguf_grammar::write::MAX_ALIGNMENT).then_some(())?;
        let mut out = patch_offset(i.bytes, g, last, last.info.offset.checked_add(g.alignment)?)?;
        out.resize(out.len() + usize::try_from(g.alignment).ok()?, 0);
        Some(out)
    }),
    rule("offset-overlap", "the last tensor moved onto the first (which has data)", &[gguf_grammar::validate::codes::TENSOR_OFFSET_NOT_SEQUENTIAL], |i| {
        let g = i.gguf.as_ref()?;
        (g.tensors.len() >= 2).then_some(())?;
        let (first, last) = (&g.tensors[0], g.tensors.last()?);
        (first.n_bytes? > 0 && first.info.offset != last.info.offset).then_some(())?;
        patch_offset(i.bytes, g, last, g.tensors[0].info.offset)
    }),
    rule("tensor-past-eof", "the last tensor moved to the end of the file", &[gguf_grammar::validate::codes::TENSOR_DATA_PAST_EOF], |i| {
        let g = i.gguf.as_ref()?;
        let last = g.tensors.last()?;
        let end = (i.bytes.len() as u64).checked_sub(g.tensor_data_offset)?;
        patch_offset(i.bytes, g, last, align_up(end, g.alignment)?)
    }),
    // Model-level rules: each breaks one rule of llama.cpp's loader (the schema's codes).
    rule("block-count-0", "{arch}.block_count set to 0", &[gguf_llama::codes::SCHEMA_BLOCK_COUNT], |i| {
        let key = arch_key_of(i, keys::BLOCK_COUNT)?;
        rebuild(i, |b| {
            b.set(key, 0u32);
        })
    }),
    rule("tensor-missing", "the last tensor removed (the others keep their offsets)", &[gguf_llama::codes::SCHEMA_TENSOR_MISSING], |i| {
        known_model(i)?;
        (i.gguf.as_ref()?.tensors.len() >= 2).then_some(())?;
        rebuild(i, |b| {
            b.tensors.pop();
        })
    }),
    rule("tensor-shape", "the first matrix whose rows fit its type gets its dims swapped (same bytes)", &[gguf_llama::codes::SCHEMA_TENSOR_SHAPE], |i| {
        known_model(i)?;
        let g = i.gguf.as_ref()?;
        let at = g.tensors.iter().position(|t| {
            let dims = &t.info.dims;
            let block = t.info.ggml_type.block_size().unwrap_or(0);
            dims.len() == 2 && dims[0] != dims[1] && block > 0 && dims[1] % block == 0
        })?;
        rebuild(i, |b| b.tensors[at].dims.reverse())
    }),
    rule("key-missing", "{arch}.embedding_length removed", &[gguf_llama::codes::SCHEMA_KEY_MISSING], |i| {
        let key = known_key(i, keys::EMBEDDING_LENGTH)?;
        rebuild(i, |b| {
            b.remove(key);
        })
    }),
    rule("key-type", "{arch}.block_count stored as the string \"1\"", &[gguf_llama::codes::SCHEMA_KEY_TYPE], |i| {
        let key = known_key(i, keys::BLOCK_COUNT)?;
        rebuild(i, |b| {
            b.set(key, "1");
        })
    }),
    rule("key-type-u64", "{arch}.context_length stored as u64, its value kept (the specification's type; llama.cpp reads a u32)", &[gguf_llama::codes::SCHEMA_KEY_TYPE], |i| {
        let key = known_key(i, keys::CONTEXT_LENGTH)?;
        let n_ctx = i.gguf.as_ref()?.get_u64(&key).ok()?;
        rebuild(i, |b| {
            b.set(key, n_ctx);
        })
    }),
    rule("key-type-f64", "{arch}.attention.layer_norm_rms_epsilon stored as f64, its value kept (llama.cpp reads an f32)", &[gguf_llama::codes::SCHEMA_KEY_TYPE], |i| {
        let key = known_key(i, "{arch}.attention.layer_norm_rms_epsilon")?;
        let eps = i.gguf.as_ref()?.get(&key)?.as_f64()?;
        rebuild(i, |b| {
            b.set(key, eps);
        })
    }),
    rule("key-type-per-block-u64", "{arch}.attention.head_count stored as an array of u64, one per block, values kept (llama.cpp reads u32 or i32 arrays)", &[gguf_llama::codes::SCHEMA_KEY_TYPE], |i| {
        let g = i.gguf.as_ref()?;
        let key = known_key(i, keys::HEAD_COUNT)?;
        let n_head = g.get_u64(&key).ok()?;
        let n_layer = g.get_u64(&known_key(i, keys::BLOCK_COUNT)?).ok()?;
        // One element per block: a bounded count, since a fixture has few blocks.
        (n_layer <= 64).then_some(())?;
        rebuild(i, |b| {
            b.set(key, OwnedValue::array(ValueType::U64, (0..n_layer).map(|_| n_head)));
        })
    }),
    rule("heads-not-dividing", "{arch}.attention.head_count set to 3 (embedding_length not a multiple; not made when attention.key_length sets the head size)", &[gguf_llama::codes::SCHEMA_HEAD_COUNT], |i| {
        let embd = known_key(i, keys::EMBEDDING_LENGTH)?;
        let n_embd = i.gguf.as_ref()?.get_u64(&embd).ok()?;
        // With the head size given, head_count need not divide embedding_length (deepseek2).
        arch_key_of(i, keys::KEY_LENGTH).is_none().then_some(())?;
        (n_embd % 3 != 0).then_some(())?;
        let key = known_key(i, keys::HEAD_COUNT)?;
        rebuild(i, |b| {
            b.set(key, 3u32);
        })
    }),
    rule("kv-heads-not-dividing", "{arch}.attention.head_count_kv set to 3 (head_count not a multiple)", &[gguf_llama::codes::SCHEMA_HEAD_COUNT_KV], |i| {
        let heads = known_key(i, keys::HEAD_COUNT)?;
        let n_head = i.gguf.as_ref()?.get_u64(&heads).ok()?;
        (n_head % 3 != 0).then_some(())?;
        let key = known_key(i, keys::HEAD_COUNT_KV)?;
        rebuild(i, |b| {
            b.set(key, 3u32);
        })
    }),
    rule("architecture-unknown", "general.architecture set to \"llama9\"", &[gguf_llama::codes::SCHEMA_ARCHITECTURE_UNSUPPORTED], |i| {
        i.gguf.as_ref()?.architecture().ok()?;
        rebuild(i, |b| {
            b.set("general.architecture", "llama9");
        })
    }),
    rule("byte-tokens-missing", "a SentencePiece vocabulary's byte tokens <0xXX> renamed <0xXX>_", &[gguf_llama::codes::SCHEMA_BYTE_TOKENS], |i| {
        let g = i.gguf.as_ref()?;
        (g.get_str("tokenizer.ggml.model").ok()? == "llama").then_some(())?;
        let tokens = g.get_array("tokenizer.ggml.tokens").ok()?;
        let mut renamed = 0;
        let new: Vec<Vec<u8>> = tokens
            .iter()
            .map(|t| {
                let mut s = t.as_str().unwrap_or("").as_bytes().to_vec();
                if s.len() == 6 && s.starts_with(b"<0x") && s.ends_with(b">") {
                    s.push(b'_');
                    renamed += 1;
                }
                s
            })
            .collect();
        (renamed > 0).then_some(())?;
        let value = OwnedValue::array(ValueType::String, new.into_iter().map(OwnedValue::string));
        rebuild(i, |b| {
            b.set("tokenizer.ggml.tokens", value);
        })
    }),
    rule("special-token-past-vocab", "tokenizer.ggml.bos_token_id set to the vocabulary size (a warning: llama.cpp uses its default id)", &[gguf_llama::codes::SCHEMA_SPECIAL_TOKEN], |i| {
        let n = i.gguf.as_ref()?.get_array("tokenizer.ggml.tokens").ok()?.len() as u64;
        rebuild(i, |b| {
            b.set("tokenizer.ggml.bos_token_id", u32::try_from(n).unwrap_or(u32::MAX));
        })
    }),
    rule("tokenizer-pre-unknown", "a BPE vocabulary's tokenizer.ggml.pre set to \"no-such-pre\"", &[gguf_llama::codes::SCHEMA_TOKENIZER_PRE], |i| {
        (i.gguf.as_ref()?.get_str("tokenizer.ggml.model").ok()? == "gpt2").then_some(())?;
        rebuild(i, |b| {
            b.set("tokenizer.ggml.pre", "no-such-pre");
        })
    }),
    rule("trailing-bytes", "7 bytes appended after the end (a note: no reference rejects a valid file for it)", &[], |i| {
        i.gguf.as_ref()?;
        let mut out = i.bytes.to_vec();
        out.extend_from_slice(b"\0garbag");
        Some(out)
    }),
];

/// `{arch}.NAME` (`name` as in [`keys`]) for the file's architecture, when the file has it
/// and the schema's table knows the architecture (its keys and tensors are checked).
fn known_key(i: &Input<'_>, name: &str) -> Option<String> {
    let g = i.gguf.as_ref()?;
    gguf_llama::schema::Architecture::named(g.architecture().ok()?)?;
    arch_key_of(i, name)
}

/// Whether the schema's table knows the file's architecture, the file has tensors and the
/// schema accepts it (so that a missing or misshapen tensor is the one error).
fn known_model(i: &Input<'_>) -> Option<()> {
    use gguf_llama::schema;
    let g = i.gguf.as_ref()?;
    schema::Architecture::named(g.architecture().ok()?)?;
    (!g.tensors.is_empty() && schema::accepts_model(&schema::check_model(g))).then_some(())
}

/// `{arch}.NAME` (`name` as in [`keys`]) for the file's architecture, when the file has it.
fn arch_key_of(i: &Input<'_>, name: &str) -> Option<String> {
    let g = i.gguf.as_ref()?;
    let key = arch_key(name, g.architecture().ok()?);
    g.get(&key)?;
    Some(key)
}

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
