//! `gguf diff`: models built with known differences, each reported once, in text and JSON,
//! with the exit status the command promises.

mod common;

use common::{gguf, scratch};

use std::fs;

use gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_grammar::{Ctx, Endian, GgmlType, ValueType, Version};
use gguf_tools::set::split::{split, SplitLimit, SplitOptions};

fn model(ctx: Ctx, tokens: &[&str], name: &str, weights: &[u8], t1_dims: &[u64]) -> Vec<u8> {
    GgufBuilder::new(ctx)
        .kv("general.architecture", "llama")
        .kv("general.name", name)
        .kv(
            "tokenizer.ggml.tokens",
            OwnedValue::array(ValueType::String, tokens.iter().copied()),
        )
        .kv("f", f32::NAN)
        .tensor("t0", &[16], GgmlType::F32, weights)
        .tensor("t1", t1_dims, GgmlType::F32, weights)
        .build()
        .unwrap()
}

#[test]
fn differences_are_reported_once_each() {
    let dir = scratch("report");
    let w = [3u8; 64];
    let tokens = ["<s>", "a", "b", "c", "d", "e", "f"];
    let a = model(Ctx::V3_LE, &tokens, "one", &w, &[16]);
    // Same model in another version and byte order: equal (NaN compared bit for bit).
    let same = model(
        Ctx {
            version: Version::V2,
            endian: Endian::Big,
        },
        &tokens,
        "one",
        &w,
        &[16],
    );
    fs::write(dir.join("a.gguf"), &a).unwrap();
    fs::write(dir.join("same.gguf"), &same).unwrap();
    let out = gguf(&["diff", "a.gguf", "same.gguf"], &dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(out.stdout.is_empty());

    let mut changed = tokens.to_vec();
    changed[5] = "E";
    changed.push("g");
    let b = model(Ctx::V3_LE, &changed, "two\x1b[2J", &w, &[8, 2]);
    fs::write(dir.join("b.gguf"), &b).unwrap();
    let out = gguf(&["diff", "a.gguf", "b.gguf"], &dir);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text,
        "key changed    general.name: string \"one\" -> string \"two\\e[2J\"\n\
         key changed    tokenizer.ggml.tokens: [string; 7] -> [string; 8] (length 7 -> 8, first difference at [5])\n\
         tensor changed t1: f32 [16] at 64 -> f32 [8, 2] at 64\n"
    );

    let out = gguf(&["diff", "--json", "a.gguf", "b.gguf"], &dir);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["equal"], false);
    // JSON carries the exact string; the text escaped it for the terminal.
    assert_eq!(json["keys"][0]["new"], "string \"two\u{1b}[2J\"");
    assert_eq!(
        json["keys"][1]["detail"],
        "length 7 -> 8, first difference at [5]"
    );
    assert_eq!(json["tensors"][0]["name"], "t1");
    assert_eq!(json["data"], serde_json::json!([]));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn data_compares_tensor_bytes_across_a_shard_set() {
    let dir = scratch("data");
    let w = [3u8; 64];
    let tokens = ["<s>"];
    fs::write(
        dir.join("a.gguf"),
        model(Ctx::V3_LE, &tokens, "m", &w, &[16]),
    )
    .unwrap();
    let mut flipped = w;
    flipped[10] ^= 1;
    let mut b = GgufBuilder::new(Ctx::V3_LE);
    b.kv("general.architecture", "llama")
        .kv("general.name", "m")
        .kv(
            "tokenizer.ggml.tokens",
            OwnedValue::array(ValueType::String, tokens),
        )
        .kv("f", f32::NAN)
        .tensor("t0", &[16], GgmlType::F32, &w)
        .tensor("t1", &[16], GgmlType::F32, &flipped);
    fs::write(dir.join("b.gguf"), b.build().unwrap()).unwrap();

    assert_eq!(
        gguf(&["diff", "a.gguf", "b.gguf"], &dir).status.code(),
        Some(0)
    );
    let out = gguf(&["diff", "--data", "a.gguf", "b.gguf"], &dir);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "data differs   t1\n"
    );

    // A set split from b against b: only the split keys differ, the data is the same.
    let options = SplitOptions {
        limit: SplitLimit::Tensors(1),
        no_tensor_first_split: false,
    };
    let shards = split(&dir.join("b.gguf"), &dir.join("s"), &options).unwrap();
    let out = gguf(
        &["diff", "--data", shards[1].to_str().unwrap(), "b.gguf"],
        &dir,
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text,
        "key removed    split.no: uint16 0\n\
         key removed    split.tensors.count: int32 2\n\
         key removed    split.count: uint16 2\n"
    );
    let out = gguf(
        &["diff", "--data", shards[1].to_str().unwrap(), "a.gguf"],
        &dir,
    );
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .ends_with("data differs   t1\n"));

    assert_eq!(
        gguf(&["diff", "a.gguf", "missing.gguf"], &dir)
            .status
            .code(),
        Some(2)
    );
    fs::remove_dir_all(&dir).unwrap();
}
