//! The `plamo2` tokenizer against llama.cpp 0.3.16's (`llm_tokenizer_plamo2`), on two
//! vocabularies made here: the one of `gguf fixtures --all-archs`' plamo2 tiny model, and a
//! larger one (pieces of many scripts with scattered scores, and the edge cases of llama.cpp's
//! table: a score of exactly -1000 (its sentinel value), scores below its invalid mark, NaN,
//! texts that are not UTF-8 as it re-encodes them, a user-defined token). llama.cpp's ids
//! are recorded in `tests/data/plamo2-0.3.16.txt`; with `GGUF_TOKENIZER_REF` (see
//! `scripts/check-tokenizer.sh`) they are also compared live, and `GGUF_TOKENIZER_RECORD=1`
//! rewrites the record from llama.cpp.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use gguf_tokenizer::gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_tokenizer::gguf_grammar::{Ctx, Gguf, ValueType};
use gguf_tokenizer::{Kind, Release, Tokenizer};

const NORMAL: i32 = 1;
const UNKNOWN: i32 = 2;
const CONTROL: i32 = 3;
const USER_DEFINED: i32 = 4;
const BYTE: i32 = 6;

/// xorshift64*: the same cases on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SAMPLES: &[&str] = &[
    "Hello world, the model is here.",
    "It's 2025: 42 models, 1234567 tokens!",
    "日本語のテキストを分割します。東京都",
    "プラモ2のトークナイザー",
    "中文分词测试，中华人民共和国",
    "Привет, мир! Съешь же ещё",
    "Ελληνικά γράμματα",
    "한국어 텍스트입니다",
    "emoji 🙂👍🏽 and ☃",
    "naïve café Straße",
    "\tindent\n  two spaces\r\n",
];

struct Vocab {
    tokens: Vec<Vec<u8>>,
    scores: Vec<f32>,
    types: Vec<i32>,
}

impl Vocab {
    fn push(&mut self, text: impl Into<Vec<u8>>, score: f32, ty: i32) {
        let text = text.into();
        if !self.tokens.contains(&text) {
            self.tokens.push(text);
            self.scores.push(score);
            self.types.push(ty);
        }
    }

    fn build(&self) -> Vec<u8> {
        let mut b = GgufBuilder::new(Ctx::V3_LE);
        // The hyperparameters llama.cpp's vocab-only load still reads (an architecture's;
        // which one does not change the vocabulary).
        b.kv("general.architecture", "llama")
            .kv("general.name", "plamo2-vocab")
            .kv("llama.block_count", 1u32)
            .kv("llama.context_length", 4096u32)
            .kv("llama.embedding_length", 64u32)
            .kv("llama.feed_forward_length", 64u32)
            .kv("llama.attention.head_count", 1u32)
            .kv("llama.attention.head_count_kv", 1u32)
            .kv("llama.attention.layer_norm_rms_epsilon", 1e-5f32)
            .kv("llama.rope.dimension_count", 64u32);
        b.kv("tokenizer.ggml.model", "plamo2")
            .kv(
                "tokenizer.ggml.tokens",
                OwnedValue::array(
                    ValueType::String,
                    self.tokens.iter().cloned().map(OwnedValue::string),
                ),
            )
            .kv(
                "tokenizer.ggml.scores",
                OwnedValue::array(ValueType::F32, self.scores.clone()),
            )
            .kv(
                "tokenizer.ggml.token_type",
                OwnedValue::array(ValueType::I32, self.types.clone()),
            )
            .kv("tokenizer.ggml.unknown_token_id", 0u32)
            .kv("tokenizer.ggml.bos_token_id", 1u32)
            .kv("tokenizer.ggml.eos_token_id", 2u32)
            .kv("tokenizer.ggml.padding_token_id", 3u32);
        b.build().unwrap()
    }
}

/// Specials and the 256 byte tokens, as every plamo2 vocabulary starts.
fn base() -> Vocab {
    let mut v = Vocab {
        tokens: Vec::new(),
        scores: Vec::new(),
        types: Vec::new(),
    };
    v.push("<|plamo:unk|>", 0.0, UNKNOWN);
    for s in ["<|plamo:bos|>", "<|plamo:eos|>", "<|plamo:pad|>"] {
        v.push(s, 0.0, CONTROL);
    }
    for b in 0..=255u8 {
        v.push(format!("<0x{b:02X}>"), 0.0, BYTE);
    }
    v
}

/// The plamo2 tiny model's vocabulary (`gguf fixtures --all-archs`).
fn tiny() -> Vocab {
    let mut v = base();
    for (i, w) in [" ", " the", " model", "Hello", " world", "42"]
        .iter()
        .enumerate()
    {
        v.push(*w, -(i as f32) - 1.0, NORMAL);
    }
    v
}

/// Every piece of up to five code points of the samples, with scattered scores, and the
/// edge cases.
fn large() -> Vocab {
    let mut v = base();
    let mut rng = Rng(0x91A3_0002);
    for s in SAMPLES {
        let cpts: Vec<char> = s.chars().collect();
        for i in 0..cpts.len() {
            for n in 1..=5.min(cpts.len() - i) {
                if n > 1 && rng.below(3) == 0 {
                    continue;
                }
                let piece: String = cpts[i..i + n].iter().collect();
                let score = -((rng.below(200_000) as f32) / 1000.0) - n as f32 * 0.5;
                v.push(piece, score, NORMAL);
            }
        }
    }
    v.push(" the model", -1000.0, NORMAL); // llama.cpp's UNKNOWN_SCORE after rounding
    v.push("model is", -2500.0, NORMAL); // under its INVALID_SCORE
    v.push("here.", f32::NAN, NORMAL);
    v.push("Hello w", 1e9, NORMAL); // past i32 after * 1e4
    v.push(&b"\xC0\x80a"[..], -1.0, NORMAL); // decodes to U+0000 'a'
    v.push(&b"x\xFF"[..], -1.0, NORMAL);
    v.push("<tool>", 0.0, USER_DEFINED);
    v.push("<|plamo:unused|>", 0.0, CONTROL);
    v
}

fn cases(v: &Vocab, seed: u64, n: usize) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed);
    let specials: Vec<&Vec<u8>> = v
        .tokens
        .iter()
        .zip(&v.types)
        .filter(|(_, &t)| matches!(t, UNKNOWN | CONTROL | USER_DEFINED))
        .map(|(t, _)| t)
        .collect();
    let mut out = vec![
        Vec::new(),
        b" ".to_vec(),
        "\u{FEFF}Hello".into(),
        "\u{FEFF}\u{FEFF}x".into(),
        b"\xC0\x80a\x00a x\xFF".to_vec(),
        "\u{10FFFF}\u{1F642}".into(),
        b"\xF7\xBF\xBF\xBF\xF4\x90\x80\x80".to_vec(),
    ];
    while out.len() < n {
        let mut c = Vec::new();
        if rng.below(10) == 0 {
            c.extend_from_slice("\u{FEFF}".as_bytes());
        }
        for _ in 0..1 + rng.below(6) {
            match rng.below(8) {
                0 => c.extend_from_slice(specials[rng.below(specials.len())]),
                1 => c.extend_from_slice(&[0x80 + rng.below(0x80) as u8]),
                2 => c.extend_from_slice(&v.tokens[rng.below(v.tokens.len())]),
                _ => {
                    let s: Vec<char> = SAMPLES[rng.below(SAMPLES.len())].chars().collect();
                    let a = rng.below(s.len());
                    let b = a + 1 + rng.below(s.len() - a);
                    c.extend_from_slice(s[a..b].iter().collect::<String>().as_bytes());
                }
            }
        }
        out.push(c);
    }
    out
}

const MODES: [(bool, bool); 4] = [(false, false), (true, false), (false, true), (true, true)];

/// Our ids for every vocabulary, case and mode, one line each, as tokenizer-ref prints them
/// (an error as "ERROR").
fn ours(name: &str, bytes: &[u8], texts: &[Vec<u8>]) -> String {
    let tok =
        Tokenizer::from_gguf_release(&Gguf::parse(bytes).unwrap(), Release::LlamaCppPython0316)
            .unwrap();
    assert_eq!(tok.kind(), Kind::Plamo2);
    let mut out = String::new();
    for (add, parse) in MODES {
        writeln!(out, "# {name} add_special={add} parse_special={parse}").unwrap();
        for t in texts {
            match tok.encode(t, add, parse) {
                Ok(ids) => {
                    let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
                    writeln!(out, "{}", ids.join(" ")).unwrap();
                }
                Err(_) => writeln!(out, "ERROR").unwrap(),
            }
        }
    }
    out
}

fn theirs(bin: &Path, dir: &Path, name: &str, bytes: &[u8], texts: &[Vec<u8>]) -> String {
    let model = dir.join(format!("{name}.gguf"));
    std::fs::write(&model, bytes).unwrap();
    let file = dir.join(format!("{name}.cases"));
    let mut f = std::fs::File::create(&file).unwrap();
    for t in texts {
        writeln!(f, "{}", t.len()).unwrap();
        f.write_all(t).unwrap();
    }
    drop(f);
    let mut out = String::new();
    for (add, parse) in MODES {
        writeln!(out, "# {name} add_special={add} parse_special={parse}").unwrap();
        let r = Command::new(bin)
            .args([
                "cases",
                model.to_str().unwrap(),
                file.to_str().unwrap(),
                &u8::from(add).to_string(),
                &u8::from(parse).to_string(),
            ])
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        for line in String::from_utf8(r.stdout).unwrap().lines() {
            let line = if line.starts_with("ERROR") {
                "ERROR"
            } else {
                line
            };
            writeln!(out, "{line}").unwrap();
        }
    }
    out
}

fn record_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/plamo2-0.3.16.txt")
}

#[test]
fn plamo2_equals_llama_cpp_0_3_16() {
    let sets = [("tiny", tiny(), 120), ("large", large(), 400)];
    let mut got = String::new();
    let mut inputs = Vec::new();
    for (i, (name, v, n)) in sets.iter().enumerate() {
        let bytes = v.build();
        let texts = cases(v, 0x5EED_0100 + i as u64, *n);
        got.push_str(&ours(name, &bytes, &texts));
        inputs.push((name, bytes, texts));
    }
    if let Some(bin) = std::env::var_os("GGUF_TOKENIZER_REF") {
        let dir = std::env::temp_dir().join(format!("gguf-plamo2-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut live = String::new();
        for (name, bytes, texts) in &inputs {
            live.push_str(&theirs(Path::new(&bin), &dir, name, bytes, texts));
        }
        let _ = std::fs::remove_dir_all(&dir);
        if std::env::var("GGUF_TOKENIZER_RECORD").as_deref() == Ok("1") {
            std::fs::write(record_path(), &live).unwrap();
        }
        assert_lines_equal(&live, &got, "llama.cpp (live)");
    }
    let recorded = std::fs::read_to_string(record_path()).expect("the recorded llama.cpp ids");
    assert_lines_equal(&recorded, &got, "llama.cpp (recorded)");
}

fn assert_lines_equal(want: &str, got: &str, what: &str) {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    assert_eq!(w.len(), g.len(), "{what}: line count");
    let differ: Vec<String> = w
        .iter()
        .zip(&g)
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .take(10)
        .map(|(i, (a, b))| format!("line {}: {what} {a}\n  ours {b}", i + 1))
        .collect();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// Whether llama.cpp loads the vocabulary (`None` without the reference program).
fn llama_cpp_loads(bytes: &[u8]) -> Option<bool> {
    let bin = std::env::var_os("GGUF_TOKENIZER_REF")?;
    let dir = std::env::temp_dir().join(format!("gguf-plamo2-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("v.gguf");
    let cases = dir.join("v.cases");
    std::fs::write(&model, bytes).unwrap();
    std::fs::write(&cases, b"1\na").unwrap();
    let ok = Command::new(bin)
        .args([
            "cases",
            model.to_str().unwrap(),
            cases.to_str().unwrap(),
            "0",
            "0",
        ])
        .output()
        .unwrap()
        .status
        .success();
    let _ = std::fs::remove_dir_all(&dir);
    Some(ok)
}

/// Its load refuses what llama.cpp's throws on (checked against it where it is at hand): a
/// byte token that is not hexadecimal, a missing byte token, a code point past U+10FFFF in a
/// token.
#[test]
fn plamo2_load_errors() {
    let mut bad_hex = tiny();
    bad_hex.tokens[4 + 0x41] = b"<0xZZ>".to_vec();
    let mut missing = tiny();
    missing.types[4 + 0x41] = NORMAL;
    let mut past_max = tiny();
    past_max.push(&b"a\xF7\xBF\xBF\xBF"[..], -1.0, NORMAL);
    for v in [bad_hex, missing, past_max] {
        let bytes = v.build();
        assert!(Tokenizer::from_gguf(&Gguf::parse(&bytes).unwrap()).is_err());
        assert_ne!(llama_cpp_loads(&bytes), Some(true));
    }
    assert_ne!(llama_cpp_loads(&tiny().build()), Some(false));
}

/// A 100,000-code-point token: llama.cpp's table holds every prefix of every suffix (5·10^9
/// rows); the trie holds 10^5 nodes. Text along it is refused past the work bound.
#[test]
fn plamo2_long_token() {
    let mut v = tiny();
    v.push("a".repeat(100_000), -1.0, NORMAL);
    v.push("a", -1.0, NORMAL);
    let tok = Tokenizer::from_gguf(&Gguf::parse(&v.build()).unwrap()).unwrap();
    let a = tok.text_to_token(b"a").unwrap();
    assert_eq!(tok.encode(b"aaa", false, false).unwrap(), vec![a; 3]);
    assert!(matches!(
        tok.encode("a".repeat(99_999).as_bytes(), false, false),
        Err(gguf_tokenizer::Error::Limit(_))
    ));
}
