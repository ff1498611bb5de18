//! The GPU split (which cannot be measured on these machines) against hand-computed cases:
//! the layer rules of `llama_model::load_tensors` (see `gguf_fit::split`) applied to the
//! tiny models' tensors, with ggml-cuda's buffer rules (alignment 128, a quantised matrix's
//! last row padded to 512 values).

#[allow(dead_code)]
mod tiny;

use gguf_fit::{estimate, Device, Estimate, Params};
use gguf_grammar::{GgmlType, Gguf};
use gguf_llama::Release;

fn weights(e: &Estimate) -> Vec<(String, u64)> {
    let mut w: Vec<_> = e
        .weights
        .iter()
        .map(|b| (b.name.clone(), b.bytes))
        .collect();
    w.sort();
    w
}

fn kv(e: &Estimate) -> Vec<(Device, u64)> {
    e.caches
        .iter()
        .flat_map(|c| c.buffers.iter().map(|b| (b.device, b.bytes)))
        .collect()
}

fn w(list: &[(&str, u64)]) -> Vec<(String, u64)> {
    list.iter().map(|(n, b)| (n.to_string(), *b)).collect()
}

// llama-f16: n_embd 64, 2 layers, 4 heads of 16, 2 KV heads, n_ff 128, 256 tokens; token_embd
// q8_0 [64, 256] = 256 rows of 2 blocks of 34 bytes = 17408; output_norm 256; output f16
// 32768; a block: norms 256 + 256, q and o 8192 each, k and v 4096 each, gate/up/down
// 16384 each = 74240 (every size a multiple of 128: no padding).
fn llama_f16() -> Vec<u8> {
    tiny::llama_like("llama", 256, 64, 2, 4, 2, 128, GgmlType::F16, false).build()
}

#[test]
fn one_gpu_layer_takes_the_last_block_only() {
    let bytes = llama_f16();
    let gguf = Gguf::parse(&bytes).unwrap();
    let p = Params {
        n_ctx: 512,
        n_gpu_layers: 1,
        n_gpu_devices: 1,
        ..Params::default()
    };
    let e = estimate(&gguf, &p).unwrap();
    // i_gpu_start = 1, act_gpu_layers = 1: layer 0 and the output stay on the CPU.
    assert_eq!(
        e.layer_devices,
        vec![Device::Cpu, Device::Gpu(0), Device::Cpu]
    );
    // CPU_Mapped spans token_embd, output_norm, output and block 0 (contiguous in the file).
    assert_eq!(
        weights(&e),
        w(&[("CPU_Mapped", 17408 + 256 + 32768 + 74240), ("GPU0", 74240)])
    );
    // KV at 512 cells, f16: K and V of 32 values per cell = 32768 each, per layer.
    assert_eq!(kv(&e), vec![(Device::Cpu, 65536), (Device::Gpu(0), 65536)]);
    let no_offload = estimate(
        &gguf,
        &Params {
            no_kv_offload: true,
            ..p
        },
    )
    .unwrap();
    assert_eq!(kv(&no_offload), vec![(Device::Cpu, 131072)]);
}

#[test]
fn two_gpus_full_offload_put_the_output_on_the_last() {
    let bytes = llama_f16();
    let gguf = Gguf::parse(&bytes).unwrap();
    let p = Params {
        n_ctx: 512,
        n_gpu_layers: 99,
        n_gpu_devices: 2,
        ..Params::default()
    };
    let e = estimate(&gguf, &p).unwrap();
    // act = 3; x = 0, 1/3, 2/3 against split points 0.5, 1: the first point above x is 0.5
    // for both blocks, 1 for the output layer.
    assert_eq!(
        e.layer_devices,
        vec![Device::Gpu(0), Device::Gpu(0), Device::Gpu(1)]
    );
    // The input layer always stays on the CPU.
    assert_eq!(
        weights(&e),
        w(&[
            ("CPU_Mapped", 17408),
            ("GPU0", 2 * 74240),
            ("GPU1", 256 + 32768)
        ])
    );
    // Both blocks' KV on GPU0; the output layer has none.
    assert_eq!(kv(&e), vec![(Device::Gpu(0), 131072)]);
    assert_eq!(e.total_on(Device::Gpu(1)), 256 + 32768);
}

#[test]
fn tied_output_is_duplicated_on_the_gpu_with_row_padding() {
    // llama-q4_0-tied: token_embd q4_0 [256, 320]: 320 rows of 8 blocks of 18 bytes = 46080.
    let bytes = tiny::llama_like("llama", 320, 256, 3, 8, 8, 512, GgmlType::Q4_0, true).build();
    let gguf = Gguf::parse(&bytes).unwrap();
    let p = Params {
        n_ctx: 512,
        n_gpu_layers: 99,
        n_gpu_devices: 1,
        ..Params::default()
    };
    let e = estimate(&gguf, &p).unwrap();
    let cpu: Vec<_> = weights(&e)
        .into_iter()
        .filter(|(n, _)| n.starts_with("CPU"))
        .collect();
    assert_eq!(cpu, w(&[("CPU_Mapped", 46080)]));
    // On the GPU: the output copy of token_embd, 46080 + one row of 256 values (144) padded
    // to 128 = 46336, next to the blocks and output_norm (1024).
    // A block: norms 1024 + 1024; q, k, v, o [256, 256] q4_0 = 256 rows of 144 = 36864,
    // each + 144 of row padding -> 37008 -> 37120; gate, up [256, 512]: 73728 + 144 -> 73984;
    // down [512, 256] = 256 rows of 288 = 73728 (ne0 = 512: no padding).
    let block = 1024 + 1024 + 4 * 37120 + 2 * 73984 + 73728;
    assert_eq!(
        e.weights.iter().find(|b| b.name == "GPU0").map(|b| b.bytes),
        Some(46336 + 1024 + 3 * block)
    );
}

#[test]
fn a_cpu_only_build_ignores_n_gpu_layers() {
    let bytes = llama_f16();
    let gguf = Gguf::parse(&bytes).unwrap();
    let e = estimate(
        &gguf,
        &Params {
            n_gpu_layers: 99,
            ..Params::default()
        },
    )
    .unwrap();
    assert_eq!(e.devices(), vec![Device::Cpu]);
}

#[test]
fn with_a_gpu_cpu_layers_are_not_repacked() {
    let bytes = tiny::llama_like("llama", 320, 256, 3, 8, 8, 512, GgmlType::Q4_0, true).build();
    let gguf = Gguf::parse(&bytes).unwrap();
    // CPU only: the q4_0 matrices (and the tied output) are repacked (measured by check-fit).
    let cpu = estimate(
        &gguf,
        &Params {
            n_ctx: 512,
            ..Params::default()
        },
    )
    .unwrap();
    assert!(cpu.weights.iter().any(|b| b.name == "CPU_REPACK"));
    // One GPU layer: blocks 0 and 1 stay on the CPU, in the mapping (the GPU's host buffer
    // type comes first in make_cpu_buft_list and is replaced by the CPU type under mmap).
    let p = Params {
        n_ctx: 512,
        n_gpu_layers: 1,
        n_gpu_devices: 1,
        ..Params::default()
    };
    let e = estimate(&gguf, &p).unwrap();
    let names: Vec<_> = e.weights.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["CPU_Mapped", "GPU0"]);
    // token_embd 46080, output_norm 1024, blocks 0 and 1 (372224 each, unpadded 368640 + 1024
    // + 1024 = 370688 on the CPU: four 36864 + two 73728 + 73728 + two norms).
    let block_cpu = 2 * 1024 + 4 * 36864 + 2 * 73728 + 73728;
    assert_eq!(e.weights[0].bytes, 46080 + 1024 + 2 * block_cpu);
    let no_mmap = estimate(&gguf, &Params { mmap: false, ..p }).unwrap();
    assert_eq!(no_mmap.weights[0].name, "GPU_Host");
    assert_eq!(no_mmap.weights[0].bytes, 46080 + 1024 + 2 * block_cpu);
}

#[test]
fn a_quantised_cache_on_the_gpu_pads_its_last_row() {
    let bytes = llama_f16();
    let gguf = Gguf::parse(&bytes).unwrap();
    let p = Params {
        n_ctx: 512,
        n_gpu_layers: 99,
        n_gpu_devices: 1,
        type_k: GgmlType::Q8_0,
        ..Params::of(Release::LlamaCppPython0316)
    };
    let e = estimate(&gguf, &p).unwrap();
    // 0.3.16's rule (0.3.36 with flash attention, its default, refuses a cache type whose
    // block does not divide the head size, 16 here). K q8_0 [32, 512]: 512 rows of one 34-byte block = 17408, + a row of 480 values
    // (15 blocks, 510 bytes) -> 17918 -> 17920; V f16 [32, 512] = 32768; two layers.
    assert_eq!(kv(&e), vec![(Device::Gpu(0), 2 * (17920 + 32768))]);
}
