//! `fit`: crates/gguf-fit's estimate of the memory llama.cpp allocates, with its knobs.

use gguf_fit::{estimate_shards, render, Params};
use gguf_grammar::GgmlType;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::Document;

/// The cache types llama.cpp's `--cache-type-k/-v` accept (common/arg.cpp's
/// kv_cache_types), as `gguf fit` takes them.
const CACHE_TYPES: [&str; 9] = [
    "f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1",
];

fn cache_type(what: &str, name: &str) -> PyResult<GgmlType> {
    match GgmlType::from_name(name) {
        Some(t) if CACHE_TYPES.contains(&name) => Ok(t),
        _ => Err(PyValueError::new_err(format!(
            "{what} {name:?}: expected one of {}",
            CACHE_TYPES.join(", ")
        ))),
    }
}

/// The estimate for a model (its shards, the first holding the metadata) as `gguf fit
/// --json` prints one: a JSON object, sizes in bytes.
#[pyfunction]
#[pyo3(signature = (
    documents, ctx_size = 4096, batch_size = 2048, ubatch_size = 512, parallel = 1,
    cache_type_k = "f16", cache_type_v = "f16", flash_attn = false, n_gpu_layers = 0, gpus = 0,
    tensor_split = Vec::new(), no_kv_offload = false, mmap = true, swa_full = false,
    kv_unified = false, embeddings = false, repack = true, release = "0.3.16"
))]
#[allow(clippy::too_many_arguments)]
pub fn fit(
    documents: Vec<PyRef<'_, Document>>,
    ctx_size: u32,
    batch_size: u32,
    ubatch_size: u32,
    parallel: u32,
    cache_type_k: &str,
    cache_type_v: &str,
    flash_attn: bool,
    n_gpu_layers: i32,
    gpus: u32,
    tensor_split: Vec<f32>,
    no_kv_offload: bool,
    mmap: bool,
    swa_full: bool,
    kv_unified: bool,
    embeddings: bool,
    repack: bool,
    release: &str,
) -> PyResult<String> {
    let params = Params {
        release: crate::release(Some(release))?,
        n_ctx: ctx_size,
        n_batch: batch_size,
        n_ubatch: ubatch_size,
        n_parallel: parallel,
        type_k: cache_type("cache_type_k", cache_type_k)?,
        type_v: cache_type("cache_type_v", cache_type_v)?,
        flash_attn,
        swa_full,
        kv_unified,
        embeddings,
        n_gpu_layers,
        n_gpu_devices: gpus,
        tensor_split,
        no_kv_offload,
        mmap,
        cpu_repack: repack,
    };
    let shards = documents
        .iter()
        .map(|d| d.parsed())
        .collect::<PyResult<Vec<_>>>()?;
    let estimate =
        estimate_shards(&shards, &params).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let json = render::json(std::slice::from_ref(&estimate));
    // One estimate: the array's only element.
    Ok(json[1..json.len() - 1].to_string())
}

/// Every shard's path when `path` names the first shard of a set
/// (`NAME-00001-of-0000N.gguf`), else `[path]`.
#[pyfunction]
pub fn shard_paths(path: std::path::PathBuf) -> Vec<std::path::PathBuf> {
    use gguf_tools::set::{shard_name, shard_path};
    match shard_name(&path) {
        Some((prefix, _, count)) => (0..count)
            .map(|no| shard_path(&prefix, no, count))
            .collect(),
        None => vec![path],
    }
}
