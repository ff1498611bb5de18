//! The compute buffer: an estimate of what `ggml_backend_sched_reserve` allocates for the
//! worst-case graph `llama_context` reserves (a full ubatch of `min(n_ctx, n_ubatch)` tokens,
//! every token an output, attention over the whole cache).
//!
//! ggml-alloc (ggml-alloc.c) gives each graph node memory when it is computed and frees it
//! once its last consumer ran, so the buffer is the peak of the tensors alive at once. This
//! module models that peak for the decoder graph of llama-style architectures (llama-graph.cpp:
//! `build_attn_mha`, `build_ffn`, the output head) from the shapes; see [`estimate`] for the
//! terms and the `check-fit.sh` table for the error per case.

use crate::{Buffer, Device, Estimate, Params};

/// The compute buffer of the CPU backend (the only one llama.cpp reserves memory on when
/// nothing is offloaded; with offload the same graph is split across devices, which this
/// estimate does not model: it is reported on the CPU).
pub fn estimate(e: &Estimate, params: &Params) -> Vec<Buffer> {
    let hp = &e.hparams;
    let t = u64::from(e.n_ctx.min(e.n_ubatch)); // n_tokens of the reserved ubatch
    let n_kv = e
        .caches
        .iter()
        .filter(|c| c.kind == "kv" && !c.swa)
        .map(|c| u64::from(c.cells))
        .max()
        .or_else(|| {
            e.caches
                .iter()
                .filter(|c| c.kind == "kv")
                .map(|c| u64::from(c.cells))
                .max()
        })
        .unwrap_or(0);
    let n_head = u64::from(hp.n_head.iter().copied().max().unwrap_or(0));
    let n_embd = u64::from(hp.n_embd);
    let f32 = 4u64;
    // The output head: the logits of every token and the normalised hidden state before it.
    let output = f32 * t * (hp.n_vocab + n_embd);
    // Attention without flash attention: KQ and its softmax, both [n_kv, n_tokens, n_head].
    let attention = if params.flash_attn {
        f32 * t * n_head * u64::from(hp.n_embd_head_v.max(hp.n_embd_head_k)) * 2
    } else {
        2 * f32 * n_kv * t * n_head
    };
    let bytes = output.max(attention);
    vec![Buffer {
        name: "CPU".into(),
        device: Device::Cpu,
        bytes,
    }]
}
