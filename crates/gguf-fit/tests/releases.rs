//! Each release's own figures, recorded from its probe (scripts/llama/fit_probe.cpp built
//! against llama-cpp-python 0.3.16's and 0.3.36's llama.cpp, on the tiny models of
//! tests/tiny): the rules that differ between the releases, checked without llama.cpp.
//! `scripts/check-fit.sh` compares every case with the probe itself.

#[allow(dead_code)]
mod tiny;

use gguf_fit::{estimate, Estimate, Params, Release};
use gguf_grammar::Gguf;

const OLD: Release = Release::LlamaCppPython0316;
const NEW: Release = Release::LlamaCppPython0336;

fn run(model: &str, params: Params) -> Result<Estimate, String> {
    let tiny = tiny::all().into_iter().find(|t| t.name == model).unwrap();
    let gguf = Gguf::parse(&tiny.bytes).unwrap();
    estimate(&gguf, &params).map_err(|e| e.to_string())
}

/// (n_ctx, cache buffers, output, compute), as the probe prints them.
fn figures(e: &Estimate) -> (u32, Vec<u64>, u64, Option<u64>) {
    let caches = e
        .caches
        .iter()
        .flat_map(|c| c.buffers.iter().map(|b| b.bytes))
        .collect();
    let compute = e
        .compute
        .as_ref()
        .ok()
        .map(|c| c.iter().map(|b| b.bytes).sum());
    (e.n_ctx, caches, e.output.bytes, compute)
}

fn at(release: Release, n_ctx: u32) -> Params {
    Params {
        n_ctx,
        flash_attn: false,
        ..Params::of(release)
    }
}

#[test]
fn the_context_is_padded_as_each_release_pads_it() {
    // 0.3.16 pads the cache to 32 without flash attention, 0.3.36 the context to 256.
    let old = run("llama-f16.gguf", at(OLD, 300)).unwrap();
    assert_eq!(figures(&old), (320, vec![81920], 1024, Some(2335648)));
    let new = run("llama-f16.gguf", at(NEW, 300)).unwrap();
    assert_eq!(figures(&new), (512, vec![131072], 1024, Some(3538848)));
}

#[test]
fn the_defaults_are_each_releases() {
    // 0.3.16: a context of 4096, no flash attention; 0.3.36: the trained context (2048 for
    // this model) and flash attention auto (on, on the CPU).
    let old = run("llama-f16.gguf", Params::of(OLD)).unwrap();
    assert_eq!(figures(&old), (4096, vec![1048576], 1024, Some(42608640)));
    let new = run("llama-f16.gguf", Params::of(NEW)).unwrap();
    assert_eq!(figures(&new), (2048, vec![524288], 1024, Some(3160064)));
    assert_eq!(new.release, NEW);
}

#[test]
fn the_sliding_window_cache_is_padded_after_the_min_in_0336() {
    let old = run("gemma2-swa.gguf", at(OLD, 4096)).unwrap();
    assert_eq!(figures(&old).1, [1048576, 163840]);
    let new = run("gemma2-swa.gguf", at(NEW, 4096)).unwrap();
    assert_eq!(figures(&new).1, [1048576, 196608]);
}

#[test]
fn an_mla_cache_holds_no_v_in_0336() {
    let old = run("deepseek2-mla.gguf", at(OLD, 4096)).unwrap();
    assert_eq!(figures(&old).1, [1310720]);
    let new = run("deepseek2-mla.gguf", at(NEW, 4096)).unwrap();
    assert_eq!(figures(&new).1, [786432]);
}

#[test]
fn a_hybrid_cache_gives_each_stream_its_share_in_0336() {
    let p = |release| Params {
        n_parallel: 4,
        ..at(release, 3000)
    };
    let old = run("lfm2-hybrid.gguf", p(OLD)).unwrap();
    assert_eq!(
        (figures(&old).0, figures(&old).1),
        (3008, vec![1540096, 4096])
    );
    let new = run("lfm2-hybrid.gguf", p(NEW)).unwrap();
    assert_eq!(
        (figures(&new).0, figures(&new).1),
        (3072, vec![393216, 4096])
    );
}

#[test]
fn a_quantised_cache_block_must_divide_the_head_in_0336() {
    let p = |release| Params {
        n_ctx: 2048,
        type_k: gguf_grammar::GgmlType::Q8_0,
        type_v: gguf_grammar::GgmlType::Q8_0,
        flash_attn: true,
        ..Params::of(release)
    };
    // llama.cpp 0.3.36: "K cache type q8_0 with block size 32 does not divide
    // n_embd_head_k=16"; 0.3.16 loads it (its rows of 32 values fit the blocks).
    let err = run("llama-f16.gguf", p(NEW)).unwrap_err();
    assert!(
        err.contains("K cache type q8_0 with block size 32 does not divide n_embd_head_k=16"),
        "{err}"
    );
    let old = run("llama-f16.gguf", p(OLD)).unwrap();
    assert_eq!(figures(&old), (2048, vec![278528], 1024, Some(6830080)));
}

/// 0.3.36's `--fit` without GPUs, against its own choices (scripts/llama/fit_params.cpp,
/// `--fit-ctx 256`, the host's room simulated by the margin) for the tiny f16 llama.
#[test]
fn the_host_fit_chooses_the_context_0336_chooses() {
    let tiny = tiny::all()
        .into_iter()
        .find(|t| t.name == "llama-f16.gguf")
        .unwrap();
    let gguf = Gguf::parse(&tiny.bytes).unwrap();
    let shards = [gguf];
    let fit = |room: u64| {
        let f = gguf_fit::host_fit::fit_host(&shards, &Params::of(NEW), room, 0, 256).unwrap();
        (f.fits, f.n_ctx)
    };
    assert_eq!(fit(4931840), (true, 2048));
    assert_eq!(fit(2405120), (true, 1024));
    assert_eq!(fit(1518233), (true, 512));
    assert_eq!(fit(926976), (false, 256));
    let old = gguf_fit::host_fit::fit_host(&shards, &Params::of(OLD), 1 << 40, 0, 256);
    assert!(old.unwrap_err().to_string().contains("has no --fit"));
}

/// An architecture one release does not know is that release's refusal, as its
/// `llama_model_load` gives it ("unknown model architecture"), never an estimate: mistral3 is
/// new in 0.3.36 (scripts/check-fit.sh runs both releases' probes on every tiny model).
#[test]
fn an_architecture_new_in_0336_is_refused_by_0316() {
    let tiny = tiny::all()
        .into_iter()
        .find(|t| t.name == "llama-f16.gguf")
        .unwrap();
    let gguf = Gguf::parse(&tiny.bytes).unwrap();
    let mut b = gguf_grammar::write::GgufBuilder::from_gguf(&gguf);
    let keys: Vec<Vec<u8>> = b.kvs.iter().map(|kv| kv.key.clone()).collect();
    for key in keys.iter().filter(|k| k.starts_with(b"llama.")) {
        b.rename(key, [b"mistral3".as_slice(), &key[5..]].concat());
    }
    b.set("general.architecture", "mistral3");
    let bytes = b.build().unwrap();
    let renamed = Gguf::parse(&bytes).unwrap();
    assert_eq!(
        estimate(&renamed, &at(OLD, 256)).unwrap_err().to_string(),
        "the llama.cpp vendored in llama-cpp-python 0.3.16 fails to load it: \"unknown model architecture: 'mistral3'\""
    );
    assert!(estimate(&renamed, &at(NEW, 256)).is_ok());
}
