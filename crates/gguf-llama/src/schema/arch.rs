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
    // Further architectures (grok … llada).
    /// M-RoPE's sections: an array of exactly four int32 or uint32, or one int32 for all
    /// four (llama.cpp's `get_key_or_arr` into `std::array<int, 4>`).
    Sections,
    // Recurrent, hybrid and per-layer architectures.
    /// A count, or an array of counts with one per block (llama.cpp's `get_key_or_arr`).
    PerLayer,
    /// A float, or an array of floats with one per block (`get_key_or_arr` into floats:
    /// apertus's xIELU parameters).
    FloatPerLayer,
}

impl KeyType {
    /// How the type is named in diagnostics.
    ///
    /// ```
    /// use gguf_llama::schema::KeyType;
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
            KeyType::Sections => "four int32 or uint32 (or one int32)",
            KeyType::PerLayer => "a non-negative integer or an array of them, one per block",
            KeyType::FloatPerLayer => "a float or an array of floats, one per block",
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

pub(super) const fn req(name: &'static str, ty: KeyType) -> KeySpec {
    KeySpec {
        name,
        ty,
        required: true,
    }
}

pub(super) const fn opt(name: &'static str, ty: KeyType) -> KeySpec {
    KeySpec {
        name,
        ty,
        required: false,
    }
}

use crate::{Release, Releases};
use gguf_grammar::summary::keys;
use KeyType::{Bool, Count, Float, Floats, Integers, PerLayer, Strings};

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

/// The hyperparameters every transformer layout reads (`llama_model::load_hparams` before its
/// per-architecture switch, and the head and feed-forward sizes the tensors need).
/// `feed_forward_length`, `head_count` and `head_count_kv` are a count or an array with one
/// per block, as llama.cpp reads them (`get_key_or_arr`) for every architecture.
pub const BASE_KEYS: &[KeySpec] = &[
    req(keys::CONTEXT_LENGTH, Count),
    req(keys::EMBEDDING_LENGTH, Count),
    req(keys::BLOCK_COUNT, Count),
    req(keys::FEED_FORWARD_LENGTH, PerLayer),
    req(keys::HEAD_COUNT, PerLayer),
    opt(keys::HEAD_COUNT_KV, PerLayer),
    opt(keys::KEY_LENGTH, Count),
    opt(keys::VALUE_LENGTH, Count),
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

/// RMS normalisation's epsilon (`LLM_KV_ATTENTION_LAYERNORM_RMS_EPS`).
pub const RMS_EPS: &[KeySpec] = &[req("{arch}.attention.layer_norm_rms_epsilon", Float)];

/// Layer normalisation's epsilon (`LLM_KV_ATTENTION_LAYERNORM_EPS`).
pub const NORM_EPS: &[KeySpec] = &[req("{arch}.attention.layer_norm_epsilon", Float)];

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

/// The experts' feed-forward lengths, when the loader reads them as optional.
pub const EXPERT_FF_KEYS: &[KeySpec] = &[
    opt(EXPERT_FF_LENGTH, Count),
    opt(EXPERT_SHARED_FF_LENGTH, Count),
];

/// `{arch}.expert_feed_forward_length`: `n_ff_exp`.
pub const EXPERT_FF_LENGTH: &str = "{arch}.expert_feed_forward_length";
/// `{arch}.expert_shared_feed_forward_length`: `n_ff_shexp`.
pub const EXPERT_SHARED_FF_LENGTH: &str = "{arch}.expert_shared_feed_forward_length";
/// `{arch}.expert_shared_count`: `n_expert_shared`.
pub const EXPERT_SHARED_COUNT: &str = "{arch}.expert_shared_count";
/// `{arch}.leading_dense_block_count`: the first blocks, dense in a mixture-of-experts model.
pub const LEADING_DENSE_BLOCK_COUNT: &str = "{arch}.leading_dense_block_count";
/// `{arch}.interleave_moe_layer_step`: llama4's blocks with experts are every step-th.
pub const INTERLEAVE_MOE_LAYER_STEP: &str = "{arch}.interleave_moe_layer_step";

/// DeepSeek's expert layout (all four required).
pub const DEEPSEEK_KEYS: &[KeySpec] = &[
    req(LEADING_DENSE_BLOCK_COUNT, Count),
    req(EXPERT_FF_LENGTH, Count),
    req(EXPERT_SHARED_COUNT, Count),
    req("{arch}.expert_weights_scale", Float),
];

/// Granite's scaling factors (llama.cpp reads all four as required).
pub const GRANITE_KEYS: &[KeySpec] = &[
    req("{arch}.logit_scale", Float),
    req("{arch}.residual_scale", Float),
    req("{arch}.embedding_scale", Float),
    req("{arch}.attention.scale", Float),
];

/// MiniCPM's scaling factors (required).
pub const MINICPM_KEYS: &[KeySpec] = &[
    req("{arch}.logit_scale", Float),
    req("{arch}.residual_scale", Float),
    req("{arch}.embedding_scale", Float),
];

/// Command-R's logit scale (required).
pub const LOGIT_SCALE: &[KeySpec] = &[req("{arch}.logit_scale", Float)];

/// The sliding attention window, required.
pub const SLIDING_WINDOW: &[KeySpec] = &[req("{arch}.attention.sliding_window", Count)];

/// The sliding attention window, optional.
pub const SLIDING_WINDOW_OPT: &[KeySpec] = &[opt("{arch}.attention.sliding_window", Count)];

/// Gemma 2's soft caps (optional).
pub const SOFTCAP_KEYS: &[KeySpec] = &[
    opt("{arch}.attn_logit_softcapping", Float),
    opt("{arch}.final_logit_softcapping", Float),
];

/// The ALiBi bias (required by MPT and JAIS).
pub const ALIBI: &[KeySpec] = &[req("{arch}.attention.max_alibi_bias", Float)];

/// The clamp of q, k and v (optional).
pub const CLAMP_KQV: &[KeySpec] = &[opt("{arch}.attention.clamp_kqv", Float)];

/// GPT-NeoX's parallel residual switch (required).
pub const PARALLEL_RESIDUAL: &[KeySpec] = &[req("{arch}.use_parallel_residual", Bool)];

// Encoder-only and encoder-decoder models (bert family, t5):
/// Whether attention is causal: false for the BERT family (required by its loader).
pub const CAUSAL: &[KeySpec] = &[req("{arch}.attention.causal", Bool)];

/// The pooling of the embeddings (`llama_pooling_type`), optional.
pub const POOLING_OPT: &[KeySpec] = &[opt("{arch}.pooling_type", Count)];

/// The pooling of the embeddings (`llama_pooling_type`), required.
pub const POOLING: &[KeySpec] = &[req("{arch}.pooling_type", Count)];

/// `{arch}.moe_every_n_layers`: nomic-bert-moe's blocks `i` with `i % n == 1` use experts.
pub const MOE_EVERY_N_LAYERS: &str = "{arch}.moe_every_n_layers";

/// nomic-bert-moe's expert interleave (llama.cpp reads it as optional and builds every block
/// dense without it; the converter always writes it, and the table requires it).
pub const MOE_EVERY: &[KeySpec] = &[req(MOE_EVERY_N_LAYERS, Count)];

/// T5's relative attention buckets (required).
pub const REL_BUCKETS: &[KeySpec] = &[req("{arch}.attention.relative_buckets_count", Count)];

/// T5's decoder start token. llama.cpp reads it as optional and then starts from the BOS
/// token, which a T5 vocabulary does not have (`llama_decode` fails on token -1); the
/// converter always writes it, and the table requires it.
pub const DECODER_START: &[KeySpec] = &[req("{arch}.decoder_start_token_id", Count)];
// Recurrent, hybrid and per-layer architectures.

/// The hyperparameters of an architecture without attention heads (Mamba, RWKV): llama.cpp
/// reads `feed_forward_length`, `head_count` and `head_count_kv` as optional, a count or one
/// per block (`get_key_or_arr`).
pub const RECURRENT_BASE_KEYS: &[KeySpec] = &[
    req(keys::CONTEXT_LENGTH, Count),
    req(keys::EMBEDDING_LENGTH, Count),
    req(keys::BLOCK_COUNT, Count),
    opt(keys::FEED_FORWARD_LENGTH, PerLayer),
    opt(keys::HEAD_COUNT, PerLayer),
    opt(keys::HEAD_COUNT_KV, PerLayer),
    opt(keys::VOCAB_SIZE, Count),
];

/// [`RECURRENT_BASE_KEYS`] for RWKV, whose channel mix is `feed_forward_length` wide.
pub const RWKV_BASE_KEYS: &[KeySpec] = &[
    req(keys::CONTEXT_LENGTH, Count),
    req(keys::EMBEDDING_LENGTH, Count),
    req(keys::BLOCK_COUNT, Count),
    req(keys::FEED_FORWARD_LENGTH, PerLayer),
    opt(keys::HEAD_COUNT, PerLayer),
    opt(keys::HEAD_COUNT_KV, PerLayer),
    opt(keys::VOCAB_SIZE, Count),
];

/// Mamba's state-space dimensions (required).
pub const SSM_KEYS: &[KeySpec] = &[
    req("{arch}.ssm.conv_kernel", Count),
    req("{arch}.ssm.inner_size", Count),
    req("{arch}.ssm.state_size", Count),
    req("{arch}.ssm.time_step_rank", Count),
    opt("{arch}.ssm.dt_b_c_rms", Bool),
];

/// Mamba-2's groups (required).
pub const SSM_GROUP_KEYS: &[KeySpec] = &[req("{arch}.ssm.group_count", Count)];

/// RWKV6's dimensions (both epsilons optional to the loader).
pub const RWKV6_KEYS: &[KeySpec] = &[
    opt("{arch}.attention.layer_norm_epsilon", Float),
    opt("{arch}.attention.layer_norm_rms_epsilon", Float),
    req("{arch}.wkv.head_size", Count),
    req("{arch}.time_mix_extra_dim", Count),
    req("{arch}.time_decay_extra_dim", Count),
    opt("{arch}.rescale_every_n_layers", Count),
    opt("{arch}.token_shift_count", Count),
];

/// RWKV7's dimensions. The gate's rank is optional to the loader, but its required gate
/// tensors are as wide as it says, so the table requires it.
pub const RWKV7_KEYS: &[KeySpec] = &[
    opt("{arch}.attention.layer_norm_epsilon", Float),
    opt("{arch}.attention.layer_norm_rms_epsilon", Float),
    req("{arch}.wkv.head_size", Count),
    req("{arch}.attention.decay_lora_rank", Count),
    req("{arch}.attention.iclr_lora_rank", Count),
    req("{arch}.attention.value_residual_mix_lora_rank", Count),
    req("{arch}.attention.gate_lora_rank", Count),
    opt("{arch}.token_shift_count", Count),
];

/// Granite-hybrid's scaling factors (optional there).
pub const GRANITE_HYBRID_KEYS: &[KeySpec] = &[
    opt("{arch}.logit_scale", Float),
    opt("{arch}.residual_scale", Float),
    opt("{arch}.embedding_scale", Float),
    opt("{arch}.attention.scale", Float),
];

/// LFM2's short convolution length (required).
pub const SHORTCONV_KEYS: &[KeySpec] = &[req("{arch}.shortconv.l_cache", Count)];

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
    /// `n_embd + 2 × n_embd_gqa`: a fused q, k, v projection.
    Qkv,
    /// `3 × n_embd`: Qwen's fused projection.
    Embd3,
    /// `n_ctx_train`: `{arch}.context_length` (learned position embeddings).
    Ctx,
    /// `n_embd_head_k`: one head's width.
    HeadK,
    /// `n_head`.
    Heads,
    /// `n_head_kv`.
    HeadsKv,
    /// `2 × n_ff`: Phi-3's fused gate and up projection.
    Ff2,
    /// `n_ff / 2`: Qwen's feed-forward width.
    FfHalf,
    /// `n_ff_exp`: `{arch}.expert_feed_forward_length`, else `n_ff / n_expert_used`.
    FfExp,
    /// `n_ff_shexp`: `{arch}.expert_shared_feed_forward_length`, else `n_ff`.
    FfShexp,
    /// `n_ff_exp × n_expert_shared`: DeepSeek's shared experts.
    FfExpShared,
    /// `n_ff_shexp`: `{arch}.expert_shared_feed_forward_length`, else `n_ff_exp` (exaone-moe).
    FfShexpExp,
    /// `n_ff_shexp`: `{arch}.expert_shared_feed_forward_length`, else `n_ff_exp ×
    /// n_expert_shared` (cohere2moe).
    FfShexpExpShared,
    // Multi-head latent attention (deepseek2, minicpm3), attention sized by the
    // rotary dimensions (bailingmoe, gpt-oss), gemma3n's per-layer inputs and AltUp.
    /// `n_lora_q`: `{arch}.attention.q_lora_rank`.
    QLora,
    /// `n_lora_kv`: `{arch}.attention.kv_lora_rank`.
    KvLora,
    /// `n_lora_kv + n_rot`: the compressed key/value and the rotary part of the key.
    KvLoraRot,
    /// `n_head × n_embd_head_k_mla`: the decompressed query width (`n_embd_head_k_mla` is
    /// `{arch}.attention.key_length_mla` when it and `value_length_mla` are set, else
    /// `n_embd_head_k`).
    QMla,
    /// `n_embd_head_k_mla − n_rot`: a head's key part without rotary embedding.
    HeadNopeMla,
    /// `n_embd_head_v_mla`: a head's decompressed value width.
    HeadVMla,
    /// `n_head × (n_embd_head_k_mla − n_rot + n_embd_head_v_mla)`: the fused key/value
    /// decompression.
    KvBMla,
    /// `n_head × n_embd_head_v_mla`: the attention output's input width.
    VMla,
    /// `n_head × n_rot`: a query width sized by the rotary dimensions.
    RotQ,
    /// `n_head_kv × n_rot`: a key or value width sized by the rotary dimensions.
    RotKv,
    /// `n_embd_altup`: gemma3n's per-layer input width (256 in llama.cpp, not a key).
    AltupEmbd,
    /// `n_embd_altup × n_layer`: all layers' per-layer inputs.
    AltupEmbdLayers,
    /// `n_altup`: gemma3n's AltUp inputs (4 in llama.cpp, not a key).
    Altup,
    /// `n_altup − 1`.
    AltupLess1,
    /// `n_altup × n_altup`.
    AltupSquared,
    /// `laurel_rank`: gemma3n's LAuReL rank (64 in llama.cpp, not a key).
    LaurelRank,
    // Encoder-only and encoder-decoder models (bert family, t5):
    /// `n_token_types`: `tokenizer.ggml.token_type_count` (0 when absent), BERT's token types.
    TokenTypes,
    /// `n_cls_out`: the number of `{arch}.classifier.output_labels`, else 1.
    ClsOut,
    /// `n_rel_attn_bkts`: `{arch}.attention.relative_buckets_count` (T5).
    RelBuckets,
    // Recurrent, hybrid and per-layer architectures.
    /// The constant 1 (a tensor's trailing unit dimension before a counted one).
    One,
    /// The constant 5 (RWKV6's five fused interpolations).
    Five,
    /// The constant 6 (RWKV7's six fused interpolations).
    Six,
    /// `d_conv`: `{arch}.ssm.conv_kernel`.
    SsmConv,
    /// `d_inner`: `{arch}.ssm.inner_size`.
    SsmInner,
    /// `2 × d_inner`: Mamba's input projection.
    SsmInner2,
    /// `d_state`: `{arch}.ssm.state_size`.
    SsmState,
    /// `dt_rank`: `{arch}.ssm.time_step_rank` (Mamba-2: its head count).
    SsmDtRank,
    /// `dt_rank + 2 × d_state`: Mamba's x projection.
    SsmX,
    /// `d_inner + 2 × n_group × d_state`: Mamba-2's convolution width.
    SsmConvWidth,
    /// `2 × d_inner + 2 × n_group × d_state + n_head`: Mamba-2's input projection.
    SsmInProj,
    /// `d_inner / n_group`: Mamba-2's grouped norm width.
    SsmGroupWidth,
    /// `n_group`: `{arch}.ssm.group_count`.
    SsmGroups,
    /// `head_size`: `{arch}.wkv.head_size`.
    WkvHead,
    /// `n_embd / head_size`: the RWKV heads.
    WkvHeads,
    /// `time_mix_extra_dim`.
    TimeMix,
    /// `5 × time_mix_extra_dim`.
    TimeMix5,
    /// `time_decay_extra_dim`.
    TimeDecay,
    /// `{arch}.attention.decay_lora_rank`.
    LoraDecay,
    /// `{arch}.attention.iclr_lora_rank`.
    LoraIclr,
    /// `{arch}.attention.value_residual_mix_lora_rank`.
    LoraValueRes,
    /// `{arch}.attention.gate_lora_rank`.
    LoraGate,
    /// RWKV6-Qwen2's key and value width: `n_head_kv × head_size`, or `n_embd` when
    /// `n_head_kv` is 0 or `n_embd / head_size`.
    RwkvKv,
    /// `{arch}.shortconv.l_cache`: LFM2's convolution length.
    ShortConv,
    /// `(n_head + 2 × n_head_kv) × n_embd_head_k` of the block: OpenELM's fused projection.
    QkvHeads,
    // plamo2: its Mamba mixer's time-step projection and attention heads sized by the mixer.
    /// `dt_dim`: max(64, `n_embd / 16`), PLaMo-2's time-step width (not a key).
    SsmDtDim,
    /// `dt_dim + 2 × d_state`: PLaMo-2's x projection.
    SsmDtX,
    /// `d_inner / dt_rank`: PLaMo-2's head size (the loader sizes its attention heads so).
    SsmHead,
    /// `n_head × d_inner / dt_rank`: PLaMo-2's query width.
    SsmHeadQ,
    /// `(n_head + 2 × n_head_kv) × d_inner / dt_rank` of the block: PLaMo-2's fused q, k, v.
    SsmHeadQkv,
}

/// gemma3n's constants: llama.cpp sets them in `llama_hparams` and reads no key for them.
pub const GEMMA3N_N_EMBD_ALTUP: u64 = 256;
/// `n_altup` (`altup_num_inputs`).
pub const GEMMA3N_N_ALTUP: u64 = 4;
/// `laurel_rank`.
pub const GEMMA3N_LAUREL_RANK: u64 = 64;
/// `{arch}.attention.key_length_mla`: deepseek2's key head size after decompression.
pub const KEY_LENGTH_MLA: &str = "{arch}.attention.key_length_mla";
/// `{arch}.attention.value_length_mla`: deepseek2's value head size after decompression.
pub const VALUE_LENGTH_MLA: &str = "{arch}.attention.value_length_mla";

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
            Dim::Qkv => "n_embd+2*n_embd_gqa",
            Dim::Embd3 => "3*n_embd",
            Dim::Ctx => "n_ctx_train",
            Dim::HeadK => "n_embd_head_k",
            Dim::Heads => "n_head",
            Dim::HeadsKv => "n_head_kv",
            Dim::Ff2 => "2*n_ff",
            Dim::FfHalf => "n_ff/2",
            Dim::FfExp => "n_ff_exp",
            Dim::FfShexp => "n_ff_shexp",
            Dim::FfExpShared => "n_ff_exp*n_expert_shared",
            Dim::FfShexpExp => "n_ff_shexp",
            Dim::FfShexpExpShared => "n_ff_shexp",
            // Latent attention (deepseek2, minicpm3), attention sized by the rotary dimensions, gemma3n
            Dim::QLora => "n_lora_q",
            Dim::KvLora => "n_lora_kv",
            Dim::KvLoraRot => "n_lora_kv+n_rot",
            Dim::QMla => "n_head*n_embd_head_k_mla",
            Dim::HeadNopeMla => "n_embd_head_k_mla-n_rot",
            Dim::HeadVMla => "n_embd_head_v_mla",
            Dim::KvBMla => "n_head*(n_embd_head_k_mla-n_rot+n_embd_head_v_mla)",
            Dim::VMla => "n_head*n_embd_head_v_mla",
            Dim::RotQ => "n_head*n_rot",
            Dim::RotKv => "n_head_kv*n_rot",
            Dim::AltupEmbd => "n_embd_altup",
            Dim::AltupEmbdLayers => "n_embd_altup*n_layer",
            Dim::Altup => "n_altup",
            Dim::AltupLess1 => "n_altup-1",
            Dim::AltupSquared => "n_altup*n_altup",
            Dim::LaurelRank => "laurel_rank",
            Dim::TokenTypes => "n_token_types",
            Dim::ClsOut => "n_cls_out",
            Dim::RelBuckets => "n_rel_attn_bkts",
            Dim::One => "1",
            Dim::Five => "5",
            Dim::Six => "6",
            Dim::SsmConv => "d_conv",
            Dim::SsmInner => "d_inner",
            Dim::SsmInner2 => "2*d_inner",
            Dim::SsmState => "d_state",
            Dim::SsmDtRank => "dt_rank",
            Dim::SsmX => "dt_rank+2*d_state",
            Dim::SsmConvWidth => "d_inner+2*n_group*d_state",
            Dim::SsmInProj => "2*d_inner+2*n_group*d_state+n_head",
            Dim::SsmGroupWidth => "d_inner/n_group",
            Dim::SsmGroups => "n_group",
            Dim::WkvHead => "head_size",
            Dim::WkvHeads => "n_embd/head_size",
            Dim::TimeMix => "time_mix_extra_dim",
            Dim::TimeMix5 => "5*time_mix_extra_dim",
            Dim::TimeDecay => "time_decay_extra_dim",
            Dim::LoraDecay => "n_lora_decay",
            Dim::LoraIclr => "n_lora_iclr",
            Dim::LoraValueRes => "n_lora_value_res_mix",
            Dim::LoraGate => "n_lora_gate",
            Dim::RwkvKv => "attn_key_value_size",
            Dim::ShortConv => "shortconv.l_cache",
            Dim::QkvHeads => "(n_head+2*n_head_kv)*n_embd_head_k",
            Dim::SsmDtDim => "max(64,n_embd/16)",
            Dim::SsmDtX => "dt_dim+2*d_state",
            Dim::SsmHead => "d_inner/dt_rank",
            Dim::SsmHeadQ => "n_head*d_inner/dt_rank",
            Dim::SsmHeadQkv => "(n_head+2*n_head_kv)*d_inner/dt_rank",
        }
    }
}

/// The name of block tensor `name` in block `block`: `blk.N.` + `name`, or for T5's encoder
/// and decoder blocks (table names starting with `enc.` or `dec.`), `enc.blk.N.` + the rest.
///
/// ```
/// use gguf_llama::schema::block_tensor_name;
/// assert_eq!(block_tensor_name(2, "attn_q.weight"), "blk.2.attn_q.weight");
/// assert_eq!(block_tensor_name(0, "enc.attn_q.weight"), "enc.blk.0.attn_q.weight");
/// ```
pub fn block_tensor_name(block: u64, name: &str) -> String {
    for stack in ["enc.", "dec."] {
        if let Some(rest) = name.strip_prefix(stack) {
            return format!("{stack}blk.{block}.{rest}");
        }
    }
    format!("blk.{block}.{name}")
}

/// Whether a tensor is one per file or one per block (`blk.N.`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// One per file, named as given.
    Global,
    /// One per block N in `0..block_count`, named `blk.N.` + the given name.
    Block,
}

/// Which models (and blocks) have a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Every model of the architecture.
    Always,
    /// Blocks without experts: every block when `expert_count` is absent or 0, else the
    /// first `{arch}.leading_dense_block_count` blocks.
    Dense,
    /// Blocks with experts: every block from `{arch}.leading_dense_block_count` on, in a
    /// model with experts.
    Experts,
    // Tensors that depend on a hyperparameter being set.
    /// Blocks with experts, in a model whose key (`{arch}.…`) is present and non-zero
    /// (shared experts: `expert_shared_count`, `expert_shared_feed_forward_length`).
    ExpertsWith(&'static str),
    /// Every model whose keys are all present and non-zero (`true`), or not (`false`):
    /// deepseek2 stores `attn_k_b` and `attn_v_b` when `key_length_mla` and
    /// `value_length_mla` are set, else the fused `attn_kv_b`.
    KeysSet(&'static [&'static str], bool),
    // Encoder-decoder models (t5):
    /// Block 0 only (T5's relative attention bias, which the other blocks borrow).
    First,
    // Recurrent, hybrid and per-layer architectures.
    /// Recurrent blocks of a hybrid: `head_count_kv` of the block is 0.
    Recurrent,
    /// Attention blocks: `head_count_kv` of the block is not 0 (a hybrid's attention
    /// blocks, deci's full attention).
    Attention,
    /// Every block but block 0.
    LaterBlocks,
    /// Blocks with attention: `head_count` or `head_count_kv` not 0 (deci).
    Heads,
    /// Blocks whose `head_count` is not 0 but `head_count_kv` is (deci's linear attention).
    LinearAttention,
    /// Blocks whose `feed_forward_length` is not 0 (deci: the others have no feed-forward).
    FeedForward,
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

pub(super) const fn tensor(
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

/// The tokenizer a tiny model of the architecture gets (llama.cpp's vocabulary loader does
/// not depend on the architecture; this is the kind its real models use).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenizerKind {
    /// SentencePiece (`tokenizer.ggml.model` `llama`), with the 256 byte tokens.
    Spm,
    /// Byte-level BPE (`gpt2`) with this `tokenizer.ggml.pre`.
    Bpe(&'static str),
    // Encoder-only and encoder-decoder models (bert family, t5):
    /// WordPiece (`bert`): `[PAD]`, `[UNK]`, `[CLS]`, `[SEP]`, `[MASK]`, words with the `▁`
    /// the converter puts for a word start, continuation pieces without it.
    Wpm,
    /// Unigram (`t5`): `<pad>`, `</s>`, `<unk>`, pieces with scores.
    Ugm,
    // Recurrent, hybrid and per-layer architectures.
    /// RWKV's trie of escaped byte strings (`rwkv`).
    Rwkv,
    // plamo2
    /// PLaMo-2's (`plamo2`): `<|plamo:unk|>`, `<|plamo:bos|>`, `<|plamo:eos|>`,
    /// `<|plamo:pad|>`, the 256 `<0xXX>` byte tokens it needs all of, then words with scores.
    Plamo2,
}

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
    /// The tokenizer its models use.
    pub tokenizer: TokenizerKind,
    /// Whether its compute graph allows fewer key/value heads than heads (grouped-query
    /// attention); Qwen's fused projection, OLMoE's full-width k normalisation and PLM's
    /// latent attention (its keys have one head per query head) do not. The schema then
    /// requires `head_count_kv` equal to `head_count`.
    pub gqa: bool,
    /// The block counts the compute graph supports (empty: any); baichuan's graph aborts
    /// for a model type other than 7B (32 blocks) or 13B (40).
    pub block_counts: &'static [u64],
    // Latent attention (deepseek2, minicpm3), attention sized by the rotary dimensions, gemma3n
    /// The fewest blocks llama.cpp runs (0: no minimum); gemma3n's KV cache has 20 layers
    /// hard-coded.
    pub min_blocks: u64,
    // Further architectures (grok … llada).
    /// The fewest tokens the compute graph supports (0: any). Chameleon's graph sets the
    /// logits of its image tokens, ids 4 to 8195, to -FLT_MAX, so it needs 8196 tokens: with
    /// fewer than 8192 llama.cpp aborts building the graph (`ggml_set_impl`), with 8192 to
    /// 8194 in its first decode (`ggml_compute_forward_set`), and with 8195 its bounds check
    /// (which tests where the last element starts) passes and one logit is written past the
    /// output.
    pub min_vocab: u64,
    // Recurrent, hybrid and per-layer architectures.
    /// Whether the graph uses `attention.head_count` (the head rules apply); Mamba and RWKV
    /// have no attention heads (their converters write `head_count` 0).
    pub heads: bool,
    /// Whether its blocks differ by design (hybrids of recurrent and attention blocks,
    /// openelm's and deci's per-block heads): `head_count`, `head_count_kv` and
    /// `feed_forward_length` are arrays, and a block's `head_count_kv` of 0 is a block
    /// without key/value attention, not a broken head count.
    pub varied_blocks: bool,
    // plamo2
    /// The head size the loader sizes attention tensors by when it is not `key_length`
    /// (plamo2: `d_inner / dt_rank`); the graph still uses `key_length` and `value_length`
    /// (else `n_embd / n_head`) and aborts building the context when either differs, so the
    /// schema requires both equal to it.
    pub head_size: Option<Dim>,
    /// The releases whose loader the entry describes; a release that loads the architecture
    /// differently has an entry of its own.
    pub releases: Releases,
}

impl Architecture {
    /// The table entry for `general.architecture` = `name`.
    ///
    /// ```
    /// use gguf_llama::schema::Architecture;
    /// assert_eq!(Architecture::named("qwen2").map(|a| a.name), Some("qwen2"));
    /// ```
    pub fn named(name: &str) -> Option<&'static Architecture> {
        Self::named_in(Release::NEWEST, name)
    }

    /// The table entry for `general.architecture` = `name` in `release`.
    pub fn named_in(release: Release, name: &str) -> Option<&'static Architecture> {
        super::ARCHITECTURES
            .iter()
            .find(|a| a.name == name && a.releases.contains(release))
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
/// use gguf_llama::schema::file_type_name;
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

/// `tokenizer.ggml.token_type` values: llama.cpp's `llama_token_type` (0 undefined, 1 normal,
/// 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte; gguf-py's `TokenType` has 1 to 6).
pub const TOKEN_TYPES: std::ops::RangeInclusive<i64> = 0..=6;

// Further architectures (grok … llada): key groups.

/// `{arch}.attention.kv_lora_rank`: `n_lora_kv`.
pub const KV_LORA_RANK: &str = "{arch}.attention.kv_lora_rank";

/// PLM's compressed key/value rank (required).
pub const PLM_KEYS: &[KeySpec] = &[req(KV_LORA_RANK, Count)];

/// DBRX's clamp of q, k and v (required).
pub const CLAMP_KQV_REQUIRED: &[KeySpec] = &[req("{arch}.attention.clamp_kqv", Float)];

/// Chameleon's choice of normalisation after attention and feed-forward (required).
pub const SWIN_NORM: &[KeySpec] = &[req("{arch}.swin_norm", Bool)];

/// `{arch}.rope.dimension_sections`: M-RoPE's four sections (Qwen2-VL; llama.cpp takes an
/// array of exactly four 32-bit integers, or one integer for all four).
pub const ROPE_SECTIONS: &str = "{arch}.rope.dimension_sections";

/// Qwen2-VL's M-RoPE sections (required).
pub const ROPE_SECTIONS_KEYS: &[KeySpec] = &[req(ROPE_SECTIONS, KeyType::Sections)];
