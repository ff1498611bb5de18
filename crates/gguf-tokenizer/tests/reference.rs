//! Against llama.cpp itself, each release under its own (`scripts/llama/tokenizer-ref.cpp`,
//! libllama in-process, the binary named by `$GGUF_TOKENIZER_REF` for 0.3.16 and
//! `$GGUF_TOKENIZER_REF_0_3_36` for 0.3.36; `scripts/check-tokenizer.sh` builds it): a generated
//! text set (random code points from many scripts, whitespace runs, digits, special-token
//! texts, invalid UTF-8) for every vocabulary of llama.cpp's `models/` and an RWKV one made
//! from llama-spm's pieces (`models/` has none), with and without
//! `add_special` and `parse_special`; and test-tokenizer-1's token round trip, whose
//! failures must be the same tokens as llama.cpp's. Every difference fails. Without llama.cpp
//! built, the same cases of the repository's corpus vocabularies are compared with the
//! release's recorded answers (`tests/data/reference-RELEASE.txt`).

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use gguf_tokenizer::gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_tokenizer::gguf_grammar::{Gguf, ValueType};
use gguf_tokenizer::{attr, Release, Tokenizer};

/// The reference binary and llama.cpp's source, or `None` (the recorded digests are compared
/// then) unless `GGUF_REQUIRE_LLAMA=1`, which makes their absence a failure.
fn reference(release: Release) -> Option<(PathBuf, PathBuf)> {
    let src = common::llama_src_of(release)?;
    let var = match release {
        Release::LlamaCppPython0316 => "GGUF_TOKENIZER_REF".to_string(),
        r => format!("GGUF_TOKENIZER_REF_{}", r.version().replace('.', "_")),
    };
    match std::env::var_os(var) {
        Some(p) => Some((PathBuf::from(p), src)),
        None if std::env::var("GGUF_REQUIRE_LLAMA").as_deref() == Ok("1") => {
            panic!(
                "GGUF_TOKENIZER_REF unset (GGUF_REQUIRE_LLAMA=1); run scripts/check-tokenizer.sh"
            )
        }
        None => None,
    }
}

/// Where llama.cpp's answers are recorded: a line per vocabulary and mode, `NAME ADD PARSE
/// CASES DIGEST`, the FNV-1a digest of its output lines for the generated cases.
fn record_path(release: Release) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/data/reference-{}.txt", release.version()))
}

/// FNV-1a, 64 bits, over the lines: enough to tell a changed answer from the recorded one.
fn digest(lines: &[String]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in lines.iter().flat_map(|l| l.bytes().chain([b'\n'])) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The generated cases' seed: from the name, so that every machine and both modes (live and
/// recorded) make the same cases for a vocabulary.
fn seed_of(name: &str) -> u64 {
    digest(&[name.to_string()])
}

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
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

const SCRIPTS: &[(u32, u32)] = &[
    (0x20, 0x7E),       // ASCII
    (0xA0, 0xFF),       // Latin-1
    (0x100, 0x24F),     // Latin extended
    (0x300, 0x36F),     // combining marks
    (0x370, 0x3FF),     // Greek
    (0x400, 0x4FF),     // Cyrillic
    (0x530, 0x58F),     // Armenian
    (0x590, 0x5FF),     // Hebrew
    (0x600, 0x6FF),     // Arabic
    (0x900, 0x97F),     // Devanagari
    (0x980, 0x9FF),     // Bengali
    (0xE00, 0xE7F),     // Thai
    (0x10A0, 0x10FF),   // Georgian
    (0x1100, 0x11FF),   // Hangul Jamo
    (0x1E00, 0x1FFF),   // Latin extended additional, Greek extended
    (0x2000, 0x206F),   // general punctuation (with Unicode spaces)
    (0x2100, 0x22FF),   // letterlike, arrows, maths
    (0x3000, 0x30FF),   // CJK punctuation, kana
    (0x4E00, 0x9FFF),   // CJK ideographs
    (0xAC00, 0xD7A3),   // Hangul syllables
    (0xE000, 0xF8FF),   // private use
    (0xFF00, 0xFFEF),   // fullwidth forms
    (0xFFF0, 0xFFFF),   // specials, noncharacters
    (0x10000, 0x1FFFF), // astral, assigned or not
    (0x1F300, 0x1FAFF), // emoji
    (0x20000, 0x2FFFF), // CJK extensions
    (0x40000, 0x40100), // unassigned planes
    (0xE0000, 0xE01EF), // tags, variation selectors
    (0x10FF00, 0x10FFFF),
];

const SPACES: &[&str] = &[
    " ", " ", " ", "\t", "\n", "\n", "\r", "\r\n", "\x0B", "\x0C", "\u{A0}", "\u{3000}",
    "\u{2009}", "\u{85}", "\u{2028}", "\u{1680}",
];

const INVALID: &[&[u8]] = &[
    b"\x80",
    b"\xBF",
    b"\xC0\x80",
    b"\xC3",
    b"\xE2\x82",
    b"\xED\xA0\x80",
    b"\xED\xBF\xBF",
    b"\xF0\x9F\x98",
    b"\xF4\x90\x80\x80",
    b"\xF7\xBF\xBF\xBF",
    b"\xF8\x88\x80\x80\x80",
    b"\xFE",
    b"\xFF",
    b"\xE0\x80\x80",
    b"\xC1\xBF",
];

const WORDS: &[&str] = &[
    "Hello",
    "world",
    "it's",
    "I'M",
    "we'll",
    "they'RE",
    "don't",
    "you've",
    "'s",
    "'d",
    "naïve",
    "Straße",
    "ÅNGSTRÖM",
    "CamelCase",
    "snake_case",
    "http://example.com/a?b=c",
    "fn main() {}",
    "<html>",
    "x+=1;",
    "...",
    "?!",
    "—",
    "«»",
    "I.B.M.",
    "e.g.",
];

fn piece(rng: &mut Rng, specials: &[Vec<u8>], out: &mut Vec<u8>) {
    match rng.below(10) {
        0..=2 => {
            let &(a, b) = rng.pick(SCRIPTS);
            for _ in 0..1 + rng.below(6) {
                let c = a + (rng.next() % u64::from(b - a + 1)) as u32;
                if let Some(c) = char::from_u32(c) {
                    out.extend_from_slice(c.to_string().as_bytes());
                }
            }
        }
        3 => {
            for _ in 0..1 + rng.below(5) {
                out.extend_from_slice(rng.pick(SPACES).as_bytes());
            }
        }
        4 => {
            let digits: &[&str] = &[
                "0123456789",
                "٠١٢٣٤٥٦٧٨٩",
                "०१२३४५६७८९",
                "０１２３４５６７８９",
                "²³¹½",
            ];
            let d: Vec<char> = rng.pick(digits).chars().collect();
            for _ in 0..1 + rng.below(12) {
                out.extend_from_slice(rng.pick(&d).to_string().as_bytes());
            }
        }
        5 if !specials.is_empty() => {
            let s = rng.pick(specials);
            match rng.below(4) {
                0 => out.extend_from_slice(&s[..s.len().div_ceil(2)]), // a part of one
                _ => out.extend_from_slice(s),
            }
        }
        6 => {
            for _ in 0..1 + rng.below(3) {
                let bytes: &&[u8] = rng.pick(INVALID);
                out.extend_from_slice(bytes);
            }
        }
        _ => {
            out.extend_from_slice(rng.pick(WORDS).as_bytes());
        }
    }
}

fn cases(tok: &Tokenizer, seed: u64, n: usize) -> Vec<Vec<u8>> {
    let specials: Vec<Vec<u8>> = (0..tok.len() as u32)
        .filter_map(|i| tok.token(i))
        .filter(|t| t.attr & (attr::CONTROL | attr::USER_DEFINED | attr::UNKNOWN) != 0)
        .map(|t| t.text.clone())
        .collect();
    let mut rng = Rng(seed);
    let mut out = vec![Vec::new(), b" ".to_vec(), b"\n".to_vec()];
    for s in specials.iter().take(40) {
        out.push(s.clone());
        out.push([b" ", &s[..], b" x"].concat());
    }
    while out.len() < n {
        let mut c = Vec::new();
        for _ in 0..1 + rng.below(8) {
            piece(&mut rng, &specials, &mut c);
        }
        out.push(c);
    }
    out
}

/// A `tokenizer.ggml.pre` for each expression list of llama.cpp's `llm_tokenizer_bpe` that
/// no vocabulary of `models/` uses (0.3.36: and [`UNUSED_PRE_0336`]).
const UNUSED_PRE: &[&str] = &[
    "deepseek-v3",
    "poro-chat",
    "glm4",
    "viking",
    "tekken",
    "chameleon",
    "gpt-4o",
    "kimi-k2",
    "superbpe",
    "bailingmoe",
    "seed-coder",
];

/// The lists 0.3.36 added that no vocabulary of its `models/` uses (gemma4's and qwen35's
/// are; `whitespace` needs its own tokenizer model).
const UNUSED_PRE_0336: &[&str] = &[
    "jais-2",
    "spark2_5",
    "youtu",
    "granite-embed-multi-97m",
    "tiny_aya",
    "ufakzeka",
    "grok-2",
    "afmoe",
    "laguna",
    "exaone-moe",
    "sarvam-moe",
    "minicpm5",
];

/// RWKV's escaped text of raw bytes, as its vocabularies store them.
fn rwkv_escape(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for &b in bytes {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0x20..=0x7E => out.push(b),
            _ => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
        }
    }
    out
}

/// An RWKV vocabulary (`tokenizer.ggml.model` = `rwkv`, the other keys of `base`): every
/// byte, then `base`'s normal pieces with "▁" as a space, escaped and each once.
fn rwkv_vocabulary(base: &Path) -> Vec<u8> {
    let bytes = std::fs::read(base).unwrap();
    let g = Gguf::parse(&bytes).unwrap();
    let tok = Tokenizer::from_gguf_release(&g, Release::LlamaCppPython0316).unwrap();
    let mut seen = std::collections::HashSet::new();
    let mut texts: Vec<Vec<u8>> = Vec::new();
    let raw = (0..=255u8).map(|b| vec![b]);
    let pieces = (0..tok.len() as u32)
        .filter_map(|i| tok.token(i))
        .filter(|t| t.attr & attr::NORMAL != 0)
        .map(|t| {
            String::from_utf8_lossy(&t.text)
                .replace('▁', " ")
                .into_bytes()
        });
    for r in raw.chain(pieces) {
        let e = rwkv_escape(&r);
        if seen.insert(e.clone()) {
            texts.push(e);
        }
    }
    let n = texts.len();
    let mut b = GgufBuilder::from_gguf(&g);
    b.set("tokenizer.ggml.model", "rwkv");
    b.set(
        "tokenizer.ggml.tokens",
        OwnedValue::array(ValueType::String, texts.into_iter().map(OwnedValue::string)),
    );
    b.set(
        "tokenizer.ggml.scores",
        OwnedValue::array(ValueType::F32, vec![0f32; n]),
    );
    b.set(
        "tokenizer.ggml.token_type",
        OwnedValue::array(ValueType::I32, vec![1i32; n]),
    );
    b.build().unwrap()
}

/// gpt-2's vocabulary as 0.3.36's `tokenizer.ggml.model` `model` (`whitespace`: with its
/// pre-tokenizer; `hybriddna`: plus the `<dna>`, `</dna>` and `<oov>` tokens and every
/// ACGT 6-mer with its U+E000 marker, all normal tokens).
fn bpe_session_vocabulary(gpt2: &[u8], model: &str) -> Vec<u8> {
    let g = Gguf::parse(gpt2).unwrap();
    let mut b = GgufBuilder::from_gguf(&g);
    b.set("tokenizer.ggml.model", model);
    if model == "whitespace" {
        b.set("tokenizer.ggml.pre", "whitespace");
        return b.build().unwrap();
    }
    let tokens = g.get_array("tokenizer.ggml.tokens").unwrap();
    let mut texts: Vec<String> = tokens
        .strings()
        .unwrap()
        .map(|s| s.to_str().unwrap().to_string())
        .collect();
    texts.extend(["<dna>", "</dna>", "<oov>"].map(String::from));
    for k in 0..4096 {
        let kmer: String = (0..6)
            .map(|i| b"ACGT"[(k >> (2 * i)) & 3] as char)
            .collect();
        texts.push(kmer + "\u{E000}");
    }
    let mut types = g
        .get_array("tokenizer.ggml.token_type")
        .unwrap()
        .to_vec::<i32>()
        .unwrap();
    types.resize(texts.len(), 1);
    b.set(
        "tokenizer.ggml.tokens",
        OwnedValue::array(ValueType::String, texts.into_iter().map(OwnedValue::string)),
    );
    b.set(
        "tokenizer.ggml.token_type",
        OwnedValue::array(ValueType::I32, types),
    );
    b.build().unwrap()
}

/// What 0.3.36 loads and 0.3.16 does not: gpt-2's vocabulary as kimi-k2's without merges,
/// and llama-spm's with its scores rounded to i32.
fn loads_since_0336(models: &Path, name: &str) -> Vec<u8> {
    let base = if name == "kimi-k2-no-merges" {
        "gpt-2"
    } else {
        "llama-spm"
    };
    let bytes = std::fs::read(models.join(format!("ggml-vocab-{base}.gguf"))).unwrap();
    let g = Gguf::parse(&bytes).unwrap();
    let mut b = GgufBuilder::from_gguf(&g);
    if name == "kimi-k2-no-merges" {
        b.set("tokenizer.ggml.pre", "kimi-k2");
        b.remove("tokenizer.ggml.merges");
    } else {
        let scores = g.get_array("tokenizer.ggml.scores").unwrap();
        let ints: Vec<i32> = scores
            .to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|f| f.round() as i32)
            .collect();
        b.set(
            "tokenizer.ggml.scores",
            OwnedValue::array(ValueType::I32, ints),
        );
    }
    b.build().unwrap()
}

/// Texts with DNA spans: closed, unclosed, empty, lower case, not ACGT, not a multiple of 6.
fn dna_cases(seed: u64, n: usize) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed);
    let mut out = vec![
        b"<dna></dna>".to_vec(),
        b"<dna>".to_vec(),
        b"x</dna>y".to_vec(),
    ];
    while out.len() < n {
        let mut c = Vec::new();
        for _ in 0..1 + rng.below(4) {
            c.extend_from_slice(rng.pick(WORDS).as_bytes());
            if rng.below(4) > 0 {
                c.extend_from_slice(b"<dna>");
            }
            for _ in 0..rng.below(20) {
                c.push(*rng.pick(&b"ACGTACGTacgtNX "[..]));
            }
            if rng.below(3) > 0 {
                c.extend_from_slice(b"</dna>");
            }
        }
        out.push(c);
    }
    out
}

fn run_reference(bin: &Path, args: &[&str]) -> String {
    let out = Command::new(bin)
        .args(args)
        .output()
        .expect("run tokenizer-ref");
    assert!(
        out.status.success(),
        "tokenizer-ref {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("ASCII output")
}

/// Our answer to each case, as tokenizer-ref prints llama.cpp's (ids, or `ERROR`).
fn ours(tok: &Tokenizer, texts: &[Vec<u8>], add: bool, parse: bool) -> Vec<String> {
    texts
        .iter()
        .map(|text| match tok.encode(text, add, parse) {
            Ok(ids) => ids.iter().map(u32::to_string).collect::<Vec<_>>().join(" "),
            Err(_) => "ERROR".to_string(),
        })
        .collect()
}

const MODES: [(bool, bool); 4] = [(false, false), (true, false), (false, true), (true, true)];

/// Live (llama.cpp built): the generated cases of every vocabulary of its `models/`, an RWKV
/// one made from llama-spm's pieces (`models/` has none) and gpt-2's with each pre-tokenizer
/// no vocabulary uses, compared case by case, plus the round trip; the recorded digests must
/// equal llama.cpp's (`GGUF_TOKENIZER_RECORD=1` writes them). Recorded (no llama.cpp): the
/// same cases of the vocabularies of the repository's `tests/corpus/` (llama.cpp's own files)
/// and those made from them, against the recorded digests; no round trip.
#[test]
fn generated_texts_and_round_trips_equal_llama_cpp_0316() {
    compare(Release::LlamaCppPython0316);
}

#[test]
fn generated_texts_and_round_trips_equal_llama_cpp_0336() {
    compare(Release::LlamaCppPython0336);
}

fn compare(release: Release) {
    let live = reference(release);
    let record_path = record_path(release);
    let models = match &live {
        Some((_, src)) => src.join("models"),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus"),
    };
    let per_vocab: usize = std::env::var("GGUF_TOKENIZER_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let recorded_text = std::fs::read_to_string(&record_path).unwrap_or_default();
    let recorded: std::collections::HashMap<&str, &str> = recorded_text
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .collect();
    let dir = std::env::temp_dir().join(format!(
        "gguf-tokenizer-ref-{}-{}",
        release.version(),
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut report = Vec::new();
    let mut failures = Vec::new();
    let mut record = Vec::new();
    let mut vocabularies = common::vocabularies_in(&models);
    let rwkv = dir.join("ggml-vocab-rwkv-made.gguf");
    std::fs::write(
        &rwkv,
        rwkv_vocabulary(&models.join("ggml-vocab-llama-spm.gguf")),
    )
    .unwrap();
    vocabularies.push(rwkv);
    let gpt2 = std::fs::read(models.join("ggml-vocab-gpt-2.gguf")).unwrap();
    let mut encodes_only = Vec::new();
    if release != Release::LlamaCppPython0316 {
        for model in ["whitespace", "hybriddna"] {
            let path = dir.join(format!("ggml-vocab-gpt-2-{model}.gguf"));
            std::fs::write(&path, bpe_session_vocabulary(&gpt2, model)).unwrap();
            vocabularies.push(path);
        }
        for name in ["kimi-k2-no-merges", "llama-spm-i32-scores"] {
            let path = dir.join(format!("ggml-vocab-{name}.gguf"));
            std::fs::write(&path, loads_since_0336(&models, name)).unwrap();
            vocabularies.push(path);
        }
    }
    let new_pre = match release {
        Release::LlamaCppPython0316 => &[][..],
        _ => UNUSED_PRE_0336,
    };
    for pre in UNUSED_PRE.iter().chain(new_pre) {
        let g = Gguf::parse(&gpt2).unwrap();
        let mut b = GgufBuilder::from_gguf(&g);
        b.set("tokenizer.ggml.pre", *pre);
        let path = dir.join(format!("ggml-vocab-gpt-2-pre-{pre}.gguf"));
        std::fs::write(&path, b.build().unwrap()).unwrap();
        encodes_only.push(path.clone());
        vocabularies.push(path);
    }
    for path in &vocabularies {
        let name = common::name(path);
        let tok = common::load_as(path, release);
        let mut texts = cases(&tok, seed_of(&name), per_vocab);
        if name.ends_with("hybriddna") {
            texts.extend(dna_cases(seed_of(&name), per_vocab));
        }
        let file = dir.join(format!("{name}.cases"));
        let mut f = std::fs::File::create(&file).unwrap();
        for t in &texts {
            writeln!(f, "{}", t.len()).unwrap();
            f.write_all(t).unwrap();
        }
        drop(f);
        let (mut compared, mut differ) = (0, 0);
        for (add, parse) in MODES {
            let got = ours(&tok, &texts, add, parse);
            let key = format!("{name} {add} {parse} {per_vocab}");
            let Some((bin, _)) = &live else {
                compared += texts.len();
                match recorded.get(key.as_str()) {
                    Some(want) if *want == format!("{:016x}", digest(&got)) => {}
                    Some(_) => {
                        differ += 1;
                        failures.push(format!("{key}: the answers differ from the {}'s recorded ones (scripts/check-tokenizer.sh shows which)", release.name()));
                    }
                    None => failures.push(format!("{key}: nothing recorded")),
                }
                continue;
            };
            let want: Vec<String> = run_reference(
                bin,
                &[
                    "cases",
                    path.to_str().unwrap(),
                    file.to_str().unwrap(),
                    &u8::from(add).to_string(),
                    &u8::from(parse).to_string(),
                ],
            )
            .lines()
            .map(|w| if w.starts_with("ERROR") { "ERROR" } else { w }.to_string())
            .collect();
            assert_eq!(want.len(), texts.len(), "{name}: reference line count");
            for ((text, want), got) in texts.iter().zip(&want).zip(&got) {
                compared += 1;
                if got != want {
                    differ += 1;
                    if failures.len() < 30 {
                        failures.push(format!(
                            "{name} add_special={add} parse_special={parse} {:?}\n  llama.cpp {want}\n  ours      {got}",
                            String::from_utf8_lossy(text)
                        ));
                    }
                }
            }
            let line = format!("{key} {:016x}", digest(&want));
            if recorded.contains_key(key.as_str()) && !recorded_text.lines().any(|l| l == line) {
                failures.push(format!("{key}: llama.cpp's answers differ from the recorded ones (GGUF_TOKENIZER_RECORD=1 rewrites them)"));
            }
            record.push(line);
        }
        let Some((bin, _)) = live.as_ref().filter(|_| !encodes_only.contains(path)) else {
            report.push(format!(
                "{name:16} {:>7} tokens  {compared:>5} encodes compared, {differ} differ",
                tok.len()
            ));
            continue;
        };
        // test-tokenizer-1: the tokens whose piece does not come back, ours vs llama.cpp's.
        let theirs: Vec<String> = run_reference(bin, &["roundtrip", path.to_str().unwrap()])
            .lines()
            .map(str::to_string)
            .collect();
        let mut ours = Vec::new();
        for i in 0..tok.len() as u32 {
            let piece = tok.decode(&[i], false, true);
            match tok.encode(&piece, false, true) {
                Ok(ids) if tok.decode(&ids, false, true) == piece => {}
                Ok(_) => ours.push(format!("token {i}")),
                Err(_) => ours.push(format!("token {i} throws")),
            }
        }
        if ours != theirs {
            failures.push(format!(
                "{name}: round-trip failures differ: llama.cpp {} ({:?}...), ours {} ({:?}...)",
                theirs.len(),
                &theirs[..theirs.len().min(5)],
                ours.len(),
                &ours[..ours.len().min(5)]
            ));
        }
        report.push(format!(
            "{name:16} {:>7} tokens  {compared:>5} encodes compared, {differ} differ;  round trip: {} of {} tokens fail in llama.cpp, {} in ours",
            tok.len(),
            theirs.len(),
            tok.len(),
            ours.len()
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    if live.is_some() && std::env::var("GGUF_TOKENIZER_RECORD").as_deref() == Ok("1") {
        std::fs::write(&record_path, record.join("\n") + "\n").unwrap();
    }
    eprintln!("{}", report.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
