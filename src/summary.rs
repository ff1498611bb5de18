//! The figures people ask of a model first, computed from the metadata and the tensor
//! descriptors only: hyperparameters ([`Hparams`]), parameter count, size label, bits per
//! weight ([`Summary`]). `gguf_tools::render::summary` prints them; `gguf_llama::schema`
//! checks the hyperparameters.
//!
//! The parameter count is the sum of the tensors' element counts, bits per weight the
//! tensors' byte sizes (from the ggml type table) over that count.

use crate::grammar::value::Value;
use crate::{GgmlType, Gguf};

/// A non-negative integer of any type, widened to u64.
///
/// ```
/// use gguf_grammar::{summary::count, Value};
/// assert_eq!(count(Value::I32(7)), Some(7));
/// assert_eq!(count(Value::I8(-1)), None);
/// assert_eq!(count(Value::F32(7.0)), None);
/// ```
pub fn count(value: Value<'_>) -> Option<u64> {
    value
        .as_u64()
        .or_else(|| value.as_i64().and_then(|v| u64::try_from(v).ok()))
}

/// The hyperparameters: each [`Hparams`] field beside the key it is read from, in one list.
/// Generates the struct, its reader and the [`keys`] constants.
macro_rules! hparams {
    ($($field:ident, $CONST:ident = $key:literal, $note:literal;)*) => {
        /// A model's hyperparameters as its keys state them: `None` where a key is absent or
        /// is not a non-negative integer. Read for any architecture (the key names are the
        /// LLaMA ones).
        ///
        /// ```
        /// use gguf_grammar::{summary::Hparams, Gguf};
        ///
        /// let bytes = std::fs::read("tests/conformance/cases/llama-8-tokens.gguf").unwrap();
        /// let hp = Hparams::read(&Gguf::parse(&bytes).unwrap());
        /// assert_eq!((hp.architecture, hp.head_count, hp.head_count_kv), (Some("llama"), Some(4), Some(2)));
        /// assert_eq!(hp.n_vocab(), Some(8));
        /// ```
        #[derive(Clone, Debug, Default, PartialEq, Eq)]
        pub struct Hparams<'a> {
            /// `general.architecture`.
            pub architecture: Option<&'a str>,
            $(
                #[doc = concat!("`", $key, "`", $note, ".")]
                pub $field: Option<u64>,
            )*
            /// The length of `tokenizer.ggml.tokens`, when it is an array.
            pub n_tokens: Option<u64>,
        }

        /// The keys of the hyperparameters, with `{arch}` standing for the architecture's
        /// name: [`arch_key`] fills it in.
        pub mod keys {
            $(
                #[doc = concat!("`", $key, "`: read into [`Hparams::", stringify!($field), "`](super::Hparams::", stringify!($field), ").")]
                pub const $CONST: &str = $key;
            )*
        }

        impl<'a> Hparams<'a> {
            /// Reads the hyperparameters of `gguf`'s architecture.
            pub fn read(gguf: &Gguf<'a>) -> Self {
                Self::read_with(|key| gguf.get(key))
            }

            /// Reads the hyperparameters from `value`, which gives the first value stored
            /// under a key (a caller that has indexed the keys looks each up once).
            pub fn read_with(value: impl Fn(&str) -> Option<Value<'a>>) -> Self {
                let architecture = value("general.architecture").and_then(|v| v.as_str());
                let arch = architecture.unwrap_or("");
                let get = |key: &str| value(&arch_key(key, arch)).and_then(count);
                Hparams {
                    architecture,
                    $($field: get(keys::$CONST),)*
                    n_tokens: value("tokenizer.ggml.tokens")
                        .and_then(|v| v.as_array())
                        .map(|a| a.len() as u64),
                }
            }
        }
    };
}

hparams! {
    context_length, CONTEXT_LENGTH = "{arch}.context_length", "";
    embedding_length, EMBEDDING_LENGTH = "{arch}.embedding_length", " (`n_embd`)";
    block_count, BLOCK_COUNT = "{arch}.block_count", " (`n_layer`)";
    feed_forward_length, FEED_FORWARD_LENGTH = "{arch}.feed_forward_length", " (`n_ff`)";
    head_count, HEAD_COUNT = "{arch}.attention.head_count", " (`n_head`)";
    head_count_kv, HEAD_COUNT_KV = "{arch}.attention.head_count_kv",
        " (`n_head_kv`; llama.cpp defaults it to `n_head`)";
    key_length, KEY_LENGTH = "{arch}.attention.key_length",
        " (`n_embd_head_k`; default `n_embd / n_head`)";
    value_length, VALUE_LENGTH = "{arch}.attention.value_length",
        " (`n_embd_head_v`; default `n_embd / n_head`)";
    rope_dimension_count, ROPE_DIMENSION_COUNT = "{arch}.rope.dimension_count",
        " (`n_rot`; default `n_embd_head_k`)";
    vocab_size, VOCAB_SIZE = "{arch}.vocab_size", "";
    expert_count, EXPERT_COUNT = "{arch}.expert_count", "";
    expert_used_count, EXPERT_USED_COUNT = "{arch}.expert_used_count", "";
}

/// A key of [`keys`] (or of the schema's tables) for architecture `arch`: `{arch}` replaced.
///
/// ```
/// use gguf_grammar::summary::{arch_key, keys};
/// assert_eq!(arch_key(keys::HEAD_COUNT, "llama"), "llama.attention.head_count");
/// assert_eq!(arch_key("general.name", "llama"), "general.name");
/// ```
pub fn arch_key(key: &str, arch: &str) -> String {
    key.replace("{arch}", arch)
}

impl Hparams<'_> {
    /// The vocabulary size: the number of tokens, else `{arch}.vocab_size`.
    pub fn n_vocab(&self) -> Option<u64> {
        self.n_tokens.or(self.vocab_size)
    }
}

/// What the summary shows, computed from a parsed file.
///
/// ```
/// use gguf_grammar::{summary::Summary, Gguf, GgmlType};
///
/// let bytes = std::fs::read("tests/conformance/cases/llama-8-tokens.gguf").unwrap();
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
#[non_exhaustive]
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
/// use gguf_grammar::summary::size_label;
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
