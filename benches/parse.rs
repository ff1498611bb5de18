//! Full parse of the Llama 3 tokenizer header (7.8 MB, 408k strings) beside a floor: a
//! minimal walk over the same bytes that skips strings by their length and checks nothing
//! but slice bounds. The parser's target is within 2x of the floor.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gguf_grammar::{stream, Gguf, OwnedGguf};

mod floor;
use floor::floor;

fn bench(c: &mut Criterion) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/ggml-vocab-llama-bpe.gguf"
    );
    let bytes = std::fs::read(path).unwrap();
    let parsed = Gguf::parse(&bytes).unwrap();
    assert_eq!(
        floor(&bytes) as u64,
        parsed.tensor_infos_end,
        "the floor must walk the same bytes"
    );

    let mut group = c.benchmark_group("llama3-header");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("floor walk", |b| {
        b.iter(|| floor(std::hint::black_box(&bytes)))
    });
    group.bench_function("Gguf::parse", |b| {
        b.iter(|| Gguf::parse(std::hint::black_box(&bytes)).unwrap().kvs.len())
    });
    group.bench_function("stream::read_header", |b| {
        b.iter(|| {
            stream::read_header(std::hint::black_box(&bytes[..]), None)
                .unwrap()
                .bytes()
                .len()
        })
    });
    let owned = OwnedGguf::from_vec(bytes.clone()).unwrap();
    group.bench_function("OwnedGguf::gguf", |b| {
        b.iter(|| std::hint::black_box(&owned).gguf().kvs.len())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
