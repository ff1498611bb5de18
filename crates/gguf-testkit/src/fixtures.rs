//! Deterministic sample files for other projects' tests (`gguf fixtures OUTDIR`), built with
//! [`GgufBuilder`]: the same bytes on every run and platform.
//!
//! | file | what |
//! |---|---|
//! | `minimal-llama.gguf` | GGUF v3, llama keys, one block, a 265-token SentencePiece vocabulary (`<unk>`, `<s>`, `</s>`, the byte tokens `<0x00>`..`<0xFF>`, six words); f32, f16 and q8_0 tensors, tied embeddings |
//! | `llama3-tiny.gguf` | one llama block with RoPE (freq base 500000) and grouped-query attention (4 heads, 2 kv heads), a 269-token byte-level BPE vocabulary (multilingual and emoji tokens, merges, the 256 byte characters); f32, f16, q8_0 and q4_K tensors |
//!
//! llama.cpp (the version `scripts/build-llama-tools.sh` builds) loads both models, tokenizes
//! text with them (every byte has a token) and decodes: `scripts/check-llama-loader.sh`
//! checks it.
//! | `truncated-metadata.gguf` | claims 6 tensors and 14 key/values, cut at 112 bytes inside the key/values |
//!
//! **Tensor data** dequantises to a documented pattern. The tensor at index `s` in the file
//! (its seed) holds, at flat element index `i` (`ne0` fastest):
//!
//! - f32, f16 and q8_0: `c = (7·i + 13·s) mod 255 − 127` and the value `c / 64` (exact in f16;
//!   q8_0 blocks have the scale `d = 1/64` and the quants `c`);
//! - q4_K: the nibble `n = (5·i + 3·s) mod 16` in sub-block `j = (i mod 256) / 32`, and the value
//!   `((j + 1)·n − 8) / 16` (super-block scales `d = dmin = 1/16`, sub-block scale `j + 1`,
//!   sub-block min 8).
//!
//! [`expected`] gives these values, which the tests compare with gguf-py's dequantisation.
//!
//! ```
//! use gguf_grammar::{validate::{self, Profile}, Gguf};
//! use gguf_testkit::fixtures;
//!
//! let tiny = fixtures::llama3_tiny();
//! let gguf = Gguf::parse(&tiny)?;
//! assert_eq!(gguf.get("llama.attention.head_count_kv").and_then(|v| v.as_u64()), Some(2));
//! let found = validate::check(&gguf, tiny.len() as u64, Profile::Strict);
//! assert!(validate::accepts(&found, Profile::Strict));
//! assert!(gguf_llama::schema::accepts_model(&gguf_llama::schema::check_model(&gguf)));
//! // Every run gives the same bytes.
//! assert_eq!(fixtures::llama3_tiny(), tiny);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use gguf_grammar::data::f16;
use gguf_grammar::validate::{self, Code, Diagnostic, Profile};
use gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_grammar::{Ctx, GgmlType, Gguf, ValueType};

mod tiny;

/// One sample file: its name in the output folder and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fixture {
    /// The file name, e.g. `minimal-llama.gguf`.
    pub name: &'static str,
    /// The file's bytes.
    pub bytes: Vec<u8>,
}

/// The three fixtures, in the order of the module documentation.
pub fn all() -> Vec<Fixture> {
    vec![
        Fixture {
            name: "minimal-llama.gguf",
            bytes: minimal_llama(),
        },
        Fixture {
            name: "llama3-tiny.gguf",
            bytes: llama3_tiny(),
        },
        Fixture {
            name: "truncated-metadata.gguf",
            bytes: truncated_metadata(),
        },
    ]
}

/// A tensor to build: name, dims (`ne0` first) and type; its data follows the pattern.
struct Planned {
    name: &'static str,
    dims: &'static [u64],
    ggml_type: GgmlType,
}

const fn planned(name: &'static str, dims: &'static [u64], ggml_type: GgmlType) -> Planned {
    Planned {
        name,
        dims,
        ggml_type,
    }
}

/// Adds `tensors` to `builder` with their pattern data and builds the file.
fn build(keys: GgufBuilder<'static>, tensors: &[Planned]) -> Vec<u8> {
    let data: Vec<Vec<u8>> = tensors
        .iter()
        .enumerate()
        .map(|(seed, t)| tensor_data(t.ggml_type, elements(t.dims), seed as u64))
        .collect();
    let mut builder = keys;
    for (t, bytes) in tensors.iter().zip(&data) {
        builder.tensor(t.name, t.dims, t.ggml_type, bytes);
    }
    // The builder only fails on counts that do not fit or overflowing offsets; these small,
    // fixed files have neither (the tests build every fixture).
    builder.build().unwrap_or_default()
}

fn elements(dims: &[u64]) -> u64 {
    dims.iter().product()
}

/// The keys every llama model has: `[context, n_embd, n_layer, n_ff, n_head]`.
fn llama_keys(b: &mut GgufBuilder<'_>, hp: [u32; 5]) {
    let [context, n_embd, n_layer, n_ff, n_head] = hp;
    b.kv("general.architecture", "llama")
        .kv("llama.context_length", context)
        .kv("llama.embedding_length", n_embd)
        .kv("llama.block_count", n_layer)
        .kv("llama.feed_forward_length", n_ff)
        .kv("llama.attention.head_count", n_head)
        .kv("llama.attention.layer_norm_rms_epsilon", 1e-5f32);
}

/// The `general.*` keys of a described file.
fn general_keys(b: &mut GgufBuilder<'_>, name: &str) {
    b.kv("general.name", name)
        .kv("general.file_type", 7u32) // MOSTLY_Q8_0
        .kv("general.quantization_version", 2u32);
}

/// `minimal-llama.gguf`: see the module documentation.
pub fn minimal_llama() -> Vec<u8> {
    let mut b = GgufBuilder::new(Ctx::V3_LE);
    llama_keys(&mut b, [128, 32, 1, 64, 4]);
    spm_vocabulary(&mut b, &spm_tokens());
    // n_embd 32, 4 heads of 8, n_ff 64, 265 tokens; no output.weight (tied embeddings).
    build(
        b,
        &[
            planned("token_embd.weight", &[32, 265], GgmlType::Q8_0),
            planned("output_norm.weight", &[32], GgmlType::F32),
            planned("blk.0.attn_norm.weight", &[32], GgmlType::F32),
            planned("blk.0.attn_q.weight", &[32, 32], GgmlType::F16),
            planned("blk.0.attn_k.weight", &[32, 32], GgmlType::F16),
            planned("blk.0.attn_v.weight", &[32, 32], GgmlType::F16),
            planned("blk.0.attn_output.weight", &[32, 32], GgmlType::F16),
            planned("blk.0.ffn_norm.weight", &[32], GgmlType::F32),
            planned("blk.0.ffn_gate.weight", &[32, 64], GgmlType::Q8_0),
            planned("blk.0.ffn_up.weight", &[32, 64], GgmlType::Q8_0),
            planned("blk.0.ffn_down.weight", &[64, 32], GgmlType::Q8_0),
        ],
    )
}

/// GPT-2's byte-level alphabet (`bytes_to_unicode`): the character standing for each byte in
/// a byte-level BPE vocabulary. Printable bytes stand for themselves; the others (0–32,
/// 127–160, 173) for U+0100 onwards, in byte order.
fn byte_level_char(byte: u8) -> char {
    let printable = |b: u8| matches!(b, 33..=126 | 161..=172 | 174..=255);
    if printable(byte) {
        return char::from(byte);
    }
    let rank = (0..byte).filter(|&b| !printable(b)).count() as u32;
    char::from_u32(256 + rank).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// `llama3-tiny`'s byte-level BPE vocabulary (269 tokens: specials, multilingual and emoji
/// words, then every byte of the byte-level alphabet not already a token, since llama.cpp's
/// BPE tokenizer drops a byte it finds no token for), with pre-tokenizer `pre`, padded to
/// `min` tokens with unused ones (`[PAD269]`…, as llama.cpp's converters fill gaps); returns
/// the number of tokens.
fn bpe_vocabulary(b: &mut GgufBuilder<'_>, pre: &str, min: usize) -> usize {
    const TOKENS: [&str; 16] = [
        "<|begin_of_text|>",
        "<|end_of_text|>",
        "H",
        "e",
        "He",
        "Ġworld",
        "你好",
        "世界",
        "Привет",
        "مرحبا",
        "नमस्ते",
        "é",
        "😀",
        "👍🏽",
        "👨‍👩‍👧",
        "<|eot_id|>",
    ];
    let bytes: Vec<String> = (0..=255u8)
        .map(|b| byte_level_char(b).to_string())
        .filter(|c| !TOKENS.contains(&c.as_str()))
        .collect();
    let n_words = TOKENS.len() + bytes.len();
    let pads: Vec<String> = (n_words..min.max(n_words))
        .map(|i| format!("[PAD{i}]"))
        .collect();
    let tokens = TOKENS
        .iter()
        .copied()
        .chain(bytes.iter().map(String::as_str))
        .chain(pads.iter().map(String::as_str));
    let n_vocab = n_words + pads.len();
    let token_types = [3i32, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3]
        .into_iter()
        .chain(bytes.iter().map(|_| 1))
        .chain(pads.iter().map(|_| 5));
    b.kv("tokenizer.ggml.model", "gpt2")
        .kv("tokenizer.ggml.pre", pre)
        .kv(
            "tokenizer.ggml.tokens",
            OwnedValue::array(ValueType::String, tokens),
        )
        .kv(
            "tokenizer.ggml.token_type",
            OwnedValue::array(ValueType::I32, token_types),
        )
        .kv(
            "tokenizer.ggml.merges",
            OwnedValue::array(ValueType::String, ["H e", "你 好", "世 界"]),
        )
        .kv("tokenizer.ggml.bos_token_id", 0u32)
        .kv("tokenizer.ggml.eos_token_id", 15u32);
    n_vocab
}

/// `llama3-tiny.gguf`: see the module documentation.
pub fn llama3_tiny() -> Vec<u8> {
    let mut b = GgufBuilder::new(Ctx::V3_LE);
    general_keys(&mut b, "llama3-tiny");
    llama_keys(&mut b, [8192, 32, 1, 256, 4]);
    b.kv("llama.vocab_size", 269u32)
        .kv("llama.attention.head_count_kv", 2u32)
        .kv("llama.rope.dimension_count", 8u32)
        .kv("llama.rope.freq_base", 500000.0f32);
    let n_vocab = bpe_vocabulary(&mut b, "llama-bpe", 0);
    b.kv(
        "tokenizer.chat_template",
        "{% for m in messages %}{{ m['content'] }}<|eot_id|>{% endfor %}",
    );
    // n_embd 32, 4 heads of 8, 2 kv heads (k and v: 16), n_ff 256 (a q4_K row is 256 values),
    // 269 tokens.
    debug_assert_eq!(n_vocab, 269);
    build(
        b,
        &[
            planned("token_embd.weight", &[32, 269], GgmlType::Q8_0),
            planned("output_norm.weight", &[32], GgmlType::F32),
            planned("blk.0.attn_norm.weight", &[32], GgmlType::F32),
            planned("blk.0.attn_q.weight", &[32, 32], GgmlType::F16),
            planned("blk.0.attn_k.weight", &[32, 16], GgmlType::F16),
            planned("blk.0.attn_v.weight", &[32, 16], GgmlType::Q8_0),
            planned("blk.0.attn_output.weight", &[32, 32], GgmlType::F16),
            planned("blk.0.ffn_norm.weight", &[32], GgmlType::F32),
            planned("blk.0.ffn_gate.weight", &[32, 256], GgmlType::Q8_0),
            planned("blk.0.ffn_up.weight", &[32, 256], GgmlType::Q8_0),
            planned("blk.0.ffn_down.weight", &[256, 32], GgmlType::Q4_K),
        ],
    )
}

/// `truncated-metadata.gguf`: a header declaring 6 tensors and 14 key/values, cut at 112 bytes
/// (inside the third key/value).
pub fn truncated_metadata() -> Vec<u8> {
    let mut b = GgufBuilder::new(Ctx::V3_LE);
    general_keys(&mut b, "truncated-metadata");
    llama_keys(&mut b, [128, 32, 0, 64, 4]);
    b.kv("llama.vocab_size", 8u32)
        .kv("tokenizer.ggml.model", "llama")
        .kv("tokenizer.ggml.bos_token_id", 1u32)
        .kv("tokenizer.ggml.eos_token_id", 2u32);
    for name in ["a", "b", "c", "d", "e", "f"] {
        b.tensor_at(name, &[32], GgmlType::F32, 0, &[]);
    }
    let mut bytes = b.build().unwrap_or_default();
    bytes.truncate(112);
    bytes
}

/// The value the pattern gives element `i` of the tensor with seed `seed` and type
/// `ggml_type` (f32, f16, q8_0 or q4_K; `None` for other types).
///
/// ```
/// use gguf_grammar::GgmlType;
/// use gguf_testkit::fixtures::expected;
/// assert_eq!(expected(GgmlType::Q8_0, 0, 0), Some(-127.0 / 64.0));
/// assert_eq!(expected(GgmlType::Q4_K, 1, 40), Some((2.0 * 11.0 - 8.0) / 16.0));
/// ```
pub fn expected(ggml_type: GgmlType, seed: u64, i: u64) -> Option<f32> {
    match ggml_type {
        GgmlType::F32 | GgmlType::F16 | GgmlType::Q8_0 => Some(code(seed, i) as f32 / 64.0),
        GgmlType::Q4_K => {
            let (j, n) = q4k_code(seed, i);
            Some(((j + 1) as f32 * n as f32 - 8.0) / 16.0)
        }
        _ => None,
    }
}

fn code(seed: u64, i: u64) -> i8 {
    (((7 * i + 13 * seed) % 255) as i16 - 127) as i8
}

/// Sub-block and nibble of element `i` of a q4_K tensor.
fn q4k_code(seed: u64, i: u64) -> (u64, u8) {
    ((i % 256) / 32, ((5 * i + 3 * seed) % 16) as u8)
}

/// The little-endian bytes of `n` elements of `ggml_type` following the pattern.
fn tensor_data(ggml_type: GgmlType, n: u64, seed: u64) -> Vec<u8> {
    let mut out = Vec::new();
    match ggml_type {
        GgmlType::F32 => (0..n).for_each(|i| {
            out.extend_from_slice(&(code(seed, i) as f32 / 64.0).to_le_bytes());
        }),
        GgmlType::F16 => (0..n).for_each(|i| {
            out.extend_from_slice(&f16::from_f32(code(seed, i) as f32 / 64.0).to_le_bytes());
        }),
        // block_q8_0: f16 d, then 32 int8 quants.
        GgmlType::Q8_0 => (0..n).step_by(32).for_each(|first| {
            out.extend_from_slice(&f16::from_f32(1.0 / 64.0).to_le_bytes());
            out.extend((first..first + 32).map(|i| code(seed, i) as u8));
        }),
        // block_q4_K: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles.
        GgmlType::Q4_K => (0..n).step_by(256).for_each(|first| {
            out.extend_from_slice(&f16::from_f32(1.0 / 16.0).to_le_bytes());
            out.extend_from_slice(&f16::from_f32(1.0 / 16.0).to_le_bytes());
            let scales: [u8; 8] = [1, 2, 3, 4, 5, 6, 7, 8];
            out.extend_from_slice(&pack_scales_mins(scales, [8; 8]));
            // Each 64 values: 32 bytes, value l in the low nibble of byte l, value 32 + l in
            // the high nibble.
            for chunk in (first..first + 256).step_by(64) {
                out.extend((0..32).map(|l| {
                    let low = q4k_code(seed, chunk + l).1;
                    let high = q4k_code(seed, chunk + 32 + l).1;
                    low | high << 4
                }));
            }
        }),
        _ => {}
    }
    out
}

/// ggml's 12-byte packing of eight 6-bit scales and mins (`get_scale_min_k4`, reversed):
/// bytes 0–3 and 4–7 hold scales and mins 0–3 in their low 6 bits and the top 2 bits of
/// scales and mins 4–7 in their high 2 bits; bytes 8–11 hold the low 4 bits of scale and
/// min 4–7.
fn pack_scales_mins(scales: [u8; 8], mins: [u8; 8]) -> [u8; 12] {
    let mut q = [0u8; 12];
    for j in 0..4 {
        q[j] = scales[j] & 63 | (scales[j + 4] >> 4) << 6;
        q[j + 4] = mins[j] & 63 | (mins[j + 4] >> 4) << 6;
        q[j + 8] = scales[j + 4] & 15 | (mins[j + 4] & 15) << 4;
    }
    q
}

/// What the crate's validator says about a file: the parse error, or each profile's verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Why the file does not parse (a diagnostic every reference rejects), if it does not.
    pub parse_error: Option<Diagnostic>,
    /// Whether each of [`Profile::ALL`] accepts the file.
    pub accepts: [bool; Profile::ALL.len()],
    /// Whether the LLaMA-family schema accepts it (false for a file that does not parse).
    pub schema_accepts: bool,
    /// The codes of the error diagnostics, in the validator's order.
    pub codes: Vec<Code>,
    /// The codes of the schema's errors and warnings (the model rules), in its order.
    pub schema_codes: Vec<Code>,
}

impl Verdict {
    /// Judges `bytes`, the whole file.
    ///
    /// ```
    /// use gguf_testkit::fixtures::{self, Verdict};
    /// let v = Verdict::of(&fixtures::truncated_metadata());
    /// assert_eq!(v.expect(), "parser_error");
    /// assert_eq!(v.accepts, [false; 9]);
    /// ```
    pub fn of(bytes: &[u8]) -> Verdict {
        match Gguf::parse(bytes) {
            Ok(gguf) => {
                let found = validate::diagnose(&gguf, bytes.len() as u64);
                let codes = found
                    .iter()
                    .filter(|d| !d.rejected_by.is_empty())
                    .map(|d| d.code)
                    .collect();
                let schema = gguf_llama::schema::check_model(&gguf);
                Verdict {
                    parse_error: None,
                    accepts: Profile::ALL.map(|p| validate::accepts(&found, p)),
                    schema_accepts: gguf_llama::schema::accepts_model(&schema),
                    codes,
                    schema_codes: schema
                        .iter()
                        .filter(|d| d.severity != validate::Severity::Note)
                        .map(|d| d.code)
                        .collect(),
                }
            }
            Err(e) => {
                let d = validate::parse_failure(&e);
                Verdict {
                    codes: vec![d.code],
                    parse_error: Some(d),
                    accepts: [false; Profile::ALL.len()],
                    schema_accepts: false,
                    schema_codes: Vec::new(),
                }
            }
        }
    }

    /// `valid` (every profile accepts), `invalid` (it parses; a profile rejects) or
    /// `parser_error`.
    pub fn expect(&self) -> &'static str {
        match (&self.parse_error, self.accepts.iter().all(|&a| a)) {
            (Some(_), _) => "parser_error",
            (None, true) => "valid",
            (None, false) => "invalid",
        }
    }

    /// Whether `profile` accepts the file.
    pub fn accepts(&self, profile: Profile) -> bool {
        Profile::ALL
            .iter()
            .position(|&p| p == profile)
            .is_some_and(|i| self.accepts[i])
    }

    /// The verdict as one JSON object (no trailing newline): `{"file", "size", "sha256",
    /// "expect", "profiles": {"ggml": "accept"|"reject", ...}, "schema", "codes", "error"}`,
    /// `error` being `null` or `{"code", "offset", "path", "message"}`.
    pub fn json(&self, file: &str, bytes: &[u8]) -> String {
        let word = |accepted: bool| if accepted { "accept" } else { "reject" };
        let mut out = format!(
            "{{\"file\": {}, \"size\": {}, \"sha256\": \"{}\", \"expect\": \"{}\", \"profiles\": {{",
            json_string(file),
            bytes.len(),
            sha256_hex(bytes),
            self.expect()
        );
        for (i, profile) in Profile::ALL.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            let _ = write!(
                out,
                "{sep}\"{}\": \"{}\"",
                profile.name(),
                word(self.accepts[i])
            );
        }
        let codes: Vec<String> = self.codes.iter().map(|c| format!("\"{c}\"")).collect();
        let _ = write!(
            out,
            "}}, \"schema\": \"{}\", \"codes\": [{}], \"error\": ",
            word(self.schema_accepts),
            codes.join(", ")
        );
        match &self.parse_error {
            None => out.push_str("null"),
            Some(d) => {
                let _ = write!(
                    out,
                    "{{\"code\": \"{}\", \"offset\": {}, \"path\": {}, \"message\": {}}}",
                    d.code,
                    d.span.as_ref().map_or(0, |s| s.start),
                    json_string(&d.path.to_string()),
                    json_string(&d.message)
                );
            }
        }
        out.push('}');
        out
    }
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = gguf_tools::render::json::string(gguf_grammar::GgufStr(s.as_bytes()), &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// `SHA256SUMS` for `files`, in the format of `sha256sum` (`HASH  NAME` lines).
pub fn sha256sums(files: &[Fixture]) -> String {
    files
        .iter()
        .map(|f| format!("{}  {}\n", sha256_hex(&f.bytes), f.name))
        .collect()
}

/// `manifest.json`: a JSON array of each file's [`Verdict::json`], one per line.
pub fn manifest(files: &[Fixture]) -> String {
    let entries: Vec<String> = files
        .iter()
        .map(|f| Verdict::of(&f.bytes).json(f.name, &f.bytes))
        .collect();
    format!("[\n{}\n]\n", entries.join(",\n"))
}

/// The tiny model of every architecture of the schema's table
/// ([`gguf_llama::schema::ARCHITECTURES`]) that llama.cpp loads, as
/// `gguf fixtures --all-archs` writes them, named `tiny-ARCH.gguf`.
pub fn all_archs() -> Vec<Fixture> {
    arch_names()
        .into_iter()
        .filter_map(|arch| {
            Some(Fixture {
                name: arch_file_name(arch)?,
                bytes: tiny_model(arch)?,
            })
        })
        .collect()
}

/// The architectures [`all_archs`] writes: the table's that the newest release
/// ([`gguf_llama::Release::NEWEST`]) loads; an older release may refuse some ("unknown model
/// architecture": the 23 new in 0.3.36 under 0.3.16).
pub fn arch_names() -> Vec<&'static str> {
    use gguf_llama::schema::{loads_architecture, ARCHITECTURES};
    ARCHITECTURES
        .iter()
        .map(|a| a.name)
        .filter(|name| loads_architecture(gguf_llama::Release::NEWEST, name))
        .collect()
}

/// `tiny-ARCH.gguf` for an architecture of [`arch_names`] (`None` for another name).
pub fn arch_file_name(arch: &str) -> Option<&'static str> {
    static NAMES: std::sync::OnceLock<Vec<(&'static str, String)>> = std::sync::OnceLock::new();
    let names = NAMES.get_or_init(|| {
        arch_names()
            .into_iter()
            .map(|a| (a, format!("tiny-{a}.gguf")))
            .collect()
    });
    names
        .iter()
        .find(|(a, _)| *a == arch)
        .map(|(_, f)| f.as_str())
}

/// A deterministic tiny model of architecture `arch` built from the schema's table: every
/// required key (and `head_count_kv`, `rope.dimension_count`) with a small value, or the one
/// `fixtures/tiny.rs` gives for the graph's constraints, the table's kind of tokenizer
/// (`minimal-llama`'s SentencePiece or `llama3-tiny`'s BPE vocabulary, a small WordPiece or
/// Unigram one covering the loader's fixed string, an `rwkv` one for RWKV or a `plamo2` one
/// for PLaMo-2; an encoder's `attention.causal` is false), and every required tensor
/// ([`gguf_llama::schema::required_tensors`], block by block) in f32 with the
/// documented pattern. Dimensions: n_embd 32, 4 heads of 8, 2 kv heads (4 where the layout has
/// no grouped-query attention), n_ff 64, 4 experts of which 2 are used; recurrent ones:
/// `ssm.inner_size` 64, state 16, convolution 4, 4 time-step ranks (Mamba-2 heads) in 2
/// groups, RWKV heads of 8 and LoRA ranks 8 (the value-residual one 4). One block, or as many
/// as the architecture's sliding-window pattern or minimum needs (two for nomic-bert-moe,
/// whose experts are in every second block); an architecture with per-layer arrays gets the
/// blocks `fixtures/tiny.rs` lists, its arrays written as one count where every
/// block agrees. `None` for an architecture the table does not know.
///
/// ```
/// use gguf_grammar::Gguf;
/// use gguf_llama::schema;
/// use gguf_testkit::fixtures;
/// let bytes = fixtures::tiny_model("qwen2").unwrap();
/// let gguf = Gguf::parse(&bytes)?;
/// assert!(schema::check_model(&gguf).is_empty());
/// assert!(gguf.tensor("blk.0.attn_q.bias").is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn tiny_model(arch: &str) -> Option<Vec<u8>> {
    use gguf_llama::hparams::sliding_window;
    use gguf_llama::schema::{self, Architecture, KeyType, TokenizerKind, MOE_EVERY_N_LAYERS};
    let table = Architecture::named(arch)?;
    let (n_embd, n_head, n_ff, n_expert, n_used, n_ctx) = (32u64, 4u64, 64u64, 4u64, 2u64, 128u64);
    let n_head_kv = if table.gqa { 2 } else { n_head };
    let head = n_embd / n_head;
    // One block, or as many as the table says the graph needs (or lists per layer); two
    // where experts are in every second block only (`moe_every_n_layers` 2: block 1 has them).
    let moe_every = table
        .keys
        .iter()
        .flat_map(|g| g.iter())
        .any(|k| k.required && k.name == MOE_EVERY_N_LAYERS);
    let tiny_layers = tiny::layers(arch);
    let n_layer = match (table.block_counts.first(), tiny_layers) {
        (Some(&n), _) => n,
        (None, Some(layers)) => layers.len() as u64,
        (None, None) if moe_every => 2,
        (None, None) => sliding_window(arch)
            .map_or(0, |w| w.fewest_blocks())
            .max(table.min_blocks)
            .max(1),
    };
    // Recurrent dimensions: an expansion factor of 2 (the only one llama.cpp supports), 4
    // Mamba-2 heads of 16 in 2 groups, 4 RWKV heads of 8.
    let (d_inner, d_state, d_conv, dt_rank, n_group) = (2 * n_embd, 16u64, 4u64, 4u64, 2u64);
    let (wkv_head, lora, lora_value_res, short_conv) = (8u64, 8u64, 4u64, 3u64);
    let mut b = GgufBuilder::new(Ctx::V3_LE);
    b.kv("general.architecture", arch)
        .kv("general.name", format!("tiny-{arch}"));
    let key = |k: &str| gguf_grammar::summary::arch_key(k, arch);
    // The table's values for the tiny model, written in place of the defaults.
    let tiny = |name: &str| {
        tiny::values(arch)
            .iter()
            .find(|(k, _)| key(k) == name)
            .map(|&(_, v)| OwnedValue::from(v as u32))
    };
    let mut written: Vec<String> = Vec::new();
    for spec in table.keys.iter().flat_map(|g| g.iter()) {
        let name = key(spec.name);
        let suffix = name.strip_prefix(arch).unwrap_or(&name);
        // An optional `attention.causal` is written too: an embedding model (llama-embed)
        // runs as an encoder only when its file says so.
        let causal = spec.ty == KeyType::Bool && suffix == ".attention.causal";
        if !(spec.required || causal)
            || name.starts_with("tokenizer.")
            || name == "general.architecture"
        {
            continue;
        }
        let value: OwnedValue = match (spec.ty, suffix) {
            _ if tiny(&name).is_some() => tiny(&name)?,
            (KeyType::PerLayer, ".feed_forward_length" | ".attention.head_count") => {
                match tiny_layers {
                    Some(layers) => per_layer(layers.iter().map(|l| match suffix {
                        ".feed_forward_length" => l.ff,
                        _ => l.heads,
                    })),
                    None if suffix == ".feed_forward_length" => (n_ff as u32).into(),
                    None => (n_head as u32).into(),
                }
            }
            (KeyType::Count, ".ssm.conv_kernel") => (d_conv as u32).into(),
            (KeyType::Count, ".ssm.inner_size") => (d_inner as u32).into(),
            (KeyType::Count, ".ssm.state_size") => (d_state as u32).into(),
            (KeyType::Count, ".ssm.time_step_rank") => (dt_rank as u32).into(),
            (KeyType::Count, ".ssm.group_count") => (n_group as u32).into(),
            (KeyType::Count, ".wkv.head_size") => (wkv_head as u32).into(),
            (KeyType::Count, ".shortconv.l_cache") => (short_conv as u32).into(),
            (
                KeyType::Count,
                ".time_mix_extra_dim"
                | ".time_decay_extra_dim"
                | ".attention.decay_lora_rank"
                | ".attention.iclr_lora_rank"
                | ".attention.gate_lora_rank",
            ) => (lora as u32).into(),
            // Unlike the others, so that block 0's value-residual LoRA (as wide as the
            // in-context rate's) differs from the later blocks'.
            (KeyType::Count, ".attention.value_residual_mix_lora_rank") => {
                (lora_value_res as u32).into()
            }
            (KeyType::Count, ".context_length") => (n_ctx as u32).into(),
            (KeyType::Count, ".embedding_length") => (n_embd as u32).into(),
            (KeyType::Count, ".block_count") => (n_layer as u32).into(),
            (KeyType::Count, ".expert_count") => (n_expert as u32).into(),
            (KeyType::Count, ".expert_used_count") => (n_used as u32).into(),
            (KeyType::Count, ".expert_feed_forward_length") => ((n_ff / n_used) as u32).into(),
            (KeyType::Count, ".leading_dense_block_count") => 0u32.into(),
            (KeyType::Count, ".attention.sliding_window") => 64u32.into(),
            (KeyType::Count, ".moe_every_n_layers") => 2u32.into(),
            (KeyType::Count, ".attention.relative_buckets_count") => 8u32.into(),
            // T5 decodes from its padding token.
            (KeyType::Count, ".decoder_start_token_id") => 0u32.into(),
            (KeyType::Count, ".attention.kv_lora_rank") => 16u32.into(),
            (KeyType::Count, _) => 1u32.into(),
            (KeyType::Float, ".attention.layer_norm_rms_epsilon")
            | (KeyType::Float, ".attention.layer_norm_epsilon") => 1e-5f32.into(),
            (KeyType::Float, ".attention.scale") => 0.125f32.into(),
            (KeyType::Float, ".attention.max_alibi_bias") => 8.0f32.into(),
            (KeyType::Float, ".attention.clamp_kqv") => 8.0f32.into(),
            (KeyType::Bool, ".swin_norm") => false.into(),
            // M-RoPE's sections share the head's rotary pairs: 2, 1, 1 and 0 of 4.
            (KeyType::Sections, ".rope.dimension_sections") => {
                let half = (head / 2) as i32;
                OwnedValue::array(
                    ValueType::I32,
                    [half - 2 * (half / 4), half / 4, half / 4, 0],
                )
            }
            (KeyType::Float | KeyType::FloatPerLayer, _) => 1.0f32.into(),
            // An encoder (the BERT family) attends both ways.
            (KeyType::Bool, ".attention.causal") => false.into(),
            (KeyType::Bool, _) => true.into(),
            _ => return None,
        };
        b.kv(&name, value);
        written.push(name);
    }
    // Per layer where the table lists the blocks; none in a model without attention heads.
    let heads_kv = match tiny_layers {
        Some(layers) => Some(per_layer(layers.iter().map(|l| l.heads_kv))),
        None => table.heads.then(|| OwnedValue::from(n_head_kv as u32)),
    };
    let rot = table.heads.then(|| OwnedValue::from(head as u32));
    for (template, default) in [
        ("{arch}.attention.head_count_kv", heads_kv),
        ("{arch}.rope.dimension_count", rot),
    ] {
        let name = key(template);
        if let Some(value) = tiny(&name).or(default) {
            b.kv(&name, value);
            written.push(name);
        }
    }
    for (template, value) in tiny::values(arch) {
        let name = key(template);
        if !written.contains(&name) {
            b.kv(&name, *value as u32);
        }
    }
    match table.tokenizer {
        TokenizerKind::Spm => {
            // Plus the token llama.cpp sets attributes of in a model named "phi3" (it throws
            // std::out_of_range when the vocabulary lacks it).
            let mut source = spm_tokens();
            source.push("<|endoftext|>".into());
            spm_vocabulary(&mut b, &source);
        }
        TokenizerKind::Bpe(pre) => {
            bpe_vocabulary(&mut b, pre, table.min_vocab as usize);
        }
        TokenizerKind::Wpm => wpm_vocabulary(&mut b),
        TokenizerKind::Ugm => ugm_vocabulary(&mut b),
        TokenizerKind::Rwkv => rwkv_vocabulary(&mut b),
        TokenizerKind::Plamo2 => plamo2_vocabulary(&mut b),
    }
    // The tensors the schema requires of these keys, with their shapes.
    let keys_only = b.build().ok()?;
    let tensors = schema::required_tensors(&Gguf::parse(&keys_only).ok()?)?;
    let data: Vec<Vec<u8>> = tensors
        .iter()
        .enumerate()
        .map(|(seed, (_, dims))| tensor_data(GgmlType::F32, elements(dims), seed as u64))
        .collect();
    for ((name, dims), bytes) in tensors.iter().zip(&data) {
        b.tensor(name, dims, GgmlType::F32, bytes);
    }
    b.build().ok()
}

/// A WordPiece (`bert`) vocabulary as llama.cpp loads it (the converter's form: a word's
/// first piece starts with `▁`, a continuation piece, `##2` in the original, has no prefix):
/// the five special tokens, then the words of the loader's fixed string, lower-cased and split
/// at punctuation as llama.cpp's WPM tokenizer splits them, `42` as `▁4` and `2`.
fn wpm_vocabulary(b: &mut GgufBuilder<'_>) {
    const TOKENS: [&str; 15] = [
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "▁hello", "▁world", "▁,", "▁the", "▁model",
        "▁said", "▁:", "▁4", "2", "▁!",
    ];
    let types = (0..TOKENS.len()).map(|i| match i {
        1 => 2i32,
        0 | 2..=4 => 3,
        _ => 1,
    });
    vocabulary(b, "bert", TOKENS, None, types);
    b.kv("tokenizer.ggml.token_type_count", 2u32)
        .kv("tokenizer.ggml.bos_token_id", 2u32)
        .kv("tokenizer.ggml.seperator_token_id", 3u32)
        .kv("tokenizer.ggml.unknown_token_id", 1u32)
        .kv("tokenizer.ggml.padding_token_id", 0u32)
        .kv("tokenizer.ggml.mask_token_id", 4u32);
}

/// A Unigram (`t5`) vocabulary: `<pad>`, `</s>`, `<unk>`, then the pieces of the loader's
/// fixed string as llama.cpp's UGM tokenizer normalises it without a precompiled charsmap (a
/// `▁` before the text and for each space; the newline kept), each with score −1, `42` as
/// `▁4` and `2`.
fn ugm_vocabulary(b: &mut GgufBuilder<'_>) {
    const TOKENS: [&str; 14] = [
        "<pad>", "</s>", "<unk>", "▁Hello", "▁world", ",", "▁the", "▁model", "▁said", ":", "▁4",
        "2", "!", "\n",
    ];
    let scores = (0..TOKENS.len()).map(|i| if i < 3 { 0.0f32 } else { -1.0 });
    let types = (0..TOKENS.len()).map(|i| match i {
        0 | 1 => 3i32,
        2 => 2,
        _ => 1,
    });
    vocabulary(b, "t5", TOKENS, Some(scores.collect()), types);
    b.kv("tokenizer.ggml.add_space_prefix", true)
        .kv("tokenizer.ggml.eos_token_id", 1u32)
        .kv("tokenizer.ggml.unknown_token_id", 2u32)
        .kv("tokenizer.ggml.padding_token_id", 0u32);
}

/// A per-layer hyperparameter: one count when every block has the same, else an array.
fn per_layer(values: impl Iterator<Item = u64>) -> OwnedValue {
    let values: Vec<u32> = values.map(|v| v as u32).collect();
    match values.first() {
        Some(&first) if values.iter().all(|&v| v == first) => first.into(),
        _ => OwnedValue::array(ValueType::U32, values),
    }
}

/// An RWKV vocabulary (`tokenizer.ggml.model` `rwkv`): every byte as a token, escaped as
/// llama.cpp's `llama_unescape_rwkv_token` reads them (`\\t`, `\\n`, `\\r`, `\\\\`, `\\xNN`
/// with lowercase hex for other control and non-ASCII bytes), then a few words.
/// llama.cpp's RWKV tokenizer matches the longest token at each byte and needs the newline.
fn rwkv_vocabulary(b: &mut GgufBuilder<'_>) {
    const WORDS: [&str; 6] = ["the", " the", " model", "Hello", " world", "42"];
    let bytes = (0..=255u8).map(|byte| match byte {
        b'\t' => "\\t".to_string(),
        b'\n' => "\\n".to_string(),
        b'\r' => "\\r".to_string(),
        b'\\' => "\\\\".to_string(),
        0x20..=0x7e => char::from(byte).to_string(),
        _ => format!("\\x{byte:02x}"),
    });
    let tokens: Vec<String> = bytes.chain(WORDS.iter().map(|w| w.to_string())).collect();
    let types = tokens.iter().map(|_| 1i32);
    vocabulary(b, "rwkv", tokens.iter().map(String::as_str), None, types);
}

/// A PLaMo-2 vocabulary (`plamo2`): its four special tokens (unknown, then control), the 256
/// `<0xXX>` byte tokens (llama.cpp's tokenizer throws unless it has every one, and falls back
/// to them), then words written as they are (no `▁`) with falling scores.
fn plamo2_vocabulary(b: &mut GgufBuilder<'_>) {
    const SPECIAL: [&str; 4] = [
        "<|plamo:unk|>",
        "<|plamo:bos|>",
        "<|plamo:eos|>",
        "<|plamo:pad|>",
    ];
    const WORDS: [&str; 6] = [" ", " the", " model", "Hello", " world", "42"];
    let bytes = (0..=255u8).map(|b| format!("<0x{b:02X}>"));
    let tokens: Vec<String> = SPECIAL
        .into_iter()
        .map(String::from)
        .chain(bytes)
        .chain(WORDS.into_iter().map(String::from))
        .collect();
    let words = SPECIAL.len() + 256;
    let scores = (0..tokens.len()).map(|i| {
        if i < words {
            0.0f32
        } else {
            -((i - words) as f32) - 1.0
        }
    });
    let types = (0..tokens.len()).map(|i| match i {
        0 => 2i32,
        1..=3 => 3,
        _ if i < words => 6,
        _ => 1,
    });
    let tokens = tokens.iter().map(String::as_str);
    vocabulary(b, "plamo2", tokens, Some(scores.collect()), types);
    b.kv("tokenizer.ggml.unknown_token_id", 0u32)
        .kv("tokenizer.ggml.bos_token_id", 1u32)
        .kv("tokenizer.ggml.eos_token_id", 2u32)
        .kv("tokenizer.ggml.padding_token_id", 3u32);
}

/// `tokenizer.ggml.model`, then `.tokens`, `.scores` (when given) and `.token_type`, in the
/// order the converters write them.
fn vocabulary<'t>(
    b: &mut GgufBuilder<'_>,
    model: &str,
    tokens: impl IntoIterator<Item = &'t str>,
    scores: Option<Vec<f32>>,
    types: impl IntoIterator<Item = i32>,
) {
    b.kv("tokenizer.ggml.model", model).kv(
        "tokenizer.ggml.tokens",
        OwnedValue::array(ValueType::String, tokens),
    );
    if let Some(scores) = scores {
        b.kv(
            "tokenizer.ggml.scores",
            OwnedValue::array(ValueType::F32, scores),
        );
    }
    b.kv(
        "tokenizer.ggml.token_type",
        OwnedValue::array(ValueType::I32, types),
    );
}

/// `minimal-llama`'s 265 tokens: `<unk>`, `<s>`, `</s>`, the 256 byte tokens llama.cpp's
/// SentencePiece tokenizer falls back to (and finds the newline in), then the words.
fn spm_tokens() -> Vec<String> {
    const WORDS: [&str; 6] = ["▁", "▁the", "▁a", "▁model", "s", "."];
    let bytes = (0..=255u8).map(|b| format!("<0x{b:02X}>"));
    ["<unk>", "<s>", "</s>"]
        .into_iter()
        .map(String::from)
        .chain(bytes)
        .chain(WORDS.into_iter().map(String::from))
        .collect()
}

/// `minimal-llama`'s tokens, scores and types as key/values.
fn spm_vocabulary(b: &mut GgufBuilder<'_>, tokens: &[String]) {
    let scores = (0..tokens.len()).map(|i| match i {
        0..=258 => 0.0f32,
        _ => 258.0 - i as f32,
    });
    let types = (0..tokens.len()).map(|i| match i {
        0 => 2i32,
        1 | 2 => 3,
        3..=258 => 6,
        _ => 1,
    });
    let tokens = tokens.iter().map(String::as_str);
    vocabulary(b, "llama", tokens, Some(scores.collect()), types);
    b.kv("tokenizer.ggml.bos_token_id", 1u32)
        .kv("tokenizer.ggml.eos_token_id", 2u32);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_unpack_as_ggml_reads_them() {
        // get_scale_min_k4 from ggml-quants.c
        let q = pack_scales_mins([1, 2, 3, 63, 17, 6, 40, 8], [8, 9, 10, 11, 12, 33, 14, 63]);
        let unpack = |j: usize| {
            if j < 4 {
                (q[j] & 63, q[j + 4] & 63)
            } else {
                (
                    (q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4),
                    (q[j + 4] >> 4) | ((q[j] >> 6) << 4),
                )
            }
        };
        let got: Vec<_> = (0..8).map(unpack).collect();
        assert_eq!(
            got,
            [
                (1, 8),
                (2, 9),
                (3, 10),
                (63, 11),
                (17, 12),
                (6, 33),
                (40, 14),
                (8, 63)
            ]
        );
    }

    #[test]
    fn every_tiny_model_passes_the_schema() {
        for arch in arch_names() {
            let bytes = tiny_model(arch).unwrap();
            let gguf = Gguf::parse(&bytes).unwrap();
            let found = gguf_llama::schema::check_model(&gguf);
            assert!(found.is_empty(), "{arch}: {found:?}");
        }
    }

    /// deepseek2 without `key_length_mla`/`value_length_mla` takes the fused `attn_kv_b`
    /// (llama.cpp's `is_mla` switch), and gemma3n needs its 20 KV-cache blocks.
    #[test]
    fn key_conditions_and_minimum_blocks() {
        let bytes = tiny_model("deepseek2").unwrap();
        let gguf = Gguf::parse(&bytes).unwrap();
        let mut b = GgufBuilder::from_gguf(&gguf);
        b.remove("deepseek2.attention.key_length_mla");
        let bytes = b.build().unwrap();
        let found = gguf_llama::schema::check_model(&Gguf::parse(&bytes).unwrap());
        let codes: Vec<(Code, String)> =
            found.iter().map(|d| (d.code, d.path.to_string())).collect();
        let has =
            |code: Code, name: &str| codes.iter().any(|(c, p)| *c == code && p.contains(name));
        assert!(
            has(
                gguf_llama::codes::SCHEMA_TENSOR_UNEXPECTED,
                "blk.0.attn_k_b.weight"
            ),
            "{codes:?}"
        );
        assert!(
            has(
                gguf_llama::codes::SCHEMA_TENSOR_UNEXPECTED,
                "blk.0.attn_v_b.weight"
            ),
            "{codes:?}"
        );
        assert!(
            has(
                gguf_llama::codes::SCHEMA_TENSOR_MISSING,
                "blk.0.attn_kv_b.weight"
            ),
            "{codes:?}"
        );

        let bytes = tiny_model("gemma3n").unwrap();
        let gguf = Gguf::parse(&bytes).unwrap();
        let mut b = GgufBuilder::from_gguf(&gguf);
        b.set("gemma3n.block_count", 19u32);
        let bytes = b.build().unwrap();
        let found = gguf_llama::schema::check_model(&Gguf::parse(&bytes).unwrap());
        let block_count: Vec<&Diagnostic> = found
            .iter()
            .filter(|d| d.code == gguf_llama::codes::SCHEMA_BLOCK_COUNT)
            .collect();
        assert_eq!(block_count.len(), 1, "{found:?}");
        assert!(block_count[0].message.contains("minimum of 20"));
    }

    /// plamo2's loader sizes attention heads by `ssm.inner_size / ssm.time_step_rank`, its
    /// graph by `attention.key_length` and `value_length`: llama.cpp 0.3.16 aborts
    /// (GGML_ASSERT in ggml_can_repeat / ggml_can_mul_mat) building the context when either
    /// differs, so the schema reports it.
    #[test]
    fn plamo2_head_size_follows_the_mixer() {
        let bytes = tiny_model("plamo2").unwrap();
        let gguf = Gguf::parse(&bytes).unwrap();
        for key in [
            "plamo2.attention.key_length",
            "plamo2.attention.value_length",
        ] {
            let mut b = GgufBuilder::from_gguf(&gguf);
            b.set(key, 8u32);
            let bytes = b.build().unwrap();
            let found = gguf_llama::schema::check_model(&Gguf::parse(&bytes).unwrap());
            let head: Vec<&Diagnostic> = found
                .iter()
                .filter(|d| d.code == gguf_llama::codes::SCHEMA_HEAD_COUNT)
                .collect();
            assert_eq!(head.len(), 1, "{key}: {found:?}");
            assert!(head[0].path.to_string().contains(key), "{head:?}");
        }
    }

    #[test]
    fn pattern_covers_every_code() {
        let codes: std::collections::HashSet<i8> = (0..255).map(|i| code(0, i)).collect();
        assert_eq!(codes.len(), 255);
        assert!(codes.contains(&-127) && codes.contains(&127));
    }
}
