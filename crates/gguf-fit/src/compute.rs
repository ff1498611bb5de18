//! The compute buffer: what `ggml_backend_sched_reserve` allocates for the
//! worst-case graph `llama_context` reserves. For dense llama graphs (`llm_build_llama`
//! without experts) ggml-alloc itself is replayed on a description of that graph
//! (`alloc.rs`), which gives llama.cpp's figure to the byte, fragmentation included.
//! Every other architecture gets the fitted model below, an estimate of the same buffer for the
//! worst-case graph `llama_context` reserves (a ubatch of `T = min(n_ctx, n_ubatch)` tokens,
//! every token an output, attention over the whole cache).
//!
//! ggml-alloc (ggml-alloc.c) gives each graph node memory when it is computed and frees it
//! after its last consumer, so the buffer is the high-water mark of the tensors alive at
//! once (plus fragmentation, which this model does not include). The model is the largest of three
//! phases of the llama-style decoder graph (llama-graph.cpp), in f32 unless said, fitted to
//! llama.cpp's reported sizes on tiny models that vary one dimension at a time:
//!
//! - attention: the KQ mask `[n_kv, pad(T/n_stream, 64), n_stream]` of every cache (base and
//!   sliding-window); with flash attention also their f16 casts, except a later cache's when
//!   it fits in the feed-forward activations an earlier layer freed and the casts of the
//!   caches whose layers have all run before it; without flash attention
//!   `KQ = [n_kv, T, n_head]` (the softmax runs in place) and `T·(4·n_embd + 2·n_embd_k_gqa + 5)`
//!   of activations; with flash attention `T·(4·n_embd + 7)`;
//! - feed-forward: the mask (f32, or its f16 copy with flash attention) and
//!   `T·(3·n_ff + 3·n_embd + 5)` (gate, up and their product);
//! - output head: the logits `T·n_vocab` and `T·2·n_embd` (the mask is no longer counted:
//!   ggml-alloc has freed or reused it by then);
//! - recurrent layers (mamba-style), in place of attention:
//!   `T·(in_proj + 2·conv + 2·d_inner + 2)` (the input projection, the convolution input and
//!   output, the scan's output and gate) and, per sequence, twice the `r` state (mamba: also
//!   the `s` state); fitted on a tiny mamba and a tiny mamba2; rwkv's graph is not modelled
//!   beyond this. In a hybrid, a recurrent layer's phase holds the f32 mask too, and its f16
//!   cast only if an attention layer came first (fitted on a tiny jamba, checked on falcon-h1).
//!
//! The test table (`scripts/check-fit.sh`) gives the error per case.

use crate::{too_large, Buffer, Device, Estimate, FitError, MemoryKind, Params};

/// Architectures whose graph the model above does not describe, so that no compute figure is
/// given for them: measured by `scripts/check-fit.sh` on their tiny models, the estimate was
/// 20% to 560% off llama.cpp's figure (chameleon's image-token logit mask, gemma3n's per-layer
/// embeddings and AltUp, grok's extra norms and scaling with flash attention, t5's encoder and
/// decoder graphs, t5encoder's encoder graph), 17% to 42% under for rwkv7, arwkv7 and
/// rwkv6qwen2 (their time mixing), and 12% to 14% under for `gguf fixtures`' mamba (the
/// recurrent phase fitted on another tiny mamba does not carry over).
pub const NOT_MODELLED: &[&str] = &[
    "chameleon",
    "gemma3n",
    "grok",
    "t5",
    "t5encoder",
    "rwkv7",
    "arwkv7",
    "rwkv6qwen2",
    "mamba",
];

/// Why `Estimate::compute` is `Err` with GPU devices.
pub const NOT_ESTIMATED_GPU: &str = "the compute buffers are not estimated with GPU devices: \
llama.cpp's scheduler splits the graph across the backends, which the estimate does not model";

/// Why `Estimate::compute` is `Err` for llama.cpp 0.3.36 outside the dense llama graph: only
/// that graph is replayed for 0.3.36 (`alloc.rs`, byte-equal); the fitted model below was
/// fitted on 0.3.16's graphs, which 0.3.36 changed (measured by `scripts/check-fit.sh`: with
/// flash attention its buffers are up to half of 0.3.16's), so it gives no 0.3.36 figure.
pub const NOT_ESTIMATED_RELEASE: &str = "the compute buffer is not estimated for this \
architecture in llama.cpp 0.3.36: only the dense llama graph is modelled for that release";

/// Why `Estimate::compute` is `Err` for an architecture of [`NOT_MODELLED`].
pub const NOT_ESTIMATED_GRAPH: &str =
    "the compute buffer is not estimated for this architecture: its graph is not modelled";

/// The compute buffer of the CPU backend, without GPU devices. With GPUs llama.cpp splits the
/// graph across the backends; that split is not modelled and the estimate then gives no
/// compute figure (`Estimate::compute` is `Err`). A buffer past 64 bits is refused.
pub fn estimate(e: &Estimate, params: &Params) -> Result<Vec<Buffer>, FitError> {
    let simulated = crate::alloc::models(e)
        .then(|| simulated(e, params))
        .flatten();
    let bytes = simulated.unwrap_or_else(|| analytic(e, params));
    let bytes = u64::try_from(bytes).map_err(|_| {
        too_large(format!(
            "the compute buffer (context {}, ubatch {}, {} sequences)",
            e.n_ctx, e.n_ubatch, params.n_parallel
        ))
    })?;
    Ok(vec![Buffer {
        name: "CPU".into(),
        device: Device::Cpu,
        bytes,
    }])
}

/// ggml-alloc replayed on the graphs `llama_context` reserves (`graph_reserve`): the prompt
/// graph of `min(n_ctx, n_ubatch)` tokens (rounded up to a multiple of the sequences) and the
/// one-token-per-sequence graph; the buffer is the larger.
fn simulated(e: &Estimate, params: &Params) -> Option<u128> {
    let n_seqs = if params.kv_unified {
        1
    } else {
        u64::from(params.n_parallel.max(1))
    };
    let n_tokens = u64::from(e.n_ctx.min(e.n_ubatch)).div_ceil(n_seqs) * n_seqs;
    let pp = crate::alloc::llama(e, params, n_tokens).peak()?;
    let tg = crate::alloc::llama(e, params, n_seqs).peak()?;
    Some(u128::from(pp.max(tg)))
}

fn analytic(e: &Estimate, params: &Params) -> u128 {
    let hp = &e.hparams;
    if hp.arch == "rwkv6" {
        return rwkv6(e, params);
    }
    // u128: the products of four 32-bit header values cannot overflow.
    let t = u128::from(e.n_ctx.min(e.n_ubatch));
    let f32 = 4u128;
    let kv: Vec<_> = e
        .caches
        .iter()
        .filter(|c| c.kind == "kv" && !c.layers.is_empty())
        .collect();
    // One f32 mask per cache, in the order the graph first uses them: (first layer, last
    // layer, bytes).
    let mut masks: Vec<(u32, u32, u128)> = kv
        .iter()
        .map(|c| {
            let ns = u128::from(c.n_stream);
            let per = t.div_ceil(ns).div_ceil(64) * 64;
            let last = c.layers.last().map_or(0, |l| l.layer);
            (
                c.layers[0].layer,
                last,
                f32 * u128::from(c.cells) * per * ns,
            )
        })
        .collect();
    masks.sort();
    let mask: u128 = masks.iter().map(|m| m.2).sum();
    let n_embd = u128::from(hp.n_embd);
    let n_ff = u128::from(hp.n_ff.iter().copied().max().unwrap_or(0));
    let ffn = f32 * t * (3 * n_ff + 3 * n_embd + 5);
    // With flash attention each f32 mask is cast to f16 where first used (the f32 ones stay:
    // they are inputs). The first cast comes before any layer has run; a later one fits in
    // the feed-forward activations an earlier layer freed, if it is no larger, together with
    // the casts of the caches whose layers have all run by then (freed after their last
    // layer: the tiny gemma2, gemma3, cohere2 and llama4 of `gguf fixtures --all-archs`,
    // whose sliding-window layers all come before the one full layer, were +19 to +22% with
    // flash attention without it).
    let mask_f16: u128 = masks.iter().map(|m| m.2 / 2).sum();
    let at_attention = if params.flash_attn {
        let later: u128 = masks
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, m)| {
                let freed: u128 = masks[..i]
                    .iter()
                    .filter(|e| e.1 < m.0)
                    .map(|e| e.2 / 2)
                    .sum();
                (m.2 / 2, ffn + freed)
            })
            .filter(|&(cast, room)| cast > room)
            .map(|(cast, _)| cast)
            .sum();
        mask + masks.first().map_or(0, |m| m.2 / 2) + later
    } else {
        mask
    };
    let n_kv = kv.iter().map(|c| u128::from(c.cells)).max().unwrap_or(0);
    let n_head = u128::from(hp.n_head.iter().copied().max().unwrap_or(0));
    let n_embd_kv = (0..hp.n_layer as usize)
        .map(|il| u128::from(hp.n_embd_k_gqa(il)))
        .max()
        .unwrap_or(0);
    let attention = if kv.is_empty() {
        0
    } else if params.flash_attn {
        f32 * t * (4 * n_embd + 7)
    } else {
        f32 * n_kv * t * n_head + f32 * t * (4 * n_embd + 2 * n_embd_kv + 5)
    };
    // MLA attends in the compressed space: the absorbed queries `[n_embd_head_k, n_head, T]`
    // and their permuted copy.
    let mla = if hp.n_embd_head_k_mla > 0 && !kv.is_empty() {
        2 * f32 * t * n_head * u128::from(hp.n_embd_head_k)
    } else {
        0
    };
    let attention = attention + mla;
    let recurrent = if e.hparams.memory == MemoryKind::Kv || e.hparams.memory == MemoryKind::None {
        0
    } else {
        let n_seqs = if params.kv_unified {
            1
        } else {
            u128::from(params.n_parallel.max(1))
        };
        let d_inner = u128::from(hp.ssm_d_inner);
        let groups = 2 * u128::from(hp.ssm_n_group) * u128::from(hp.ssm_d_state);
        // mamba2's input projection also yields B, C and the per-head dt.
        let heads = if hp.arch == "mamba2" {
            u128::from(hp.ssm_dt_rank)
        } else {
            0
        };
        let in_proj = 2 * d_inner + groups + heads;
        let conv = d_inner + groups;
        // mamba also copies its s state. mamba2's scan writes its output and the new states
        // in one tensor (`d_inner·T + n_seqs·n_embd_s`), which ggml-alloc puts in the block
        // the convolution's input (`conv·(T + n_seqs·(d_conv − 1))`, the concat of the old
        // conv state and x) just freed when it fits there (ggml-alloc's trace, ubatch 8 to
        // 64); when it does not, the states come on top.
        let n_embd_s = u128::from(hp.n_embd_s());
        let scan_out = d_inner * t + n_seqs * n_embd_s;
        let conv_in = conv * (t + n_seqs * u128::from(hp.ssm_d_conv.saturating_sub(1)));
        let s_copy = match hp.arch.as_str() {
            "mamba" => n_embd_s,
            "mamba2" if scan_out > conv_in => n_embd_s,
            _ => 0,
        };
        f32 * t * (in_proj + 2 * conv + 2 * d_inner + 2)
            + f32 * n_seqs * (2 * u128::from(hp.n_embd_r()) + 8 + s_copy)
    };
    let output = f32 * t * (u128::from(hp.n_vocab) + 2 * n_embd);
    // A recurrent layer runs beside the f32 mask (an input, alive from the start) until the
    // first attention layer casts it to f16 for flash attention, which frees it: from then
    // on beside the f16 cast. (jamba's first layer is recurrent; falcon-h1 runs attention
    // before the mixer in every layer.)
    let first_attention = kv
        .iter()
        .filter_map(|c| c.layers.first())
        .map(|l| l.layer)
        .min();
    let held = (0..hp.n_layer)
        .filter(|&il| hp.recurrent_layers.get(il as usize) == Some(&true))
        .map(|il| match first_attention {
            Some(a) if params.flash_attn && a <= il => mask_f16,
            _ => mask,
        })
        .max()
        .unwrap_or(mask);
    let recurrent_phase = if recurrent == 0 { 0 } else { held + recurrent };
    (at_attention + attention)
        .max(recurrent_phase)
        .max(if params.flash_attn { mask_f16 } else { mask } + ffn)
        .max(output)
}

/// rwkv6: the time mix's peak, `T·(13·n_embd + 2)` f32 values, plus per sequence the WKV
/// state twice and the token-shift state (`2·n_embd_s + n_embd_r`), plus one aligned input;
/// or the output head's logits when larger. Fitted on tiny rwkv6 models (n_embd 64 and 128,
/// n_ff 128 and 256, ubatch 16 to 512, 1 to 4 sequences), exact on each; a channel mix
/// far wider than the time mix is not modelled.
fn rwkv6(e: &Estimate, params: &Params) -> u128 {
    let hp = &e.hparams;
    let t = u128::from(e.n_ctx.min(e.n_ubatch));
    let n_embd = u128::from(hp.n_embd);
    let n_seqs = if params.kv_unified {
        1
    } else {
        u128::from(params.n_parallel.max(1))
    };
    let state = 4 * (2 * u128::from(hp.n_embd_s()) + u128::from(hp.n_embd_r()));
    let time_mix = 4 * t * (13 * n_embd + 2) + n_seqs * state + 32;
    let output = 4 * t * (u128::from(hp.n_vocab) + 2 * n_embd);
    time_mix.max(output)
}
