//! What the llama.cpp releases of [`Release`] know by name: their architectures
//! (`LLM_ARCH_NAMES` in `src/llama-arch.cpp`), their tokenizer models and the pre-tokenizers
//! of their BPE vocabularies with the settings `llama_vocab::impl::load` (`src/llama-vocab.cpp`)
//! gives each, in the newest release's order. Each entry names the releases that know it; a
//! name whose settings changed between releases has one entry per setting.

use crate::{Release, Releases};

const ALL: Releases = Releases::ALL;
/// Known since llama-cpp-python 0.3.36's llama.cpp.
const NEW: Releases = Releases::since(Release::LlamaCppPython0336);
/// Known until llama-cpp-python 0.3.16's llama.cpp, then changed.
const OLD: Releases = Releases::until(Release::LlamaCppPython0316);

/// Every architecture name llama.cpp's loader accepts in `general.architecture`, with the
/// releases that accept it; any other makes it fail with "unknown model architecture". The
/// newer release also names `clip` ([`MMPROJ_ARCHITECTURE`]), which it never loads as a model.
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
    ("modern-bert", NEW),
    ("nomic-bert", ALL),
    ("nomic-bert-moe", ALL),
    ("neo-bert", ALL),
    ("jina-bert-v2", ALL),
    ("jina-bert-v3", NEW),
    ("eurobert", NEW),
    ("bloom", ALL),
    ("stablelm", ALL),
    ("qwen", ALL),
    ("qwen2", ALL),
    ("qwen2moe", ALL),
    ("qwen2vl", ALL),
    ("qwen3", ALL),
    ("qwen3moe", ALL),
    ("qwen3next", NEW),
    ("qwen3vl", NEW),
    ("qwen3vlmoe", NEW),
    ("qwen35", NEW),
    ("qwen35moe", NEW),
    ("qwen4exp", NEW),
    ("phi2", ALL),
    ("phi3", ALL),
    ("phimoe", ALL),
    ("plamo", ALL),
    ("plamo2", ALL),
    ("plamo3", NEW),
    ("codeshell", ALL),
    ("orion", ALL),
    ("internlm2", ALL),
    ("minicpm", ALL),
    ("minicpm3", ALL),
    ("gemma", ALL),
    ("gemma2", ALL),
    ("gemma3", ALL),
    ("gemma3n", ALL),
    ("gemma4", NEW),
    ("gemma4-assistant", NEW),
    ("gemma-embedding", NEW),
    ("starcoder2", ALL),
    ("mamba", ALL),
    ("mamba2", ALL),
    ("maple", NEW),
    ("jamba", ALL),
    ("falcon-h1", ALL),
    ("xverse", ALL),
    ("command-r", ALL),
    ("cohere2", ALL),
    ("cohere2moe", NEW),
    ("dbrx", ALL),
    ("olmo", ALL),
    ("olmo2", ALL),
    ("olmoe", ALL),
    ("muse-glimmer", NEW),
    ("openelm", ALL),
    ("arctic", ALL),
    ("deepseek", ALL),
    ("deepseek2", ALL),
    ("deepseek2-ocr", NEW),
    ("deepseek32", NEW),
    ("deepseek4", NEW),
    ("chatglm", ALL),
    ("glm4", ALL),
    ("glm4moe", ALL),
    ("glm-dsa", NEW),
    ("bitnet", ALL),
    ("t5", ALL),
    ("t5encoder", ALL),
    ("jais", ALL),
    ("jais2", NEW),
    ("nemotron", ALL),
    ("nemotron_h", NEW),
    ("nemotron_h_moe", NEW),
    ("exaone", ALL),
    ("exaone4", ALL),
    ("exaone-moe", NEW),
    ("rwkv6", ALL),
    ("rwkv6qwen2", ALL),
    ("rwkv7", ALL),
    ("arwkv7", ALL),
    ("granite", ALL),
    ("granitemoe", ALL),
    ("granitehybrid", ALL),
    ("graniteswitch", NEW),
    ("granite_swa", NEW),
    ("chameleon", ALL),
    ("wavtokenizer-dec", ALL),
    ("plm", ALL),
    ("bailingmoe", ALL),
    ("bailingmoe2", NEW),
    ("bailingmoe3", NEW),
    ("dots1", ALL),
    ("dots3note", NEW),
    ("arcee", ALL),
    ("afmoe", NEW),
    ("laguna", NEW),
    ("ernie4_5", ALL),
    ("ernie4_5-moe", ALL),
    ("hunyuan-moe", ALL),
    ("hunyuan-dense", ALL),
    ("hunyuan_vl", NEW),
    ("hy_v3", NEW),
    ("hy_v4", NEW),
    ("smollm3", ALL),
    ("gpt-oss", ALL),
    ("lfm2", ALL),
    ("lfm2moe", NEW),
    ("dream", ALL),
    ("smallthinker", ALL),
    ("llada", ALL),
    ("llada-moe", NEW),
    ("seed_oss", NEW),
    ("grovemoe", NEW),
    ("apertus", NEW),
    ("minimax-01", NEW),
    ("hrm_text", NEW),
    ("minimax-m2", NEW),
    ("minimax-m3", NEW),
    ("cogvlm", NEW),
    ("rnd1", NEW),
    ("pangu-embedded", NEW),
    ("mistral3", NEW),
    ("eagle3", NEW),
    ("dflash", NEW),
    ("mistral4", NEW),
    ("paddleocr", NEW),
    ("mimo2", NEW),
    ("step35", NEW),
    ("spark2_5", NEW),
    ("llama-embed", NEW),
    ("maincoder", NEW),
    ("kimi-linear", NEW),
    ("kimi-k3", NEW),
    ("glm5-next", NEW),
    ("talkie", NEW),
    ("mellum", NEW),
    ("nanbeige", NEW),
    ("qwen3tts", NEW),
    ("pockettts", NEW),
];

/// The architecture llama.cpp 0.3.36 names (for `llama-quantize`) but refuses as a model:
/// "CLIP cannot be used as main model, use it with --mmproj instead" (`llama.cpp`, after the
/// hyperparameters, also with `vocab_only`). Older releases do not know the name.
pub const MMPROJ_ARCHITECTURE: (&str, Releases) = ("clip", NEW);

/// Whether llama.cpp `release` loads architecture `name` (else
/// [`architecture_refusal`] says what it prints).
///
/// ```
/// use gguf_llama::{schema::loads_architecture, Release};
/// assert!(loads_architecture(Release::NEWEST, "qwen2"));
/// assert!(loads_architecture(Release::LlamaCppPython0336, "gemma4"));
/// assert!(!loads_architecture(Release::LlamaCppPython0316, "gemma4"));
/// assert!(!loads_architecture(Release::LlamaCppPython0336, "clip"));
/// ```
pub fn loads_architecture(release: Release, name: &str) -> bool {
    LLAMA_CPP_ARCHITECTURES
        .iter()
        .any(|(known, releases)| *known == name && releases.contains(release))
}

/// What llama.cpp `release` says when it refuses architecture `name`; `None` when it loads it.
///
/// ```
/// use gguf_llama::{schema::architecture_refusal, Release};
/// assert_eq!(architecture_refusal(Release::NEWEST, "qwen2"), None);
/// assert_eq!(
///     architecture_refusal(Release::LlamaCppPython0316, "gemma4").unwrap(),
///     "unknown model architecture: 'gemma4'"
/// );
/// assert!(architecture_refusal(Release::LlamaCppPython0336, "clip").unwrap().starts_with("CLIP cannot"));
/// ```
pub fn architecture_refusal(release: Release, name: &str) -> Option<String> {
    let (clip, clip_releases) = MMPROJ_ARCHITECTURE;
    if loads_architecture(release, name) {
        None
    } else if name == clip && clip_releases.contains(release) {
        Some("CLIP cannot be used as main model, use it with --mmproj instead".into())
    } else {
        Some(format!("unknown model architecture: '{name}'"))
    }
}

/// `tokenizer.ggml.model` values llama.cpp loads (`llama_vocab::impl::load`), with the
/// releases that load each; any other fails with "unknown tokenizer". `gemma4` is a BPE
/// vocabulary whose pre-tokenizer is always `gemma4`; `hybriddna` and `whitespace` are BPE
/// vocabularies too.
pub const TOKENIZER_MODELS: &[(&str, Releases)] = &[
    ("no_vocab", ALL),
    ("none", ALL),
    ("llama", ALL),
    ("bert", ALL),
    ("gpt2", ALL),
    ("hybriddna", NEW),
    ("whitespace", NEW),
    ("t5", ALL),
    ("rwkv", ALL),
    ("test", NEW),
    ("plamo2", ALL),
    ("gemma4", NEW),
];

/// Whether llama.cpp `release` loads `tokenizer.ggml.model` `name`.
///
/// ```
/// use gguf_llama::{schema::loads_tokenizer_model, Release};
/// assert!(loads_tokenizer_model(Release::LlamaCppPython0336, "gemma4"));
/// assert!(!loads_tokenizer_model(Release::LlamaCppPython0316, "gemma4"));
/// ```
pub fn loads_tokenizer_model(release: Release, name: &str) -> bool {
    TOKENIZER_MODELS
        .iter()
        .any(|(known, releases)| *known == name && releases.contains(release))
}

/// The `tokenizer.ggml.model` values llama.cpp `release` loads.
pub fn tokenizer_models(release: Release) -> impl Iterator<Item = &'static str> {
    TOKENIZER_MODELS
        .iter()
        .filter(move |(_, releases)| releases.contains(release))
        .map(|(name, _)| *name)
}

/// The `tokenizer.ggml.pre` llama.cpp gives a vocabulary of `tokenizer.ggml.model` `model`
/// whatever the file says (`gemma4`'s), if any.
pub fn forced_pre_tokenizer(model: &str) -> Option<&'static str> {
    (model == "gemma4").then_some("gemma4")
}

/// How llama.cpp sets up a BPE vocabulary for one `tokenizer.ggml.pre`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PreSettings {
    /// The name of its list of split expressions (`LLAMA_VOCAB_PRE_TYPE_*`'s `regex_exprs`
    /// in `llm_tokenizer_bpe`), e.g. `llama3`, `gpt2`.
    pub expressions: &'static str,
    /// `byte_encode` of `llm_tokenizer_bpe`: text is GPT-2 byte-encoded before the merges
    /// (false: raw UTF-8, for `gemma4`, `sarvam-moe` and `whitespace`).
    pub byte_encode: bool,
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
    /// `escape_whitespaces`: spaces are written as U+2581 before the merges.
    pub escape_whitespaces: bool,
    /// `normalizer_opts.lowercase` before `tokenizer.ggml.normalizer.lowercase` (when
    /// present) overrides it: the `whitespace` tokenizer lowercases each word.
    pub lowercase: bool,
}

/// A `tokenizer.ggml.pre` llama.cpp knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PreTokenizer {
    /// The name, as `tokenizer.ggml.pre` holds it.
    pub name: &'static str,
    /// What llama.cpp sets up for it.
    pub settings: PreSettings,
    /// The releases that set it up so.
    pub releases: Releases,
}

const fn split(expressions: &'static str, clean_spaces: bool) -> PreSettings {
    PreSettings {
        expressions,
        byte_encode: true,
        ignore_merges: false,
        add_bos: false,
        clean_spaces,
        add_sep: false,
        no_bos_id: false,
        escape_whitespaces: false,
        lowercase: true,
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
/// SentencePiece-style BPE: spaces escaped, raw UTF-8, split only at newlines.
const fn spm_bpe(expressions: &'static str, clean_spaces: bool) -> PreSettings {
    PreSettings {
        byte_encode: false,
        escape_whitespaces: true,
        ..split(expressions, clean_spaces)
    }
}
const fn ignoring_merges(settings: PreSettings) -> PreSettings {
    PreSettings {
        ignore_merges: true,
        ..settings
    }
}

const fn pre(name: &'static str, settings: PreSettings) -> PreTokenizer {
    pre_in(name, settings, ALL)
}

const fn pre_in(name: &'static str, settings: PreSettings, releases: Releases) -> PreTokenizer {
    PreTokenizer {
        name,
        settings,
        releases,
    }
}

/// Every `tokenizer.ggml.pre` a BPE vocabulary may name; any other makes llama.cpp fail with
/// "unknown pre-tokenizer type" (a missing one is a warning: "default").
pub const PRE_TOKENIZERS: &[PreTokenizer] = &[
    pre("default", split("default", true)),
    pre_in("minicpm5", ignoring_merges(split("minicpm5", true)), NEW),
    pre("llama3", LLAMA3),
    pre("llama-v3", LLAMA3),
    pre("llama-bpe", LLAMA3),
    pre("falcon3", LLAMA3),
    pre("falcon-h1", LLAMA3),
    pre("pixtral", LLAMA3),
    pre("midm-2.0", LLAMA3),
    pre("lfm2", LLAMA3),
    pre_in("jina-v5-nano", LLAMA3, NEW),
    pre("deepseek-llm", split("deepseek-llm", false)),
    pre("deepseek-coder", split("deepseek-coder", false)),
    pre("deepseek-v3", split("deepseek3-llm", false)),
    pre_in("spark2_5", split("spark2-5", false), NEW),
    pre_in("youtu", ignoring_merges(split("youtu", false)), NEW),
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
    pre_in("modern-bert", split("gpt2", true), NEW),
    pre_in("jais-2", split("jais2", true), NEW),
    pre_in("gemma4", spm_bpe("gemma4", true), NEW),
    pre_in("granite-embed-multi-311m", spm_bpe("gemma4", true), NEW),
    pre_in("sarvam-moe", spm_bpe("sarvam-moe", false), NEW),
    pre("jina-v1-en", GPT2_SEP),
    pre("jina-v2-code", GPT2_SEP),
    pre("roberta-bpe", GPT2_SEP),
    pre_in(
        "whitespace",
        PreSettings {
            byte_encode: false,
            lowercase: false,
            ..split("whitespace", true)
        },
        NEW,
    ),
    pre("refact", split("starcoder", true)),
    pre("command-r", split("starcoder", false)),
    pre("qwen2", split("qwen2", false)),
    pre("deepseek-r1-qwen", split("qwen2", false)),
    pre_in("kormo", split("qwen2", false), NEW),
    pre_in("f2llmv2", split("qwen2", false), NEW),
    pre_in("qwen35", split("qwen35", false), NEW),
    pre("stablelm2", split("qwen2", true)),
    pre("olmo", split("gpt2", true)),
    pre("dbrx", split("dbrx", true)),
    pre("smaug-bpe", split("dbrx", true)),
    pre("poro-chat", split("poro", false)),
    pre("chatglm-bpe", CHATGLM4),
    pre_in("glm4", CHATGLM4, OLD),
    pre_in("glm4", ignoring_merges(CHATGLM4), NEW),
    pre_in("glm5", ignoring_merges(CHATGLM4), NEW),
    pre("viking", split("viking", false)),
    pre("jais", split("gpt2", true)),
    pre("tekken", TEKKEN),
    pre("smollm", split("starcoder", false)),
    pre("codeshell", split("starcoder", true)),
    pre("bloom", split("poro", true)),
    pre("gpt3-finnish", split("poro", true)),
    pre("exaone", split("starcoder", true)),
    pre("exaone4", split("gpt2", true)),
    pre_in("exaone-moe", split("exaone-moe", true), NEW),
    pre("chameleon", CHAMELEON),
    pre("minerva-7b", split("starcoder", true)),
    pre("megrez", split("qwen2", true)),
    pre("gpt-4o", split("gpt4o", false)),
    pre("llama4", split("gpt4o", false)),
    pre_in("kanana2", split("gpt4o", false), NEW),
    pre_in("talkie", split("gpt4o", false), NEW),
    pre_in(
        "granite-embed-multi-97m",
        ignoring_merges(split("granite-emb-multi", false)),
        NEW,
    ),
    pre_in("tiny_aya", split("tiny-aya", false), NEW),
    pre_in("cohere2moe", split("tiny-aya", false), NEW),
    pre("superbpe", split("superbpe", false)),
    pre("trillion", split("gpt2", false)),
    pre_in("granite-docling", split("gpt2", false), NEW),
    pre("bailingmoe", split("bailingmoe", false)),
    pre_in("bailingmoe2", split("bailingmoe", false), NEW),
    pre_in("llada-moe", split("bailingmoe", false), NEW),
    pre("seed-coder", split("seed-coder", false)),
    pre("hunyuan", split("qwen2", false)),
    pre("hunyuan-dense", split("deepseek3-llm", false)),
    pre_in("hy_v4", split("deepseek3-llm", false), NEW),
    pre_in("joyai-llm", split("deepseek3-llm", false), NEW),
    pre("kimi-k2", split("kimi-k2", false)),
    pre_in("ufakzeka", split("ufakzeka", false), NEW),
    pre_in("grok-2", split("grok-2", false), NEW),
    pre_in("afmoe", split("afmoe", false), NEW),
    pre_in("laguna", split("laguna", false), NEW),
    pre_in("minimax-m2", split("gpt4o", false), NEW),
    pre_in("solar-open", split("qwen2", false), NEW),
    pre_in("mellum2", split("starcoder", true), NEW),
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
