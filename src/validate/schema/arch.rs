//! The architecture table: which keys and tensors a LLaMA-layout model has, as data.
//!
//! Key names are written as gguf-py writes them in `gguf.constants.Keys`, with `{arch}` standing
//! for the architecture name (`{arch}.context_length` is `llama.context_length` in a llama file).
//! Tensor names and shapes follow llama.cpp's `llama_model::load_tensors` for `LLM_ARCH_LLAMA`
//! (`src/llama-model.cpp`), which `mistral3`, `granite` and `granitemoe` share, and its
//! `LLM_ARCH_QWEN2` case. Shapes are in file order, `ne0` first, as GGUF stores them.
//!
//! Adding a LLaMA-layout architecture is adding an [`Architecture`] to [`ARCHITECTURES`]. Note
//! that Mistral 7B and Mixtral files declare `llama` (Mixtral is llama with
//! `llama.expert_count`); `mistral3` is the architecture name of the Mistral Small 3 family.

/// What a key's value must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyType {
    /// Any integer type, signed or unsigned, holding a non-negative value (the specification
    /// asks readers to accept both u32 and u64 counts).
    Count,
    /// float32 or float64.
    Float,
    /// bool.
    Bool,
    /// string.
    String,
    /// An array of strings.
    Strings,
    /// An array of float32 or float64.
    Floats,
    /// An array of any integer type.
    Integers,
}

impl KeyType {
    /// How the type is named in diagnostics.
    ///
    /// ```
    /// use gguf_grammar::validate::schema::KeyType;
    /// assert_eq!(KeyType::Count.describe(), "a non-negative integer");
    /// ```
    pub fn describe(self) -> &'static str {
        match self {
            KeyType::Count => "a non-negative integer",
            KeyType::Float => "a float",
            KeyType::Bool => "a bool",
            KeyType::String => "a string",
            KeyType::Strings => "an array of strings",
            KeyType::Floats => "an array of floats",
            KeyType::Integers => "an array of integers",
        }
    }
}

/// A key a file may or must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeySpec {
    /// The key, with `{arch}` for the architecture name.
    pub name: &'static str,
    /// The type its value must have.
    pub ty: KeyType,
    /// Whether a file of the architecture must have it.
    pub required: bool,
}

const fn req(name: &'static str, ty: KeyType) -> KeySpec {
    KeySpec {
        name,
        ty,
        required: true,
    }
}

const fn opt(name: &'static str, ty: KeyType) -> KeySpec {
    KeySpec {
        name,
        ty,
        required: false,
    }
}

use crate::summary::keys;
use KeyType::{Bool, Count, Float, Floats, Integers, Strings};

/// `general.*` keys whose type every file must respect (`general.alignment` belongs to the
/// container checks).
pub const GENERAL_KEYS: &[KeySpec] = &[
    req("general.architecture", KeyType::String),
    opt("general.type", KeyType::String),
    opt("general.name", KeyType::String),
    opt("general.author", KeyType::String),
    opt("general.version", KeyType::String),
    opt("general.organization", KeyType::String),
    opt("general.finetune", KeyType::String),
    opt("general.basename", KeyType::String),
    opt("general.description", KeyType::String),
    opt("general.quantized_by", KeyType::String),
    opt("general.size_label", KeyType::String),
    opt("general.license", KeyType::String),
    opt("general.url", KeyType::String),
    opt("general.doi", KeyType::String),
    opt("general.uuid", KeyType::String),
    opt("general.repo_url", KeyType::String),
    opt("general.tags", Strings),
    opt("general.languages", Strings),
    opt("general.file_type", Count),
    opt("general.quantization_version", Count),
];

/// The special token ids; each must name a token of the vocabulary.
pub const SPECIAL_TOKEN_IDS: &[&str] = &[
    "tokenizer.ggml.bos_token_id",
    "tokenizer.ggml.eos_token_id",
    "tokenizer.ggml.eot_token_id",
    "tokenizer.ggml.eom_token_id",
    "tokenizer.ggml.unknown_token_id",
    "tokenizer.ggml.seperator_token_id",
    "tokenizer.ggml.padding_token_id",
    "tokenizer.ggml.cls_token_id",
    "tokenizer.ggml.mask_token_id",
    "tokenizer.ggml.fim_pre_token_id",
    "tokenizer.ggml.fim_suf_token_id",
    "tokenizer.ggml.fim_mid_token_id",
    "tokenizer.ggml.fim_pad_token_id",
    "tokenizer.ggml.fim_rep_token_id",
    "tokenizer.ggml.fim_sep_token_id",
];

/// `tokenizer.*` keys whose type every file must respect (the special token ids are in
/// [`SPECIAL_TOKEN_IDS`], all counts).
pub const TOKENIZER_KEYS: &[KeySpec] = &[
    opt("tokenizer.ggml.model", KeyType::String),
    opt("tokenizer.ggml.pre", KeyType::String),
    opt("tokenizer.ggml.tokens", Strings),
    opt("tokenizer.ggml.scores", Floats),
    opt("tokenizer.ggml.token_type", Integers),
    opt("tokenizer.ggml.token_type_count", Count),
    opt("tokenizer.ggml.merges", Strings),
    opt("tokenizer.ggml.add_bos_token", Bool),
    opt("tokenizer.ggml.add_eos_token", Bool),
    opt("tokenizer.ggml.add_sep_token", Bool),
    opt("tokenizer.ggml.add_space_prefix", Bool),
    opt("tokenizer.chat_template", KeyType::String),
];

/// What llama.cpp needs to load a tokenizer (`llama_vocab::load`).
pub const TOKENIZER_REQUIRED: &[KeySpec] = &[
    req("tokenizer.ggml.model", KeyType::String),
    req("tokenizer.ggml.tokens", Strings),
];

/// The hyperparameters of a LLaMA-layout model.
pub const LLAMA_KEYS: &[KeySpec] = &[
    req(keys::CONTEXT_LENGTH, Count),
    req(keys::EMBEDDING_LENGTH, Count),
    req(keys::BLOCK_COUNT, Count),
    req(keys::FEED_FORWARD_LENGTH, Count),
    req(keys::HEAD_COUNT, Count),
    opt(keys::HEAD_COUNT_KV, Count),
    opt(keys::KEY_LENGTH, Count),
    opt(keys::VALUE_LENGTH, Count),
    req("{arch}.attention.layer_norm_rms_epsilon", Float),
    opt(keys::ROPE_DIMENSION_COUNT, Count),
    opt("{arch}.rope.freq_base", Float),
    opt("{arch}.rope.scale_linear", Float),
    opt("{arch}.rope.scaling.type", KeyType::String),
    opt("{arch}.rope.scaling.factor", Float),
    opt("{arch}.rope.scaling.attn_factor", Float),
    opt("{arch}.rope.scaling.original_context_length", Count),
    opt("{arch}.rope.scaling.finetuned", Bool),
    opt(keys::VOCAB_SIZE, Count),
];

/// Mixture-of-experts counts, for architectures where experts are optional.
pub const EXPERT_KEYS: &[KeySpec] = &[
    opt(keys::EXPERT_COUNT, Count),
    opt(keys::EXPERT_USED_COUNT, Count),
];

/// Mixture-of-experts counts, for architectures that always have experts.
pub const EXPERT_KEYS_REQUIRED: &[KeySpec] = &[
    req(keys::EXPERT_COUNT, Count),
    req(keys::EXPERT_USED_COUNT, Count),
];

/// Granite's scaling factors (llama.cpp reads all four as required).
pub const GRANITE_KEYS: &[KeySpec] = &[
    req("{arch}.logit_scale", Float),
    req("{arch}.residual_scale", Float),
    req("{arch}.embedding_scale", Float),
    req("{arch}.attention.scale", Float),
];

/// A tensor dimension, derived from the hyperparameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    /// `n_embd`: `{arch}.embedding_length`.
    Embd,
    /// `n_vocab`: the number of tokens.
    Vocab,
    /// `n_ff`: `{arch}.feed_forward_length`.
    Ff,
    /// `n_embd_head_k × n_head`: the query width.
    Q,
    /// `n_embd_head_k × n_head_kv`: the key width.
    K,
    /// `n_embd_head_v × n_head_kv`: the value width.
    V,
    /// `n_expert`: `{arch}.expert_count`.
    Experts,
    /// `n_rot / 2`: half the rotary dimensions.
    RotHalf,
}

impl Dim {
    /// The dimension's name in diagnostics.
    pub fn name(self) -> &'static str {
        match self {
            Dim::Embd => "n_embd",
            Dim::Vocab => "n_vocab",
            Dim::Ff => "n_ff",
            Dim::Q => "n_embd_head_k*n_head",
            Dim::K => "n_embd_head_k*n_head_kv",
            Dim::V => "n_embd_head_v*n_head_kv",
            Dim::Experts => "n_expert",
            Dim::RotHalf => "n_rot/2",
        }
    }
}

/// Whether a tensor is one per file or one per block (`blk.N.`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// One per file, named as given.
    Global,
    /// One per block N in `0..block_count`, named `blk.N.` + the given name.
    Block,
}

/// Which models have a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Every model of the architecture.
    Always,
    /// Models without experts (`expert_count` absent or 0).
    Dense,
    /// Models with experts.
    Experts,
}

/// A tensor a model may or must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpectedTensor {
    /// The name (after `blk.N.` for block tensors).
    pub name: &'static str,
    /// Global or per block.
    pub scope: Scope,
    /// The dimensions, `ne0` first.
    pub shape: &'static [Dim],
    /// Whether it must be present (when `when` applies).
    pub required: bool,
    /// Which models have it.
    pub when: When,
}

const fn tensor(
    name: &'static str,
    scope: Scope,
    shape: &'static [Dim],
    required: bool,
    when: When,
) -> ExpectedTensor {
    ExpectedTensor {
        name,
        scope,
        shape,
        required,
        when,
    }
}

use Dim::{Embd, Experts, Ff, RotHalf, Vocab, K, Q, V};
use Scope::{Block, Global};
use When::{Always, Dense};

/// The tensors of a LLaMA-layout model (`output.weight` is absent when the embeddings are tied).
pub const LLAMA_TENSORS: &[ExpectedTensor] = &[
    tensor("token_embd.weight", Global, &[Embd, Vocab], true, Always),
    tensor("output_norm.weight", Global, &[Embd], true, Always),
    tensor("output.weight", Global, &[Embd, Vocab], false, Always),
    tensor("attn_norm.weight", Block, &[Embd], true, Always),
    tensor("attn_q.weight", Block, &[Embd, Q], true, Always),
    tensor("attn_k.weight", Block, &[Embd, K], true, Always),
    tensor("attn_v.weight", Block, &[Embd, V], true, Always),
    tensor("attn_output.weight", Block, &[Q, Embd], true, Always),
    tensor("ffn_norm.weight", Block, &[Embd], true, Always),
    tensor("ffn_gate.weight", Block, &[Embd, Ff], true, Dense),
    tensor("ffn_down.weight", Block, &[Ff, Embd], true, Dense),
    tensor("ffn_up.weight", Block, &[Embd, Ff], true, Dense),
    tensor(
        "ffn_gate_inp.weight",
        Block,
        &[Embd, Experts],
        true,
        When::Experts,
    ),
    tensor(
        "ffn_gate_exps.weight",
        Block,
        &[Embd, Ff, Experts],
        false,
        When::Experts,
    ),
    tensor(
        "ffn_down_exps.weight",
        Block,
        &[Ff, Embd, Experts],
        true,
        When::Experts,
    ),
    tensor(
        "ffn_up_exps.weight",
        Block,
        &[Embd, Ff, Experts],
        true,
        When::Experts,
    ),
];

/// Tensors llama.cpp's llama loader also accepts: rotary frequency factors and biases.
pub const LLAMA_OPTIONAL_TENSORS: &[ExpectedTensor] = &[
    tensor("rope_freqs.weight", Global, &[RotHalf], false, Always),
    tensor("attn_q.bias", Block, &[Embd], false, Always),
    tensor("attn_k.bias", Block, &[K], false, Always),
    tensor("attn_v.bias", Block, &[V], false, Always),
    tensor("attn_output.bias", Block, &[Embd], false, Always),
    tensor("ffn_gate.bias", Block, &[Ff], false, Dense),
    tensor("ffn_down.bias", Block, &[Embd], false, Dense),
    tensor("ffn_up.bias", Block, &[Ff], false, Dense),
];

/// Qwen2's attention biases, which it requires.
pub const QWEN2_TENSORS: &[ExpectedTensor] = &[
    tensor("attn_q.bias", Block, &[Embd], true, Always),
    tensor("attn_k.bias", Block, &[K], true, Always),
    tensor("attn_v.bias", Block, &[V], true, Always),
];

/// Whether an architecture's blocks use experts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpertUse {
    /// Never: the expert tensors are not part of the layout.
    Never,
    /// When `{arch}.expert_count` is present and non-zero.
    Optional,
    /// Always.
    Always,
}

/// One architecture of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Architecture {
    /// The value of `general.architecture`.
    pub name: &'static str,
    /// Its keys, in groups.
    pub keys: &'static [&'static [KeySpec]],
    /// Its tensors, in groups.
    pub tensors: &'static [&'static [ExpectedTensor]],
    /// Whether its blocks use experts.
    pub experts: ExpertUse,
}

/// The LLaMA-layout architectures the schema knows.
///
/// ```
/// use gguf_grammar::validate::schema::{Architecture, ExpertUse};
/// assert_eq!(Architecture::named("granitemoe").map(|a| a.experts), Some(ExpertUse::Always));
/// assert!(Architecture::named("bert").is_none());
/// ```
pub const ARCHITECTURES: &[Architecture] = &[
    Architecture {
        name: "llama",
        keys: &[LLAMA_KEYS, EXPERT_KEYS, TOKENIZER_REQUIRED],
        tensors: &[LLAMA_TENSORS, LLAMA_OPTIONAL_TENSORS],
        experts: ExpertUse::Optional,
    },
    Architecture {
        name: "mistral3",
        keys: &[LLAMA_KEYS, EXPERT_KEYS, TOKENIZER_REQUIRED],
        tensors: &[LLAMA_TENSORS, LLAMA_OPTIONAL_TENSORS],
        experts: ExpertUse::Optional,
    },
    Architecture {
        name: "qwen2",
        keys: &[LLAMA_KEYS, TOKENIZER_REQUIRED],
        tensors: &[LLAMA_TENSORS, QWEN2_TENSORS],
        experts: ExpertUse::Never,
    },
    Architecture {
        name: "granite",
        keys: &[LLAMA_KEYS, EXPERT_KEYS, GRANITE_KEYS, TOKENIZER_REQUIRED],
        tensors: &[LLAMA_TENSORS, LLAMA_OPTIONAL_TENSORS],
        experts: ExpertUse::Optional,
    },
    Architecture {
        name: "granitemoe",
        keys: &[
            LLAMA_KEYS,
            EXPERT_KEYS_REQUIRED,
            GRANITE_KEYS,
            TOKENIZER_REQUIRED,
        ],
        tensors: &[LLAMA_TENSORS, LLAMA_OPTIONAL_TENSORS],
        experts: ExpertUse::Always,
    },
];

impl Architecture {
    /// The table entry for `general.architecture` = `name`.
    ///
    /// ```
    /// use gguf_grammar::validate::schema::Architecture;
    /// assert_eq!(Architecture::named("qwen2").map(|a| a.name), Some("qwen2"));
    /// ```
    pub fn named(name: &str) -> Option<&'static Architecture> {
        ARCHITECTURES.iter().find(|a| a.name == name)
    }
}

/// The file types gguf-py 0.19.0 defines (`LlamaFileType`, llama.cpp's `llama_ftype`), by
/// `general.file_type` value, named after the members without their `MOSTLY_` prefix.
pub const FILE_TYPES: &[(u64, &str)] = &[
    (0, "ALL_F32"),
    (1, "F16"),
    (2, "Q4_0"),
    (3, "Q4_1"),
    (7, "Q8_0"),
    (8, "Q5_0"),
    (9, "Q5_1"),
    (10, "Q2_K"),
    (11, "Q3_K_S"),
    (12, "Q3_K_M"),
    (13, "Q3_K_L"),
    (14, "Q4_K_S"),
    (15, "Q4_K_M"),
    (16, "Q5_K_S"),
    (17, "Q5_K_M"),
    (18, "Q6_K"),
    (19, "IQ2_XXS"),
    (20, "IQ2_XS"),
    (21, "Q2_K_S"),
    (22, "IQ3_XS"),
    (23, "IQ3_XXS"),
    (24, "IQ1_S"),
    (25, "IQ4_NL"),
    (26, "IQ3_S"),
    (27, "IQ3_M"),
    (28, "IQ2_S"),
    (29, "IQ2_M"),
    (30, "IQ4_XS"),
    (31, "IQ1_M"),
    (32, "BF16"),
    (36, "TQ1_0"),
    (37, "TQ2_0"),
    (38, "MXFP4_MOE"),
    (39, "NVFP4"),
    (40, "Q1_0"),
];

/// File types that existed once and were removed: 4 (Q4_1 with some F16), 5 and 6 (Q4_2,
/// Q4_3), 33 to 35 (Q4_0_4_4, Q4_0_4_8, Q4_0_8_8, now repacked at load time).
pub const REMOVED_FILE_TYPES: &[u64] = &[4, 5, 6, 33, 34, 35];

/// The name of file type `id` (`general.file_type`), if it is one that is defined today.
///
/// ```
/// use gguf_grammar::validate::schema::file_type_name;
/// assert_eq!(file_type_name(15), Some("Q4_K_M"));
/// assert_eq!(file_type_name(5), None); // Q4_2, removed
/// ```
pub fn file_type_name(id: u64) -> Option<&'static str> {
    FILE_TYPES
        .iter()
        .find(|(known, _)| *known == id)
        .map(|(_, name)| *name)
}

/// The `general.quantization_version` values ggml writes: `GGML_QNT_VERSION` is 2.
pub const QUANTIZATION_VERSIONS: &[u64] = &[2];

/// `tokenizer.ggml.model` values llama.cpp loads (`llama_vocab::impl::load`).
pub const TOKENIZER_MODELS: &[&str] = &[
    "no", "none", "llama", "bert", "gpt2", "t5", "rwkv", "plamo2",
];

/// `tokenizer.ggml.token_type` values: llama.cpp's `llama_token_type` (0 undefined, 1 normal,
/// 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte; gguf-py's `TokenType` has 1 to 6).
pub const TOKEN_TYPES: std::ops::RangeInclusive<i64> = 0..=6;
