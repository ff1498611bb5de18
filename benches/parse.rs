//! Full parse of the Llama 3 tokenizer header (7.8 MB, 408k strings) beside a floor: a
//! minimal walk over the same bytes that skips strings by their length and checks nothing
//! but slice bounds. The parser's target is within 2x of the floor.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gguf_grammar::{stream, Gguf};

/// Walks a little-endian GGUF v2/v3 header and returns where the tensor infos end.
fn floor(bytes: &[u8]) -> usize {
    let walk = Floor(bytes);
    let (n_tensors, n_kv) = (walk.u64(8), walk.u64(16));
    let mut pos = 24;
    for _ in 0..n_kv {
        pos += 8 + walk.u64(pos);
        pos = walk.value(pos + 4, walk.u32(pos));
    }
    for _ in 0..n_tensors {
        pos += 8 + walk.u64(pos);
        pos += 4 + 8 * walk.u32(pos) + 12;
    }
    pos
}

struct Floor<'a>(&'a [u8]);

impl Floor<'_> {
    fn u32(&self, pos: usize) -> usize {
        u32::from_le_bytes(self.0[pos..pos + 4].try_into().unwrap()) as usize
    }

    fn u64(&self, pos: usize) -> usize {
        u64::from_le_bytes(self.0[pos..pos + 8].try_into().unwrap()) as usize
    }

    /// Where a value of type `ty` starting at `pos` ends.
    fn value(&self, pos: usize, ty: usize) -> usize {
        match ty {
            0 | 1 | 7 => pos + 1,
            2 | 3 => pos + 2,
            4..=6 => pos + 4,
            10..=12 => pos + 8,
            8 => pos + 8 + self.u64(pos),
            _ => {
                let (element, n) = (self.u32(pos), self.u64(pos + 4));
                let mut pos = pos + 12;
                match element {
                    8 => {
                        for _ in 0..n {
                            pos += 8 + self.u64(pos);
                        }
                        pos
                    }
                    9 => {
                        for _ in 0..n {
                            pos = self.value(pos, element);
                        }
                        pos
                    }
                    _ => pos + n * self.value(0, element),
                }
            }
        }
    }
}

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
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
