//! `llm_tokenizer_plamo2`: Viterbi over the tokens that start at each code point (scores
//! rounded to 1e-4 as 32-bit integers), the unmatched code points falling back to byte tokens.
//!
//! llama.cpp builds a table with a row per (suffix of a token, prefix of that suffix that is a
//! key), as strings: quadratic in a token's length. The same walk is made here over a trie of
//! the reversed suffixes (one node per distinct suffix, in code points), each node linked to
//! its longest proper prefix that is a row: the rows of a suffix are the node and its chain of
//! links, so the build is linear in the vocabulary's code points.
//!
//! One difference of representation is kept visible: llama.cpp's keys are a token's raw text
//! and every suffix re-encoded from code points. A token whose text is not UTF-8 as llama.cpp
//! re-encodes it (`\xC0\x80`, a stray byte) is a suffix that can be walked through but never a
//! row (its raw text is never looked up), exactly as in llama.cpp.

use crate::unicode::{cpt_to_utf8, cpts_from_utf8};
use crate::{attr, Budget, Error, Map, Token, TokenId};

const INVALID_SCORE: i32 = -20_000_000;
const UNKNOWN_SCORE: i32 = -10_000_000;
const ROOT: u32 = 0;

#[derive(Clone, Copy, Debug)]
struct Node {
    /// The suffix without its first code point (the trie parent), and that code point.
    parent: u32,
    first: u32,
    /// Length in code points.
    len: u32,
    /// A key whose text is looked up as a table row (every proper suffix, and each token
    /// whose text re-encodes to itself).
    row: bool,
    /// The longest proper prefix that is a row (ROOT, the sentinel, where none is).
    link: u32,
    score: i32,
    token: i32,
}

#[derive(Debug)]
pub(crate) struct Plamo2 {
    /// (node, code point) -> the node of the code point followed by that node's text.
    children: Map<(u32, u32), u32>,
    nodes: Vec<Node>,
    bytes: [TokenId; 256],
}

/// `static_cast<int32_t>(std::round(score * 1e4))`, an out-of-range value as x86 converts it.
fn int_score(score: f32) -> i32 {
    if !score.is_finite() {
        return INVALID_SCORE;
    }
    let r = (f64::from(score) * 1e4).round();
    if r >= f64::from(i32::MIN) && r <= f64::from(i32::MAX) {
        r as i32
    } else {
        i32::MIN
    }
}

/// `std::stoi(s, nullptr, 16)`: `None` where it throws (no digits).
fn stoi_hex(s: &[u8]) -> Option<i64> {
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
    let start = i;
    let mut v: i64 = 0;
    while let Some(d) = s.get(i).and_then(|&c| (c as char).to_digit(16)) {
        v = v * 16 + i64::from(d);
        i += 1;
    }
    (i > start).then_some(if neg { -v } else { v })
}

/// A `<0xXX>` byte token's value (`None`: not that form), or the error llama.cpp throws.
pub(crate) fn byte_value(text: &[u8]) -> Result<Option<u8>, Error> {
    if text.len() != 6 || !text.starts_with(b"<0x") || text[5] != b'>' {
        return Ok(None);
    }
    match stoi_hex(&text[3..5]) {
        Some(v @ 0..=255) => Ok(Some(v as u8)),
        Some(v) => Err(Error::Unsupported(format!(
            "byte token {:?} has the value {v} (llama.cpp indexes out of bounds)",
            String::from_utf8_lossy(text)
        ))),
        None => Err(Error::Unsupported(format!(
            "byte token {:?}: not hexadecimal (llama.cpp's std::stoi throws)",
            String::from_utf8_lossy(text)
        ))),
    }
}

impl Plamo2 {
    pub(crate) fn new(tokens: &[Token]) -> Result<Plamo2, Error> {
        let mut bytes = [0 as TokenId; 256];
        let mut nodes = vec![Node {
            parent: ROOT,
            first: 0,
            len: 0,
            row: false,
            link: ROOT,
            score: UNKNOWN_SCORE,
            token: -1,
        }];
        let mut children: Map<(u32, u32), u32> = Map::default();
        let mut utf8 = Vec::new();
        for (id, t) in tokens.iter().enumerate() {
            if t.attr & attr::BYTE != 0 {
                if let Some(b) = byte_value(&t.text)? {
                    bytes[b as usize] = id as TokenId;
                }
                continue;
            }
            let cpts = cpts_from_utf8(&t.text);
            utf8.clear();
            for &c in &cpts {
                cpt_to_utf8(c, &mut utf8).ok_or_else(|| {
                    Error::Unsupported(format!(
                        "token {id}: code point 0x{c:X} past U+10FFFF (llama.cpp throws)"
                    ))
                })?;
            }
            let mut node = ROOT;
            for (k, &c) in cpts.iter().enumerate().rev() {
                node = match children.get(&(node, c)) {
                    Some(&n) => n,
                    None => {
                        let n = nodes.len() as u32;
                        nodes.push(Node {
                            parent: node,
                            first: c,
                            len: (cpts.len() - k) as u32,
                            row: false,
                            link: ROOT,
                            score: INVALID_SCORE,
                            token: -1,
                        });
                        children.insert((node, c), n);
                        n
                    }
                };
                if k > 0 {
                    nodes[node as usize].row = true;
                }
            }
            if utf8 == t.text {
                let n = &mut nodes[node as usize];
                n.row = true;
                n.score = int_score(t.score);
                n.token = id as i32;
            }
        }
        if let Some(b) = bytes.iter().position(|&id| id == 0) {
            return Err(Error::Unsupported(format!(
                "no byte token <0x{b:02X}> (llama.cpp throws \"Byte token for <0x{b}> is not set\")"
            )));
        }
        // Each node's link is found from its parent's, as Aho-Corasick's failure links are
        // (linear over each token's path), in order of length: a link, and every link on the
        // chain walked, is shorter than the node.
        let mut by_len: Vec<u32> = (1..nodes.len() as u32).collect();
        by_len.sort_by_key(|&x| nodes[x as usize].len);
        for x in by_len {
            let x = x as usize;
            let Node { parent, first, .. } = nodes[x];
            let mut link = ROOT;
            if parent != ROOT {
                let mut p = nodes[parent as usize].link;
                loop {
                    if let Some(&ch) = children.get(&(p, first)) {
                        if nodes[ch as usize].row {
                            link = ch;
                            break;
                        }
                    }
                    if p == ROOT {
                        break;
                    }
                    p = nodes[p as usize].link;
                }
            }
            nodes[x].link = link;
        }
        Ok(Plamo2 {
            children,
            nodes,
            bytes,
        })
    }

    /// The first table row of a suffix's block: the suffix itself if it is a row.
    fn first_row(&self, node: u32) -> u32 {
        let n = &self.nodes[node as usize];
        if node != ROOT && n.row {
            node
        } else {
            n.link
        }
    }

    /// (score, length, token) of a row; ROOT is the block's sentinel.
    fn row(&self, node: u32) -> (i32, usize, i32) {
        if node == ROOT {
            return (UNKNOWN_SCORE, 1, -1);
        }
        let n = &self.nodes[node as usize];
        (n.score, n.len as usize, n.token)
    }

    pub(crate) fn tokenize(
        &self,
        text: &[u8],
        budget: &mut Budget,
        out: &mut Vec<TokenId>,
    ) -> Result<(), Error> {
        let mut cpts = cpts_from_utf8(text);
        if cpts.first() == Some(&0xFEFF) {
            cpts.remove(0);
        }
        let n = cpts.len();
        if n == 0 {
            return Ok(());
        }
        let mut scores = vec![1i64 << 60; n + 1];
        scores[n] = 0;
        // (piece length in code points, token or -1 for byte fallback) per position.
        let mut path = vec![(0u32, -1i32); n + 1];
        let mut suffix = ROOT;
        for i in (0..n).rev() {
            let c = cpts[i];
            let mut p = self.first_row(suffix);
            suffix = loop {
                if let Some(&ch) = self.children.get(&(p, c)) {
                    break ch;
                }
                if self.row(p).0 == UNKNOWN_SCORE {
                    break ROOT;
                }
                budget.charge(1)?;
                p = self.nodes[p as usize].link;
            };
            let mut p = self.first_row(suffix);
            loop {
                let (score, len, token) = self.row(p);
                if score > INVALID_SCORE {
                    let s = scores[i + len] - i64::from(score);
                    if s < scores[i] {
                        scores[i] = s;
                        path[i] = (len as u32, token);
                    }
                }
                if score == UNKNOWN_SCORE {
                    break;
                }
                budget.charge(1)?;
                p = self.nodes[p as usize].link;
            }
        }
        let mut pos = 0;
        while pos < n {
            let (len, token) = path[pos];
            if token >= 0 {
                out.push(token as TokenId);
            } else {
                let c = cpts[pos];
                let s = 1 + u32::from(c >= 0x80) + u32::from(c >= 0x800) + u32::from(c >= 0x10000);
                for i in 0..s {
                    let b = if s == 1 {
                        c & 0xFF
                    } else if i == 0 {
                        (0xF00 >> s) & 0xFF
                    } else {
                        0x80
                    };
                    out.push(self.bytes[((b | ((c >> ((s - i - 1) * 6)) & 0x3F)) & 0xFF) as usize]);
                }
            }
            pos += len as usize;
        }
        Ok(())
    }
}
