//! `gguf fit`: the memory llama.cpp allocates to run a model ([`gguf_fit`]), from its header
//! alone, for one or more context sizes.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args as ClapArgs;
use gguf_fit::{estimate_shards, host_fit, render, Params, Release};
use gguf_grammar::escape::terminal;
use gguf_grammar::{GgmlType, Gguf, OwnedGguf};
use gguf_tools::set::{shard_name, shard_path};
use gguf_tools::source::http::is_remote;

use crate::{input, remote, Failure};

#[derive(ClapArgs)]
pub struct Args {
    /// The llama.cpp release whose allocation is modelled: that of llama-cpp-python 0.3.16 or
    /// 0.3.36 (its defaults too: context, flash attention).
    #[arg(long, value_parser = release, default_value = Release::NEWEST.version())]
    release: Release,
    /// Context sizes, comma-separated (one row per size and device; 0: the model's training
    /// context). Default: the release's (0.3.16: 4096; 0.3.36: 0).
    #[arg(long, short = 'c', value_delimiter = ',')]
    ctx_size: Vec<u32>,
    /// Logical batch size.
    #[arg(long, short = 'b', default_value_t = 2048)]
    batch_size: u32,
    /// Physical batch size.
    #[arg(long, short = 'u', default_value_t = 512)]
    ubatch_size: u32,
    /// Parallel sequences (`n_seq_max`).
    #[arg(long, short = 'n', default_value_t = 1)]
    parallel: u32,
    /// KV cache type for K (f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1).
    #[arg(long, short = 'k', default_value = "f16", value_parser = cache_type)]
    cache_type_k: GgmlType,
    /// KV cache type for V (a quantised V needs --flash-attn).
    #[arg(long, short = 'V', default_value = "f16", value_parser = cache_type)]
    cache_type_v: GgmlType,
    /// Flash attention: `--flash-attn` (or `-f`) alone turns it on, `--flash-attn=off` or
    /// `=auto` as said. Default: the release's (0.3.16: off; 0.3.36: auto, which is on
    /// wherever the backend runs it, as the CPU does).
    #[arg(long, short = 'f', num_args = 0..=1, require_equals = true, default_missing_value = "on", value_parser = ["on", "off", "auto"])]
    flash_attn: Option<String>,
    /// Layers to offload to the GPUs (the last ones; n_layer + 1 offloads the output too).
    #[arg(long, short = 'g', default_value_t = 0, allow_negative_numbers = true)]
    n_gpu_layers: i32,
    /// How many GPUs (without one, every layer stays on the CPU). With GPUs the compute
    /// buffers are not estimated (shown as "not estimated"; in --json null, with
    /// compute_not_estimated saying why): llama.cpp's scheduler splits the graph across the
    /// backends, which is not modelled.
    #[arg(long, default_value_t = 0)]
    gpus: u32,
    /// Each GPU's share, comma-separated (default: equal shares; llama.cpp uses each GPU's
    /// free memory).
    #[arg(long, value_delimiter = ',')]
    tensor_split: Vec<f32>,
    /// Keep the KV cache on the CPU.
    #[arg(long)]
    no_kv_offload: bool,
    /// Load the weights into allocated memory instead of mapping the file.
    #[arg(long)]
    no_mmap: bool,
    /// Full-size cache for the sliding-window layers.
    #[arg(long)]
    swa_full: bool,
    /// One KV stream for all sequences.
    #[arg(long)]
    kv_unified: bool,
    /// The output buffer also holds embeddings.
    #[arg(long)]
    embeddings: bool,
    /// A CPU without AVX2 (or a build without repacking): no `CPU_REPACK` buffer.
    #[arg(long)]
    no_repack: bool,
    /// Instead of the table, the context llama.cpp 0.3.36's `--fit` would choose on a host
    /// without GPUs with this much memory (bytes, or with KiB, MiB, GiB), as `-c N` to paste,
    /// and whether it fits. Only for models whose compute buffer is estimated.
    #[arg(long, value_parser = memory_size, value_name = "SIZE")]
    fit_host: Option<u64>,
    /// `--fit-target` for --fit-host: the memory to leave unused, in MiB.
    #[arg(long, default_value_t = 1024, value_name = "MIB")]
    fit_target: u64,
    /// `--fit-ctx` for --fit-host: the smallest context the fit may set.
    #[arg(long, default_value_t = 4096, value_name = "N")]
    fit_ctx: u32,
    /// Print JSON (sizes in bytes) instead of the table.
    #[arg(long)]
    json: bool,
    /// For a URL, report the requests made and the bytes fetched on stderr.
    #[arg(long, short)]
    verbose: bool,
    /// The model: a GGUF file (the first shard of a set reads the whole set's headers), or an
    /// `http://`, `https://` or `hf://OWNER/REPO/PATH[@REVISION]` URL (only headers are fetched,
    /// with range requests). A URL's read stops after 10 s to connect, 30 s to the first byte or
    /// 120 s in all (one retry at most).
    model: PathBuf,
}

/// The cache types llama.cpp's `--cache-type-k/-v` accept (common/arg.cpp's kv_cache_types).
fn cache_type(name: &str) -> Result<GgmlType, String> {
    const ALLOWED: [&str; 9] = [
        "f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1",
    ];
    match GgmlType::from_name(name) {
        Some(t) if ALLOWED.contains(&name) => Ok(t),
        _ => Err(format!("one of {}", ALLOWED.join(", "))),
    }
}

/// The headers of the model: every shard's when it is a shard set.
fn headers(model: &Path, verbose: bool) -> Result<Vec<OwnedGguf>, Failure> {
    let paths: Vec<PathBuf> = match shard_name(model) {
        Some((prefix, _, count)) => (0..count)
            .map(|no| shard_path(&prefix, no, count))
            .collect(),
        None => vec![model.to_path_buf()],
    };
    paths
        .iter()
        .map(|path| match path.to_str().filter(|p| is_remote(p)) {
            Some(url) => {
                let (buf, _) = remote::fetch_header(url, verbose)?;
                OwnedGguf::from_vec(buf).map_err(|e| Failure::Invalid(format!("{url}: {e}")))
            }
            None => input::header(path).map(|(header, _)| header),
        })
        .collect()
}

/// A memory size: bytes, or a number with KiB, MiB or GiB.
fn memory_size(text: &str) -> Result<u64, String> {
    let units = [
        ("GiB", 1u64 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
        ("", 1),
    ];
    let (number, unit) = units
        .iter()
        .find_map(|&(suffix, unit)| text.strip_suffix(suffix).map(|n| (n, unit)))
        .unwrap_or((text, 1));
    number
        .trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .ok_or_else(|| "a size in bytes, or with KiB, MiB or GiB (24GiB)".to_string())
}

/// The releases `--release` names, by their llama-cpp-python version.
pub(crate) fn release(version: &str) -> Result<Release, String> {
    Release::ALL
        .iter()
        .copied()
        .find(|r| r.version() == version)
        .ok_or_else(|| {
            let known: Vec<&str> = Release::ALL.iter().map(|r| r.version()).collect();
            format!("one of {}", known.join(", "))
        })
}

pub fn run(args: Args) -> Result<(), Failure> {
    let defaults = Params::of(args.release);
    let flash_attn = match args.flash_attn.as_deref() {
        Some("on") => true,
        Some("off") => false,
        Some(_) if args.release < Release::LlamaCppPython0336 => clap::Error::raw(
            clap::error::ErrorKind::ArgumentConflict,
            format!(
                "--flash-attn auto: the {} has no auto (on or off)\n",
                args.release.name()
            ),
        )
        .exit(),
        // auto, or the release's default
        _ => defaults.flash_attn,
    };
    let ctx_sizes = if args.ctx_size.is_empty() {
        vec![defaults.n_ctx]
    } else {
        args.ctx_size.clone()
    };
    let base = Params {
        n_batch: args.batch_size,
        n_ubatch: args.ubatch_size,
        n_parallel: args.parallel,
        type_k: args.cache_type_k,
        type_v: args.cache_type_v,
        flash_attn,
        swa_full: args.swa_full,
        kv_unified: args.kv_unified,
        embeddings: args.embeddings,
        n_gpu_layers: args.n_gpu_layers,
        n_gpu_devices: args.gpus,
        tensor_split: args.tensor_split.clone(),
        no_kv_offload: args.no_kv_offload,
        mmap: !args.no_mmap,
        cpu_repack: !args.no_repack,
        ..defaults
    };
    let owned = headers(&args.model, args.verbose)?;
    let shards: Vec<Gguf<'_>> = owned.iter().map(|o| o.gguf().clone()).collect();
    let shown = terminal(args.model.as_os_str().as_encoded_bytes()).into_owned();
    if let Some(host) = args.fit_host {
        let params = Params {
            n_ctx: args.ctx_size.first().copied().unwrap_or(0),
            ..base
        };
        let margin = args.fit_target.saturating_mul(1 << 20);
        let fit =
            host_fit::fit_host(&shards, &params, host, margin, args.fit_ctx).map_err(|e| {
                Failure::Invalid(format!("{shown}: {}", terminal(e.to_string().as_bytes())))
            })?;
        let text = if args.json {
            format!(
                "{{\"release\":\"{}\",\"fits\":{},\"n_ctx\":{},\"used\":{}}}\n",
                args.release.version(),
                fit.fits,
                fit.n_ctx,
                fit.used
            )
        } else {
            format!(
                "-c {}\n({} on a host of {host} bytes leaving {} MiB, with the --fit of the {}: weights, caches and compute buffers use {} bytes)\n",
                fit.n_ctx,
                if fit.fits { "fits" } else { "does not fit" },
                args.fit_target,
                args.release.name(),
                fit.used
            )
        };
        return write_out(&text);
    }
    let estimates = ctx_sizes
        .iter()
        .map(|&n_ctx| {
            estimate_shards(
                &shards,
                &Params {
                    n_ctx,
                    ..base.clone()
                },
            )
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            Failure::Invalid(format!("{shown}: {}", terminal(e.to_string().as_bytes())))
        })?;
    let text = if args.json {
        format!("{}\n", render::json(&estimates))
    } else {
        render::text(&estimates)
    };
    write_out(&text)
}

fn write_out(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        // A closed pipe (`gguf fit … | head`) is the reader's choice, not a failure.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::Unreadable(format!("writing output: {e}")))
        }
        _ => Ok(()),
    }
}
