//! `llm_tokenizer_wpm_session`: llama.cpp's BERT pre-processing (its one-code-point NFD,
//! lowercase, punctuation and CJK split off), then greedy longest match per word.

use crate::unicode::{self, flags};
use crate::{Error, TokenId, Tokenizer};

fn is_chinese_char(c: u32) -> bool {
    // 0x2B920, not 0x2B820, as in llama.cpp (after the Hugging Face Rust code).
    matches!(c,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B920..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

fn preprocess(text: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
    let mut words: Vec<Vec<u8>> = vec![Vec::new()];
    for c in unicode::cpts_from_utf8(text) {
        let c = unicode::nfd(c);
        let f = flags(c);
        if f.is_whitespace() {
            if !words.last().is_some_and(Vec::is_empty) {
                words.push(Vec::new());
            }
            continue;
        }
        if c == 0 || c == 0xFFFD || f.is_control() {
            continue;
        }
        let mut s = Vec::new();
        unicode::cpt_to_utf8(unicode::tolower(c), &mut s).ok_or_else(|| {
            Error::Unsupported(format!(
                "code point 0x{c:X} past U+10FFFF (llama.cpp throws)"
            ))
        })?;
        if f.is_punctuation() || (c < 0x7F && f.is_symbol()) || is_chinese_char(c) {
            if !words.last().is_some_and(Vec::is_empty) {
                words.push(Vec::new());
            }
            *words.last_mut().expect("a word") = s;
            words.push(Vec::new());
        } else {
            words.last_mut().expect("a word").extend_from_slice(&s);
        }
    }
    if words.last().is_some_and(Vec::is_empty) {
        words.pop();
    }
    Ok(words)
}

pub(crate) fn tokenize(tok: &Tokenizer, text: &[u8], out: &mut Vec<TokenId>) -> Result<(), Error> {
    for word in preprocess(text)? {
        if word.is_empty() {
            continue;
        }
        let mut w = "▁".as_bytes().to_vec();
        w.extend_from_slice(&word);
        let n = w.len();
        let current = out.len();
        let mut i = 0;
        while i < n {
            let mut matched = false;
            let mut j = n.min(i + tok.max_token_len + 1);
            while j > i {
                if let Some(id) = tok.text_to_token(&w[i..j]) {
                    out.push(id);
                    matched = true;
                    i = j - 1;
                    break;
                }
                j -= 1;
            }
            if !matched {
                out.truncate(current);
                break;
            }
            i += 1;
        }
        if out.len() == current {
            out.push(tok.special("UNK", tok.unk)?);
        }
    }
    Ok(())
}
