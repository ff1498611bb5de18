//! Which device each layer goes to, by the rules of `llama_model::load_tensors`
//! (llama-model.cpp):
//!
//! - the input layer (`token_embd`, …) always stays on the CPU ("there is very little benefit
//!   to offloading the input layer");
//! - the last `n_gpu_layers` repeating layers are offloaded: `i_gpu_start = max(n_layer −
//!   n_gpu_layers, 0)`, and the output layer counts as layer `n_layer`, so it is offloaded when
//!   `n_gpu_layers > n_layer` (`act_gpu_layers = min(n_gpu_layers, n_layer + 1)`);
//! - an offloaded layer `il` goes to the first device whose cumulative, normalised split
//!   exceeds `(il − i_gpu_start) / act_gpu_layers` (`std::upper_bound` over the split points,
//!   computed in `float`, as llama.cpp does); the splits are `--tensor-split`, or (llama.cpp)
//!   each device's free memory, here equal shares;
//! - with no GPU device every layer is on the CPU, whatever `n_gpu_layers` says.
//!
//! The KV cache and recurrent state of a layer follow the layer's device
//! (`model.dev_layer(il)` in llama-kv-cache-unified.cpp and llama-memory-recurrent.cpp) unless
//! `--no-kv-offload`; the output buffer is in host memory (`output_reserve`).

use std::fmt;

/// A device: the CPU (host memory) or a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Device {
    /// Host memory.
    Cpu,
    /// The GPU with this index.
    Gpu(u32),
}

impl Device {
    /// The name of the device's default buffer type (`CPU`, `GPU0`…).
    pub fn buffer_name(self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("CPU"),
            Device::Gpu(i) => write!(f, "GPU{i}"),
        }
    }
}

/// The device of every layer, `0..n_layer` and the output layer at index `n_layer`.
pub fn layer_devices(
    n_layer: u32,
    n_gpu_layers: i32,
    n_devices: u32,
    tensor_split: &[f32],
) -> Vec<Device> {
    let n_layer_i = n_layer as i64;
    let n_gpu_layers = i64::from(n_gpu_layers);
    let i_gpu_start = (n_layer_i - n_gpu_layers).max(0);
    let act_gpu_layers = if n_devices == 0 {
        0
    } else {
        n_gpu_layers.min(n_layer_i + 1)
    };
    let n = n_devices as usize;
    let mut splits: Vec<f32> = if tensor_split.iter().take(n).all(|&x| x == 0.0) {
        vec![1.0; n]
    } else {
        (0..n)
            .map(|i| tensor_split.get(i).copied().unwrap_or(0.0))
            .collect()
    };
    let mut sum = 0.0f32;
    for s in splits.iter_mut() {
        sum += *s;
        *s = sum;
    }
    for s in splits.iter_mut() {
        *s /= sum;
    }
    (0..=n_layer_i)
        .map(|il| {
            if il < i_gpu_start || (il - i_gpu_start) >= act_gpu_layers {
                return Device::Cpu;
            }
            let x = (il - i_gpu_start) as f32 / act_gpu_layers as f32;
            // std::upper_bound: the first split point greater than x.
            let gpu = splits.iter().position(|&s| s > x).unwrap_or(n);
            // llama.cpp's devices.at() would throw past the end; float rounding cannot get there
            // since the last split point is 1 and x < 1.
            Device::Gpu(gpu.min(n.saturating_sub(1)) as u32)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Device::{Cpu, Gpu};

    // Hand-computed from the rules above.
    #[test]
    fn no_device_keeps_everything_on_the_cpu() {
        assert_eq!(layer_devices(4, 99, 0, &[]), vec![Cpu; 5]);
    }

    #[test]
    fn partial_offload_takes_the_last_layers() {
        // n_layer 4, ngl 2: i_gpu_start 2, act 2: layers 2, 3 on the GPU, output on the CPU.
        assert_eq!(
            layer_devices(4, 2, 1, &[]),
            vec![Cpu, Cpu, Gpu(0), Gpu(0), Cpu]
        );
    }

    #[test]
    fn n_layer_plus_one_offloads_the_output() {
        assert_eq!(layer_devices(4, 5, 1, &[]), vec![Gpu(0); 5]);
        assert_eq!(
            layer_devices(4, 4, 1, &[]),
            vec![Gpu(0), Gpu(0), Gpu(0), Gpu(0), Cpu]
        );
    }

    #[test]
    fn two_devices_split_evenly() {
        // ngl 99 on 4 layers: act 5, x = 0, .2, .4, .6, .8 against split points .5, 1.
        assert_eq!(
            layer_devices(4, 99, 2, &[]),
            vec![Gpu(0), Gpu(0), Gpu(0), Gpu(1), Gpu(1)]
        );
    }

    #[test]
    fn tensor_split_weights_the_devices() {
        // split 3:1 -> points .75, 1; 8 layers + output, act 9: x = i/9; x < .75 for i <= 6.
        let d = layer_devices(8, 99, 2, &[3.0, 1.0]);
        assert_eq!(&d[..7], &[Gpu(0); 7]);
        assert_eq!(&d[7..], &[Gpu(1), Gpu(1)]);
    }

    #[test]
    fn three_devices_partial_offload() {
        // n_layer 4, ngl 3, split 1:2:1: i_gpu_start = 4 - 3 = 1, act = min(3, 5) = 3; split
        // points .25, .75, 1. Layer 0 on the CPU; layers 1, 2, 3: x = 0, 1/3, 2/3, and the
        // first point above x is .25 (GPU0), .75 (GPU1), .75 (GPU1); the output (il 4):
        // 4 - 1 = 3 >= act, so the CPU.
        assert_eq!(
            layer_devices(4, 3, 3, &[1.0, 2.0, 1.0]),
            vec![Cpu, Gpu(0), Gpu(1), Gpu(1), Cpu]
        );
        // A negative -ngl offloads nothing: i_gpu_start = n_layer, act = -1.
        assert_eq!(layer_devices(4, -1, 1, &[]), vec![Cpu; 5]);
    }

    #[test]
    fn zero_share_device_gets_nothing() {
        assert_eq!(layer_devices(2, 99, 2, &[0.0, 1.0]), vec![Gpu(1); 3]);
    }
}
