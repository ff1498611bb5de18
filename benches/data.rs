//! Dequantisation throughput on q4_K and q8_0: 2^22 values (16 MiB of f32 written) from
//! random blocks with a normal scale (no NaN or subnormal, which would time the FPU's slow
//! paths instead). `scripts/bench-data.sh` runs this beside gguf-py on the same sizes.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gguf_grammar::data::dequant::dequantize_into;
use gguf_grammar::data::layout::layout;
use gguf_grammar::GgmlType;

const VALUES: usize = 1 << 22;

/// Blocks of `ty` for `VALUES` values: pseudo-random bytes, every f16 field set to 0.0625.
fn blocks(ty: GgmlType) -> Vec<u8> {
    let l = layout(ty).unwrap();
    let size = l.byte_len();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut bytes: Vec<u8> = (0..VALUES / l.values * size)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    for block in bytes.chunks_exact_mut(size) {
        for field in ["d", "dmin"] {
            if let Some(at) = l.offset_of(field) {
                block[at..at + 2].copy_from_slice(&[0x00, 0x2c]);
            }
        }
    }
    bytes
}

fn dequant(c: &mut Criterion) {
    let mut group = c.benchmark_group("dequant");
    group.throughput(Throughput::Bytes((VALUES * 4) as u64));
    group.sample_size(20);
    let mut out = vec![0f32; VALUES];
    for ty in [GgmlType::Q4_K, GgmlType::Q8_0] {
        let bytes = blocks(ty);
        group.bench_function(ty.to_string(), |b| {
            b.iter(|| dequantize_into(ty, &bytes, &mut out).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, dequant);
criterion_main!(benches);
