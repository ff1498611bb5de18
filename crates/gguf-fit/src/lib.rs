//! Will it fit? The memory llama.cpp allocates to run a GGUF model, from its header alone.
//!
//! [`estimate`] follows llama.cpp's own code step by step, for the release [`Params::release`]
//! names (the llama.cpp vendored in llama-cpp-python 0.3.16 or 0.3.36; the differences are
//! noted where they apply), so that the figures are the ones that release logs when it loads
//! the model:
//!
//! - **weights**, per buffer: `llama_model::load_tensors` (llama-model.cpp) assigns each
//!   tensor to a layer (input, repeating `blk.N`, output), each layer to a device
//!   ([`split`]), and each tensor to a buffer type (`select_weight_buft`); a memory-mapped CPU
//!   buffer spans the file bytes from its first tensor to the end of its last
//!   (`llama_model_loader::get_mapping_range`), any other buffer is the sum of its tensors'
//!   sizes, each rounded up to the buffer's alignment (`ggml_backend_alloc_ctx_tensors_from_buft`).
//! - **KV cache**, per layer: `llama_model::create_memory` pads the context
//!   (`llama_kv_cache_unified::get_padding`: 256 with flash attention, else 32) and splits it
//!   into one stream per sequence unless the cache is unified; the cache
//!   (llama-kv-cache-unified.cpp) holds, for every layer, K `[n_embd_head_k·n_head_kv(il),
//!   kv_size, n_stream]` and V likewise (V rows padded to the widest layer's when V is
//!   transposed, i.e. without flash attention); sliding-window layers get their own, smaller
//!   cache (llama-kv-cache-unified-iswa.cpp). MLA models (deepseek2 converted with
//!   `key_length_mla`) store their compressed latent this way: their GGUF declares one KV head
//!   of `kv_lora_rank + n_rot` keys and `kv_lora_rank` values.
//! - **recurrent state** (llama-memory-recurrent.cpp): per layer, `r` of `n_embd_r()` and `s`
//!   of `n_embd_s()` f32 values per cell, one cell per sequence.
//! - **output buffer** (`llama_context::output_reserve`): logits (and embeddings when asked)
//!   for `n_seq_max` outputs, f32.
//! - **compute buffer**: estimated from the architecture and shapes ([`compute`]); it is the
//!   only figure that is not exact.
//!
//! The CPU's extra buffer type `CPU_REPACK` (ggml-cpu/repack.cpp) holds Q4_0, Q4_K and IQ4_NL
//! matrices with a multiple of 8 rows when ggml is built for AVX2 ([`Params::cpu_repack`]);
//! such tensors are copied out of the mapping.

#![deny(missing_docs)]

mod alloc;
pub mod compute;
pub mod host_fit;
pub mod hparams;
pub mod render;
pub mod split;

use std::collections::BTreeMap;
use std::fmt;

use gguf_grammar::{GgmlType, Gguf};
pub use gguf_llama::Release;

pub use hparams::{Hparams, MemoryKind, SwaType};
pub use split::Device;

/// ggml's `TENSOR_ALIGNMENT`: the CPU buffer types' alignment.
pub const CPU_ALIGNMENT: u64 = 32;
/// ggml-cuda's buffer alignment, used for GPU buffers.
pub const GPU_ALIGNMENT: u64 = 128;
/// ggml-cuda's `MATRIX_ROW_PADDING`: the last row of a quantised matrix is padded to it.
pub const GPU_MATRIX_ROW_PADDING: u64 = 512;

/// Why an estimate could not be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FitError(pub String);

impl FitError {
    fn new(message: impl Into<String>) -> Self {
        FitError(message.into())
    }
}

impl fmt::Display for FitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FitError {}

/// llama.cpp's knobs, with the defaults of its command-line tools (`common_params`) in the
/// release modelled ([`Params::of`]; [`Params::default`] is [`Release::NEWEST`]'s).
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// The llama.cpp release whose allocation is modelled.
    pub release: Release,
    /// `--ctx-size`; 0 takes the model's training context. Default 4096 in 0.3.16, 0 in
    /// 0.3.36.
    pub n_ctx: u32,
    /// `--batch-size`. Default 2048.
    pub n_batch: u32,
    /// `--ubatch-size`. Default 512.
    pub n_ubatch: u32,
    /// `--parallel` (`n_seq_max`). Default 1.
    pub n_parallel: u32,
    /// `--cache-type-k`. Default f16.
    pub type_k: GgmlType,
    /// `--cache-type-v`. Default f16 (a quantised V needs flash attention).
    pub type_v: GgmlType,
    /// `--flash-attn` on. Default off in 0.3.16; in 0.3.36 the default is `auto`, which
    /// llama.cpp counts as on when it creates the caches (`flash_attn_type != DISABLED`) and
    /// keeps on wherever the backend runs the op (the CPU runs it for every cache type):
    /// [`Params::of`] sets it.
    pub flash_attn: bool,
    /// `--swa-full`: full-size cache for sliding-window layers. Default off.
    pub swa_full: bool,
    /// `--kv-unified`: one KV stream shared by all sequences. Default off.
    pub kv_unified: bool,
    /// `--embeddings`: the output buffer also holds embeddings. Default off.
    pub embeddings: bool,
    /// `--n-gpu-layers`. Default 0.
    pub n_gpu_layers: i32,
    /// How many GPUs (llama.cpp's `model.devices`). Default 0.
    pub n_gpu_devices: u32,
    /// `--tensor-split`: the share of each GPU; empty splits evenly (llama.cpp splits by free
    /// memory, which a header cannot know).
    pub tensor_split: Vec<f32>,
    /// `--no-kv-offload`: the KV cache stays on the CPU. Default off.
    pub no_kv_offload: bool,
    /// `--mmap` (default) or `--no-mmap`.
    pub mmap: bool,
    /// Whether the CPU backend repacks Q4_0/Q4_K/IQ4_NL matrices (`CPU_REPACK`): true for an
    /// x86-64 build with AVX2, as llama.cpp builds by default there. Default true. (With a GPU
    /// the GPU's host buffer type comes first and nothing is repacked.)
    pub cpu_repack: bool,
}

impl Params {
    /// The defaults of `release`'s command-line tools (`common_params` in common/common.h).
    pub fn of(release: Release) -> Params {
        let newer = release >= Release::LlamaCppPython0336;
        Params {
            release,
            n_ctx: if newer { 0 } else { 4096 },
            flash_attn: newer,
            ..Params::base()
        }
    }

    fn base() -> Params {
        Params {
            release: Release::LlamaCppPython0316,
            n_ctx: 4096,
            n_batch: 2048,
            n_ubatch: 512,
            n_parallel: 1,
            type_k: GgmlType::F16,
            type_v: GgmlType::F16,
            flash_attn: false,
            swa_full: false,
            kv_unified: false,
            embeddings: false,
            n_gpu_layers: 0,
            n_gpu_devices: 0,
            tensor_split: Vec::new(),
            no_kv_offload: false,
            mmap: true,
            cpu_repack: true,
        }
    }
}

impl Default for Params {
    fn default() -> Self {
        Params::of(Release::NEWEST)
    }
}

/// One backend buffer, named as llama.cpp names it (`CPU_Mapped`, `CPU_REPACK`, `CPU`;
/// GPUs are `GPU0`, `GPU1`…).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    /// The buffer type's name.
    pub name: String,
    /// Where it lives.
    pub device: Device,
    /// Its size in bytes.
    pub bytes: u64,
}

/// One layer's cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheLayer {
    /// The layer index.
    pub layer: u32,
    /// Where the cache lives.
    pub device: Device,
    /// Cells (tokens per stream for KV, sequences for recurrent state).
    pub cells: u32,
    /// Whether it is a sliding-window layer's cache.
    pub swa: bool,
    /// K bytes (recurrent: the `r` state).
    pub k_bytes: u64,
    /// V bytes (recurrent: the `s` state).
    pub v_bytes: u64,
    /// Values in a K row (recurrent: the whole 1-D `r` tensor).
    pub k_ne0: u64,
    /// Values in a V row (recurrent: the whole 1-D `s` tensor).
    pub v_ne0: u64,
}

/// One cache as llama.cpp creates it (a `llama_kv_cache_unified` or `llama_memory_recurrent`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cache {
    /// `kv` (attention) or `rs` (recurrent state).
    pub kind: &'static str,
    /// Cells per stream.
    pub cells: u32,
    /// Streams (one per sequence unless unified).
    pub n_stream: u32,
    /// Whether this is the sliding-window layers' cache.
    pub swa: bool,
    /// K (or r) type.
    pub type_k: GgmlType,
    /// V (or s) type.
    pub type_v: GgmlType,
    /// Its layers.
    pub layers: Vec<CacheLayer>,
    /// Its buffers, one per device.
    pub buffers: Vec<Buffer>,
}

impl Cache {
    /// Sum of the K (or r) tensors' sizes, as llama.cpp's `size_k_bytes()`.
    pub fn k_bytes(&self) -> u64 {
        self.layers
            .iter()
            .fold(0, |a, l| a.saturating_add(l.k_bytes))
    }

    /// Sum of the V (or s) tensors' sizes, as llama.cpp's `size_v_bytes()`.
    pub fn v_bytes(&self) -> u64 {
        self.layers
            .iter()
            .fold(0, |a, l| a.saturating_add(l.v_bytes))
    }
}

/// What [`estimate`] computes.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// The llama.cpp release whose allocation the figures are.
    pub release: Release,
    /// The hyperparameters read.
    pub hparams: Hparams,
    /// The context size after llama.cpp's padding (`llama_n_ctx`).
    pub n_ctx: u32,
    /// `n_batch` after clamping to the context.
    pub n_batch: u32,
    /// `n_ubatch` after clamping to the batch.
    pub n_ubatch: u32,
    /// Each layer's device (index `n_layer` is the output layer).
    pub layer_devices: Vec<Device>,
    /// The model's weight buffers.
    pub weights: Vec<Buffer>,
    /// The caches (none for encoder-only models).
    pub caches: Vec<Cache>,
    /// The output buffer (logits, embeddings), in host memory.
    pub output: Buffer,
    /// The compute buffers (estimated); empty when llama.cpp reserves none (no memory module).
    /// `Err`: not estimated, and why: with GPU devices ([`Params::n_gpu_devices`] > 0)
    /// llama.cpp's scheduler (`ggml_backend_sched`) splits the graph across the backends
    /// ([`compute::NOT_ESTIMATED_GPU`]), the graphs of [`compute::NOT_MODELLED`] are not
    /// replayed ([`compute::NOT_ESTIMATED_GRAPH`]), and for 0.3.36 only the dense llama graph
    /// is ([`compute::NOT_ESTIMATED_RELEASE`]); either way no device's figure is given.
    pub compute: Result<Vec<Buffer>, &'static str>,
}

impl Estimate {
    /// Bytes on `device`: weights, caches, output and compute buffers (without the compute
    /// buffers when they are not estimated).
    pub fn total_on(&self, device: Device) -> u64 {
        let caches = self.caches.iter().flat_map(|c| c.buffers.iter());
        self.weights
            .iter()
            .chain(caches)
            .chain(std::iter::once(&self.output))
            .chain(self.compute.iter().flatten())
            .filter(|b| b.device == device)
            .fold(0u64, |a, b| a.saturating_add(b.bytes))
    }

    /// Every device that holds something, CPU first.
    pub fn devices(&self) -> Vec<Device> {
        let mut devices = vec![Device::Cpu];
        let caches = self.caches.iter().flat_map(|c| c.buffers.iter());
        for b in self
            .weights
            .iter()
            .chain(caches)
            .chain(self.compute.iter().flatten())
        {
            if !devices.contains(&b.device) {
                devices.push(b.device);
            }
        }
        devices.sort();
        devices
    }
}

/// `n` rounded up to a multiple of `to`; `None` past 64 bits.
fn pad(n: u64, to: u64) -> Option<u64> {
    n.div_ceil(to).checked_mul(to)
}

/// The refusal of a figure that does not fit in 64 bits: `what` names it and the inputs it
/// grows with.
fn too_large(what: impl fmt::Display) -> FitError {
    FitError::new(format!("{what} does not fit in 64 bits"))
}

/// `a + b`, or the refusal of `what` past 64 bits.
fn add(a: u64, b: u64, what: &dyn Fn() -> String) -> Result<u64, FitError> {
    a.checked_add(b).ok_or_else(|| too_large(what()))
}

fn pad32(n: u32, to: u32) -> Result<u32, FitError> {
    n.div_ceil(to)
        .checked_mul(to)
        .ok_or_else(|| FitError::new("context size overflows"))
}

/// Where `load_tensors` places a tensor: its layer (`llm_tensor_info.layer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layer {
    Input,
    Repeating(u32),
    Output,
}

fn layer_of(name: &str) -> Layer {
    if let Some(rest) = name.strip_prefix("blk.") {
        if let Some(n) = rest.split('.').next().and_then(|n| n.parse().ok()) {
            return Layer::Repeating(n);
        }
    }
    let base = name.split('.').next().unwrap_or(name);
    match base {
        // LLM_TENSOR_LAYER_INPUT in llama-arch.cpp's LLM_TENSOR_INFOS.
        "token_embd" | "position_embd" | "token_embd_norm" | "token_types" | "conv1d" => {
            Layer::Input
        }
        // rope_freqs is a per-layer tensor created for layer 0 (and duplicated for the others).
        "rope_freqs" | "rope_factors_long" | "rope_factors_short" => Layer::Repeating(0),
        _ => Layer::Output,
    }
}

/// Whether the tensor's op is a matrix multiplication (`GGML_OP_MUL_MAT`/`_ID` in
/// `LLM_TENSOR_INFOS`), the only ops the CPU repack buffer supports. Embedding lookups
/// (`GET_ROWS`: token_embd, position_embd, token_types, per_layer_token_embd, NextN's
/// embed_tokens) and norms are not; every other 2-D/3-D `.weight` of the tables is.
fn is_matmul(name: &str, dims: &[u64]) -> bool {
    let base = name.rsplit('.').nth(1).unwrap_or("");
    let lookup = matches!(
        base,
        "token_embd" | "position_embd" | "token_types" | "per_layer_token_embd" | "embed_tokens"
    );
    name.ends_with(".weight")
        && !lookup
        && !base.contains("norm")
        && (dims.len() == 2 || dims.len() == 3)
}

/// `ggml_repack_get_optimal_repack_type` for an AVX2 build (ggml-cpu/repack.cpp), with
/// `supports_op`'s 2-D (MUL_MAT) / 3-D (MUL_MAT_ID) condition.
fn repackable(ty: GgmlType, dims: &[u64], expert: bool) -> bool {
    let dims_ok = if expert {
        dims.len() == 3
    } else {
        dims.len() == 2
    };
    dims_ok
        && matches!(ty, GgmlType::Q4_0 | GgmlType::Q4_K | GgmlType::IQ4_NL)
        && dims.get(1).is_some_and(|&ne1| ne1 % 8 == 0)
}

/// A tensor to place: its shard, data offset and size.
#[derive(Clone, Debug)]
struct Placed {
    shard: usize,
    offset: u64,
    n_bytes: u64,
    ty: GgmlType,
    ne0: u64,
}

/// The buffer types weights go to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Buft {
    Cpu,
    CpuRepack,
    Gpu(u32),
}

/// GPU buffer size of a tensor: ggml-cuda's `get_alloc_size`, then its alignment; `None`
/// past 64 bits.
fn gpu_alloc(n_bytes: u64, ty: GgmlType, ne0: u64) -> Option<u64> {
    let mut size = n_bytes;
    if ty.is_quantized() == Some(true) && ne0 % GPU_MATRIX_ROW_PADDING != 0 {
        let row = ty.n_bytes(&[GPU_MATRIX_ROW_PADDING - ne0 % GPU_MATRIX_ROW_PADDING]);
        size = size.checked_add(row.unwrap_or(0))?;
    }
    pad(size, GPU_ALIGNMENT)
}

/// Estimates the memory llama.cpp allocates for a model in one file.
pub fn estimate(gguf: &Gguf<'_>, params: &Params) -> Result<Estimate, FitError> {
    estimate_shards(std::slice::from_ref(gguf), params)
}

/// Estimates the memory of a model split in shards (the first holds the metadata).
pub fn estimate_shards(shards: &[Gguf<'_>], params: &Params) -> Result<Estimate, FitError> {
    let first = shards.first().ok_or_else(|| FitError::new("no file"))?;
    if shards.iter().all(|g| g.tensors.is_empty()) {
        // llama_model_load fails on the first missing tensor (`token_embd.weight`).
        return Err(FitError::new(
            "no tensors: a vocabulary-only file, llama.cpp loads no model from it",
        ));
    }
    let hp = Hparams::read(first)?;
    if let Some(refusal) = gguf_llama::schema::architecture_refusal(params.release, &hp.arch) {
        // llama_model_load: "error loading model architecture: ..."
        return Err(FitError::new(format!(
            "the {} fails to load it: \"{refusal}\"",
            params.release.name()
        )));
    }
    let newer = params.release >= Release::LlamaCppPython0336;
    if hp.n_vocab == 0 {
        return Err(FitError::new("no vocabulary (`tokenizer.ggml.tokens`)"));
    }
    if params.type_v.is_quantized() == Some(true) && !params.flash_attn {
        // llama_init_from_model refuses it.
        return Err(FitError::new("V cache quantization requires flash_attn"));
    }
    if newer && hp.n_embd_head_k_mla != 0 && params.type_k != params.type_v {
        return Err(FitError::new(format!(
            "model does not support different K ({}) and V ({}) cache types",
            params.type_k.ggml_type_name().unwrap_or("?"),
            params.type_v.ggml_type_name().unwrap_or("?")
        )));
    }
    if newer && params.flash_attn {
        // 0.3.36's llama_init_from_model: a quantised cache type's block must divide the head.
        for (what, ty, head) in [
            ("K", params.type_k, hp.n_embd_head_k),
            ("V", params.type_v, hp.n_embd_head_v),
        ] {
            let block = ty.block_size().unwrap_or(1);
            if ty.is_quantized() == Some(true) && u64::from(head) % block != 0 {
                return Err(FitError::new(format!(
                    "{what} cache type {} with block size {block} does not divide n_embd_head_{}={head}",
                    ty.ggml_type_name().unwrap_or("?"),
                    what.to_lowercase()
                )));
            }
        }
    }
    if hp.arch == "plm" && params.flash_attn {
        // Measured on the tiny plm model (scripts/check-fit.sh), in both releases: its graph's
        // values do not match the cache rows llama.cpp stores them in with flash attention.
        return Err(FitError::new(
            "plm with flash attention: llama.cpp aborts storing the values in the cache \
             (ggml_set_rows: GGML_ASSERT(a->ne[0] == b->ne[0]))",
        ));
    }
    if params.n_gpu_devices > 16 {
        // llama_max_devices()
        return Err(FitError::new("llama.cpp supports at most 16 devices"));
    }
    let layer_devices = split::layer_devices(
        hp.n_layer,
        params.n_gpu_layers,
        params.n_gpu_devices,
        &params.tensor_split,
    );
    let device_of = |layer: Layer| match layer {
        Layer::Input => Device::Cpu,
        Layer::Output => layer_devices[hp.n_layer as usize],
        Layer::Repeating(n) => layer_devices
            .get(n as usize)
            .copied()
            .unwrap_or(Device::Cpu),
    };
    let buft_for = |device: Device, name: &str, t: &Placed, dims: &[u64]| match device {
        Device::Gpu(i) => Buft::Gpu(i),
        Device::Cpu => {
            let expert = name.contains("_exps.");
            // make_cpu_buft_list puts the first GPU's host buffer type before the CPU's extra
            // types, and it takes every weight (with mmap it is then replaced by the plain
            // CPU type): with a GPU nothing is repacked.
            if params.cpu_repack
                && params.n_gpu_devices == 0
                && is_matmul(name, dims)
                && repackable(t.ty, dims, expert)
            {
                Buft::CpuRepack
            } else {
                Buft::Cpu
            }
        }
    };

    // One context per buffer type, holding tensor names (a duplicate is created only when the
    // context does not hold the name yet).
    let mut ctxs: BTreeMap<Buft, BTreeMap<String, Placed>> = BTreeMap::new();
    let mut token_embd: Option<(Placed, Vec<u64>)> = None;
    let mut has_output = false;
    let mut rope: Vec<(String, Placed, Vec<u64>)> = Vec::new();
    for (shard, gguf) in shards.iter().enumerate() {
        for t in &gguf.tensors {
            let name = t
                .info
                .name
                .to_str()
                .map_err(|_| FitError::new("a tensor name is not UTF-8"))?;
            let n_bytes = t.n_bytes.ok_or_else(|| {
                FitError::new(format!("tensor `{name}`: unknown type or bad shape"))
            })?;
            let offset = t
                .data_offset
                .ok_or_else(|| FitError::new(format!("tensor `{name}`: offset overflows")))?;
            let placed = Placed {
                shard,
                offset,
                n_bytes,
                ty: t.info.ggml_type,
                ne0: t.info.dims.first().copied().unwrap_or(1),
            };
            let layer = layer_of(name);
            if let Layer::Repeating(n) = layer {
                if n >= hp.n_layer {
                    return Err(FitError::new(format!(
                        "tensor `{name}`: layer {n} of {}",
                        hp.n_layer
                    )));
                }
            }
            match name {
                "token_embd.weight" => token_embd = Some((placed.clone(), t.info.dims.clone())),
                "output.weight" => has_output = true,
                _ => {}
            }
            if name.starts_with("rope_") {
                rope.push((name.to_string(), placed.clone(), t.info.dims.clone()));
            }
            let buft = buft_for(device_of(layer), name, &placed, &t.info.dims);
            ctxs.entry(buft)
                .or_default()
                .insert(name.to_string(), placed);
        }
    }
    // Tied embeddings: without `output.weight`, decoders create the output from token_embd
    // with TENSOR_DUPLICATED, as an output-layer matmul weight.
    // (lfm2 and bitnet multiply by token_embd itself, without a duplicate.)
    let duplicates =
        hp.memory != MemoryKind::None && !matches!(hp.arch.as_str(), "lfm2" | "bitnet");
    if let (false, Some((placed, dims)), true) = (has_output, &token_embd, duplicates) {
        let buft = buft_for(device_of(Layer::Output), "output.weight", placed, dims);
        ctxs.entry(buft)
            .or_default()
            .entry("token_embd.weight".into())
            .or_insert_with(|| placed.clone());
    }
    // rope_freqs: created for every layer, duplicated into each layer's buffer type.
    for (name, placed, dims) in &rope {
        for il in 0..hp.n_layer {
            let buft = buft_for(device_of(Layer::Repeating(il)), name, placed, dims);
            ctxs.entry(buft)
                .or_default()
                .entry(name.clone())
                .or_insert_with(|| placed.clone());
        }
    }

    let mut weights = Vec::new();
    for (buft, tensors) in &ctxs {
        match buft {
            Buft::Cpu if params.mmap => {
                for shard in 0..shards.len() {
                    let mine = tensors.values().filter(|t| t.shard == shard);
                    let first = mine.clone().map(|t| t.offset).min();
                    // Each tensor's end fits: the parse checked it against the file's size.
                    let last = mine.map(|t| t.offset.saturating_add(t.n_bytes)).max();
                    if let (Some(first), Some(last)) = (first, last) {
                        if first < last {
                            weights.push(Buffer {
                                name: "CPU_Mapped".into(),
                                device: Device::Cpu,
                                bytes: last - first,
                            });
                        }
                    }
                }
            }
            Buft::Cpu | Buft::CpuRepack => {
                let what = || "the CPU weights (the tensors' sizes)".to_string();
                let bytes = tensors.values().try_fold(0u64, |a, t| {
                    let padded = pad(t.n_bytes, CPU_ALIGNMENT).ok_or_else(|| too_large(what()))?;
                    add(a, padded, &what)
                })?;
                let name = if *buft == Buft::Cpu && params.n_gpu_devices > 0 {
                    // Without mmap, CPU layers go to the GPU's pinned host buffer.
                    "GPU_Host"
                } else if *buft == Buft::Cpu {
                    "CPU"
                } else {
                    "CPU_REPACK"
                };
                weights.push(Buffer {
                    name: name.into(),
                    device: Device::Cpu,
                    bytes,
                });
            }
            Buft::Gpu(i) => {
                let what = || format!("the GPU{i} weights (the tensors' sizes)");
                let bytes = tensors.values().try_fold(0u64, |a, t| {
                    let size =
                        gpu_alloc(t.n_bytes, t.ty, t.ne0).ok_or_else(|| too_large(what()))?;
                    add(a, size, &what)
                })?;
                weights.push(Buffer {
                    name: format!("GPU{i}"),
                    device: Device::Gpu(*i),
                    bytes,
                });
            }
        }
    }

    // llama_context's constructor: n_ctx, n_batch, n_ubatch.
    let n_seq = params.n_parallel.max(1);
    if n_seq > 256 {
        return Err(FitError::new("n_seq_max must be <= 256"));
    }
    let n_ctx_req = if params.n_ctx == 0 {
        hp.n_ctx_train
    } else {
        params.n_ctx
    };
    if n_ctx_req == 0 {
        return Err(FitError::new(
            "n_ctx and the model's context_length cannot both be zero",
        ));
    }
    let mut n_batch = if hp.causal_attn {
        n_ctx_req.min(params.n_batch)
    } else {
        params.n_batch
    };
    if !newer {
        n_batch = n_batch.max(64); // GGML_KQ_MASK_PAD
    }
    let n_ubatch = n_batch.min(if params.n_ubatch == 0 {
        n_batch
    } else {
        params.n_ubatch
    });

    let offload = !params.no_kv_offload;
    let cache_device = |il: u32| {
        if offload {
            layer_devices[il as usize]
        } else {
            Device::Cpu
        }
    };
    // 0.3.16 pads each cache (256 with flash attention, else 32); 0.3.36 pads the context to
    // 256 in llama_context's constructor, each sequence's share to 256 again, and no more.
    let padding = if params.flash_attn || newer { 256 } else { 32 };
    let v_trans = !params.flash_attn;
    // 0.3.36's cache holds no V for MLA models (`has_v = !is_mla`): V is a view of K.
    let k_only = newer && hp.n_embd_head_k_mla != 0;
    let mut caches = Vec::new();
    let mut n_ctx = if newer {
        pad32(n_ctx_req, 256)?
    } else {
        n_ctx_req
    };
    if newer && !params.kv_unified {
        n_ctx = pad32(n_ctx / n_seq, 256)?
            .checked_mul(n_seq)
            .ok_or_else(|| FitError::new("context size overflows"))?;
        if n_ctx == 0 {
            return Err(FitError::new("n_ctx_seq == 0"));
        }
    }
    let kv_cache = |filter: &dyn Fn(u32) -> bool,
                    kv_size: u32,
                    n_stream: u32,
                    swa: bool|
     -> Result<Cache, FitError> {
        let mut layers = Vec::new();
        for il in 0..hp.n_layer_kv_cache {
            if !filter(il) {
                continue;
            }
            let ne_k = hp.n_embd_k_gqa(il as usize);
            let ne_v = if v_trans {
                hp.n_embd_v_gqa_max()
            } else {
                hp.n_embd_v_gqa(il as usize)
            };
            let size = |ty: GgmlType, ne0: u64| {
                ty.n_bytes(&[ne0, u64::from(kv_size), u64::from(n_stream)])
                    .ok_or_else(|| {
                        FitError::new(format!(
                            "layer {il}: a row of {ne0} does not fit the cache type's blocks"
                        ))
                    })
            };
            layers.push(CacheLayer {
                layer: il,
                device: cache_device(il),
                cells: kv_size,
                swa,
                k_bytes: size(params.type_k, ne_k)?,
                v_bytes: if k_only {
                    0
                } else {
                    size(params.type_v, ne_v)?
                },
                k_ne0: ne_k,
                v_ne0: if k_only { 0 } else { ne_v },
            });
        }
        cache_with_buffers(
            "kv",
            kv_size,
            n_stream,
            swa,
            params.type_k,
            params.type_v,
            layers,
        )
    };
    let rs_cache = |filter: &dyn Fn(u32) -> bool, mem_size: u32| {
        let state = |n_embd: u64, what: &str| {
            let ne0 = n_embd.checked_mul(u64::from(mem_size));
            let bytes = ne0.and_then(|n| n.checked_mul(4));
            ne0.zip(bytes).ok_or_else(|| {
                too_large(format!(
                    "the recurrent {what} state ({n_embd} values for each of {mem_size} sequences)"
                ))
            })
        };
        let layers = (0..hp.n_layer)
            .filter(|&il| filter(il))
            .map(|il| {
                let (k_ne0, k_bytes) = state(hp.n_embd_r(), "r")?;
                let (v_ne0, v_bytes) = state(hp.n_embd_s(), "s")?;
                Ok(CacheLayer {
                    layer: il,
                    device: cache_device(il),
                    cells: mem_size,
                    swa: false,
                    k_bytes,
                    v_bytes,
                    k_ne0,
                    v_ne0,
                })
            })
            .collect::<Result<_, FitError>>()?;
        cache_with_buffers(
            "rs",
            mem_size,
            1,
            false,
            GgmlType::F32,
            GgmlType::F32,
            layers,
        )
    };
    match hp.memory {
        MemoryKind::None => {}
        MemoryKind::Recurrent => caches.push(rs_cache(&|_| true, n_seq)?),
        MemoryKind::Hybrid => {
            n_ctx = pad32(n_ctx, padding)?;
            let n_stream = if params.kv_unified { 1 } else { n_seq };
            // 0.3.16 gives each stream the whole context; 0.3.36 its share (`n_ctx_seq`).
            let kv_size = if newer { n_ctx / n_stream } else { n_ctx };
            let all = hp.arch == "falcon-h1";
            let recurrent = hp.recurrent_layers.clone();
            caches.push(kv_cache(
                &|il| all || !recurrent[il as usize],
                kv_size,
                n_stream,
                false,
            )?);
            caches.push(rs_cache(&|il| all || recurrent[il as usize], n_seq)?);
        }
        MemoryKind::Kv => {
            let per_stream = if params.kv_unified {
                let p = pad32(n_ctx, padding)?;
                n_ctx = p;
                p
            } else {
                let p = pad32(n_ctx.div_ceil(n_seq), padding)?;
                n_ctx = p
                    .checked_mul(n_seq)
                    .ok_or_else(|| FitError::new("context size overflows"))?;
                p
            };
            let n_stream = if params.kv_unified { 1 } else { n_seq };
            if hp.swa_type != SwaType::None {
                let window = hp
                    .n_swa
                    .saturating_mul(if params.kv_unified { n_seq } else { 1 })
                    .saturating_add(n_ubatch);
                // 0.3.16 pads the window, then takes the smaller; 0.3.36 the reverse.
                let mut size_swa = if newer {
                    pad32(per_stream.min(window), padding)?
                } else {
                    per_stream.min(pad32(window, padding)?)
                };
                if params.swa_full {
                    size_swa = per_stream;
                }
                let swa = hp.swa_layers.clone();
                caches.push(kv_cache(
                    &|il| !swa[il as usize],
                    per_stream,
                    n_stream,
                    false,
                )?);
                caches.push(kv_cache(&|il| swa[il as usize], size_swa, n_stream, true)?);
            } else {
                caches.push(kv_cache(&|_| true, per_stream, n_stream, false)?);
            }
        }
    }

    // output_reserve(n_seq_max): logits, and embeddings when asked (t5: both).
    let n_outputs = u64::from(n_seq);
    let has_embd = params.embeddings || hp.arch == "t5";
    let embd = if has_embd { u64::from(hp.n_embd) } else { 0 };
    // n_vocab counts a file's strings: the product fits (checked all the same).
    let output_bytes = (hp.n_vocab + embd)
        .checked_mul(4 * n_outputs)
        .ok_or_else(|| too_large("the output buffer (logits of the vocabulary)"))?;
    let output = Buffer {
        name: "CPU".into(),
        device: Device::Cpu,
        bytes: output_bytes,
    };

    let mut estimate = Estimate {
        release: params.release,
        hparams: hp,
        n_ctx,
        n_batch,
        n_ubatch,
        layer_devices,
        weights,
        caches,
        output,
        compute: Ok(Vec::new()),
    };
    if params.n_gpu_devices > 0 {
        estimate.compute = Err(compute::NOT_ESTIMATED_GPU);
    } else if newer && !alloc::models(&estimate) {
        estimate.compute = Err(compute::NOT_ESTIMATED_RELEASE);
    } else if compute::NOT_MODELLED.contains(&estimate.hparams.arch.as_str()) {
        estimate.compute = Err(compute::NOT_ESTIMATED_GRAPH);
    } else if estimate.hparams.memory != MemoryKind::None {
        estimate.compute = Ok(compute::estimate(&estimate, params)?);
    }
    // Every figure shown is a sum of these buffers: each device's total, and all of them
    // together, must fit.
    let mut every_buffer = estimate
        .weights
        .iter()
        .chain(estimate.caches.iter().flat_map(|c| c.buffers.iter()))
        .chain(std::iter::once(&estimate.output))
        .chain(estimate.compute.iter().flatten());
    let what = || {
        format!(
            "the total (context {}, batch {}, ubatch {}, {} sequences)",
            estimate.n_ctx, estimate.n_batch, estimate.n_ubatch, n_seq
        )
    };
    every_buffer.try_fold(0u64, |a, b| add(a, b.bytes, &what))?;
    Ok(estimate)
}

fn cache_with_buffers(
    kind: &'static str,
    cells: u32,
    n_stream: u32,
    swa: bool,
    type_k: GgmlType,
    type_v: GgmlType,
    layers: Vec<CacheLayer>,
) -> Result<Cache, FitError> {
    let mut per_device: BTreeMap<Device, u64> = BTreeMap::new();
    let what = || format!("the {kind} cache ({cells} cells, {n_stream} streams)");
    for l in &layers {
        let (k, v) = match l.device {
            Device::Cpu => (pad(l.k_bytes, CPU_ALIGNMENT), pad(l.v_bytes, CPU_ALIGNMENT)),
            Device::Gpu(_) => (
                gpu_alloc(l.k_bytes, type_k, l.k_ne0),
                gpu_alloc(l.v_bytes, type_v, l.v_ne0),
            ),
        };
        let bytes = k.zip(v).ok_or_else(|| too_large(what()))?;
        let total = per_device.entry(l.device).or_default();
        *total = add(*total, bytes.0, &what)?;
        *total = add(*total, bytes.1, &what)?;
    }
    let buffers = per_device
        .into_iter()
        .filter(|&(_, bytes)| bytes > 0)
        .map(|(device, bytes)| Buffer {
            name: device.buffer_name(),
            device,
            bytes,
        })
        .collect();
    Ok(Cache {
        kind,
        cells,
        n_stream,
        swa,
        type_k,
        type_v,
        layers,
        buffers,
    })
}

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
