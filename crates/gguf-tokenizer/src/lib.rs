//! A tokenizer built from a GGUF file's `tokenizer.ggml.*` keys, giving the token ids that
//! llama.cpp gives, as one [`Release`] of it (vendored by llama-cpp-python 0.3.16 or 0.3.36)
//! does: its SPM (`llama`), BPE (`gpt2`, with every `tokenizer.ggml.pre` pre-tokenizer of the
//! release; 0.3.36's `gemma4`, `whitespace` and `hybriddna`), WPM (`bert`), UGM (`t5`), RWKV
//! (`rwkv`) and PLaMo-2 (`plamo2`) tokenizers, special-token parsing, `token_to_piece` and
//! `detokenize`.
//!
//! ```no_run
//! use gguf_tokenizer::{Release, Tokenizer};
//! let model = gguf_grammar::OwnedGguf::open("model.gguf")?;
//! let tok = Tokenizer::from_gguf_release(model.gguf(), Release::LlamaCppPython0316)?;
//! let ids = tok.encode(b"Hello world", true, true)?;
//! assert_eq!(tok.decode(&ids, false, true), b"Hello world");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod pre;
mod unicode;
#[rustfmt::skip]
mod unicode_data;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

use gguf_grammar::{GetError, Gguf};
use gguf_llama::schema::{forced_pre_tokenizer, loads_tokenizer_model, pre_tokenizer, PreSettings};

pub use gguf_grammar;
pub use gguf_llama::Release;

/// A token id, as llama.cpp's `llama_token`.
pub type TokenId = u32;

/// Token attributes (`llama_token_attr`).
pub mod attr {
    /// `LLAMA_TOKEN_ATTR_UNKNOWN`.
    pub const UNKNOWN: u32 = 1 << 0;
    /// `LLAMA_TOKEN_ATTR_UNUSED`.
    pub const UNUSED: u32 = 1 << 1;
    /// `LLAMA_TOKEN_ATTR_NORMAL`.
    pub const NORMAL: u32 = 1 << 2;
    /// `LLAMA_TOKEN_ATTR_CONTROL`.
    pub const CONTROL: u32 = 1 << 3;
    /// `LLAMA_TOKEN_ATTR_USER_DEFINED`.
    pub const USER_DEFINED: u32 = 1 << 4;
    /// `LLAMA_TOKEN_ATTR_BYTE`.
    pub const BYTE: u32 = 1 << 5;
    /// `LLAMA_TOKEN_ATTR_LSTRIP`.
    pub const LSTRIP: u32 = 1 << 7;
    /// `LLAMA_TOKEN_ATTR_RSTRIP`.
    pub const RSTRIP: u32 = 1 << 8;
}

/// Why a tokenizer could not be built, or a text not tokenized.
#[derive(Debug)]
pub enum Error {
    /// A key is missing or has the wrong type.
    Key(GetError),
    /// A key's value is unusable; the message names it.
    Invalid(String),
    /// `tokenizer.ggml.model` is not one the release supports (the message names the release
    /// and any other that knows it).
    UnknownModel(String),
    /// `tokenizer.ggml.pre` is not one the release supports (as for `UnknownModel`).
    UnknownPre(String),
    /// A pre-tokenizer expression did not compile.
    Regex(String),
    /// llama.cpp throws (or aborts) on this input; the message says where.
    Unsupported(String),
    /// The input exceeds one of this crate's bounds (llama.cpp would go on, in time or memory
    /// out of proportion to the input); the message names the bound and how to raise it.
    Limit(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Key(e) => write!(f, "{e}"),
            Error::Invalid(m) => write!(f, "{m}"),
            Error::UnknownModel(m) => write!(f, "unknown tokenizer: {m}"),
            Error::UnknownPre(m) => write!(f, "unknown pre-tokenizer type: {m}"),
            Error::Regex(m) => write!(f, "pre-tokenizer expression: {m}"),
            Error::Unsupported(m) | Error::Limit(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<GetError> for Error {
    fn from(e: GetError) -> Error {
        Error::Key(e)
    }
}

/// FNV-1a: the token maps are hashed on every merge step; SipHash costs more than the
/// merge itself. Keys come from the model file, not from an adversary choosing collisions
/// at run time.
#[derive(Default, Clone, Copy)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
    fn write_u32(&mut self, n: u32) {
        self.write(&n.to_le_bytes());
    }
    fn write_u64(&mut self, n: u64) {
        self.write(&n.to_le_bytes());
    }
    fn write_usize(&mut self, n: usize) {
        self.write(&n.to_le_bytes());
    }
}

type Map<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;

/// The work `encode` may do per byte of text, in steps of its inner loops (trie and table
/// steps, special-token matches): every tokenizer does a few per byte on real vocabularies,
/// while a hostile one (a 100 KB token, a word that matches a long token's prefix at every
/// position) would need a number proportional to the text times the token. Past
/// `WORK_BASE + WORK_PER_BYTE × text length` the text is refused with [`Error::Limit`];
/// [`Tokenizer::set_work_per_byte`] raises it.
pub const WORK_PER_BYTE: u64 = 256;

/// The longest text `encode` takes (1 GiB): the pre-tokenizer's haystacks and SPM's symbols
/// index it with 32 bits (a code point takes up to four bytes in one, a space three in the
/// other), which keeps their memory per byte small.
pub const MAX_TEXT_BYTES: usize = (u32::MAX / 4) as usize;

/// The work allowed to every text, however short (see [`WORK_PER_BYTE`]).
pub const WORK_BASE: u64 = 1 << 22;

/// The bytes all tokens' pieces (`token_to_piece`, cached at load as llama.cpp caches them)
/// may take beyond [`PIECES_PER_TEXT_BYTE`] per byte of the tokens' texts. A BPE token's code
/// point outside the byte alphabet decodes to `[UNK_BYTE_0x…` + the whole text + `]`, so one
/// 60 KB token would take 1.2 GB; past this bound the vocabulary is refused.
pub const PIECES_BASE: u64 = 1 << 24;

/// See [`PIECES_BASE`].
pub const PIECES_PER_TEXT_BYTE: u64 = 4;

/// What is left of one `encode`'s work allowance.
pub(crate) struct Budget {
    left: u64,
    per_byte: u64,
}

impl Budget {
    fn for_text(len: usize, per_byte: u64) -> Budget {
        Budget {
            left: (len as u64)
                .saturating_mul(per_byte)
                .saturating_add(WORK_BASE),
            per_byte,
        }
    }

    #[inline]
    pub(crate) fn charge(&mut self, steps: u64) -> Result<(), Error> {
        match self.left.checked_sub(steps) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(Error::Limit(format!(
                "tokenizing this text takes more than {} steps per byte (plus {WORK_BASE}): the \
                 vocabulary makes the work grow faster than the text (gguf_tokenizer::WORK_PER_BYTE; \
                 raise it with --work-per-byte)",
                self.per_byte
            ))),
        }
    }
}

/// The vocabulary type (`llama_vocab_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `llama`: SentencePiece BPE with byte fallback.
    Spm,
    /// `gpt2`: byte-level BPE with merges.
    Bpe,
    /// `bert`: WordPiece.
    Wpm,
    /// `t5`: Unigram.
    Ugm,
    /// `rwkv`: greedy longest match on unescaped bytes.
    Rwkv,
    /// `plamo2`: Viterbi over token scores with byte fallback (PLaMo 2).
    Plamo2,
}

/// One vocabulary entry.
#[derive(Clone, Debug)]
pub struct Token {
    /// The text as stored (an empty one becomes `[EMPTY_i]`, as in llama.cpp).
    pub text: Vec<u8>,
    /// `tokenizer.ggml.scores[i]`, or 0.
    pub score: f32,
    /// [`attr`] bits.
    pub attr: u32,
}

/// How a BPE vocabulary's text reaches the merges (`llm_tokenizer_bpe_session` and the
/// sessions 0.3.36 derives from it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BpeSession {
    Plain,
    /// `whitespace`: words between whitespace, each lowercased if the normalizer says so.
    Whitespace,
    /// `hybriddna`: `<dna>...</dna>` spans as 6-mers, the rest plain.
    HybridDna,
}

/// A tokenizer built from a GGUF vocabulary.
#[derive(Debug)]
pub struct Tokenizer {
    release: Release,
    kind: Kind,
    bpe_session: BpeSession,
    /// 0.3.36's gemma4 pre-tokenizer: a word of newlines only is looked up whole.
    newline_words: bool,
    /// A byte with no token of its own falls back to the `<0xXX>` token (BPE without the
    /// byte alphabet), not to the byte's text.
    byte_tokens_hex: bool,
    /// `normalizer_opts` (0.3.36; 0.3.16's WPM always lowercases and never strips marks).
    lowercase: bool,
    strip_accents: bool,
    /// WPM decomposes each code point first (0.3.36: when it strips accents).
    nfd: bool,
    pre: String,
    tokens: Vec<Token>,
    token_to_id: Map<Vec<u8>, TokenId>,
    /// BPE merges: (left id, right id) -> rank, over ids of `merge_ids`.
    ranks: Map<(u32, u32), u32>,
    /// Every token text and merge side, interned for `ranks`.
    merge_ids: Map<Vec<u8>, u32>,
    pre_tokenizer: Option<pre::PreTokenizer>,
    special_tokens: Vec<TokenId>,
    /// All of `special_tokens`' texts, searched at once (built on first use).
    special_finder: OnceLock<Option<AhoCorasick>>,
    pieces: Vec<Vec<u8>>,
    bos: Option<TokenId>,
    eos: Option<TokenId>,
    unk: Option<TokenId>,
    sep: Option<TokenId>,
    add_bos: bool,
    add_eos: bool,
    add_sep: bool,
    add_space_prefix: bool,
    remove_extra_whitespaces: bool,
    ignore_merges: bool,
    clean_spaces: bool,
    escape_whitespaces: bool,
    treat_whitespace_as_suffix: bool,
    ugm: Option<ugm::Ugm>,
    rwkv: Option<rwkv::Rwkv>,
    plamo2: Option<plamo2::Plamo2>,
    /// WPM: every token's text, for the longest match.
    wpm: Option<ugm::Trie>,
    work_per_byte: u64,
}

mod bpe;
#[cfg(feature = "check")]
pub mod check;
pub mod codes;
mod plamo2;
mod rwkv;
mod spm;
mod ugm;
mod wpm;

fn opt<T>(r: Result<T, GetError>) -> Result<Option<T>, Error> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(GetError::Missing { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// llama.cpp `release`'s settings for `tokenizer.ggml.pre` = `pre` (an empty name is
/// `default`).
fn pre_settings(release: Release, pre: &str) -> Option<PreSettings> {
    let pre = if pre.is_empty() { "default" } else { pre };
    pre_tokenizer(release, pre).map(|p| p.settings)
}

/// The message of an unknown name: the release, and the others that know it.
fn unknown(name: &str, release: Release, known: impl Fn(Release) -> bool) -> String {
    let others: Vec<&str> = Release::ALL
        .iter()
        .filter(|&&r| known(r))
        .map(|r| r.version())
        .collect();
    let mut m = format!("'{}' ({})", name.escape_debug(), release.name());
    if !others.is_empty() {
        m.push_str(&format!(
            "; known to llama-cpp-python {}",
            others.join(", ")
        ));
    }
    m
}

const EOT_TEXTS: &[&str] = &[
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "<EOT>",
    "_<EOT>",
    "<｜end▁of▁sentence｜>",
    "<end_of_utterance>",
];
/// The texts 0.3.36 added to [`EOT_TEXTS`].
const EOT_TEXTS_0336: &[&str] = &["<|end_of_text|>", "[EOT]"];
const EOG_TEXTS: &[&str] = &[
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "<|end_of_text|>",
    "<end_of_utterance>",
];
/// The texts 0.3.36 added to [`EOG_TEXTS`].
const EOG_TEXTS_0336: &[&str] = &[
    "<|flush|>",
    "<|calls|>",
    "</s>",
    "[EOT]",
    "[EOS]",
    "<eos>",
    "<turn|>",
    "<|tool_response>",
    "<｜end▁of▁sentence｜>",
    "[e~[",
];
/// The FIM token texts llama.cpp recognises, one list per FIM id key, then the texts 0.3.36
/// added to it.
const FIM_TEXTS: &[(&str, &str, &[&str], &[&str])] = &[
    (
        "fim_pre",
        "prefix",
        &[
            "<|fim_prefix|>",
            "<fim-prefix>",
            "<fim_prefix>",
            "<｜fim▁begin｜>",
            "<PRE>",
            "▁<PRE>",
            "<|code_prefix|>",
        ],
        &["<|prefix|>"],
    ),
    (
        "fim_suf",
        "suffix",
        &[
            "<|fim_suffix|>",
            "<fim-suffix>",
            "<fim_suffix>",
            "<｜fim▁hole｜>",
            "<SUF>",
            "▁<SUF>",
            "<|code_suffix|>",
        ],
        &["<|suffix|>"],
    ),
    (
        "fim_mid",
        "middle",
        &[
            "<|fim_middle|>",
            "<fim-middle>",
            "<fim_middle>",
            "<｜fim▁end｜>",
            "<MID>",
            "▁<MID>",
            "<|code_middle|>",
        ],
        &["<|middle|>"],
    ),
    (
        "fim_pad",
        "",
        &["<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>"],
        &["[PAD]"],
    ),
    (
        "fim_rep",
        "",
        &[
            "<|fim_repo|>",
            "<|repo_name|>",
            "<fim-repo>",
            "<REPO>",
            "<reponame>",
        ],
        &[],
    ),
    ("fim_sep", "", &["<|file_sep|>"], &[]),
];

/// A list of texts as `release` has it: `base`, plus `added` since 0.3.36.
fn texts_of<'a>(release: Release, base: &[&'a str], added: &[&'a str]) -> Vec<&'a str> {
    let mut v = base.to_vec();
    if release != Release::LlamaCppPython0316 {
        v.extend_from_slice(added);
    }
    v
}

impl Tokenizer {
    /// Builds the tokenizer from a parsed GGUF file as the newest release
    /// ([`Release::NEWEST`]) of llama.cpp's `llama_vocab::load` does.
    pub fn from_gguf(g: &Gguf<'_>) -> Result<Tokenizer, Error> {
        Tokenizer::from_gguf_release(g, Release::NEWEST)
    }

    /// Builds the tokenizer from a parsed GGUF file as llama.cpp `release`'s
    /// `llama_vocab::load` does; it then tokenizes as that release does.
    pub fn from_gguf_release(g: &Gguf<'_>, release: Release) -> Result<Tokenizer, Error> {
        let model = g.get_str("tokenizer.ggml.model")?;
        let pre_name = opt(g.get_str("tokenizer.ggml.pre"))?.unwrap_or("");
        if !loads_tokenizer_model(release, model) {
            return Err(Error::UnknownModel(unknown(model, release, |r| {
                loads_tokenizer_model(r, model)
            })));
        }
        let pre_name = forced_pre_tokenizer(model).unwrap_or(pre_name);
        let (kind, mut bos, mut eos, mut unk, mut sep) = match model {
            "llama" => (Kind::Spm, Some(1), Some(2), Some(0), None),
            "bert" => (Kind::Wpm, Some(101), None, Some(100), Some(102)),
            "gpt2" | "hybriddna" | "whitespace" => (Kind::Bpe, Some(11), Some(11), None, None),
            "gemma4" => (Kind::Bpe, None, None, None, None),
            "t5" => (Kind::Ugm, None, Some(1), Some(2), None),
            "rwkv" => (Kind::Rwkv, None, None, None, None),
            "plamo2" => (Kind::Plamo2, Some(1), Some(2), Some(0), None),
            other => return Err(Error::UnknownModel(unknown(other, release, |_| false))),
        };
        let bpe_session = match model {
            "whitespace" => BpeSession::Whitespace,
            "hybriddna" => BpeSession::HybridDna,
            _ => BpeSession::Plain,
        };
        let mut add_space_prefix = false;
        let (mut add_bos, mut add_eos, mut add_sep) = (false, false, kind == Kind::Wpm);
        let mut ignore_merges = false;
        let mut clean_spaces = false;
        let mut pre = String::new();
        let mut byte_encode = true;
        let mut escape_whitespaces = true;
        let mut lowercase = true;
        match kind {
            Kind::Bpe => {
                let p = pre_settings(release, pre_name).ok_or_else(|| {
                    let name = if pre_name.is_empty() {
                        "default"
                    } else {
                        pre_name
                    };
                    Error::UnknownPre(unknown(pre_name, release, |r| {
                        pre_tokenizer(r, name).is_some()
                    }))
                })?;
                ignore_merges = p.ignore_merges;
                add_bos = p.add_bos;
                clean_spaces = p.clean_spaces;
                add_sep |= p.add_sep;
                if p.no_bos_id {
                    bos = None;
                }
                pre = p.expressions.to_string();
                byte_encode = p.byte_encode;
                escape_whitespaces = p.escape_whitespaces;
                lowercase = p.lowercase;
            }
            Kind::Spm => {
                add_space_prefix = true;
                add_bos = true;
            }
            Kind::Wpm => {
                clean_spaces = true;
                add_bos = true;
                add_sep = true;
            }
            Kind::Ugm => add_eos = true,
            Kind::Rwkv | Kind::Plamo2 => {}
        }
        if let Some(v) = opt(g.get_bool("tokenizer.ggml.add_space_prefix"))? {
            add_space_prefix = v;
        }
        let remove_extra_whitespaces =
            opt(g.get_bool("tokenizer.ggml.remove_extra_whitespaces"))?.unwrap_or(false);

        let list = g.get_array("tokenizer.ggml.tokens")?;
        let texts = list
            .strings()
            .ok_or_else(|| Error::Invalid("tokenizer.ggml.tokens: not a string array".into()))?;
        let n = list.len();
        // i32 scores: 0.3.36 converts them to floats; 0.3.16 reads their bits as floats
        // (negative ones are NaNs, which its SPM queue orders as the C++ library happens to).
        let scores: Option<Vec<f32>> = match opt(g.get_array("tokenizer.ggml.scores"))? {
            Some(a) => Some(match (a.to_vec::<f32>(), a.to_vec::<i32>()) {
                (Some(f), _) => f,
                (None, Some(i)) if release != Release::LlamaCppPython0316 => {
                    i.into_iter().map(|i| i as f32).collect()
                }
                (None, Some(_)) => {
                    return Err(Error::Unsupported(
                        "tokenizer.ggml.scores: i32 scores, whose bits llama.cpp 0.3.16 reads \
                         as floats (NaN scores)"
                            .into(),
                    ))
                }
                _ => {
                    return Err(Error::Invalid(
                        "tokenizer.ggml.scores: not an f32 array".into(),
                    ))
                }
            }),
            None => None,
        };
        let types: Option<Vec<i32>> = match opt(g.get_array("tokenizer.ggml.token_type"))? {
            Some(a) => Some(a.to_vec::<i32>().ok_or_else(|| {
                Error::Invalid("tokenizer.ggml.token_type: not an i32 array".into())
            })?),
            None => None,
        };
        for (key, len) in [
            ("scores", scores.as_ref().map(Vec::len)),
            ("token_type", types.as_ref().map(Vec::len)),
        ] {
            if len.is_some_and(|l| l < n) {
                // llama.cpp reads past the array's end here.
                return Err(Error::Invalid(format!(
                    "tokenizer.ggml.{key}: {} entries for {n} tokens",
                    len.unwrap_or(0)
                )));
            }
        }
        let mut tokens = Vec::with_capacity(n.min(list.raw_elements().len() / 8 + 1));
        let mut token_to_id: Map<Vec<u8>, TokenId> = Map::default();
        for (i, s) in texts.enumerate() {
            let mut text = s.as_bytes().to_vec();
            if text.is_empty() {
                text = format!("[EMPTY_{i}]").into_bytes();
            }
            let attr = match types.as_ref().map(|t| t[i]) {
                None | Some(1) => attr::NORMAL,
                Some(2) => attr::UNKNOWN,
                Some(3) => attr::CONTROL,
                Some(4) => attr::USER_DEFINED,
                Some(5) => attr::UNUSED,
                Some(6) => attr::BYTE,
                Some(_) => 0,
            };
            token_to_id.insert(text.clone(), i as TokenId);
            tokens.push(Token {
                text,
                score: scores.as_ref().map_or(0.0, |s| s[i]),
                attr,
            });
        }
        if token_to_id.len() != tokens.len() {
            return Err(Error::Invalid(
                "tokenizer.ggml.tokens: a token text appears twice (llama.cpp aborts)".into(),
            ));
        }
        // Built before the attributes below change: llama.cpp's init_tokenizer runs here.
        let plamo2 = match kind {
            Kind::Plamo2 => Some(plamo2::Plamo2::new(&tokens)?),
            _ => None,
        };

        let mut merge_ids: Map<Vec<u8>, u32> = Map::default();
        let mut ranks: Map<(u32, u32), u32> = Map::default();
        // 0.3.36 loads a kimi-k2 vocabulary without merges.
        let merges_optional = release != Release::LlamaCppPython0316 && pre_name == "kimi-k2";
        let merges = match g.get_array("tokenizer.ggml.merges") {
            Err(GetError::Missing { .. }) if merges_optional => None,
            Ok(a) if kind == Kind::Bpe => Some(a),
            _ if kind == Kind::Bpe => {
                return Err(Error::Invalid(
                    "cannot find tokenizer merges in model file".into(),
                ))
            }
            _ => None,
        };
        if let Some(merges) = merges {
            let merges = merges.strings().ok_or_else(|| {
                Error::Invalid("tokenizer.ggml.merges: not a string array".into())
            })?;
            for (i, t) in tokens.iter().enumerate() {
                merge_ids.insert(t.text.clone(), i as u32);
            }
            let mut intern = |s: &[u8]| -> u32 {
                if let Some(&id) = merge_ids.get(s) {
                    return id;
                }
                let id = merge_ids.len() as u32;
                merge_ids.insert(s.to_vec(), id);
                id
            };
            for (rank, m) in merges.enumerate() {
                let w = m.as_bytes();
                let (first, second) = match w.iter().skip(1).position(|&b| b == b' ') {
                    Some(p) => (&w[..p + 1], &w[p + 2..]),
                    None => (&w[..0], &w[..0]),
                };
                let key = (intern(first), intern(second));
                ranks.entry(key).or_insert(rank as u32);
            }
        }

        let pre_tokenizer = if kind == Kind::Bpe {
            let exprs = pre::regex_exprs(&pre).ok_or_else(|| Error::UnknownPre(pre.clone()))?;
            Some(pre::PreTokenizer::new(exprs, release, byte_encode)?)
        } else {
            None
        };

        let id_key = |name: &str| -> Result<Option<u64>, Error> {
            opt(g.get_u64(&format!("tokenizer.ggml.{name}_token_id")))
        };
        for (name, slot) in [
            ("bos", &mut bos),
            ("eos", &mut eos),
            ("unknown", &mut unk),
            ("seperator", &mut sep),
        ] {
            if let Some(v) = id_key(name)? {
                if v < n as u64 {
                    *slot = Some(v as TokenId);
                }
            }
        }
        for (key, slot) in [
            ("add_bos_token", &mut add_bos),
            ("add_eos_token", &mut add_eos),
            ("add_sep_token", &mut add_sep),
        ] {
            if let Some(v) = opt(g.get_bool(&format!("tokenizer.ggml.{key}")))? {
                *slot = v;
            }
        }
        let new = release != Release::LlamaCppPython0316;
        // 0.3.36 adds a BOS to every gemma4 text whatever the file says.
        let gemma4 = new && kind == Kind::Bpe && pre == "gemma4";
        add_bos |= gemma4;
        // 0.3.36's BertNormalizer options (0.3.16's WPM lowercases and decomposes, and keeps
        // the marks).
        let (mut strip_accents, mut nfd) = (false, kind == Kind::Wpm);
        if new {
            if let Some(v) = opt(g.get_bool("tokenizer.ggml.normalizer.lowercase"))? {
                lowercase = v;
            }
            strip_accents = lowercase;
            if let Some(v) = opt(g.get_bool("tokenizer.ggml.normalizer.strip_accents"))? {
                strip_accents = v;
            }
            nfd = strip_accents;
        }

        // Tokens llama.cpp recognises by text become control tokens (its load's "auto-detect
        // special tokens by text"). Where several texts of one list exist and the id key is
        // absent, llama.cpp takes the first in its hash map's order; this takes the lowest id.
        let make_control = |texts: &[&str]| {
            let ids: Vec<usize> = texts
                .iter()
                .filter_map(|t| token_to_id.get(t.as_bytes()).map(|&i| i as usize))
                .collect();
            ids
        };
        let mut control = Vec::new();
        let has_key = |name: &str| id_key(name).map(|v| v.is_some_and(|v| v < n as u64));
        let mut eot = id_key("eot")?.filter(|&v| v < n as u64).map(|v| v as usize);
        if eot.is_none() {
            eot = make_control(&texts_of(release, EOT_TEXTS, EOT_TEXTS_0336))
                .into_iter()
                .min();
            control.extend(eot);
        }
        let mut eom = id_key("eom")?.filter(|&v| v < n as u64).map(|v| v as usize);
        if eom.is_none() {
            let found = make_control(&["<|eom_id|>"]);
            eom = found.first().copied();
            control.extend(found);
        }
        for (name, old, base, added) in FIM_TEXTS {
            if !has_key(name)? && !has_key(old)? {
                control.extend(
                    make_control(&texts_of(release, base, added))
                        .into_iter()
                        .min(),
                );
            }
        }
        let eog = make_control(&texts_of(release, EOG_TEXTS, EOG_TEXTS_0336));
        control.extend(&eog);
        for &i in &control {
            tokens[i].attr |= attr::CONTROL;
        }
        for t in ["<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"] {
            if let Some(&i) = token_to_id.get(t.as_bytes()) {
                tokens[i as usize].attr = attr::USER_DEFINED;
            }
        }
        let end = |t: &str| token_to_id.get(t.as_bytes()).copied();
        let harmony = end("<|return|>").is_some() && end("<|call|>").is_some();
        // 0.3.36: solar-open's "<|calls|>" and "<|flush|>" do the same.
        let solar = release != Release::LlamaCppPython0316
            && end("<|calls|>").is_some()
            && end("<|flush|>").is_some();
        if let Some(e) = end("<|end|>").filter(|_| harmony || solar) {
            tokens[e as usize].attr = attr::USER_DEFINED;
        }
        // 0.3.36: where the end-of-generation tokens hold gemma4's "<|tool_response>" or
        // PLaMo's "<|plamo:eos|>", "</s>" (made one by its text above) is a normal token.
        if release != Release::LlamaCppPython0316 {
            let eos_id = eos.map(|e| e as usize).filter(|&e| e < n);
            let eog: Vec<usize> = eog
                .iter()
                .copied()
                .chain(eos_id)
                .chain(eot)
                .chain(eom)
                .collect();
            let has = |t: &str| eog.iter().any(|&i| tokens[i].text == t.as_bytes());
            if has("<|tool_response>") || has("<|plamo:eos|>") {
                if let Some(&s) = eog.iter().find(|&&i| tokens[i].text == b"</s>") {
                    tokens[s].attr = attr::NORMAL;
                }
            }
        }

        let mut special_tokens: Vec<TokenId> = (0..n as TokenId)
            .filter(|&i| {
                tokens[i as usize].attr & (attr::CONTROL | attr::USER_DEFINED | attr::UNKNOWN) != 0
            })
            .collect();
        // llama.cpp's std::sort is not stable; equal lengths keep id order here.
        special_tokens.sort_by_key(|&i| std::cmp::Reverse(tokens[i as usize].text.len()));

        let treat_whitespace_as_suffix = false;
        let ugm = if kind == Kind::Ugm {
            let charsmap = match opt(g.get_array("tokenizer.ggml.precompiled_charsmap"))? {
                Some(a) => a.raw_elements().to_vec(),
                None => Vec::new(),
            };
            Some(ugm::Ugm::new(&tokens, charsmap)?)
        } else {
            None
        };
        let rwkv = (kind == Kind::Rwkv).then(|| rwkv::Rwkv::new(&tokens));
        let wpm = (kind == Kind::Wpm).then(|| {
            let mut trie = ugm::Trie::default();
            for (id, t) in tokens.iter().enumerate() {
                trie.insert(&t.text, id as TokenId);
            }
            trie
        });

        let mut tok = Tokenizer {
            release,
            kind,
            bpe_session,
            newline_words: gemma4,
            byte_tokens_hex: !byte_encode,
            lowercase,
            strip_accents,
            nfd,
            pre,
            tokens,
            token_to_id,
            ranks,
            merge_ids,
            pre_tokenizer,
            special_tokens,
            special_finder: OnceLock::new(),
            pieces: Vec::new(),
            bos,
            eos,
            unk,
            sep,
            add_bos,
            add_eos,
            add_sep,
            add_space_prefix,
            remove_extra_whitespaces,
            ignore_merges,
            clean_spaces,
            escape_whitespaces,
            treat_whitespace_as_suffix,
            ugm,
            rwkv,
            plamo2,
            wpm,
            work_per_byte: WORK_PER_BYTE,
        };
        let (text_bytes, piece_bytes) = tok.tokens.iter().fold((0u64, 0u64), |(t, p), token| {
            let piece = match kind {
                Kind::Bpe => decoded_len(&token.text),
                _ => token.text.len() as u64,
            };
            (t + token.text.len() as u64, p.saturating_add(piece))
        });
        let allowed = text_bytes
            .saturating_mul(PIECES_PER_TEXT_BYTE)
            .saturating_add(PIECES_BASE);
        if piece_bytes > allowed {
            return Err(Error::Limit(format!(
                "the tokens' pieces would take {piece_bytes} bytes (a BPE token's code point \
                 outside the byte alphabet decodes to its whole text again), more than \
                 {allowed} (gguf_tokenizer::PIECES_BASE + PIECES_PER_TEXT_BYTE × the \
                 {text_bytes} bytes of token text)"
            )));
        }
        if bpe_session == BpeSession::HybridDna {
            // The k-mers (the tokens after "<oov>") lose their marker suffix in their texts
            // (not in the text-to-id map): they detokenize to the bare sequence.
            if let Some(&oov) = tok.token_to_id.get(&b"<oov>"[..]) {
                let marker = "\u{E000}".as_bytes();
                for t in &mut tok.tokens[oov as usize + 1..] {
                    if t.text.len() > marker.len() && t.text.ends_with(marker) {
                        t.text.truncate(t.text.len() - marker.len());
                    }
                }
            }
        }
        tok.pieces = (0..n as TokenId).map(|i| tok.piece_uncached(i)).collect();

        // Per-model attributes set after the caches, by name (llama.cpp's load, last block).
        let name = opt(g.get_str("general.name"))?
            .unwrap_or("")
            .to_ascii_lowercase();
        let arch = opt(g.get_str("general.architecture"))?.unwrap_or("");
        let set = |tok: &mut Tokenizer, text: &str, a: u32, on: bool| -> Result<(), Error> {
            let &i = tok.token_to_id.get(text.as_bytes()).ok_or_else(|| {
                Error::Unsupported(format!("token '{text}' missing (llama.cpp throws)"))
            })?;
            let t = &mut tok.tokens[i as usize];
            t.attr = if on { t.attr | a } else { t.attr & !a };
            Ok(())
        };
        if ["jina-v2-de", "jina-v2-es", "jina-v2-code"]
            .iter()
            .any(|p| pre_name.contains(p))
            || arch.contains("nomic-bert-moe")
        {
            if tok.token_to_id.contains_key(&b"<mask>"[..]) {
                set(&mut tok, "<mask>", attr::LSTRIP, true)?;
            }
        } else if name.contains("phi-3") || name.contains("phi3") {
            for i in tok.special_tokens.clone() {
                tok.tokens[i as usize].attr |= attr::RSTRIP;
            }
            set(&mut tok, "</s>", attr::RSTRIP, true)?;
            for t in ["<unk>", "<s>", "<|endoftext|>"] {
                set(&mut tok, t, attr::RSTRIP, false)?;
            }
        }
        // llama.cpp's load tokenizes "\n" for the newline id of BPE and RWKV vocabularies.
        if matches!(kind, Kind::Bpe | Kind::Rwkv) {
            tok.encode(b"\n", false, false)?;
        }
        Ok(tok)
    }

    /// Raises (or lowers) the work `encode` may do per byte of text ([`WORK_PER_BYTE`]).
    pub fn set_work_per_byte(&mut self, steps: u64) {
        self.work_per_byte = steps;
    }

    /// The llama.cpp release the tokenizer follows.
    pub fn release(&self) -> Release {
        self.release
    }

    /// The vocabulary type.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The pre-tokenizer expression set in use (BPE only; empty otherwise).
    pub fn pre(&self) -> &str {
        &self.pre
    }

    /// The number of tokens.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether the vocabulary is empty.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// One vocabulary entry (with the attributes llama.cpp ends its load with).
    pub fn token(&self, id: TokenId) -> Option<&Token> {
        self.tokens.get(id as usize)
    }

    /// The id of a token text.
    pub fn text_to_token(&self, text: &[u8]) -> Option<TokenId> {
        self.token_to_id.get(text).copied()
    }

    /// The BOS id, if any.
    pub fn bos(&self) -> Option<TokenId> {
        self.bos
    }

    /// The EOS id, if any.
    pub fn eos(&self) -> Option<TokenId> {
        self.eos
    }

    /// `tokenizer.ggml.add_sep_token` (or the model's default); llama.cpp's tokenize does not
    /// read it, its callers may.
    pub fn add_sep(&self) -> bool {
        self.add_sep
    }

    /// Whether `encode(.., add_special = true, ..)` adds a BOS token.
    pub fn add_bos(&self) -> bool {
        self.add_bos
    }

    fn byte_to_token(&self, b: u8) -> Result<TokenId, Error> {
        let hex = format!("<0x{b:02X}>");
        let found = match self.kind {
            Kind::Spm | Kind::Ugm => self
                .text_to_token(hex.as_bytes())
                .or_else(|| self.text_to_token(&[b])),
            Kind::Plamo2 => self.text_to_token(hex.as_bytes()),
            _ => {
                let mut s = Vec::new();
                unicode::byte_to_utf8(b, &mut s);
                self.text_to_token(&s)
            }
        };
        found.ok_or_else(|| {
            Error::Unsupported(format!(
                "no token for byte 0x{b:02X} (llama.cpp throws std::out_of_range)"
            ))
        })
    }

    fn special(&self, what: &str, id: Option<TokenId>) -> Result<TokenId, Error> {
        id.ok_or_else(|| {
            Error::Unsupported(format!("{what} token needed but absent (llama.cpp aborts)"))
        })
    }

    /// Text to token ids, as `llama_tokenize(vocab, text, .., add_special, parse_special)`.
    /// `add_special` adds BOS/EOS/SEP as the vocabulary says; `parse_special` lets control
    /// tokens' texts in `text` stand for them (user-defined tokens always do).
    pub fn encode(
        &self,
        text: &[u8],
        add_special: bool,
        parse_special: bool,
    ) -> Result<Vec<TokenId>, Error> {
        if text.len() > MAX_TEXT_BYTES {
            return Err(Error::Limit(format!(
                "a text of {} bytes, more than {MAX_TEXT_BYTES} (gguf_tokenizer::MAX_TEXT_BYTES)",
                text.len()
            )));
        }
        let mut out = Vec::new();
        let mut budget = Budget::for_text(text.len(), self.work_per_byte);
        let frags = if text.is_empty() {
            Vec::new()
        } else {
            self.partition(text, parse_special, &mut budget)?
        };
        match self.kind {
            Kind::Spm => {
                let mut is_prev_special = true;
                if add_special && self.add_bos {
                    out.push(self.special("BOS", self.bos)?);
                }
                for f in &frags {
                    match *f {
                        Frag::Text(a, b) => {
                            let spaces = text[a..b].iter().filter(|&&c| c == b' ').count();
                            let mut t = Vec::with_capacity(b - a + 2 * spaces + 3);
                            if self.add_space_prefix && is_prev_special {
                                t.extend_from_slice("▁".as_bytes());
                            }
                            for &c in &text[a..b] {
                                if c == b' ' {
                                    t.extend_from_slice("▁".as_bytes());
                                } else {
                                    t.push(c);
                                }
                            }
                            spm::tokenize(self, &t, &mut budget, &mut out)?;
                            is_prev_special = false;
                        }
                        Frag::Token(id) => {
                            out.push(id);
                            is_prev_special = true;
                        }
                    }
                }
                if add_special && self.add_eos {
                    out.push(self.special("EOS", self.eos)?);
                }
            }
            Kind::Bpe => {
                if add_special && self.add_bos {
                    out.push(self.special("BOS", self.bos)?);
                }
                let mut session = bpe::Session::default();
                // 0.3.36 escapes spaces for SentencePiece-style BPE (gemma4).
                let escape = self.escape_whitespaces && self.release != Release::LlamaCppPython0316;
                for f in &frags {
                    match *f {
                        Frag::Text(a, b) if escape => {
                            let t = replace(&text[a..b], b" ", "▁".as_bytes());
                            session.tokenize(self, &t, &mut budget, &mut out)?
                        }
                        Frag::Text(a, b) => {
                            session.tokenize(self, &text[a..b], &mut budget, &mut out)?
                        }
                        Frag::Token(id) => out.push(id),
                    }
                }
                if add_special && self.add_eos {
                    out.push(self.special("EOS", self.eos)?);
                }
            }
            Kind::Wpm => {
                if add_special {
                    out.push(self.special("BOS", self.bos)?);
                }
                for f in &frags {
                    match *f {
                        Frag::Text(a, b) => {
                            let trie = self.wpm.as_ref().expect("WPM state");
                            wpm::tokenize(self, trie, &text[a..b], &mut budget, &mut out)?
                        }
                        Frag::Token(id) => out.push(id),
                    }
                }
                if add_special {
                    out.push(self.special("SEP", self.sep)?);
                }
            }
            Kind::Ugm => {
                if add_special && self.add_bos {
                    out.push(self.special("BOS", self.bos)?);
                }
                let ugm = self.ugm.as_ref().expect("UGM state");
                for f in &frags {
                    match *f {
                        Frag::Text(a, b) => {
                            ugm.tokenize(self, &text[a..b], &mut budget, &mut out)?
                        }
                        Frag::Token(id) => out.push(id),
                    }
                }
                if add_special && self.add_eos {
                    out.push(self.special("EOS", self.eos)?);
                }
            }
            Kind::Rwkv => {
                let rwkv = self.rwkv.as_ref().expect("RWKV state");
                for f in &frags {
                    match *f {
                        Frag::Text(a, b) => {
                            rwkv.tokenize(self, &text[a..b], &mut budget, &mut out)?
                        }
                        Frag::Token(id) => out.push(id),
                    }
                }
            }
            // llama.cpp adds no BOS or EOS here whatever add_special says.
            Kind::Plamo2 => {
                let plamo2 = self.plamo2.as_ref().expect("PLaMo-2 state");
                for f in &frags {
                    match *f {
                        Frag::Text(a, b) => plamo2.tokenize(&text[a..b], &mut budget, &mut out)?,
                        Frag::Token(id) => out.push(id),
                    }
                }
            }
        }
        Ok(out)
    }

    /// `tokenizer_st_partition`: the text split around the special tokens' texts, longest
    /// tokens first, each token at its leftmost non-overlapping places in each fragment the
    /// longer ones left.
    ///
    /// llama.cpp searches every fragment for every token (specials × fragments). Here every
    /// place any special token occurs is found in one pass over the text, and each token, in
    /// its turn, only looks at its own places: the fragment holding a place is found by its
    /// start. The places are charged to the work budget (overlapping tokens such as runs of
    /// spaces put several at one byte; a hostile set could put thousands).
    fn partition(
        &self,
        text: &[u8],
        parse_special: bool,
        budget: &mut Budget,
    ) -> Result<Vec<Frag>, Error> {
        let finder = self.special_finder.get_or_init(|| {
            let texts = self
                .special_tokens
                .iter()
                .map(|&id| &self.tokens[id as usize].text);
            // Not a DFA (the builder's choice for few patterns): filling its transitions
            // follows failure links, quadratic in a text that overlaps itself ('x' × 30,000).
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .kind(Some(AhoCorasickKind::ContiguousNFA))
                .build(texts)
                .ok()
        });
        let Some(finder) = finder else {
            return Err(Error::Limit(
                "the special tokens' texts are too large to search for".into(),
            ));
        };
        let mut places: Vec<(u32, usize)> = Vec::new();
        for m in finder.find_overlapping_iter(text) {
            let k = m.pattern().as_u32();
            let t = &self.tokens[self.special_tokens[k as usize] as usize];
            if !parse_special && t.attr & (attr::CONTROL | attr::UNKNOWN) != 0 {
                continue;
            }
            budget.charge(1)?;
            places.push((k, m.start()));
        }
        places.sort_unstable();
        let mut frags = std::collections::BTreeMap::new();
        frags.insert(0, Frag::Text(0, text.len()));
        for &(k, p) in &places {
            let id = self.special_tokens[k as usize];
            let t = &self.tokens[id as usize];
            let end = p + t.text.len();
            let Some((_, &Frag::Text(a, b))) = frags.range(..=p).next_back() else {
                continue;
            };
            if end > b {
                continue;
            }
            frags.remove(&a);
            let mut left_end = p;
            if t.attr & attr::LSTRIP != 0 {
                while left_end > a && is_space(text[left_end - 1]) {
                    left_end -= 1;
                }
            }
            if left_end > a {
                frags.insert(a, Frag::Text(a, left_end));
            }
            frags.insert(p, Frag::Token(id));
            let mut r = end;
            if r < b && t.attr & attr::RSTRIP != 0 {
                while r < b && is_space(text[r]) {
                    r += 1;
                }
            }
            if r < b {
                frags.insert(r, Frag::Text(r, b));
            }
        }
        Ok(frags.into_values().collect())
    }

    /// One token's text as `llama_token_to_piece(vocab, id, .., lstrip = 0, special)`:
    /// empty for control and unknown tokens unless `special`.
    pub fn token_to_piece(&self, id: TokenId, special: bool) -> &[u8] {
        let Some(t) = self.tokens.get(id as usize) else {
            return &[];
        };
        if !special && t.attr & (attr::UNKNOWN | attr::CONTROL) != 0 {
            return &[];
        }
        &self.pieces[id as usize]
    }

    fn piece_uncached(&self, id: TokenId) -> Vec<u8> {
        let t = &self.tokens[id as usize];
        let special = attr::UNKNOWN | attr::CONTROL | attr::USER_DEFINED;
        match self.kind {
            Kind::Spm | Kind::Wpm | Kind::Ugm => {
                if t.attr & special != 0 {
                    t.text.clone()
                } else if t.attr & attr::NORMAL != 0 {
                    replace(&t.text, "▁".as_bytes(), b" ")
                } else if t.attr & attr::BYTE != 0 {
                    vec![strtol_hex(
                        t.text.get(3..t.text.len().min(5)).unwrap_or(&[]),
                    )]
                } else {
                    Vec::new()
                }
            }
            Kind::Bpe => {
                let new = self.release != Release::LlamaCppPython0316;
                if t.attr & special != 0 {
                    t.text.clone()
                } else if t.attr & attr::NORMAL != 0 {
                    if new && self.escape_whitespaces {
                        replace(&t.text, "▁".as_bytes(), b" ")
                    } else {
                        decode_text(&t.text)
                    }
                } else if new && t.attr & attr::BYTE != 0 {
                    vec![strtol_hex(
                        t.text.get(3..t.text.len().min(5)).unwrap_or(&[]),
                    )]
                } else {
                    Vec::new()
                }
            }
            Kind::Rwkv => rwkv::unescape(&t.text),
            Kind::Plamo2 => match plamo2::byte_value(&t.text) {
                Ok(Some(b)) if t.attr & attr::BYTE != 0 => vec![b],
                _ => t.text.clone(),
            },
        }
    }

    /// Token ids to text, as `llama_detokenize(vocab, ids, .., remove_special,
    /// unparse_special)`: `remove_special` drops a leading BOS and trailing EOS the
    /// vocabulary adds; `unparse_special` renders control tokens' texts.
    pub fn decode(&self, ids: &[TokenId], remove_special: bool, unparse_special: bool) -> Vec<u8> {
        let mut ids = ids;
        let mut remove_space = self.add_space_prefix;
        if remove_special && self.add_bos && !ids.is_empty() && Some(ids[0]) == self.bos {
            remove_space = false;
            ids = &ids[1..];
        }
        if remove_special && self.add_eos && !ids.is_empty() && Some(ids[ids.len() - 1]) == self.eos
        {
            ids = &ids[..ids.len() - 1];
        }
        let mut text = Vec::new();
        for &id in ids {
            let mut p = self.token_to_piece(id, unparse_special);
            if remove_space && p.first() == Some(&b' ') {
                p = &p[1..];
            }
            remove_space = false;
            text.extend_from_slice(p);
        }
        if self.clean_spaces {
            clean_spaces(&mut text);
        }
        text
    }
}

/// `llama_detokenize`'s three passes for `clean_spaces`.
fn clean_spaces(text: &mut Vec<u8>) {
    let n = text.len();
    let mut total = usize::from(n > 0);
    for i in 1..n {
        let x = text[i];
        if text[i - 1] == b' ' && matches!(x, b'?' | b'!' | b'.' | b',') {
            total -= 1;
        }
        text[total] = x;
        total += 1;
    }
    let n = total;
    total = usize::from(n > 0);
    let mut i = 1;
    while i < n {
        let x = text[i];
        if x == b'\'' && i + 1 < n && text[i - 1] == b' ' && text[i + 1] == b' ' {
            total -= 1;
            i += 1;
            text[i] = 0;
        }
        text[total] = x;
        total += 1;
        i += 1;
    }
    let n = total;
    total = usize::from(n > 0);
    for i in 1..n {
        let x = text[i];
        if text[i - 1] == b' ' && x == b'\'' && i + 1 < n {
            let x1 = text[i + 1];
            if x1 == b's' || x1 == b'm' {
                total -= 1;
            } else if x1 != b't' && x1 != b'd' && i + 2 < n {
                let x2 = text[i + 2];
                if (x1 == b'r' || x1 == b'v') && x2 == b'e' {
                    total -= 1;
                }
            }
        }
        text[total] = x;
        total += 1;
    }
    text.truncate(total);
}

/// The length of [`decode_text`]'s result, without building it.
fn decoded_len(text: &[u8]) -> u64 {
    let mut n = 0u64;
    for c in unicode::cpts_from_utf8(text) {
        n = n.saturating_add(match unicode::cpt_to_byte(c) {
            Some(_) => 1,
            None => {
                let mut utf8 = Vec::new();
                let _ = unicode::cpt_to_utf8(c, &mut utf8);
                "[UNK_BYTE_0x".len() as u64 + 2 * utf8.len() as u64 + text.len() as u64 + 1
            }
        });
    }
    n
}

/// `llama_decode_text`: a BPE token from the GPT-2 byte alphabet back to bytes.
fn decode_text(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for c in unicode::cpts_from_utf8(text) {
        match unicode::cpt_to_byte(c) {
            Some(b) => out.push(b),
            None => {
                let mut utf8 = Vec::new();
                let _ = unicode::cpt_to_utf8(c, &mut utf8);
                out.extend_from_slice(b"[UNK_BYTE_0x");
                for b in &utf8 {
                    out.extend_from_slice(format!("{b:02x}").as_bytes());
                }
                out.extend_from_slice(text);
                out.push(b']');
            }
        }
    }
    out
}

/// `strtol(s, NULL, 16)` truncated to a byte, as `token_to_byte` uses it.
fn strtol_hex(s: &[u8]) -> u8 {
    let mut i = 0;
    while i < s.len() && (s[i] == b' ' || (b'\t'..=b'\r').contains(&s[i])) {
        i += 1;
    }
    let neg = s.get(i) == Some(&b'-');
    if matches!(s.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    if s.get(i) == Some(&b'0')
        && matches!(s.get(i + 1), Some(b'x' | b'X'))
        && s.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
    {
        i += 2;
    }
    let mut v: i64 = 0;
    while let Some(d) = s.get(i).and_then(|&c| (c as char).to_digit(16)) {
        v = v * 16 + i64::from(d);
        i += 1;
    }
    (if neg { -v } else { v }) as u8
}

fn replace(s: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out
}

/// C's `isspace` in the "C" locale.
fn is_space(b: u8) -> bool {
    b == b' ' || (b'\t'..=b'\r').contains(&b)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frag {
    Text(usize, usize),
    Token(TokenId),
}

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    use super::*;
    use gguf_grammar::write::{GgufBuilder, OwnedValue};
    use gguf_grammar::{Ctx, ValueType};

    /// llama.cpp's partition as written there: every special token, longest first, searched
    /// for in every fragment.
    fn partition_as_llama_cpp(tok: &Tokenizer, text: &[u8], parse_special: bool) -> Vec<Frag> {
        let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle);
        let mut frags = vec![Frag::Text(0, text.len())];
        for &id in &tok.special_tokens {
            let t = &tok.tokens[id as usize];
            if !parse_special && t.attr & (attr::CONTROL | attr::UNKNOWN) != 0 {
                continue;
            }
            let mut next = Vec::new();
            for f in frags {
                let Frag::Text(mut a, b) = f else {
                    next.push(f);
                    continue;
                };
                loop {
                    let Some(m) = find(&text[a..b], &t.text).map(|m| m + a) else {
                        if a < b {
                            next.push(Frag::Text(a, b));
                        }
                        break;
                    };
                    let mut left_end = m;
                    if t.attr & attr::LSTRIP != 0 {
                        while left_end > a && is_space(text[left_end - 1]) {
                            left_end -= 1;
                        }
                    }
                    if left_end > a {
                        next.push(Frag::Text(a, left_end));
                    }
                    next.push(Frag::Token(id));
                    let mut r = m + t.text.len();
                    if r >= b {
                        break;
                    }
                    if t.attr & attr::RSTRIP != 0 {
                        while r < b && is_space(text[r]) {
                            r += 1;
                        }
                    }
                    a = r;
                }
            }
            frags = next;
        }
        frags
    }

    /// The one-pass partition equals llama.cpp's on random texts over a small alphabet with
    /// overlapping special tokens (prefixes, suffixes and repeats of each other), stripping
    /// spaces left and right.
    #[test]
    fn partition_equals_llama_cpp_algorithm() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut rand = |n: usize| {
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            (seed.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
        };
        let alphabet = b"ab ";
        for round in 0..300 {
            let mut texts: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
            let mut types = vec![1i32; 256];
            for _ in 0..1 + rand(6) {
                let len = 1 + rand(4);
                let t: Vec<u8> = (0..len).map(|_| alphabet[rand(3)]).collect();
                if !texts.contains(&t) {
                    texts.push(t);
                    types.push([3, 4][rand(2)]);
                }
            }
            let mut b = GgufBuilder::new(Ctx::V3_LE);
            b.kv("tokenizer.ggml.model", "llama")
                .kv(
                    "tokenizer.ggml.tokens",
                    OwnedValue::array(ValueType::String, texts.into_iter().map(OwnedValue::string)),
                )
                .kv(
                    "tokenizer.ggml.token_type",
                    OwnedValue::array(ValueType::I32, types),
                );
            let bytes = b.build().unwrap();
            let mut tok = Tokenizer::from_gguf(&Gguf::parse(&bytes).unwrap()).unwrap();
            for id in tok.special_tokens.clone() {
                tok.tokens[id as usize].attr |= [0, attr::LSTRIP, attr::RSTRIP][rand(3)];
            }
            for _ in 0..20 {
                let text: Vec<u8> = (0..1 + rand(40)).map(|_| alphabet[rand(3)]).collect();
                for parse in [false, true] {
                    let mut budget = Budget::for_text(text.len(), WORK_PER_BYTE);
                    let got = tok.partition(&text, parse, &mut budget).unwrap();
                    let want = partition_as_llama_cpp(&tok, &text, parse);
                    assert_eq!(
                        got,
                        want,
                        "round {round} {:?}",
                        String::from_utf8_lossy(&text)
                    );
                }
            }
        }
    }
}
