//! `llm_tokenizer_bpe_session`: pre-tokenize into words, then in each word merge the
//! adjacent pair of lowest merge rank until none is left; and the sessions 0.3.36 derives
//! from it for the `whitespace` and `hybriddna` tokenizers.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::unicode::{self, len_utf8};
use crate::{BpeSession, Budget, Error, Map, TokenId, Tokenizer};

/// The reserved suffix (U+E000) of `hybriddna`'s k-mer tokens.
const DNA_KMER_MARKER: &str = "\u{E000}";
const DNA_K: usize = 6;

/// No interned id: a text that is neither a token nor a merge side can take part in no merge.
const NONE: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Symbol {
    prev: i32,
    next: i32,
    start: usize,
    n: usize,
    /// The interned id of the symbol's text, or NONE.
    sid: u32,
}

/// A candidate merge: (rank, left, right, left n, right n), ordered smallest rank, then
/// leftmost, first (llm_bigram_bpe::comparator).
type Bigram = Reverse<(u32, i32, i32, usize, usize)>;

/// Words cached per session at most: bounds the cache's memory on a long text of distinct
/// words.
const CACHE_WORDS: usize = 1 << 16;

/// Reusable buffers, and the ids of the words already merged in this session (a word's ids
/// depend on its text alone, and text repeats words).
#[derive(Default)]
pub(crate) struct Session {
    symbols: Vec<Symbol>,
    queue: BinaryHeap<Bigram>,
    cache: Map<Vec<u8>, Vec<TokenId>>,
}

impl Session {
    pub(crate) fn tokenize(
        &mut self,
        tok: &Tokenizer,
        text: &[u8],
        budget: &mut Budget,
        out: &mut Vec<TokenId>,
    ) -> Result<(), Error> {
        match tok.bpe_session {
            BpeSession::Plain => self.plain(tok, text, budget, out),
            BpeSession::Whitespace => self.whitespace(tok, text, budget, out),
            BpeSession::HybridDna => self.hybrid_dna(tok, text, budget, out),
        }
    }

    /// `llm_tokenizer_whitespace_session`: the text between whitespace code points, each
    /// piece lowercased if the normalizer says so, tokenized on its own.
    fn whitespace(
        &mut self,
        tok: &Tokenizer,
        text: &[u8],
        budget: &mut Budget,
        out: &mut Vec<TokenId>,
    ) -> Result<(), Error> {
        let mut segment = Vec::new();
        for c in unicode::cpts_from_utf8(text) {
            if unicode::flags(c).is_whitespace() {
                if !segment.is_empty() {
                    self.plain(tok, &segment, budget, out)?;
                    segment.clear();
                }
                continue;
            }
            let c = if tok.lowercase {
                unicode::tolower(c)
            } else {
                c
            };
            unicode::cpt_to_utf8(c, &mut segment).ok_or_else(|| {
                Error::Unsupported(format!(
                    "code point 0x{c:X} past U+10FFFF (llama.cpp throws)"
                ))
            })?;
        }
        if !segment.is_empty() {
            self.plain(tok, &segment, budget, out)?;
        }
        Ok(())
    }

    /// `llm_tokenizer_hybriddna_session`: each `<dna>..</dna>` span (to the end of the text
    /// if unclosed) as its tags' tokens around the upper-cased sequence's 6-mers (the last
    /// padded with `A`; one that is no token is `<oov>`), the rest as plain BPE text. Plain
    /// BPE throughout if a tag or `<oov>` is no token.
    fn hybrid_dna(
        &mut self,
        tok: &Tokenizer,
        text: &[u8],
        budget: &mut Budget,
        out: &mut Vec<TokenId>,
    ) -> Result<(), Error> {
        const OPEN: &[u8] = b"<dna>";
        const CLOSE: &[u8] = b"</dna>";
        let (Some(open), Some(close), Some(oov)) = (
            tok.text_to_token(OPEN),
            tok.text_to_token(CLOSE),
            tok.text_to_token(b"<oov>"),
        ) else {
            return self.plain(tok, text, budget, out);
        };
        let find = |hay: &[u8], needle: &[u8], from: usize| {
            hay.get(from..)?
                .windows(needle.len())
                .position(|w| w == needle)
                .map(|p| p + from)
        };
        let mut pos = 0;
        let mut kmer = Vec::with_capacity(DNA_K + DNA_KMER_MARKER.len());
        while pos < text.len() {
            let Some(start) = find(text, OPEN, pos) else {
                return self.plain(tok, &text[pos..], budget, out);
            };
            if start > pos {
                self.plain(tok, &text[pos..start], budget, out)?;
            }
            out.push(open);
            let content = start + OPEN.len();
            let end = find(text, CLOSE, content);
            let seq = &text[content..end.unwrap_or(text.len())];
            for chunk in seq.chunks(DNA_K) {
                budget.charge(1)?;
                kmer.clear();
                kmer.extend(chunk.iter().map(u8::to_ascii_uppercase));
                kmer.resize(DNA_K, b'A');
                kmer.extend_from_slice(DNA_KMER_MARKER.as_bytes());
                out.push(tok.text_to_token(&kmer).unwrap_or(oov));
            }
            let Some(end) = end else {
                break;
            };
            out.push(close);
            pos = end + CLOSE.len();
        }
        Ok(())
    }

    fn plain(
        &mut self,
        tok: &Tokenizer,
        text: &[u8],
        budget: &mut Budget,
        out: &mut Vec<TokenId>,
    ) -> Result<(), Error> {
        let pre = tok.pre_tokenizer.as_ref().expect("BPE pre-tokenizer");
        pre.split(text, |word| {
            if let Some(ids) = self.cache.get(word) {
                out.extend_from_slice(ids);
                return Ok(());
            }
            let start = out.len();
            self.word(tok, word, budget, out)?;
            if self.cache.len() == CACHE_WORDS {
                self.cache.clear();
            }
            self.cache.insert(word.to_vec(), out[start..].to_vec());
            Ok(())
        })
        .ok_or_else(|| {
            Error::Unsupported(
                "text decodes to a code point past U+10FFFF (llama.cpp throws)".into(),
            )
        })?
    }

    fn word(
        &mut self,
        tok: &Tokenizer,
        word: &[u8],
        budget: &mut Budget,
        out: &mut Vec<TokenId>,
    ) -> Result<(), Error> {
        if word.is_empty() {
            return Ok(());
        }
        if tok.ignore_merges {
            if let Some(id) = tok.text_to_token(word) {
                out.push(id);
                return Ok(());
            }
        }
        if tok.newline_words && word.iter().all(|&b| b == b'\n') {
            if let Some(id) = tok.text_to_token(word) {
                out.push(id);
                return Ok(());
            }
        }
        let sid = |s: &[u8]| tok.merge_ids.get(s).copied().unwrap_or(NONE);
        let symbols = &mut self.symbols;
        symbols.clear();
        let mut offset = 0;
        while offset < word.len() {
            let n = len_utf8(word[offset]).min(word.len() - offset);
            let index = symbols.len() as i32;
            symbols.push(Symbol {
                prev: index - 1,
                next: if offset + n == word.len() {
                    -1
                } else {
                    index + 1
                },
                start: offset,
                n,
                sid: sid(&word[offset..offset + n]),
            });
            offset += n;
        }
        let queue = &mut self.queue;
        queue.clear();
        let add = |symbols: &[Symbol], queue: &mut BinaryHeap<Bigram>, left: i32, right: i32| {
            if left == -1 || right == -1 {
                return;
            }
            let (l, r) = (symbols[left as usize], symbols[right as usize]);
            if l.sid == NONE || r.sid == NONE {
                return;
            }
            if let Some(&rank) = tok.ranks.get(&(l.sid, r.sid)) {
                queue.push(Reverse((rank, left, right, l.n, r.n)));
            }
        };
        for i in 1..symbols.len() as i32 {
            add(symbols, queue, i - 1, i);
        }
        while let Some(Reverse((_, left, right, ln, rn))) = queue.pop() {
            let (l, r) = (symbols[left as usize], symbols[right as usize]);
            // Outdated: one side was merged since (llama.cpp compares the texts).
            if l.n == 0 || r.n == 0 || l.n != ln || r.n != rn {
                continue;
            }
            // Each merge hashes the merged text: charged by its length.
            budget.charge(1 + (l.n + r.n) as u64 / 64)?;
            let merged = &mut symbols[left as usize];
            merged.n += r.n;
            merged.sid = sid(&word[l.start..l.start + merged.n]);
            merged.next = r.next;
            symbols[right as usize].n = 0;
            if r.next >= 0 {
                symbols[r.next as usize].prev = left;
            }
            add(symbols, queue, l.prev, left);
            add(symbols, queue, left, r.next);
        }
        for s in symbols.iter().filter(|s| s.n > 0) {
            let piece = &word[s.start..s.start + s.n];
            match tok.text_to_token(piece) {
                Some(id) => out.push(id),
                None if tok.byte_tokens_hex => out.extend(
                    piece
                        .iter()
                        .filter_map(|&b| tok.text_to_token(format!("<0x{b:02X}>").as_bytes())),
                ),
                None => out.extend(piece.iter().filter_map(|&b| tok.text_to_token(&[b]))),
            }
        }
        Ok(())
    }
}
