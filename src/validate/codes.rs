//! The container's diagnostic codes, in one list ([`ALL`]): the rules of the specification
//! and of the reference readers. Each other crate declares its own (gguf-llama's `schema-*`,
//! gguf-tools' `set-*`, gguf-tokenizer's `tokenizer-*`, gguf-template's `template-*`).

use super::reference::{GGML, GGML_0316, GGML_43, GGML_DATA, PY, SPEC};
use super::References;

crate::diagnostic_codes! {
    /// The file does not start with the magic `GGUF`.
    BAD_MAGIC = "bad-magic", Error, References::ALL;
    /// A version other than 1, 2 or 3.
    UNSUPPORTED_VERSION = "unsupported-version", Error, References::ALL;
    /// A value type id that names no type.
    UNKNOWN_VALUE_TYPE = "unknown-value-type", Error, References::ALL;
    /// The file ends inside a construct.
    TRUNCATED = "truncated", Error, References::ALL;
    /// A length or count that claims more bytes than the file has.
    LENGTH_PAST_END = "length-past-end", Error, References::ALL;
    /// Arrays nested deeper than the parser's bound.
    NESTING_TOO_DEEP = "nesting-too-deep", Error, References::ALL;
    /// The bytes cannot be decoded for another reason.
    PARSE_ERROR = "parse-error", Error, References::ALL;
    /// GGUF version 1.
    VERSION_1 = "version-1", Error, GGML.union(PY);
    /// A byte-swapped file: ggml on a little-endian host reads a huge version.
    BIG_ENDIAN = "big-endian", Error, GGML;
    /// A key of length 0.
    EMPTY_KEY = "empty-key", Error, GGML.union(SPEC);
    /// A key seen before.
    DUPLICATE_KEY = "duplicate-key", Error, GGML.union(PY);
    /// A key named as one of gguf-py's own header fields (`GGUF.version`, `GGUF.tensor_count`, `GGUF.kv_count`).
    KEY_RESERVED_BY_GGUF_PY = "key-reserved-by-gguf-py", Error, PY;
    /// A key that is not UTF-8.
    KEY_INVALID_UTF8 = "key-invalid-utf8", Error, PY.union(SPEC);
    /// A key that is not ASCII.
    KEY_NOT_ASCII = "key-not-ascii", Error, SPEC;
    /// A key that is not dotted `lower_snake_case`.
    KEY_SYNTAX = "key-syntax", Error, SPEC;
    /// A key longer than 65535 bytes.
    KEY_TOO_LONG = "key-too-long", Error, SPEC;
    /// A string value that is not UTF-8.
    STRING_INVALID_UTF8 = "string-invalid-utf8", Error, SPEC;
    /// A string longer than ggml's `GGUF_MAX_STRING_LENGTH` (2^30 bytes).
    STRING_TOO_LONG = "string-too-long", Error, GGML_43;
    /// An array longer than ggml's `GGUF_MAX_ARRAY_ELEMENTS` (2^30 elements).
    ARRAY_TOO_LONG = "array-too-long", Error, GGML_43;
    /// A bool byte other than 0 or 1.
    BOOL_INVALID = "bool-invalid", Error, SPEC;
    /// An array of arrays.
    ARRAY_NESTED = "array-nested", Error, GGML;
    /// An empty array whose element type names no type.
    ARRAY_TYPE_UNKNOWN = "array-type-unknown", Error, GGML.union(SPEC);
    /// `general.alignment` is not a uint32.
    ALIGNMENT_TYPE = "alignment-type", Error, References::ALL;
    /// `general.alignment` is zero.
    ALIGNMENT_ZERO = "alignment-zero", Error, References::ALL;
    /// `general.alignment` is not a power of two.
    ALIGNMENT_NOT_POWER_OF_TWO = "alignment-not-power-of-two", Error, GGML.union(PY);
    /// `general.alignment` is not a multiple of 8.
    ALIGNMENT_NOT_MULTIPLE_OF_8 = "alignment-not-multiple-of-8", Error, SPEC;
    /// A tensor name longer than the readers allow.
    TENSOR_NAME_TOO_LONG = "tensor-name-too-long", Error, GGML.union(SPEC);
    /// A tensor name that is not UTF-8.
    TENSOR_NAME_INVALID_UTF8 = "tensor-name-invalid-utf8", Error, PY.union(SPEC);
    /// A tensor name seen before.
    DUPLICATE_TENSOR_NAME = "duplicate-tensor-name", Error, GGML.union(PY);
    /// More than 4 dimensions.
    TOO_MANY_DIMS = "too-many-dims", Error, GGML.union(SPEC);
    /// A dimension of 2^63 or more.
    DIM_TOO_LARGE = "dim-too-large", Error, References::ALL;
    /// A zero dimension after the first: the ggml of llama-cpp-python 0.3.16 divides by it and crashes (SIGFPE).
    DIM_ZERO_CRASH = "dim-zero-crash", Error, GGML_0316;
    /// A ggml type id that names no type.
    TENSOR_TYPE_UNKNOWN = "tensor-type-unknown", Error, References::ALL;
    /// A ggml type that has been removed.
    TENSOR_TYPE_REMOVED = "tensor-type-removed", Error, References::ALL;
    /// A ggml type gguf-py 0.19.0 does not know.
    TENSOR_TYPE_NOT_IN_GGUF_PY = "tensor-type-not-in-gguf-py", Error, PY;
    /// Rows that are not a whole number of the type's blocks.
    TENSOR_ROW_NOT_BLOCK_MULTIPLE = "tensor-row-not-block-multiple", Error, References::ALL;
    /// An element count or byte size a reader cannot hold.
    TENSOR_TOO_LARGE = "tensor-too-large", Error, References::ALL;
    /// A data offset that is not a multiple of the alignment.
    TENSOR_OFFSET_UNALIGNED = "tensor-offset-unaligned", Error, SPEC;
    /// Tensor data not laid out one after the other, padded, in info order.
    TENSOR_OFFSET_NOT_SEQUENTIAL = "tensor-offset-not-sequential", Error, GGML;
    /// The data section's size overflows.
    DATA_SIZE_OVERFLOW = "data-size-overflow", Error, GGML;
    /// With tensors, the padded data start is past the end of the file.
    DATA_START_PAST_EOF = "data-start-past-eof", Error, GGML_43;
    /// The padded data section is not all in the file.
    DATA_SECTION_PAST_EOF = "data-section-past-eof", Error, GGML_DATA;
    /// A tensor's data runs past the end of the file.
    TENSOR_DATA_PAST_EOF = "tensor-data-past-eof", Error, GGML_DATA.union(PY).union(SPEC);
    /// Tensor data ranges that overlap.
    TENSOR_OVERLAP = "tensor-overlap", Warning, References::NONE;
    /// Unused bytes between tensors.
    TENSOR_GAP = "tensor-gap", Note, References::NONE;
    /// Bytes after the tensor data.
    TRAILING_BYTES = "trailing-bytes", Note, References::NONE;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::{Code, Severity};

    #[test]
    fn names_are_unique_and_found() {
        let mut names: Vec<&str> = ALL.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        for &code in ALL {
            assert_eq!(Code::find(ALL, code.name()), Some(code));
            assert!(!code.summary().is_empty());
        }
    }

    #[test]
    fn only_errors_can_be_rejected_for() {
        for &code in ALL {
            if !code.rejected_by().is_empty() {
                assert_eq!(code.severity(), Severity::Error, "{code}");
            }
        }
    }
}
