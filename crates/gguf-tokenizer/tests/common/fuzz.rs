//! The check of the `tokenizer` fuzz target (fuzz/fuzz_targets/tokenizer.rs), replayed over
//! its corpus by tests/fuzz_replay.rs: any vocabulary and text load, encode, decode and print
//! pieces or fail with an error within the tokenizer's bounds, never a panic.
//!
//! Input: a byte choosing the model, one choosing the pre-tokenizer, a byte of flags, then the
//! token texts separated by 0x00 up to a 0x01 byte, then the text. Tokens written as `<...>`
//! are control tokens, the others normal; BPE merges are every split of a token into two
//! tokens of the vocabulary (at most 4,096).

use gguf_tokenizer::gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_tokenizer::gguf_grammar::{Ctx, Gguf, ValueType};
use gguf_tokenizer::Tokenizer;

const MODELS: &[&str] = &[
    "llama", "gpt2", "bert", "t5", "rwkv", "plamo2", "none", "other",
];
const PRE: &[&str] = &[
    "",
    "default",
    "llama3",
    "qwen2",
    "gpt-4o",
    "superbpe",
    "deepseek-v3",
    "tekken",
    "falcon",
    "bloom",
    "chameleon",
    "kimi-k2",
    "seed-coder",
    "unknown-pre",
];
const MAX_TOKENS: usize = 4096;
const MAX_MERGES: usize = 4096;

/// The GGUF vocabulary and the text that `data` describes.
pub fn vocabulary(data: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let (&[model, pre, flags], rest) = data.split_first_chunk::<3>()?;
    let (vocab, text) = match rest.iter().position(|&b| b == 1) {
        Some(n) => (&rest[..n], &rest[n + 1..]),
        None => (rest, &[][..]),
    };
    let tokens: Vec<&[u8]> = vocab.split(|&b| b == 0).take(MAX_TOKENS).collect();
    let known: std::collections::HashSet<&[u8]> = tokens.iter().copied().collect();
    let mut merges = Vec::new();
    'tokens: for t in &tokens {
        for cut in 1..t.len() {
            if merges.len() == MAX_MERGES {
                break 'tokens;
            }
            if known.contains(&t[..cut]) && known.contains(&t[cut..]) {
                let mut m = t[..cut].to_vec();
                m.push(b' ');
                m.extend_from_slice(&t[cut..]);
                merges.push(m);
            }
        }
    }
    let n = tokens.len();
    let mut b = GgufBuilder::new(Ctx::V3_LE);
    b.set("general.architecture", "llama");
    b.set(
        "tokenizer.ggml.model",
        MODELS[usize::from(model) % MODELS.len()],
    );
    b.set("tokenizer.ggml.pre", PRE[usize::from(pre) % PRE.len()]);
    let strings = |v: Vec<&[u8]>| {
        let items = v.into_iter().map(|t| OwnedValue::string(t.to_vec()));
        OwnedValue::array(ValueType::String, items)
    };
    b.set("tokenizer.ggml.tokens", strings(tokens.clone()));
    b.set(
        "tokenizer.ggml.scores",
        OwnedValue::array(ValueType::F32, (0..n).map(|i| -(i as f32))),
    );
    let types = tokens.iter().map(|t| {
        if t.starts_with(b"<") && t.ends_with(b">") {
            3i32
        } else {
            1
        }
    });
    b.set(
        "tokenizer.ggml.token_type",
        OwnedValue::array(ValueType::I32, types),
    );
    b.set(
        "tokenizer.ggml.merges",
        strings(merges.iter().map(Vec::as_slice).collect()),
    );
    if flags & 1 != 0 && n > 1 {
        b.set("tokenizer.ggml.bos_token_id", 0u32);
        b.set("tokenizer.ggml.eos_token_id", 1u32);
    }
    b.set("tokenizer.ggml.add_bos_token", flags & 2 != 0);
    b.set("tokenizer.ggml.add_space_prefix", flags & 4 != 0);
    Some((b.build().ok()?, text))
}

/// Builds, encodes, decodes and prints as the module says; errors are fine.
pub fn check(data: &[u8]) {
    let Some((file, text)) = vocabulary(data) else {
        return;
    };
    let Ok(g) = Gguf::parse(&file) else { return };
    let Ok(tok) = Tokenizer::from_gguf(&g) else {
        return;
    };
    let flags = data[2];
    if let Ok(ids) = tok.encode(text, flags & 8 != 0, flags & 16 != 0) {
        let _ = tok.decode(&ids, flags & 32 != 0, flags & 64 != 0);
        for &id in ids.iter().take(64) {
            let _ = tok.token_to_piece(id, true);
        }
    }
    let _ = tok.decode(&[0, u32::MAX, tok.len() as u32], false, true);
}
