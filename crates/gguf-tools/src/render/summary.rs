//! The one-screen model summary (`gguf dump --summary`): architecture, name, parameter count,
//! size label, context length, layers, heads, vocabulary, quantization and bits per weight,
//! as [`gguf_grammar::summary`] computes them.

use std::io::{self, Write};

use gguf_grammar::escape::Terminal;
use gguf_grammar::summary::size_label;
use gguf_grammar::Gguf;
use gguf_llama::schema::file_type_name;

/// `1234567` → `1,234,567`.
fn grouped(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn or_dash(value: Option<impl ToString>) -> String {
    value.map_or_else(|| "-".into(), |v| v.to_string())
}

/// Writes the summary of `gguf`.
///
/// ```
/// let bytes = std::fs::read("../../tests/conformance/cases/llama-8-tokens.gguf").unwrap();
/// let gguf = gguf_grammar::Gguf::parse(&bytes).unwrap();
/// let mut out = Vec::new();
/// gguf_tools::render::summary::write(&gguf, &mut out).unwrap();
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.contains("vocabulary     8\n"), "{text}");
/// assert!(text.contains("parameters     9,824 (10K)\n"), "{text}");
/// ```
pub fn write(gguf: &Gguf<'_>, out: &mut impl Write) -> io::Result<()> {
    let s = gguf.summary();
    let hp = &s.hparams;
    let mut line = |label: &str, value: String| writeln!(out, "{label:<14} {value}");
    let text = |t: Option<&str>| or_dash(t.map(|t| Terminal(t.as_bytes())));
    line("architecture", text(hp.architecture))?;
    line("name", text(s.name))?;
    let parameters = match s.parameters {
        _ if s.tensors == 0 => "0 (vocabulary-only: no tensors)".into(),
        Some(n) => format!("{} ({})", grouped(n), size_label(n)),
        None => "? (overflows)".into(),
    };
    line("parameters", parameters)?;
    line("size label", text(s.size_label))?;
    line("context", or_dash(hp.context_length))?;
    line("layers", or_dash(hp.block_count))?;
    let kv = hp.head_count_kv.or(hp.head_count);
    line(
        "heads",
        format!("{} ({} kv heads)", or_dash(hp.head_count), or_dash(kv)),
    )?;
    line("embedding", or_dash(hp.embedding_length))?;
    line("feed-forward", or_dash(hp.feed_forward_length))?;
    if let Some(n) = hp.expert_count.filter(|&n| n > 0) {
        line(
            "experts",
            format!("{n} ({} used per token)", or_dash(hp.expert_used_count)),
        )?;
    }
    line("vocabulary", or_dash(hp.n_vocab()))?;
    let file_type = match s.file_type {
        Some(ft) => format!(
            "{} (file type {ft})",
            file_type_name(ft).unwrap_or("unknown")
        ),
        None => "-".into(),
    };
    let types: Vec<String> = s
        .tensor_types
        .iter()
        .map(|(ty, n)| format!("{n} {ty}"))
        .collect();
    let types = match types.is_empty() {
        true => String::new(),
        false => format!("; tensors: {}", types.join(", ")),
    };
    line("quantization", format!("{file_type}{types}"))?;
    let bpw = match (s.bits_per_weight(), s.tensor_bytes) {
        (Some(bpw), Some(bytes)) => format!("{bpw:.2} ({} bytes of tensor data)", grouped(bytes)),
        _ => "-".into(),
    };
    line("bits/weight", bpw)
}
