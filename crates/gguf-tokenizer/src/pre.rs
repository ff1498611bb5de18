//! BPE pre-tokenization: llama.cpp's `unicode_regex_split`, its hand-written splitters for
//! the GPT-2, Llama 3 and Kimi-K2 expressions (and, since 0.3.36, for the Qwen2, Qwen3.5,
//! newline-run and digit-group ones), and for the others the same "collapsed" text that
//! llama.cpp hands to `std::regex` (every code point >= 128 replaced by one stand-in per
//! Unicode category), matched here with `fancy-regex` on the same text.

use fancy_regex::Regex;
use gguf_llama::Release;

use crate::unicode::{self, flags, Flags, ACCENT_MARK, LETTER, NUMBER, PUNCTUATION, SYMBOL};
use crate::Error;

const GPT2: &str = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
const LLAMA3_A: &str = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const LLAMA3_B: &str = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const KIMI_K2: &str = "\\p{Han}+";
const QWEN2: &str = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN35: &str = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const NEWLINES: &str = "[^\\n]+|[\\n]+";
/// afmoe's name for its digit grouping, and tiny_aya's expression llama.cpp splits the same.
const DIGIT_GROUPS: [&str; 2] = ["\\p{AFMoE_digits}", "\\d{1,3}(?=(?:\\d{3})*\\b)"];
/// superbpe's: an empty match before each group of three digits that ends a run of digits.
const THOUSANDS: &str = "(?=(\\d{3})+(?!\\d))";

/// The expressions of `llm_tokenizer_bpe` for one list (named as gguf-llama's
/// `PreSettings::expressions` names it, which says which pre-tokenizers of which release use
/// it), in order, extracted mechanically from llama.cpp's source with non-ASCII characters
/// escaped (so that no editor can normalise them); `scripts/check-tokenizer.sh` checks them
/// against each release's source (a list is the same in every release that has it).
#[rustfmt::skip]
pub(crate) fn regex_exprs(pre: &str) -> Option<&'static [&'static str]> {
    Some(match pre {
        "llama3" => &["(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
        "dbrx" => &["(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
        "deepseek-llm" => &["[\r\n]", "\\s?[A-Za-z\u{B5}\u{C0}-\u{D6}\u{D8}-\u{F6}\u{F8}-\u{1BA}\u{1BC}-\u{1BF}\u{1C4}-\u{293}\u{295}-\u{2AF}\u{370}-\u{373}\u{376}\u{377}\u{37B}-\u{37D}\u{37F}\u{386}\u{388}-\u{38A}\u{38C}\u{38E}-\u{3A1}\u{3A3}-\u{3F5}\u{3F7}-\u{481}\u{48A}-\u{52F}\u{531}-\u{556}\u{10A0}-\u{10C5}\u{13A0}-\u{13F5}\u{13F8}-\u{13FD}\u{1C90}-\u{1CBA}\u{1CBD}-\u{1CBF}\u{1D00}-\u{1D2B}\u{1D6B}-\u{1D77}\u{1D79}-\u{1D9A}\u{1E00}-\u{1F15}\u{1F18}-\u{1F1D}\u{1F20}-\u{1F45}\u{1F48}-\u{1F4D}\u{1F50}-\u{1F57}\u{1F59}\u{1F5B}\u{1F5D}\u{1F5F}-\u{1F7D}\u{1F80}-\u{1FB4}\u{1FB6}-\u{1FBC}\u{1FBE}\u{1FC2}-\u{1FC4}\u{1FC6}-\u{1FCC}\u{1FD0}-\u{1FD3}\u{1FD6}-\u{1FDB}\u{1FE0}-\u{1FEC}\u{1FF2}-\u{1FF4}\u{1FF6}-\u{1FFC}\u{2102}\u{2107}\u{210A}-\u{2113}\u{2115}\u{2119}-\u{211D}\u{2124}\u{2126}\u{2128}\u{212A}-\u{212D}\u{212F}-\u{2134}\u{2139}\u{213C}-\u{213F}\u{2145}-\u{2149}\u{214E}\u{2183}\u{2184}\u{2C00}-\u{2C7B}\u{2C7E}-\u{2CE4}\u{2CEB}-\u{2CEE}\u{2CF2}\u{2CF3}\u{A640}-\u{A66D}\u{A680}-\u{A69B}\u{A722}-\u{A76F}\u{A771}-\u{A787}\u{A78B}-\u{A78E}\u{AB70}-\u{ABBF}\u{FB00}-\u{FB06}\u{FB13}-\u{FB17}\u{FF21}-\u{FF3A}\u{FF41}-\u{FF5A}\u{10400}-\u{1044F}\u{104B0}-\u{104D3}\u{104D8}-\u{104FB}\u{10C80}-\u{10CB2}\u{10CC0}-\u{10CF2}\u{118A0}-\u{118DF}\u{1E900}-\u{1E943}]+", "\\s?[!-/:-~\u{FF01}-\u{FF0F}\u{FF1A}-\u{FF5E}\u{2018}-\u{201F}\u{3000}-\u{3002}]+", "\\s+$", "[\u{4E00}-\u{9FA5}\u{800}-\u{4E00}\u{AC00}-\u{D7FF}]+", "\\p{N}+"],
        "deepseek3-llm" => &["\\p{N}{1,3}", "[\u{4E00}-\u{9FA5}\u{3040}-\u{309F}\u{30A0}-\u{30FF}]+", "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"],
        "deepseek-coder" => &["[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[\u{4E00}-\u{9FA5}\u{800}-\u{4E00}\u{AC00}-\u{D7FF}]+", "\\p{N}"],
        "falcon" => &["[\\p{P}\\$\\+<=>\\^~\\|`]+", "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)", "[0-9][0-9][0-9]"],
        "starcoder" => &["\\p{N}", "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"],
        "gpt2" => &["'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"],
        "qwen2" => &["(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
        "poro" => &[" ?[^(\\s|.,!?\u{2026}\u{3002}\u{FF0C}\u{3001}\u{964}\u{6D4}\u{60C})]+"],
        "chatglm4" => &["(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
        "viking" => &[" ?[^(\\s|.,!?\u{2026}\u{3002}\u{FF0C}\u{3001}\u{964}\u{6D4}\u{60C})]+", "\\p{N}"],
        "tekken" => &["[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
        "chameleon" => &["<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}", "[\\p{P}!-/:-@\\[-`{-~]", "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"],
        "gpt4o" => &["[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
        "kimi-k2" => &["\\p{Han}+"],
        "superbpe" => &["\\p{N}+", "(?=(\\d{3})+(?!\\d))"],
        "bailingmoe" => &["'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"],
        "seed-coder" => &["(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
        "jais2" => &["(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}"],
        "spark2-5" => &["\\p{N}{1,3}", "[\u{4E00}-\u{9FA5}\u{3040}-\u{309F}\u{30A0}-\u{30FF}]+", "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+", "\\p{N}"],
        "youtu" => &["[\u{AC00}-\u{D7A3}\u{3131}-\u{318E}]+|[\u{FF01}\u{2026}\u{201C}\u{201D}\u{2018}\u{2019}\u{2014}\u{FF1A}\u{FF1B}\u{FF0C}\u{3001}-\u{303F}\u{FE30}-\u{FE4F}]+|[\u{3105}-\u{312F}]+|[\u{4E00}-\u{9FA5}\u{3040}-\u{309F}\u{30A0}-\u{30FF}]+", "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
        "qwen35" => &["(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
        "granite-emb-multi" => &["[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
        "tiny-aya" => &["\\d{1,3}(?=(?:\\d{3})*\\b)", "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
        "ufakzeka" => &["[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
        "grok-2" => &["(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
        "afmoe" => &["\\p{AFMoE_digits}", "[\u{4E00}-\u{9FFF}\u{3400}-\u{4DBF}\u{8C48}-\u{FAFF}\u{3040}-\u{309F}\u{30A0}-\u{30FF}\u{FF65}-\u{FF9F}\u{2F00}-\u{2FDF}\u{E40}-\u{E7F}\u{E80}-\u{EFF}\u{1780}-\u{17FF}\u{1000}-\u{109F}\u{AA60}-\u{AA7F}\u{A9E0}-\u{A9FF}\u{AC00}-\u{D7AF}\u{1100}-\u{11FF}]+", "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
        "laguna" => &["[^\\n]+|[\\n]+", "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
        "exaone-moe" => &["(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"],
        "gemma4" => &["[^\\n]+|[\\n]+"],
        "sarvam-moe" => &["[^\\n]+|[\\n]+"],
        "minicpm5" => &["\\p{N}{1,3}", "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
        "whitespace" => &["\\S+"],
        "default" => &["[\\p{P}\\$\\+<=>\\^~\\|]+", "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)", "\\p{N}+", "[0-9][0-9][0-9]"],
        _ => return None,
    })
}

#[derive(Debug)]
enum Splitter {
    Gpt2,
    Llama3,
    KimiK2,
    /// [`QWEN2`] (0.3.36's `unicode_regex_split_custom_qwen2`; 0.3.16 matches the expression).
    Qwen2,
    /// [`QWEN35`]: Qwen2's, with combining marks in letter runs.
    Qwen35,
    /// [`NEWLINES`]: runs of newlines and runs of anything else.
    Newlines,
    /// [`DIGIT_GROUPS`]: each run of digits as 1-2 leading digits then groups of three.
    DigitGroups,
    /// [`THOUSANDS`], written out: a backtracking engine scans to the end of the run of
    /// digits from every position in it (quadratic in the run's length).
    Thousands,
    /// Matched on the collapsed text (the expression uses `\p{..}` categories).
    Collapsed(Regex),
    /// Matched on the code points (non-ASCII whitespace as U+000B, like llama.cpp's wtext).
    Wide(Regex),
}

/// A compiled pre-tokenizer: the splitters of one `regex_exprs` list.
#[derive(Debug)]
pub(crate) struct PreTokenizer {
    splitters: Vec<Splitter>,
    need_collapse: bool,
    /// `byte_encode`: words are handed on in the GPT-2 byte alphabet (else as UTF-8).
    byte_encode: bool,
}

/// The `\p{..}` names `unicode_regex_split` rewrites for the collapsed text, per release
/// (0.3.36 added the letter subcategories, all as letters).
fn ucats(release: Release) -> &'static [(&'static str, u16)] {
    const ALL: [(&str, u16); 10] = [
        ("\\p{N}", NUMBER),
        ("\\p{L}", LETTER),
        ("\\p{P}", PUNCTUATION),
        ("\\p{M}", ACCENT_MARK),
        ("\\p{S}", SYMBOL),
        ("\\p{Lu}", LETTER),
        ("\\p{Ll}", LETTER),
        ("\\p{Lt}", LETTER),
        ("\\p{Lm}", LETTER),
        ("\\p{Lo}", LETTER),
    ];
    match release {
        Release::LlamaCppPython0316 => &ALL[..5],
        _ => &ALL,
    }
}

/// Whether `release` has the hand-written splitters added after 0.3.16 (Qwen2, Qwen3.5,
/// newline runs, digit groups).
fn has_new_splitters(release: Release) -> bool {
    release != Release::LlamaCppPython0316
}

fn ucat_cpt(cat: u16) -> Option<u8> {
    Some(match cat {
        NUMBER => 0xD1,
        LETTER => 0xD2,
        PUNCTUATION => 0xD3,
        ACCENT_MARK => 0xD4,
        SYMBOL => 0xD5,
        _ => return None,
    })
}

/// The ASCII members of a category in the collapsed expression. 0.3.36 added `~` to the
/// symbols (0.3.16's `\p{S}` misses it).
fn ucat_map(cat: u16, release: Release) -> &'static str {
    match cat {
        NUMBER => "\x30-\x39",
        LETTER => "\x41-\x5A\x61-\x7A",
        PUNCTUATION => "\x21-\x23\x25-\x2A\x2C-\x2F\x3A-\x3B\x3F-\x40\\\x5B-\\\x5D\x5F\\\x7B\\\x7D",
        ACCENT_MARK => "",
        _ if release == Release::LlamaCppPython0316 => "\\\x24\\\x2B\x3C-\x3E\x5E\x60\\\x7C",
        _ => "\\\x24\\\x2B\x3C-\x3E\x5E\x60\\\x7C\\\x7E",
    }
}

/// ECMAScript's `\d` is ASCII; the regex crate's is Unicode.
fn ecmascript(expr: &str) -> String {
    expr.replace("\\d", "[0-9]")
}

fn compile(expr: &str) -> Result<Regex, Error> {
    Regex::new(&ecmascript(expr)).map_err(|e| Error::Regex(format!("{expr}: {e}")))
}

/// llama.cpp's rewrite of an expression for the collapsed text: each `\p{..}` it knows becomes
/// its stand-in byte plus the ASCII members of the category. Bytes >= 0x80 are written as the
/// code point of the same value, as the collapsed text is. (0.3.16 reads `\p{X}` of one
/// letter only, 0.3.36 up to its closing brace: the same on the names 0.3.16 knows.)
fn collapse_expr(expr: &str, release: Release) -> String {
    let b = expr.as_bytes();
    let mut out = String::new();
    let mut inside = false;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'[' && (i == 0 || b[i - 1] != b'\\') {
            out.push('[');
            inside = true;
            i += 1;
            continue;
        }
        if inside && b[i] == b']' && b[i - 1] != b'\\' {
            out.push(']');
            inside = false;
            i += 1;
            continue;
        }
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'p') && b.get(i + 2) == Some(&b'{') {
            let close = b[i + 3..]
                .iter()
                .position(|&c| c == b'}')
                .map(|p| i + 3 + p);
            let known = close.and_then(|e| {
                ucats(release)
                    .iter()
                    .find(|(p, _)| p.as_bytes() == &b[i..=e])
                    .map(|&(_, cat)| (e, cat))
            });
            if let Some((e, cat)) = known {
                if !inside {
                    out.push('[');
                }
                out.push(char::from(ucat_cpt(cat).unwrap_or(0xD0)));
                out.push_str(ucat_map(cat, release));
                if !inside {
                    out.push(']');
                }
                i = e + 1;
                continue;
            }
        }
        out.push(char::from(b[i]));
        i += 1;
    }
    out
}

impl PreTokenizer {
    /// The pre-tokenizer of `exprs` as llama.cpp `release` runs it.
    pub(crate) fn new(
        exprs: &[&str],
        release: Release,
        byte_encode: bool,
    ) -> Result<PreTokenizer, Error> {
        let uses_ucat = |e: &str| ucats(release).iter().any(|(p, _)| e.contains(p));
        let new = has_new_splitters(release);
        let mut splitters = Vec::new();
        for &e in exprs {
            splitters.push(if e == GPT2 {
                Splitter::Gpt2
            } else if e == LLAMA3_A || e == LLAMA3_B {
                Splitter::Llama3
            } else if e == KIMI_K2 {
                Splitter::KimiK2
            } else if new && e == QWEN2 {
                Splitter::Qwen2
            } else if new && e == QWEN35 {
                Splitter::Qwen35
            } else if new && e == NEWLINES {
                Splitter::Newlines
            } else if new && DIGIT_GROUPS.contains(&e) {
                Splitter::DigitGroups
            } else if e == THOUSANDS {
                Splitter::Thousands
            } else if uses_ucat(e) {
                if !e.is_ascii() {
                    return Err(Error::Regex(format!(
                        "{e}: both unicode categories and non-ASCII characters"
                    )));
                }
                Splitter::Collapsed(compile(&collapse_expr(e, release))?)
            } else {
                Splitter::Wide(compile(e)?)
            });
        }
        Ok(PreTokenizer {
            splitters,
            need_collapse: exprs.iter().any(|e| uses_ucat(e)),
            byte_encode,
        })
    }

    /// The words of `text`, each in the GPT-2 byte alphabet (`unicode_regex_split`), handed
    /// to `each` one at a time (one buffer, not a vector per word: memory per byte of text
    /// stays small). `None` where llama.cpp throws: a decoded value past U+10FFFF (checked
    /// before any word is handed on, as llama.cpp throws before returning any).
    pub(crate) fn split<E>(
        &self,
        text: &[u8],
        mut each: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Option<Result<(), E>> {
        let cpts = unicode::cpts_from_utf8(text);
        let mut offsets = vec![cpts.len()];
        let mut collapsed: Option<(String, Vec<u32>)> = None;
        let mut wide: Option<(String, Vec<u32>)> = None;
        for s in &self.splitters {
            offsets = match s {
                Splitter::Gpt2 => custom(&cpts, &offsets, gpt2_chunk),
                Splitter::Llama3 => custom(&cpts, &offsets, llama3_chunk),
                Splitter::KimiK2 => custom(&cpts, &offsets, kimi_k2_chunk),
                Splitter::Qwen2 => custom(&cpts, &offsets, qwen2_chunk),
                Splitter::Qwen35 => custom(&cpts, &offsets, qwen35_chunk),
                Splitter::Newlines => custom(&cpts, &offsets, newlines_chunk),
                Splitter::DigitGroups => custom(&cpts, &offsets, digit_groups_chunk),
                Splitter::Thousands => custom(&cpts, &offsets, thousands_chunk),
                Splitter::Collapsed(re) => {
                    let (hay, pos) = collapsed.get_or_insert_with(|| {
                        debug_assert!(self.need_collapse);
                        haystack(&cpts, collapse_cpt)
                    });
                    regex_split(re, hay, pos, &offsets)
                }
                Splitter::Wide(re) => {
                    let (hay, pos) = wide.get_or_insert_with(|| haystack(&cpts, wide_cpt));
                    regex_split(re, hay, pos, &offsets)
                }
            };
        }
        drop((collapsed, wide));
        if cpts.iter().any(|&c| c > 0x10FFFF) {
            return None;
        }
        let mut start = 0;
        let mut utf8 = Vec::new();
        let mut word = Vec::new();
        for len in offsets {
            utf8.clear();
            for &c in &cpts[start..start + len] {
                unicode::cpt_to_utf8(c, &mut utf8)?;
            }
            let word = if self.byte_encode {
                word.clear();
                for &b in &utf8 {
                    unicode::byte_to_utf8(b, &mut word);
                }
                &word
            } else {
                &utf8
            };
            if let Err(e) = each(word) {
                return Some(Err(e));
            }
            start += len;
        }
        Some(Ok(()))
    }
}

fn collapse_cpt(c: u32) -> char {
    if c < 128 {
        return char::from(c as u8);
    }
    let f = flags(c);
    if f.is_whitespace() {
        return '\x0B';
    }
    char::from(ucat_cpt(f.category()).unwrap_or(0xD0))
}

/// A code point as the wide regex sees it. Values a Rust `char` cannot hold (surrogates,
/// past U+10FFFF) become U+E000, which no expression of llama.cpp names.
fn wide_cpt(c: u32) -> char {
    if c > 0x7F && flags(c).is_whitespace() {
        return '\x0B';
    }
    char::from_u32(c).unwrap_or('\u{E000}')
}

/// The haystack and the byte position of each code point (plus the end), as u32: four
/// bytes per code point rather than eight (`encode` refuses texts past `MAX_TEXT_BYTES`).
fn haystack(cpts: &[u32], map: fn(u32) -> char) -> (String, Vec<u32>) {
    let mut s = String::with_capacity(cpts.len());
    let mut pos = Vec::with_capacity(cpts.len() + 1);
    for &c in cpts {
        pos.push(s.len() as u32);
        s.push(map(c));
    }
    pos.push(s.len() as u32);
    (s, pos)
}

/// `unicode_regex_split_stl`: within each chunk, matches and the text between them.
fn regex_split(re: &Regex, hay: &str, pos: &[u32], offsets: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(offsets.len());
    let mut start = 0;
    for &len in offsets {
        let (a, b) = (pos[start] as usize, pos[start + len] as usize);
        let chunk = &hay[a..b];
        let count = |from: usize, to: usize| chunk[from..to].chars().count();
        let mut prev = 0;
        for m in re.find_iter(chunk) {
            // A failed match (backtrack limit) ends the chunk's matches.
            let Ok(m) = m else { break };
            if m.start() > prev {
                out.push(count(prev, m.start()));
            }
            out.push(count(m.start(), m.end()));
            prev = m.end();
        }
        if prev < chunk.len() {
            out.push(count(prev, chunk.len()));
        }
        start += len;
    }
    out
}

/// Runs a hand-written splitter over each chunk.
fn custom(cpts: &[u32], offsets: &[usize], chunk: fn(&Chunk, &mut Vec<usize>)) -> Vec<usize> {
    let mut out = Vec::with_capacity(offsets.len());
    let mut start = 0;
    for &len in offsets {
        let c = Chunk {
            cpts,
            ini: start,
            end: start + len,
        };
        chunk(&c, &mut out);
        start += len;
    }
    out
}

const OUT_OF_RANGE: u32 = 0xFFFF_FFFF;

struct Chunk<'a> {
    cpts: &'a [u32],
    ini: usize,
    end: usize,
}

impl Chunk<'_> {
    fn cpt(&self, pos: usize) -> u32 {
        if self.ini <= pos && pos < self.end {
            self.cpts[pos]
        } else {
            OUT_OF_RANGE
        }
    }
    fn flags(&self, pos: usize) -> Flags {
        if self.ini <= pos && pos < self.end {
            flags(self.cpts[pos])
        } else {
            Flags(0)
        }
    }
}

struct Tokens<'a> {
    out: &'a mut Vec<usize>,
    prev_end: usize,
}

impl Tokens<'_> {
    fn add(&mut self, end: usize) -> usize {
        let len = end - self.prev_end;
        if len > 0 {
            self.out.push(len);
        }
        self.prev_end = end;
        len
    }
}

fn contraction(c: &Chunk, pos: usize, lower: bool) -> usize {
    let low = |x: u32| if lower { unicode::tolower(x) } else { x };
    if c.cpt(pos) == u32::from(b'\'') && pos + 1 < c.end {
        let n = low(c.cpt(pos + 1));
        if [b's', b't', b'm', b'd'].iter().any(|&x| n == u32::from(x)) {
            return 2;
        }
        if pos + 2 < c.end {
            let nn = low(c.cpt(pos + 2));
            let pair = |a: u8, b: u8| n == u32::from(a) && nn == u32::from(b);
            if pair(b'r', b'e') || pair(b'v', b'e') || pair(b'l', b'l') {
                return 3;
            }
        }
    }
    0
}

fn is_other(f: Flags) -> bool {
    !(f.is_whitespace() || f.is_letter() || f.is_number()) && f.0 != 0
}

/// Qwen3.5's `[^\s\p{L}\p{M}\p{N}]`.
fn is_other_or_mark(f: Flags, marks: bool) -> bool {
    is_other(f) && !(marks && f.is_accent_mark())
}

/// `unicode_regex_split_custom_gpt2`.
fn gpt2_chunk(c: &Chunk, out: &mut Vec<usize>) {
    let mut t = Tokens {
        out,
        prev_end: c.ini,
    };
    let mut pos = c.ini;
    while pos < c.end {
        let cpt = c.cpt(pos);
        let f = c.flags(pos);
        let n = contraction(c, pos, false);
        if n > 0 {
            pos += t.add(pos + n);
            continue;
        }
        let space = cpt == u32::from(b' ');
        let mut f2 = if space { c.flags(pos + 1) } else { f };
        if f2.is_letter() {
            pos += usize::from(space);
            while f2.is_letter() {
                pos += 1;
                f2 = c.flags(pos);
            }
            t.add(pos);
            continue;
        }
        if f2.is_number() {
            pos += usize::from(space);
            while f2.is_number() {
                pos += 1;
                f2 = c.flags(pos);
            }
            t.add(pos);
            continue;
        }
        if is_other(f2) {
            pos += usize::from(space);
            while is_other(f2) {
                pos += 1;
                f2 = c.flags(pos);
            }
            t.add(pos);
            continue;
        }
        let mut ws = 0;
        while c.flags(pos + ws).is_whitespace() {
            ws += 1;
        }
        if ws > 1 && c.cpt(pos + ws) != OUT_OF_RANGE {
            pos += ws - 1;
            t.add(pos);
            continue;
        }
        if ws > 0 {
            pos += ws;
            t.add(pos);
            continue;
        }
        pos += 1;
        t.add(pos);
    }
}

fn is_crlf(c: u32) -> bool {
    c == u32::from(b'\r') || c == u32::from(b'\n')
}

/// The tail the Llama 3 and Kimi-K2 splitters share: ` ?[^\s\p{L}\p{N}]+[\r\n]*`,
/// `\s*[\r\n]+`, `\s+(?!\S)`, `\s+`, else one code point. `other_first` is the flags the
/// first test reads (llama.cpp's Llama 3 code tests the current code point's `as_uint`).
/// `marks`: Qwen3.5's, where marks are not "other".
fn tail(c: &Chunk, t: &mut Tokens, pos: &mut usize, f: Flags, kimi: bool, marks: bool) {
    let cpt = c.cpt(*pos);
    let space = cpt == u32::from(b' ');
    let mut f2 = if space { c.flags(*pos + 1) } else { f };
    let nonzero = if kimi { f2.0 != 0 } else { f.0 != 0 };
    let mark = marks && f2.is_accent_mark();
    if !(f2.is_whitespace() || f2.is_letter() || f2.is_number() || mark) && nonzero {
        *pos += usize::from(space);
        while is_other_or_mark(f2, marks) {
            *pos += 1;
            f2 = c.flags(*pos);
        }
        while is_crlf(c.cpt(*pos)) {
            *pos += 1;
        }
        t.add(*pos);
        return;
    }
    let mut ws = 0;
    let mut last_crlf = 0;
    while c.flags(*pos + ws).is_whitespace() {
        if is_crlf(c.cpt(*pos + ws)) {
            last_crlf = *pos + ws + 1;
        }
        ws += 1;
    }
    if last_crlf > 0 {
        *pos = last_crlf;
        t.add(*pos);
        return;
    }
    if ws > 1 && c.cpt(*pos + ws) != OUT_OF_RANGE {
        *pos += ws - 1;
        t.add(*pos);
        return;
    }
    if ws > 0 {
        *pos += ws;
        t.add(*pos);
        return;
    }
    *pos += 1;
    t.add(*pos);
}

fn numbers_1_3(c: &Chunk, t: &mut Tokens, pos: &mut usize) {
    let mut ini = *pos;
    while c.flags(*pos).is_number() {
        *pos += 1;
        if *pos - ini >= 3 {
            t.add(*pos);
            ini = *pos;
        }
    }
    t.add(*pos);
}

/// `unicode_regex_split_custom_llama3`.
fn llama3_chunk(c: &Chunk, out: &mut Vec<usize>) {
    llama3_like(c, out, true, false);
}

/// `unicode_regex_split_custom_qwen2` (0.3.36): Llama 3's with one digit per word.
fn qwen2_chunk(c: &Chunk, out: &mut Vec<usize>) {
    llama3_like(c, out, false, false);
}

/// `unicode_regex_split_custom_qwen35` (0.3.36): Qwen2's with marks as letters.
fn qwen35_chunk(c: &Chunk, out: &mut Vec<usize>) {
    llama3_like(c, out, false, true);
}

/// The Llama 3 splitter; `digits3`: `\p{N}{1,3}` (else `\p{N}`); `marks`: `[\p{L}\p{M}]+`
/// letter runs (else `\p{L}+`).
fn llama3_like(c: &Chunk, out: &mut Vec<usize>, digits3: bool, marks: bool) {
    let mut t = Tokens {
        out,
        prev_end: c.ini,
    };
    let letter = |f: Flags| f.is_letter() || (marks && f.is_accent_mark());
    let mut pos = c.ini;
    while pos < c.end {
        let cpt = c.cpt(pos);
        let f = c.flags(pos);
        let n = contraction(c, pos, true);
        if n > 0 {
            pos += t.add(pos + n);
            continue;
        }
        if !(is_crlf(cpt) || f.is_number()) && (letter(f) || letter(c.flags(pos + 1))) {
            pos += 1;
            while letter(c.flags(pos)) {
                pos += 1;
            }
            t.add(pos);
            continue;
        }
        if f.is_number() {
            if digits3 {
                numbers_1_3(c, &mut t, &mut pos);
            } else {
                pos += 1;
                t.add(pos);
            }
            continue;
        }
        tail(c, &mut t, &mut pos, f, false, marks);
    }
}

/// `unicode_regex_split_custom_newlines` (0.3.36).
fn newlines_chunk(c: &Chunk, out: &mut Vec<usize>) {
    let mut pos = c.ini;
    while pos < c.end {
        let newline = c.cpts[pos] == u32::from(b'\n');
        let start = pos;
        while pos < c.end && (c.cpts[pos] == u32::from(b'\n')) == newline {
            pos += 1;
        }
        out.push(pos - start);
    }
}

/// `unicode_regex_split_custom_afmoe` (0.3.36): a run of n digits as its first n % 3
/// digits, then groups of three, the text before the run joined to the first of these; the
/// rest of the chunk as one.
fn digit_groups_chunk(c: &Chunk, out: &mut Vec<usize>) {
    let mut t = Tokens {
        out,
        prev_end: c.ini,
    };
    let mut pos = c.ini;
    while pos < c.end {
        if !c.flags(pos).is_number() {
            pos += 1;
            continue;
        }
        let start = pos;
        while c.flags(pos).is_number() && pos < c.end {
            pos += 1;
        }
        let mut current = start + (pos - start) % 3;
        if current > start {
            t.add(current);
        }
        while current < pos {
            current += 3;
            t.add(current);
        }
    }
    if t.prev_end < c.end {
        t.add(c.end);
    }
}

/// [`THOUSANDS`] as [`regex_split`] splits a chunk by it: each empty match (where the digits
/// from there to the end of their run are a positive multiple of three) ends the text before
/// it and adds an empty piece.
fn thousands_chunk(c: &Chunk, out: &mut Vec<usize>) {
    let digit = |pos: usize| (u32::from(b'0')..=u32::from(b'9')).contains(&c.cpt(pos));
    let mut prev = c.ini;
    let mut pos = c.ini;
    while pos < c.end {
        if !digit(pos) {
            pos += 1;
            continue;
        }
        let mut run_end = pos;
        while digit(run_end) {
            run_end += 1;
        }
        let mut m = pos + (run_end - pos) % 3;
        while m + 3 <= run_end {
            if m > prev {
                out.push(m - prev);
            }
            out.push(0);
            prev = m;
            m += 3;
        }
        pos = run_end;
    }
    if prev < c.end {
        out.push(c.end - prev);
    }
}

/// `unicode_regex_split_custom_kimi_k2`.
fn kimi_k2_chunk(c: &Chunk, out: &mut Vec<usize>) {
    let mut t = Tokens {
        out,
        prev_end: c.ini,
    };
    let letter = |pos: usize| c.flags(pos).is_letter() && !unicode::is_han(c.cpt(pos));
    let mut pos = c.ini;
    while pos < c.end {
        let cpt = c.cpt(pos);
        let f = c.flags(pos);
        if unicode::is_han(cpt) {
            while unicode::is_han(c.cpt(pos)) {
                pos += 1;
            }
            t.add(pos);
            continue;
        }
        let leading_ok = !(is_crlf(cpt) || f.is_letter() || f.is_number());
        if (f.is_letter() && !unicode::is_han(cpt)) || (leading_ok && letter(pos + 1)) {
            let mut has_leading = false;
            if leading_ok {
                has_leading = true;
                pos += 1;
            }
            let mut has_letters = false;
            while letter(pos) {
                has_letters = true;
                pos += 1;
            }
            if has_letters || (!has_leading && letter(pos)) {
                if !has_letters {
                    pos += 1;
                }
                while letter(pos) {
                    pos += 1;
                }
                pos += contraction(c, pos, true);
                t.add(pos);
                continue;
            } else if has_leading {
                pos -= 1;
            }
        }
        if f.is_number() {
            numbers_1_3(c, &mut t, &mut pos);
            continue;
        }
        tail(c, &mut t, &mut pos, f, true, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expressions given to hand-written splitters are llama.cpp's lists, as extracted.
    #[test]
    fn the_written_out_expressions_are_the_lists() {
        let list = |key| regex_exprs(key).unwrap();
        assert_eq!(list("llama3"), [LLAMA3_B]);
        assert_eq!(list("qwen2"), [QWEN2]);
        assert_eq!(list("qwen35"), [QWEN35]);
        assert_eq!(list("gemma4"), [NEWLINES]);
        assert_eq!(list("laguna")[0], NEWLINES);
        assert_eq!(list("afmoe")[0], DIGIT_GROUPS[0]);
        assert_eq!(list("tiny-aya")[0], DIGIT_GROUPS[1]);
        assert_eq!(list("kimi-k2"), [KIMI_K2]);
        assert_eq!(list("superbpe")[1], THOUSANDS);
    }

    /// The written-out [`THOUSANDS`] splits as the expression does, on texts of ASCII and
    /// other digits, letters and spaces (the expression's `\d` is ASCII, as ECMAScript's).
    #[test]
    fn thousands_equals_its_expression() {
        let by_regex = PreTokenizer {
            splitters: vec![Splitter::Wide(compile(THOUSANDS).unwrap())],
            need_collapse: false,
            byte_encode: true,
        };
        let written = PreTokenizer::new(&[THOUSANDS], Release::NEWEST, true).unwrap();
        assert!(matches!(written.splitters[0], Splitter::Thousands));
        let words = |p: &PreTokenizer, text: &[u8]| {
            let mut out = Vec::new();
            p.split(text, |w| {
                out.push(w.to_vec());
                Ok::<(), ()>(())
            })
            .unwrap()
            .unwrap();
            out
        };
        let pieces: [&str; 6] = ["1", "9", "a", " ", "٣", "0"];
        let mut seed = 0x1234_5678_9ABC_DEF1u64;
        for _ in 0..3000 {
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            let mut r = seed.wrapping_mul(0x2545_F491_4F6C_DD1D);
            let mut text = String::new();
            for _ in 0..(r % 14) {
                r /= 7;
                text.push_str(pieces[(r % 6) as usize]);
            }
            assert_eq!(
                words(&written, text.as_bytes()),
                words(&by_regex, text.as_bytes()),
                "{text:?}"
            );
        }
    }
}
