//! Hostile vocabularies and texts (issue 37, items 1–5), each sized so that the unbounded
//! algorithm (llama.cpp's, and this crate's before) takes minutes or gigabytes: the result
//! must be right, or the input refused with `Error::Limit`, never slow.
//! `GGUF_HOSTILE_OUT=DIR` writes each vocabulary and text there (NAME.gguf, NAME.txt), to
//! measure them with a release build (`examples/bench.rs`) or run llama.cpp on them.

use gguf_tokenizer::gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_tokenizer::gguf_grammar::{Ctx, Gguf, ValueType};
use gguf_tokenizer::{Error, Tokenizer};

const NORMAL: i32 = 1;
const UNKNOWN: i32 = 2;
const CONTROL: i32 = 3;

struct Vocab {
    model: &'static str,
    tokens: Vec<Vec<u8>>,
    types: Vec<i32>,
    scores: Option<Vec<f32>>,
    keys: Vec<(&'static str, OwnedValue)>,
}

impl Vocab {
    fn new(model: &'static str) -> Vocab {
        Vocab {
            model,
            tokens: Vec::new(),
            types: Vec::new(),
            scores: None,
            keys: Vec::new(),
        }
    }

    fn token(&mut self, text: impl Into<Vec<u8>>, ty: i32) -> u32 {
        self.tokens.push(text.into());
        self.types.push(ty);
        self.tokens.len() as u32 - 1
    }

    /// The GPT-2 byte alphabet, as BPE vocabularies have it.
    fn byte_alphabet(&mut self) {
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
            self.token(c.to_string(), NORMAL);
        }
    }

    fn key(&mut self, name: &'static str, v: impl Into<OwnedValue>) {
        self.keys.push((name, v.into()));
    }

    fn build(&self) -> Vec<u8> {
        let mut b = GgufBuilder::new(Ctx::V3_LE);
        b.kv("tokenizer.ggml.model", self.model);
        let strings = |v: &[Vec<u8>]| {
            OwnedValue::array(ValueType::String, v.iter().cloned().map(OwnedValue::string))
        };
        b.kv("tokenizer.ggml.tokens", strings(&self.tokens));
        b.kv(
            "tokenizer.ggml.token_type",
            OwnedValue::array(ValueType::I32, self.types.clone()),
        );
        if let Some(s) = &self.scores {
            b.kv(
                "tokenizer.ggml.scores",
                OwnedValue::array(ValueType::F32, s.clone()),
            );
        }
        for (k, v) in &self.keys {
            b.kv(k, v.clone());
        }
        b.build().unwrap()
    }

    fn load(&self) -> Result<Tokenizer, Error> {
        let bytes = self.build();
        Tokenizer::from_gguf(&Gguf::parse(&bytes).unwrap())
    }
}

fn bpe(pre: &str, merges: &[&str]) -> Vocab {
    let mut v = Vocab::new("gpt2");
    v.byte_alphabet();
    v.key("tokenizer.ggml.pre", pre.to_string());
    v.key(
        "tokenizer.ggml.merges",
        OwnedValue::array(
            ValueType::String,
            merges.iter().map(|m| OwnedValue::string(m.as_bytes())),
        ),
    );
    v
}

fn save(name: &str, v: &Vocab, text: &[u8]) {
    if let Some(dir) = std::env::var_os("GGUF_HOSTILE_OUT") {
        let dir = std::path::PathBuf::from(dir);
        std::fs::write(dir.join(format!("{name}.gguf")), v.build()).unwrap();
        std::fs::write(dir.join(format!("{name}.txt")), text).unwrap();
    }
}

fn is_limit<T: std::fmt::Debug>(r: Result<T, Error>) -> bool {
    matches!(r, Err(Error::Limit(_)))
}

/// Item 1: a BPE token of 20,000 × U+4E2D decodes (llama.cpp's `[UNK_BYTE_…]` form, the whole
/// text once per code point) to 1.2 GB, which llama.cpp and this crate before built at load.
#[test]
fn bpe_token_whose_piece_is_quadratic_is_refused() {
    let mut v = bpe("gpt-2", &[]);
    v.token("中".repeat(20_000), NORMAL);
    save("1-bpe-piece", &v, b"x");
    let r = v.load().map(|_| ());
    assert!(is_limit(r), "not refused");
    // `gguf check --profile llama.cpp` says the vocabulary went unchecked, and why.
    let bytes = v.build();
    let found = gguf_tokenizer::check::check(&Gguf::parse(&bytes).unwrap());
    let codes: Vec<_> = found.iter().map(|d| d.code.name()).collect();
    assert_eq!(codes, ["tokenizer-limit"], "{found:?}");
    assert!(found[0]
        .message
        .starts_with("the vocabulary was not checked: the tokens' pieces"));
    // A few such code points, as some real vocabularies have, load with llama.cpp's piece.
    let mut v = bpe("gpt-2", &[]);
    let id = v.token("中中", NORMAL);
    let tok = v.load().unwrap();
    let one = "[UNK_BYTE_0xe4b8ad中中]";
    assert_eq!(tok.token_to_piece(id, true), [one, one].concat().as_bytes());
}

/// Item 2: 100,000 control tokens, all in the text (889 KB): llama.cpp searches every
/// fragment for every token, 10^10 steps.
#[test]
fn many_special_tokens_in_a_long_text() {
    let mut v = bpe("gpt-2", &[]);
    let mut text = Vec::new();
    let mut want = Vec::new();
    for i in 0..100_000 {
        let t = format!("<c{i}>");
        want.push(v.token(t.clone(), CONTROL));
        text.extend_from_slice(t.as_bytes());
    }
    save("2-specials", &v, &text);
    let tok = v.load().unwrap();
    assert_eq!(tok.encode(&text, false, true).unwrap(), want);
    // Not parsed, they are text: each byte its token here (no merges).
    assert_eq!(tok.encode(&text, false, false).unwrap().len(), text.len());
}

/// Item 3: superbpe's `(?=(\d{3})+(?!\d))` on 100,000 digits: a backtracking engine scans to
/// the end of the digits from each of them (over 60 s).
#[test]
fn superbpe_long_run_of_digits() {
    let mut v = bpe("superbpe", &["1 1", "11 1"]);
    let one = u32::from(b'1');
    let three = v.token("111", NORMAL);
    v.token("11", NORMAL);
    let text = "1".repeat(100_000);
    save("3-superbpe", &v, text.as_bytes());
    let tok = v.load().unwrap();
    let mut want = vec![one];
    want.extend(std::iter::repeat_n(three, 33_333));
    assert_eq!(tok.encode(text.as_bytes(), false, false).unwrap(), want);
}

/// Item 4: a special token whose text overlaps itself ('x' × 30,000), in a text of x's.
#[test]
fn self_overlapping_special_token() {
    let mut v = bpe("gpt-2", &[]);
    let x = u32::from(b'x');
    let long = v.token("x".repeat(30_000), CONTROL);
    let text = "x".repeat(100_001);
    save("4-overlapping-special", &v, text.as_bytes());
    let tok = v.load().unwrap();
    let mut want = vec![long; 3];
    want.extend(std::iter::repeat_n(x, 10_001));
    assert_eq!(tok.encode(text.as_bytes(), false, true).unwrap(), want);
    assert_eq!(
        tok.decode(&[long], false, true),
        "x".repeat(30_000).as_bytes()
    );
}

fn wpm() -> Vocab {
    let mut v = Vocab::new("bert");
    for i in 0..100 {
        v.token(format!("[unused{i}]"), CONTROL);
    }
    v.token("[UNK]", UNKNOWN);
    v.token("[CLS]", CONTROL);
    v.token("[SEP]", CONTROL);
    v
}

/// Item 5, WPM: one 100 KB word where every place starts a walk along a 3,000-byte token
/// that never completes (llama.cpp: 58.7 s).
#[test]
fn wpm_long_word() {
    let mut v = wpm();
    let start = v.token("▁a", NORMAL);
    let a = v.token("a", NORMAL);
    v.token(format!("{}b", "a".repeat(2_999)), NORMAL);
    let text = "a".repeat(100_000);
    save("5-wpm-word", &v, text.as_bytes());
    let tok = v.load().unwrap();
    assert!(is_limit(tok.encode(text.as_bytes(), false, false)));
    // The same word with the long token out of reach is tokenized.
    let text = "a".repeat(2_000);
    let mut want = vec![start];
    want.extend(std::iter::repeat_n(a, 1_999));
    assert_eq!(tok.encode(text.as_bytes(), false, false).unwrap(), want);
}

fn ugm(charsmap: Option<Vec<u8>>) -> Vocab {
    let mut v = Vocab::new("t5");
    v.token("<pad>", CONTROL);
    v.token("</s>", CONTROL);
    v.token("<unk>", UNKNOWN);
    if let Some(m) = charsmap {
        v.key(
            "tokenizer.ggml.precompiled_charsmap",
            OwnedValue::array(ValueType::U8, m),
        );
    }
    v
}

/// Item 5, UGM: a character map whose double array cycles on 'a' (one leaf, then a loop of
/// two nodes): every place walks to the end of the text (llama.cpp: 14.8 s on 100 KB).
#[test]
fn ugm_cycling_character_map() {
    let mut units = vec![0u32; 354];
    units[97] = (256 << 10) | 0x100 | 0x61; // 'a' from the root: a leaf, to node 353
    units[353] = 0; // the leaf's replacement offset; also node 353's unit
    units[256] = (97 << 10) | 0x61; // 'a' from 353 (353 ^ 97 = 256) leads back to 353
    let mut map = ((units.len() * 4) as u32).to_le_bytes().to_vec();
    for u in &units {
        map.extend_from_slice(&u.to_le_bytes());
    }
    map.extend_from_slice(b"b\0");
    let mut v = ugm(Some(map));
    v.key("tokenizer.ggml.add_space_prefix", false);
    v.scores = Some(vec![0.0; 4]);
    let b = v.token("b", NORMAL);
    save("5-ugm-charsmap", &v, "a".repeat(100_000).as_bytes());
    let tok = v.load().unwrap();
    assert!(is_limit(tok.encode(
        "a".repeat(100_000).as_bytes(),
        false,
        false
    )));
    // Short: each 'a' is replaced by 'b'.
    assert_eq!(
        tok.encode(&[b'a'; 100], false, false).unwrap(),
        vec![b; 100]
    );
}

/// Item 5, UGM: a 100,000-byte token, and 100 KB of text along it.
#[test]
fn ugm_long_token() {
    let mut v = ugm(None);
    v.key("tokenizer.ggml.add_space_prefix", false);
    v.scores = Some(vec![0.0; 5]);
    let a = v.token("a", NORMAL);
    v.token("a".repeat(100_000), NORMAL);
    save("5-ugm-token", &v, "a".repeat(99_999).as_bytes());
    let tok = v.load().unwrap();
    assert!(is_limit(tok.encode(
        "a".repeat(99_999).as_bytes(),
        false,
        false
    )));
    assert_eq!(tok.encode(b"aaa", false, false).unwrap(), vec![a; 3]);
}

/// Item 5, RWKV: the greedy walk along a 100,000-byte token from every place.
#[test]
fn rwkv_long_token() {
    let mut v = Vocab::new("rwkv");
    for b in 0..=255u8 {
        v.token(format!("\\x{b:02x}"), NORMAL);
    }
    v.token("a".repeat(100_000), NORMAL);
    save("5-rwkv-token", &v, "a".repeat(99_999).as_bytes());
    let tok = v.load().unwrap();
    assert!(is_limit(tok.encode(
        "a".repeat(99_999).as_bytes(),
        false,
        false
    )));
    assert_eq!(tok.encode(b"aaa", false, false).unwrap(), vec![97; 3]);
}

/// The work limit can be raised: the WPM word of `wpm_long_word`, shorter, is refused by
/// default and tokenized with a larger allowance.
#[test]
fn work_limit_can_be_raised() {
    let mut v = wpm();
    let start = v.token("▁a", NORMAL);
    let a = v.token("a", NORMAL);
    v.token(format!("{}b", "a".repeat(2_999)), NORMAL);
    let mut tok = v.load().unwrap();
    let text = "a".repeat(4_000);
    assert!(is_limit(tok.encode(text.as_bytes(), false, false)));
    tok.set_work_per_byte(4_000);
    let mut want = vec![start];
    want.extend(std::iter::repeat_n(a, 3_999));
    assert_eq!(tok.encode(text.as_bytes(), false, false).unwrap(), want);
}
