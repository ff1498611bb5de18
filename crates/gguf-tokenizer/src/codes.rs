//! The vocabulary diagnostics (`tokenizer-*`) of `check`: none is a container rule.

use gguf_grammar::validate::References;

gguf_grammar::diagnostic_codes! {
    /// A BPE merge that is not two token texts and a space, or whose joined text is no
    /// token.
    TOKENIZER_MERGE_UNKNOWN = "tokenizer-merge-unknown", Warning, References::NONE;
    /// A BPE vocabulary without the token of a byte-alphabet character that UTF-8 text can
    /// need.
    TOKENIZER_BYTE_ALPHABET = "tokenizer-byte-alphabet", Warning, References::NONE;
    /// A byte-type token llama.cpp cannot decode to a byte (its text is not `<0xXX>`, or the
    /// vocabulary is WPM, or BPE before 0.3.36).
    TOKENIZER_BYTE_TOKEN = "tokenizer-byte-token", Error, References::NONE;
    /// A special-token id naming a token that is not a control, user-defined or unknown
    /// token: it decodes as text.
    TOKENIZER_SPECIAL_TYPE = "tokenizer-special-type", Warning, References::NONE;
    /// The vocabulary exceeds a bound of this crate's tokenizer (llama.cpp would build it,
    /// in time or memory out of proportion to the file): its checks were not run.
    TOKENIZER_LIMIT = "tokenizer-limit", Warning, References::NONE;
}
