//! llama.cpp 0.3.36's `--fit` for a host without GPUs (`common_params_fit_impl` in
//! common/fit.cpp, the `nd == 0` path): it measures the model's memory with a trial load that
//! allocates nothing (`no_alloc`, `LLAMA_LOAD_MODE_NONE`: the weights counted as allocated,
//! not mapped) and, when the host's total memory minus that use is under the margin
//! (`--fit-target`, 1024 MiB by default), shrinks an unset context (`-c 0`) between the
//! trained one and `--fit-ctx` (4096 by default) by linear interpolation, rounded down to
//! 256 per stream. The use it counts is the model's, the caches' and the compute buffers
//! (`llama_context::memory_breakdown`: the output buffer is not in it).

use crate::{estimate_shards, Estimate, FitError, Params, Release};
use gguf_grammar::Gguf;

/// What the fit chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostFit {
    /// Whether llama.cpp's fit succeeds (`COMMON_PARAMS_FIT_STATUS_SUCCESS`); when it does not,
    /// llama.cpp goes on with `n_ctx` all the same.
    pub fits: bool,
    /// The context size it sets (`-c`).
    pub n_ctx: u32,
    /// The bytes it counts as used at that context (weights, caches, compute).
    pub used: u64,
}

/// The host memory llama.cpp's fit counts for `e`: weights, caches and compute buffers, but
/// not `CPU_REPACK`: common_get_device_memory_data counts host buffer types and the model's
/// devices', and the repack buffer type is neither (ggml-cpu/repack.cpp: `is_host = nullptr`;
/// its device, the CPU, is not one of the model's). Measured: with it counted, 3 of 12 fits
/// of the tiny q4_0 llama chose another context than llama.cpp.
fn used(e: &Estimate) -> Result<u64, FitError> {
    let compute = e.compute.as_ref().map_err(|why| FitError::new(*why))?;
    let caches = e.caches.iter().flat_map(|c| c.buffers.iter());
    Ok(e.weights
        .iter()
        .filter(|b| b.name != "CPU_REPACK")
        .chain(caches)
        .chain(compute.iter())
        .fold(0u64, |a, b| a.saturating_add(b.bytes)))
}

/// `--fit` on a host of `host_total` bytes (llama.cpp counts the total, not the free memory)
/// leaving `margin` bytes, with `n_ctx_min` as `--fit-ctx`, for [`Params::release`] 0.3.36
/// (0.3.16 has no fit).
pub fn fit_host(
    shards: &[Gguf<'_>],
    params: &Params,
    host_total: u64,
    margin: u64,
    n_ctx_min: u32,
) -> Result<HostFit, FitError> {
    if params.release < Release::LlamaCppPython0336 {
        return Err(FitError::new(format!(
            "the {} has no --fit",
            params.release.name()
        )));
    }
    // The trial load does not map the file.
    let measure = |n_ctx: u32| {
        let p = Params {
            n_ctx,
            mmap: false,
            ..params.clone()
        };
        estimate_shards(shards, &p).and_then(|e| used(&e).map(|u| (e, u)))
    };
    let n_streams = if params.kv_unified {
        1
    } else {
        params.n_parallel.max(1)
    };
    let n_ctx_auto = params.n_ctx == 0;
    let (full, used_full) = measure(params.n_ctx)?;
    let n_ctx_train = full.hparams.n_ctx_train;
    let n_ctx_max =
        u32::try_from(u64::from(n_ctx_train) * u64::from(n_streams)).unwrap_or(u32::MAX);
    let n_ctx_min_total =
        u32::try_from(u64::from(n_ctx_min) * u64::from(n_streams)).unwrap_or(u32::MAX);
    let (n_ctx, used_full) = if n_ctx_auto && n_streams > 1 {
        (n_ctx_max, measure(n_ctx_max)?.1)
    } else if n_ctx_auto {
        (n_ctx_max, used_full)
    } else {
        (params.n_ctx, used_full)
    };
    let (total, margin) = (i128::from(host_total), i128::from(margin));
    if total - i128::from(used_full) >= margin {
        return Ok(HostFit {
            fits: true,
            n_ctx,
            used: used_full,
        });
    }
    if !n_ctx_auto || n_ctx_max <= n_ctx_min_total {
        // "context size set by user" / "default model context size is <= the min.": then
        // "was unable to fit model into system memory by reducing context".
        return Ok(HostFit {
            fits: false,
            n_ctx,
            used: used_full,
        });
    }
    let target = total - margin;
    let (_, used_min) = measure(n_ctx_min_total)?;
    if target <= i128::from(used_min) {
        return Ok(HostFit {
            fits: false,
            n_ctx: n_ctx_min_total,
            used: used_min,
        });
    }
    let span = i128::from(n_ctx_max - n_ctx_min_total);
    let step =
        span * (target - i128::from(used_min)) / (i128::from(used_full) - i128::from(used_min));
    // `cparams->n_ctx += ...`: a uint32_t.
    let interpolated = (i128::from(n_ctx_min_total) + step) as u32;
    let align = 256u32.saturating_mul(n_streams);
    let n_ctx = (interpolated - interpolated % align).max(n_ctx_min_total);
    let (_, used) = measure(n_ctx)?;
    Ok(HostFit {
        fits: true,
        n_ctx,
        used,
    })
}
