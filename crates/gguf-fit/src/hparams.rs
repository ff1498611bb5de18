//! The hyperparameters llama.cpp's `llama_model::load_hparams` reads (llama-model.cpp) that the
//! memory depends on, with its defaults and per-architecture rules.

use gguf_grammar::{Gguf, Value};
use gguf_llama::hparams::{get_key_or_arr, sliding_window, KeyOrArr, WindowApplies, WindowSize};

use crate::FitError;

/// How sliding-window layers see the past (`llama_swa_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwaType {
    /// No sliding window.
    None,
    /// A window of `n_swa` tokens (gemma2/3, cohere2, gpt-oss, exaone4).
    Standard,
    /// Chunks of `n_swa` tokens (llama4).
    Chunked,
}

/// What kind of memory the context keeps (`llama_model::create_memory`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryKind {
    /// No cache at all (encoders: bert and its kin, wavtokenizer, the diffusion models).
    None,
    /// A KV cache (`llama_kv_cache_unified`, or the `_iswa` pair when there are SWA layers).
    Kv,
    /// Recurrent state only (`llama_memory_recurrent`: mamba, mamba2, rwkv6/7).
    Recurrent,
    /// Both, per layer (`llama_memory_hybrid`: jamba, falcon-h1, plamo2, granitehybrid, lfm2,
    /// lfm2moe: `llm_arch_is_hybrid` of 0.3.36).
    Hybrid,
}

/// The hyperparameters the memory depends on.
#[derive(Clone, Debug, PartialEq)]
pub struct Hparams {
    /// `general.architecture`.
    pub arch: String,
    /// `{arch}.block_count`.
    pub n_layer: u32,
    /// `{arch}.embedding_length`.
    pub n_embd: u32,
    /// `{arch}.context_length`.
    pub n_ctx_train: u32,
    /// The tokenizer's token count (`tokenizer.ggml.tokens`), llama.cpp's `vocab.n_tokens()`.
    pub n_vocab: u64,
    /// Query heads per layer (`{arch}.attention.head_count`, a number or a per-layer array).
    pub n_head: Vec<u32>,
    /// KV heads per layer (`{arch}.attention.head_count_kv`; defaults to `n_head`).
    pub n_head_kv: Vec<u32>,
    /// Key length per head (`{arch}.attention.key_length`; default `n_embd / n_head[0]`).
    pub n_embd_head_k: u32,
    /// Value length per head (`{arch}.attention.value_length`; default `n_embd / n_head[0]`).
    pub n_embd_head_v: u32,
    /// Sliding window kind.
    pub swa_type: SwaType,
    /// Sliding window size.
    pub n_swa: u32,
    /// Which layers use the sliding window.
    pub swa_layers: Vec<bool>,
    /// Which layers keep recurrent state (all of a recurrent model's; a hybrid's without KV heads).
    pub recurrent_layers: Vec<bool>,
    /// Whether attention is causal (`{arch}.attention.causal`, default true).
    pub causal_attn: bool,
    /// Layers that get a KV cache (gemma3n: 20, glm4moe: without its NextN layers).
    pub n_layer_kv_cache: u32,
    /// The memory module.
    pub memory: MemoryKind,
    /// `{arch}.ssm.conv_kernel`.
    pub ssm_d_conv: u32,
    /// `{arch}.ssm.inner_size`.
    pub ssm_d_inner: u32,
    /// `{arch}.ssm.state_size`.
    pub ssm_d_state: u32,
    /// `{arch}.ssm.group_count`.
    pub ssm_n_group: u32,
    /// `{arch}.ssm.time_step_rank` (mamba2: its head count).
    pub ssm_dt_rank: u32,
    /// `{arch}.wkv.head_size` (rwkv).
    pub wkv_head_size: u32,
    /// `{arch}.token_shift_count` (rwkv, default 2).
    pub token_shift_count: u32,
    /// `{arch}.shortconv.l_cache` (lfm2).
    pub n_shortconv_l_cache: u32,
    /// `{arch}.expert_count`.
    pub n_expert: u32,
    /// `{arch}.expert_used_count`.
    pub n_expert_used: u32,
    /// Feed-forward length per layer (`{arch}.feed_forward_length`).
    pub n_ff: Vec<u32>,
    /// `{arch}.attention.key_length_mla`: a head's key length after decompression (deepseek2
    /// with MLA; 0 otherwise).
    pub n_embd_head_k_mla: u32,
}

fn arch_key(arch: &str, key: &str) -> String {
    format!("{arch}.{key}")
}

fn u32_of(value: Value<'_>, key: &str) -> Result<u32, FitError> {
    value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| FitError::new(format!("`{key}` is not an unsigned 32-bit number")))
}

fn opt_u32(gguf: &Gguf<'_>, key: &str) -> Result<Option<u32>, FitError> {
    gguf.get(key).map(|v| u32_of(v, key)).transpose()
}

fn req_u32(gguf: &Gguf<'_>, key: &str) -> Result<u32, FitError> {
    opt_u32(gguf, key)?.ok_or_else(|| FitError::new(format!("key not found in model: {key}")))
}

/// `get_key_or_arr` (gguf-llama's) with every value an unsigned 32-bit number: one for
/// every layer.
fn key_or_arr(gguf: &Gguf<'_>, key: &str, n_layer: u32) -> Result<Option<Vec<u32>>, FitError> {
    let Some(value) = gguf.get(key) else {
        return Ok(None);
    };
    match get_key_or_arr(key, value, Some(u64::from(n_layer))) {
        Err(wrong) => Err(FitError::new(wrong.to_string())),
        Ok(KeyOrArr::PerLayer(array)) => array
            .iter()
            .map(|v| u32_of(v, key))
            .collect::<Result<_, _>>()
            .map(Some),
        Ok(KeyOrArr::One(value)) => Ok(Some(vec![u32_of(value, key)?; n_layer as usize])),
    }
}

impl Hparams {
    /// Reads the hyperparameters as `load_hparams` does.
    pub fn read(gguf: &Gguf<'_>) -> Result<Self, FitError> {
        let arch = gguf
            .get("general.architecture")
            .and_then(|v| v.as_str())
            .ok_or_else(|| FitError::new("no `general.architecture` string"))?
            .to_string();
        let k = |key: &str| arch_key(&arch, key);
        let n_layer = req_u32(gguf, &k("block_count"))?;
        // llama.cpp's per-layer arrays hold LLAMA_MAX_LAYERS (512) entries.
        if n_layer > 512 {
            return Err(FitError::new(format!(
                "block_count {n_layer} exceeds llama.cpp's 512 layers"
            )));
        }
        let n_embd = req_u32(gguf, &k("embedding_length"))?;
        let n_ctx_train = req_u32(gguf, &k("context_length"))?;
        let n_vocab = gguf
            .get("tokenizer.ggml.tokens")
            .and_then(|v| v.as_array())
            .map_or(0, |a| a.len() as u64);
        let n_head = key_or_arr(gguf, &k("attention.head_count"), n_layer)?
            .unwrap_or_else(|| vec![0; n_layer as usize]);
        let n_head_kv = key_or_arr(gguf, &k("attention.head_count_kv"), n_layer)?
            .unwrap_or_else(|| n_head.clone());
        let n_ff = key_or_arr(gguf, &k("feed_forward_length"), n_layer)?
            .unwrap_or_else(|| vec![0; n_layer as usize]);
        let head0 = n_head.first().copied().unwrap_or(0);
        // Models without attention heads have no per-head lengths.
        let (n_embd_head_k, n_embd_head_v) = match n_embd.checked_div(head0) {
            Some(head) => (
                opt_u32(gguf, &k("attention.key_length"))?.unwrap_or(head),
                opt_u32(gguf, &k("attention.value_length"))?.unwrap_or(head),
            ),
            None => (0, 0),
        };
        let memory = match arch.as_str() {
            "bert" | "jina-bert-v2" | "nomic-bert" | "nomic-bert-moe" | "neo-bert"
            | "wavtokenizer-dec" | "dream" | "llada" => MemoryKind::None,
            // 0.3.36's create_memory adds these (0.3.16 does not know them); no tiny model of
            // them is measured yet.
            "jina-bert-v3" | "eurobert" | "modern-bert" | "gemma-embedding" | "llada-moe"
            | "rnd1" => MemoryKind::None,
            "mamba" | "mamba2" | "rwkv6" | "rwkv6qwen2" | "rwkv7" | "arwkv7" => {
                MemoryKind::Recurrent
            }
            "jamba" | "falcon-h1" | "plamo2" | "granitehybrid" | "lfm2" | "lfm2moe" => {
                MemoryKind::Hybrid
            }
            _ => MemoryKind::Kv,
        };
        let recurrent_layers = match memory {
            MemoryKind::Recurrent => vec![true; n_layer as usize],
            // falcon-h1 keeps both caches for every layer (its filters accept all).
            MemoryKind::Hybrid if arch == "falcon-h1" => vec![true; n_layer as usize],
            MemoryKind::Hybrid => n_head_kv.iter().map(|&h| h == 0).collect(),
            _ => vec![false; n_layer as usize],
        };
        let sliding = opt_u32(gguf, &k("attention.sliding_window"))?;
        let window = sliding_window(&arch).filter(|w| match w.applies {
            WindowApplies::Always => true,
            WindowApplies::BlockCount(n) => n_layer == n,
            WindowApplies::WindowSet => sliding.is_some_and(|n| n > 0),
        });
        let (swa_type, n_swa, swa_layers) = match window {
            Some(w) => (
                if w.chunked {
                    SwaType::Chunked
                } else {
                    SwaType::Standard
                },
                match w.size {
                    WindowSize::Key => req_u32(gguf, &k("attention.sliding_window"))?,
                    WindowSize::KeyOr(default) => sliding.unwrap_or(default),
                    WindowSize::Fixed(n) => n,
                },
                w.layers(n_layer),
            ),
            None => (SwaType::None, 0, vec![false; n_layer as usize]),
        };
        let n_layer_kv_cache = match arch.as_str() {
            "gemma3n" => 20.min(n_layer),
            "glm4moe" => {
                n_layer.saturating_sub(opt_u32(gguf, &k("nextn_predict_layers"))?.unwrap_or(0))
            }
            _ => n_layer,
        };
        Ok(Hparams {
            n_layer,
            n_embd,
            n_ctx_train,
            n_vocab,
            n_head,
            n_head_kv,
            n_embd_head_k,
            n_embd_head_v,
            swa_type,
            n_swa,
            swa_layers,
            recurrent_layers,
            causal_attn: gguf
                .get(&k("attention.causal"))
                .and_then(|v| v.as_bool())
                .unwrap_or(true),
            n_layer_kv_cache,
            memory,
            ssm_d_conv: opt_u32(gguf, &k("ssm.conv_kernel"))?.unwrap_or(0),
            ssm_d_inner: opt_u32(gguf, &k("ssm.inner_size"))?.unwrap_or(0),
            ssm_d_state: opt_u32(gguf, &k("ssm.state_size"))?.unwrap_or(0),
            ssm_n_group: opt_u32(gguf, &k("ssm.group_count"))?.unwrap_or(0),
            ssm_dt_rank: opt_u32(gguf, &k("ssm.time_step_rank"))?.unwrap_or(0),
            wkv_head_size: opt_u32(gguf, &k("wkv.head_size"))?.unwrap_or(0),
            token_shift_count: opt_u32(gguf, &k("token_shift_count"))?.unwrap_or(2),
            n_shortconv_l_cache: opt_u32(gguf, &k("shortconv.l_cache"))?.unwrap_or(0),
            n_expert: opt_u32(gguf, &k("expert_count"))?.unwrap_or(0),
            n_expert_used: opt_u32(gguf, &k("expert_used_count"))?.unwrap_or(0),
            n_ff,
            n_embd_head_k_mla: opt_u32(gguf, &k("attention.key_length_mla"))?.unwrap_or(0),
            arch,
        })
    }

    /// `n_embd_k_gqa(il)`: the K row of layer `il`.
    pub fn n_embd_k_gqa(&self, il: usize) -> u64 {
        u64::from(self.n_embd_head_k) * u64::from(self.n_head_kv[il])
    }

    /// `n_embd_v_gqa(il)`: the V row of layer `il`.
    pub fn n_embd_v_gqa(&self, il: usize) -> u64 {
        u64::from(self.n_embd_head_v) * u64::from(self.n_head_kv[il])
    }

    /// `n_embd_v_gqa_max()`: the V cache's row when V is transposed and rows differ.
    pub fn n_embd_v_gqa_max(&self) -> u64 {
        (0..self.n_layer as usize)
            .map(|il| self.n_embd_v_gqa(il))
            .max()
            .unwrap_or(0)
    }

    /// `n_embd_r()`: the recurrent "r" (convolution / token shift) state per cell.
    pub fn n_embd_r(&self) -> u64 {
        let n_embd = u64::from(self.n_embd);
        if self.wkv_head_size != 0 {
            return u64::from(self.token_shift_count) * n_embd;
        }
        if self.n_shortconv_l_cache != 0 {
            return n_embd * u64::from(self.n_shortconv_l_cache - 1);
        }
        let groups = (2 * u64::from(self.ssm_n_group)).saturating_mul(u64::from(self.ssm_d_state));
        u64::from(self.ssm_d_conv.saturating_sub(1))
            .saturating_mul(u64::from(self.ssm_d_inner).saturating_add(groups))
    }

    /// `n_embd_s()`: the recurrent "s" (SSM / WKV) state per cell.
    pub fn n_embd_s(&self) -> u64 {
        if self.wkv_head_size != 0 {
            return u64::from(self.n_embd) * u64::from(self.wkv_head_size);
        }
        u64::from(self.ssm_d_state) * u64::from(self.ssm_d_inner)
    }

    /// Whether any layer uses the sliding window (`is_swa_any`).
    pub fn is_swa_any(&self) -> bool {
        self.swa_type != SwaType::None && self.swa_layers.iter().any(|&s| s)
    }
}
