//! `llm_tokenizer_rwkv`: greedy longest match over the tokens' unescaped bytes.

use crate::ugm::Trie;
use crate::{Budget, Error, Token, TokenId, Tokenizer};

/// `llama_unescape_rwkv_token`.
pub(crate) fn unescape(escaped: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(escaped.len());
    let (mut escaping, mut hex_left, mut acc) = (false, 0u8, 0u8);
    for &c in escaped {
        if hex_left != 0 {
            let v = if c >= b'a' {
                c.wrapping_sub(b'a').wrapping_add(10)
            } else {
                c.wrapping_sub(b'0')
            };
            acc = (acc << 4).wrapping_add(v);
            hex_left -= 1;
            if hex_left == 0 {
                out.push(acc);
                acc = 0;
            }
            continue;
        }
        if escaping {
            match c {
                b't' => out.push(b'\t'),
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b'x' => hex_left = 2,
                _ => out.push(c),
            }
            escaping = false;
            continue;
        }
        if c == b'\\' {
            escaping = true;
            continue;
        }
        out.push(c);
    }
    out
}

#[derive(Debug)]
pub(crate) struct Rwkv {
    trie: Trie,
}

impl Rwkv {
    pub(crate) fn new(tokens: &[Token]) -> Rwkv {
        let mut trie = Trie::default();
        for (id, t) in tokens.iter().enumerate() {
            trie.insert(&unescape(&t.text), id as u32);
        }
        Rwkv { trie }
    }

    pub(crate) fn tokenize(
        &self,
        tok: &Tokenizer,
        text: &[u8],
        budget: &mut Budget,
        out: &mut Vec<TokenId>,
    ) -> Result<(), Error> {
        let at = |i: usize| text.get(i).copied().unwrap_or(0);
        let mut pos = 0;
        while pos < text.len() {
            let Some(mut node) = self.trie.root().and_then(|r| self.trie.child(r, text[pos]))
            else {
                out.push(tok.unk.ok_or_else(|| {
                    Error::Unsupported(
                        "no token matches and no UNK token (llama.cpp pushes -1)".into(),
                    )
                })?);
                pos += 1;
                continue;
            };
            let (mut id, mut len) = (0, 0);
            loop {
                if let Some(v) = self.trie.value(node) {
                    id = v;
                    len = pos + 1;
                }
                pos += 1;
                // The walk can pass the match it falls back to by a token's length.
                budget.charge(1)?;
                match self.trie.child(node, at(pos)) {
                    Some(n) => node = n,
                    None => break,
                }
            }
            if len == 0 {
                // llama.cpp loops forever here (it restarts at position 0).
                return Err(Error::Unsupported(
                    "no token is a prefix of the text (llama.cpp hangs)".into(),
                ));
            }
            out.push(id);
            pos = len;
        }
        Ok(())
    }
}
