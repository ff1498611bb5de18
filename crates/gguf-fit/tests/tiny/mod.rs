//! Tiny models llama.cpp loads, written with the crate's `GgufBuilder` (zero-filled tensor
//! data: llama.cpp does not look at the values to allocate memory).

use gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_grammar::{Ctx, GgmlType, ValueType};

/// A tiny model: its file name and bytes.
pub struct Tiny {
    pub name: &'static str,
    pub bytes: Vec<u8>,
}

pub struct Spec {
    arch: &'static str,
    kvs: Vec<(String, OwnedValue)>,
    tensors: Vec<(String, Vec<u64>, GgmlType)>,
}

impl Spec {
    fn new(arch: &'static str, n_vocab: u32) -> Self {
        let mut tokens = vec!["<unk>".to_string(), "<s>".to_string(), "</s>".to_string()];
        tokens.extend((3..n_vocab).map(|i| format!("\u{2581}t{i}")));
        let scores: Vec<f32> = (0..n_vocab).map(|i| -(i as f32)).collect();
        let types: Vec<i32> = (0..n_vocab)
            .map(|i| match i {
                0 => 2,
                1 | 2 => 3,
                _ => 1,
            })
            .collect();
        let kvs = vec![
            ("general.architecture".into(), OwnedValue::from(arch)),
            ("general.name".into(), OwnedValue::from("tiny")),
            ("tokenizer.ggml.model".into(), OwnedValue::from("llama")),
            (
                "tokenizer.ggml.tokens".into(),
                OwnedValue::array(ValueType::String, tokens.iter().map(|s| s.as_str())),
            ),
            (
                "tokenizer.ggml.scores".into(),
                OwnedValue::array(ValueType::F32, scores),
            ),
            (
                "tokenizer.ggml.token_type".into(),
                OwnedValue::array(ValueType::I32, types),
            ),
            ("tokenizer.ggml.bos_token_id".into(), OwnedValue::from(1u32)),
            ("tokenizer.ggml.eos_token_id".into(), OwnedValue::from(2u32)),
        ];
        Spec {
            arch,
            kvs,
            tensors: Vec::new(),
        }
    }

    fn kv(&mut self, key: &str, value: impl Into<OwnedValue>) -> &mut Self {
        self.kvs
            .push((format!("{}.{key}", self.arch), value.into()));
        self
    }

    fn t(&mut self, name: &str, dims: &[u64], ty: GgmlType) -> &mut Self {
        self.tensors.push((name.to_string(), dims.to_vec(), ty));
        self
    }

    pub fn build(&self) -> Vec<u8> {
        let data: Vec<Vec<u8>> = self
            .tensors
            .iter()
            .map(|(_, dims, ty)| vec![0u8; ty.n_bytes(dims).expect("a valid tiny shape") as usize])
            .collect();
        let mut b = GgufBuilder::new(Ctx::V3_LE);
        for (k, v) in &self.kvs {
            b.kv(k, v.clone());
        }
        for ((name, dims, ty), bytes) in self.tensors.iter().zip(&data) {
            b.tensor(name, dims, *ty, bytes);
        }
        b.build().expect("the tiny model builds")
    }
}

fn u32s(values: &[u32]) -> OwnedValue {
    OwnedValue::array(ValueType::U32, values.iter().copied())
}

/// A llama block set: `n_layer` blocks of `n_head` heads (`n_head_kv` KV heads) of `head` each.
#[allow(clippy::too_many_arguments)]
pub fn llama_like(
    arch: &'static str,
    n_vocab: u32,
    n_embd: u64,
    n_layer: u32,
    n_head: u32,
    n_head_kv: u32,
    n_ff: u64,
    matrix: GgmlType,
    tied: bool,
) -> Spec {
    let mut s = Spec::new(arch, n_vocab);
    let head = n_embd / u64::from(n_head);
    let kv = head * u64::from(n_head_kv);
    s.kv("context_length", 2048u32)
        .kv("embedding_length", n_embd as u32)
        .kv("block_count", n_layer)
        .kv("feed_forward_length", n_ff as u32)
        .kv("attention.head_count", n_head)
        .kv("attention.head_count_kv", n_head_kv)
        .kv("attention.layer_norm_rms_epsilon", 1e-5f32)
        .kv("rope.dimension_count", head as u32);
    let nv = u64::from(n_vocab);
    s.t(
        "token_embd.weight",
        &[n_embd, nv],
        if tied { matrix } else { GgmlType::Q8_0 },
    );
    s.t("output_norm.weight", &[n_embd], GgmlType::F32);
    if !tied {
        s.t("output.weight", &[n_embd, nv], matrix);
    }
    for i in 0..n_layer {
        let p = |n: &str| format!("blk.{i}.{n}.weight");
        s.t(&p("attn_norm"), &[n_embd], GgmlType::F32)
            .t(&p("attn_q"), &[n_embd, n_embd], matrix)
            .t(&p("attn_k"), &[n_embd, kv], matrix)
            .t(&p("attn_v"), &[n_embd, kv], matrix)
            .t(&p("attn_output"), &[n_embd, n_embd], matrix)
            .t(&p("ffn_norm"), &[n_embd], GgmlType::F32)
            .t(&p("ffn_gate"), &[n_embd, n_ff], matrix)
            .t(&p("ffn_down"), &[n_ff, n_embd], matrix)
            .t(&p("ffn_up"), &[n_embd, n_ff], matrix);
    }
    s
}

/// The tiny models of the comparison.
pub fn all() -> Vec<Tiny> {
    let mut out = vec![
        // llama, grouped-query attention, f16 matrices, its own output matrix.
        Tiny {
            name: "llama-f16.gguf",
            bytes: llama_like("llama", 256, 64, 2, 4, 2, 128, GgmlType::F16, false).build(),
        },
        // llama with tied embeddings and Q4_0 matrices (repacked by the CPU backend; the tied
        // output matrix is duplicated into the repack buffer).
        Tiny {
            name: "llama-q4_0-tied.gguf",
            bytes: llama_like("llama", 320, 256, 3, 8, 8, 512, GgmlType::Q4_0, true).build(),
        },
    ];
    // Held out: shapes not used to fit the compute estimate (5 heads of 32, one KV head,
    // n_ff 448, q8_0 matrices, 500 tokens).
    out.push(Tiny {
        name: "holdout-llama-q8_0.gguf",
        bytes: llama_like("llama", 500, 160, 3, 5, 1, 448, GgmlType::Q8_0, false).build(),
    });
    // llama with 4 experts (2 used), q4_K matrices and experts (repacked: MUL_MAT and
    // MUL_MAT_ID), tied q4_K embeddings, a rope_freqs tensor (created for every layer).
    {
        let mut s = Spec::new("llama", 256);
        let (n_embd, n_ff, n_expert) = (256u64, 256u64, 4u64);
        s.kv("context_length", 4096u32)
            .kv("embedding_length", n_embd as u32)
            .kv("block_count", 2u32)
            .kv("feed_forward_length", n_ff as u32)
            .kv("attention.head_count", 4u32)
            .kv("attention.head_count_kv", 2u32)
            .kv("expert_count", n_expert as u32)
            .kv("expert_used_count", 2u32)
            .kv("attention.layer_norm_rms_epsilon", 1e-5f32)
            .kv("rope.dimension_count", 64u32);
        s.t("token_embd.weight", &[n_embd, 256], GgmlType::Q4_K)
            .t("output_norm.weight", &[n_embd], GgmlType::F32)
            .t("rope_freqs.weight", &[32], GgmlType::F32);
        for i in 0..2 {
            let p = |n: &str| format!("blk.{i}.{n}.weight");
            s.t(&p("attn_norm"), &[n_embd], GgmlType::F32)
                .t(&p("attn_q"), &[n_embd, n_embd], GgmlType::Q4_K)
                .t(&p("attn_k"), &[n_embd, 128], GgmlType::Q4_K)
                .t(&p("attn_v"), &[n_embd, 128], GgmlType::Q4_K)
                .t(&p("attn_output"), &[n_embd, n_embd], GgmlType::Q4_K)
                .t(&p("ffn_norm"), &[n_embd], GgmlType::F32)
                .t(&p("ffn_gate_inp"), &[n_embd, n_expert], GgmlType::F32)
                .t(
                    &p("ffn_gate_exps"),
                    &[n_embd, n_ff, n_expert],
                    GgmlType::Q4_K,
                )
                .t(
                    &p("ffn_down_exps"),
                    &[n_ff, n_embd, n_expert],
                    GgmlType::Q4_K,
                )
                .t(&p("ffn_up_exps"), &[n_embd, n_ff, n_expert], GgmlType::Q4_K);
        }
        out.push(Tiny {
            name: "llama-moe-q4_k.gguf",
            bytes: s.build(),
        });
    }
    // deci: per-layer head counts, a layer with one KV head, a linear-attention layer (no KV
    // heads) and a layer without attention or feed-forward.
    {
        let mut s = Spec::new("deci", 128);
        let (n_embd, head) = (64u64, 16u64);
        s.kv("context_length", 1024u32)
            .kv("embedding_length", n_embd as u32)
            .kv("block_count", 4u32)
            .kv("attention.head_count", u32s(&[4, 4, 4, 0]))
            .kv("attention.head_count_kv", u32s(&[2, 1, 0, 0]))
            .kv("feed_forward_length", u32s(&[128, 96, 64, 0]))
            .kv("attention.layer_norm_rms_epsilon", 1e-5f32)
            .kv("rope.dimension_count", head as u32);
        s.t("token_embd.weight", &[n_embd, 128], GgmlType::F16)
            .t("output_norm.weight", &[n_embd], GgmlType::F32)
            .t("output.weight", &[n_embd, 128], GgmlType::F16);
        for (i, (kv, ff)) in [(2u64, 128u64), (1, 96), (0, 64), (0, 0)]
            .into_iter()
            .enumerate()
        {
            let p = |n: &str| format!("blk.{i}.{n}.weight");
            if i < 3 {
                s.t(&p("attn_norm"), &[n_embd], GgmlType::F32);
            }
            if kv > 0 {
                s.t(&p("attn_q"), &[n_embd, n_embd], GgmlType::F16)
                    .t(&p("attn_k"), &[n_embd, kv * head], GgmlType::F16)
                    .t(&p("attn_v"), &[n_embd, kv * head], GgmlType::F16);
            }
            if i < 3 {
                s.t(&p("attn_output"), &[n_embd, n_embd], GgmlType::F16);
            }
            if ff > 0 {
                s.t(&p("ffn_norm"), &[n_embd], GgmlType::F32)
                    .t(&p("ffn_gate"), &[n_embd, ff], GgmlType::F16)
                    .t(&p("ffn_down"), &[ff, n_embd], GgmlType::F16)
                    .t(&p("ffn_up"), &[n_embd, ff], GgmlType::F16);
            }
        }
        out.push(Tiny {
            name: "deci-per-layer.gguf",
            bytes: s.build(),
        });
    }
    // gemma2: sliding-window layers (every other one) with a 128-token window; tied output.
    {
        let mut s = Spec::new("gemma2", 256);
        let (n_embd, n_ff) = (64u64, 128u64);
        s.kv("context_length", 8192u32)
            .kv("embedding_length", n_embd as u32)
            .kv("block_count", 4u32)
            .kv("feed_forward_length", n_ff as u32)
            .kv("attention.head_count", 4u32)
            .kv("attention.head_count_kv", 2u32)
            .kv("attention.key_length", 16u32)
            .kv("attention.value_length", 16u32)
            .kv("attention.sliding_window", 128u32)
            .kv("attention.layer_norm_rms_epsilon", 1e-6f32);
        s.t("token_embd.weight", &[n_embd, 256], GgmlType::Q8_0).t(
            "output_norm.weight",
            &[n_embd],
            GgmlType::F32,
        );
        for i in 0..4 {
            let p = |n: &str| format!("blk.{i}.{n}.weight");
            s.t(&p("attn_norm"), &[n_embd], GgmlType::F32)
                .t(&p("attn_q"), &[n_embd, 64], GgmlType::F16)
                .t(&p("attn_k"), &[n_embd, 32], GgmlType::F16)
                .t(&p("attn_v"), &[n_embd, 32], GgmlType::F16)
                .t(&p("attn_output"), &[64, n_embd], GgmlType::F16)
                .t(&p("post_attention_norm"), &[n_embd], GgmlType::F32)
                .t(&p("ffn_norm"), &[n_embd], GgmlType::F32)
                .t(&p("ffn_gate"), &[n_embd, n_ff], GgmlType::F16)
                .t(&p("ffn_up"), &[n_embd, n_ff], GgmlType::F16)
                .t(&p("ffn_down"), &[n_ff, n_embd], GgmlType::F16)
                .t(&p("post_ffw_norm"), &[n_embd], GgmlType::F32);
        }
        out.push(Tiny {
            name: "gemma2-swa.gguf",
            bytes: s.build(),
        });
    }
    // mamba: recurrent state only.
    {
        let mut s = Spec::new("mamba", 128);
        let (n_embd, d_inner, d_state, d_conv, dt_rank) = (64u64, 128u64, 16u64, 4u64, 4u64);
        s.kv("context_length", 1048576u32)
            .kv("embedding_length", n_embd as u32)
            .kv("block_count", 2u32)
            .kv("feed_forward_length", 0u32)
            .kv("attention.head_count", 0u32)
            .kv("ssm.conv_kernel", d_conv as u32)
            .kv("ssm.inner_size", d_inner as u32)
            .kv("ssm.state_size", d_state as u32)
            .kv("ssm.time_step_rank", dt_rank as u32)
            .kv("attention.layer_norm_rms_epsilon", 1e-5f32);
        s.t("token_embd.weight", &[n_embd, 128], GgmlType::F16).t(
            "output_norm.weight",
            &[n_embd],
            GgmlType::F32,
        );
        for i in 0..2 {
            let w = |n: &str| format!("blk.{i}.{n}.weight");
            let b = |n: &str| format!("blk.{i}.{n}.bias");
            s.t(&w("attn_norm"), &[n_embd], GgmlType::F32)
                .t(&w("ssm_in"), &[n_embd, 2 * d_inner], GgmlType::F16)
                .t(&w("ssm_conv1d"), &[d_conv, d_inner], GgmlType::F32)
                .t(&b("ssm_conv1d"), &[d_inner], GgmlType::F32)
                .t(
                    &w("ssm_x"),
                    &[d_inner, dt_rank + 2 * d_state],
                    GgmlType::F16,
                )
                .t(&w("ssm_dt"), &[dt_rank, d_inner], GgmlType::F16)
                .t(&b("ssm_dt"), &[d_inner], GgmlType::F32)
                .t(
                    &format!("blk.{i}.ssm_a"),
                    &[d_state, d_inner],
                    GgmlType::F32,
                )
                .t(&format!("blk.{i}.ssm_d"), &[d_inner], GgmlType::F32)
                .t(&w("ssm_out"), &[d_inner, n_embd], GgmlType::F16);
        }
        out.push(Tiny {
            name: "mamba.gguf",
            bytes: s.build(),
        });
    }
    // mamba2: grouped state (n_group 2), so the convolution state holds B and C too.
    {
        let mut s = Spec::new("mamba2", 128);
        let (n_embd, d_inner, d_state, d_conv, n_head, n_group) =
            (64u64, 128u64, 16u64, 4u64, 8u64, 2u64);
        let conv = d_inner + 2 * n_group * d_state;
        s.kv("context_length", 1048576u32)
            .kv("embedding_length", n_embd as u32)
            .kv("block_count", 2u32)
            .kv("feed_forward_length", 0u32)
            .kv("attention.head_count", 0u32)
            .kv("ssm.conv_kernel", d_conv as u32)
            .kv("ssm.inner_size", d_inner as u32)
            .kv("ssm.state_size", d_state as u32)
            .kv("ssm.time_step_rank", n_head as u32)
            .kv("ssm.group_count", n_group as u32)
            .kv("attention.layer_norm_rms_epsilon", 1e-5f32);
        s.t("token_embd.weight", &[n_embd, 128], GgmlType::F16).t(
            "output_norm.weight",
            &[n_embd],
            GgmlType::F32,
        );
        for i in 0..2 {
            let w = |n: &str| format!("blk.{i}.{n}.weight");
            let b = |n: &str| format!("blk.{i}.{n}.bias");
            s.t(&w("attn_norm"), &[n_embd], GgmlType::F32)
                .t(
                    &w("ssm_in"),
                    &[n_embd, 2 * d_inner + 2 * n_group * d_state + n_head],
                    GgmlType::F16,
                )
                .t(&w("ssm_conv1d"), &[d_conv, conv], GgmlType::F32)
                .t(&b("ssm_conv1d"), &[conv], GgmlType::F32)
                .t(&b("ssm_dt"), &[n_head], GgmlType::F32)
                .t(&format!("blk.{i}.ssm_a"), &[1, n_head], GgmlType::F32)
                .t(&format!("blk.{i}.ssm_d"), &[1, n_head], GgmlType::F32)
                .t(&w("ssm_norm"), &[d_inner / n_group, n_group], GgmlType::F32)
                .t(&w("ssm_out"), &[d_inner, n_embd], GgmlType::F16);
        }
        out.push(Tiny {
            name: "mamba2.gguf",
            bytes: s.build(),
        });
    }
    // deepseek2 with MLA (as converted with key_length_mla): one KV head holding the
    // compressed latent (kv_lora_rank 32) and the RoPE part (16) as K, the latent as V.
    {
        let mut s = Spec::new("deepseek2", 128);
        let (n_embd, n_head, rope, nope, v_mla, kv_lora, q_lora) =
            (64u64, 4u64, 16u64, 16u64, 32u64, 32u64, 32u64);
        s.kv("context_length", 4096u32)
            .kv("embedding_length", n_embd as u32)
            .kv("block_count", 2u32)
            .kv("feed_forward_length", 128u32)
            .kv("leading_dense_block_count", 2u32)
            .kv("attention.head_count", n_head as u32)
            .kv("attention.head_count_kv", 1u32)
            .kv("attention.key_length", (kv_lora + rope) as u32)
            .kv("attention.value_length", kv_lora as u32)
            .kv("attention.key_length_mla", (nope + rope) as u32)
            .kv("attention.value_length_mla", v_mla as u32)
            .kv("attention.q_lora_rank", q_lora as u32)
            .kv("attention.kv_lora_rank", kv_lora as u32)
            .kv("rope.dimension_count", rope as u32)
            .kv("expert_feed_forward_length", 64u32)
            .kv("expert_shared_count", 0u32)
            .kv("expert_weights_scale", 1.0f32)
            .kv("attention.layer_norm_rms_epsilon", 1e-6f32);
        s.t("token_embd.weight", &[n_embd, 128], GgmlType::F16)
            .t("output_norm.weight", &[n_embd], GgmlType::F32)
            .t("output.weight", &[n_embd, 128], GgmlType::F16);
        for i in 0..2 {
            let p = |n: &str| format!("blk.{i}.{n}.weight");
            s.t(&p("attn_norm"), &[n_embd], GgmlType::F32)
                .t(&p("attn_q_a_norm"), &[q_lora], GgmlType::F32)
                .t(&p("attn_kv_a_norm"), &[kv_lora], GgmlType::F32)
                .t(&p("attn_q_a"), &[n_embd, q_lora], GgmlType::F16)
                .t(
                    &p("attn_q_b"),
                    &[q_lora, n_head * (nope + rope)],
                    GgmlType::F16,
                )
                .t(
                    &p("attn_kv_a_mqa"),
                    &[n_embd, kv_lora + rope],
                    GgmlType::F16,
                )
                .t(&p("attn_k_b"), &[nope, kv_lora, n_head], GgmlType::F16)
                .t(&p("attn_v_b"), &[kv_lora, v_mla, n_head], GgmlType::F16)
                .t(&p("attn_output"), &[n_head * v_mla, n_embd], GgmlType::F16)
                .t(&p("ffn_norm"), &[n_embd], GgmlType::F32)
                .t(&p("ffn_gate"), &[n_embd, 128], GgmlType::F16)
                .t(&p("ffn_down"), &[128, n_embd], GgmlType::F16)
                .t(&p("ffn_up"), &[n_embd, 128], GgmlType::F16);
        }
        out.push(Tiny {
            name: "deepseek2-mla.gguf",
            bytes: s.build(),
        });
    }
    // lfm2: hybrid memory, short-convolution state for the layers without KV heads and a
    // KV cache for the one attention layer; the output reuses token_embd (no duplicate).
    {
        let mut s = Spec::new("lfm2", 128);
        let n_embd = 64u64;
        s.kv("context_length", 4096u32)
            .kv("embedding_length", n_embd as u32)
            .kv("block_count", 3u32)
            .kv("feed_forward_length", 128u32)
            .kv("attention.head_count", 4u32)
            .kv("attention.head_count_kv", u32s(&[0, 2, 0]))
            .kv("shortconv.l_cache", 3u32)
            .kv("attention.layer_norm_rms_epsilon", 1e-5f32);
        s.t("token_embd.weight", &[n_embd, 128], GgmlType::F16).t(
            "token_embd_norm.weight",
            &[n_embd],
            GgmlType::F32,
        );
        for i in 0..3 {
            let p = |n: &str| format!("blk.{i}.{n}.weight");
            s.t(&p("ffn_norm"), &[n_embd], GgmlType::F32)
                .t(&p("ffn_gate"), &[n_embd, 128], GgmlType::F16)
                .t(&p("ffn_down"), &[128, n_embd], GgmlType::F16)
                .t(&p("ffn_up"), &[n_embd, 128], GgmlType::F16)
                .t(&p("attn_norm"), &[n_embd], GgmlType::F32);
            if i == 1 {
                s.t(&p("attn_q_norm"), &[16], GgmlType::F32)
                    .t(&p("attn_k_norm"), &[16], GgmlType::F32)
                    .t(&p("attn_q"), &[n_embd, n_embd], GgmlType::F16)
                    .t(&p("attn_k"), &[n_embd, 32], GgmlType::F16)
                    .t(&p("attn_v"), &[n_embd, 32], GgmlType::F16)
                    .t(&p("attn_output"), &[n_embd, n_embd], GgmlType::F16);
            } else {
                s.t(&p("shortconv.conv"), &[3, n_embd], GgmlType::F32)
                    .t(
                        &p("shortconv.in_proj"),
                        &[n_embd, 3 * n_embd],
                        GgmlType::F16,
                    )
                    .t(&p("shortconv.out_proj"), &[n_embd, n_embd], GgmlType::F16);
            }
        }
        out.push(Tiny {
            name: "lfm2-hybrid.gguf",
            bytes: s.build(),
        });
    }
    // jamba: hybrid memory, a mamba layer (no KV heads: recurrent state) then an attention
    // layer (KV cache), each with a dense feed-forward; d_inner = 2·n_embd, as its loader
    // requires; tied embeddings.
    {
        let mut s = Spec::new("jamba", 128);
        let (n_embd, d_inner, d_state, d_conv, dt_rank) = (64u64, 128u64, 16u64, 4u64, 4u64);
        s.kv("context_length", 4096u32)
            .kv("embedding_length", n_embd as u32)
            .kv("block_count", 2u32)
            .kv("feed_forward_length", 128u32)
            .kv("attention.head_count", 4u32)
            .kv("attention.head_count_kv", u32s(&[0, 2]))
            .kv("ssm.conv_kernel", d_conv as u32)
            .kv("ssm.inner_size", d_inner as u32)
            .kv("ssm.state_size", d_state as u32)
            .kv("ssm.time_step_rank", dt_rank as u32)
            .kv("attention.layer_norm_rms_epsilon", 1e-5f32);
        s.t("token_embd.weight", &[n_embd, 128], GgmlType::F16).t(
            "output_norm.weight",
            &[n_embd],
            GgmlType::F32,
        );
        for i in 0..2 {
            let w = |n: &str| format!("blk.{i}.{n}.weight");
            let b = |n: &str| format!("blk.{i}.{n}.bias");
            s.t(&w("attn_norm"), &[n_embd], GgmlType::F32);
            if i == 0 {
                s.t(&w("ssm_in"), &[n_embd, 2 * d_inner], GgmlType::F16)
                    .t(&w("ssm_conv1d"), &[d_conv, d_inner], GgmlType::F32)
                    .t(&b("ssm_conv1d"), &[d_inner], GgmlType::F32)
                    .t(
                        &w("ssm_x"),
                        &[d_inner, dt_rank + 2 * d_state],
                        GgmlType::F16,
                    )
                    .t(&w("ssm_dt_norm"), &[dt_rank], GgmlType::F32)
                    .t(&w("ssm_dt"), &[dt_rank, d_inner], GgmlType::F16)
                    .t(&b("ssm_dt"), &[d_inner], GgmlType::F32)
                    .t(&w("ssm_b_norm"), &[d_state], GgmlType::F32)
                    .t(&w("ssm_c_norm"), &[d_state], GgmlType::F32)
                    .t(
                        &format!("blk.{i}.ssm_a"),
                        &[d_state, d_inner],
                        GgmlType::F32,
                    )
                    .t(&format!("blk.{i}.ssm_d"), &[d_inner], GgmlType::F32)
                    .t(&w("ssm_out"), &[d_inner, n_embd], GgmlType::F16);
            } else {
                s.t(&w("attn_q"), &[n_embd, n_embd], GgmlType::F16)
                    .t(&w("attn_k"), &[n_embd, 32], GgmlType::F16)
                    .t(&w("attn_v"), &[n_embd, 32], GgmlType::F16)
                    .t(&w("attn_output"), &[n_embd, n_embd], GgmlType::F16);
            }
            s.t(&w("ffn_norm"), &[n_embd], GgmlType::F32)
                .t(&w("ffn_gate"), &[n_embd, 128], GgmlType::F16)
                .t(&w("ffn_down"), &[128, n_embd], GgmlType::F16)
                .t(&w("ffn_up"), &[n_embd, 128], GgmlType::F16);
        }
        out.push(Tiny {
            name: "jamba-hybrid.gguf",
            bytes: s.build(),
        });
    }
    // falcon-h1: every layer has both a mamba2 mixer (recurrent state) and attention (KV
    // cache), side by side; its loader names the feed-forward norm without `.weight`.
    {
        let mut s = Spec::new("falcon-h1", 128);
        let (n_embd, d_inner, d_state, d_conv, n_head, n_group) =
            (64u64, 128u64, 16u64, 4u64, 8u64, 2u64);
        let conv = d_inner + 2 * n_group * d_state;
        s.kv("context_length", 4096u32)
            .kv("embedding_length", n_embd as u32)
            .kv("block_count", 2u32)
            .kv("feed_forward_length", 128u32)
            .kv("attention.head_count", 4u32)
            .kv("attention.head_count_kv", 2u32)
            .kv("ssm.conv_kernel", d_conv as u32)
            .kv("ssm.inner_size", d_inner as u32)
            .kv("ssm.state_size", d_state as u32)
            .kv("ssm.time_step_rank", n_head as u32)
            .kv("ssm.group_count", n_group as u32)
            .kv("attention.layer_norm_rms_epsilon", 1e-5f32);
        s.t("token_embd.weight", &[n_embd, 128], GgmlType::F16).t(
            "output_norm.weight",
            &[n_embd],
            GgmlType::F32,
        );
        for i in 0..2 {
            let w = |n: &str| format!("blk.{i}.{n}.weight");
            let b = |n: &str| format!("blk.{i}.{n}.bias");
            s.t(
                &w("ssm_in"),
                &[n_embd, d_inner + conv + n_head],
                GgmlType::F16,
            )
            .t(&w("ssm_conv1d"), &[d_conv, conv], GgmlType::F32)
            .t(&b("ssm_conv1d"), &[conv], GgmlType::F32)
            .t(&b("ssm_dt"), &[n_head], GgmlType::F32)
            .t(&format!("blk.{i}.ssm_a"), &[1, n_head], GgmlType::F32)
            .t(&format!("blk.{i}.ssm_d"), &[1, n_head], GgmlType::F32)
            .t(&w("ssm_norm"), &[d_inner / n_group, n_group], GgmlType::F32)
            .t(&w("ssm_out"), &[d_inner, n_embd], GgmlType::F16)
            .t(&w("attn_q"), &[n_embd, n_embd], GgmlType::F16)
            .t(&w("attn_k"), &[n_embd, 32], GgmlType::F16)
            .t(&w("attn_v"), &[n_embd, 32], GgmlType::F16)
            .t(&w("attn_output"), &[n_embd, n_embd], GgmlType::F16)
            .t(&w("attn_norm"), &[n_embd], GgmlType::F32)
            .t(&format!("blk.{i}.ffn_norm"), &[n_embd], GgmlType::F32)
            .t(&w("ffn_gate"), &[n_embd, 128], GgmlType::F16)
            .t(&w("ffn_down"), &[128, n_embd], GgmlType::F16)
            .t(&w("ffn_up"), &[n_embd, 128], GgmlType::F16);
        }
        out.push(Tiny {
            name: "falcon-h1-hybrid.gguf",
            bytes: s.build(),
        });
    }
    // rwkv6: recurrent state only (token shift and the WKV state, 4 heads of 16).
    {
        let mut s = Spec::new("rwkv6", 128);
        let (n_embd, head, mix, decay, n_ff) = (64u64, 16u64, 8u64, 8u64, 128u64);
        s.kv("context_length", 1048576u32)
            .kv("embedding_length", n_embd as u32)
            .kv("block_count", 2u32)
            .kv("feed_forward_length", n_ff as u32)
            .kv("attention.head_count", 0u32)
            .kv("attention.layer_norm_epsilon", 1e-5f32)
            .kv("wkv.head_size", head as u32)
            .kv("time_mix_extra_dim", mix as u32)
            .kv("time_decay_extra_dim", decay as u32)
            .kv("rescale_every_n_layers", 6u32);
        s.t("token_embd.weight", &[n_embd, 128], GgmlType::F16)
            .t("token_embd_norm.weight", &[n_embd], GgmlType::F32)
            .t("token_embd_norm.bias", &[n_embd], GgmlType::F32)
            .t("output_norm.weight", &[n_embd], GgmlType::F32)
            .t("output_norm.bias", &[n_embd], GgmlType::F32)
            .t("output.weight", &[n_embd, 128], GgmlType::F16);
        for i in 0..2 {
            let w = |n: &str| format!("blk.{i}.{n}.weight");
            let b = |n: &str| format!("blk.{i}.{n}.bias");
            let f32 = GgmlType::F32;
            let f16 = GgmlType::F16;
            s.t(&w("attn_norm"), &[n_embd], f32)
                .t(&b("attn_norm"), &[n_embd], f32)
                .t(&w("attn_norm_2"), &[n_embd], f32)
                .t(&b("attn_norm_2"), &[n_embd], f32)
                .t(&w("time_mix_w1"), &[n_embd, mix * 5], f32)
                .t(&w("time_mix_w2"), &[mix, n_embd, 5], f32)
                .t(&w("time_mix_lerp_x"), &[n_embd, 1, 1], f32)
                .t(&w("time_mix_lerp_fused"), &[n_embd, 1, 1, 5], f32)
                .t(&w("time_mix_first"), &[head, n_embd / head], f32)
                .t(&w("time_mix_decay"), &[n_embd], f32)
                .t(&w("time_mix_decay_w1"), &[n_embd, decay], f32)
                .t(&w("time_mix_decay_w2"), &[decay, n_embd], f32)
                .t(&w("time_mix_key"), &[n_embd, n_embd], f16)
                .t(&w("time_mix_value"), &[n_embd, n_embd], f16)
                .t(&w("time_mix_receptance"), &[n_embd, n_embd], f16)
                .t(&w("time_mix_gate"), &[n_embd, n_embd], f16)
                .t(&w("time_mix_ln"), &[n_embd], f32)
                .t(&b("time_mix_ln"), &[n_embd], f32)
                .t(&w("time_mix_output"), &[n_embd, n_embd], f16)
                .t(&w("channel_mix_lerp_k"), &[n_embd, 1, 1], f32)
                .t(&w("channel_mix_lerp_r"), &[n_embd, 1, 1], f32)
                .t(&w("channel_mix_key"), &[n_embd, n_ff], f16)
                .t(&w("channel_mix_value"), &[n_ff, n_embd], f16)
                .t(&w("channel_mix_receptance"), &[n_embd, n_embd], f16);
        }
        out.push(Tiny {
            name: "rwkv6.gguf",
            bytes: s.build(),
        });
    }
    out
}
