//! How llama.cpp reads hyperparameters whose value may differ per layer
//! ([`get_key_or_arr`]), and the sliding-window layouts its `load_hparams` hard-codes per
//! architecture ([`sliding_window`]). The schema checks files with them; gguf-fit sizes the
//! caches with them.

use std::fmt;

use gguf_grammar::{Array, Value};

/// A hyperparameter as llama.cpp's `get_key_or_arr` reads it: one value for every block, or
/// an array with one per block.
#[derive(Clone, Copy, Debug)]
pub enum KeyOrArr<'a> {
    /// One value, the same in every block.
    One(Value<'a>),
    /// One value per block.
    PerLayer(Array<'a>),
}

/// An array whose length is not the block count: llama.cpp fails to load the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrongArrayLength {
    /// The key, e.g. `llama.attention.head_count`.
    pub key: String,
    /// The block count.
    pub expected: u64,
    /// The array's length.
    pub got: u64,
}

impl fmt::Display for WrongArrayLength {
    /// llama.cpp's message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let WrongArrayLength { key, expected, got } = self;
        write!(
            f,
            "key {key} has wrong array length; expected {expected}, got {got}"
        )
    }
}

/// `get_key_or_arr`: `value` (of `key`) is one value for every block, or an array of exactly
/// `n_layer` values (any length when the block count is not known).
///
/// ```
/// use gguf_grammar::Value;
/// use gguf_llama::hparams::{get_key_or_arr, KeyOrArr};
///
/// assert!(matches!(get_key_or_arr("llama.attention.head_count", Value::U32(8), Some(2)), Ok(KeyOrArr::One(_))));
/// ```
pub fn get_key_or_arr<'a>(
    key: &str,
    value: Value<'a>,
    n_layer: Option<u64>,
) -> Result<KeyOrArr<'a>, WrongArrayLength> {
    let Some(array) = value.as_array() else {
        return Ok(KeyOrArr::One(value));
    };
    let got = array.len() as u64;
    match n_layer {
        Some(expected) if expected != got => Err(WrongArrayLength {
            key: key.to_string(),
            expected,
            got,
        }),
        _ => Ok(KeyOrArr::PerLayer(array)),
    }
}

/// How the blocks of an architecture with a hard-coded sliding window see the past
/// (`llama_hparams::swa_type` and `set_swa_pattern` in `load_hparams`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlidingWindow {
    /// Chunks of the window's size (`LLAMA_SWA_TYPE_CHUNKED`, llama4) rather than a window
    /// sliding with each token.
    pub chunked: bool,
    /// `set_swa_pattern(n)`: of every `n` blocks, one uses full attention.
    pub pattern: u32,
    /// Whether that block is the first of every `n` (`dense_first`), else the last.
    pub dense_first: bool,
    /// Where the window's size comes from.
    pub size: WindowSize,
    /// When the architecture has the layout.
    pub applies: WindowApplies,
}

/// Where a sliding window's size comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowSize {
    /// `{arch}.attention.sliding_window`, required.
    Key,
    /// `{arch}.attention.sliding_window`, else this.
    KeyOr(u32),
    /// This, whatever the file says.
    Fixed(u32),
}

/// When an architecture has its sliding-window layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowApplies {
    /// Always.
    Always,
    /// Only with this many blocks (exaone4: its 32B model).
    BlockCount(u32),
    /// Only when `{arch}.attention.sliding_window` is present and not 0 (smallthinker).
    WindowSet,
}

const fn window(pattern: u32, size: WindowSize) -> SlidingWindow {
    SlidingWindow {
        chunked: false,
        pattern,
        dense_first: false,
        size,
        applies: WindowApplies::Always,
    }
}

/// The architectures whose sliding-window layout llama.cpp hard-codes, by name.
pub const SLIDING_WINDOWS: &[(&str, SlidingWindow)] = &[
    (
        "llama4",
        SlidingWindow {
            chunked: true,
            ..window(4, WindowSize::Fixed(8192))
        },
    ),
    ("gemma2", window(2, WindowSize::KeyOr(4096))),
    ("gemma3", window(6, WindowSize::Key)),
    ("gemma3n", window(5, WindowSize::Key)),
    ("gemma-embedding", window(6, WindowSize::Key)),
    // Its key is required: the layout applies to every model, but one block, all windowed,
    // decodes (measured), unlike gemma3's.
    (
        "exaone-moe",
        SlidingWindow {
            applies: WindowApplies::WindowSet,
            ..window(4, WindowSize::Key)
        },
    ),
    (
        "afmoe",
        SlidingWindow {
            applies: WindowApplies::WindowSet,
            ..window(4, WindowSize::Key)
        },
    ),
    (
        "mellum",
        SlidingWindow {
            applies: WindowApplies::WindowSet,
            ..window(4, WindowSize::Key)
        },
    ),
    ("cohere2", window(4, WindowSize::Key)),
    ("gpt-oss", window(2, WindowSize::Key)),
    (
        "cohere2moe",
        SlidingWindow {
            dense_first: true,
            ..window(4, WindowSize::Key)
        },
    ),
    (
        "exaone4",
        SlidingWindow {
            applies: WindowApplies::BlockCount(64),
            ..window(4, WindowSize::KeyOr(4096))
        },
    ),
    (
        "smallthinker",
        SlidingWindow {
            dense_first: true,
            applies: WindowApplies::WindowSet,
            ..window(4, WindowSize::Fixed(4096))
        },
    ),
];

/// The sliding-window layout of architecture `arch`, if llama.cpp hard-codes one.
///
/// ```
/// use gguf_llama::hparams::sliding_window;
/// assert_eq!(sliding_window("gemma3").map(|w| w.pattern), Some(6));
/// assert_eq!(sliding_window("llama"), None);
/// ```
pub fn sliding_window(arch: &str) -> Option<&'static SlidingWindow> {
    SLIDING_WINDOWS
        .iter()
        .find(|(name, _)| *name == arch)
        .map(|(_, window)| window)
}

impl SlidingWindow {
    /// Which of `n_layer` blocks use the window (`set_swa_pattern`).
    ///
    /// ```
    /// use gguf_llama::hparams::sliding_window;
    /// let gemma2 = sliding_window("gemma2").unwrap();
    /// assert_eq!(gemma2.layers(3), [true, false, true]);
    /// ```
    pub fn layers(&self, n_layer: u32) -> Vec<bool> {
        let n = self.pattern;
        (0..n_layer)
            .map(|il| match n {
                0 => true,
                _ if self.dense_first => il % n != 0,
                _ => il % n < n - 1,
            })
            .collect()
    }

    /// The fewest blocks with which one uses full attention and, when the first block is the
    /// dense one, one the window, when every model of the architecture has the layout (0
    /// otherwise): with fewer, llama.cpp crashes in its first decode (SIGSEGV; gemma-embedding:
    /// `GGML_ASSERT(buffer)`), or, without a windowed block (cohere2moe), aborts creating its
    /// context (`GGML_ASSERT(hparams.is_swa_any())` in 0.3.36's `src/llama-model.cpp`).
    pub fn fewest_blocks(&self) -> u64 {
        match (self.applies, self.dense_first) {
            (WindowApplies::Always, false) => u64::from(self.pattern),
            (WindowApplies::Always, true) => 2,
            _ => 0,
        }
    }
}
