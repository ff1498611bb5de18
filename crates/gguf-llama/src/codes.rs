//! llama.cpp's model rules (`schema-*`): [`schema::check_model`](crate::schema::check_model) and [`loader`](crate::loader) report them; none is a container rule, so no container reference rejects for them.

use gguf_grammar::validate::References;

gguf_grammar::diagnostic_codes! {
    /// An architecture the release's loader refuses: one it does not know (or 0.3.36's `clip`).
    SCHEMA_ARCHITECTURE_UNSUPPORTED = "schema-architecture-unsupported", Error, References::NONE;
    /// An architecture the release loads whose schema the table does not model: its keys,
    /// hyperparameters and tensors are unchecked.
    SCHEMA_ARCHITECTURE_UNKNOWN = "schema-architecture-unknown", Warning, References::NONE;
    /// A vocabulary-only file: no tensors.
    SCHEMA_VOCAB_ONLY = "schema-vocab-only", Note, References::NONE;
    /// A key the loader requires is missing.
    SCHEMA_KEY_MISSING = "schema-key-missing", Error, References::NONE;
    /// A key of a type the loader does not accept.
    SCHEMA_KEY_TYPE = "schema-key-type", Error, References::NONE;
    /// The token list and its parallel arrays disagree in length, or it has fewer tokens than
    /// the architecture's graph needs (chameleon: 8196).
    SCHEMA_TOKEN_COUNT = "schema-token-count", Error, References::NONE;
    /// A special-token id past the vocabulary.
    SCHEMA_SPECIAL_TOKEN = "schema-special-token", Warning, References::NONE;
    /// A `tokenizer.ggml.model` the vocab loader does not know.
    SCHEMA_TOKENIZER_MODEL = "schema-tokenizer-model", Error, References::NONE;
    /// A `tokenizer.ggml.pre` the vocab loader does not know.
    SCHEMA_TOKENIZER_PRE = "schema-tokenizer-pre", Error, References::NONE;
    /// A BPE vocabulary without merges.
    SCHEMA_MERGES_MISSING = "schema-merges-missing", Error, References::NONE;
    /// An SPM vocabulary without the byte tokens `<0x00>`..`<0xFF>`.
    SCHEMA_BYTE_TOKENS = "schema-byte-tokens", Error, References::NONE;
    /// A block count the loader cannot use (zero, below the sliding-window pattern, or one
    /// the architecture's graph has no model type for).
    SCHEMA_BLOCK_COUNT = "schema-block-count", Error, References::NONE;
    /// A token type that names no type.
    SCHEMA_TOKEN_TYPE = "schema-token-type", Error, References::NONE;
    /// A `general.file_type` that names no type.
    SCHEMA_FILE_TYPE = "schema-file-type", Error, References::NONE;
    /// A quantization version the loader does not know.
    SCHEMA_QUANTIZATION_VERSION = "schema-quantization-version", Error, References::NONE;
    /// A head count that is zero or does not divide the embedding, or a head size other than
    /// the one the loader sizes the attention by (plamo2).
    SCHEMA_HEAD_COUNT = "schema-head-count", Error, References::NONE;
    /// A KV head count that is zero or does not divide the head count.
    SCHEMA_HEAD_COUNT_KV = "schema-head-count-kv", Error, References::NONE;
    /// A rope dimension larger than a head.
    SCHEMA_ROPE_DIMENSION = "schema-rope-dimension", Error, References::NONE;
    /// Expert counts that disagree (used more than there are, or zero).
    SCHEMA_EXPERT_COUNT = "schema-expert-count", Error, References::NONE;
    /// A tensor the loader requires is missing.
    SCHEMA_TENSOR_MISSING = "schema-tensor-missing", Error, References::NONE;
    /// A tensor the loader does not expect.
    SCHEMA_TENSOR_UNEXPECTED = "schema-tensor-unexpected", Error, References::NONE;
    /// A tensor for a block past the block count.
    SCHEMA_TENSOR_BLOCK_INDEX = "schema-tensor-block-index", Error, References::NONE;
    /// A tensor whose shape is not the one the loader expects.
    SCHEMA_TENSOR_SHAPE = "schema-tensor-shape", Error, References::NONE;
    /// A special token whose id llama.cpp uses (the key's, or its default for the tokenizer
    /// when the key is absent or past the vocabulary) is outside the vocabulary.
    SCHEMA_SPECIAL_TOKEN_DEFAULT = "schema-special-token-default", Error, References::NONE;
}
