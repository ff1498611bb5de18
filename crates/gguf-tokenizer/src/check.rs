//! What tokenization reveals about a vocabulary (`gguf check --profile llama.cpp`): merges
//! that name no tokens, byte tokens a vocabulary needs and lacks or cannot decode, and
//! special-token ids that decode as text. Each rule cites what the release of llama.cpp
//! checked against does (the newest unless another is asked for).

use crate::codes;
use gguf_grammar::error::Segment;
use gguf_grammar::validate::{At, Diagnostic, Diagnostics};
use gguf_grammar::Gguf;
use gguf_llama::loader::Load;
use gguf_llama::Release;

use crate::{attr, unicode, Error, Kind, Tokenizer};

/// The special-token id keys of llama.cpp's vocab loader.
const SPECIAL_IDS: &[&str] = &[
    "bos",
    "eos",
    "eot",
    "eom",
    "unknown",
    "seperator",
    "padding",
    "mask",
    "fim_pre",
    "fim_suf",
    "fim_mid",
    "fim_pad",
    "fim_rep",
    "fim_sep",
];

/// The diagnostics of `gguf check --profile llama.cpp` (the CLI's, the Python package's and
/// the inspector's): llama.cpp's loader rules ([`gguf_llama::loader::check`]) and the
/// vocabulary's ([`check`]).
pub fn llama_cpp(g: &Gguf<'_>, file_len: u64) -> Vec<Diagnostic> {
    llama_cpp_in(g, file_len, Release::NEWEST, Load::Model)
}

/// [`llama_cpp`] for llama.cpp `release` loading as `load` (`--profile llama.cpp-0.3.16`,
/// `--vocab-only`, `gguf check --releases`).
pub fn llama_cpp_in(g: &Gguf<'_>, file_len: u64, release: Release, load: Load) -> Vec<Diagnostic> {
    let mut found = gguf_llama::loader::check_in(g, file_len, release, load);
    found.extend(check_in(g, release));
    found
}

/// What one llama.cpp release does with a file: a row of `gguf check --releases`, of the
/// inspector and of the Python package's `Document.releases()`.
#[derive(Clone, Debug)]
pub struct ReleaseVerdict {
    /// The release.
    pub release: Release,
    /// It loads the file: the whole model, or with `vocab_only` when [`Self::vocab_only`].
    pub loads: bool,
    /// The file has no tensors: judged as llama.cpp loads it with `vocab_only`.
    pub vocab_only: bool,
    /// The first diagnostic that rejects, when it does not load.
    pub reason: Option<Diagnostic>,
}

/// Every release we hold judging `g` ([`llama_cpp_in`]), newest first. A file without tensors
/// is judged as llama.cpp loads it with `vocab_only`.
///
/// ```
/// use gguf_grammar::Gguf;
///
/// let bytes = std::fs::read("../../tests/bundled/minimal-llama.gguf").unwrap();
/// let gguf = Gguf::parse(&bytes).unwrap();
/// let rows = gguf_tokenizer::check::releases(&gguf, bytes.len() as u64);
/// assert!(rows.iter().all(|r| r.loads && r.reason.is_none()));
/// assert_eq!(rows[0].release, gguf_tokenizer::Release::NEWEST);
/// ```
pub fn releases(g: &Gguf<'_>, file_len: u64) -> Vec<ReleaseVerdict> {
    let vocab_only = g.tensors.is_empty();
    let load = if vocab_only {
        Load::VocabOnly
    } else {
        Load::Model
    };
    Release::ALL
        .iter()
        .rev()
        .map(|&release| {
            let refusing: Vec<Diagnostic> = llama_cpp_in(g, file_len, release, load)
                .into_iter()
                .filter(|d| !gguf_llama::loader::accepts_in(std::slice::from_ref(d), release))
                .collect();
            // llama.cpp reads the container, then the architecture, then the rest.
            let reason = [
                |d: &Diagnostic| !d.rejected_by.is_empty(),
                |d: &Diagnostic| d.code == "schema-architecture-unsupported",
                |_: &Diagnostic| true,
            ]
            .into_iter()
            .find_map(|first| refusing.iter().find(|&d| first(d)).cloned());
            ReleaseVerdict {
                release,
                loads: reason.is_none(),
                vocab_only,
                reason,
            }
        })
        .collect()
}

/// The rows of a file that does not parse (`why`): no release reads it.
pub fn releases_unparsed(why: &Diagnostic) -> Vec<ReleaseVerdict> {
    Release::ALL
        .iter()
        .rev()
        .map(|&release| ReleaseVerdict {
            release,
            loads: false,
            vocab_only: false,
            reason: Some(why.clone()),
        })
        .collect()
}

impl ReleaseVerdict {
    /// `loads`, `loads the vocabulary (vocab_only; no tensors)` or `does not load`.
    pub fn verdict(&self) -> &'static str {
        match (self.loads, self.vocab_only) {
            (true, false) => "loads",
            (true, true) => "loads the vocabulary (vocab_only; no tensors)",
            (false, _) => "does not load",
        }
    }

    /// `{"release", "profile", "models", "loads", "vocab_only", "reason": {"code", "offset",
    /// "path", "message"} | null}`.
    pub fn json(&self) -> serde_json::Value {
        let reason = self.reason.as_ref().map(|d| {
            serde_json::json!({
                "code": d.code.name(),
                "offset": d.span.as_ref().map_or(0, |s| s.start),
                "path": d.path.to_string(),
                "message": d.message,
            })
        });
        serde_json::json!({
            "release": self.release.version(),
            "profile": gguf_llama::loader::profile_name(self.release),
            "models": gguf_llama::loader::models(self.release),
            "loads": self.loads,
            "vocab_only": self.vocab_only,
            "reason": reason,
        })
    }
}

/// The model diagnostics `gguf check --schema` adds to a container profile's: the schema's
/// ([`gguf_llama::schema::check_model`]) and the vocabulary's ([`check`]).
pub fn model(g: &Gguf<'_>) -> Vec<Diagnostic> {
    let mut found = gguf_llama::schema::check_model(g);
    found.extend(check(g));
    found
}

/// The tokenizer diagnostics of a file. Nothing when no tokenizer can be built from it: the
/// schema's codes (`schema-tokenizer-model`, `schema-token-count`, ...) say why.
pub fn check(g: &Gguf<'_>) -> Vec<Diagnostic> {
    check_in(g, Release::NEWEST)
}

/// [`check`] as llama.cpp `release` builds and uses the vocabulary.
pub fn check_in(g: &Gguf<'_>, release: Release) -> Vec<Diagnostic> {
    let mut out = Diagnostics::default();
    match Tokenizer::from_gguf_release(g, release) {
        Ok(tok) => {
            // A BPE vocabulary without the byte alphabet (gemma4's) needs none of its
            // characters.
            if tok.kind == Kind::Bpe && !tok.byte_tokens_hex {
                merges(g, &tok, &mut out);
                byte_alphabet(g, &tok, &mut out);
            }
            byte_tokens(g, &tok, &mut out);
            special_types(g, &tok, &mut out);
        }
        Err(Error::Limit(why)) => {
            let at = kv_index(g, "tokenizer.ggml.tokens").map_or(At::bytes(0..0), |i| At::kv(g, i));
            out.report(
                codes::TOKENIZER_LIMIT,
                at,
                format!("the vocabulary was not checked: {why}"),
            );
        }
        // The schema's codes (`schema-tokenizer-model`, `schema-token-count`, ...) say why.
        Err(_) => {}
    }
    out.finish()
}

fn kv_index(g: &Gguf<'_>, key: &str) -> Option<usize> {
    g.kvs
        .iter()
        .position(|kv| kv.key.as_bytes() == key.as_bytes())
}

/// At element `i` of the array `key`, spanning `bytes` (a slice of the file) when known.
fn element(g: &Gguf<'_>, key: &str, i: usize, bytes: Option<&[u8]>) -> At {
    let Some(k) = kv_index(g, key) else {
        return At::bytes(0..0);
    };
    let at = At::kv(g, k).then(Segment::Element(i as u64));
    match bytes.and_then(|b| Some((g.offset_of(b)?, b.len() as u64))) {
        Some((start, n)) => at.spanning(Some(start..start + n)),
        None => at,
    }
}

fn more(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => " (1 more follows)".into(),
        n => format!(" ({n} more follow)"),
    }
}

/// `tokenizer-merge-unknown`: llama.cpp splits each merge at its first space after the
/// first byte (no space: both sides empty) and ranks pairs of texts, never checking them
/// against the tokens. A merge whose result is not a token yields, wherever it applies, the
/// single-byte tokens of the result's bytes (those that exist), not one token. (A side that
/// is no token is harmless: it applies only if the side arises, and then yields a token.)
fn merges(g: &Gguf<'_>, tok: &Tokenizer, out: &mut Diagnostics) {
    let key = "tokenizer.ggml.merges";
    let Some(merges) = g.get_array(key).ok().and_then(|a| a.strings()) else {
        return;
    };
    let mut bad = merges.enumerate().filter_map(|(i, m)| {
        let w = m.as_bytes();
        let Some(p) = w.iter().skip(1).position(|&b| b == b' ') else {
            return Some((i, w, "has no space between two sides".to_string()));
        };
        let (first, second) = (&w[..p + 1], &w[p + 2..]);
        let what = if tok.text_to_token(&[first, second].concat()).is_none() {
            "joins to a text that is no token: where it applies llama.cpp emits the single-byte tokens of its bytes instead"
        } else {
            return None;
        };
        Some((i, w, what.to_string()))
    });
    if let Some((i, w, what)) = bad.next() {
        let rest = bad.count();
        out.report(
            codes::TOKENIZER_MERGE_UNKNOWN,
            element(g, key, i, Some(w)),
            format!(
                "merge {:?} {what}{}",
                String::from_utf8_lossy(w),
                more(rest)
            ),
        );
    }
}

/// `tokenizer-byte-alphabet`: a byte-level BPE word starts as one symbol per byte (each a
/// character of the GPT-2 byte alphabet); llama.cpp drops a symbol no merge covers and no
/// token spells, so text with that byte loses it.
fn byte_alphabet(g: &Gguf<'_>, tok: &Tokenizer, out: &mut Diagnostics) {
    let mut s = Vec::new();
    // 0xC0, 0xC1 and 0xF5.. occur in no UTF-8 encoding of a code point up to U+10FFFF, and
    // llama.cpp re-encodes the text's code points before merging (past U+10FFFF it throws).
    let needed = |b: u8| !matches!(b, 0xC0 | 0xC1 | 0xF5..=0xFF);
    let missing: Vec<u8> = (0..=255u8)
        .filter(|&b| needed(b))
        .filter(|&b| {
            s.clear();
            unicode::byte_to_utf8(b, &mut s);
            tok.text_to_token(&s).is_none()
        })
        .collect();
    if let Some(&first) = missing.first() {
        let key = "tokenizer.ggml.tokens";
        let at = kv_index(g, key).map_or(At::bytes(0..0), |k| At::kv(g, k));
        s.clear();
        unicode::byte_to_utf8(first, &mut s);
        out.report(
            codes::TOKENIZER_BYTE_ALPHABET,
            at,
            format!(
                "{} of the 243 byte-alphabet tokens UTF-8 text can need are missing (first {:?}, byte 0x{first:02X}): llama.cpp's BPE tokenizer drops such a byte from the ids wherever no merge covers it",
                missing.len(),
                String::from_utf8_lossy(&s)
            ),
        );
    }
}

/// Whether llama.cpp's `token_to_byte` reads a byte from this text: it parses `text[3..5]`
/// with `strtol` (after `substr(3, 2)`, which throws for a text under 3 bytes).
fn byte_text(text: &[u8]) -> bool {
    text.len() == 6
        && text.starts_with(b"<0x")
        && text[5] == b'>'
        && text[3..5].iter().all(u8::is_ascii_hexdigit)
}

/// `tokenizer-byte-token`: llama.cpp caches every token's piece at load. A byte-type token
/// of an SPM or UGM vocabulary decodes to the byte `strtol` reads from its text (a text
/// under 3 bytes throws `std::out_of_range` there); a WPM one aborts (`GGML_ABORT` in
/// `token_to_byte`); a BPE one decodes to nothing.
fn byte_tokens(g: &Gguf<'_>, tok: &Tokenizer, out: &mut Diagnostics) {
    // 0.3.16 decodes no BPE byte token; 0.3.36 reads `<0xXX>` as SPM does.
    let bpe_reads_hex = tok.release != Release::LlamaCppPython0316;
    let mut bad = tok.tokens.iter().enumerate().filter(|(_, t)| {
        t.attr & attr::BYTE != 0
            && match tok.kind {
                Kind::Spm | Kind::Ugm => !byte_text(&t.text),
                Kind::Bpe if bpe_reads_hex => !byte_text(&t.text),
                Kind::Wpm | Kind::Bpe => true,
                Kind::Rwkv | Kind::Plamo2 => false,
            }
    });
    let Some((i, t)) = bad.next() else { return };
    let rest = bad.count();
    let what = match tok.kind {
        Kind::Wpm => "a WPM vocabulary has no byte tokens: llama.cpp aborts loading it (GGML_ABORT in token_to_byte)".to_string(),
        Kind::Bpe if !bpe_reads_hex => "a BPE vocabulary has no byte tokens: llama.cpp decodes it to nothing".to_string(),
        _ if t.text.len() < 3 => "its text is not <0xXX>: llama.cpp throws std::out_of_range loading it (token_to_byte's substr)".to_string(),
        _ => format!(
            "its text is not <0xXX>: llama.cpp decodes it to byte 0x{:02X}",
            crate::strtol_hex(&t.text[3..t.text.len().min(5)])
        ),
    };
    let key = "tokenizer.ggml.token_type";
    out.report(
        codes::TOKENIZER_BYTE_TOKEN,
        element(g, key, i, None),
        format!(
            "token {i} {:?} is of type byte but {what}{}",
            String::from_utf8_lossy(&t.text),
            more(rest)
        ),
    );
}

/// `tokenizer-special-type`: a special-token id whose token (after llama.cpp's own
/// overrides at load) is not a control, user-defined or unknown token: `llama_detokenize`
/// prints its text even without `special`, and `parse_special` never finds it in a text.
fn special_types(g: &Gguf<'_>, tok: &Tokenizer, out: &mut Diagnostics) {
    let special = attr::CONTROL | attr::USER_DEFINED | attr::UNKNOWN;
    for name in SPECIAL_IDS {
        let key = format!("tokenizer.ggml.{name}_token_id");
        let Ok(id) = g.get_u64(&key) else { continue };
        let Some(t) = usize::try_from(id).ok().and_then(|i| tok.tokens.get(i)) else {
            continue; // schema-special-token
        };
        if t.attr & special != 0 {
            continue;
        }
        let ty = match t.attr & !(attr::LSTRIP | attr::RSTRIP) {
            attr::NORMAL => "normal",
            attr::BYTE => "byte",
            attr::UNUSED => "unused",
            _ => "undefined",
        };
        let at = kv_index(g, &key).map_or(At::bytes(0..0), |k| At::kv(g, k));
        out.report(
            codes::TOKENIZER_SPECIAL_TYPE,
            at,
            format!(
                "token {id} {:?} is a {ty} token, not a control one: llama.cpp decodes it as the text {:?} and never matches it in a text",
                String::from_utf8_lossy(&t.text),
                String::from_utf8_lossy(tok.token_to_piece(id as u32, false)),
            ),
        );
    }
}
