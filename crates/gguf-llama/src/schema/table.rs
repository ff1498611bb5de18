//! The architecture table: for each architecture llama.cpp's loader knows and the schema
//! checks, its keys and tensors as data, transcribed from `llama_model::load_hparams` and
//! `llama_model::load_tensors` (`src/llama-model.cpp` of the llama.cpp that
//! [`Release`](crate::Release) names). A tensor created with flag 0 is
//! required, one with `TENSOR_NOT_REQUIRED` optional; a tensor the loader does not create
//! (such as `output.weight` of gemma, which reuses the embeddings) is not listed, and a file
//! that has it is refused ("wrong number of tensors"). The same table drives
//! `gguf fixtures --arch` (gguf-tools' `fixtures::tiny_model`, whose own values for each
//! architecture's tiny model are in `fixtures/tiny.rs`).
//!
//! Known simplifications: phi2 may store q, k and v apart instead of `attn_qkv`; the table
//! requires the fused form (the one its converter writes). phi3's `attn_qkv` is optional to
//! the loader but its graph needs it, so the table requires it. `head_count`,
//! `head_count_kv` and `feed_forward_length` may be arrays with one value per block in every
//! architecture, as llama.cpp reads them (`get_key_or_arr`; gemma3n's converter writes
//! `feed_forward_length` so); they give per-block shapes and, for jamba, granitehybrid, lfm2,
//! plamo2, openelm and deci, per-block tensor sets (`When::Recurrent`, `Attention`, `Heads`,
//! ...); the other simplifications of those architectures are noted at their groups.
//! deepseek2 with 27 blocks (V2-Lite, `attn_q` instead of
//! the q LoRA pair, no `q_lora_rank`) and glm4moe's NextN layers (`nextn_predict_layers`,
//! `blk.N.nextn.*`) are not modelled; dots1's and smallthinker's `expert_gating_func` and
//! smallthinker's `expert_feed_forward_length` are optional to their loaders but required here
//! (without them the graph aborts, or the experts are zero wide).

use super::arch::*;
use super::arch::{opt, req, tensor, TOKENIZER_REQUIRED};
use crate::{Release, Releases};
use Dim::*;
use ExpertUse::{Always as AllExperts, Never, Optional};
use KeyType::Float;
use Scope::{Block, Global};
use TokenizerKind::{Bpe, Plamo2, Rwkv, Spm};
use When::{Always, Dense};

/// A tensor every model has once.
const fn global(name: &'static str, shape: &'static [Dim]) -> ExpectedTensor {
    tensor(name, Global, shape, true, Always)
}
/// A tensor a model may have once.
const fn optional_global(name: &'static str, shape: &'static [Dim]) -> ExpectedTensor {
    tensor(name, Global, shape, false, Always)
}
/// A tensor every block has.
const fn block(name: &'static str, shape: &'static [Dim]) -> ExpectedTensor {
    tensor(name, Block, shape, true, Always)
}
/// A tensor every block may have.
const fn optional_block(name: &'static str, shape: &'static [Dim]) -> ExpectedTensor {
    tensor(name, Block, shape, false, Always)
}
/// A tensor of the blocks without experts ([`When::Dense`]).
const fn dense_block(name: &'static str, shape: &'static [Dim], required: bool) -> ExpectedTensor {
    tensor(name, Block, shape, required, Dense)
}
/// A tensor of the blocks with experts ([`When::Experts`]).
const fn expert_block(name: &'static str, shape: &'static [Dim], required: bool) -> ExpectedTensor {
    tensor(name, Block, shape, required, When::Experts)
}

const TOK_EMBD: &[ExpectedTensor] = &[global("token_embd.weight", &[Embd, Vocab])];
const OUT_NORM: &[ExpectedTensor] = &[global("output_norm.weight", &[Embd])];
const OUT_NORM_B: &[ExpectedTensor] = &[global("output_norm.bias", &[Embd])];
/// `output.weight`, absent when the embeddings are tied.
const OUTPUT_OPT: &[ExpectedTensor] = &[optional_global("output.weight", &[Embd, Vocab])];
const OUTPUT: &[ExpectedTensor] = &[global("output.weight", &[Embd, Vocab])];
const ATTN_NORM: &[ExpectedTensor] = &[block("attn_norm.weight", &[Embd])];
const ATTN_NORM_B: &[ExpectedTensor] = &[block("attn_norm.bias", &[Embd])];
const FFN_NORM: &[ExpectedTensor] = &[block("ffn_norm.weight", &[Embd])];
const FFN_NORM_B: &[ExpectedTensor] = &[block("ffn_norm.bias", &[Embd])];
/// Separate q, k, v and output projections.
const ATTN: &[ExpectedTensor] = &[
    block("attn_q.weight", &[Embd, Q]),
    block("attn_k.weight", &[Embd, K]),
    block("attn_v.weight", &[Embd, V]),
    block("attn_output.weight", &[Q, Embd]),
];
const ATTN_BIAS: &[ExpectedTensor] = &[
    block("attn_q.bias", &[Embd]),
    block("attn_k.bias", &[K]),
    block("attn_v.bias", &[V]),
];
const ATTN_BIAS_OPT: &[ExpectedTensor] = &[
    optional_block("attn_q.bias", &[Embd]),
    optional_block("attn_k.bias", &[K]),
    optional_block("attn_v.bias", &[V]),
];
const ATTN_OUT_BIAS: &[ExpectedTensor] = &[block("attn_output.bias", &[Embd])];
const ATTN_OUT_BIAS_OPT: &[ExpectedTensor] = &[optional_block("attn_output.bias", &[Embd])];
/// A fused q, k, v projection.
const ATTN_QKV: &[ExpectedTensor] = &[
    block("attn_qkv.weight", &[Embd, Qkv]),
    block("attn_output.weight", &[Embd, Embd]),
];
const ATTN_QKV_BIAS: &[ExpectedTensor] = &[block("attn_qkv.bias", &[Qkv])];
/// q and k normalised per head.
const QK_NORM: &[ExpectedTensor] = &[
    block("attn_q_norm.weight", &[HeadK]),
    block("attn_k_norm.weight", &[HeadK]),
];
const POST_NORMS: &[ExpectedTensor] = &[
    block("post_attention_norm.weight", &[Embd]),
    block("post_ffw_norm.weight", &[Embd]),
];
/// A gated feed-forward block (gate, down, up) in blocks without experts.
const FFN_GLU: &[ExpectedTensor] = &[
    dense_block("ffn_gate.weight", &[Embd, Ff], true),
    dense_block("ffn_down.weight", &[Ff, Embd], true),
    dense_block("ffn_up.weight", &[Embd, Ff], true),
];
/// An ungated feed-forward block (down, up).
const FFN_PLAIN: &[ExpectedTensor] = &[
    dense_block("ffn_down.weight", &[Ff, Embd], true),
    dense_block("ffn_up.weight", &[Embd, Ff], true),
];
const FFN_PLAIN_BIAS: &[ExpectedTensor] = &[
    dense_block("ffn_down.bias", &[Embd], true),
    dense_block("ffn_up.bias", &[Ff], true),
];
const FFN_PLAIN_BIAS_OPT: &[ExpectedTensor] = &[
    dense_block("ffn_down.bias", &[Embd], false),
    dense_block("ffn_up.bias", &[Ff], false),
];
/// Experts of width `n_ff`, gate optional (llama, granitemoe).
const MOE_FF: &[ExpectedTensor] = &[
    expert_block("ffn_gate_inp.weight", &[Embd, Experts], true),
    expert_block("ffn_gate_exps.weight", &[Embd, Ff, Experts], false),
    expert_block("ffn_down_exps.weight", &[Ff, Embd, Experts], true),
    expert_block("ffn_up_exps.weight", &[Embd, Ff, Experts], true),
];
/// Experts of width `n_ff_exp`, gate required.
const MOE_FF_EXP: &[ExpectedTensor] = &[
    expert_block("ffn_gate_inp.weight", &[Embd, Experts], true),
    expert_block("ffn_gate_exps.weight", &[Embd, FfExp, Experts], true),
    expert_block("ffn_down_exps.weight", &[FfExp, Embd, Experts], true),
    expert_block("ffn_up_exps.weight", &[Embd, FfExp, Experts], true),
];

const LLAMA_TENSORS: &[ExpectedTensor] = &[
    optional_global("rope_freqs.weight", &[RotHalf]),
    optional_block("attn_q.bias", &[Embd]),
    optional_block("attn_k.bias", &[K]),
    optional_block("attn_v.bias", &[V]),
    optional_block("attn_output.bias", &[Embd]),
    dense_block("ffn_gate.bias", &[Ff], false),
    dense_block("ffn_down.bias", &[Embd], false),
    dense_block("ffn_up.bias", &[Ff], false),
];
const LLAMA: &[&[ExpectedTensor]] = &[
    TOK_EMBD,
    OUT_NORM,
    OUTPUT_OPT,
    ATTN_NORM,
    ATTN,
    FFN_NORM,
    FFN_GLU,
    MOE_FF,
    LLAMA_TENSORS,
];
/// internlm2, xverse, baichuan: llama without optional tensors, `output.weight` required.
const PLAIN_LLAMA: &[&[ExpectedTensor]] = &[
    TOK_EMBD, OUT_NORM, OUTPUT, ATTN_NORM, ATTN, FFN_NORM, FFN_GLU,
];
/// smollm3 (and others): llama's tensors, `output.weight` optional.
const TIED_LLAMA: &[&[ExpectedTensor]] = &[
    TOK_EMBD, OUT_NORM, OUTPUT_OPT, ATTN_NORM, ATTN, FFN_NORM, FFN_GLU,
];
const ROPE_FREQS: &[ExpectedTensor] = &[optional_global("rope_freqs.weight", &[RotHalf])];
const ROPE_FACTORS: &[ExpectedTensor] = &[
    optional_global("rope_factors_long.weight", &[RotHalf]),
    optional_global("rope_factors_short.weight", &[RotHalf]),
];
const QWEN2_OUTPUT_B: &[ExpectedTensor] = &[optional_global("output.bias", &[Vocab])];
const QWEN: &[ExpectedTensor] = &[
    block("attn_qkv.weight", &[Embd, Embd3]),
    block("attn_qkv.bias", &[Embd3]),
    block("attn_output.weight", &[Embd, Embd]),
    dense_block("ffn_gate.weight", &[Embd, FfHalf], true),
    dense_block("ffn_down.weight", &[FfHalf, Embd], true),
    dense_block("ffn_up.weight", &[Embd, FfHalf], true),
];
const SHARED_EXPERT: &[ExpectedTensor] = &[
    expert_block("ffn_gate_inp_shexp.weight", &[Embd], true),
    expert_block("ffn_gate_shexp.weight", &[Embd, FfShexp], true),
    expert_block("ffn_down_shexp.weight", &[FfShexp, Embd], true),
    expert_block("ffn_up_shexp.weight", &[Embd, FfShexp], true),
];
const DEEPSEEK_SHARED: &[ExpectedTensor] = &[
    expert_block("ffn_gate_shexp.weight", &[Embd, FfExpShared], true),
    expert_block("ffn_down_shexp.weight", &[FfExpShared, Embd], true),
    expert_block("ffn_up_shexp.weight", &[Embd, FfExpShared], true),
];
const PHI2: &[ExpectedTensor] = &[
    global("output.bias", &[Vocab]),
    block("attn_output.bias", &[Embd]),
];
const PHI3: &[ExpectedTensor] = &[
    block("attn_qkv.weight", &[Embd, Qkv]),
    block("attn_output.weight", &[Embd, Embd]),
    dense_block("ffn_down.weight", &[Ff, Embd], true),
    dense_block("ffn_up.weight", &[Embd, Ff2], true),
];
/// ChatGLM's fused projections: q, k and v (bias optional), gate and up. (Without
/// `attn_qkv` the loader takes separate q, k, v instead; the table requires the fused form,
/// the one the converter writes. GLM-4 has no `attn_qkv` in llama-arch.cpp's names, so its
/// loader always takes them apart.)
const GLM: &[ExpectedTensor] = &[
    block("attn_qkv.weight", &[Embd, Qkv]),
    optional_block("attn_qkv.bias", &[Qkv]),
    block("attn_output.weight", &[Embd, Embd]),
    dense_block("ffn_up.weight", &[Embd, Ff2], true),
    dense_block("ffn_down.weight", &[Ff, Embd], true),
];
const GLM4: &[ExpectedTensor] = &[
    block("attn_q.weight", &[Embd, Q]),
    block("attn_k.weight", &[Embd, K]),
    block("attn_v.weight", &[Embd, V]),
    block("attn_output.weight", &[Embd, Embd]),
    dense_block("ffn_up.weight", &[Embd, Ff2], true),
    dense_block("ffn_down.weight", &[Ff, Embd], true),
];
/// Llama 4: one shared expert as wide as the routed ones.
const LLAMA4_SHARED: &[ExpectedTensor] = &[
    expert_block("ffn_gate_shexp.weight", &[Embd, FfExp], true),
    expert_block("ffn_down_shexp.weight", &[FfExp, Embd], true),
    expert_block("ffn_up_shexp.weight", &[Embd, FfExp], true),
];
const LLAMA4_KEYS: &[KeySpec] = &[
    KeySpec {
        name: EXPERT_FF_LENGTH,
        ty: KeyType::Count,
        required: true,
    },
    KeySpec {
        name: INTERLEAVE_MOE_LAYER_STEP,
        ty: KeyType::Count,
        required: true,
    },
];
/// EXAONE 4: no pre-attention norm; q, k, v and a square output projection.
const EXAONE4: &[ExpectedTensor] = &[
    block("attn_q.weight", &[Embd, Q]),
    block("attn_k.weight", &[Embd, K]),
    block("attn_v.weight", &[Embd, V]),
    block("attn_output.weight", &[Embd, Embd]),
];
const POS_EMBD: &[ExpectedTensor] = &[global("position_embd.weight", &[Embd, Ctx])];
const BLOOM_EMBD_NORM: &[ExpectedTensor] = &[
    global("token_embd_norm.weight", &[Embd]),
    global("token_embd_norm.bias", &[Embd]),
];
const FALCON_NORM_2: &[ExpectedTensor] = &[
    optional_block("attn_norm_2.weight", &[Embd]),
    optional_block("attn_norm_2.bias", &[Embd]),
];
const MPT_OPTIONAL: &[ExpectedTensor] = &[
    optional_global("position_embd.weight", &[Embd, Ctx]),
    optional_global("output_norm.bias", &[Embd]),
    optional_block("attn_norm.bias", &[Embd]),
    optional_block("attn_qkv.bias", &[Qkv]),
    optional_block("attn_output.bias", &[Embd]),
    optional_block("ffn_norm.bias", &[Embd]),
    dense_block("ffn_down.bias", &[Embd], false),
    dense_block("ffn_up.bias", &[Ff], false),
    optional_block("attn_q_norm.weight", &[Embd]),
    optional_block("attn_q_norm.bias", &[Embd]),
    optional_block("attn_k_norm.weight", &[Embd]),
    optional_block("attn_k_norm.bias", &[Embd]),
    optional_block("ffn_act.scales", &[Ff]),
];
const STABLELM_OPTIONAL: &[ExpectedTensor] = &[
    optional_block("attn_q_norm.weight", &[HeadK, Heads]),
    optional_block("attn_k_norm.weight", &[HeadK, HeadsKv]),
    optional_block("ffn_norm.weight", &[Embd]),
    optional_block("ffn_norm.bias", &[Embd]),
];
const OLMO2_NORMS: &[ExpectedTensor] = &[
    block("attn_q_norm.weight", &[Embd]),
    block("attn_k_norm.weight", &[K]),
];
const OLMOE_NORMS: &[ExpectedTensor] = &[
    block("attn_q_norm.weight", &[Embd]),
    block("attn_k_norm.weight", &[Embd]),
];
const COMMAND_R_NORMS: &[ExpectedTensor] = &[
    optional_block("attn_q_norm.weight", &[HeadK, Heads]),
    optional_block("attn_k_norm.weight", &[HeadK, HeadsKv]),
];
const JAIS_FFN: &[ExpectedTensor] = &[
    dense_block("ffn_gate.weight", &[Embd, Ff], true),
    dense_block("ffn_gate.bias", &[Ff], true),
];
macro_rules! layout {
    ($($group:expr),* $(,)?) => {
        &[$($group),*]
    };
}

/// Shorthand for an architecture entry.
const fn arch(
    name: &'static str,
    keys: &'static [&'static [KeySpec]],
    tensors: &'static [&'static [ExpectedTensor]],
    experts: ExpertUse,
    tokenizer: TokenizerKind,
) -> Architecture {
    Architecture {
        name,
        keys,
        tensors,
        experts,
        tokenizer,
        gqa: true,
        block_counts: &[],
        min_blocks: 0,
        min_vocab: 0,
        heads: true,
        varied_blocks: false,
        head_size: None,
        releases: Releases::ALL,
    }
}

/// An entry for an architecture new in llama-cpp-python 0.3.36's llama.cpp, whose loader is
/// `src/models/NAME.cpp` there: older releases refuse it ("unknown model architecture").
const fn since_0336(entry: Architecture) -> Architecture {
    Architecture {
        releases: Releases::since(Release::LlamaCppPython0336),
        ..entry
    }
}

const T: &[KeySpec] = TOKENIZER_REQUIRED;
const FLOAT_ATTN_SCALE: &[KeySpec] = &[KeySpec {
    name: "{arch}.attention.scale",
    ty: Float,
    required: false,
}];

/// The architectures the schema knows: their keys, tensors, expert use and tokenizer.
///
/// ```
/// use gguf_llama::schema::{Architecture, ExpertUse};
/// assert_eq!(Architecture::named("granitemoe").map(|a| a.experts), Some(ExpertUse::Always));
/// assert!(Architecture::named("bert").is_some());
/// ```
pub const ARCHITECTURES: &[Architecture] = &[
    arch(
        "llama",
        &[BASE_KEYS, RMS_EPS, EXPERT_KEYS, T],
        LLAMA,
        Optional,
        Spm,
    ),
    since_0336(arch(
        "mistral3",
        &[BASE_KEYS, RMS_EPS, EXPERT_KEYS, T],
        LLAMA,
        Optional,
        Spm,
    )),
    arch(
        "refact",
        &[BASE_KEYS, RMS_EPS, EXPERT_KEYS, T],
        LLAMA,
        Optional,
        Bpe("refact"),
    ),
    arch(
        "minicpm",
        &[BASE_KEYS, RMS_EPS, MINICPM_KEYS, EXPERT_KEYS, T],
        LLAMA,
        Optional,
        Spm,
    ),
    arch(
        "granite",
        &[BASE_KEYS, RMS_EPS, EXPERT_KEYS, GRANITE_KEYS, T],
        LLAMA,
        Optional,
        Bpe("refact"),
    ),
    arch(
        "granitemoe",
        &[BASE_KEYS, RMS_EPS, EXPERT_KEYS_REQUIRED, GRANITE_KEYS, T],
        LLAMA,
        AllExperts,
        Bpe("refact"),
    ),
    arch(
        "qwen2",
        &[BASE_KEYS, RMS_EPS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            QWEN2_OUTPUT_B,
            ATTN_NORM,
            ATTN,
            ATTN_BIAS,
            FFN_NORM,
            FFN_GLU
        ],
        Never,
        Bpe("qwen2"),
    ),
    Architecture {
        gqa: false,
        ..arch(
            "qwen",
            &[BASE_KEYS, RMS_EPS, T],
            layout![TOK_EMBD, OUT_NORM, OUTPUT, ATTN_NORM, FFN_NORM, QWEN],
            Never,
            Bpe("qwen2"),
        )
    },
    arch(
        "qwen2moe",
        &[BASE_KEYS, RMS_EPS, EXPERT_KEYS_REQUIRED, EXPERT_FF_KEYS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT,
            ATTN_NORM,
            ATTN,
            ATTN_BIAS_OPT,
            FFN_NORM,
            MOE_FF_EXP,
            SHARED_EXPERT
        ],
        AllExperts,
        Bpe("qwen2"),
    ),
    arch(
        "qwen3",
        &[BASE_KEYS, RMS_EPS, T],
        layout![TOK_EMBD, OUT_NORM, OUTPUT_OPT, ATTN_NORM, ATTN, QK_NORM, FFN_NORM, FFN_GLU],
        Never,
        Bpe("qwen2"),
    ),
    arch(
        "qwen3moe",
        &[BASE_KEYS, RMS_EPS, EXPERT_KEYS_REQUIRED, EXPERT_FF_KEYS, T],
        layout![TOK_EMBD, OUT_NORM, OUTPUT_OPT, ATTN_NORM, ATTN, QK_NORM, FFN_NORM, MOE_FF_EXP],
        AllExperts,
        Bpe("qwen2"),
    ),
    arch(
        "internlm2",
        &[BASE_KEYS, RMS_EPS, T],
        PLAIN_LLAMA,
        Never,
        Spm,
    ),
    arch("xverse", &[BASE_KEYS, RMS_EPS, T], PLAIN_LLAMA, Never, Spm),
    Architecture {
        block_counts: &[32, 40],
        ..arch(
            "baichuan",
            &[BASE_KEYS, RMS_EPS, T],
            PLAIN_LLAMA,
            Never,
            Spm,
        )
    },
    arch(
        "orion",
        &[BASE_KEYS, NORM_EPS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUT_NORM_B,
            OUTPUT,
            ATTN_NORM,
            ATTN_NORM_B,
            ATTN,
            FFN_NORM,
            FFN_NORM_B,
            FFN_GLU
        ],
        Never,
        Spm,
    ),
    arch(
        "smollm3",
        &[BASE_KEYS, RMS_EPS, T],
        TIED_LLAMA,
        Never,
        Bpe("smollm"),
    ),
    arch(
        "exaone",
        &[BASE_KEYS, RMS_EPS, T],
        layout![TOK_EMBD, OUT_NORM, OUTPUT_OPT, ATTN_NORM, ATTN, FFN_NORM, ROPE_FREQS, FFN_GLU],
        Never,
        Bpe("exaone"),
    ),
    arch(
        "arcee",
        &[BASE_KEYS, RMS_EPS, T],
        layout![TOK_EMBD, OUT_NORM, OUTPUT_OPT, ATTN_NORM, ATTN, FFN_NORM, ROPE_FREQS, FFN_PLAIN],
        Never,
        Bpe("llama-bpe"),
    ),
    arch(
        "hunyuan-dense",
        &[BASE_KEYS, RMS_EPS, T],
        layout![TOK_EMBD, OUT_NORM, OUTPUT_OPT, ATTN_NORM, ATTN, QK_NORM, FFN_NORM, FFN_GLU],
        Never,
        Bpe("hunyuan-dense"),
    ),
    arch(
        "ernie4_5",
        &[BASE_KEYS, RMS_EPS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN,
            ATTN_BIAS_OPT,
            ATTN_OUT_BIAS_OPT,
            FFN_NORM,
            FFN_GLU
        ],
        Never,
        Spm,
    ),
    arch(
        "gemma",
        &[BASE_KEYS, RMS_EPS, T],
        layout![TOK_EMBD, OUT_NORM, ATTN_NORM, ATTN, FFN_NORM, FFN_GLU],
        Never,
        Spm,
    ),
    arch(
        "gemma2",
        &[BASE_KEYS, RMS_EPS, SLIDING_WINDOW_OPT, SOFTCAP_KEYS, T],
        layout![TOK_EMBD, OUT_NORM, ATTN_NORM, ATTN, POST_NORMS, FFN_NORM, FFN_GLU],
        Never,
        Spm,
    ),
    arch(
        "gemma3",
        &[BASE_KEYS, RMS_EPS, SLIDING_WINDOW, FLOAT_ATTN_SCALE, T],
        layout![
            TOK_EMBD, OUT_NORM, OUTPUT_OPT, ATTN_NORM, ATTN, POST_NORMS, QK_NORM, FFN_NORM, FFN_GLU
        ],
        Never,
        Spm,
    ),
    arch(
        "phi2",
        &[BASE_KEYS, NORM_EPS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUT_NORM_B,
            OUTPUT,
            PHI2,
            ATTN_NORM,
            ATTN_NORM_B,
            ATTN_QKV,
            ATTN_QKV_BIAS,
            FFN_PLAIN,
            FFN_PLAIN_BIAS
        ],
        Never,
        Bpe("phi-2"),
    ),
    arch(
        "phi3",
        &[BASE_KEYS, RMS_EPS, SLIDING_WINDOW_OPT, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            FFN_NORM,
            PHI3,
            ROPE_FACTORS
        ],
        Never,
        Spm,
    ),
    arch(
        "gpt2",
        &[BASE_KEYS, NORM_EPS, T],
        layout![
            TOK_EMBD,
            POS_EMBD,
            OUT_NORM,
            OUT_NORM_B,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN_NORM_B,
            ATTN_QKV,
            ATTN_QKV_BIAS,
            ATTN_OUT_BIAS,
            FFN_NORM,
            FFN_NORM_B,
            FFN_PLAIN,
            FFN_PLAIN_BIAS
        ],
        Never,
        Bpe("gpt-2"),
    ),
    arch(
        "starcoder",
        &[BASE_KEYS, NORM_EPS, T],
        layout![
            TOK_EMBD,
            POS_EMBD,
            OUT_NORM,
            OUT_NORM_B,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN_NORM_B,
            ATTN_QKV,
            ATTN_QKV_BIAS,
            ATTN_OUT_BIAS,
            FFN_NORM,
            FFN_NORM_B,
            FFN_PLAIN,
            FFN_PLAIN_BIAS
        ],
        Never,
        Bpe("starcoder"),
    ),
    arch(
        "starcoder2",
        &[BASE_KEYS, NORM_EPS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUT_NORM_B,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN_NORM_B,
            ATTN,
            ATTN_BIAS,
            ATTN_OUT_BIAS,
            FFN_NORM,
            FFN_NORM_B,
            FFN_PLAIN,
            FFN_PLAIN_BIAS
        ],
        Never,
        Bpe("starcoder"),
    ),
    arch(
        "gptneox",
        &[BASE_KEYS, NORM_EPS, PARALLEL_RESIDUAL, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUT_NORM_B,
            OUTPUT,
            ATTN_NORM,
            ATTN_NORM_B,
            ATTN_QKV,
            ATTN_QKV_BIAS,
            ATTN_OUT_BIAS,
            FFN_NORM,
            FFN_NORM_B,
            FFN_PLAIN,
            FFN_PLAIN_BIAS
        ],
        Never,
        Bpe("gpt-2"),
    ),
    arch(
        "bloom",
        &[BASE_KEYS, NORM_EPS, T],
        layout![
            TOK_EMBD,
            BLOOM_EMBD_NORM,
            OUT_NORM,
            OUT_NORM_B,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN_NORM_B,
            ATTN_QKV,
            ATTN_QKV_BIAS,
            ATTN_OUT_BIAS,
            FFN_NORM,
            FFN_NORM_B,
            FFN_PLAIN,
            FFN_PLAIN_BIAS
        ],
        Never,
        Bpe("bloom"),
    ),
    arch(
        "jais",
        &[BASE_KEYS, NORM_EPS, ALIBI, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUT_NORM_B,
            OUTPUT,
            ATTN_NORM,
            ATTN_NORM_B,
            ATTN_QKV,
            ATTN_QKV_BIAS,
            ATTN_OUT_BIAS,
            FFN_NORM,
            FFN_NORM_B,
            FFN_PLAIN,
            FFN_PLAIN_BIAS,
            JAIS_FFN
        ],
        Never,
        Bpe("jais"),
    ),
    arch(
        "falcon",
        &[BASE_KEYS, NORM_EPS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUT_NORM_B,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN_NORM_B,
            FALCON_NORM_2,
            ATTN_QKV,
            FFN_PLAIN
        ],
        Never,
        Bpe("falcon"),
    ),
    arch(
        "mpt",
        &[BASE_KEYS, NORM_EPS, ALIBI, CLAMP_KQV, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN_QKV,
            FFN_NORM,
            FFN_PLAIN,
            MPT_OPTIONAL
        ],
        Never,
        Bpe("mpt"),
    ),
    arch(
        "stablelm",
        &[BASE_KEYS, NORM_EPS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUT_NORM_B,
            OUTPUT,
            ATTN_NORM,
            ATTN_NORM_B,
            ATTN,
            ATTN_BIAS_OPT,
            STABLELM_OPTIONAL,
            FFN_GLU
        ],
        Never,
        Bpe("stablelm2"),
    ),
    arch(
        "nemotron",
        &[BASE_KEYS, NORM_EPS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUT_NORM_B,
            OUTPUT,
            ATTN_NORM,
            ATTN_NORM_B,
            ATTN,
            ATTN_BIAS_OPT,
            ATTN_OUT_BIAS_OPT,
            FFN_NORM,
            FFN_NORM_B,
            FFN_PLAIN,
            FFN_PLAIN_BIAS_OPT
        ],
        Never,
        Spm,
    ),
    arch(
        "olmo",
        &[BASE_KEYS, NORM_EPS, CLAMP_KQV, T],
        layout![TOK_EMBD, OUTPUT_OPT, ATTN, FFN_GLU],
        Never,
        Bpe("olmo"),
    ),
    arch(
        "olmo2",
        &[BASE_KEYS, RMS_EPS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT,
            ATTN,
            OLMO2_NORMS,
            POST_NORMS,
            FFN_GLU
        ],
        Never,
        Bpe("olmo"),
    ),
    Architecture {
        gqa: false,
        ..arch(
            "olmoe",
            &[BASE_KEYS, RMS_EPS, EXPERT_KEYS_REQUIRED, T],
            layout![
                TOK_EMBD,
                OUT_NORM,
                OUTPUT,
                ATTN_NORM,
                ATTN,
                OLMOE_NORMS,
                FFN_NORM,
                MOE_FF_EXP_AS_FF
            ],
            AllExperts,
            Bpe("olmo"),
        )
    },
    arch(
        "llama4",
        &[BASE_KEYS, RMS_EPS, EXPERT_KEYS_REQUIRED, LLAMA4_KEYS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN,
            FFN_NORM,
            ROPE_FREQS,
            FFN_GLU,
            MOE_FF_EXP,
            LLAMA4_SHARED
        ],
        AllExperts,
        Bpe("llama4"),
    ),
    arch(
        "exaone4",
        &[BASE_KEYS, RMS_EPS, SLIDING_WINDOW_OPT, T],
        layout![TOK_EMBD, OUT_NORM, OUTPUT_OPT, EXAONE4, ROPE_FREQS, POST_NORMS, QK_NORM, FFN_GLU],
        Never,
        Bpe("exaone4"),
    ),
    arch(
        "chatglm",
        &[BASE_KEYS, RMS_EPS, T],
        layout![TOK_EMBD, OUT_NORM, OUTPUT_OPT, ATTN_NORM, GLM, FFN_NORM],
        Never,
        Bpe("chatglm-bpe"),
    ),
    arch(
        "glm4",
        &[BASE_KEYS, RMS_EPS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            GLM4,
            ATTN_BIAS_OPT,
            POST_NORMS,
            FFN_NORM
        ],
        Never,
        Bpe("glm4"),
    ),
    arch(
        "command-r",
        &[BASE_KEYS, NORM_EPS, LOGIT_SCALE, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            ATTN_NORM,
            COMMAND_R_NORMS,
            ATTN,
            FFN_GLU
        ],
        Never,
        Bpe("command-r"),
    ),
    arch(
        "cohere2",
        &[BASE_KEYS, NORM_EPS, LOGIT_SCALE, SLIDING_WINDOW, T],
        layout![TOK_EMBD, OUT_NORM, ATTN_NORM, ATTN, FFN_GLU],
        Never,
        Bpe("command-r"),
    ),
    arch(
        "deepseek",
        &[BASE_KEYS, RMS_EPS, EXPERT_KEYS_REQUIRED, DEEPSEEK_KEYS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT,
            ATTN_NORM,
            ATTN,
            FFN_NORM,
            FFN_GLU,
            MOE_FF_EXP,
            DEEPSEEK_SHARED
        ],
        AllExperts,
        Bpe("deepseek-llm"),
    ),
    arch(
        "phimoe",
        &[BASE_KEYS, RMS_EPS, EXPERT_KEYS_REQUIRED, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUT_NORM_B,
            OUTPUT,
            OUTPUT_B,
            ATTN_NORM,
            ATTN_NORM_B,
            PHIMOE_ATTN,
            FFN_NORM,
            FFN_NORM_B,
            MOE_FF_EXP_AS_FF,
            ROPE_FACTORS
        ],
        AllExperts,
        Spm,
    ),
    // Latent attention, attention sized by the rotary dimensions, per-layer inputs: deepseek2, minicpm3, glm4moe, bailingmoe, dots1, ernie4_5-moe, hunyuan-moe,
    // gpt-oss, smallthinker, gemma3n.
    arch(
        "deepseek2",
        &[
            BASE_KEYS,
            RMS_EPS,
            EXPERT_KEYS_REQUIRED,
            DEEPSEEK_KEYS,
            MLA_KEYS,
            DEEPSEEK2_KEYS,
            T,
        ],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT,
            ATTN_NORM,
            MLA_ATTN,
            DEEPSEEK2_ATTN,
            FFN_NORM,
            FFN_GLU,
            MOE_FF_EXP,
            EXP_PROBS_B_OPT,
            DEEPSEEK_SHARED
        ],
        AllExperts,
        Bpe("deepseek-v3"),
    ),
    Architecture {
        gqa: false,
        ..arch(
            "minicpm3",
            &[BASE_KEYS, RMS_EPS, MLA_KEYS, T],
            layout![
                TOK_EMBD,
                OUT_NORM,
                OUTPUT_OPT,
                ATTN_NORM,
                MLA_ATTN,
                MINICPM3_ATTN,
                FFN_NORM,
                FFN_GLU,
                ROPE_FACTORS
            ],
            Never,
            Spm,
        )
    },
    arch(
        "glm4moe",
        &[BASE_KEYS, RMS_EPS, EXPERT_KEYS_REQUIRED, GLM4MOE_KEYS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN,
            GLM4MOE_ATTN,
            FFN_GLU,
            MOE_FF_EXP,
            GLM4MOE_EXPERTS
        ],
        AllExperts,
        Bpe("glm4"),
    ),
    arch(
        "bailingmoe",
        &[
            BASE_KEYS,
            RMS_EPS,
            EXPERT_KEYS_REQUIRED,
            DEEPSEEK_KEYS,
            EXPERT_WEIGHTS_NORM,
            T,
        ],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT,
            ATTN_NORM,
            ROT_ATTN,
            FFN_NORM,
            BAILINGMOE_FFN
        ],
        AllExperts,
        Bpe("bailingmoe"),
    ),
    Architecture {
        gqa: false,
        ..arch(
            "dots1",
            &[
                BASE_KEYS,
                RMS_EPS,
                EXPERT_KEYS_REQUIRED,
                DEEPSEEK_KEYS,
                EXPERT_WEIGHTS_NORM,
                GATING_FUNC_REQUIRED,
                T,
            ],
            layout![
                TOK_EMBD,
                OUT_NORM,
                OUTPUT,
                ATTN_NORM,
                DOTS1_ATTN,
                QK_NORM,
                FFN_NORM,
                FFN_GLU,
                MOE_FF_EXP,
                EXP_PROBS_B_OPT,
                DEEPSEEK_SHARED
            ],
            AllExperts,
            Bpe("qwen2"),
        )
    },
    arch(
        "ernie4_5-moe",
        &[
            BASE_KEYS,
            RMS_EPS,
            EXPERT_KEYS_REQUIRED,
            ERNIE4_5_MOE_KEYS,
            T,
        ],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN,
            ATTN_BIAS_OPT,
            ATTN_OUT_BIAS_OPT,
            FFN_NORM,
            FFN_GLU,
            ERNIE4_5_MOE_EXPERTS
        ],
        AllExperts,
        Spm,
    ),
    arch(
        "hunyuan-moe",
        &[
            BASE_KEYS,
            RMS_EPS,
            EXPERT_KEYS_REQUIRED,
            HUNYUAN_MOE_KEYS,
            T,
        ],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN,
            QK_NORM,
            FFN_NORM,
            MOE_FF_EXP_AS_FF,
            HUNYUAN_MOE_SHARED
        ],
        AllExperts,
        Bpe("hunyuan"),
    ),
    arch(
        "gpt-oss",
        &[
            BASE_KEYS,
            RMS_EPS,
            EXPERT_KEYS_REQUIRED,
            EXPERT_FF_REQUIRED,
            SLIDING_WINDOW,
            T,
        ],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT,
            ATTN_NORM,
            ROT_ATTN,
            GPT_OSS_ATTN,
            MOE_FF_EXP,
            GPT_OSS_EXPERT_BIAS
        ],
        AllExperts,
        Bpe("gpt-4o"),
    ),
    arch(
        "smallthinker",
        &[
            BASE_KEYS,
            RMS_EPS,
            EXPERT_KEYS_REQUIRED,
            EXPERT_FF_REQUIRED,
            GATING_FUNC_REQUIRED,
            SLIDING_WINDOW_OPT,
            T,
        ],
        layout![TOK_EMBD, OUT_NORM, OUTPUT_OPT, ATTN_NORM, ATTN, FFN_NORM, MOE_FF_EXP],
        AllExperts,
        Bpe("qwen2"),
    ),
    // The KV cache holds the first 20 blocks (the later ones reuse them), so llama.cpp needs
    // at least 20.
    Architecture {
        min_blocks: 20,
        ..arch(
            "gemma3n",
            &[BASE_KEYS, RMS_EPS, SLIDING_WINDOW, T],
            layout![
                OUTPUT_OPT,
                TOK_EMBD,
                GEMMA3N_GLOBAL,
                OUT_NORM,
                ATTN_NORM,
                ATTN,
                QK_NORM,
                GEMMA3N_NORMS,
                FFN_NORM,
                FFN_GLU,
                GEMMA3N_BLOCK
            ],
            Never,
            Spm,
        )
    },
    // Encoder-only models (bert family): no output head; llama.cpp runs them with embeddings
    // on (scripts/llama/loader.cpp). No grouped-query attention in their converters.
    Architecture {
        gqa: false,
        ..arch(
            "bert",
            &[BASE_KEYS, NORM_EPS, CAUSAL, POOLING_OPT, T],
            layout![
                TOK_EMBD,
                POS_EMBD,
                BERT_EMBD,
                BERT_ATTN,
                ATTN_OUT_BIAS,
                BERT_BLOCK,
                FFN_PLAIN,
                FFN_PLAIN_BIAS
            ],
            Never,
            TokenizerKind::Wpm,
        )
    },
    Architecture {
        gqa: false,
        ..arch(
            "nomic-bert",
            &[BASE_KEYS, NORM_EPS, CAUSAL, POOLING, T],
            layout![TOK_EMBD, BERT_EMBD, NOMIC_ATTN, BERT_BLOCK, FFN_GLU],
            Never,
            TokenizerKind::Wpm,
        )
    },
    Architecture {
        gqa: false,
        ..arch(
            "nomic-bert-moe",
            &[
                BASE_KEYS,
                NORM_EPS,
                CAUSAL,
                POOLING,
                EXPERT_KEYS_REQUIRED,
                MOE_EVERY,
                T,
            ],
            layout![
                TOK_EMBD,
                BERT_EMBD,
                NOMIC_ATTN,
                ATTN_OUT_BIAS,
                BERT_BLOCK,
                FFN_PLAIN,
                FFN_PLAIN_BIAS,
                NOMIC_MOE
            ],
            AllExperts,
            TokenizerKind::Wpm,
        )
    },
    Architecture {
        gqa: false,
        ..arch(
            "neo-bert",
            &[BASE_KEYS, RMS_EPS, CAUSAL, POOLING, T],
            layout![TOK_EMBD, NEO_BERT],
            Never,
            TokenizerKind::Wpm,
        )
    },
    Architecture {
        gqa: false,
        ..arch(
            "jina-bert-v2",
            &[BASE_KEYS, NORM_EPS, CAUSAL, POOLING_OPT, T],
            layout![TOK_EMBD, JINA_BERT_V2, BERT_BLOCK],
            Never,
            TokenizerKind::Wpm,
        )
    },
    // Encoder-decoder (t5) and its encoder alone (t5encoder, run with embeddings on).
    Architecture {
        gqa: false,
        ..arch(
            "t5",
            &[BASE_KEYS, RMS_EPS, REL_BUCKETS, DECODER_START, T],
            layout![TOK_EMBD, OUTPUT_OPT, T5_ENC, T5_DEC],
            Never,
            TokenizerKind::Ugm,
        )
    },
    Architecture {
        gqa: false,
        ..arch(
            "t5encoder",
            &[BASE_KEYS, RMS_EPS, REL_BUCKETS, T],
            layout![TOK_EMBD, OUTPUT_OPT, T5_ENC],
            Never,
            TokenizerKind::Ugm,
        )
    },
    // Further architectures (grok … llada); their tensor groups are at the end of the file.
    arch(
        "grok",
        &[BASE_KEYS, RMS_EPS, EXPERT_KEYS_REQUIRED, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            SQUARE_ATTN,
            GROK_NORMS,
            FFN_NORM,
            MOE_FF
        ],
        AllExperts,
        Spm,
    ),
    arch(
        "dbrx",
        &[
            BASE_KEYS,
            NORM_EPS,
            CLAMP_KQV_REQUIRED,
            EXPERT_KEYS_REQUIRED,
            T,
        ],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT,
            ATTN_NORM,
            ATTN_QKV,
            ATTN_OUT_NORM,
            MOE_FF_EXP_AS_FF
        ],
        AllExperts,
        Bpe("dbrx"),
    ),
    arch(
        "arctic",
        &[BASE_KEYS, RMS_EPS, EXPERT_KEYS_REQUIRED, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            SQUARE_ATTN,
            FFN_NORM,
            ARCTIC_FFN,
            MOE_FF_EXP_AS_FF
        ],
        AllExperts,
        Spm,
    ),
    arch(
        "codeshell",
        &[BASE_KEYS, NORM_EPS, T],
        layout![
            TOK_EMBD_OPT,
            OUT_NORM,
            OUT_NORM_B,
            OUTPUT,
            ATTN_NORM,
            ATTN_NORM_B,
            ATTN_QKV,
            ATTN_QKV_BIAS,
            ATTN_OUT_BIAS,
            FFN_NORM,
            FFN_NORM_B,
            FFN_PLAIN,
            FFN_PLAIN_BIAS
        ],
        Never,
        Bpe("codeshell"),
    ),
    arch(
        "plamo",
        &[BASE_KEYS, RMS_EPS, T],
        layout![TOK_EMBD, OUT_NORM, OUTPUT, ATTN_NORM, SQUARE_ATTN, FFN_GLU],
        Never,
        Spm,
    ),
    Architecture {
        gqa: false,
        ..arch(
            "plm",
            &[BASE_KEYS, RMS_EPS, PLM_KEYS, T],
            layout![TOK_EMBD, OUT_NORM, ATTN_NORM, PLM_ATTN, FFN_NORM, FFN_PLAIN],
            Never,
            Bpe("default"),
        )
    },
    arch(
        "bitnet",
        &[BASE_KEYS, RMS_EPS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            ATTN_NORM,
            SQUARE_ATTN,
            FFN_NORM,
            FFN_GLU,
            BITNET_EXTRA
        ],
        Never,
        Spm,
    ),
    Architecture {
        min_vocab: 8196,
        ..arch(
            "chameleon",
            &[BASE_KEYS, RMS_EPS, SWIN_NORM, T],
            layout![
                TOK_EMBD,
                OUT_NORM,
                OUTPUT_OPT,
                ATTN_NORM,
                CHAMELEON_QK_NORM,
                SQUARE_ATTN,
                FFN_NORM,
                FFN_GLU
            ],
            Never,
            Bpe("chameleon"),
        )
    },
    arch(
        "qwen2vl",
        &[BASE_KEYS, RMS_EPS, ROPE_SECTIONS_KEYS, T],
        QWEN2_LIKE,
        Never,
        Bpe("qwen2"),
    ),
    arch(
        "dream",
        &[BASE_KEYS, RMS_EPS, T],
        QWEN2_LIKE,
        Never,
        Bpe("qwen2"),
    ),
    arch(
        "llada",
        &[BASE_KEYS, RMS_EPS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN,
            ATTN_OUT_BIAS_OPT,
            FFN_NORM,
            FFN_GLU,
            LLADA_FFN_BIAS
        ],
        Never,
        Bpe("default"),
    ),
    // Recurrent, hybrid and per-layer architectures.
    Architecture {
        heads: false,
        ..arch(
            "mamba",
            &[RECURRENT_BASE_KEYS, RMS_EPS, SSM_KEYS, T],
            layout![TOK_EMBD, OUT_NORM, OUTPUT_OPT, ATTN_NORM, MAMBA],
            Never,
            Bpe("gpt-2"),
        )
    },
    Architecture {
        heads: false,
        ..arch(
            "mamba2",
            &[RECURRENT_BASE_KEYS, RMS_EPS, SSM_KEYS, SSM_GROUP_KEYS, T],
            layout![TOK_EMBD, OUT_NORM, OUTPUT_OPT, ATTN_NORM, MAMBA2],
            Never,
            Bpe("gpt-2"),
        )
    },
    Architecture {
        heads: false,
        ..arch(
            "rwkv6",
            &[RWKV_BASE_KEYS, NORM_EPS, RWKV6_KEYS, T],
            layout![
                TOK_EMBD,
                BLOOM_EMBD_NORM,
                OUT_NORM,
                OUT_NORM_B,
                OUTPUT,
                ATTN_NORM,
                ATTN_NORM_B,
                ATTN_NORM_2,
                RWKV6_TIME_MIX,
                RWKV6_TIME_MIX_NORM,
                RWKV6_CHANNEL_MIX
            ],
            Never,
            Rwkv,
        )
    },
    Architecture {
        heads: false,
        ..arch(
            "rwkv7",
            &[RWKV_BASE_KEYS, NORM_EPS, RWKV7_KEYS, T],
            layout![
                TOK_EMBD,
                BLOOM_EMBD_NORM,
                OUT_NORM,
                OUT_NORM_B,
                OUTPUT,
                ATTN_NORM,
                ATTN_NORM_B,
                ATTN_NORM_2,
                RWKV7_TIME_MIX,
                RWKV7_TIME_MIX_NORM,
                RWKV7_CHANNEL_MIX
            ],
            Never,
            Rwkv,
        )
    },
    Architecture {
        heads: false,
        ..arch(
            "rwkv6qwen2",
            &[RWKV_BASE_KEYS, RMS_EPS, RWKV6_KEYS, TOKEN_SHIFT_ONE, T],
            layout![
                TOK_EMBD,
                OUT_NORM,
                OUTPUT_NORM_B_OPT,
                OUTPUT,
                ATTN_NORM,
                RWKV6QWEN2_TIME_MIX,
                FFN_NORM,
                FFN_GLU
            ],
            Never,
            Bpe("qwen2"),
        )
    },
    Architecture {
        heads: false,
        ..arch(
            "arwkv7",
            &[RWKV_BASE_KEYS, RMS_EPS, RWKV7_KEYS, TOKEN_SHIFT_ONE, T],
            layout![
                TOK_EMBD,
                OUT_NORM,
                OUTPUT,
                ATTN_NORM,
                RWKV7_TIME_MIX,
                ARWKV7_TIME_MIX_NORM,
                FFN_NORM,
                FFN_GLU
            ],
            Never,
            Bpe("qwen2"),
        )
    },
    Architecture {
        varied_blocks: true,
        ..arch(
            "jamba",
            &[BASE_KEYS, RMS_EPS, SSM_KEYS, T],
            layout![
                TOK_EMBD,
                OUT_NORM,
                OUTPUT_OPT,
                ATTN_NORM,
                JAMBA_MAMBA,
                JAMBA_ATTN,
                FFN_NORM,
                FFN_GLU
            ],
            Never,
            Bpe("gpt-2"),
        )
    },
    arch(
        "falcon-h1",
        &[BASE_KEYS, RMS_EPS, SSM_KEYS, SSM_GROUP_KEYS, T],
        layout![
            TOK_EMBD,
            OUTPUT_OPT,
            OUT_NORM,
            ROPE_FREQS,
            FALCON_H1_MAMBA2,
            ATTN,
            ATTN_BIAS_OPT,
            ATTN_OUT_BIAS_OPT,
            ATTN_NORM,
            FALCON_H1_FFN_NORM,
            FFN_GLU,
            FFN_GLU_BIAS_OPT
        ],
        Never,
        Bpe("falcon-h1"),
    ),
    Architecture {
        varied_blocks: true,
        ..arch(
            "granitehybrid",
            &[
                BASE_KEYS,
                RMS_EPS,
                SSM_KEYS,
                SSM_GROUP_KEYS,
                GRANITE_HYBRID_KEYS,
                EXPERT_KEYS,
                T,
            ],
            layout![
                TOK_EMBD,
                OUT_NORM,
                OUTPUT_OPT,
                ROPE_FREQS,
                ATTN_NORM,
                GRANITE_HYBRID_MAMBA2,
                HYBRID_ATTN,
                FFN_NORM,
                FFN_GLU,
                FFN_GLU_BIAS_OPT,
                MOE_FF
            ],
            Optional,
            Bpe("refact"),
        )
    },
    Architecture {
        varied_blocks: true,
        ..arch(
            "lfm2",
            &[BASE_KEYS, RMS_EPS, SHORTCONV_KEYS, T],
            layout![
                TOK_EMBD,
                LFM2_EMBD_NORM,
                FFN_NORM,
                FFN_GLU,
                ATTN_NORM,
                LFM2_BLOCK
            ],
            Never,
            Bpe("lfm2"),
        )
    },
    Architecture {
        varied_blocks: true,
        ..arch(
            "openelm",
            &[BASE_KEYS, RMS_EPS, T],
            layout![
                TOK_EMBD,
                OUT_NORM,
                ATTN_NORM,
                OPENELM_ATTN,
                FFN_NORM,
                FFN_GLU
            ],
            Never,
            Spm,
        )
    },
    Architecture {
        varied_blocks: true,
        ..arch(
            "deci",
            &[BASE_KEYS, RMS_EPS, T],
            layout![TOK_EMBD, OUT_NORM, OUTPUT_OPT, ROPE_FREQS, DECI_BLOCK],
            Never,
            Bpe("llama-bpe"),
        )
    },
    // plamo2
    Architecture {
        varied_blocks: true,
        head_size: Some(SsmHead),
        // The attention graph sizes heads by `attention.key_length` and `value_length`, the
        // loader by `d_inner / dt_rank`: `head_size` makes the schema require them equal.
        ..arch(
            "plamo2",
            &[BASE_KEYS, RMS_EPS, SSM_KEYS, SSM_GROUP_KEYS, T],
            layout![TOK_EMBD, OUT_NORM, OUTPUT_OPT, ATTN_NORM, PLAMO2_BLOCK],
            Never,
            Plamo2,
        )
    },
    // New in llama-cpp-python 0.3.36's llama.cpp (`src/models/*.cpp`); their groups are at
    // the end of the file.
    since_0336(arch(
        "seed_oss",
        &[BASE_KEYS, RMS_EPS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN,
            QKV_BIAS_OPT,
            POST_ATTN_NORM,
            FFN_GLU
        ],
        Never,
        Bpe("seed-coder"),
    )),
    since_0336(arch(
        "nanbeige",
        &[BASE_KEYS, RMS_EPS, NANBEIGE_KEYS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN,
            QKV_BIAS_OPT,
            ROPE_FREQS,
            FFN_NORM,
            FFN_GLU
        ],
        Never,
        Spm,
    )),
    since_0336(arch(
        "maincoder",
        &[BASE_KEYS, RMS_EPS, T],
        QK_NORM_LLAMA,
        Never,
        Bpe("default"),
    )),
    since_0336(arch(
        "pangu-embedded",
        &[BASE_KEYS, RMS_EPS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN,
            QKV_BIAS_OPT,
            ATTN_OUT_BIAS,
            FFN_NORM,
            ROPE_FREQS,
            FFN_GLU
        ],
        Never,
        Spm,
    )),
    since_0336(arch(
        "hunyuan_vl",
        &[BASE_KEYS, RMS_EPS, ROPE_SECTIONS_OPT, T],
        QK_NORM_LLAMA,
        Never,
        Bpe("hunyuan-dense"),
    )),
    since_0336(arch(
        "qwen3vl",
        &[BASE_KEYS, RMS_EPS, ROPE_SECTIONS_KEYS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            CLS_OUT_OPT,
            ATTN_NORM,
            ATTN,
            QKV_BIAS_OPT,
            QK_NORM,
            FFN_NORM,
            FFN_GLU
        ],
        Never,
        Bpe("qwen2"),
    )),
    since_0336(arch(
        "qwen3vlmoe",
        &[
            BASE_KEYS,
            RMS_EPS,
            ROPE_SECTIONS_KEYS,
            EXPERT_KEYS_REQUIRED,
            EXPERT_FF_OPT,
            T,
        ],
        QK_NORM_MOE,
        AllExperts,
        Bpe("qwen2"),
    )),
    since_0336(arch(
        "rnd1",
        &[BASE_KEYS, RMS_EPS, EXPERT_KEYS_REQUIRED, EXPERT_FF_OPT, T],
        QK_NORM_MOE,
        AllExperts,
        Bpe("qwen2"),
    )),
    since_0336(arch(
        "mellum",
        &[
            BASE_KEYS,
            RMS_EPS,
            EXPERT_KEYS_REQUIRED,
            EXPERT_FF_REQUIRED,
            SLIDING_WINDOW_OPT,
            T,
        ],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT,
            ATTN_NORM,
            ATTN,
            QKV_BIAS_OPT,
            QK_NORM,
            FFN_NORM,
            MOE_FF_EXP
        ],
        AllExperts,
        Bpe("mellum"),
    )),
    since_0336(arch(
        "llada-moe",
        &[BASE_KEYS, RMS_EPS, EXPERT_KEYS_REQUIRED, EXPERT_FF_OPT, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT,
            ATTN_NORM,
            SQUARE_ATTN,
            ATTN_BIAS_OPT,
            QK_NORM,
            FFN_NORM,
            MOE_FF_EXP
        ],
        AllExperts,
        Bpe("llada-moe"),
    )),
    since_0336(arch(
        "jais2",
        &[BASE_KEYS, NORM_EPS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUT_NORM_B,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN_NORM_B,
            ATTN,
            QKV_BIAS_OPT,
            ATTN_OUT_BIAS,
            FFN_NORM,
            FFN_NORM_B,
            FFN_PLAIN,
            FFN_PLAIN_BIAS
        ],
        Never,
        Bpe("jais-2"),
    )),
    // MiniMax-M2: experts `n_ff` wide with a required selection bias. Its loader reads
    // `expert_gating_func` as optional, but without it llama.cpp aborts creating the context
    // (`src/llama-graph.cpp:2072: fatal error`, measured with the tiny model), so the table
    // requires it.
    since_0336(arch(
        "minimax-m2",
        &[
            BASE_KEYS,
            RMS_EPS,
            EXPERT_KEYS_REQUIRED,
            EXPERT_FF_REQUIRED,
            GATING_FUNC_REQUIRED,
            T,
        ],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT,
            ATTN_NORM,
            ATTN,
            QKV_BIAS_OPT,
            FULL_QK_NORM,
            FFN_NORM,
            MOE_FF_EXP_AS_FF,
            EXP_PROBS_B
        ],
        AllExperts,
        Bpe("minimax-m2"),
    )),
    since_0336(arch(
        "exaone-moe",
        &[
            BASE_KEYS,
            RMS_EPS,
            SLIDING_WINDOW,
            EXPERT_KEYS_REQUIRED,
            EXPERT_FF_REQUIRED,
            GATING_FUNC_REQUIRED,
            EXAONE_MOE_KEYS,
            T,
        ],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT,
            ATTN,
            QKV_BIAS_OPT,
            ROPE_FREQS,
            ATTN_NORM,
            QK_NORM,
            FFN_NORM,
            FFN_GLU,
            EXAONE_MOE_EXPERTS
        ],
        AllExperts,
        Bpe("exaone-moe"),
    )),
    // An embedding model (non-causal, whatever the file says; the tiny model says so too, for
    // the loader program to run it as an encoder), gemma3's blocks with a sliding window in
    // five of every six, both ways.
    since_0336(arch(
        "gemma-embedding",
        &[
            BASE_KEYS,
            RMS_EPS,
            SLIDING_WINDOW,
            CAUSAL_OPT,
            GEMMA_EMBEDDING_KEYS,
            T,
        ],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN,
            QKV_BIAS_OPT,
            POST_NORMS,
            QK_NORM,
            FFN_NORM,
            FFN_GLU
        ],
        Never,
        Spm,
    )),
    // AFMoE: its graph always takes the sliding-window cache's input; the loader reads
    // `attention.sliding_window` as optional, but without it llama.cpp crashes creating the
    // context (SIGSEGV, measured with the tiny model), so the table requires it.
    since_0336(arch(
        "afmoe",
        &[
            BASE_KEYS,
            RMS_EPS,
            EXPERT_KEYS_REQUIRED,
            EXPERT_FF_REQUIRED,
            AFMOE_KEYS,
            SLIDING_WINDOW,
            T,
        ],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            POST_ATTN_NORM,
            ATTN,
            QKV_BIAS_OPT,
            QK_NORM,
            ATTN_GATE,
            FFN_NORM,
            FFN_POST_NORM,
            FFN_GLU,
            MOE_FF_EXP,
            EXP_PROBS_B,
            AFMOE_SHARED
        ],
        AllExperts,
        Bpe("afmoe"),
    )),
    Architecture {
        varied_blocks: true,
        ..since_0336(arch(
            "lfm2moe",
            &[
                BASE_KEYS,
                RMS_EPS,
                SHORTCONV_KEYS,
                EXPERT_KEYS_REQUIRED,
                EXPERT_FF_REQUIRED,
                GATING_FUNC_REQUIRED,
                LEADING_DENSE_OPT,
                T,
            ],
            layout![
                TOK_EMBD,
                LFM2_EMBD_NORM,
                OUTPUT_OPT,
                FFN_NORM,
                FFN_GLU,
                MOE_FF_EXP,
                EXP_PROBS_B,
                ATTN_NORM,
                LFM2_BLOCK,
                HYBRID_QKV_BIAS_OPT
            ],
            AllExperts,
            Bpe("lfm2"),
        ))
    },
    since_0336(arch(
        "apertus",
        &[BASE_KEYS, RMS_EPS, XIELU_KEYS, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT,
            ATTN_NORM,
            ROPE_FREQS,
            ATTN,
            QKV_BIAS_OPT,
            ATTN_OUT_BIAS_OPT,
            FFN_NORM,
            FFN_PLAIN,
            APERTUS_QK_NORM
        ],
        Never,
        Bpe("tekken"),
    )),
    // Cohere2-MoE: layer norm (`layer_norm_epsilon`, the key its converter writes; the loader
    // takes `layer_norm_rms_epsilon` instead, for RMS norm), a sliding window in three of every
    // four blocks from the second, the leading blocks dense without a feed-forward norm.
    since_0336(arch(
        "cohere2moe",
        &[
            BASE_KEYS,
            NORM_EPS,
            LOGIT_SCALE,
            SLIDING_WINDOW,
            EXPERT_KEYS_REQUIRED,
            EXPERT_FF_REQUIRED,
            COHERE2MOE_KEYS,
            T,
        ],
        layout![
            TOK_EMBD,
            OUT_NORM,
            OUTPUT_OPT,
            ATTN_NORM,
            ATTN,
            QKV_BIAS_OPT,
            FFN_GLU,
            MOE_FF_EXP,
            COHERE2MOE_SHARED
        ],
        AllExperts,
        Bpe("cohere2moe"),
    )),
    since_0336(arch(
        "talkie",
        &[BASE_KEYS, RMS_EPS, LOGIT_SCALE, T],
        layout![TOK_EMBD, OUTPUT, ATTN, QKV_BIAS_OPT, FFN_GLU, TALKIE_BLOCK],
        Never,
        Bpe("talkie"),
    )),
    // jina-bert-v3 (an encoder, as bert): the loader throws without a token type count.
    Architecture {
        gqa: false,
        ..since_0336(arch(
            "jina-bert-v3",
            &[BASE_KEYS, NORM_EPS, CAUSAL, POOLING_OPT, T],
            layout![
                TOK_EMBD,
                JINA_BERT_V3_EMBD,
                SQUARE_ATTN,
                ATTN_BIAS_OPT,
                ATTN_OUT_BIAS_OPT,
                BERT_BLOCK,
                FFN_PLAIN,
                FFN_PLAIN_BIAS_OPT
            ],
            Never,
            TokenizerKind::Wpm,
        ))
    },
    // EuroBERT: an encoder with llama's blocks and no output matrix; its tiny model says
    // `attention.causal` false, for the loader program to run it as an encoder.
    since_0336(arch(
        "eurobert",
        &[BASE_KEYS, RMS_EPS, CAUSAL_OPT, POOLING_OPT, T],
        layout![
            TOK_EMBD,
            OUT_NORM,
            ATTN_NORM,
            SQUARE_ATTN,
            ATTN_BIAS_OPT,
            FFN_NORM,
            FFN_GLU
        ],
        Never,
        Bpe("llama-bpe"),
    )),
    // llama's loader with a graph without output head and without KV cache (an embedding
    // model): its tiny model says `attention.causal` false, which llama.cpp reads for every
    // architecture, so that it runs as an encoder.
    since_0336(arch(
        "llama-embed",
        &[BASE_KEYS, RMS_EPS, EXPERT_KEYS, CAUSAL_OPT, T],
        LLAMA,
        Optional,
        Bpe("llama-bpe"),
    )),
];

// Encoder-only models (bert family).
/// BERT's embedding extras: token types (optional), the classifier head (optional), the
/// embeddings' layer norm.
const BERT_EMBD: &[ExpectedTensor] = &[
    optional_global("token_types.weight", &[Embd, TokenTypes]),
    optional_global("cls.weight", &[Embd, Embd]),
    optional_global("cls.bias", &[Embd]),
    optional_global("cls.output.weight", &[Embd, ClsOut]),
    optional_global("cls.output.bias", &[ClsOut]),
    global("token_embd_norm.weight", &[Embd]),
    global("token_embd_norm.bias", &[Embd]),
];
/// BERT's attention: separate q, k, v with biases (the loader also takes a fused `attn_qkv`
/// instead; the table requires the separate form, the one the converter writes).
const BERT_ATTN: &[ExpectedTensor] = &[
    block("attn_q.weight", &[Embd, Embd]),
    block("attn_q.bias", &[Embd]),
    block("attn_k.weight", &[Embd, K]),
    block("attn_k.bias", &[K]),
    block("attn_v.weight", &[Embd, V]),
    block("attn_v.bias", &[V]),
    block("attn_output.weight", &[Embd, Embd]),
];
/// The post-attention and post-block layer norms of the BERT family.
const BERT_BLOCK: &[ExpectedTensor] = &[
    block("attn_output_norm.weight", &[Embd]),
    block("attn_output_norm.bias", &[Embd]),
    block("layer_output_norm.weight", &[Embd]),
    block("layer_output_norm.bias", &[Embd]),
];
/// nomic-bert's fused projection (the loader also takes separate q, k, v with biases; the
/// table requires the fused form, the one the converter writes).
const NOMIC_ATTN: &[ExpectedTensor] = &[
    block("attn_qkv.weight", &[Embd, Qkv]),
    optional_block("attn_qkv.bias", &[Qkv]),
    block("attn_output.weight", &[Embd, Embd]),
];
/// nomic-bert-moe's experts, ungated, in the blocks `moe_every_n_layers` selects.
const NOMIC_MOE: &[ExpectedTensor] = &[
    expert_block("ffn_gate_inp.weight", &[Embd, Experts], true),
    expert_block("ffn_up_exps.weight", &[Embd, Ff, Experts], true),
    expert_block("ffn_down_exps.weight", &[Ff, Embd, Experts], true),
];
const NEO_BERT: &[ExpectedTensor] = &[
    optional_global("cls.weight", &[Embd, Embd]),
    optional_global("cls.bias", &[Embd]),
    optional_global("cls.output.weight", &[Embd, ClsOut]),
    optional_global("cls.output.bias", &[ClsOut]),
    global("enc.output_norm.weight", &[Embd]),
    block("attn_norm.weight", &[Embd]),
    block("attn_qkv.weight", &[Embd, Qkv]),
    block("attn_output.weight", &[Embd, Embd]),
    block("ffn_norm.weight", &[Embd]),
    block("ffn_up.weight", &[Embd, Ff2]),
    block("ffn_down.weight", &[Ff, Embd]),
];
/// jina-bert-v2: token types required, a one-output classifier (`{n_embd, 1}` and `{1}`,
/// written here without their trailing 1s), optional q and k norms, a gated feed-forward
/// block (the loader also takes an ungated `ffn_up` of width `2 × n_ff`; the table requires
/// the gate).
const JINA_BERT_V2: &[ExpectedTensor] = &[
    global("token_types.weight", &[Embd, TokenTypes]),
    global("token_embd_norm.weight", &[Embd]),
    global("token_embd_norm.bias", &[Embd]),
    optional_global("cls.weight", &[Embd]),
    optional_global("cls.bias", &[]),
    block("attn_q.weight", &[Embd, Embd]),
    block("attn_q.bias", &[Embd]),
    optional_block("attn_q_norm.weight", &[Embd]),
    optional_block("attn_q_norm.bias", &[Embd]),
    block("attn_k.weight", &[Embd, K]),
    block("attn_k.bias", &[K]),
    optional_block("attn_k_norm.weight", &[Embd]),
    optional_block("attn_k_norm.bias", &[Embd]),
    block("attn_v.weight", &[Embd, V]),
    block("attn_v.bias", &[V]),
    block("attn_output.weight", &[Embd, Embd]),
    block("attn_output.bias", &[Embd]),
    optional_block("attn_norm_2.weight", &[Embd]),
    optional_block("attn_norm_2.bias", &[Embd]),
    block("ffn_gate.weight", &[Embd, Ff]),
    block("ffn_up.weight", &[Embd, Ff]),
    block("ffn_down.weight", &[Ff, Embd]),
    block("ffn_down.bias", &[Embd]),
];

/// PhiMoE: separate q, k, v with biases (the loader also takes a fused `attn_qkv` without
/// biases; the table requires the separate form), a square output projection with bias.
const PHIMOE_ATTN: &[ExpectedTensor] = &[
    block("attn_q.weight", &[Embd, Embd]),
    block("attn_q.bias", &[Embd]),
    block("attn_k.weight", &[Embd, K]),
    block("attn_k.bias", &[K]),
    block("attn_v.weight", &[Embd, V]),
    block("attn_v.bias", &[V]),
    block("attn_output.weight", &[Embd, Embd]),
    block("attn_output.bias", &[Embd]),
];
const OUTPUT_B: &[ExpectedTensor] = &[global("output.bias", &[Vocab])];

/// OLMoE's experts: width `n_ff`, gate required.
const MOE_FF_EXP_AS_FF: &[ExpectedTensor] = &[
    expert_block("ffn_gate_inp.weight", &[Embd, Experts], true),
    expert_block("ffn_gate_exps.weight", &[Embd, Ff, Experts], true),
    expert_block("ffn_down_exps.weight", &[Ff, Embd, Experts], true),
    expert_block("ffn_up_exps.weight", &[Embd, Ff, Experts], true),
];

// Latent attention, attention sized by the rotary dimensions, per-layer inputs: the groups of deepseek2, minicpm3, glm4moe, bailingmoe, dots1, ernie4_5-moe,
// hunyuan-moe, gpt-oss, smallthinker and gemma3n.

/// `{arch}.attention.key_length_mla`, `{arch}.attention.value_length_mla`: deepseek2's head
/// sizes after decompression; both set means the split `attn_k_b`/`attn_v_b` form.
const MLA_LENGTHS: &[&str] = &[KEY_LENGTH_MLA, VALUE_LENGTH_MLA];
/// The latent attention ranks (both required by minicpm3 and deepseek2; deepseek2 with 27
/// blocks, V2-Lite, does not read `q_lora_rank`: not modelled).
const MLA_KEYS: &[KeySpec] = &[
    req("{arch}.attention.q_lora_rank", KeyType::Count),
    req("{arch}.attention.kv_lora_rank", KeyType::Count),
];
const EXPERT_WEIGHTS_NORM: &[KeySpec] = &[opt("{arch}.expert_weights_norm", KeyType::Bool)];
/// `{arch}.expert_gating_func` (1 softmax, 2 sigmoid): optional to dots1's and
/// smallthinker's loaders, but their graphs abort without it (`build_moe_ffn`'s gating
/// switch), so required here.
const GATING_FUNC_REQUIRED: &[KeySpec] = &[req("{arch}.expert_gating_func", KeyType::Count)];
const EXPERT_FF_REQUIRED: &[KeySpec] = &[req(EXPERT_FF_LENGTH, KeyType::Count)];
const DEEPSEEK2_KEYS: &[KeySpec] = &[
    opt(KEY_LENGTH_MLA, KeyType::Count),
    opt(VALUE_LENGTH_MLA, KeyType::Count),
    opt("{arch}.expert_weights_norm", KeyType::Bool),
    opt("{arch}.expert_gating_func", KeyType::Count),
    opt("{arch}.rope.scaling.yarn_log_multiplier", Float),
];
const GLM4MOE_KEYS: &[KeySpec] = &[
    req(EXPERT_FF_LENGTH, KeyType::Count),
    req(EXPERT_SHARED_COUNT, KeyType::Count),
    opt(LEADING_DENSE_BLOCK_COUNT, KeyType::Count),
    req("{arch}.expert_weights_scale", Float),
    opt("{arch}.expert_weights_norm", KeyType::Bool),
    opt("{arch}.expert_gating_func", KeyType::Count),
    opt("{arch}.nextn_predict_layers", KeyType::Count),
];
const ERNIE4_5_MOE_KEYS: &[KeySpec] = &[
    req(EXPERT_FF_LENGTH, KeyType::Count),
    opt(EXPERT_SHARED_FF_LENGTH, KeyType::Count),
    req(INTERLEAVE_MOE_LAYER_STEP, KeyType::Count),
    req(LEADING_DENSE_BLOCK_COUNT, KeyType::Count),
];
const HUNYUAN_MOE_KEYS: &[KeySpec] = &[
    req(EXPERT_FF_LENGTH, KeyType::Count),
    req(EXPERT_SHARED_FF_LENGTH, KeyType::Count),
];

/// The query and compressed key/value projections of latent attention.
const MLA_ATTN: &[ExpectedTensor] = &[
    block("attn_q_a_norm.weight", &[QLora]),
    block("attn_kv_a_norm.weight", &[KvLora]),
    block("attn_q_a.weight", &[Embd, QLora]),
    block("attn_q_b.weight", &[QLora, QMla]),
    block("attn_kv_a_mqa.weight", &[Embd, KvLoraRot]),
    block("attn_output.weight", &[VMla, Embd]),
];
/// deepseek2's decompression: split when both MLA lengths are set, else fused.
const DEEPSEEK2_ATTN: &[ExpectedTensor] = &[
    tensor(
        "attn_k_b.weight",
        Block,
        &[HeadNopeMla, KvLora, Heads],
        true,
        When::KeysSet(MLA_LENGTHS, true),
    ),
    tensor(
        "attn_v_b.weight",
        Block,
        &[KvLora, HeadVMla, Heads],
        true,
        When::KeysSet(MLA_LENGTHS, true),
    ),
    tensor(
        "attn_kv_b.weight",
        Block,
        &[KvLora, KvBMla],
        true,
        When::KeysSet(MLA_LENGTHS, false),
    ),
];
const MINICPM3_ATTN: &[ExpectedTensor] = &[block("attn_kv_b.weight", &[KvLora, KvBMla])];
/// The experts' selection bias (`exp_probs_b`), optional.
const EXP_PROBS_B_OPT: &[ExpectedTensor] = &[expert_block("exp_probs_b.bias", &[Experts], false)];
/// GLM-4.5: q, k, v biases, optional q/k norms, the post-attention norm that also precedes
/// the feed-forward block (no `ffn_norm`).
const GLM4MOE_ATTN: &[ExpectedTensor] = &[
    block("attn_q.bias", &[Q]),
    block("attn_k.bias", &[K]),
    block("attn_v.bias", &[V]),
    optional_block("attn_q_norm.weight", &[HeadK]),
    optional_block("attn_k_norm.weight", &[HeadK]),
    block("post_attention_norm.weight", &[Embd]),
];
/// GLM-4.5: the selection bias (required) and shared experts when `expert_shared_count` > 0.
/// (The NextN layers of `nextn_predict_layers`, with their `nextn.*` tensors, are not
/// modelled.)
const GLM4MOE_EXPERTS: &[ExpectedTensor] = &[
    expert_block("exp_probs_b.bias", &[Experts], true),
    tensor(
        "ffn_gate_shexp.weight",
        Block,
        &[Embd, FfExpShared],
        true,
        When::ExpertsWith(EXPERT_SHARED_COUNT),
    ),
    tensor(
        "ffn_down_shexp.weight",
        Block,
        &[FfExpShared, Embd],
        true,
        When::ExpertsWith(EXPERT_SHARED_COUNT),
    ),
    tensor(
        "ffn_up_shexp.weight",
        Block,
        &[Embd, FfExpShared],
        true,
        When::ExpertsWith(EXPERT_SHARED_COUNT),
    ),
];
/// q, k, v and output projections sized by the rotary dimensions (`n_rot`).
const ROT_ATTN: &[ExpectedTensor] = &[
    block("attn_q.weight", &[Embd, RotQ]),
    block("attn_k.weight", &[Embd, RotKv]),
    block("attn_v.weight", &[Embd, RotKv]),
    block("attn_output.weight", &[RotQ, Embd]),
];
/// Bailing MoE: experts in every block (the loader reads `leading_dense_block_count` but
/// creates no dense block), shared experts `n_ff_exp × n_expert_shared` wide.
const BAILINGMOE_FFN: &[ExpectedTensor] = &[
    block("ffn_gate_inp.weight", &[Embd, Experts]),
    block("ffn_gate_exps.weight", &[Embd, FfExp, Experts]),
    block("ffn_down_exps.weight", &[FfExp, Embd, Experts]),
    block("ffn_up_exps.weight", &[Embd, FfExp, Experts]),
    block("ffn_gate_shexp.weight", &[Embd, FfExpShared]),
    block("ffn_down_shexp.weight", &[FfExpShared, Embd]),
    block("ffn_up_shexp.weight", &[Embd, FfExpShared]),
];
/// dots.llm1: k and v as wide as q (its graph then needs `head_count_kv` = `head_count`).
const DOTS1_ATTN: &[ExpectedTensor] = &[
    block("attn_q.weight", &[Embd, Q]),
    block("attn_k.weight", &[Embd, Q]),
    block("attn_v.weight", &[Embd, Q]),
    block("attn_output.weight", &[Q, Embd]),
];
/// ERNIE 4.5 MoE: gate optional, shared experts when `expert_shared_feed_forward_length` > 0.
const ERNIE4_5_MOE_EXPERTS: &[ExpectedTensor] = &[
    expert_block("ffn_gate_inp.weight", &[Embd, Experts], true),
    expert_block("exp_probs_b.bias", &[Experts], false),
    expert_block("ffn_gate_exps.weight", &[Embd, FfExp, Experts], false),
    expert_block("ffn_down_exps.weight", &[FfExp, Embd, Experts], true),
    expert_block("ffn_up_exps.weight", &[Embd, FfExp, Experts], true),
    tensor(
        "ffn_gate_shexp.weight",
        Block,
        &[Embd, FfShexp],
        true,
        When::ExpertsWith(EXPERT_SHARED_FF_LENGTH),
    ),
    tensor(
        "ffn_down_shexp.weight",
        Block,
        &[FfShexp, Embd],
        true,
        When::ExpertsWith(EXPERT_SHARED_FF_LENGTH),
    ),
    tensor(
        "ffn_up_shexp.weight",
        Block,
        &[Embd, FfShexp],
        true,
        When::ExpertsWith(EXPERT_SHARED_FF_LENGTH),
    ),
];
/// Hunyuan MoE: one shared expert `n_ff_shexp` wide, no gate input.
const HUNYUAN_MOE_SHARED: &[ExpectedTensor] = &[
    expert_block("ffn_gate_shexp.weight", &[Embd, FfShexp], true),
    expert_block("ffn_up_shexp.weight", &[Embd, FfShexp], true),
    expert_block("ffn_down_shexp.weight", &[FfShexp, Embd], true),
];
/// gpt-oss: the post-attention norm (before the experts; no `ffn_norm`), the attention
/// sinks and the attention biases.
const GPT_OSS_ATTN: &[ExpectedTensor] = &[
    block("post_attention_norm.weight", &[Embd]),
    block("attn_sinks.weight", &[Heads]),
    block("attn_q.bias", &[RotQ]),
    block("attn_k.bias", &[RotKv]),
    block("attn_v.bias", &[RotKv]),
    block("attn_output.bias", &[Embd]),
];
/// gpt-oss: the router's and the experts' biases.
const GPT_OSS_EXPERT_BIAS: &[ExpectedTensor] = &[
    expert_block("ffn_gate_inp.bias", &[Experts], true),
    expert_block("ffn_gate_exps.bias", &[FfExp, Experts], true),
    expert_block("ffn_down_exps.bias", &[Embd, Experts], true),
    expert_block("ffn_up_exps.bias", &[FfExp, Experts], true),
];
/// gemma3n: the per-layer token embeddings and projections, AltUp's projections.
const GEMMA3N_GLOBAL: &[ExpectedTensor] = &[
    global("per_layer_token_embd.weight", &[AltupEmbdLayers, Vocab]),
    global("altup_proj.weight", &[Embd, Embd, AltupLess1]),
    global("altup_unembd_proj.weight", &[Embd, Embd, AltupLess1]),
    global("per_layer_model_proj.weight", &[Embd, AltupEmbdLayers]),
    global("per_layer_proj_norm.weight", &[AltupEmbd]),
];
const GEMMA3N_NORMS: &[ExpectedTensor] = &[block("post_attention_norm.weight", &[Embd])];
/// gemma3n's block: post-feed-forward norm, per-layer input gate and projection, AltUp and
/// LAuReL.
const GEMMA3N_BLOCK: &[ExpectedTensor] = &[
    block("post_ffw_norm.weight", &[Embd]),
    block("inp_gate.weight", &[Embd, AltupEmbd]),
    block("proj.weight", &[AltupEmbd, Embd]),
    block("post_norm.weight", &[Embd]),
    block("altup_correct_coef.weight", &[Altup, Altup]),
    block("altup_correct_scale.weight", &[Embd]),
    block("altup_predict_coef.weight", &[Altup, AltupSquared]),
    block("altup_router.weight", &[Embd, Altup]),
    block("altup_router_norm.weight", &[Embd]),
    block("laurel_l.weight", &[Embd, LaurelRank]),
    block("laurel_r.weight", &[LaurelRank, Embd]),
    block("laurel_post_norm.weight", &[Embd]),
];

// Encoder-decoder models (t5): block tensors named `enc.blk.N.` and `dec.blk.N.`
// (`block_tensor_name`). The relative attention bias is required in block 0, whose bias the
// other blocks borrow when they have none.
/// A required tensor of block 0 only ([`When::First`]).
const fn first_block(name: &'static str, shape: &'static [Dim]) -> ExpectedTensor {
    tensor(name, Block, shape, true, When::First)
}
const T5_ENC: &[ExpectedTensor] = &[
    global("enc.output_norm.weight", &[Embd]),
    block("enc.attn_norm.weight", &[Embd]),
    first_block("enc.attn_rel_b.weight", &[Heads, RelBuckets]),
    optional_block("enc.attn_rel_b.weight", &[Heads, RelBuckets]),
    block("enc.attn_q.weight", &[Embd, K]),
    block("enc.attn_k.weight", &[Embd, K]),
    block("enc.attn_v.weight", &[Embd, V]),
    block("enc.attn_o.weight", &[V, Embd]),
    block("enc.ffn_norm.weight", &[Embd]),
    optional_block("enc.ffn_gate.weight", &[Embd, Ff]),
    block("enc.ffn_down.weight", &[Ff, Embd]),
    block("enc.ffn_up.weight", &[Embd, Ff]),
];
const T5_DEC: &[ExpectedTensor] = &[
    global("dec.output_norm.weight", &[Embd]),
    block("dec.attn_norm.weight", &[Embd]),
    first_block("dec.attn_rel_b.weight", &[Heads, RelBuckets]),
    optional_block("dec.attn_rel_b.weight", &[Heads, RelBuckets]),
    block("dec.attn_q.weight", &[Embd, K]),
    block("dec.attn_k.weight", &[Embd, K]),
    block("dec.attn_v.weight", &[Embd, V]),
    block("dec.attn_o.weight", &[V, Embd]),
    block("dec.cross_attn_norm.weight", &[Embd]),
    optional_block("dec.cross_attn_rel_b.weight", &[Heads, RelBuckets]),
    block("dec.cross_attn_q.weight", &[Embd, K]),
    block("dec.cross_attn_k.weight", &[Embd, K]),
    block("dec.cross_attn_v.weight", &[Embd, V]),
    block("dec.cross_attn_o.weight", &[V, Embd]),
    block("dec.ffn_norm.weight", &[Embd]),
    optional_block("dec.ffn_gate.weight", &[Embd, Ff]),
    block("dec.ffn_down.weight", &[Ff, Embd]),
    block("dec.ffn_up.weight", &[Embd, Ff]),
];
// Further architectures (grok … llada): tensor groups.

/// Separate q, k, v and square q and output projections (`{n_embd, n_embd}`, as
/// `load_tensors` creates them for grok, arctic, plamo, bitnet, chameleon, qwen2vl, dream).
const SQUARE_ATTN: &[ExpectedTensor] = &[
    block("attn_q.weight", &[Embd, Embd]),
    block("attn_k.weight", &[Embd, K]),
    block("attn_v.weight", &[Embd, V]),
    block("attn_output.weight", &[Embd, Embd]),
];
/// codeshell: the embeddings are optional (the loader then duplicates `output.weight`).
const TOK_EMBD_OPT: &[ExpectedTensor] = &[optional_global("token_embd.weight", &[Embd, Vocab])];
/// Grok's norms after attention and after the experts.
const GROK_NORMS: &[ExpectedTensor] = &[
    block("attn_output_norm.weight", &[Embd]),
    block("layer_output_norm.weight", &[Embd]),
];
/// DBRX's norm before the experts.
const ATTN_OUT_NORM: &[ExpectedTensor] = &[block("attn_output_norm.weight", &[Embd])];
/// Arctic's dense residual feed-forward, `n_embd` wide, beside its experts, which have
/// their own norm.
const ARCTIC_FFN: &[ExpectedTensor] = &[
    block("ffn_gate.weight", &[Embd, Embd]),
    block("ffn_down.weight", &[Embd, Embd]),
    block("ffn_up.weight", &[Embd, Embd]),
    expert_block("ffn_norm_exps.weight", &[Embd], true),
];
/// PLM's multi-head latent attention: q, then k and v through a compressed projection
/// (rank `kv_lora_rank`) that also carries the shared RoPE key.
const PLM_ATTN: &[ExpectedTensor] = &[
    block("attn_q.weight", &[Embd, Q]),
    block("attn_kv_a_mqa.weight", &[Embd, KvLoraRot]),
    block("attn_kv_a_norm.weight", &[KvLora]),
    block("attn_kv_b.weight", &[KvLora, KvBMla]),
    block("attn_output.weight", &[VMla, Embd]),
];
/// BitNet: norms inside attention and feed-forward, optional one-element scales of each
/// projection; no `output.weight` (its graph multiplies by the embeddings).
const BITNET_EXTRA: &[ExpectedTensor] = &[
    block("attn_sub_norm.weight", &[Embd]),
    dense_block("ffn_sub_norm.weight", &[Ff], true),
    optional_block("attn_q.scale", &[]),
    optional_block("attn_k.scale", &[]),
    optional_block("attn_v.scale", &[]),
    optional_block("attn_output.scale", &[]),
    dense_block("ffn_gate.scale", &[], false),
    dense_block("ffn_down.scale", &[], false),
    dense_block("ffn_up.scale", &[], false),
];
/// Chameleon's q and k normalised per head (layer norm, bias optional).
const CHAMELEON_QK_NORM: &[ExpectedTensor] = &[
    block("attn_q_norm.weight", &[HeadK, Heads]),
    block("attn_k_norm.weight", &[HeadK, HeadsKv]),
    optional_block("attn_q_norm.bias", &[HeadK, Heads]),
    optional_block("attn_k_norm.bias", &[HeadK, HeadsKv]),
];
/// qwen2, qwen2vl and dream share one case of `load_tensors`: q, k, v with biases.
const QWEN2_LIKE: &[&[ExpectedTensor]] = &[
    TOK_EMBD,
    OUT_NORM,
    OUTPUT_OPT,
    QWEN2_OUTPUT_B,
    ATTN_NORM,
    SQUARE_ATTN,
    ATTN_BIAS,
    FFN_NORM,
    FFN_GLU,
];
/// LLaDA's optional feed-forward biases.
const LLADA_FFN_BIAS: &[ExpectedTensor] = &[
    dense_block("ffn_gate.bias", &[Ff], false),
    dense_block("ffn_down.bias", &[Embd], false),
    dense_block("ffn_up.bias", &[Ff], false),
];

// Recurrent, hybrid and per-layer architectures.

/// A tensor of a hybrid's recurrent blocks ([`When::Recurrent`]).
const fn recurrent_block(
    name: &'static str,
    shape: &'static [Dim],
    required: bool,
) -> ExpectedTensor {
    tensor(name, Block, shape, required, When::Recurrent)
}
/// A tensor of the blocks with key/value attention ([`When::Attention`]).
const fn attention_block(
    name: &'static str,
    shape: &'static [Dim],
    required: bool,
) -> ExpectedTensor {
    tensor(name, Block, shape, required, When::Attention)
}
/// A required tensor of the blocks `when` selects.
const fn block_when(name: &'static str, shape: &'static [Dim], when: When) -> ExpectedTensor {
    tensor(name, Block, shape, true, when)
}

/// Mamba's mixer. llama.cpp supports only `ssm.inner_size` = 2 × `embedding_length` ("only
/// an expansion factor of 2 is supported for now"); the table does not check it.
const MAMBA: &[ExpectedTensor] = &[
    block("ssm_in.weight", &[Embd, SsmInner2]),
    block("ssm_conv1d.weight", &[SsmConv, SsmInner]),
    block("ssm_conv1d.bias", &[SsmInner]),
    block("ssm_x.weight", &[SsmInner, SsmX]),
    block("ssm_dt.weight", &[SsmDtRank, SsmInner]),
    block("ssm_dt.bias", &[SsmInner]),
    block("ssm_a", &[SsmState, SsmInner]),
    block("ssm_d", &[SsmInner]),
    block("ssm_out.weight", &[SsmInner, Embd]),
];
/// Mamba-2's mixer (`ssm.time_step_rank` is its head count).
const MAMBA2: &[ExpectedTensor] = &[
    block("ssm_in.weight", &[Embd, SsmInProj]),
    block("ssm_conv1d.weight", &[SsmConv, SsmConvWidth]),
    block("ssm_conv1d.bias", &[SsmConvWidth]),
    block("ssm_dt.bias", &[SsmDtRank]),
    block("ssm_a", &[One, SsmDtRank]),
    block("ssm_d", &[One, SsmDtRank]),
    block("ssm_norm.weight", &[SsmGroupWidth, SsmGroups]),
    block("ssm_out.weight", &[SsmInner, Embd]),
];
const ATTN_NORM_2: &[ExpectedTensor] = &[
    block("attn_norm_2.weight", &[Embd]),
    block("attn_norm_2.bias", &[Embd]),
];
/// RWKV6's time mix. The interpolations come fused (`time_mix_lerp_fused`, what the
/// converter writes) or apart (`lerp_w`, `_k`, `_v`, `_r`, `_g`); the table requires the fused
/// form.
const RWKV6_TIME_MIX: &[ExpectedTensor] = &[
    block("time_mix_w1.weight", &[Embd, TimeMix5]),
    block("time_mix_w2.weight", &[TimeMix, Embd, Five]),
    block("time_mix_lerp_x.weight", &[Embd, One, One]),
    optional_block("time_mix_lerp_w.weight", &[Embd, One, One]),
    optional_block("time_mix_lerp_k.weight", &[Embd, One, One]),
    optional_block("time_mix_lerp_v.weight", &[Embd, One, One]),
    optional_block("time_mix_lerp_r.weight", &[Embd, One, One]),
    optional_block("time_mix_lerp_g.weight", &[Embd, One, One]),
    block("time_mix_lerp_fused.weight", &[Embd, One, One, Five]),
    block("time_mix_first.weight", &[WkvHead, WkvHeads]),
    block("time_mix_decay.weight", &[Embd]),
    block("time_mix_decay_w1.weight", &[Embd, TimeDecay]),
    block("time_mix_decay_w2.weight", &[TimeDecay, Embd]),
    block("time_mix_key.weight", &[Embd, Embd]),
    block("time_mix_value.weight", &[Embd, Embd]),
    block("time_mix_receptance.weight", &[Embd, Embd]),
    block("time_mix_gate.weight", &[Embd, Embd]),
    block("time_mix_output.weight", &[Embd, Embd]),
];
const RWKV6_TIME_MIX_NORM: &[ExpectedTensor] = &[
    block("time_mix_ln.weight", &[Embd]),
    block("time_mix_ln.bias", &[Embd]),
];
const RWKV6_CHANNEL_MIX: &[ExpectedTensor] = &[
    block("channel_mix_lerp_k.weight", &[Embd, One, One]),
    block("channel_mix_lerp_r.weight", &[Embd, One, One]),
    block("channel_mix_key.weight", &[Embd, Ff]),
    block("channel_mix_value.weight", &[Ff, Embd]),
    block("channel_mix_receptance.weight", &[Embd, Embd]),
];
const OUTPUT_NORM_B_OPT: &[ExpectedTensor] = &[optional_global("output_norm.bias", &[Embd])];
/// RWKV6-Qwen2: RWKV6's time mix with Qwen2's key/value width and feed-forward.
const RWKV6QWEN2_TIME_MIX: &[ExpectedTensor] = &[
    block("time_mix_w1.weight", &[Embd, TimeMix5]),
    block("time_mix_w2.weight", &[TimeMix, Embd, Five]),
    block("time_mix_lerp_x.weight", &[Embd, One, One]),
    block("time_mix_lerp_fused.weight", &[Embd, One, One, Five]),
    optional_block("time_mix_first.weight", &[WkvHead, WkvHeads]),
    block("time_mix_decay.weight", &[Embd]),
    block("time_mix_decay_w1.weight", &[Embd, TimeDecay]),
    block("time_mix_decay_w2.weight", &[TimeDecay, Embd]),
    block("time_mix_key.weight", &[Embd, RwkvKv]),
    block("time_mix_value.weight", &[Embd, RwkvKv]),
    block("time_mix_receptance.weight", &[Embd, Embd]),
    block("time_mix_gate.weight", &[Embd, Embd]),
    optional_block("time_mix_key.bias", &[RwkvKv]),
    optional_block("time_mix_value.bias", &[RwkvKv]),
    optional_block("time_mix_receptance.bias", &[Embd]),
    block("time_mix_output.weight", &[Embd, Embd]),
];
/// RWKV7's time mix; block 0's value-residual LoRA has the in-context rate's rank (llama.cpp
/// creates it, "actually not used"). ARWKV7's gate is optional to the loader (with a
/// five-way `time_mix_lerp_fused` then); the table requires the gated form.
const RWKV7_TIME_MIX: &[ExpectedTensor] = &[
    block("time_mix_w0.weight", &[Embd]),
    block("time_mix_w1.weight", &[Embd, LoraDecay]),
    block("time_mix_w2.weight", &[LoraDecay, Embd]),
    block("time_mix_a0.weight", &[Embd]),
    block("time_mix_a1.weight", &[Embd, LoraIclr]),
    block("time_mix_a2.weight", &[LoraIclr, Embd]),
    block("time_mix_v0.weight", &[Embd]),
    block_when("time_mix_v1.weight", &[Embd, LoraIclr], When::First),
    block_when("time_mix_v2.weight", &[LoraIclr, Embd], When::First),
    block_when(
        "time_mix_v1.weight",
        &[Embd, LoraValueRes],
        When::LaterBlocks,
    ),
    block_when(
        "time_mix_v2.weight",
        &[LoraValueRes, Embd],
        When::LaterBlocks,
    ),
    block("time_mix_g1.weight", &[Embd, LoraGate]),
    block("time_mix_g2.weight", &[LoraGate, Embd]),
    block("time_mix_lerp_fused.weight", &[Embd, One, One, Six]),
    block("time_mix_k_k.weight", &[Embd]),
    block("time_mix_k_a.weight", &[Embd]),
    block("time_mix_r_k.weight", &[Embd]),
    block("time_mix_key.weight", &[Embd, Embd]),
    block("time_mix_value.weight", &[Embd, Embd]),
    block("time_mix_receptance.weight", &[Embd, Embd]),
    block("time_mix_output.weight", &[Embd, Embd]),
];
const RWKV7_TIME_MIX_NORM: &[ExpectedTensor] = RWKV6_TIME_MIX_NORM;
const ARWKV7_TIME_MIX_NORM: &[ExpectedTensor] = &[
    optional_block("time_mix_ln.weight", &[Embd]),
    optional_block("time_mix_ln.bias", &[Embd]),
];
const RWKV7_CHANNEL_MIX: &[ExpectedTensor] = &[
    block("channel_mix_lerp_k.weight", &[Embd, One, One]),
    block("channel_mix_key.weight", &[Embd, Ff]),
    block("channel_mix_value.weight", &[Ff, Embd]),
];
/// Jamba's Mamba blocks (`head_count_kv` 0). Its mixture-of-experts feed-forward (chosen by
/// the presence of `ffn_gate_inp`) is not modelled: the table requires the dense one.
const JAMBA_MAMBA: &[ExpectedTensor] = &[
    recurrent_block("ssm_in.weight", &[Embd, SsmInner2], true),
    recurrent_block("ssm_conv1d.weight", &[SsmConv, SsmInner], true),
    recurrent_block("ssm_conv1d.bias", &[SsmInner], true),
    recurrent_block("ssm_x.weight", &[SsmInner, SsmX], true),
    recurrent_block("ssm_dt_norm.weight", &[SsmDtRank], true),
    recurrent_block("ssm_dt.weight", &[SsmDtRank, SsmInner], true),
    recurrent_block("ssm_dt.bias", &[SsmInner], true),
    recurrent_block("ssm_b_norm.weight", &[SsmState], true),
    recurrent_block("ssm_c_norm.weight", &[SsmState], true),
    recurrent_block("ssm_a", &[SsmState, SsmInner], true),
    recurrent_block("ssm_d", &[SsmInner], true),
    recurrent_block("ssm_out.weight", &[SsmInner, Embd], true),
];
const JAMBA_ATTN: &[ExpectedTensor] = &[
    attention_block("attn_q.weight", &[Embd, Embd], true),
    attention_block("attn_k.weight", &[Embd, V], true),
    attention_block("attn_v.weight", &[Embd, V], true),
    attention_block("attn_output.weight", &[Embd, Embd], true),
];
/// Falcon-H1: a Mamba-2 mixer beside the attention in every block. Its convolution bias is
/// optional to the loader, but the Mamba-2 graph adds it unconditionally (a null tensor:
/// SIGSEGV creating the context), so the table requires it (also in granitehybrid).
const FALCON_H1_MAMBA2: &[ExpectedTensor] = &[
    block("ssm_in.weight", &[Embd, SsmInProj]),
    block("ssm_conv1d.weight", &[SsmConv, SsmConvWidth]),
    block("ssm_conv1d.bias", &[SsmConvWidth]),
    block("ssm_dt.bias", &[SsmDtRank]),
    block("ssm_a", &[One, SsmDtRank]),
    block("ssm_d", &[One, SsmDtRank]),
    optional_block("ssm_norm.weight", &[SsmGroupWidth, SsmGroups]),
    block("ssm_out.weight", &[SsmInner, Embd]),
];
/// Falcon-H1 names its feed-forward norm without `.weight`.
const FALCON_H1_FFN_NORM: &[ExpectedTensor] = &[block("ffn_norm", &[Embd])];
const FFN_GLU_BIAS_OPT: &[ExpectedTensor] = &[
    dense_block("ffn_gate.bias", &[Ff], false),
    dense_block("ffn_down.bias", &[Embd], false),
    dense_block("ffn_up.bias", &[Ff], false),
];
/// Granite-hybrid's Mamba-2 blocks (`head_count_kv` 0).
const GRANITE_HYBRID_MAMBA2: &[ExpectedTensor] = &[
    recurrent_block("ssm_in.weight", &[Embd, SsmInProj], true),
    recurrent_block("ssm_conv1d.weight", &[SsmConv, SsmConvWidth], true),
    recurrent_block("ssm_conv1d.bias", &[SsmConvWidth], true),
    recurrent_block("ssm_dt.bias", &[SsmDtRank], true),
    recurrent_block("ssm_a", &[One, SsmDtRank], true),
    recurrent_block("ssm_d", &[One, SsmDtRank], true),
    recurrent_block("ssm_norm.weight", &[SsmGroupWidth, SsmGroups], true),
    recurrent_block("ssm_out.weight", &[SsmInner, Embd], true),
];
/// A hybrid's attention blocks, biases optional.
const HYBRID_ATTN: &[ExpectedTensor] = &[
    attention_block("attn_q.weight", &[Embd, Q], true),
    attention_block("attn_k.weight", &[Embd, K], true),
    attention_block("attn_v.weight", &[Embd, V], true),
    attention_block("attn_output.weight", &[Q, Embd], true),
    attention_block("attn_q.bias", &[Embd], false),
    attention_block("attn_k.bias", &[K], false),
    attention_block("attn_v.bias", &[V], false),
    attention_block("attn_output.bias", &[Embd], false),
];
const LFM2_EMBD_NORM: &[ExpectedTensor] = &[global("token_embd_norm.weight", &[Embd])];
/// LFM2: attention blocks with q and k norms, short-convolution blocks.
const LFM2_BLOCK: &[ExpectedTensor] = &[
    attention_block("attn_q_norm.weight", &[HeadK], true),
    attention_block("attn_k_norm.weight", &[HeadK], true),
    attention_block("attn_q.weight", &[Embd, Embd], true),
    attention_block("attn_k.weight", &[Embd, K], true),
    attention_block("attn_v.weight", &[Embd, V], true),
    attention_block("attn_output.weight", &[Embd, Embd], true),
    recurrent_block("shortconv.conv.weight", &[ShortConv, Embd], true),
    recurrent_block("shortconv.in_proj.weight", &[Embd, Embd3], true),
    recurrent_block("shortconv.out_proj.weight", &[Embd, Embd], true),
];
/// OpenELM: a fused projection as wide as the block's heads; no output matrix (the loader
/// reuses the embeddings).
const OPENELM_ATTN: &[ExpectedTensor] = &[
    block("attn_qkv.weight", &[Embd, QkvHeads]),
    block("attn_q_norm.weight", &[HeadK]),
    block("attn_k_norm.weight", &[HeadK]),
    block("attn_output.weight", &[Q, Embd]),
];
/// Deci: blocks with full attention (`head_count_kv` not 0), linear attention (`head_count`
/// only: an output projection) or none, with a feed-forward or not.
const DECI_BLOCK: &[ExpectedTensor] = &[
    block_when("attn_norm.weight", &[Embd], When::Heads),
    block_when("attn_q.weight", &[Embd, Q], When::Attention),
    block_when("attn_k.weight", &[Embd, K], When::Attention),
    block_when("attn_v.weight", &[Embd, V], When::Attention),
    block_when("attn_output.weight", &[Q, Embd], When::Attention),
    block_when("attn_output.weight", &[Embd, Embd], When::LinearAttention),
    optional_block("attn_q.bias", &[Embd]),
    optional_block("attn_k.bias", &[V]),
    optional_block("attn_v.bias", &[V]),
    optional_block("attn_output.bias", &[Embd]),
    block_when("ffn_norm.weight", &[Embd], When::FeedForward),
    block_when("ffn_gate.weight", &[Embd, Ff], When::FeedForward),
    block_when("ffn_down.weight", &[Ff, Embd], When::FeedForward),
    block_when("ffn_up.weight", &[Embd, Ff], When::FeedForward),
];

/// RWKV6-Qwen2 and ARWKV7 shift one token (the default, 2, fails the graph's
/// `GGML_ASSERT(n_embd == hparams.n_embd_r())`); the loader reads the key as optional, the
/// table requires it (its value is not checked).
const TOKEN_SHIFT_ONE: &[KeySpec] = &[KeySpec {
    name: "{arch}.token_shift_count",
    ty: KeyType::Count,
    required: true,
}];

// plamo2

/// PLaMo-2: Mamba blocks (`head_count_kv` 0) with normed time-step, B and C and one SSM
/// head per time-step rank, attention blocks with a fused projection and q, k norms, sized by
/// the mixer's head size; every block has norms after its mixer and feed-forward, and a
/// fused gate and up projection. Its norms are named without `.weight`.
const PLAMO2_BLOCK: &[ExpectedTensor] = &[
    recurrent_block("ssm_in.weight", &[Embd, SsmInner2], true),
    recurrent_block("ssm_conv1d.weight", &[SsmConv, SsmInner], true),
    recurrent_block("ssm_x.weight", &[SsmInner, SsmDtX], true),
    recurrent_block("ssm_dt.weight", &[SsmDtDim, SsmDtRank], true),
    recurrent_block("ssm_dt.bias", &[SsmDtRank], true),
    recurrent_block("ssm_a", &[SsmDtRank], true),
    recurrent_block("ssm_d", &[SsmDtRank], true),
    recurrent_block("ssm_out.weight", &[SsmInner, Embd], true),
    recurrent_block("ssm_dt_norm", &[SsmDtDim], true),
    recurrent_block("ssm_b_norm", &[SsmState], true),
    recurrent_block("ssm_c_norm", &[SsmState], true),
    attention_block("attn_qkv.weight", &[Embd, SsmHeadQkv], true),
    attention_block("attn_q_norm.weight", &[SsmHead, Heads], true),
    attention_block("attn_k_norm.weight", &[SsmHead, HeadsKv], true),
    attention_block("attn_output.weight", &[SsmHeadQ, Embd], true),
    block("post_attention_norm", &[Embd]),
    block("ffn_norm.weight", &[Embd]),
    block("ffn_down.weight", &[Ff, Embd]),
    block("ffn_up.weight", &[Embd, Ff2]),
    block("post_ffw_norm", &[Embd]),
];

// New in llama-cpp-python 0.3.36's llama.cpp. Its loaders create q, k and v with
// `create_tensor_qkv`: a fused `attn_qkv` (with its bias, or separate q, k, v biases) when
// the file has one, else separate q, k, v with optional biases; the table requires the
// separate form, the one the converters write.

/// The optional q, k and v biases of `create_tensor_qkv`, each as wide as its projection.
const QKV_BIAS_OPT: &[ExpectedTensor] = &[
    optional_block("attn_q.bias", &[Q]),
    optional_block("attn_k.bias", &[K]),
    optional_block("attn_v.bias", &[V]),
];
/// seed_oss: the norm after attention, before the feed-forward block (no `ffn_norm`).
const POST_ATTN_NORM: &[ExpectedTensor] = &[block("post_attention_norm.weight", &[Embd])];
/// qwen3vl's optional classifier head (`cls.output`).
const CLS_OUT_OPT: &[ExpectedTensor] = &[optional_global("cls.output.weight", &[Embd, ClsOut])];
/// Nanbeige's loops over its blocks (optional; the blocks' weights are shared by each loop).
const NANBEIGE_KEYS: &[KeySpec] = &[
    opt("{arch}.num_loops", KeyType::Count),
    opt("{arch}.skip_loop_final_norm", KeyType::Bool),
];
/// `{arch}.expert_feed_forward_length`, optional (`n_ff / n_expert_used` without it).
const EXPERT_FF_OPT: &[KeySpec] = &[opt(EXPERT_FF_LENGTH, KeyType::Count)];
/// M-RoPE's sections, optional (hunyuan_vl: plain RoPE without them).
const ROPE_SECTIONS_OPT: &[KeySpec] = &[opt(ROPE_SECTIONS, KeyType::Sections)];
/// Whether attention is causal, optional (llama.cpp reads it for every architecture).
const CAUSAL_OPT: &[KeySpec] = &[opt("{arch}.attention.causal", KeyType::Bool)];
/// A llama block with q and k normalised per head (maincoder, hunyuan_vl).
const QK_NORM_LLAMA: &[&[ExpectedTensor]] = &[
    TOK_EMBD,
    OUT_NORM,
    OUTPUT_OPT,
    ATTN_NORM,
    ATTN,
    QKV_BIAS_OPT,
    QK_NORM,
    FFN_NORM,
    FFN_GLU,
];
/// Qwen3-MoE's block (qwen3vlmoe, rnd1): q and k norms, experts in every block.
const QK_NORM_MOE: &[&[ExpectedTensor]] = &[
    TOK_EMBD,
    OUT_NORM,
    OUTPUT_OPT,
    ATTN_NORM,
    ATTN,
    QKV_BIAS_OPT,
    QK_NORM,
    FFN_NORM,
    MOE_FF_EXP,
];
/// MiniMax-M2: q and k normalised across all heads (`n_head × n_embd_head_k` and
/// `n_head_kv × n_embd_head_k` wide).
const FULL_QK_NORM: &[ExpectedTensor] = &[
    block("attn_q_norm.weight", &[Q]),
    block("attn_k_norm.weight", &[K]),
];
/// The experts' selection bias (`exp_probs_b`), required.
const EXP_PROBS_B: &[ExpectedTensor] = &[expert_block("exp_probs_b.bias", &[Experts], true)];
/// EXAONE-MoE's optional expert keys (its NextN layers, `nextn_predict_layers`, are not
/// modelled).
const EXAONE_MOE_KEYS: &[KeySpec] = &[
    opt(EXPERT_SHARED_COUNT, KeyType::Count),
    opt(EXPERT_SHARED_FF_LENGTH, KeyType::Count),
    opt("{arch}.expert_weights_scale", KeyType::Float),
    opt("{arch}.expert_weights_norm", KeyType::Bool),
    opt(LEADING_DENSE_BLOCK_COUNT, KeyType::Count),
];
/// EXAONE-MoE's experts after the leading dense blocks: selection bias optional, one shared
/// expert `n_ff_shexp` wide (else `n_ff_exp`), always.
const EXAONE_MOE_EXPERTS: &[ExpectedTensor] = &[
    expert_block("ffn_gate_inp.weight", &[Embd, Experts], true),
    expert_block("exp_probs_b.bias", &[Experts], false),
    expert_block("ffn_gate_exps.weight", &[Embd, FfExp, Experts], true),
    expert_block("ffn_down_exps.weight", &[FfExp, Embd, Experts], true),
    expert_block("ffn_up_exps.weight", &[Embd, FfExp, Experts], true),
    expert_block("ffn_gate_shexp.weight", &[Embd, FfShexpExp], true),
    expert_block("ffn_down_shexp.weight", &[FfShexpExp, Embd], true),
    expert_block("ffn_up_shexp.weight", &[Embd, FfShexpExp], true),
];
/// EmbeddingGemma's optional dense projections after pooling (`dense_2`, `dense_3`; not
/// their tensors: the table does not model them).
const GEMMA_EMBEDDING_KEYS: &[KeySpec] = &[
    opt("{arch}.dense_2_feat_in", KeyType::Count),
    opt("{arch}.dense_2_feat_out", KeyType::Count),
    opt("{arch}.dense_3_feat_in", KeyType::Count),
    opt("{arch}.dense_3_feat_out", KeyType::Count),
];
/// AFMoE's required shared-expert count and optional expert keys (the gating function is
/// sigmoid without its key).
const AFMOE_KEYS: &[KeySpec] = &[
    req(EXPERT_SHARED_COUNT, KeyType::Count),
    opt(LEADING_DENSE_BLOCK_COUNT, KeyType::Count),
    opt("{arch}.expert_gating_func", KeyType::Count),
    opt("{arch}.expert_weights_scale", KeyType::Float),
    opt("{arch}.expert_weights_norm", KeyType::Bool),
];
/// AFMoE's attention output gate.
const ATTN_GATE: &[ExpectedTensor] = &[block("attn_gate.weight", &[Embd, Q])];
const FFN_POST_NORM: &[ExpectedTensor] = &[block("post_ffw_norm.weight", &[Embd])];
/// AFMoE's shared experts, `n_ff_exp × n_expert_shared` wide, when `expert_shared_count` > 0.
const AFMOE_SHARED: &[ExpectedTensor] = &[
    tensor(
        "ffn_gate_shexp.weight",
        Block,
        &[Embd, FfExpShared],
        true,
        When::ExpertsWith(EXPERT_SHARED_COUNT),
    ),
    tensor(
        "ffn_down_shexp.weight",
        Block,
        &[FfExpShared, Embd],
        true,
        When::ExpertsWith(EXPERT_SHARED_COUNT),
    ),
    tensor(
        "ffn_up_shexp.weight",
        Block,
        &[Embd, FfExpShared],
        true,
        When::ExpertsWith(EXPERT_SHARED_COUNT),
    ),
];
/// `{arch}.leading_dense_block_count`, optional (0 without it).
const LEADING_DENSE_OPT: &[KeySpec] = &[opt(LEADING_DENSE_BLOCK_COUNT, KeyType::Count)];
/// The optional q, k and v biases of a hybrid's attention blocks (`create_tensor_qkv`).
const HYBRID_QKV_BIAS_OPT: &[ExpectedTensor] = &[
    tensor("attn_q.bias", Block, &[Embd], false, When::Attention),
    tensor("attn_k.bias", Block, &[K], false, When::Attention),
    tensor("attn_v.bias", Block, &[V], false, When::Attention),
];
/// Apertus's xIELU activation parameters, per block or one for all (required; named
/// without the architecture).
const XIELU_KEYS: &[KeySpec] = &[
    req("xielu.alpha_n", KeyType::FloatPerLayer),
    req("xielu.alpha_p", KeyType::FloatPerLayer),
    req("xielu.beta", KeyType::FloatPerLayer),
    req("xielu.eps", KeyType::FloatPerLayer),
];
/// Apertus's q and k norms, biases optional.
const APERTUS_QK_NORM: &[ExpectedTensor] = &[
    block("attn_q_norm.weight", &[HeadK]),
    optional_block("attn_q_norm.bias", &[HeadK]),
    block("attn_k_norm.weight", &[HeadK]),
    optional_block("attn_k_norm.bias", &[HeadK]),
];
/// Cohere2-MoE's expert keys: the leading dense blocks (required), shared experts and the
/// gating (optional: sigmoid without it).
const COHERE2MOE_KEYS: &[KeySpec] = &[
    req(LEADING_DENSE_BLOCK_COUNT, KeyType::Count),
    opt(EXPERT_SHARED_COUNT, KeyType::Count),
    opt(EXPERT_SHARED_FF_LENGTH, KeyType::Count),
    opt("{arch}.expert_weights_norm", KeyType::Bool),
    opt("{arch}.expert_weights_scale", KeyType::Float),
    opt("{arch}.expert_gating_func", KeyType::Count),
];
/// Cohere2-MoE's shared experts, when `expert_shared_count` > 0 (its MTP blocks,
/// `nextn_predict_layers`, are not modelled; nor the fused `ffn_gate_up_exps` its loader also
/// takes).
const COHERE2MOE_SHARED: &[ExpectedTensor] = &[
    tensor(
        "ffn_gate_shexp.weight",
        Block,
        &[Embd, FfShexpExpShared],
        true,
        When::ExpertsWith(EXPERT_SHARED_COUNT),
    ),
    tensor(
        "ffn_down_shexp.weight",
        Block,
        &[FfShexpExpShared, Embd],
        true,
        When::ExpertsWith(EXPERT_SHARED_COUNT),
    ),
    tensor(
        "ffn_up_shexp.weight",
        Block,
        &[Embd, FfShexpExpShared],
        true,
        When::ExpertsWith(EXPERT_SHARED_COUNT),
    ),
];
/// Talkie: no norm tensors (its norms have no weights), a per-head q norm and a scale of
/// each block's output.
const TALKIE_BLOCK: &[ExpectedTensor] = &[
    block("attn_q_norm.weight", &[One, Heads]),
    block("layer_output_scale.weight", &[One]),
];
/// jina-bert-v3's embeddings: token types optional, the embeddings' layer norm.
const JINA_BERT_V3_EMBD: &[ExpectedTensor] = &[
    optional_global("token_types.weight", &[Embd, TokenTypes]),
    global("token_embd_norm.weight", &[Embd]),
    global("token_embd_norm.bias", &[Embd]),
];
