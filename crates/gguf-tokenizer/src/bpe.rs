//! `llm_tokenizer_bpe_session`: pre-tokenize into words, then in each word merge the
//! adjacent pair of lowest merge rank until none is left.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::unicode::len_utf8;
use crate::{Budget, Error, Map, TokenId, Tokenizer};

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
                None => out.extend(piece.iter().filter_map(|&b| tok.text_to_token(&[b]))),
            }
        }
        Ok(())
    }
}
