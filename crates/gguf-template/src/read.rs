//! The templates and special tokens a GGUF file carries.

use gguf_grammar::{Gguf, Value};

/// The key of the default template; named variants are `tokenizer.chat_template.NAME`.
pub const TEMPLATE_KEY: &str = "tokenizer.chat_template";

/// One chat template stored in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatTemplate {
    /// `None` for `tokenizer.chat_template`, `Some(NAME)` for `tokenizer.chat_template.NAME`.
    pub name: Option<String>,
    /// The key it is stored under.
    pub key: String,
    /// The Jinja source.
    pub source: String,
}

/// Why a template key could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateKeyError {
    /// The key (lossily decoded).
    pub key: String,
    /// What is wrong with its value.
    pub problem: &'static str,
}

impl std::fmt::Display for TemplateKeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.key, self.problem)
    }
}

/// Every chat template in the file, in file order: the default one and the named variants.
/// A template key whose value is not a UTF-8 string is returned as an error beside them.
pub fn templates(gguf: &Gguf<'_>) -> (Vec<ChatTemplate>, Vec<TemplateKeyError>) {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for kv in &gguf.kvs {
        let key = kv.key.as_bytes();
        let name = if key == TEMPLATE_KEY.as_bytes() {
            None
        } else if let Some(name) = key
            .strip_prefix(TEMPLATE_KEY.as_bytes())
            .and_then(|rest| rest.strip_prefix(b"."))
        {
            Some(String::from_utf8_lossy(name).into_owned())
        } else {
            continue;
        };
        let key = String::from_utf8_lossy(key).into_owned();
        let problem = match kv.value {
            Value::String(s) => match s.to_str() {
                Ok(text) => {
                    found.push(ChatTemplate {
                        name,
                        key,
                        source: text.to_owned(),
                    });
                    continue;
                }
                Err(_) => "value is not valid UTF-8",
            },
            _ => "value is not a string",
        };
        errors.push(TemplateKeyError { key, problem });
    }
    (found, errors)
}

/// The special tokens a template sees, as transformers binds them (its
/// `SPECIAL_TOKENS_ATTRIBUTES`: only the ones that are set).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpecialTokens {
    /// `(name, text)`: `bos_token`, `eos_token`, `unk_token`, `sep_token`, `pad_token`,
    /// `cls_token`, `mask_token`, in that order.
    pub tokens: Vec<(&'static str, String)>,
}

/// The variable name and the GGUF key of its id (llama.cpp spells the separator key
/// `seperator`).
pub const SPECIAL_TOKEN_KEYS: [(&str, &str); 7] = [
    ("bos_token", "tokenizer.ggml.bos_token_id"),
    ("eos_token", "tokenizer.ggml.eos_token_id"),
    ("unk_token", "tokenizer.ggml.unknown_token_id"),
    ("sep_token", "tokenizer.ggml.seperator_token_id"),
    ("pad_token", "tokenizer.ggml.padding_token_id"),
    ("cls_token", "tokenizer.ggml.cls_token_id"),
    ("mask_token", "tokenizer.ggml.mask_token_id"),
];

impl SpecialTokens {
    /// The tokens named by `tokenizer.ggml.*_token_id`, looked up in `tokenizer.ggml.tokens`.
    /// An id that is missing, not an integer or out of the vocabulary binds nothing.
    pub fn from_gguf(gguf: &Gguf<'_>) -> Self {
        let vocab = gguf
            .get_array("tokenizer.ggml.tokens")
            .ok()
            .and_then(|a| a.string_index());
        let mut tokens = Vec::new();
        for (name, key) in SPECIAL_TOKEN_KEYS {
            let id = match gguf.get_u64(key) {
                Ok(id) => id,
                Err(_) => match gguf.get_i64(key).map(u64::try_from) {
                    Ok(Ok(id)) => id,
                    _ => continue,
                },
            };
            let text = usize::try_from(id)
                .ok()
                .and_then(|i| vocab.as_ref()?.get(i))
                .and_then(|s| s.to_str().ok());
            if let Some(text) = text {
                tokens.push((name, text.to_owned()));
            }
        }
        SpecialTokens { tokens }
    }

    /// The text bound to `name` (e.g. `"bos_token"`).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.tokens
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| t.as_str())
    }
}
