//! Hostile headers and extreme parameters: an estimate or an error, never a panic (the tests
//! run with overflow checks on).

use gguf_fit::{estimate, Params};
use gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_grammar::{Ctx, GgmlType, Gguf, ValueType};

fn model(arch: &str, value: u32, dims: &[u64], ty: GgmlType) -> Vec<u8> {
    let mut b = GgufBuilder::new(Ctx::V3_LE);
    b.kv("general.architecture", arch);
    for key in [
        "block_count",
        "embedding_length",
        "context_length",
        "attention.head_count",
        "attention.head_count_kv",
        "attention.key_length",
        "attention.value_length",
        "attention.sliding_window",
        "feed_forward_length",
        "ssm.conv_kernel",
        "ssm.inner_size",
        "ssm.state_size",
        "ssm.group_count",
        "wkv.head_size",
        "shortconv.l_cache",
        "attention.key_length_mla",
    ] {
        let v = if key == "block_count" {
            value.min(512)
        } else {
            value
        };
        b.kv(format!("{arch}.{key}"), v);
    }
    b.kv(
        "tokenizer.ggml.tokens",
        OwnedValue::array(ValueType::String, ["a", "b"]),
    );
    b.allow_missing_data();
    b.tensor_at("token_embd.weight", dims, ty, 0, &[]);
    b.tensor_at("blk.0.attn_q.weight", dims, ty, u64::MAX / 2, &[]);
    b.build().unwrap()
}

#[test]
fn no_panics() {
    let dims_set: [&[u64]; 4] = [
        &[64, 2],
        &[1 << 40, 1 << 30],
        &[u64::MAX],
        &[32, u64::MAX / 32],
    ];
    let params = [
        Params::default(),
        Params {
            n_ctx: u32::MAX,
            n_batch: u32::MAX,
            n_ubatch: 0,
            n_parallel: 256,
            ..Params::default()
        },
        Params {
            n_ctx: 1,
            n_batch: 0,
            n_ubatch: 0,
            flash_attn: true,
            type_v: GgmlType::Q4_0,
            ..Params::default()
        },
        Params {
            n_gpu_layers: i32::MIN,
            n_gpu_devices: 16,
            ..Params::default()
        },
        Params {
            n_gpu_layers: i32::MAX,
            n_gpu_devices: 16,
            tensor_split: vec![f32::MAX; 16],
            ..Params::default()
        },
        Params {
            n_gpu_devices: u32::MAX,
            ..Params::default()
        },
        Params {
            n_parallel: u32::MAX,
            kv_unified: true,
            swa_full: true,
            ..Params::default()
        },
    ];
    let (mut ok, mut refused) = (0, 0);
    for arch in [
        "llama",
        "gemma2",
        "mamba",
        "lfm2",
        "rwkv6",
        "deepseek2",
        "bert",
    ] {
        for value in [0, 1, 7, 512, u32::MAX / 2, u32::MAX] {
            for dims in dims_set {
                for ty in [GgmlType::F32, GgmlType::Q4_0, GgmlType(1000)] {
                    let bytes = model(arch, value, dims, ty);
                    let gguf = Gguf::parse(&bytes).unwrap();
                    for p in &params {
                        match estimate(&gguf, p) {
                            Ok(_) => ok += 1,
                            Err(_) => refused += 1,
                        }
                    }
                }
            }
        }
    }
    // Both paths are taken: hostile values reach the arithmetic, not only the checks.
    println!("{ok} estimates, {refused} refused");
    assert!(
        ok > 100 && refused > 100,
        "{ok} estimates, {refused} refused"
    );
}

/// A dense llama whose caches fit the arithmetic but whose reserved graph, without flash
/// attention, does not (2^31 heads of one value over 2^31 cells: KQ is 2^73 bytes): the
/// replayed graph gives way to the
/// fitted model instead of overflowing (before: "attempt to multiply with overflow"), and
/// that figure, past 64 bits, is refused, naming the input (before: 2^64 − 1 shown as a size).
#[test]
fn a_graph_too_large_for_the_arithmetic() {
    let mut b = GgufBuilder::new(Ctx::V3_LE);
    b.kv("general.architecture", "llama");
    for (key, v) in [
        ("block_count", 1u32),
        ("embedding_length", 64),
        ("context_length", 1 << 31),
        ("attention.head_count", 1 << 31),
        ("attention.head_count_kv", 1),
        ("attention.key_length", 1),
        ("attention.value_length", 1),
        ("feed_forward_length", 1),
    ] {
        b.kv(format!("llama.{key}"), v);
    }
    b.kv(
        "tokenizer.ggml.tokens",
        OwnedValue::array(ValueType::String, ["a", "b"]),
    );
    b.tensor("token_embd.weight", &[64, 2], GgmlType::F32, &[0u8; 512]);
    let bytes = b.build().unwrap();
    let gguf = Gguf::parse(&bytes).unwrap();
    let err = estimate(
        &gguf,
        &Params {
            n_ctx: 1 << 31,
            // Without flash attention the graph holds KQ (with it, the default since
            // 0.3.36, there is no KQ matrix to overflow).
            flash_attn: false,
            ..Params::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the compute buffer (context 2147483648, ubatch 512, 1 sequences) does not fit in 64 bits"
    );
}
