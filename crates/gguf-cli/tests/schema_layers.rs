//! The schema on recurrent, hybrid and per-layer architectures (issue 21, archs-c): the tiny
//! models of `gguf fixtures --arch` pass, and each edit below gives exactly its diagnostics.
//! The edited files are written to `CARGO_TARGET_TMPDIR/schema-layers/`; llama.cpp 0.3.16's
//! verdict on each (`scripts/llama/loader.cpp`, run by hand on that folder) is in `LLAMA`.

use std::fs;
use std::path::Path;

use gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_grammar::{Gguf, ValueType};
use gguf_llama::schema;
use gguf_testkit::fixtures;

const ARCHS: &[&str] = &[
    "mamba",
    "mamba2",
    "rwkv6",
    "rwkv7",
    "rwkv6qwen2",
    "arwkv7",
    "jamba",
    "falcon-h1",
    "granitehybrid",
    "lfm2",
    "openelm",
    "deci",
];

#[test]
fn tiny_models_pass() {
    for arch in ARCHS {
        let bytes = fixtures::tiny_model(arch).unwrap();
        let found = schema::check_model(&Gguf::parse(&bytes).unwrap());
        assert!(found.is_empty(), "{arch}: {found:?}");
    }
}

fn u32s(values: &[u32]) -> OwnedValue {
    OwnedValue::array(ValueType::U32, values.iter().copied())
}

type Edit = fn(&mut GgufBuilder<'_>);

/// (file name, architecture, edit, our diagnostics, llama.cpp's verdict).
const CASES: &[(&str, &str, Edit, &[&str], &str)] = &[
    // A per-layer array must have one value per block ("key
    // jamba.attention.head_count_kv has wrong array length; expected 2, got 3").
    (
        "jamba-kv-array-too-long",
        "jamba",
        |b| {
            b.set("jamba.attention.head_count_kv", u32s(&[0, 2, 2]));
        },
        &["schema-key-type"],
        "load-error",
    ),
    // Block 1's 3 key/value heads do not divide its 4 heads (the attn_k width they give is
    // not checked then: one mistake, one diagnostic).
    (
        "jamba-kv-not-dividing-in-block-1",
        "jamba",
        |b| {
            b.set("jamba.attention.head_count_kv", u32s(&[0, 3]));
        },
        &["schema-head-count-kv"],
        "load-error",
    ),
    // Block 0 declared an attention block: its Mamba tensors are unexpected, its attention
    // tensors missing.
    (
        "jamba-block-0-attention",
        "jamba",
        |b| {
            b.set("jamba.attention.head_count_kv", 2u32);
        },
        &[
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-missing",
            "schema-tensor-missing",
            "schema-tensor-missing",
            "schema-tensor-missing",
        ],
        "load-error",
    ),
    // Deci's block 2 (linear attention) without feed-forward: its four feed-forward tensors
    // are unexpected.
    (
        "deci-block-2-no-ffn",
        "deci",
        |b| {
            b.set("deci.feed_forward_length", u32s(&[64, 0, 0, 32]));
        },
        &[
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
        ],
        "load-error",
    ),
    // OpenELM's block 1: 3 key/value heads for 2 heads.
    (
        "openelm-kv-not-dividing-in-block-1",
        "openelm",
        |b| {
            b.set("openelm.attention.head_count_kv", u32s(&[2, 3]));
        },
        &["schema-head-count-kv"],
        "load-error",
    ),
    // Mamba has no attention heads: a head count that divides nothing is no error.
    (
        "mamba-head-count-3",
        "mamba",
        |b| {
            b.set("mamba.attention.head_count", 3u32);
        },
        &[],
        "ok",
    ),
    // LFM2 with every block a short-convolution block (no attention at all).
    (
        "lfm2-no-attention",
        "lfm2",
        |b| {
            b.set("lfm2.attention.head_count_kv", 0u32);
        },
        &[
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-unexpected",
            "schema-tensor-missing",
            "schema-tensor-missing",
            "schema-tensor-missing",
        ],
        "load-error",
    ),
];

#[test]
fn edits_give_exactly_their_diagnostics() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("schema-layers");
    fs::create_dir_all(&out).unwrap();
    let mut failures = Vec::new();
    for (name, arch, edit, want, llama) in CASES {
        let bytes = fixtures::tiny_model(arch).unwrap();
        let gguf = Gguf::parse(&bytes).unwrap();
        let mut b = GgufBuilder::from_gguf(&gguf);
        edit(&mut b);
        let edited = b.build().unwrap();
        fs::write(out.join(format!("{name}.gguf")), &edited).unwrap();
        let found = schema::check_model(&Gguf::parse(&edited).unwrap());
        let codes: Vec<&str> = found.iter().map(|d| d.code.name()).collect();
        if codes != *want {
            failures.push(format!("{name}: want {want:?}, got {found:#?}"));
        }
        // Our verdict is llama.cpp's.
        assert_eq!(schema::accepts_model(&found), *llama == "ok", "{name}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every architecture reads `head_count` and `head_count_kv` as llama.cpp's `get_key_or_arr`
/// does: a count, or an array with one per block. Each tiny model with both stored as counts,
/// rewritten with both as arrays of the same values, gets the diagnostics it got (none: the
/// schema follows 0.3.36, which loads every tiny model). llama.cpp
/// 0.3.16 loads, tokenizes and decodes all 74 such files (`scripts/llama/loader.cpp`, run by
/// hand on `CARGO_TARGET_TMPDIR/schema-layers/per-layer-*.gguf`); the schema rejected every
/// one before (`schema-key-type`).
#[test]
fn head_counts_may_be_per_layer_arrays_in_every_architecture() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("schema-layers");
    fs::create_dir_all(&out).unwrap();
    let mut rewritten = 0;
    for arch in schema::ARCHITECTURES.iter().map(|a| a.name) {
        let Some(bytes) = fixtures::tiny_model(arch) else {
            continue;
        };
        let gguf = Gguf::parse(&bytes).unwrap();
        let count = |key: &str| gguf.get(&format!("{arch}.{key}")).and_then(|v| v.as_u64());
        let (Some(blocks), Some(heads), Some(heads_kv)) = (
            count("block_count"),
            count("attention.head_count"),
            count("attention.head_count_kv"),
        ) else {
            continue;
        };
        let per_block = |n: u64| u32s(&vec![n as u32; blocks as usize]);
        let mut b = GgufBuilder::from_gguf(&gguf);
        b.set(format!("{arch}.attention.head_count"), per_block(heads));
        b.set(
            format!("{arch}.attention.head_count_kv"),
            per_block(heads_kv),
        );
        let edited = b.build().unwrap();
        fs::write(out.join(format!("per-layer-{arch}.gguf")), &edited).unwrap();
        let codes = |g: &Gguf<'_>| -> Vec<&str> {
            schema::check_model(g)
                .iter()
                .map(|d| d.code.name())
                .collect()
        };
        assert_eq!(
            codes(&Gguf::parse(&edited).unwrap()),
            codes(&gguf),
            "{arch}"
        );
        rewritten += 1;
    }
    assert!(
        rewritten >= 74,
        "only {rewritten} tiny models have both head counts as counts"
    );
}
