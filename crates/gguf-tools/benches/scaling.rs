//! Scaling: parse, check, schema check, summary and text dump of headers with n tensors (each of a
//! distinct type id, the worst case for per-type tables) and n key/values, for n = 1k, 10k,
//! 100k and 1M. Time per item must stay flat as n grows (linear total time); criterion
//! reports it as throughput in elements per second.
//!
//! `cargo bench --bench scaling` (about 2 minutes); `cargo bench --bench scaling -- 100000`
//! for one size.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gguf_grammar::validate::{self, Profile};
use gguf_grammar::write::GgufBuilder;
use gguf_grammar::{Ctx, GgmlType, Gguf};
use gguf_tools::render;

/// A header with `n` key/values and `n` tensor descriptors of distinct type ids.
fn header(n: u32) -> Vec<u8> {
    let mut builder = GgufBuilder::new(Ctx::V3_LE);
    for i in 0..n {
        builder.kv(format!("bench.key.{i}"), i);
        builder.tensor_at(format!("blk.{i}.weight"), &[32, 4], GgmlType(i), 0, &[]);
    }
    builder.build().unwrap()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("scaling");
    group.sample_size(10);
    // `cargo test` runs each benchmark once in the dev profile: the small sizes suffice there.
    let sizes: &[u32] = if cfg!(debug_assertions) {
        &[1_000, 10_000]
    } else {
        &[1_000, 10_000, 100_000, 1_000_000]
    };
    for &n in sizes {
        let bytes = header(n);
        let gguf = Gguf::parse(&bytes).unwrap();
        let len = bytes.len() as u64;
        group.throughput(Throughput::Elements(u64::from(n)));
        group.bench_with_input(BenchmarkId::new("parse", n), &bytes, |b, bytes| {
            b.iter(|| Gguf::parse(bytes).unwrap().tensors.len())
        });
        group.bench_with_input(BenchmarkId::new("check", n), &gguf, |b, gguf| {
            b.iter(|| validate::check(gguf, len, Profile::Strict).len())
        });
        group.bench_with_input(BenchmarkId::new("schema", n), &gguf, |b, gguf| {
            b.iter(|| gguf_llama::schema::check_model(gguf).len())
        });
        group.bench_with_input(BenchmarkId::new("summary", n), &gguf, |b, gguf| {
            b.iter(|| {
                let mut out = Vec::new();
                render::summary::write(gguf, &mut out).unwrap();
                out.len()
            })
        });
        group.bench_with_input(BenchmarkId::new("dump", n), &gguf, |b, gguf| {
            b.iter(|| {
                let mut out = Vec::new();
                render::text::write(gguf, len, &mut out).unwrap();
                out.len()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
