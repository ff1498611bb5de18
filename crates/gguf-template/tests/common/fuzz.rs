//! The check of the `template` fuzz target (fuzz/fuzz_targets/template.rs), replayed over its
//! corpus by tests/fuzz_replay.rs: any template source and messages render or fail with an
//! error within the sandbox's bounds, never a panic, a stack overflow or an unbounded run.
//!
//! Input: the template source, a NUL byte, then the messages as JSON (an array of objects);
//! when that part is not such JSON, one user message holding its text. Both are taken as
//! UTF-8 with invalid bytes replaced.

use std::time::Duration;

use gguf_template::{render, Conversation, Limits, SpecialTokens};

/// Renders `data` as the module says; `Err` is a clean refusal, which is fine.
pub fn check(data: &[u8]) {
    let (source, rest) = match data.iter().position(|&b| b == 0) {
        Some(n) => (&data[..n], &data[n + 1..]),
        None => (data, &[][..]),
    };
    let source = String::from_utf8_lossy(source);
    let text = String::from_utf8_lossy(rest);
    let messages = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(v) if v.is_array() => v,
        _ => serde_json::json!([{ "role": "user", "content": text }]),
    };
    let conversation = Conversation {
        messages,
        tools: None,
        documents: None,
        add_generation_prompt: data.len() % 2 == 0,
        extra: serde_json::Map::new(),
        now: None,
    };
    let special = SpecialTokens {
        tokens: vec![("bos_token", "<s>".into()), ("eos_token", "</s>".into())],
    };
    // The default bounds, with a shorter deadline: a fuzzing run needs many renders a second.
    let limits = Limits {
        max_time: Duration::from_secs(2),
        ..Limits::default()
    };
    let _ = render(&source, &conversation, &special, &limits);
}
