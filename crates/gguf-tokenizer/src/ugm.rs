//! `llm_tokenizer_ugm`: SentencePiece's normalisation through the precompiled character
//! map (an XOR-compressed double array), then Viterbi over token scores.

use crate::unicode::{self, len_utf8};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::{attr, Budget, Error, Token, TokenId, Tokenizer};

/// The trie's hash: splitmix64's finalizer of `node << 8 | byte`. FNV (the token maps') leaves
/// the top bits hashbrown tags entries with nearly alike for a long chain of nodes, and a
/// 100,000-byte token's walk then probes for ~400 ns a step instead of a few.
#[derive(Default, Clone, Copy)]
struct Mix(u64);

impl Hasher for Mix {
    fn finish(&self) -> u64 {
        let mut z = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// llama.cpp's `naive_trie`: a value per node, each node's first child kept beside it and the
/// others in one hash map keyed by (node, byte). A long token is a chain of nodes made one
/// after another, so walking it reads memory in order (a few ns a step, where a hash lookup
/// per step costs a cache miss).
#[derive(Default, Debug)]
pub(crate) struct Trie {
    nodes: Vec<Node>,
    /// `node << 8 | byte` -> child, for every child but a node's first.
    more: HashMap<u64, u32, BuildHasherDefault<Mix>>,
}

#[derive(Clone, Copy, Debug)]
struct Node {
    value: Option<u32>,
    /// The first child made, and its byte (NONE: no child).
    first: u32,
    first_byte: u8,
}

const NONE: u32 = u32::MAX;

impl Trie {
    pub(crate) fn insert(&mut self, key: &[u8], value: u32) {
        if self.nodes.is_empty() {
            self.nodes.push(Node {
                value: None,
                first: NONE,
                first_byte: 0,
            });
        }
        let mut node = 0usize;
        for &b in key {
            node = match self.child(node, b) {
                Some(n) => n,
                None => {
                    let n = self.nodes.len() as u32;
                    self.nodes.push(Node {
                        value: None,
                        first: NONE,
                        first_byte: 0,
                    });
                    let parent = &mut self.nodes[node];
                    if parent.first == NONE {
                        parent.first = n;
                        parent.first_byte = b;
                    } else {
                        self.more.insert((node as u64) << 8 | u64::from(b), n);
                    }
                    n as usize
                }
            };
        }
        self.nodes[node].value = Some(value);
    }
    pub(crate) fn root(&self) -> Option<usize> {
        (!self.nodes.is_empty()).then_some(0)
    }
    #[inline]
    pub(crate) fn child(&self, node: usize, b: u8) -> Option<usize> {
        let n = &self.nodes[node];
        if n.first == NONE {
            return None;
        }
        if n.first_byte == b {
            return Some(n.first as usize);
        }
        self.more
            .get(&((node as u64) << 8 | u64::from(b)))
            .map(|&c| c as usize)
    }
    pub(crate) fn value(&self, node: usize) -> Option<u32> {
        self.nodes[node].value
    }
    /// `get_longest_prefix`: how deep the key walks into the trie (token or not).
    fn walk_len(&self, key: &[u8], budget: &mut Budget) -> Result<usize, Error> {
        let Some(mut node) = self.root() else {
            return Ok(0);
        };
        for (i, &b) in key.iter().enumerate() {
            match self.child(node, b) {
                Some(n) => node = n,
                None => return Ok(i),
            }
            budget.charge(1)?;
        }
        Ok(key.len())
    }
}

#[derive(Debug)]
pub(crate) struct Ugm {
    charsmap: Vec<u8>,
    xcda: Vec<u32>,
    replacements_start: usize,
    token_matcher: Trie,
    user_defined: Trie,
    unknown_score: f64,
}

impl Ugm {
    pub(crate) fn new(tokens: &[Token], charsmap: Vec<u8>) -> Result<Ugm, Error> {
        let mut xcda = Vec::new();
        let mut replacements_start = charsmap.len();
        if !charsmap.is_empty() {
            let bad =
                || Error::Invalid("Index out of array bounds in precompiled charsmap!".into());
            let head = charsmap.get(..4).ok_or_else(bad)?;
            let size = u32::from_le_bytes(head.try_into().expect("4 bytes")) as usize;
            if size + 4 >= charsmap.len() {
                return Err(bad());
            }
            xcda = charsmap[4..4 + size]
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect();
            replacements_start = 4 + size;
        }
        let (mut min, mut max) = (f32::MAX, -f32::MAX);
        let mut token_matcher = Trie::default();
        let mut user_defined = Trie::default();
        for (id, t) in tokens.iter().enumerate() {
            if t.attr & attr::NORMAL != 0 {
                min = min.min(t.score);
                max = max.max(t.score);
            }
            if t.attr & (attr::NORMAL | attr::USER_DEFINED | attr::UNUSED) != 0 {
                token_matcher.insert(&t.text, id as u32);
            }
            if t.attr & attr::USER_DEFINED != 0 {
                user_defined.insert(&t.text, 0);
            }
        }
        let _ = max;
        Ok(Ugm {
            charsmap,
            xcda,
            replacements_start,
            token_matcher,
            user_defined,
            unknown_score: f64::from(min - 10.0),
        })
    }

    fn node(&self, i: usize) -> Result<u32, Error> {
        self.xcda
            .get(i)
            .copied()
            .ok_or_else(|| Error::Unsupported("Index out of array bounds in XCDA array!".into()))
    }

    fn base(&self, i: usize) -> Result<u32, Error> {
        let p = self.node(i)?;
        Ok((p >> 10) << ((p & (1 << 9)) >> 6))
    }

    /// `normalize_prefix`: (replacement bytes, input bytes consumed).
    fn normalize_prefix<'a>(
        &'a self,
        input: &'a [u8],
        off: usize,
        budget: &mut Budget,
    ) -> Result<(&'a [u8], usize), Error> {
        if off == input.len() {
            return Ok((&[], 0));
        }
        let ud = self.user_defined.walk_len(&input[off..], budget)?;
        if ud > 0 {
            return Ok((&input[off..off + ud], ud));
        }
        let (mut best_len, mut best_off) = (0, 0);
        if !self.xcda.is_empty() {
            let mut node = self.base(0)? as usize;
            for (p, &c) in input.iter().enumerate().skip(off) {
                if c == 0 {
                    break;
                }
                // A character map whose array cycles walks on past every real key.
                budget.charge(1)?;
                node ^= c as usize;
                let packed = self.node(node)?;
                if packed & ((1 << 31) | 0xFF) != u32::from(c) {
                    break;
                }
                let leaf = (packed >> 8) & 1 != 0;
                node ^= self.base(node)? as usize;
                if leaf {
                    best_len = p - off + 1;
                    best_off = (self.node(node)? & ((1 << 31) - 1)) as usize;
                }
            }
        }
        if best_len > 0 {
            let rep = &self.charsmap[self.replacements_start..];
            let s = rep.get(best_off..).ok_or_else(|| {
                Error::Unsupported("Index out of array bounds in precompiled charsmap!".into())
            })?;
            let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
            return Ok((&s[..end], best_len));
        }
        let mut o = off;
        match unicode::cpt_from_utf8(input, &mut o) {
            Some(_) => Ok((&input[off..o], o - off)),
            None => Ok(("\u{FFFD}".as_bytes(), 1)),
        }
    }

    fn normalize(
        &self,
        tok: &Tokenizer,
        input: &[u8],
        budget: &mut Budget,
    ) -> Result<Vec<u8>, Error> {
        let mut out = Vec::with_capacity(input.len() * 3);
        let space: &[u8] = if tok.escape_whitespaces {
            "▁".as_bytes()
        } else {
            b" "
        };
        let prepend = !tok.treat_whitespace_as_suffix && tok.add_space_prefix;
        let append = tok.treat_whitespace_as_suffix && tok.add_space_prefix;
        let merge = tok.remove_extra_whitespaces;
        let (mut prepended, mut non_ws) = (false, false);
        let mut off = 0;
        while off < input.len() {
            let (norm, consumed) = self.normalize_prefix(input, off, budget)?;
            for &c in norm {
                if c != b' ' {
                    if !non_ws {
                        non_ws = true;
                        if (prepend && !prepended) || merge {
                            out.extend_from_slice(space);
                            prepended = true;
                        }
                    }
                    out.push(c);
                } else {
                    non_ws = false;
                    if !merge {
                        out.extend_from_slice(space);
                    }
                }
            }
            off += consumed;
        }
        if append {
            out.extend_from_slice(space);
        }
        Ok(out)
    }

    pub(crate) fn tokenize(
        &self,
        tok: &Tokenizer,
        text: &[u8],
        budget: &mut Budget,
        out: &mut Vec<TokenId>,
    ) -> Result<(), Error> {
        let start = out.len();
        let norm = self.normalize(tok, text, budget)?;
        let len = norm.len();
        if len == 0 {
            return Ok(());
        }
        let unk = tok.unk.unwrap_or(u32::MAX);
        // (token, input offset, score sum) per end offset.
        // The normalized text is charged to the budget (a character map can expand each
        // character), which also keeps it under u32::MAX: 16 bytes a place, not 24.
        budget.charge(len as u64)?;
        let len32 = u32::try_from(len)
            .map_err(|_| Error::Limit("a normalized text past u32::MAX bytes".into()))?;
        let mut best = vec![(unk, 0u32, -f64::MAX); len32 as usize + 1];
        best[0] = (unk, 0, 0.0);
        let at = |i: usize| norm.get(i).copied().unwrap_or(0);
        let mut off = 0;
        while off < len {
            let n_units = len_utf8(norm[off]).min(len - off);
            let mut single = false;
            let current = best[off].2;
            let mut p = off;
            let mut node = self
                .token_matcher
                .root()
                .and_then(|r| self.token_matcher.child(r, at(p)));
            p += 1;
            while p <= len {
                let Some(nd) = node else { break };
                if let Some(id) = self.token_matcher.value(nd) {
                    if p - off == n_units {
                        single = true;
                    }
                    let t = &tok.tokens[id as usize];
                    let score = if t.attr & attr::USER_DEFINED != 0 {
                        0.0
                    } else {
                        f64::from(t.score)
                    };
                    let challenger = current + score;
                    if challenger > best[p].2 {
                        best[p] = (id, off as u32, challenger);
                    }
                }
                budget.charge(1)?;
                node = self.token_matcher.child(nd, at(p));
                p += 1;
            }
            if !single {
                let challenger = current + self.unknown_score;
                let p = off + n_units;
                if challenger > best[p].2 {
                    best[p] = (unk, off as u32, challenger);
                }
            }
            off += n_units;
        }
        let mut prev_unknown = false;
        let mut i = len;
        loop {
            let (id, from, _) = best[i];
            let is_unknown = id == unk;
            if !(prev_unknown && is_unknown) {
                if id == u32::MAX {
                    return Err(Error::Unsupported("UNK token needed but absent".into()));
                }
                out.push(id);
            }
            if from == 0 {
                break;
            }
            prev_unknown = is_unknown;
            i = from as usize;
        }
        out[start..].reverse();
        Ok(())
    }
}
