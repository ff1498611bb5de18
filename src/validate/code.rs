//! Every diagnostic code, in one list: its stable name, its severity, and the references that
//! can reject a file for it. The checks, `gguf mutate`'s expectations, the tests and the
//! README's tables all take their codes from here.

use std::fmt;
use std::str::FromStr;

use super::{Reference, References, Severity};

/// Every ggml build rejects, whether or not it loads the data.
pub(crate) const GGML: References = GGML_43.union(GGML_0316);
/// Every ggml build rejects when it loads the data.
pub(crate) const GGML_DATA: References = References::of(&[
    Reference::GgmlData,
    Reference::Ggml0316Data,
    Reference::Ggml0336Data,
]);
/// The ggml builds with `GGML_TYPE_COUNT` 43 reject, whether or not they load the data: the
/// one of `tests/conformance/verdicts.json` and that of llama-cpp-python 0.3.36, which differ
/// only in their element-count check (`tensor-too-large`) and the wording of two errors.
pub(crate) const GGML_43: References = References::of(&[
    Reference::Ggml,
    Reference::GgmlData,
    Reference::Ggml0336,
    Reference::Ggml0336Data,
]);
/// The ggml of llama-cpp-python 0.3.16 (`GGML_TYPE_COUNT` 40) rejects, whether or not it
/// loads the data.
pub(crate) const GGML_0316: References =
    References::of(&[Reference::Ggml0316, Reference::Ggml0316Data]);
/// The ggml of llama-cpp-python 0.3.36 rejects, whether or not it loads the data.
pub(crate) const GGML_0336: References =
    References::of(&[Reference::Ggml0336, Reference::Ggml0336Data]);
/// gguf-py rejects.
pub(crate) const PY: References = References::of(&[Reference::GgufPy]);
/// The specification forbids.
pub(crate) const SPEC: References = References::of(&[Reference::Spec]);
/// Every reference rejects.
pub(crate) const ALL: References = References::ALL;
/// No container reference rejects: a note, a warning, or a model or shard-set rule.
const NONE: References = References::NONE;

macro_rules! codes {
    ($($(#[doc = $doc:literal])+ $variant:ident = $name:literal, $severity:ident, $rejected_by:expr;)+) => {
        /// A diagnostic's stable identifier; never reused for another meaning.
        ///
        /// It prints as its name (`duplicate-key`) and compares equal to it:
        ///
        /// ```
        /// use gguf_grammar::validate::{Code, Reference, Severity};
        ///
        /// let code: Code = "duplicate-key".parse().unwrap();
        /// assert_eq!(code, Code::DuplicateKey);
        /// assert_eq!(code, "duplicate-key");
        /// assert_eq!(code.to_string(), "duplicate-key");
        /// assert_eq!(code.severity(), Severity::Error);
        /// assert!(code.rejected_by().contains(Reference::GgufPy));
        /// assert!(Code::ALL.contains(&Code::TensorGap));
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Code {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl Code {
            /// Every code, in the list's order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),+];

            /// Its stable name, e.g. `duplicate-key`.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Code::$variant => $name,)+
                }
            }

            /// Its severity. A diagnostic that a reference rejects for is always an error.
            pub const fn severity(self) -> Severity {
                match self {
                    $(Code::$variant => Severity::$severity,)+
                }
            }

            /// The container references that can reject a file for it (which of them do
            /// may depend on the case, as when ggml and gguf-py read different keys); empty
            /// for notes, warnings, and the model and shard-set rules.
            pub const fn rejected_by(self) -> References {
                match self {
                    $(Code::$variant => $rejected_by,)+
                }
            }

            /// What the rule is, in a sentence.
            pub fn summary(self) -> &'static str {
                match self {
                    $(Code::$variant => concat!($($doc),+).trim(),)+
                }
            }
        }
    };
}

codes! {
    /// The file does not start with the magic `GGUF`.
    BadMagic = "bad-magic", Error, ALL;
    /// A version other than 1, 2 or 3.
    UnsupportedVersion = "unsupported-version", Error, ALL;
    /// A value type id that names no type.
    UnknownValueType = "unknown-value-type", Error, ALL;
    /// The file ends inside a construct.
    Truncated = "truncated", Error, ALL;
    /// A length or count that claims more bytes than the file has.
    LengthPastEnd = "length-past-end", Error, ALL;
    /// Arrays nested deeper than the parser's bound.
    NestingTooDeep = "nesting-too-deep", Error, ALL;
    /// The bytes cannot be decoded for another reason.
    ParseError = "parse-error", Error, ALL;

    /// GGUF version 1.
    Version1 = "version-1", Error, GGML.union(PY);
    /// A byte-swapped file: ggml on a little-endian host reads a huge version.
    BigEndian = "big-endian", Error, GGML;
    /// A key of length 0.
    EmptyKey = "empty-key", Error, GGML.union(SPEC);
    /// A key seen before.
    DuplicateKey = "duplicate-key", Error, GGML.union(PY);
    /// A key named as one of gguf-py's own header fields (`GGUF.version`, `GGUF.tensor_count`, `GGUF.kv_count`).
    KeyReservedByGgufPy = "key-reserved-by-gguf-py", Error, PY;
    /// A key that is not UTF-8.
    KeyInvalidUtf8 = "key-invalid-utf8", Error, PY.union(SPEC);
    /// A key that is not ASCII.
    KeyNotAscii = "key-not-ascii", Error, SPEC;
    /// A key that is not dotted `lower_snake_case`.
    KeySyntax = "key-syntax", Error, SPEC;
    /// A key longer than 65535 bytes.
    KeyTooLong = "key-too-long", Error, SPEC;
    /// A string value that is not UTF-8.
    StringInvalidUtf8 = "string-invalid-utf8", Error, SPEC;
    /// A string longer than ggml's `GGUF_MAX_STRING_LENGTH` (2^30 bytes).
    StringTooLong = "string-too-long", Error, GGML_43;
    /// An array longer than ggml's `GGUF_MAX_ARRAY_ELEMENTS` (2^30 elements).
    ArrayTooLong = "array-too-long", Error, GGML_43;
    /// A bool byte other than 0 or 1.
    BoolInvalid = "bool-invalid", Error, SPEC;
    /// An array of arrays.
    ArrayNested = "array-nested", Error, GGML;
    /// An empty array whose element type names no type.
    ArrayTypeUnknown = "array-type-unknown", Error, GGML.union(SPEC);
    /// `general.alignment` is not a uint32.
    AlignmentType = "alignment-type", Error, ALL;
    /// `general.alignment` is zero.
    AlignmentZero = "alignment-zero", Error, ALL;
    /// `general.alignment` is not a power of two.
    AlignmentNotPowerOfTwo = "alignment-not-power-of-two", Error, GGML.union(PY);
    /// `general.alignment` is not a multiple of 8.
    AlignmentNotMultipleOf8 = "alignment-not-multiple-of-8", Error, SPEC;
    /// A tensor name longer than the readers allow.
    TensorNameTooLong = "tensor-name-too-long", Error, GGML.union(SPEC);
    /// A tensor name that is not UTF-8.
    TensorNameInvalidUtf8 = "tensor-name-invalid-utf8", Error, PY.union(SPEC);
    /// A tensor name seen before.
    DuplicateTensorName = "duplicate-tensor-name", Error, GGML.union(PY);
    /// More than 4 dimensions.
    TooManyDims = "too-many-dims", Error, GGML.union(SPEC);
    /// A dimension of 2^63 or more.
    DimTooLarge = "dim-too-large", Error, ALL;
    /// A zero dimension after the first: the ggml of llama-cpp-python 0.3.16 divides by it and crashes (SIGFPE).
    DimZeroCrash = "dim-zero-crash", Error, GGML_0316;
    /// A ggml type id that names no type.
    TensorTypeUnknown = "tensor-type-unknown", Error, ALL;
    /// A ggml type that has been removed.
    TensorTypeRemoved = "tensor-type-removed", Error, ALL;
    /// A ggml type gguf-py 0.19.0 does not know.
    TensorTypeNotInGgufPy = "tensor-type-not-in-gguf-py", Error, PY;
    /// Rows that are not a whole number of the type's blocks.
    TensorRowNotBlockMultiple = "tensor-row-not-block-multiple", Error, ALL;
    /// An element count or byte size a reader cannot hold.
    TensorTooLarge = "tensor-too-large", Error, ALL;
    /// A data offset that is not a multiple of the alignment.
    TensorOffsetUnaligned = "tensor-offset-unaligned", Error, SPEC;
    /// Tensor data not laid out one after the other, padded, in info order.
    TensorOffsetNotSequential = "tensor-offset-not-sequential", Error, GGML;
    /// The data section's size overflows.
    DataSizeOverflow = "data-size-overflow", Error, GGML;
    /// With tensors, the padded data start is past the end of the file.
    DataStartPastEof = "data-start-past-eof", Error, GGML_43;
    /// The padded data section is not all in the file.
    DataSectionPastEof = "data-section-past-eof", Error, GGML_DATA;
    /// A tensor's data runs past the end of the file.
    TensorDataPastEof = "tensor-data-past-eof", Error, GGML_DATA.union(PY).union(SPEC);
    /// Tensor data ranges that overlap.
    TensorOverlap = "tensor-overlap", Warning, NONE;
    /// Unused bytes between tensors.
    TensorGap = "tensor-gap", Note, NONE;
    /// Bytes after the tensor data.
    TrailingBytes = "trailing-bytes", Note, NONE;

    /// An architecture llama.cpp's loader does not know.
    SchemaArchitectureUnsupported = "schema-architecture-unsupported", Error, NONE;
    /// An architecture whose hyperparameters and tensors are not checked.
    SchemaArchitectureUnknown = "schema-architecture-unknown", Note, NONE;
    /// A vocabulary-only file: no tensors.
    SchemaVocabOnly = "schema-vocab-only", Note, NONE;
    /// A key the loader requires is missing.
    SchemaKeyMissing = "schema-key-missing", Error, NONE;
    /// A key of a type the loader does not accept.
    SchemaKeyType = "schema-key-type", Error, NONE;
    /// The token list and its parallel arrays disagree in length, or it has fewer tokens than
    /// the architecture's graph needs (chameleon: 8196).
    SchemaTokenCount = "schema-token-count", Error, NONE;
    /// A special-token id past the vocabulary.
    SchemaSpecialToken = "schema-special-token", Warning, NONE;
    /// A `tokenizer.ggml.model` the vocab loader does not know.
    SchemaTokenizerModel = "schema-tokenizer-model", Error, NONE;
    /// A `tokenizer.ggml.pre` the vocab loader does not know.
    SchemaTokenizerPre = "schema-tokenizer-pre", Error, NONE;
    /// A BPE vocabulary without merges.
    SchemaMergesMissing = "schema-merges-missing", Error, NONE;
    /// An SPM vocabulary without the byte tokens `<0x00>`..`<0xFF>`.
    SchemaByteTokens = "schema-byte-tokens", Error, NONE;
    /// A block count the loader cannot use (zero, below the sliding-window pattern, or one
    /// the architecture's graph has no model type for).
    SchemaBlockCount = "schema-block-count", Error, NONE;
    /// A token type that names no type.
    SchemaTokenType = "schema-token-type", Error, NONE;
    /// A `general.file_type` that names no type.
    SchemaFileType = "schema-file-type", Error, NONE;
    /// A quantization version the loader does not know.
    SchemaQuantizationVersion = "schema-quantization-version", Error, NONE;
    /// A head count that is zero or does not divide the embedding, or a head size other than
    /// the one the loader sizes the attention by (plamo2).
    SchemaHeadCount = "schema-head-count", Error, NONE;
    /// A KV head count that is zero or does not divide the head count.
    SchemaHeadCountKv = "schema-head-count-kv", Error, NONE;
    /// A rope dimension larger than a head.
    SchemaRopeDimension = "schema-rope-dimension", Error, NONE;
    /// Expert counts that disagree (used more than there are, or zero).
    SchemaExpertCount = "schema-expert-count", Error, NONE;
    /// A tensor the loader requires is missing.
    SchemaTensorMissing = "schema-tensor-missing", Error, NONE;
    /// A tensor the loader does not expect.
    SchemaTensorUnexpected = "schema-tensor-unexpected", Error, NONE;
    /// A tensor for a block past the block count.
    SchemaTensorBlockIndex = "schema-tensor-block-index", Error, NONE;
    /// A tensor whose shape is not the one the loader expects.
    SchemaTensorShape = "schema-tensor-shape", Error, NONE;
    /// A special token whose id llama.cpp uses (the key's, or its default for the tokenizer
    /// when the key is absent or past the vocabulary) is outside the vocabulary.
    SchemaSpecialTokenDefault = "schema-special-token-default", Error, NONE;

    /// A shard of the set is missing or not GGUF.
    SetMissingShard = "set-missing-shard", Error, NONE;
    /// A shard's `split.no` is not its place by name.
    SetSplitNo = "set-split-no", Error, NONE;
    /// A shard's `split.count` is not the number of shards by name.
    SetSplitCount = "set-split-count", Error, NONE;
    /// `split.tensors.count` is not the number of tensors found in all shards.
    SetTensorsCount = "set-tensors-count", Error, NONE;
    /// Metadata outside the first shard.
    SetMetadataOutsideFirst = "set-metadata-outside-first", Warning, NONE;
    /// A tensor in more than one shard.
    SetDuplicateTensor = "set-duplicate-tensor", Error, NONE;

    /// A BPE merge that is not two token texts and a space, or whose joined text is no
    /// token.
    TokenizerMergeUnknown = "tokenizer-merge-unknown", Warning, NONE;
    /// A BPE vocabulary without the token of a byte-alphabet character that UTF-8 text can
    /// need.
    TokenizerByteAlphabet = "tokenizer-byte-alphabet", Warning, NONE;
    /// A byte-type token llama.cpp cannot decode to a byte (its text is not `<0xXX>`, or the
    /// vocabulary is BPE or WPM).
    TokenizerByteToken = "tokenizer-byte-token", Error, NONE;
    /// A special-token id naming a token that is not a control, user-defined or unknown
    /// token: it decodes as text.
    TokenizerSpecialType = "tokenizer-special-type", Warning, NONE;

    /// A chat template key whose value is not a UTF-8 string.
    TemplateNotText = "template-not-text", Error, NONE;
    /// A chat template that does not parse (jinja2's syntax), with its line and column.
    TemplateSyntax = "template-syntax", Error, NONE;
    /// A chat template jinja2 parses but llama.cpp 0.3.16's engine (minja) does not: llama.cpp falls back to chatml.
    TemplateLlamaCppSyntax = "template-llama-cpp-syntax", Error, NONE;
    /// A chat template that fails for a one-message conversation.
    TemplateMinimalRender = "template-minimal-render", Error, NONE;
    /// A chat template that fails for a system/user/assistant/user conversation.
    TemplateOrdinaryRender = "template-ordinary-render", Warning, NONE;
    /// A chat template that never opens the assistant's turn (`add_generation_prompt` changes nothing).
    TemplateNoGenerationPrompt = "template-no-generation-prompt", Warning, NONE;
    /// A chat template that writes a special-looking token the vocabulary does not have.
    TemplateTokenNotInVocab = "template-token-not-in-vocab", Warning, NONE;
    /// A chat template that writes a BOS other than the file's `tokenizer.ggml.bos_token_id`.
    TemplateBosMismatch = "template-bos-mismatch", Warning, NONE;
}

impl Code {
    /// The code named `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|code| code.name() == name)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// A name that is not a code.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no diagnostic code is named {0:?}")]
pub struct UnknownCode(pub String);

impl FromStr for Code {
    type Err = UnknownCode;
    fn from_str(name: &str) -> Result<Code, UnknownCode> {
        Code::from_name(name).ok_or_else(|| UnknownCode(name.into()))
    }
}

impl PartialEq<str> for Code {
    fn eq(&self, name: &str) -> bool {
        self.name() == name
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, name: &&str) -> bool {
        self.name() == *name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut names: Vec<&str> = Code::ALL.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Code::ALL.len());
        for &code in Code::ALL {
            assert_eq!(Code::from_name(code.name()), Some(code));
            assert!(!code.summary().is_empty());
        }
        assert!("no-such-code".parse::<Code>().is_err());
    }

    #[test]
    fn only_errors_can_be_rejected_for() {
        for &code in Code::ALL {
            if !code.rejected_by().is_empty() {
                assert_eq!(code.severity(), Severity::Error, "{code}");
            }
        }
    }
}
