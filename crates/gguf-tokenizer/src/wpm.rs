//! `llm_tokenizer_wpm_session`: llama.cpp's BERT pre-processing (its one-code-point NFD,
//! lowercase, punctuation and CJK split off; since 0.3.36 the marks stripped, all three as
//! the vocabulary's normalizer options say), then greedy longest match per word.
//!
//! llama.cpp builds the list of words first and then matches each; here each word is matched
//! as soon as it ends, in one reused buffer. The ids are the same (a code point past U+10FFFF
//! is an error either way, and an error discards the output).

use crate::ugm::Trie;
use crate::unicode::{self, flags};
use crate::{Budget, Error, TokenId, Tokenizer};

fn is_chinese_char(c: u32) -> bool {
    // 0x2B920, not 0x2B820, as in llama.cpp (after the Hugging Face Rust code).
    matches!(c,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B920..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// Every word starts with "▁" (llama.cpp prepends it before matching).
const PREFIX: &[u8] = "▁".as_bytes();

pub(crate) fn tokenize(
    tok: &Tokenizer,
    trie: &Trie,
    text: &[u8],
    budget: &mut Budget,
    out: &mut Vec<TokenId>,
) -> Result<(), Error> {
    let mut word = Vec::with_capacity(64);
    word.extend_from_slice(PREFIX);
    let mut flush = |word: &mut Vec<u8>, out: &mut Vec<TokenId>| -> Result<(), Error> {
        if word.len() > PREFIX.len() {
            match_word(tok, trie, word, budget, out)?;
            word.truncate(PREFIX.len());
        }
        Ok(())
    };
    let mut offset = 0;
    while offset < text.len() {
        let c = match unicode::cpt_from_utf8(text, &mut offset) {
            Some(c) if tok.nfd => unicode::nfd(c),
            Some(c) => c,
            None => {
                offset += 1;
                0xFFFD
            }
        };
        let f = flags(c);
        if f.is_whitespace() {
            flush(&mut word, out)?;
            continue;
        }
        if c == 0 || c == 0xFFFD || f.is_control() {
            continue;
        }
        if tok.strip_accents && f.is_accent_mark() {
            continue;
        }
        let split = f.is_punctuation() || (c < 0x7F && f.is_symbol()) || is_chinese_char(c);
        if split {
            flush(&mut word, out)?;
        }
        let c = if tok.lowercase {
            unicode::tolower(c)
        } else {
            c
        };
        unicode::cpt_to_utf8(c, &mut word).ok_or_else(|| {
            Error::Unsupported(format!(
                "code point 0x{c:X} past U+10FFFF (llama.cpp throws)"
            ))
        })?;
        if split {
            flush(&mut word, out)?;
        }
    }
    flush(&mut word, out)
}

/// Greedy longest match of one word ("▁" + text); UNK for the whole word where a part has
/// no token. llama.cpp looks up every length from the longest token's down (quadratic in
/// that length at each place); the trie of all tokens finds the same longest token in one
/// walk, each step charged to the budget.
fn match_word(
    tok: &Tokenizer,
    trie: &Trie,
    w: &[u8],
    budget: &mut Budget,
    out: &mut Vec<TokenId>,
) -> Result<(), Error> {
    let n = w.len();
    let current = out.len();
    let mut i = 0;
    while i < n {
        let mut longest = None;
        let mut node = trie.root();
        let mut j = i;
        while let Some(next) = node.and_then(|nd| w.get(j).and_then(|&b| trie.child(nd, b))) {
            budget.charge(1)?;
            j += 1;
            if let Some(id) = trie.value(next) {
                longest = Some((id, j));
            }
            node = Some(next);
        }
        let Some((id, end)) = longest else {
            out.truncate(current);
            break;
        };
        out.push(id);
        i = end;
    }
    if out.len() == current {
        out.push(tok.special("UNK", tok.unk)?);
    }
    Ok(())
}
