//! Issue 37, item 6: the memory `encode` holds per byte of text (about 70 bytes before, so
//! the CLI's 256 MiB text limit allowed some 18 GB). Measured with a counting allocator (this
//! file is its own test binary, with one test, so nothing else allocates meanwhile).

// A counting global allocator is unsafe to implement (as in the root's tests/common/alloc.rs).
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use gguf_tokenizer::gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_tokenizer::gguf_grammar::{Ctx, Gguf, ValueType};
use gguf_tokenizer::Tokenizer;

struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = NOW.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
        PEAK.fetch_max(now, Ordering::SeqCst);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Ordering::SeqCst);
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most memory per byte of text `encode` may hold at once, beyond what it returns (its
/// ids, four bytes each, and the vector's last doubling): BPE, the text's code points (4),
/// a pre-tokenizer's haystack and positions (5 per code point), the splits (8 per word);
/// SPM, a symbol per character (16) and the pairs that make tokens (16 each).
const BYTES_PER_TEXT_BYTE: [(&str, usize); 2] = [("gpt2", 16), ("llama", 24)];

fn vocabulary(model: &str, pre: &str) -> Vec<u8> {
    let mut tokens: Vec<Vec<u8>> = Vec::new();
    if model == "gpt2" {
        for b in 0..=255u8 {
            let c = match b {
                b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF => char::from(b),
                _ => {
                    let skipped = (0..b)
                        .filter(|&x| !matches!(x, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF))
                        .count();
                    char::from_u32(256 + skipped as u32).unwrap()
                }
            };
            tokens.push(c.to_string().into_bytes());
        }
    } else {
        for t in ["<unk>", "<s>", "</s>"] {
            tokens.push(t.into());
        }
        for b in 0..=255u8 {
            tokens.push(format!("<0x{b:02X}>").into_bytes());
        }
    }
    for w in ["the", "Ġthe", "▁the", "qu", "ick", "Ġquick", "▁quick", "▁"] {
        tokens.push(w.into());
    }
    let n = tokens.len();
    let types: Vec<i32> = (0..n)
        .map(|i| match (model, i) {
            ("llama", 0) => 2,
            ("llama", 1 | 2) => 3,
            ("llama", 3..=258) => 6,
            _ => 1,
        })
        .collect();
    let mut b = GgufBuilder::new(Ctx::V3_LE);
    b.kv("tokenizer.ggml.model", model)
        .kv(
            "tokenizer.ggml.tokens",
            OwnedValue::array(
                ValueType::String,
                tokens.into_iter().map(OwnedValue::string),
            ),
        )
        .kv(
            "tokenizer.ggml.token_type",
            OwnedValue::array(ValueType::I32, types),
        )
        .kv(
            "tokenizer.ggml.scores",
            OwnedValue::array(ValueType::F32, vec![0f32; n]),
        );
    if model == "gpt2" {
        b.kv("tokenizer.ggml.pre", pre).kv(
            "tokenizer.ggml.merges",
            OwnedValue::array(
                ValueType::String,
                [
                    "t h", "th e", "Ġ the", "q u", "i c", "ic k", "Ġ qu", "Ġqu ick",
                ]
                .map(|m| OwnedValue::string(m.as_bytes())),
            ),
        );
    }
    b.build().unwrap()
}

#[test]
fn memory_per_byte_of_text_is_bounded() {
    let text: Vec<u8> = "the quick, brown fox 123 jumps; the quick\n"
        .repeat(50_000)
        .into_bytes();
    for (model, pre) in [
        ("gpt2", "llama-bpe"),
        ("gpt2", "gpt-2"),
        ("gpt2", "qwen2"),
        ("llama", ""),
    ] {
        let bytes = vocabulary(model, pre);
        let tok = Tokenizer::from_gguf(&Gguf::parse(&bytes).unwrap()).unwrap();
        let before = NOW.load(Ordering::SeqCst);
        PEAK.store(before, Ordering::SeqCst);
        let ids = tok.encode(&text, true, true).unwrap();
        let held = PEAK.load(Ordering::SeqCst) - before;
        let returned = ids.capacity() * 4 * 3 / 2;
        let per_byte = (held - returned.min(held)) as f64 / text.len() as f64;
        eprintln!(
            "{model} {pre}: {held} bytes at most for {} bytes of text ({per_byte:.1} per byte beyond the ids)",
            text.len()
        );
        let bound = BYTES_PER_TEXT_BYTE
            .iter()
            .find(|(m, _)| *m == model)
            .unwrap()
            .1;
        assert!(
            held <= returned + bound * text.len(),
            "{model} {pre}: {per_byte:.1} bytes per byte of text"
        );
    }
}
