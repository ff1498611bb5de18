//! The one-screen model summary (`gguf dump --summary`): architecture, name, parameter count,
//! size label, context length, layers, heads, vocabulary, quantization and bits per weight.
//!
//! Figures come from the metadata and the tensor descriptors only: the parameter count is the
//! sum of the tensors' element counts, bits per weight the tensors' byte sizes (from the ggml
//! type table) over that count.

use std::io::{self, Write};

use super::escape::Terminal;
use crate::validate::schema::{count, file_type_name, Hparams};
use crate::{GgmlType, Gguf};

/// What the summary shows, computed from a parsed file.
///
/// ```
/// use gguf_grammar::{render::summary::Summary, Gguf, GgmlType};
///
/// let bytes = std::fs::read("tests/conformance/cases/minimal-llama.gguf").unwrap();
/// let s = Summary::of(&Gguf::parse(&bytes).unwrap());
/// assert_eq!(s.hparams.block_count, Some(1));
/// // token_embd and output 32 x 8, three norms of 32, q and o 32 x 32, k and v 32 x 16,
/// // gate, up and down 32 x 64.
/// assert_eq!(s.parameters, Some(2 * 256 + 3 * 32 + 2 * 1024 + 2 * 512 + 3 * 2048)); // 9824
/// assert_eq!(s.tensor_types, [(GgmlType::F16, 9), (GgmlType::F32, 3)]);
/// assert_eq!(s.tensor_bytes, Some((9824 - 96) * 2 + 96 * 4));
/// assert_eq!(s.bits_per_weight(), Some(19840.0 * 8.0 / 9824.0));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Summary<'a> {
    /// The hyperparameters (architecture, context, layers, heads, vocabulary...).
    pub hparams: Hparams<'a>,
    /// `general.name`.
    pub name: Option<&'a str>,
    /// `general.size_label`.
    pub size_label: Option<&'a str>,
    /// `general.file_type`.
    pub file_type: Option<u64>,
    /// Number of tensors.
    pub tensors: usize,
    /// The sum of the tensors' element counts (`None` if it overflows).
    pub parameters: Option<u128>,
    /// The sum of the tensors' data sizes (`None` if a tensor's size is unknown).
    pub tensor_bytes: Option<u128>,
    /// How many tensors have each ggml type, most frequent first.
    pub tensor_types: Vec<(GgmlType, usize)>,
}

impl<'a> Summary<'a> {
    /// Summarises `gguf`.
    pub fn of(gguf: &Gguf<'a>) -> Self {
        let text = |key: &str| gguf.get(key).and_then(|v| v.as_str());
        // A zero dim makes zero elements wherever it is, before any product overflows.
        let elements = |dims: &[u64]| match dims.contains(&0) {
            true => Some(0),
            false => dims
                .iter()
                .try_fold(1u128, |n, &d| n.checked_mul(u128::from(d))),
        };
        let parameters = gguf
            .tensors
            .iter()
            .try_fold(0u128, |sum, t| sum.checked_add(elements(&t.info.dims)?));
        let tensor_bytes = gguf
            .tensors
            .iter()
            .try_fold(0u128, |sum, t| sum.checked_add(u128::from(t.n_bytes?)));
        // Counted in a map: a file may hold as many distinct (unknown) type ids as tensors.
        let mut counts = std::collections::BTreeMap::<GgmlType, usize>::new();
        for t in &gguf.tensors {
            *counts.entry(t.info.ggml_type).or_default() += 1;
        }
        let mut tensor_types: Vec<(GgmlType, usize)> = counts.into_iter().collect();
        tensor_types.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        Summary {
            hparams: Hparams::read(gguf),
            name: text("general.name"),
            size_label: text("general.size_label"),
            file_type: gguf.get("general.file_type").and_then(count),
            tensors: gguf.tensors.len(),
            parameters,
            tensor_bytes,
            tensor_types,
        }
    }

    /// Bits of tensor data per parameter, when there are parameters and every size is known.
    pub fn bits_per_weight(&self) -> Option<f64> {
        let params = self.parameters.filter(|&n| n > 0)?;
        Some(self.tensor_bytes? as f64 * 8.0 / params as f64)
    }
}

/// A parameter count in gguf-py's size-label notation (`model_weight_count_rounded_notation`):
/// K, M, B or T with at least two significant digits.
///
/// ```
/// use gguf_grammar::render::summary::size_label;
/// assert_eq!(size_label(134_515_008), "135M");
/// assert_eq!(size_label(8_030_261_248), "8.0B");
/// assert_eq!(size_label(9_728), "10K");
/// assert_eq!(size_label(999), "1.0K");
/// assert_eq!(size_label(1_000_000), "1000K"); // "> 1e6" for M, as gguf-py has it
/// ```
pub fn size_label(parameters: u128) -> String {
    let n = parameters as f64;
    let (scaled, suffix) = if n > 1e12 {
        (n * 1e-12, "T")
    } else if n > 1e9 {
        (n * 1e-9, "B")
    } else if n > 1e6 {
        (n * 1e-6, "M")
    } else {
        (n * 1e-3, "K")
    };
    // Python's round() rounds half to even.
    let digits = format!("{:.0}", scaled.round_ties_even());
    let digits = digits.trim_start_matches('0').len();
    let fraction = 2usize.saturating_sub(digits);
    format!("{scaled:.fraction$}{suffix}")
}

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
/// let bytes = std::fs::read("tests/corpus/ggml-vocab-llama-spm.gguf").unwrap();
/// let gguf = gguf_grammar::Gguf::parse(&bytes).unwrap();
/// let mut out = Vec::new();
/// gguf_grammar::render::summary::write(&gguf, &mut out).unwrap();
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.contains("vocabulary     32000\n"), "{text}");
/// assert!(text.contains("parameters     0 (vocabulary-only: no tensors)\n"), "{text}");
/// ```
pub fn write(gguf: &Gguf<'_>, out: &mut impl Write) -> io::Result<()> {
    let s = Summary::of(gguf);
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
