//! The chat-template diagnostics (`template-*`) of [`lint`](crate::lint): none is a container rule.

use gguf_grammar::validate::References;

gguf_grammar::diagnostic_codes! {
    /// A chat template key whose value is not a UTF-8 string.
    TEMPLATE_NOT_TEXT = "template-not-text", Error, References::NONE;
    /// A chat template that does not parse (jinja2's syntax), with its line and column.
    TEMPLATE_SYNTAX = "template-syntax", Error, References::NONE;
    /// A chat template jinja2 parses but llama.cpp 0.3.16's engine (minja) does not: llama.cpp falls back to chatml.
    TEMPLATE_LLAMA_CPP_SYNTAX = "template-llama-cpp-syntax", Error, References::NONE;
    /// A chat template that fails for a one-message conversation.
    TEMPLATE_MINIMAL_RENDER = "template-minimal-render", Error, References::NONE;
    /// A chat template that fails for a system/user/assistant/user conversation.
    TEMPLATE_ORDINARY_RENDER = "template-ordinary-render", Warning, References::NONE;
    /// A chat template that never opens the assistant's turn (`add_generation_prompt` changes nothing).
    TEMPLATE_NO_GENERATION_PROMPT = "template-no-generation-prompt", Warning, References::NONE;
    /// A chat template that writes a special-looking token the vocabulary does not have.
    TEMPLATE_TOKEN_NOT_IN_VOCAB = "template-token-not-in-vocab", Warning, References::NONE;
    /// A chat template that writes a BOS other than the file's `tokenizer.ggml.bos_token_id`.
    TEMPLATE_BOS_MISMATCH = "template-bos-mismatch", Warning, References::NONE;
}
