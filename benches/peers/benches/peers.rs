//! gguf-grammar beside the other Rust GGUF readers, doing equal work in one run: parse the
//! header, then read every string (keys, string values, string array elements, tensor
//! names) as UTF-8-checked text, counting them so that nothing is optimised away. Headers:
//! the Llama 3 tokenizer, the generated 262,144-token vocabulary of `crates/gguf-tools/benches/decode.rs` and
//! SmolLM2-135M (from `GGUF_SMOLLM2`, skipped with a message when unset).
//!
//! `bash scripts/bench-peers.sh` (figures: benches/README.md, "Peer readers").

use std::hint::black_box;
use std::io::Cursor;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gguf_grammar::{Gguf, Value, ValueType};

#[path = "../../floor/mod.rs"]
mod floor;
#[path = "../../vocab/mod.rs"]
mod vocab;

/// gguf-grammar: [`Gguf::parse`], then every string through `to_str` or `Array::strs`.
fn gguf_grammar(bytes: &[u8]) -> usize {
    fn value(v: Value<'_>) -> usize {
        match v {
            Value::String(s) => usize::from(s.to_str().is_ok()),
            Value::Array(a) if a.element_type() == ValueType::String => a
                .strs()
                .map_or(0, |strs| strs.filter(Result::is_ok).count()),
            Value::Array(a) if a.element_type() == ValueType::Array => a.iter().map(value).sum(),
            _ => 0,
        }
    }
    let gguf = Gguf::parse(bytes).expect("gguf-grammar parses the header");
    let kvs: usize = gguf
        .kvs
        .iter()
        .map(|kv| usize::from(kv.key.to_str().is_ok()) + value(kv.value))
        .sum();
    let names = gguf
        .tensors
        .iter()
        .filter(|t| t.info.name.to_str().is_ok())
        .count();
    kvs + names
}

/// ggus 0.5: `GGuf::new` checks every string as UTF-8 while it walks the header but keeps
/// only keys and tensor names as `&str`; the string arrays are read again through its
/// array iterator to get their elements.
fn ggus(bytes: &[u8]) -> usize {
    use ggus::{GGufMetaDataValueType as Ty, GGufMetaValueArray};
    let gguf = ggus::GGuf::new(bytes).expect("ggus parses the header");
    let mut count = gguf.tensors.len();
    for kv in gguf.meta_kvs.values() {
        black_box(kv.key());
        count += 1;
        let mut reader = kv.value_reader();
        match kv.ty() {
            Ty::String => count += usize::from(reader.read_str().is_ok()),
            Ty::Array => {
                let (ty, len) = reader
                    .read_arr_header()
                    .expect("ggus reads the array header");
                if ty == Ty::String {
                    let strs = GGufMetaValueArray::<str>::new(reader, len);
                    count += strs.filter(Result::is_ok).count();
                }
            }
            _ => {}
        }
    }
    count
}

/// candle-core's `gguf_file::Content::read`: every string becomes an owned `String`
/// (`from_utf8_lossy`), every array element a `Value`.
fn candle(bytes: &[u8]) -> usize {
    use candle_core::quantized::gguf_file::{Content, Value};
    fn value(v: &Value) -> usize {
        match v {
            Value::String(_) => 1,
            Value::Array(a) => a.iter().map(value).sum(),
            _ => 0,
        }
    }
    let content = Content::read(&mut Cursor::new(bytes)).expect("candle reads the header");
    let kvs: usize = content.metadata.values().map(|v| 1 + value(v)).sum();
    kvs + content.tensor_infos.len()
}

/// gguf-rs-lib 0.3: `GGUFFileReader::new` decodes every value into owned `MetadataValue`s
/// (strings as `String`).
fn gguf_rs_lib(bytes: &[u8]) -> usize {
    use gguf_rs_lib::prelude::{GGUFFileReader, MetadataValue};
    fn value(v: &MetadataValue) -> usize {
        match v {
            MetadataValue::String(_) => 1,
            MetadataValue::Array(a) => a.iter().map(value).sum(),
            _ => 0,
        }
    }
    let reader = GGUFFileReader::new(Cursor::new(bytes)).expect("gguf-rs-lib reads the header");
    let kvs: usize = reader.metadata().iter().map(|(_, v)| 1 + value(v)).sum();
    kvs + reader.tensor_infos().len()
}

type Reader = fn(&[u8]) -> usize;

const READERS: [(&str, Reader); 4] = [
    ("gguf-grammar", gguf_grammar),
    ("ggus", ggus),
    ("candle-core", candle),
    ("gguf-rs-lib", gguf_rs_lib),
];

fn bench_header(c: &mut Criterion, name: &str, bytes: &[u8]) {
    let header_end = floor::floor(bytes);
    let strings = gguf_grammar(bytes);
    for (reader, read) in READERS {
        assert_eq!(
            read(bytes),
            strings,
            "{reader} must read the same strings as gguf-grammar in {name}"
        );
    }
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(header_end as u64));
    group.bench_function("floor walk", |b| b.iter(|| floor::floor(black_box(bytes))));
    for (reader, read) in READERS {
        group.bench_function(reader, |b| b.iter(|| read(black_box(bytes))));
    }
    // ggus's parse alone already checks every string; the row above adds reading the
    // string arrays' elements back out, which equal work needs.
    group.bench_function("ggus, GGuf::new only", |b| {
        b.iter(|| ggus::GGuf::new(black_box(bytes)).map(|g| g.meta_kvs.len()))
    });
    group.finish();
}

fn peers(c: &mut Criterion) {
    let llama3 = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/corpus/ggml-vocab-llama-bpe.gguf"
    ))
    .expect("the Llama 3 tokenizer ships in tests/corpus");
    bench_header(c, "llama3", &llama3);
    bench_header(c, "vocab262k", &vocab::vocab_262k());
    match std::env::var_os("GGUF_SMOLLM2") {
        Some(path) => {
            let smollm2 = std::fs::read(path).expect("GGUF_SMOLLM2 names a readable file");
            bench_header(c, "smollm2", &smollm2);
        }
        None => eprintln!(
            "peers bench: GGUF_SMOLLM2 is not set; skipping SmolLM2 (scripts/fetch-models.sh prints its path)"
        ),
    }
}

criterion_group!(benches, peers);
criterion_main!(benches);
