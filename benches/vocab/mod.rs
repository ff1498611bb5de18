//! The generated header the benchmarks share with `benches/peers/`.

use gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_grammar::{Ctx, ValueType};

/// A gemma3-sized vocabulary: 262,144 SentencePiece-style tokens (ASCII, `▁`-prefixed and
/// CJK pieces), scores and token types.
pub fn vocab_262k() -> Vec<u8> {
    let n = 262_144u32;
    let token = |i: u32| match i % 4 {
        0 => format!("▁tok{i}"),
        1 => format!("piece{i}"),
        2 => format!(
            "{}{}",
            char::from_u32(0x4e00 + i % 20000).unwrap_or('?'),
            i % 97
        ),
        _ => format!("<0x{:02X}>", i % 256),
    };
    GgufBuilder::new(Ctx::V3_LE)
        .kv("general.architecture", "gemma3")
        .kv("tokenizer.ggml.model", "llama")
        .kv(
            "tokenizer.ggml.tokens",
            OwnedValue::array(ValueType::String, (0..n).map(token)),
        )
        .kv(
            "tokenizer.ggml.scores",
            OwnedValue::array(ValueType::F32, (0..n).map(|i| -(i as f32) / 7.0)),
        )
        .kv(
            "tokenizer.ggml.token_type",
            OwnedValue::array(ValueType::I32, (0..n).map(|i| (i % 6) as i32)),
        )
        .build()
        .expect("the vocabulary builds")
}
