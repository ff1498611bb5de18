//! LLaMA-family schema checks: is a file really a model of its architecture, and is it
//! self-consistent? Judged from the metadata alone; tensor data is never touched.
//!
//! [`check_model`] applies, in this order:
//!
//! 1. **Keys** (`schema-key-missing`, `schema-key-type`): the `general.*` and `tokenizer.*` keys
//!    every file may have must have their types; an architecture in [`ARCHITECTURES`] adds its
//!    required and optional keys, each of the type llama.cpp reads it as: a count is a u32
//!    (a per-block count may be an array of u32 or i32), a float an f32; another integer or
//!    float width is refused with the loader's own "has wrong type" message.
//! 2. **Tokenizer** (`schema-token-count`, `schema-special-token`, `schema-token-type`,
//!    `schema-tokenizer-model`, `schema-merges-missing`): tokens, scores and token types have
//!    one length, equal to `{arch}.vocab_size` when present; special token ids name tokens;
//!    token types are llama.cpp's; the tokenizer model is one llama.cpp loads; `gpt2`
//!    tokenizers have merges.
//! 3. **General values** (`schema-file-type`, `schema-quantization-version`): known values.
//! 4. **Hyperparameters** of a known architecture (`schema-head-count`, `schema-head-count-kv`,
//!    `schema-rope-dimension`, `schema-expert-count`): head_count divides embedding_length
//!    (unless `attention.key_length` sets the head size), head_count_kv divides head_count
//!    (and equals it where the graph has no grouped-query attention),
//!    rope.dimension_count is at most the head size (and M-RoPE's sections fit it), expert
//!    counts agree; the vocabulary has
//!    the tokens the architecture's graph needs (`schema-token-count`: chameleon's 8196).
//! 5. **Tensor layout** of a known architecture (`schema-tensor-missing`, `schema-tensor-shape`,
//!    `schema-tensor-unexpected`, `schema-tensor-block-index`): every tensor is expected, with
//!    the shape the hyperparameters give, and every required one is present. A hyperparameter
//!    that breaks a rule of step 4 is not used to derive shapes, so one mistake gives one
//!    diagnostic. A file without tensors gets the note `schema-vocab-only` instead.
//!
//! A file whose architecture the release loads but the table does not model gets the warning
//! `schema-architecture-unknown` and steps 1 to 3 only. Every schema diagnostic is about models, not the container: its
//! `rejected_by` is empty, and all but the note `schema-vocab-only` and the two warnings
//! (`schema-architecture-unknown`, `schema-special-token`) are errors.
//!
//! Rules of llama.cpp's loader, of the release [`check_model_in`] is given
//! ([`Release::NEWEST`](crate::Release::NEWEST) for [`check_model`]), each naming that release
//! and what it says: `schema-architecture-unsupported` (not one of [`LLAMA_CPP_ARCHITECTURES`]
//! of the release: "unknown model architecture"; 0.3.36's `clip`: "CLIP cannot be used as main
//! model"), `schema-block-count` (0: it aborts in `llama_hparams::n_head`),
//! `schema-byte-tokens` (a SentencePiece vocabulary without the byte tokens its tokenizer falls
//! back to: `std::out_of_range` out of `llama_tokenize`), `schema-tokenizer-pre` (a BPE
//! pre-tokenizer not in [`PRE_TOKENIZERS`]), `schema-special-token-default` (a special
//! token whose id llama.cpp falls back to is outside the vocabulary: `vector::_M_range_check`
//! while loading); `schema-special-token` is a warning, as llama.cpp warns "bad special token"
//! and loads when its default id is in the vocabulary. `gguf check --profile llama.cpp` adds the
//! container rules of that llama.cpp's ggml (`ggml-0.3.36-data`, `ggml-0.3.16-data`) and rejects a vocabulary-only
//! file;
//! `scripts/check-llama-loader.sh` measures its agreement with llama.cpp.
//!
//! ```
//! use gguf_grammar::Gguf;
//! use gguf_llama::schema;
//!
//! // `gguf fixtures`' minimal llama, as tests/examples.rs checks.
//! let bytes = std::fs::read("../../tests/bundled/minimal-llama.gguf").unwrap();
//! let gguf = Gguf::parse(&bytes).unwrap();
//! assert!(schema::check_model(&gguf).is_empty());
//!
//! // The same model without its tensors: a vocabulary-only file.
//! let mut vocab_only = gguf_grammar::write::GgufBuilder::from_gguf(&gguf);
//! vocab_only.tensors.clear();
//! let bytes = vocab_only.build().unwrap();
//! let found = schema::check_model(&Gguf::parse(&bytes).unwrap());
//! assert_eq!(found.iter().map(|d| d.code).collect::<Vec<_>>(), ["schema-vocab-only"]);
//! ```

mod arch;
mod llama_cpp;
mod table;

pub use arch::*;
pub use llama_cpp::*;
pub use table::*;

use crate::codes;
use std::collections::{HashMap, HashSet};

use gguf_grammar::error::{ConstructPath, Segment};
use gguf_grammar::summary::{arch_key, count, keys, Hparams};
use gguf_grammar::validate::{At, Code, Diagnostic, Diagnostics, Severity};
use gguf_grammar::{Array, Gguf, Kv, Value, ValueType};

use crate::hparams::{get_key_or_arr, sliding_window, KeyOrArr};
use crate::Release;

/// Missing tensors reported one by one; the rest are counted in one more diagnostic.
pub const MISSING_SHOWN: u64 = 16;

/// The schema diagnostics about `gguf` under llama.cpp [`Release::NEWEST`], in the order of
/// the module documentation.
pub fn check_model(gguf: &Gguf<'_>) -> Vec<Diagnostic> {
    check_model_in(gguf, Release::NEWEST)
}

/// The schema diagnostics about `gguf` under llama.cpp `release`.
///
/// ```
/// use gguf_grammar::Gguf;
/// use gguf_llama::{schema, Release};
///
/// let bytes = std::fs::read("../../tests/bundled/minimal-llama.gguf").unwrap();
/// let gguf = Gguf::parse(&bytes).unwrap();
/// for &release in Release::ALL {
///     assert!(schema::check_model_in(&gguf, release).is_empty());
/// }
/// ```
pub fn check_model_in(gguf: &Gguf<'_>, release: Release) -> Vec<Diagnostic> {
    let arch_name = gguf.get("general.architecture").and_then(|v| v.as_str());
    let mut c = Checker::new(gguf, arch_name, release);
    let arch = arch_name.and_then(|name| Architecture::named_in(release, name));
    c.keys(arch_name, arch);
    let hp = Hparams::read_with(|key| c.value(key));
    c.tokenizer(&hp);
    c.general();
    if let Some(refusal) = arch_name.and_then(|name| architecture_refusal(release, name)) {
        c.push_kv(
            codes::SCHEMA_ARCHITECTURE_UNSUPPORTED,
            "general.architecture",
            format!(
                "the {} fails to load it: \"{refusal}\"{}",
                release.name(),
                arch_name.map_or(String::new(), |name| {
                    loaded_elsewhere(release, |r| loads_architecture(r, name))
                })
            ),
        );
    } else if let (Some(name), None) = (arch_name, arch) {
        c.push_kv(
            codes::SCHEMA_ARCHITECTURE_UNKNOWN,
            "general.architecture",
            format!(
                "architecture {name:?} loads in the {} but its schema is not modelled here: its keys, hyperparameters and tensors are unchecked",
                release.name()
            ),
        );
    }
    c.block_count(arch_name, arch);
    let shapes = arch.map(|arch| c.hparams(arch, &hp));
    if let (Some(arch), Some(shapes)) = (arch, &shapes) {
        c.head_size(arch, shapes);
    }
    if gguf.tensors.is_empty() {
        c.out.report(
            codes::SCHEMA_VOCAB_ONLY,
            At::default(),
            "no tensors: a vocabulary-only file (tokenizer and hyperparameters only)".into(),
        );
    } else if let (Some(arch), Some(shapes)) = (arch, shapes.filter(|s| !s.layers_broken)) {
        c.tensors(arch, &hp, &shapes);
    }
    c.out.finish()
}

/// The required tensors of `gguf`'s architecture with the shapes its hyperparameters give
/// (`ne0` first), in the table's order: each global tensor once, each block tensor for every
/// block it belongs to, with that block's shape (per-layer `head_count`, `head_count_kv` and
/// `feed_forward_length` arrays). `None` when the architecture is not in the table,
/// `block_count` is missing, a per-layer array has the wrong length, or a shape cannot be
/// derived. `gguf fixtures --arch` writes a tiny model's tensors from it.
///
/// ```
/// use gguf_grammar::Gguf;
/// use gguf_llama::schema;
///
/// let bytes = std::fs::read("../../tests/bundled/minimal-llama.gguf").unwrap();
/// let gguf = Gguf::parse(&bytes).unwrap();
/// let tensors = schema::required_tensors(&gguf).unwrap();
/// assert_eq!(tensors[0], ("token_embd.weight".to_string(), vec![32, 265]));
/// ```
pub fn required_tensors(gguf: &Gguf<'_>) -> Option<Vec<(String, Vec<u64>)>> {
    let arch_name = gguf.get("general.architecture").and_then(|v| v.as_str());
    let arch = Architecture::named(arch_name?)?;
    let mut c = Checker::new(gguf, arch_name, Release::NEWEST);
    let hp = Hparams::read_with(|key| c.value(key));
    let shapes = c.hparams(arch, &hp);
    if shapes.layers_broken {
        return None;
    }
    let n_layer = hp.block_count?;
    let mut out = Vec::new();
    for t in arch
        .tensors
        .iter()
        .flat_map(|g| g.iter())
        .filter(|t| t.required)
    {
        let shape = |block: Option<u64>| -> Option<Vec<u64>> {
            t.shape.iter().map(|&d| shapes.dim(d, block)).collect()
        };
        match t.scope {
            Scope::Global if shapes.applies(t.when, None) => {
                out.push((t.name.to_string(), shape(None)?));
            }
            Scope::Global => {}
            Scope::Block => {
                for block in (0..n_layer).filter(|&b| shapes.applies(t.when, Some(b))) {
                    out.push((block_tensor_name(block, t.name), shape(Some(block))?));
                }
            }
        }
    }
    Some(out)
}

/// Whether a file with these diagnostics passes the schema: none of them is a schema error
/// (a code starting with `schema-` and error severity; other diagnostics are ignored).
///
/// ```
/// use gguf_grammar::Gguf;
/// use gguf_llama::schema;
///
/// let bytes = std::fs::read("../../tests/bundled/minimal-llama.gguf").unwrap();
/// let mut gguf = Gguf::parse(&bytes).unwrap();
/// assert!(schema::accepts_model(&schema::check_model(&gguf)));
/// gguf.tensors.clear(); // vocabulary only: a note, not an error
/// assert!(schema::accepts_model(&schema::check_model(&gguf)));
/// ```
pub fn accepts_model(diagnostics: &[Diagnostic]) -> bool {
    !diagnostics
        .iter()
        .any(|d| d.code.name().starts_with("schema-") && d.severity == Severity::Error)
}

/// `; llama-cpp-python 0.3.36's llama.cpp loads it` when releases other than `release` load
/// what `loads` asks about, so that a name new (or gone) in another release says so.
fn loaded_elsewhere(release: Release, loads: impl Fn(Release) -> bool) -> String {
    let others: Vec<&str> = Release::ALL
        .iter()
        .filter(|&&r| r != release && loads(r))
        .map(|r| r.version())
        .collect();
    match others.as_slice() {
        [] => String::new(),
        versions => format!(
            "; the llama.cpp of llama-cpp-python {} loads it",
            versions.join(" and ")
        ),
    }
}

/// Whether `model` is a BPE vocabulary (`LLAMA_VOCAB_TYPE_BPE`) in llama.cpp `release`.
fn is_bpe_model(release: Release, model: &str) -> bool {
    matches!(model, "gpt2" | "hybriddna" | "whitespace" | "gemma4")
        && loads_tokenizer_model(release, model)
}

/// Whether `value` has type `ty`; for a count that is an integer, whether it is non-negative.
fn type_matches(value: Value<'_>, ty: KeyType) -> bool {
    let elements = |value: Value<'_>| value.as_array().and_then(|a| a.element_type().known());
    let integer = |t: ValueType| {
        matches!(
            t,
            ValueType::U8
                | ValueType::I8
                | ValueType::U16
                | ValueType::I16
                | ValueType::U32
                | ValueType::I32
                | ValueType::U64
                | ValueType::I64
        )
    };
    let float = |t: ValueType| matches!(t, ValueType::F32 | ValueType::F64);
    match ty {
        KeyType::Count => count(value).is_some(),
        KeyType::Float => float(value.value_type()),
        KeyType::Bool => value.value_type() == ValueType::Bool,
        KeyType::String => value.value_type() == ValueType::String,
        KeyType::Strings => elements(value) == Some(ValueType::String),
        KeyType::Floats => elements(value).is_some_and(float),
        KeyType::Integers => elements(value).is_some_and(integer),
        KeyType::Sections => match value {
            Value::Array(a) => {
                a.len() == 4
                    && matches!(
                        a.element_type().known(),
                        Some(ValueType::I32 | ValueType::U32)
                    )
            }
            v => v.value_type() == ValueType::I32,
        },
        KeyType::PerLayer => count(value).is_some() || elements(value).is_some_and(integer),
        KeyType::FloatPerLayer => float(value.value_type()) || elements(value).is_some_and(float),
    }
}

/// What llama.cpp's loader of `release` says of a key whose value passes [`type_matches`] but
/// is not the exact type it reads (`GKV<T>::get_kv` in `src/llama-model-loader.cpp`: a count
/// is read as `uint32_t`, a float as `float`, and a per-block array through `get_arr`, whose
/// accepted element types changed in 0.3.36). `general.quantization_version` is the one
/// count llama.cpp never reads. A simplification: 0.3.36 reads `{arch}.vocab_size` only for
/// a model without a vocabulary (`no_vocab`), yet it is asked to be a u32 in every release.
fn loader_type_refusal(
    release: Release,
    key: &str,
    value: Value<'_>,
    ty: KeyType,
) -> Option<String> {
    if key == "general.quantization_version" {
        return None;
    }
    let wanted = match ty {
        KeyType::Count | KeyType::PerLayer => ValueType::U32,
        KeyType::Float => ValueType::F32,
        _ => return None,
    };
    let Some(array) = value.as_array() else {
        let found = value.value_type();
        return (found != wanted).then(|| {
            format!(
                "key {key} has wrong type {} but expected type {}",
                found.short_name(),
                wanted.short_name()
            )
        });
    };
    let element = array.element_type().known()?;
    if ty != KeyType::PerLayer || matches!(element, ValueType::U32 | ValueType::I32) {
        return None;
    }
    Some(match (release, element) {
        (Release::LlamaCppPython0316, _) => {
            format!("{key} is not a string/float32/uint32/int32 array")
        }
        (_, ValueType::U64) => format!("{key} has wrong array element type u64"),
        _ => format!("{key} is not a string/float32/uint32/int32/uint64 array"),
    })
}

/// How a value's type is named in diagnostics: `uint32`, `int32 -1`, `array of float32`.
fn describe(value: Value<'_>) -> String {
    match value {
        Value::Array(a) => format!("array of {}", a.element_type()),
        v if v.as_i64().is_some_and(|n| n < 0) => {
            format!("{} {}", v.value_type(), v.as_i64().unwrap_or(0))
        }
        v => v.value_type().to_string(),
    }
}

/// A hyperparameter llama.cpp reads with `get_key_or_arr`: one count for every block, or an
/// array with one per block.
#[derive(Clone, Debug, Default)]
struct PerLayer {
    scalar: Option<u64>,
    /// The per-block values, when the key is an array of `block_count` counts.
    array: Option<Vec<u64>>,
}

impl PerLayer {
    /// The value of block `block`.
    fn at(&self, block: u64) -> Option<u64> {
        match &self.array {
            Some(a) => usize::try_from(block).ok().and_then(|b| a.get(b)).copied(),
            None => self.scalar,
        }
    }
}

/// The recurrent architectures' dimensions, `None` where a key is absent.
#[derive(Clone, Copy, Debug, Default)]
struct Recurrent {
    conv: Option<u64>,
    inner: Option<u64>,
    state: Option<u64>,
    dt_rank: Option<u64>,
    groups: Option<u64>,
    wkv_head: Option<u64>,
    time_mix: Option<u64>,
    time_decay: Option<u64>,
    lora_decay: Option<u64>,
    lora_iclr: Option<u64>,
    lora_value_res: Option<u64>,
    lora_gate: Option<u64>,
    short_conv: Option<u64>,
}

/// The dimensions the hyperparameters give, `None` where they are unknown or break a rule.
#[derive(Clone, Debug, Default)]
struct Shapes {
    embd: Option<u64>,
    vocab: Option<u64>,
    ff: Option<u64>,
    q: Option<u64>,
    k: Option<u64>,
    v: Option<u64>,
    experts: u64,
    rot_half: Option<u64>,
    ctx: Option<u64>,
    head_k: Option<u64>,
    heads: Option<u64>,
    heads_kv: Option<u64>,
    ff_exp: Option<u64>,
    ff_shexp: Option<u64>,
    ff_shexp_exp: Option<u64>,
    ff_shexp_exp_shared: Option<u64>,
    ff_exp_shared: Option<u64>,
    /// `{arch}.leading_dense_block_count`: blocks before it have no experts.
    dense_lead: u64,
    /// `{arch}.interleave_moe_layer_step` (llama4): only blocks `i` with `(i + 1) % step == 0`
    /// have experts; 0 when absent.
    moe_step: u64,
    // Latent attention (deepseek2, minicpm3), attention sized by the rotary dimensions, gemma3n
    /// `n_rot`: `{arch}.rope.dimension_count`, else the key head size.
    rot: Option<u64>,
    q_lora: Option<u64>,
    kv_lora: Option<u64>,
    /// The key and value head sizes after decompression (`key_length_mla`,
    /// `value_length_mla` when both are set, else the head sizes).
    head_k_mla: Option<u64>,
    head_v_mla: Option<u64>,
    n_layer: Option<u64>,
    /// The keys the table's [`When`] conditions name that are present and non-zero.
    set: Vec<&'static str>,
    // Encoder-only models (bert family):
    /// `tokenizer.ggml.token_type_count`, 0 when absent.
    token_types: u64,
    /// The number of `{arch}.classifier.output_labels`, 1 when absent.
    cls_out: u64,
    /// `{arch}.moe_every_n_layers` (nomic-bert-moe): only blocks `i` with `i % n == 1` have
    /// experts; 0 when absent.
    moe_every: u64,
    /// `{arch}.attention.relative_buckets_count` (T5).
    rel_buckets: Option<u64>,
    // Recurrent, hybrid and per-layer architectures.
    head_v: Option<u64>,
    /// `head_count`, `head_count_kv` (defaulting to `head_count`) and `feed_forward_length`
    /// per block.
    heads_at: PerLayer,
    heads_kv_at: PerLayer,
    /// `head_count_kv` broke a rule: the widths it gives are not checked.
    heads_kv_broken: bool,
    /// A per-layer array has the wrong length: which blocks have which tensors is unknown,
    /// and the tensor layout is not checked.
    layers_broken: bool,
    ff_at: PerLayer,
    recurrent: Recurrent,
}

impl Shapes {
    /// Dimension `dim` of a tensor of block `block` (`None`: a global tensor).
    fn dim(&self, dim: Dim, block: Option<u64>) -> Option<u64> {
        let add = |a: Option<u64>, b: Option<u64>| a?.checked_add(b?.checked_mul(2)?);
        let mul = |a: Option<u64>, b: Option<u64>| a?.checked_mul(b?);
        let r = &self.recurrent;
        if let Some(b) = block {
            let per_block = match dim {
                Dim::Q if self.heads_at.array.is_some() => {
                    Some(mul(self.head_k, self.heads_at.at(b)))
                }
                Dim::K
                | Dim::V
                | Dim::Qkv
                | Dim::RotKv
                | Dim::HeadsKv
                | Dim::QkvHeads
                | Dim::SsmHeadQkv
                    if self.heads_kv_broken =>
                {
                    Some(None)
                }
                Dim::K if self.heads_kv_at.array.is_some() => {
                    Some(mul(self.head_k, self.heads_kv_at.at(b)))
                }
                Dim::V if self.heads_kv_at.array.is_some() => {
                    Some(mul(self.head_v, self.heads_kv_at.at(b)))
                }
                Dim::Qkv if self.heads_kv_at.array.is_some() => {
                    Some(add(self.embd, mul(self.head_v, self.heads_kv_at.at(b))))
                }
                Dim::RotKv if self.heads_kv_at.array.is_some() => {
                    Some(mul(self.rot, self.heads_kv_at.at(b)))
                }
                Dim::RotQ if self.heads_at.array.is_some() => {
                    Some(mul(self.rot, self.heads_at.at(b)))
                }
                Dim::QMla if self.heads_at.array.is_some() => {
                    Some(mul(self.head_k_mla, self.heads_at.at(b)))
                }
                Dim::VMla if self.heads_at.array.is_some() => {
                    Some(mul(self.head_v_mla, self.heads_at.at(b)))
                }
                Dim::KvBMla if self.heads_at.array.is_some() => {
                    let nope = self
                        .head_k_mla
                        .zip(self.rot)
                        .and_then(|(k, r)| k.checked_sub(r));
                    let width = nope
                        .zip(self.head_v_mla)
                        .and_then(|(n, v)| n.checked_add(v));
                    Some(mul(width, self.heads_at.at(b)))
                }
                Dim::Ff if self.ff_at.array.is_some() => Some(self.ff_at.at(b)),
                Dim::Heads if self.heads_at.array.is_some() => Some(self.heads_at.at(b)),
                Dim::HeadsKv if self.heads_kv_at.array.is_some() => Some(self.heads_kv_at.at(b)),
                _ => None,
            };
            if let Some(value) = per_block {
                return value;
            }
        }
        match dim {
            Dim::Embd => self.embd,
            Dim::Vocab => self.vocab,
            Dim::Ff => self.ff,
            Dim::Q => self.q,
            Dim::K => self.k,
            Dim::V => self.v,
            Dim::Experts => Some(self.experts),
            Dim::RotHalf => self.rot_half,
            Dim::Qkv => add(self.embd, self.v),
            Dim::Embd3 => self.embd?.checked_mul(3),
            Dim::Ctx => self.ctx,
            Dim::HeadK => self.head_k,
            Dim::Heads => self.heads,
            Dim::HeadsKv => self.heads_kv,
            Dim::Ff2 => self.ff?.checked_mul(2),
            Dim::FfHalf => self.ff.map(|f| f / 2),
            Dim::FfExp => self.ff_exp,
            Dim::FfShexp => self.ff_shexp,
            Dim::FfShexpExp => self.ff_shexp_exp,
            Dim::FfShexpExpShared => self.ff_shexp_exp_shared,
            Dim::FfExpShared => self.ff_exp_shared,
            // Latent attention (deepseek2, minicpm3), attention sized by the rotary dimensions, gemma3n
            Dim::QLora => self.q_lora,
            Dim::KvLora => self.kv_lora,
            Dim::KvLoraRot => self.kv_lora?.checked_add(self.rot?),
            Dim::QMla => self.heads?.checked_mul(self.head_k_mla?),
            Dim::HeadNopeMla => self.head_k_mla?.checked_sub(self.rot?),
            Dim::HeadVMla => self.head_v_mla,
            Dim::KvBMla => {
                let nope = self.head_k_mla?.checked_sub(self.rot?)?;
                self.heads?.checked_mul(nope.checked_add(self.head_v_mla?)?)
            }
            Dim::VMla => self.heads?.checked_mul(self.head_v_mla?),
            Dim::RotQ => self.heads?.checked_mul(self.rot?),
            Dim::RotKv => self.heads_kv?.checked_mul(self.rot?),
            Dim::AltupEmbd => Some(GEMMA3N_N_EMBD_ALTUP),
            Dim::AltupEmbdLayers => self.n_layer?.checked_mul(GEMMA3N_N_EMBD_ALTUP),
            Dim::Altup => Some(GEMMA3N_N_ALTUP),
            Dim::AltupLess1 => Some(GEMMA3N_N_ALTUP - 1),
            Dim::AltupSquared => Some(GEMMA3N_N_ALTUP * GEMMA3N_N_ALTUP),
            Dim::LaurelRank => Some(GEMMA3N_LAUREL_RANK),
            Dim::TokenTypes => Some(self.token_types),
            Dim::ClsOut => Some(self.cls_out),
            Dim::RelBuckets => self.rel_buckets,
            Dim::One => Some(1),
            Dim::Five => Some(5),
            Dim::Six => Some(6),
            Dim::SsmConv => r.conv,
            Dim::SsmInner => r.inner,
            Dim::SsmInner2 => r.inner?.checked_mul(2),
            Dim::SsmState => r.state,
            Dim::SsmDtRank => r.dt_rank,
            Dim::SsmX => add(r.dt_rank, r.state),
            Dim::SsmConvWidth => add(r.inner, mul(r.groups, r.state)),
            Dim::SsmInProj => add(r.inner, mul(r.groups, r.state))?
                .checked_add(r.inner?)?
                .checked_add(r.dt_rank?),
            Dim::SsmGroupWidth => r.inner?.checked_div(r.groups?),
            Dim::SsmGroups => r.groups,
            Dim::WkvHead => r.wkv_head,
            Dim::WkvHeads => self.embd?.checked_div(r.wkv_head?),
            Dim::TimeMix => r.time_mix,
            Dim::TimeMix5 => r.time_mix?.checked_mul(5),
            Dim::TimeDecay => r.time_decay,
            Dim::LoraDecay => r.lora_decay,
            Dim::LoraIclr => r.lora_iclr,
            Dim::LoraValueRes => r.lora_value_res,
            Dim::LoraGate => r.lora_gate,
            Dim::RwkvKv => {
                let (embd, head) = (self.embd?, r.wkv_head?);
                match self.heads_kv_at.at(0).unwrap_or(0) {
                    0 => Some(embd),
                    kv if embd.checked_div(head) == Some(kv) => Some(embd),
                    kv => kv.checked_mul(head),
                }
            }
            Dim::ShortConv => r.short_conv,
            Dim::QkvHeads => {
                let b = block.unwrap_or(0);
                let heads = self
                    .heads_at
                    .at(b)?
                    .checked_add(self.heads_kv_at.at(b)?.checked_mul(2)?)?;
                heads.checked_mul(self.head_k?)
            }
            Dim::SsmDtDim => self.embd.map(|e| (e / 16).max(64)),
            Dim::SsmDtX => add(self.embd.map(|e| (e / 16).max(64)), r.state),
            Dim::SsmHead => r.inner?.checked_div(r.dt_rank?),
            Dim::SsmHeadQ => {
                let head = r.inner?.checked_div(r.dt_rank?)?;
                self.heads_at.at(block.unwrap_or(0))?.checked_mul(head)
            }
            Dim::SsmHeadQkv => {
                let b = block.unwrap_or(0);
                let head = r.inner?.checked_div(r.dt_rank?)?;
                let heads = self
                    .heads_at
                    .at(b)?
                    .checked_add(self.heads_kv_at.at(b)?.checked_mul(2)?)?;
                heads.checked_mul(head)
            }
        }
    }

    /// Whether a tensor of `when` belongs to block `block` (`None`: a global tensor).
    fn applies(&self, when: When, block: Option<u64>) -> bool {
        let nonzero = |v: &PerLayer| block.is_none_or(|b| v.at(b).unwrap_or(0) > 0);
        let dense_block = block.is_some_and(|b| {
            b < self.dense_lead
                || (self.moe_step > 0 && (b + 1) % self.moe_step != 0)
                || (self.moe_every > 0 && b % self.moe_every != 1)
        });
        match when {
            When::Always => true,
            When::Dense => self.experts == 0 || dense_block,
            When::Experts => self.experts > 0 && !dense_block,
            When::ExpertsWith(key) => self.experts > 0 && !dense_block && self.set.contains(&key),
            When::KeysSet(keys, set) => keys.iter().all(|k| self.set.contains(k)) == set,
            When::First => block == Some(0),
            When::Recurrent => block.is_some() && !nonzero(&self.heads_kv_at),
            When::Attention => nonzero(&self.heads_kv_at),
            When::LaterBlocks => block.is_some_and(|b| b > 0),
            When::Heads => nonzero(&self.heads_at) || nonzero(&self.heads_kv_at),
            When::LinearAttention => {
                block.is_some() && nonzero(&self.heads_at) && !nonzero(&self.heads_kv_at)
            }
            When::FeedForward => nonzero(&self.ff_at),
        }
    }

    /// In how many of the blocks `0..n_layer` a tensor of `when` belongs, without a loop
    /// over a block count that may be hostile.
    fn blocks(&self, when: When, n_layer: u64) -> u128 {
        // Blocks b in lo..hi with b % m == r.
        let residue = |lo: u64, hi: u64, m: u64, r: u64| -> u64 {
            let upto = |n: u64| {
                if r >= m {
                    0
                } else {
                    n / m + u64::from(n % m > r)
                }
            };
            upto(hi) - upto(lo)
        };
        let lead = self.dense_lead.min(n_layer);
        let expert_blocks = match (self.experts, self.moe_step, self.moe_every) {
            (0, _, _) => 0,
            (_, 0, 0) => n_layer - lead,
            (_, step, 0) => residue(lead, n_layer, step, step - 1),
            (_, 0, every) => residue(lead, n_layer, every, 1),
            // Both interleaves (no model has them): counted one by one, up to 2^16 blocks.
            _ => (lead..n_layer.min(1 << 16))
                .filter(|&b| !self.applies(When::Dense, Some(b)))
                .count() as u64,
        };
        u128::from(match when {
            When::Always => n_layer,
            When::Dense => n_layer - expert_blocks,
            When::Experts => expert_blocks,
            When::ExpertsWith(key) if self.set.contains(&key) => expert_blocks,
            When::ExpertsWith(_) => 0,
            When::KeysSet(keys, set) if keys.iter().all(|k| self.set.contains(k)) == set => n_layer,
            When::KeysSet(..) => 0,
            When::First => n_layer.min(1),
            When::LaterBlocks => n_layer.saturating_sub(1),
            When::Recurrent
            | When::Attention
            | When::Heads
            | When::LinearAttention
            | When::FeedForward => self.per_layer_blocks(when, n_layer),
        })
    }

    /// [`Shapes::blocks`] of a `when` that depends on the per-layer hyperparameters: counted
    /// one by one over the blocks the per-layer arrays list (no longer than the arrays read
    /// from the file), and the blocks past them, which are all alike, at once.
    fn per_layer_blocks(&self, when: When, n_layer: u64) -> u64 {
        let listed = [&self.heads_at, &self.heads_kv_at, &self.ff_at]
            .iter()
            .filter_map(|v| v.array.as_ref())
            .map(|a| a.len() as u64)
            .max()
            .unwrap_or(0)
            .min(n_layer);
        let counted = (0..listed).filter(|&b| self.applies(when, Some(b))).count() as u64;
        counted + (n_layer - listed) * u64::from(self.applies(when, Some(listed)))
    }
}

/// The keys the schema asks about: `general.*`, `tokenizer.*` and `{arch}.*`.
#[derive(Clone, Copy)]
struct AskedKeys<'s>(&'s str);

impl AskedKeys<'_> {
    fn contains(self, key: &[u8]) -> bool {
        let arch = self.0.as_bytes();
        key.starts_with(b"general.")
            || key.starts_with(b"tokenizer.")
            || (!arch.is_empty() && key.starts_with(arch) && key.get(arch.len()) == Some(&b'.'))
    }
}

struct Checker<'g, 'a> {
    gguf: &'g Gguf<'a>,
    asked: AskedKeys<'g>,
    /// The first pair stored under each key in `asked`, indexed once: the schema asks for
    /// about 75 keys, and a scan of every pair for each is slow on huge headers.
    first: HashMap<&'a [u8], usize>,
    out: Diagnostics,
    /// The llama.cpp whose loader the checks follow.
    release: Release,
    /// A per-layer array had the wrong length (see [`Shapes::layers_broken`]).
    layers_broken: bool,
}

impl<'g, 'a> Checker<'g, 'a> {
    fn new(gguf: &'g Gguf<'a>, arch_name: Option<&'g str>, release: Release) -> Self {
        let asked = AskedKeys(arch_name.unwrap_or(""));
        let mut first = HashMap::new();
        for (i, pair) in gguf.kvs.iter().enumerate() {
            if asked.contains(pair.key.as_bytes()) {
                first.entry(pair.key.as_bytes()).or_insert(i);
            }
        }
        Checker {
            gguf,
            asked,
            first,
            out: Diagnostics::default(),
            release,
            layers_broken: false,
        }
    }

    /// The first pair stored under `key`, with its index.
    fn find(&self, key: &str) -> Option<(usize, &Kv<'a>)> {
        let i = if self.asked.contains(key.as_bytes()) {
            *self.first.get(key.as_bytes())?
        } else {
            self.gguf
                .kvs
                .iter()
                .position(|pair| pair.key.as_bytes() == key.as_bytes())?
        };
        Some((i, &self.gguf.kvs[i]))
    }

    /// The first value stored under `key`.
    fn value(&self, key: &str) -> Option<Value<'a>> {
        self.find(key).map(|(_, pair)| pair.value)
    }

    /// A diagnostic about the pair stored under `key` (or about the key, if it is absent).
    fn push_kv(&mut self, code: Code, key: &str, message: String) {
        let at = match self.find(key) {
            Some((i, _)) => At::kv(self.gguf, i),
            None => At {
                span: None,
                path: ConstructPath(vec![Segment::Name(key.into())]),
            },
        };
        self.out.report(code, at, message);
    }

    /// Step 1: presence and types of the keys.
    fn keys(&mut self, arch_name: Option<&str>, arch: Option<&Architecture>) {
        let mut specs: Vec<(String, KeyType, bool)> = Vec::new();
        let groups = [GENERAL_KEYS, TOKENIZER_KEYS]
            .into_iter()
            .chain(arch.map_or(&[][..], |a| a.keys).iter().copied());
        let specials = SPECIAL_TOKEN_IDS.iter().map(|name| (*name, KeyType::Count));
        let all = groups
            .flat_map(|g| g.iter().map(|s| (s.name, s.ty, s.required)))
            .chain(specials.map(|(name, ty)| (name, ty, false)));
        for (name, ty, required) in all {
            let name = arch_key(name, arch_name.unwrap_or(""));
            match specs.iter_mut().find(|s| s.0 == name) {
                Some(seen) => seen.2 |= required,
                None => specs.push((name, ty, required)),
            }
        }
        for (name, ty, required) in specs {
            match self.value(&name) {
                None if required => self.push_kv(
                    codes::SCHEMA_KEY_MISSING,
                    &name,
                    format!("required key is missing ({})", ty.describe()),
                ),
                Some(value) if !type_matches(value, ty) => self.push_kv(
                    codes::SCHEMA_KEY_TYPE,
                    &name,
                    format!("expected {}, found {}", ty.describe(), describe(value)),
                ),
                Some(value) => {
                    if let Some(refusal) = loader_type_refusal(self.release, &name, value, ty) {
                        let message = format!(
                            "the {} fails to load it: \"{refusal}\"",
                            self.release.name()
                        );
                        self.push_kv(codes::SCHEMA_KEY_TYPE, &name, message);
                    }
                }
                None => {}
            }
        }
    }

    /// A well-typed array stored under `key`.
    fn array(&self, key: &str, ty: KeyType) -> Option<Array<'a>> {
        let (_, pair) = self.find(key)?;
        type_matches(pair.value, ty)
            .then(|| pair.value.as_array())
            .flatten()
    }

    /// Step 2: the tokenizer's arrays, ids and model.
    fn tokenizer(&mut self, hp: &Hparams<'_>) {
        let tokens = self
            .array("tokenizer.ggml.tokens", KeyType::Strings)
            .map(|a| a.len() as u64);
        if let Some(n) = tokens {
            for (key, ty, what) in [
                ("tokenizer.ggml.scores", KeyType::Floats, "scores"),
                (
                    "tokenizer.ggml.token_type",
                    KeyType::Integers,
                    "token types",
                ),
            ] {
                if let Some(len) = self
                    .array(key, ty)
                    .map(|a| a.len() as u64)
                    .filter(|&l| l != n)
                {
                    self.push_kv(
                        codes::SCHEMA_TOKEN_COUNT,
                        key,
                        format!("{len} {what} for {n} tokens"),
                    );
                }
            }
            if let (Some(arch), Some(size)) = (hp.architecture, hp.vocab_size) {
                if size != n {
                    self.push_kv(
                        codes::SCHEMA_TOKEN_COUNT,
                        &arch_key(keys::VOCAB_SIZE, arch),
                        format!("vocab_size {size} differs from the {n} tokens"),
                    );
                }
            }
        }
        if let Some(n_vocab) = tokens.or(hp.vocab_size) {
            for key in SPECIAL_TOKEN_IDS {
                let id = self.value(key).and_then(count);
                if let Some(id) = id.filter(|&id| id >= n_vocab) {
                    self.push_kv(
                        codes::SCHEMA_SPECIAL_TOKEN,
                        key,
                        format!("token id {id} is outside the vocabulary of {n_vocab} tokens (llama.cpp warns \"bad special token\" and uses its default id)"),
                    );
                }
            }
        }
        self.token_types();
        let model = self.value("tokenizer.ggml.model").and_then(|v| v.as_str());
        if let (Some(n_vocab), Some(model)) = (tokens, model) {
            self.special_token_defaults(model, n_vocab);
        }
        let release = self.release;
        if let Some(model) = model.filter(|m| !loads_tokenizer_model(release, m)) {
            self.push_kv(
                codes::SCHEMA_TOKENIZER_MODEL,
                "tokenizer.ggml.model",
                format!(
                    "the {} fails to load it: \"unknown tokenizer: '{model}'\" (it loads {}){}",
                    release.name(),
                    tokenizer_models(release).collect::<Vec<_>>().join(", "),
                    loaded_elsewhere(release, |r| loads_tokenizer_model(r, model))
                ),
            );
        }
        if model == Some("llama") {
            self.byte_tokens();
        }
        let bpe = model.filter(|&m| is_bpe_model(release, m));
        let pre = self.value("tokenizer.ggml.pre").and_then(|v| v.as_str());
        if let (Some(model), Some(pre)) = (bpe, pre) {
            let pre = forced_pre_tokenizer(model).unwrap_or(pre);
            if pre_tokenizer(release, pre).is_none() {
                self.push_kv(
                    codes::SCHEMA_TOKENIZER_PRE,
                    "tokenizer.ggml.pre",
                    format!(
                        "the {} fails to load it: \"unknown pre-tokenizer type: '{pre}'\"{}",
                        release.name(),
                        loaded_elsewhere(release, |r| pre_tokenizer(r, pre).is_some())
                    ),
                );
            }
        }
        // Kimi-K2's vocabulary has no merges: 0.3.36 lets it, 0.3.16 has no such case.
        let merges_optional = release >= Release::LlamaCppPython0336 && pre == Some("kimi-k2");
        if bpe.is_some() && !merges_optional {
            let merges = self.value("tokenizer.ggml.merges");
            let empty = merges
                .and_then(|v| v.as_array())
                .is_some_and(|a| a.is_empty());
            if merges.is_none() || empty {
                self.push_kv(
                    codes::SCHEMA_MERGES_MISSING,
                    "tokenizer.ggml.model",
                    "a BPE tokenizer needs tokenizer.ggml.merges (\"cannot find tokenizer merges in model file\")".into(),
                );
            }
        }
    }

    /// Step 2, the special tokens llama.cpp always has: it keeps its default id for the
    /// tokenizer (`llama_vocab::impl::load`) when the key is absent or past the vocabulary
    /// ("bad special token"), and fails to load when that id is outside the vocabulary too
    /// (`print_info` reads each with `id_to_token.at`: `vector::_M_range_check`). A WordPiece
    /// vocabulary of fewer than 104 tokens needs its bos, unknown, separator and mask ids.
    fn special_token_defaults(&mut self, model: &str, n_vocab: u64) {
        const BOS: &str = "tokenizer.ggml.bos_token_id";
        const EOS: &str = "tokenizer.ggml.eos_token_id";
        const UNK: &str = "tokenizer.ggml.unknown_token_id";
        const SEP: &str = "tokenizer.ggml.seperator_token_id";
        const PAD: &str = "tokenizer.ggml.padding_token_id";
        const MASK: &str = "tokenizer.ggml.mask_token_id";
        let defaults: &[(&str, u64)] = match model {
            "llama" => &[(BOS, 1), (EOS, 2), (UNK, 0)],
            "bert" => &[(BOS, 101), (UNK, 100), (SEP, 102), (PAD, 0), (MASK, 103)],
            "gpt2" | "hybriddna" | "whitespace" => &[(BOS, 11), (EOS, 11)],
            "t5" => &[(EOS, 1), (UNK, 2), (PAD, 0)],
            _ => &[],
        };
        for &(key, default) in defaults {
            let given = self.value(key).and_then(count);
            if given.is_some_and(|id| id < n_vocab) || default < n_vocab {
                continue;
            }
            let why = match given {
                Some(id) => format!("is {id}, past the vocabulary"),
                None => "is absent".to_string(),
            };
            self.push_kv(
                codes::SCHEMA_SPECIAL_TOKEN_DEFAULT,
                key,
                format!("{key} {why}: llama.cpp uses its default id {default} for a {model:?} vocabulary, outside the {n_vocab} tokens, and fails to load it (vector::_M_range_check)"),
            );
        }
    }

    /// Step 2, a SentencePiece vocabulary's byte tokens: llama.cpp's tokenizer falls back to
    /// `<0xXX>` (or the byte itself as a token) for every byte no piece covers, and throws
    /// `std::out_of_range` out of `llama_tokenize` when it is missing.
    fn byte_tokens(&mut self) {
        let Some(tokens) = self.array("tokenizer.ggml.tokens", KeyType::Strings) else {
            return;
        };
        let present: HashSet<&[u8]> = tokens
            .iter()
            .filter_map(|t| match t {
                Value::String(s) => Some(s.as_bytes()),
                _ => None,
            })
            .collect();
        let missing: Vec<u8> = (0..=255u8)
            .filter(|&b| {
                let hex = format!("<0x{b:02X}>");
                !present.contains(hex.as_bytes()) && !present.contains(&[b][..])
            })
            .collect();
        if let Some(first) = missing.first() {
            self.push_kv(
                codes::SCHEMA_BYTE_TOKENS,
                "tokenizer.ggml.tokens",
                format!(
                    "{} of the 256 byte tokens <0x00>..<0xFF> are missing (first <0x{first:02X}>): llama.cpp's SentencePiece tokenizer throws std::out_of_range (unordered_map::at) on a byte without one{}",
                    missing.len(),
                    if missing.contains(&b'\n') { "; loading warns \"SPM vocabulary, but newline token not found\"" } else { "" }
                ),
            );
        }
    }

    /// `{arch}.block_count` 0: llama.cpp aborts reading the hyperparameters
    /// (`llama_hparams::n_head` of layer 0, `src/llama-hparams.cpp:32: fatal error`); fewer
    /// blocks than the architecture's sliding-window pattern (no full-attention block: a
    /// SIGSEGV in the first decode) or minimum (gemma3n's 20 KV-cache blocks), or a count its
    /// graph has no model type for.
    fn block_count(&mut self, arch_name: Option<&str>, table: Option<&Architecture>) {
        let Some(arch) = arch_name else { return };
        let key = arch_key(keys::BLOCK_COUNT, arch);
        let Some(n) = self.value(&key).and_then(count) else {
            return;
        };
        let window = sliding_window(arch);
        let swa_blocks = window.map_or(0, |w| w.fewest_blocks());
        let message = match table {
            _ if n == 0 => "block_count is 0: llama.cpp aborts loading it (src/llama-hparams.cpp:32: fatal error, in llama_hparams::n_head)".to_string(),
            Some(_) if n < swa_blocks && window.is_some_and(|w| w.dense_first) => format!(
                "block_count {n} is below {swa_blocks}: {arch}'s first block has full attention and no block uses its sliding window: llama.cpp aborts creating its context (GGML_ASSERT(hparams.is_swa_any()))",
            ),
            Some(_) if n < swa_blocks => format!(
                "block_count {n} is below {arch}'s sliding-window pattern of {swa_blocks}: no block uses full attention and llama.cpp crashes in its first decode (SIGSEGV; gemma-embedding: GGML_ASSERT(buffer))",
            ),
            Some(t) if n < t.min_blocks => format!(
                "block_count {n} is below {arch}'s minimum of {}: llama.cpp aborts creating its context (src/llama-hparams.cpp:154: fatal error, in llama_hparams::is_swa of a block past the last)",
                t.min_blocks
            ),
            Some(t) if !t.block_counts.is_empty() && !t.block_counts.contains(&n) => format!(
                "block_count {n} is not one of {:?}: llama.cpp's {arch} graph aborts (\"fatal error\": no model type for it)",
                t.block_counts
            ),
            _ => return,
        };
        self.push_kv(codes::SCHEMA_BLOCK_COUNT, &key, message);
    }

    /// Step 2, token types: one diagnostic for the first invalid value.
    fn token_types(&mut self) {
        let key = "tokenizer.ggml.token_type";
        let (Some((i, _)), Some(types)) = (self.find(key), self.array(key, KeyType::Integers))
        else {
            return;
        };
        let valid = |v: &Value<'_>| v.as_i64().is_some_and(|t| TOKEN_TYPES.contains(&t));
        let mut invalid = types.iter().enumerate().filter(|(_, v)| !valid(v));
        let Some((first, value)) = invalid.next() else {
            return;
        };
        let more = invalid.count();
        let width = types.element_type().fixed_size().unwrap_or(0);
        let start = self.gguf.offset_of(types.raw_elements());
        let span = start.map(|s| {
            let at = s + first as u64 * width;
            at..at + width
        });
        let at = At::kv(self.gguf, i)
            .spanning(span)
            .then(Segment::Element(first as u64));
        let value = value.as_i64().map_or_else(|| "?".into(), |v| v.to_string());
        let others = match more {
            0 => String::new(),
            1 => " (1 more invalid value follows)".into(),
            n => format!(" ({n} more invalid values follow)"),
        };
        self.out.report(
            codes::SCHEMA_TOKEN_TYPE,
            at,
            format!(
                "token type {value} is not one of llama.cpp's (0 undefined, 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte){others}"
            ),
        );
    }

    /// Step 3: file type and quantization version.
    fn general(&mut self) {
        let ft = self.value("general.file_type").and_then(count);
        if let Some(ft) = ft.filter(|&ft| file_type_name(ft).is_none()) {
            let why = if REMOVED_FILE_TYPES.contains(&ft) {
                "a file type llama.cpp no longer supports"
            } else {
                "not a known file type"
            };
            self.push_kv(
                codes::SCHEMA_FILE_TYPE,
                "general.file_type",
                format!("file type {ft} is {why}"),
            );
        }
        let qv = self.value("general.quantization_version").and_then(count);
        if let Some(qv) = qv.filter(|qv| !QUANTIZATION_VERSIONS.contains(qv)) {
            self.push_kv(
                codes::SCHEMA_QUANTIZATION_VERSION,
                "general.quantization_version",
                format!("quantization version {qv} is not one ggml writes (2)"),
            );
        }
    }

    /// Step 4: the hyperparameter rules; returns the shapes the hyperparameters give.
    fn hparams(&mut self, arch: &Architecture, hp: &Hparams<'_>) -> Shapes {
        let key = |template: &str| arch_key(template, arch.name);
        let embd = hp.embedding_length;
        let heads_at = self.per_layer(&key(keys::HEAD_COUNT), hp.block_count);
        let mut heads_kv_at = self.per_layer(&key(keys::HEAD_COUNT_KV), hp.block_count);
        if heads_kv_at.scalar.is_none() && heads_kv_at.array.is_none() {
            heads_kv_at = heads_at.clone();
        }
        let ff_at = self.per_layer(&key(keys::FEED_FORWARD_LENGTH), hp.block_count);
        // llama.cpp sizes the heads by block 0's head count (`n_head()`).
        let mut head = heads_at.at(0);
        let mut head_size = None;
        match (head, embd) {
            _ if !arch.heads => {}
            (Some(0), _) => {
                self.push_kv(
                    codes::SCHEMA_HEAD_COUNT,
                    &key(keys::HEAD_COUNT),
                    "head_count is 0".into(),
                );
                head = None;
            }
            (Some(h), Some(e)) if hp.key_length.is_none() && e % h != 0 => {
                self.push_kv(
                    codes::SCHEMA_HEAD_COUNT,
                    &key(keys::HEAD_COUNT),
                    format!("head_count {h} does not divide embedding_length {e}"),
                );
            }
            (Some(h), Some(e)) => head_size = Some(e / h),
            _ => {}
        }
        let head_k = hp.key_length.or(head_size);
        let head_v = hp.value_length.or(head_size);
        let mut head_kv = hp.head_count_kv.or(head);
        let mut heads_kv_broken = false;
        if let Some((b, h, kv)) = self.kv_not_dividing(arch, &heads_at, &heads_kv_at) {
            let block = match heads_kv_at.array.is_some() || heads_at.array.is_some() {
                true => format!(" in block {b}"),
                false => String::new(),
            };
            self.push_kv(
                codes::SCHEMA_HEAD_COUNT_KV,
                &key(keys::HEAD_COUNT_KV),
                format!("head_count_kv {kv} does not divide head_count {h}{block}"),
            );
            head_kv = None;
            heads_kv_broken = true;
        } else if let (Some(h), Some(kv), false) = (head, hp.head_count_kv, arch.gqa) {
            if kv != h {
                self.push_kv(
                    codes::SCHEMA_HEAD_COUNT_KV,
                    &key(keys::HEAD_COUNT_KV),
                    format!("head_count_kv {kv} differs from head_count {h}: llama.cpp's {} graph has no grouped-query attention and aborts (GGML_ASSERT) building it", arch.name),
                );
                head_kv = None;
                heads_kv_broken = true;
            }
        }
        let mut rot = hp.rope_dimension_count.or(head_k);
        if let (Some(r), Some(k), true) = (hp.rope_dimension_count, head_k, arch.heads) {
            if r > k {
                self.push_kv(
                    codes::SCHEMA_ROPE_DIMENSION,
                    &key(keys::ROPE_DIMENSION_COUNT),
                    format!("rope.dimension_count {r} exceeds the head size {k}"),
                );
                rot = None;
            }
        }
        if let Some(n) = hp.n_vocab().filter(|&n| n < arch.min_vocab) {
            self.push_kv(
                codes::SCHEMA_TOKEN_COUNT,
                "tokenizer.ggml.tokens",
                format!(
                    "{n} tokens, but llama.cpp's {} graph needs at least {}: it overwrites the logits of fixed token ids, and with fewer tokens aborts (GGML_ASSERT) or writes past its logits",
                    arch.name, arch.min_vocab
                ),
            );
        }
        self.rope_sections(arch, head_k);
        let experts = self.experts(arch, hp);
        let mul = |a: Option<u64>, b: Option<u64>| a?.checked_mul(b?);
        let get = |k: &str| self.value(&key(k)).and_then(count);
        let ff = hp.feed_forward_length;
        let is_set = |k: &str| get(k).is_some_and(|v| v > 0);
        let mla = is_set(KEY_LENGTH_MLA) && is_set(VALUE_LENGTH_MLA);
        let mut set: Vec<&'static str> = Vec::new();
        for t in arch.tensors.iter().flat_map(|g| g.iter()) {
            let keys: &[&'static str] = match &t.when {
                When::ExpertsWith(key) => std::slice::from_ref(key),
                When::KeysSet(keys, _) => keys,
                _ => &[],
            };
            for &k in keys {
                if is_set(k) && !set.contains(&k) {
                    set.push(k);
                }
            }
        }
        let ff_exp = get(EXPERT_FF_LENGTH).or_else(|| {
            let used = hp.expert_used_count.filter(|&u| u > 0)?;
            Some(ff? / used)
        });
        Shapes {
            embd,
            vocab: hp.n_vocab(),
            ff,
            q: mul(head_k, head),
            k: mul(head_k, head_kv),
            v: mul(head_v, head_kv),
            experts,
            rot_half: rot.map(|r| r / 2),
            ctx: hp.context_length,
            head_k,
            heads: head,
            heads_kv: head_kv,
            ff_exp,
            ff_shexp: get(EXPERT_SHARED_FF_LENGTH).or(ff),
            ff_shexp_exp: get(EXPERT_SHARED_FF_LENGTH).or(ff_exp),
            ff_shexp_exp_shared: get(EXPERT_SHARED_FF_LENGTH)
                .or(mul(ff_exp, get(EXPERT_SHARED_COUNT))),
            ff_exp_shared: mul(ff_exp, get(EXPERT_SHARED_COUNT)),
            dense_lead: get(LEADING_DENSE_BLOCK_COUNT).unwrap_or(0),
            moe_step: get(INTERLEAVE_MOE_LAYER_STEP).unwrap_or(0),
            rot,
            q_lora: get("{arch}.attention.q_lora_rank"),
            kv_lora: get("{arch}.attention.kv_lora_rank"),
            head_k_mla: if mla { get(KEY_LENGTH_MLA) } else { head_k },
            head_v_mla: if mla { get(VALUE_LENGTH_MLA) } else { head_v },
            n_layer: hp.block_count,
            set,
            token_types: self
                .value("tokenizer.ggml.token_type_count")
                .and_then(count)
                .unwrap_or(0),
            cls_out: self
                .array(&key("{arch}.classifier.output_labels"), KeyType::Strings)
                .map_or(1, |a| (a.len() as u64).max(1)),
            moe_every: get(MOE_EVERY_N_LAYERS).unwrap_or(0),
            rel_buckets: get("{arch}.attention.relative_buckets_count"),
            head_v,
            heads_at,
            heads_kv_at,
            heads_kv_broken,
            layers_broken: self.layers_broken,
            ff_at,
            recurrent: Recurrent {
                conv: get("{arch}.ssm.conv_kernel"),
                inner: get("{arch}.ssm.inner_size"),
                state: get("{arch}.ssm.state_size"),
                dt_rank: get("{arch}.ssm.time_step_rank"),
                groups: get("{arch}.ssm.group_count"),
                wkv_head: get("{arch}.wkv.head_size"),
                time_mix: get("{arch}.time_mix_extra_dim"),
                time_decay: get("{arch}.time_decay_extra_dim"),
                lora_decay: get("{arch}.attention.decay_lora_rank"),
                lora_iclr: get("{arch}.attention.iclr_lora_rank"),
                lora_value_res: get("{arch}.attention.value_residual_mix_lora_rank"),
                lora_gate: get("{arch}.attention.gate_lora_rank"),
                short_conv: get("{arch}.shortconv.l_cache"),
            },
        }
    }

    /// Step 4, M-RoPE's sections (when the architecture has them and they are well typed):
    /// ggml's rope asserts that one of the first three is positive and that all four add up
    /// to at most the head size (`ggml_compute_forward_rope`, in the first decode).
    fn rope_sections(&mut self, arch: &Architecture, head_k: Option<u64>) {
        let key = arch_key(ROPE_SECTIONS, arch.name);
        let has = arch
            .keys
            .iter()
            .flat_map(|g| g.iter())
            .any(|s| s.name == ROPE_SECTIONS);
        let Some(value) = self
            .value(&key)
            .filter(|v| has && type_matches(*v, KeyType::Sections))
        else {
            return;
        };
        let sections: Vec<i64> = match value {
            Value::Array(a) => a.iter().filter_map(|v| v.as_i64()).collect(),
            v => vec![v.as_i64().unwrap_or(0); 4],
        };
        let sum: i64 = sections.iter().sum();
        let message = if sections.iter().take(3).all(|&s| s <= 0) {
            format!("rope.dimension_sections {sections:?}: none of the first three is positive; llama.cpp aborts in its first decode (GGML_ASSERT in ggml_compute_forward_rope)")
        } else if let Some(k) = head_k.filter(|&k| sum > k as i64) {
            format!("rope.dimension_sections {sections:?} add up to {sum}, more than the head size {k}; llama.cpp aborts in its first decode (GGML_ASSERT(sect_dims <= ne0))")
        } else {
            return;
        };
        self.push_kv(codes::SCHEMA_ROPE_DIMENSION, &key, message);
    }

    /// The key and value head sizes against the one the loader sizes the attention tensors
    /// by, for an architecture that has one (plamo2).
    fn head_size(&mut self, arch: &Architecture, shapes: &Shapes) {
        let Some(dim) = arch.head_size else {
            return;
        };
        let Some(want) = shapes.dim(dim, None) else {
            return;
        };
        for (key, have) in [
            (keys::KEY_LENGTH, shapes.head_k),
            (keys::VALUE_LENGTH, shapes.head_v),
        ] {
            if let Some(have) = have.filter(|&h| h != want) {
                let key = arch_key(key, arch.name);
                self.push_kv(
                    codes::SCHEMA_HEAD_COUNT,
                    &key,
                    format!("head size {have} ({key}, else embedding_length / head_count) differs from {} = {want}: llama.cpp's {} loader sizes the attention tensors by the latter, its graph by the former, and aborts (GGML_ASSERT) building the context", dim.name(), arch.name),
                );
            }
        }
    }

    /// A hyperparameter llama.cpp reads with `get_key_or_arr`; an array whose length is not
    /// `block_count` is reported (llama.cpp: "key ... has wrong array length") and not used.
    fn per_layer(&mut self, key: &str, n_layer: Option<u64>) -> PerLayer {
        let Some(value) = self.value(key) else {
            return PerLayer::default();
        };
        // An array of another type is not a per-block count: the type rule reports it.
        if value.as_array().is_some() && !type_matches(value, KeyType::PerLayer) {
            return PerLayer::default();
        }
        match get_key_or_arr(key, value, n_layer) {
            Ok(KeyOrArr::One(value)) => PerLayer {
                scalar: count(value),
                array: None,
            },
            Ok(KeyOrArr::PerLayer(array)) => PerLayer {
                scalar: None,
                array: Some(array.iter().map(|v| count(v).unwrap_or(0)).collect()),
            },
            Err(wrong) => {
                self.layers_broken = true;
                let (len, n) = (wrong.got, wrong.expected);
                self.push_kv(
                    codes::SCHEMA_KEY_TYPE,
                    key,
                    format!("an array of {len} values for {n} blocks: llama.cpp fails to load it (\"{wrong}\")"),
                );
                PerLayer::default()
            }
        }
    }

    /// The first block whose `head_count_kv` does not divide its `head_count`, as `(block,
    /// head_count, head_count_kv)`. In an architecture with per-layer hyperparameters a
    /// `head_count_kv` of 0 (a recurrent or linear-attention block) or a `head_count` of 0 (a
    /// block without attention) is no attention to check.
    fn kv_not_dividing(
        &self,
        arch: &Architecture,
        heads: &PerLayer,
        heads_kv: &PerLayer,
    ) -> Option<(u64, u64, u64)> {
        if !arch.heads {
            return None;
        }
        let per_layer = arch.varied_blocks;
        let blocks = heads
            .array
            .as_ref()
            .or(heads_kv.array.as_ref())
            .map_or(1, |a| a.len() as u64);
        (0..blocks).find_map(|b| {
            let (h, kv) = (heads.at(b)?, heads_kv.at(b)?);
            // A head_count of 0 is the head rule's to report.
            let skip = h == 0 || (per_layer && kv == 0);
            (!skip && (kv == 0 || h % kv != 0)).then_some((b, h, kv))
        })
    }

    /// Step 4, experts: returns the number of experts the blocks use (0: dense).
    fn experts(&mut self, arch: &Architecture, hp: &Hparams<'_>) -> u64 {
        if arch.experts == ExpertUse::Never {
            return 0;
        }
        let key = |template: &str| arch_key(template, arch.name);
        let n = hp.expert_count.unwrap_or(0);
        if n == 0 {
            if arch.experts == ExpertUse::Always && hp.expert_count.is_some() {
                self.push_kv(
                    codes::SCHEMA_EXPERT_COUNT,
                    &key(keys::EXPERT_COUNT),
                    format!("expert_count is 0, but {} blocks use experts", arch.name),
                );
            }
            return 0;
        }
        match hp.expert_used_count {
            Some(used) if used == 0 || used > n => self.push_kv(
                codes::SCHEMA_EXPERT_COUNT,
                &key(keys::EXPERT_USED_COUNT),
                format!("expert_used_count {used} is not between 1 and expert_count {n}"),
            ),
            None if arch.experts == ExpertUse::Optional => self.push_kv(
                codes::SCHEMA_EXPERT_COUNT,
                &key(keys::EXPERT_COUNT),
                format!("expert_count is {n}, but expert_used_count is missing"),
            ),
            _ => {}
        }
        n
    }

    /// Step 5: the tensor layout.
    fn tensors(&mut self, arch: &Architecture, hp: &Hparams<'_>, shapes: &Shapes) {
        let Some(n_layer) = hp.block_count else {
            return;
        };
        let specs: Vec<&ExpectedTensor> = arch.tensors.iter().flat_map(|g| g.iter()).collect();
        // (block, name) of every expected tensor present; block u64::MAX for global ones.
        let mut present: HashSet<(u64, &str)> = HashSet::new();
        for (i, tensor) in self.gguf.tensors.iter().enumerate() {
            let info = &tensor.info;
            let name = info.name.to_str().unwrap_or("");
            let (block, rest) = match split_block(name) {
                Some((block, rest)) => (Some(block), rest),
                None => (None, name.to_string()),
            };
            let scope = if block.is_some() {
                Scope::Block
            } else {
                Scope::Global
            };
            let spec = specs
                .iter()
                .find(|s| s.scope == scope && s.name == rest && shapes.applies(s.when, block));
            let message = match (spec, block) {
                (None, _) => Some((
                    codes::SCHEMA_TENSOR_UNEXPECTED,
                    format!("not a tensor of the {} layout", arch.name),
                )),
                (Some(_), Some(b)) if b >= n_layer => Some((
                    codes::SCHEMA_TENSOR_BLOCK_INDEX,
                    format!("block {b} is past the last block ({n_layer} blocks)"),
                )),
                (Some(spec), _) => {
                    present.insert((block.unwrap_or(u64::MAX), spec.name));
                    let expected: Option<Vec<u64>> =
                        spec.shape.iter().map(|&d| shapes.dim(d, block)).collect();
                    expected
                        .filter(|want| !same_shape(&info.dims, want))
                        .map(|want| {
                            let names: Vec<&str> = spec.shape.iter().map(|d| d.name()).collect();
                            (
                                codes::SCHEMA_TENSOR_SHAPE,
                                format!(
                                    "shape {:?}, expected {want:?} ({})",
                                    info.dims,
                                    names.join(", ")
                                ),
                            )
                        })
                }
            };
            if let Some((code, message)) = message {
                let at = At::tensor(self.gguf, i);
                self.out.report(code, at, message);
            }
        }
        self.missing(&specs, shapes, n_layer, &present);
    }

    /// Step 5, required tensors that are absent: the first [`MISSING_SHOWN`] one by one, the
    /// rest counted (a hostile block count cannot make this loop long or the output large).
    fn missing(
        &mut self,
        specs: &[&ExpectedTensor],
        shapes: &Shapes,
        n_layer: u64,
        present: &HashSet<(u64, &str)>,
    ) {
        let required = move |block: Option<u64>| {
            let scope = match block {
                None => Scope::Global,
                Some(_) => Scope::Block,
            };
            specs
                .iter()
                .filter(move |s| s.required && s.scope == scope && shapes.applies(s.when, block))
        };
        let expected = required(None).count() as u128
            + specs
                .iter()
                .filter(|s| s.required && s.scope == Scope::Block)
                .map(|s| shapes.blocks(s.when, n_layer))
                .sum::<u128>();
        let found = present
            .iter()
            .filter(|(block, name)| {
                let block = (*block != u64::MAX).then_some(*block);
                required(block).any(|s| s.name == *name)
            })
            .count() as u128;
        let total = expected.saturating_sub(found);
        let mut shown = 0u64;
        let globals = required(None).map(|s| (u64::MAX, s.name));
        let layers = if expected > required(None).count() as u128 {
            n_layer
        } else {
            0
        };
        let blocks = (0..layers).flat_map(|b| required(Some(b)).map(move |s| (b, s.name)));
        for (block, name) in globals.chain(blocks) {
            if shown == MISSING_SHOWN || u128::from(shown) == total {
                break;
            }
            if !present.contains(&(block, name)) {
                let full = match block {
                    u64::MAX => name.to_string(),
                    b => block_tensor_name(b, name),
                };
                self.out.report(
                    codes::SCHEMA_TENSOR_MISSING,
                    At {
                        span: None,
                        path: ConstructPath(vec![Segment::Name(full)]),
                    },
                    "required tensor is missing".into(),
                );
                shown += 1;
            }
        }
        if total > u128::from(shown) {
            self.out.report(
                codes::SCHEMA_TENSOR_MISSING,
                At::default(),
                format!(
                    "{} more required tensors are missing",
                    total - u128::from(shown)
                ),
            );
        }
    }
}

/// `blk.N.rest` → `(N, rest)`, for a canonical decimal `N` (as llama.cpp's `blk.%d.` writes it);
/// T5's `enc.blk.N.rest` → `(N, enc.rest)` and `dec.blk.N.rest` → `(N, dec.rest)`, the table's
/// names (the inverse of [`block_tensor_name`]).
fn split_block(name: &str) -> Option<(u64, String)> {
    let (stack, name) = ["enc.", "dec."]
        .into_iter()
        .find_map(|stack| Some((stack, name.strip_prefix(stack)?)))
        .unwrap_or(("", name));
    let (n, rest) = name.strip_prefix("blk.")?.split_once('.')?;
    let canonical =
        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (n == "0" || !n.starts_with('0'));
    Some((
        n.parse().ok().filter(|_| canonical)?,
        format!("{stack}{rest}"),
    ))
}

/// Whether two shapes are equal once trailing 1s are ignored (as ggml compares them).
fn same_shape(a: &[u64], b: &[u64]) -> bool {
    let trim = |s: &[u64]| s.len() - s.iter().rev().take_while(|&&d| d == 1).count();
    let (a, b) = (&a[..trim(a)], &b[..trim(b)]);
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_names() {
        assert_eq!(
            split_block("blk.12.attn_q.weight"),
            Some((12, "attn_q.weight".into()))
        );
        assert_eq!(split_block("blk.0.x"), Some((0, "x".into())));
        assert_eq!(
            split_block("enc.blk.3.attn_o.weight"),
            Some((3, "enc.attn_o.weight".into()))
        );
        assert_eq!(split_block("enc.output_norm.weight"), None);
        assert_eq!(split_block("blk.01.x"), None);
        assert_eq!(split_block("blk..x"), None);
        assert_eq!(split_block("blk.99999999999999999999.x"), None);
        assert_eq!(split_block("token_embd.weight"), None);
    }

    #[test]
    fn blocks_count_without_a_loop_as_applies_decides() {
        let cases = [
            (0, 0, 0),
            (4, 0, 0),
            (4, 0, 2),
            (4, 0, 3),
            (4, 2, 0),
            (4, 4, 0),
            (4, 1, 0),
        ];
        for (experts, step, every) in cases {
            for lead in [0, 1, 3] {
                let shapes = Shapes {
                    experts,
                    moe_step: step,
                    moe_every: every,
                    dense_lead: lead,
                    ..Shapes::default()
                };
                for n_layer in 0..13 {
                    for when in [When::Always, When::Dense, When::Experts, When::First] {
                        let counted = (0..n_layer)
                            .filter(|&b| shapes.applies(when, Some(b)))
                            .count() as u128;
                        assert_eq!(
                            shapes.blocks(when, n_layer),
                            counted,
                            "{when:?} experts {experts} step {step} every {every} lead {lead} blocks {n_layer}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn per_layer_blocks_count_as_applies_decides() {
        let layer = |values: Option<&[u64]>, scalar: Option<u64>| PerLayer {
            scalar: values.is_none().then_some(scalar).flatten(),
            array: values.map(<[u64]>::to_vec),
        };
        // (head_count, head_count_kv, feed_forward_length) per block, or one for all.
        let heads: [&[u64]; 3] = [&[4, 4, 0, 4, 4], &[4, 0, 0, 4, 2], &[0, 0, 0, 0, 0]];
        let mut cases = vec![(
            layer(None, Some(4)),
            layer(None, Some(0)),
            layer(None, None),
        )];
        for (h, kv) in heads.iter().zip(heads.iter().rev()) {
            cases.push((
                layer(Some(h), None),
                layer(Some(kv), None),
                layer(None, Some(64)),
            ));
            cases.push((
                layer(None, Some(4)),
                layer(Some(h), None),
                layer(Some(kv), None),
            ));
        }
        let whens = [
            When::LaterBlocks,
            When::Recurrent,
            When::Attention,
            When::Heads,
            When::LinearAttention,
            When::FeedForward,
        ];
        for (heads_at, heads_kv_at, ff_at) in cases {
            let shapes = Shapes {
                heads_at,
                heads_kv_at,
                ff_at,
                ..Shapes::default()
            };
            for n_layer in 0..8 {
                for when in whens {
                    let counted = (0..n_layer)
                        .filter(|&b| shapes.applies(when, Some(b)))
                        .count() as u128;
                    assert_eq!(
                        shapes.blocks(when, n_layer),
                        counted,
                        "{when:?} {shapes:?} blocks {n_layer}"
                    );
                }
            }
        }
        // A hostile block count with scalar hyperparameters is counted at once.
        let shapes = Shapes {
            heads_kv_at: layer(None, Some(0)),
            ..Shapes::default()
        };
        assert_eq!(
            shapes.blocks(When::Recurrent, u64::MAX),
            u128::from(u64::MAX)
        );
        assert_eq!(shapes.blocks(When::Attention, u64::MAX), 0);
    }

    #[test]
    fn shapes_ignore_trailing_ones() {
        assert!(same_shape(&[576], &[576]));
        assert!(same_shape(&[576, 1], &[576]));
        assert!(!same_shape(&[576, 2], &[576]));
        assert!(!same_shape(&[1, 576], &[576]));
        assert!(same_shape(&[1], &[]));
    }

    #[test]
    fn counts_accept_every_integer_type() {
        for v in [Value::U8(3), Value::I16(3), Value::U64(3), Value::I64(3)] {
            assert!(type_matches(v, KeyType::Count), "{v:?}");
        }
        assert!(!type_matches(Value::I32(-3), KeyType::Count));
        assert!(!type_matches(Value::F64(3.0), KeyType::Count));
        assert!(!type_matches(Value::Bool(1), KeyType::Count));
    }
}
