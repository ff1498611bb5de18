//! `llm_tokenizer_spm_session`: merge the adjacent pair whose joined text is the
//! highest-scoring token, until none is; unmatched characters fall back to byte tokens.

use std::collections::BinaryHeap;

use crate::unicode::len_utf8;
use crate::{Budget, Error, TokenId, Tokenizer};

#[derive(Clone, Copy)]
struct Symbol {
    prev: i32,
    next: i32,
    // u32, not usize: with `size` below, 16 bytes a symbol and a pair rather than 24
    // (texts past MAX_TEXT_BYTES are refused, and "▁" for a space at most triples one).
    start: u32,
    n: u32,
}

struct Bigram {
    left: i32,
    right: i32,
    score: f32,
    size: u32,
}

// Highest score first, then the leftmost (llm_bigram_spm::comparator).
impl Ord for Bigram {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.score
            .partial_cmp(&o.score)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(o.left.cmp(&self.left))
    }
}
impl PartialOrd for Bigram {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl PartialEq for Bigram {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o).is_eq()
    }
}
impl Eq for Bigram {}

pub(crate) fn tokenize(
    tok: &Tokenizer,
    text: &[u8],
    budget: &mut Budget,
    out: &mut Vec<TokenId>,
) -> Result<(), Error> {
    let mut symbols = Vec::with_capacity(text.len());
    let mut offs = 0;
    while offs < text.len() {
        let n = len_utf8(text[offs]).min(text.len() - offs);
        let index = symbols.len() as i32;
        symbols.push(Symbol {
            prev: index - 1,
            next: if offs + n == text.len() {
                -1
            } else {
                index + 1
            },
            start: offs as u32,
            n: n as u32,
        });
        offs += n;
    }
    let mut queue = BinaryHeap::new();
    // Each pair tried hashes its joined text: charged by its length.
    let try_add = |symbols: &[Symbol],
                   queue: &mut BinaryHeap<Bigram>,
                   budget: &mut Budget,
                   left: i32,
                   right: i32|
     -> Result<(), Error> {
        if left == -1 || right == -1 {
            return Ok(());
        }
        let (l, r) = (symbols[left as usize], symbols[right as usize]);
        let joined = &text[l.start as usize..(l.start + l.n + r.n) as usize];
        budget.charge(1 + joined.len() as u64 / 64)?;
        if let Some(id) = tok.text_to_token(joined) {
            queue.push(Bigram {
                left,
                right,
                score: tok.tokens[id as usize].score,
                size: joined.len() as u32,
            });
        }
        Ok(())
    };
    for i in 1..symbols.len() as i32 {
        try_add(&symbols, &mut queue, budget, i - 1, i)?;
    }
    while let Some(b) = queue.pop() {
        let (l, r) = (symbols[b.left as usize], symbols[b.right as usize]);
        if l.n == 0 || r.n == 0 || l.n + r.n != b.size {
            continue;
        }
        symbols[b.left as usize].n += r.n;
        symbols[b.right as usize].n = 0;
        symbols[b.left as usize].next = r.next;
        if r.next >= 0 {
            symbols[r.next as usize].prev = b.left;
        }
        try_add(&symbols, &mut queue, budget, l.prev, b.left)?;
        try_add(&symbols, &mut queue, budget, b.left, r.next)?;
    }
    let mut i = if symbols.is_empty() { -1 } else { 0 };
    while i != -1 {
        let s = symbols[i as usize];
        let piece = &text[s.start as usize..(s.start + s.n) as usize];
        // A merged symbol is always a token; only single characters can miss.
        match tok.text_to_token(piece) {
            Some(id) => out.push(id),
            None => {
                for &b in piece {
                    out.push(tok.byte_to_token(b)?);
                }
            }
        }
        i = s.next;
    }
    Ok(())
}
