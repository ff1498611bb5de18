//! The shard-set rules (`set-*`) of [`set`](crate::set): none is a container rule.

use gguf_grammar::validate::References;

gguf_grammar::diagnostic_codes! {
    /// A shard of the set is missing or not GGUF.
    SET_MISSING_SHARD = "set-missing-shard", Error, References::NONE;
    /// A shard's `split.no` is not its place by name.
    SET_SPLIT_NO = "set-split-no", Error, References::NONE;
    /// A shard's `split.count` is not the number of shards by name.
    SET_SPLIT_COUNT = "set-split-count", Error, References::NONE;
    /// `split.tensors.count` is not the number of tensors found in all shards.
    SET_TENSORS_COUNT = "set-tensors-count", Error, References::NONE;
    /// Metadata outside the first shard.
    SET_METADATA_OUTSIDE_FIRST = "set-metadata-outside-first", Warning, References::NONE;
    /// A tensor in more than one shard.
    SET_DUPLICATE_TENSOR = "set-duplicate-tensor", Error, References::NONE;
}
