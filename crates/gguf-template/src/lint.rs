//! Diagnostics for a chat template: it does not parse (in jinja2, or in llama.cpp's engine),
//! does not render a minimal conversation, raises for an ordinary one, names special tokens
//! the vocabulary does not have, writes a BOS other than the file's, or never emits the
//! generation prompt.

use crate::codes;
use crate::read::{templates, SpecialTokens};
use crate::render::{parse, render, Conversation, Limits, RenderError};
use gguf_grammar::validate::{self, Code, References};
use gguf_grammar::Gguf;
use serde_json::json;
use std::collections::HashSet;
use std::fmt;

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The template works, but something is likely wrong.
    Warning,
    /// The template cannot be used as it is.
    Error,
}

/// One diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// A stable code, e.g. `template-syntax`.
    pub code: &'static str,
    /// Warning or error.
    pub level: Level,
    /// Where in the template, when known: 1-based line and column.
    pub location: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.level {
            Level::Warning => "warning",
            Level::Error => "error",
        };
        match self.location {
            Some((l, c)) => write!(f, "{level} [{}] {l}:{c}: {}", self.code, self.message),
            None => write!(f, "{level} [{}] {}", self.code, self.message),
        }
    }
}

fn conversation(messages: serde_json::Value, add_generation_prompt: bool) -> Conversation {
    Conversation {
        messages,
        add_generation_prompt,
        ..Conversation::default()
    }
}

/// The minimal conversation: one user message, with the generation prompt.
pub fn minimal() -> Conversation {
    conversation(json!([{"role": "user", "content": "Hello"}]), true)
}

/// An ordinary conversation: system, user, assistant, user.
pub fn ordinary(add_generation_prompt: bool) -> Conversation {
    conversation(
        json!([
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi! How can I help?"},
            {"role": "user", "content": "Tell me a joke."}
        ]),
        add_generation_prompt,
    )
}

/// Strings in the template's text that look like special tokens: `<|name|>`, `<｜name｜>`.
fn token_like(source: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for (open, close) in [("<|", "|>"), ("<｜", "｜>")] {
        let mut rest = source;
        let mut base = 0;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len()..];
            let Some(len) = after.find(close) else { break };
            let inner = &after[..len];
            let ok = !inner.is_empty()
                && inner.chars().count() <= 64
                && !inner.contains(['<', '>', '\n', '\'', '"', '{', '}', ' '])
                && !inner.contains(open)
                && !inner.contains('|');
            let token_end = start + open.len() + len + close.len();
            if ok {
                found.push(&source[base + start..base + token_end]);
                rest = &rest[token_end..];
                base += token_end;
            } else {
                rest = &rest[start + open.len()..];
                base += start + open.len();
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// Literal BOS spellings of the common vocabularies.
const BOS_SPELLINGS: [&str; 4] = ["<s>", "<|begin_of_text|>", "<bos>", "<|startoftext|>"];

/// Lints one template. `vocab` is the file's vocabulary (`tokenizer.ggml.tokens`), when it
/// has one.
pub fn lint(
    source: &str,
    special: &SpecialTokens,
    vocab: Option<&HashSet<&str>>,
) -> Vec<Diagnostic> {
    lint_within(source, special, vocab, &Limits::default())
}

/// [`lint`] with the renders bounded by `limits` (a file's shared deadline).
fn lint_within(
    source: &str,
    special: &SpecialTokens,
    vocab: Option<&HashSet<&str>>,
    limits: &Limits,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if let Err(RenderError::Syntax {
        line,
        column,
        message,
    }) = parse(source)
    {
        out.push(Diagnostic {
            code: "template-syntax",
            level: Level::Error,
            location: Some((line, column)),
            message: format!("does not parse: {message}"),
        });
        return out;
    }
    if let Some((line, column, construct)) = crate::minja::llama_cpp_syntax(source) {
        out.push(Diagnostic {
            code: "template-llama-cpp-syntax",
            level: Level::Error,
            location: Some((line, column)),
            message: format!(
                "llama.cpp's engine (minja) does not parse {construct}: llama.cpp would use chatml instead"
            ),
        });
    }
    let at = |e: &RenderError| match e {
        RenderError::Runtime { line: Some(l), .. } => Some((*l, 1)),
        _ => None,
    };
    if let Err(e) = render(source, &minimal(), special, limits) {
        out.push(Diagnostic {
            code: "template-minimal-render",
            level: Level::Error,
            location: at(&e),
            message: format!("does not render a one-message conversation: {e}"),
        });
    }
    let with = render(source, &ordinary(true), special, limits);
    let without = render(source, &ordinary(false), special, limits);
    match (&with, &without) {
        (Err(e), _) | (_, Err(e)) => out.push(Diagnostic {
            code: "template-ordinary-render",
            level: Level::Warning,
            location: at(e),
            message: format!("fails for a system/user/assistant/user conversation: {e}"),
        }),
        (Ok(a), Ok(b)) if a == b => out.push(Diagnostic {
            code: "template-no-generation-prompt",
            level: Level::Warning,
            location: None,
            message: "add_generation_prompt changes nothing: the template never opens the assistant's turn"
                .into(),
        }),
        _ => {}
    }
    if let Some(vocab) = vocab {
        for token in token_like(source) {
            if !vocab.contains(token) {
                out.push(Diagnostic {
                    code: "template-token-not-in-vocab",
                    level: Level::Warning,
                    location: None,
                    message: format!(
                        "{token:?} is written by the template but is not a token of the vocabulary"
                    ),
                });
            }
        }
    }
    if let Some(bos) = special.get("bos_token") {
        for spelling in BOS_SPELLINGS {
            let written = ["'", "\""]
                .iter()
                .any(|q| source.contains(&format!("{q}{spelling}")));
            if spelling != bos && written && vocab.is_some_and(|v| !v.contains(spelling)) {
                out.push(Diagnostic {
                    code: "template-bos-mismatch",
                    level: Level::Warning,
                    location: None,
                    message: format!(
                        "the template writes {spelling:?} literally but the file's BOS \
                         (tokenizer.ggml.bos_token_id) is {bos:?}"
                    ),
                });
            }
        }
    }
    out
}

/// The diagnostics of every template in a file, with the key of each.
pub fn lint_gguf(gguf: &Gguf<'_>) -> Vec<(String, Vec<Diagnostic>)> {
    let special = SpecialTokens::from_gguf(gguf);
    let tokens = gguf
        .get_array("tokenizer.ggml.tokens")
        .ok()
        .and_then(|a| a.strs());
    let vocab: Option<HashSet<&str>> = tokens.map(|strs| strs.filter_map(|s| s.ok()).collect());
    let (found, errors) = templates(gguf);
    let mut out: Vec<(String, Vec<Diagnostic>)> = errors
        .into_iter()
        .map(|e| {
            (
                e.key.clone(),
                vec![Diagnostic {
                    code: "template-not-text",
                    level: Level::Error,
                    location: None,
                    message: e.problem.into(),
                }],
            )
        })
        .collect();
    // One deadline for the whole file: many templates that each run to the per-render bound
    // do not multiply it.
    let limits = Limits {
        not_after: Some(
            std::time::Instant::now() + std::time::Duration::from_secs(crate::bounds::FILE_SECONDS),
        ),
        ..Limits::default()
    };
    for t in found {
        out.push((
            t.key,
            lint_within(&t.source, &special, vocab.as_ref(), &limits),
        ));
    }
    out
}

/// The lint of every template in `gguf` as `gguf check` diagnostics (`template-*` codes, at
/// the template's key/value pair): what `--schema` and `--profile llama.cpp` report, in the
/// CLI, the Python package and the inspector alike. None rejects: llama.cpp loads a file
/// whatever its template.
pub fn check(gguf: &Gguf<'_>) -> Vec<validate::Diagnostic> {
    diagnostics(gguf, &lint_gguf(gguf))
}

/// [`check`]'s diagnostics from `lints`, [`lint_gguf`]'s findings on `gguf`.
pub fn diagnostics(
    gguf: &Gguf<'_>,
    lints: &[(String, Vec<Diagnostic>)],
) -> Vec<validate::Diagnostic> {
    let mut out = Vec::new();
    for (key, found) in lints {
        let Some(index) = gguf
            .kvs
            .iter()
            .position(|kv| kv.key.as_bytes() == key.as_bytes())
        else {
            continue;
        };
        let at = validate::At::kv(gguf, index);
        for d in found {
            // Every lint code is in the one list (crates/gguf-cli/tests/cli_template.rs checks them all).
            debug_assert!(Code::find(codes::ALL, d.code).is_some(), "{}", d.code);
            let code = Code::find(codes::ALL, d.code).unwrap_or(codes::TEMPLATE_SYNTAX);
            let place = d
                .location
                .map_or(String::new(), |(l, c)| format!("line {l}, column {c}: "));
            out.push(validate::Diagnostic {
                code,
                severity: code.severity(),
                span: at.span.clone(),
                path: at.path.clone(),
                message: format!("chat template: {place}{}", d.message),
                rejected_by: References::NONE,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::token_like;

    #[test]
    fn token_like_strings() {
        assert_eq!(
            token_like("{{ '<|im_start|>' + role }}<|a|b|> <｜User｜> <|x y|> '<|'"),
            vec!["<|im_start|>", "<｜User｜>"]
        );
    }
}
