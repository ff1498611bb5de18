//! What the llama.cpp releases of [`Release`] know by name: their architectures
//! (`LLM_ARCH_NAMES` in `src/llama-arch.cpp`) and the pre-tokenizers of their BPE vocabularies
//! with the settings `llama_vocab::impl::load` (`src/llama-vocab.cpp`) gives each, in their
//! order there. Each entry names the releases that know it.

use crate::{Release, Releases};

const ALL: Releases = Releases::ALL;

/// Every architecture name llama.cpp's loader accepts in `general.architecture`, with the
/// releases that accept it; any other makes it fail with "unknown model architecture".
pub const LLAMA_CPP_ARCHITECTURES: &[(&str, Releases)] = &[
    ("llama", ALL),
    ("llama4", ALL),
    ("deci", ALL),
    ("falcon", ALL),
    ("grok", ALL),
    ("gpt2", ALL),
    ("gptj", ALL),
    ("gptneox", ALL),
    ("mpt", ALL),
    ("baichuan", ALL),
    ("starcoder", ALL),
    ("refact", ALL),
    ("bert", ALL),
    ("nomic-bert", ALL),
    ("nomic-bert-moe", ALL),
    ("neo-bert", ALL),
    ("jina-bert-v2", ALL),
    ("bloom", ALL),
    ("stablelm", ALL),
    ("qwen", ALL),
    ("qwen2", ALL),
    ("qwen2moe", ALL),
    ("qwen2vl", ALL),
    ("qwen3", ALL),
    ("qwen3moe", ALL),
    ("phi2", ALL),
    ("phi3", ALL),
    ("phimoe", ALL),
    ("plamo", ALL),
    ("plamo2", ALL),
    ("codeshell", ALL),
    ("orion", ALL),
    ("internlm2", ALL),
    ("minicpm", ALL),
    ("minicpm3", ALL),
    ("gemma", ALL),
    ("gemma2", ALL),
    ("gemma3", ALL),
    ("gemma3n", ALL),
    ("starcoder2", ALL),
    ("mamba", ALL),
    ("mamba2", ALL),
    ("jamba", ALL),
    ("falcon-h1", ALL),
    ("xverse", ALL),
    ("command-r", ALL),
    ("cohere2", ALL),
    ("dbrx", ALL),
    ("olmo", ALL),
    ("olmo2", ALL),
    ("olmoe", ALL),
    ("openelm", ALL),
    ("arctic", ALL),
    ("deepseek", ALL),
    ("deepseek2", ALL),
    ("chatglm", ALL),
    ("glm4", ALL),
    ("glm4moe", ALL),
    ("bitnet", ALL),
    ("t5", ALL),
    ("t5encoder", ALL),
    ("jais", ALL),
    ("nemotron", ALL),
    ("exaone", ALL),
    ("exaone4", ALL),
    ("rwkv6", ALL),
    ("rwkv6qwen2", ALL),
    ("rwkv7", ALL),
    ("arwkv7", ALL),
    ("granite", ALL),
    ("granitemoe", ALL),
    ("granitehybrid", ALL),
    ("chameleon", ALL),
    ("wavtokenizer-dec", ALL),
    ("plm", ALL),
    ("bailingmoe", ALL),
    ("dots1", ALL),
    ("arcee", ALL),
    ("ernie4_5", ALL),
    ("ernie4_5-moe", ALL),
    ("hunyuan-moe", ALL),
    ("hunyuan-dense", ALL),
    ("smollm3", ALL),
    ("gpt-oss", ALL),
    ("lfm2", ALL),
    ("dream", ALL),
    ("smallthinker", ALL),
    ("llada", ALL),
];

/// Whether llama.cpp `release` loads architecture `name` (else "unknown model architecture").
///
/// ```
/// use gguf_llama::{schema::loads_architecture, Release};
/// assert!(loads_architecture(Release::NEWEST, "qwen2"));
/// assert!(!loads_architecture(Release::NEWEST, "mistral3"));
/// ```
pub fn loads_architecture(release: Release, name: &str) -> bool {
    LLAMA_CPP_ARCHITECTURES
        .iter()
        .any(|(known, releases)| *known == name && releases.contains(release))
}

/// How llama.cpp sets up a BPE vocabulary for one `tokenizer.ggml.pre`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PreSettings {
    /// The name of its list of split expressions (`LLAMA_VOCAB_PRE_TYPE_*`'s `regex_exprs`
    /// in `llm_tokenizer_bpe`), e.g. `llama3`, `gpt2`.
    pub expressions: &'static str,
    /// `ignore_merges`: a word that is a token is not split by the merges.
    pub ignore_merges: bool,
    /// `add_bos`: a BOS token starts the text.
    pub add_bos: bool,
    /// `clean_spaces`: spaces before punctuation are removed when detokenizing.
    pub clean_spaces: bool,
    /// `add_sep`: a SEP token ends the text.
    pub add_sep: bool,
    /// The vocabulary has no BOS token (`special_bos_id = LLAMA_TOKEN_NULL`).
    pub no_bos_id: bool,
}

/// A `tokenizer.ggml.pre` llama.cpp knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PreTokenizer {
    /// The name, as `tokenizer.ggml.pre` holds it.
    pub name: &'static str,
    /// What llama.cpp sets up for it.
    pub settings: PreSettings,
    /// The releases that know it.
    pub releases: Releases,
}

const fn split(expressions: &'static str, clean_spaces: bool) -> PreSettings {
    PreSettings {
        expressions,
        ignore_merges: false,
        add_bos: false,
        clean_spaces,
        add_sep: false,
        no_bos_id: false,
    }
}

const LLAMA3: PreSettings = PreSettings {
    ignore_merges: true,
    add_bos: true,
    ..split("llama3", true)
};
const GPT2_SEP: PreSettings = PreSettings {
    add_sep: true,
    ..split("gpt2", true)
};
const CHATGLM4: PreSettings = PreSettings {
    no_bos_id: true,
    ..split("chatglm4", true)
};
const TEKKEN: PreSettings = PreSettings {
    ignore_merges: true,
    add_bos: true,
    ..split("tekken", false)
};
const CHAMELEON: PreSettings = PreSettings {
    add_bos: true,
    ..split("chameleon", false)
};

const fn pre(name: &'static str, settings: PreSettings) -> PreTokenizer {
    PreTokenizer {
        name,
        settings,
        releases: ALL,
    }
}

/// Every `tokenizer.ggml.pre` a BPE (`gpt2`) vocabulary may name; any other makes llama.cpp
/// fail with "unknown pre-tokenizer type" (a missing one is a warning: "default").
pub const PRE_TOKENIZERS: &[PreTokenizer] = &[
    pre("default", split("default", true)),
    pre("llama3", LLAMA3),
    pre("llama-v3", LLAMA3),
    pre("llama-bpe", LLAMA3),
    pre("falcon3", LLAMA3),
    pre("falcon-h1", LLAMA3),
    pre("pixtral", LLAMA3),
    pre("midm-2.0", LLAMA3),
    pre("lfm2", LLAMA3),
    pre("deepseek-llm", split("deepseek-llm", false)),
    pre("deepseek-coder", split("deepseek-coder", false)),
    pre("deepseek-v3", split("deepseek3-llm", false)),
    pre("falcon", split("falcon", true)),
    pre("mpt", split("gpt2", true)),
    pre("starcoder", split("starcoder", true)),
    pre("gpt-2", split("gpt2", true)),
    pre("phi-2", split("gpt2", true)),
    pre("jina-es", split("gpt2", true)),
    pre("jina-de", split("gpt2", true)),
    pre("gigachat", split("gpt2", true)),
    pre("jina-v2-es", split("gpt2", true)),
    pre("jina-v2-de", split("gpt2", true)),
    pre("a.x-4.0", split("gpt2", true)),
    pre("mellum", split("gpt2", true)),
    pre("jina-v1-en", GPT2_SEP),
    pre("jina-v2-code", GPT2_SEP),
    pre("roberta-bpe", GPT2_SEP),
    pre("refact", split("starcoder", true)),
    pre("command-r", split("starcoder", false)),
    pre("qwen2", split("qwen2", false)),
    pre("deepseek-r1-qwen", split("qwen2", false)),
    pre("stablelm2", split("qwen2", true)),
    pre("olmo", split("gpt2", true)),
    pre("dbrx", split("dbrx", true)),
    pre("smaug-bpe", split("dbrx", true)),
    pre("poro-chat", split("poro", false)),
    pre("glm4", CHATGLM4),
    pre("chatglm-bpe", CHATGLM4),
    pre("viking", split("viking", false)),
    pre("jais", split("gpt2", true)),
    pre("tekken", TEKKEN),
    pre("smollm", split("starcoder", false)),
    pre("codeshell", split("starcoder", true)),
    pre("bloom", split("poro", true)),
    pre("gpt3-finnish", split("poro", true)),
    pre("exaone", split("starcoder", true)),
    pre("exaone4", split("gpt2", true)),
    pre("chameleon", CHAMELEON),
    pre("minerva-7b", split("starcoder", true)),
    pre("megrez", split("qwen2", true)),
    pre("gpt-4o", split("gpt4o", false)),
    pre("llama4", split("gpt4o", false)),
    pre("superbpe", split("superbpe", false)),
    pre("trillion", split("gpt2", false)),
    pre("bailingmoe", split("bailingmoe", false)),
    pre("seed-coder", split("seed-coder", false)),
    pre("hunyuan", split("qwen2", false)),
    pre("hunyuan-dense", split("deepseek3-llm", false)),
    pre("kimi-k2", split("kimi-k2", false)),
];

/// The pre-tokenizer `name` in llama.cpp `release`, if it knows it.
///
/// ```
/// use gguf_llama::{schema::pre_tokenizer, Release};
/// let qwen2 = pre_tokenizer(Release::NEWEST, "qwen2").unwrap();
/// assert_eq!(qwen2.settings.expressions, "qwen2");
/// assert!(pre_tokenizer(Release::NEWEST, "qwen9").is_none());
/// ```
pub fn pre_tokenizer(release: Release, name: &str) -> Option<&'static PreTokenizer> {
    PRE_TOKENIZERS
        .iter()
        .find(|p| p.name == name && p.releases.contains(release))
}
