//! Reading every element, validating and rendering, side by side with the floor walk in one
//! run, on three headers: the Llama 3 tokenizer (7.8 MB, 408k strings), a generated
//! gemma3-style 262,144-token vocabulary, and SmolLM2-135M's header (from `GGUF_SMOLLM2`,
//! skipped with a message when unset). benches/README.md records the latest figures.
//!
//! `cargo bench --bench decode` (add a filter such as `llama3` to run one header).

use std::hint::black_box;
use std::io::{self, BufWriter, Write};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gguf_grammar::validate::{self, Profile};
use gguf_grammar::{Array, Gguf, Value, ValueType};
use gguf_tools::render;

#[path = "../../../benches/floor/mod.rs"]
mod floor;
use floor::floor;
#[path = "../../../benches/vocab/mod.rs"]
mod vocab;
use vocab::vocab_262k;

/// Reads every element of every array (strings as bytes, numbers decoded), returning a
/// checksum so that nothing is optimised away.
fn iterate(gguf: &Gguf<'_>) -> u64 {
    gguf.kvs.iter().map(|kv| touch(kv.value, false)).sum()
}

/// As [`iterate`], with every string and key also checked as UTF-8.
fn iterate_utf8(gguf: &Gguf<'_>) -> u64 {
    gguf.kvs
        .iter()
        .map(|kv| u64::from(kv.key.to_str().is_ok()) + touch(kv.value, true))
        .sum()
}

fn touch(value: Value<'_>, utf8: bool) -> u64 {
    match value {
        Value::String(s) if utf8 => s.to_str().map_or(0, |s| s.len() as u64),
        Value::String(s) => s.len() as u64,
        Value::Array(array) => touch_array(array, utf8),
        _ => 1,
    }
}

fn touch_array(array: Array<'_>, utf8: bool) -> u64 {
    fn sum<T: gguf_grammar::elements::Number>(array: Array<'_>, f: fn(T) -> u64) -> u64 {
        array
            .numbers::<T>()
            .map_or(0, |n| n.map(f).fold(0, u64::wrapping_add))
    }
    let Some(element_type) = array.element_type().known() else {
        return 0; // an unknown element type: the array is empty
    };
    match element_type {
        ValueType::String if utf8 => array.strs().map_or(0, |strs| {
            strs.map(|s| s.map_or(0, |s| s.len() as u64)).sum()
        }),
        ValueType::String => array
            .strings()
            .map_or(0, |strings| strings.map(|s| s.len() as u64).sum()),
        ValueType::Array => array.iter().map(|v| touch(v, utf8)).sum(),
        ValueType::U8 | ValueType::Bool => array.raw_elements().iter().map(|&b| u64::from(b)).sum(),
        ValueType::I8 => sum::<i8>(array, |v| v as u64),
        ValueType::U16 => sum::<u16>(array, u64::from),
        ValueType::I16 => sum::<i16>(array, |v| v as u64),
        ValueType::U32 => sum::<u32>(array, u64::from),
        ValueType::I32 => sum::<i32>(array, |v| v as u64),
        ValueType::U64 => sum::<u64>(array, |v| v),
        ValueType::I64 => sum::<i64>(array, |v| v as u64),
        ValueType::F32 => sum::<f32>(array, |v| v.to_bits().into()),
        ValueType::F64 => sum::<f64>(array, f64::to_bits),
    }
}

/// Every element through [`Array::iter`], one [`Value`] each: the path before this work.
fn iterate_values(gguf: &Gguf<'_>) -> u64 {
    fn count(value: Value<'_>) -> u64 {
        match value {
            Value::Array(array) => array.iter().map(count).sum(),
            _ => 1,
        }
    }
    gguf.kvs.iter().map(|kv| count(kv.value)).sum()
}

fn smollm2() -> Option<Vec<u8>> {
    let Some(path) = std::env::var_os("GGUF_SMOLLM2") else {
        eprintln!("decode bench: GGUF_SMOLLM2 is not set; skipping SmolLM2 (scripts/fetch-models.sh prints its path)");
        return None;
    };
    Some(std::fs::read(&path).expect("GGUF_SMOLLM2 names a readable file"))
}

const PROFILES: [(Profile, &str); 5] = [
    (Profile::Ggml, "ggml"),
    (Profile::GgmlData, "ggml-data"),
    (Profile::GgufPy, "gguf-py"),
    (Profile::Spec, "spec"),
    (Profile::Strict, "strict"),
];

/// `bytes` is the whole file; the throughput counts its header.
fn bench_header(c: &mut Criterion, name: &str, bytes: &[u8]) {
    let gguf = Gguf::parse(bytes).unwrap();
    assert_eq!(
        floor(bytes) as u64,
        gguf.tensor_infos_end,
        "the floor must walk the same bytes"
    );
    assert_eq!(invalid_strings(&gguf), 0, "every string is UTF-8 here");
    assert_eq!(iterate_utf8(&gguf), iterate(&gguf) + gguf.kvs.len() as u64);

    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(gguf.tensor_infos_end));
    group.bench_function("floor walk", |b| b.iter(|| floor(black_box(bytes))));
    group.bench_function("parse", |b| {
        b.iter(|| Gguf::parse(black_box(bytes)).unwrap().kvs.len())
    });
    group.bench_function("parse + iterate", |b| {
        b.iter(|| iterate(&Gguf::parse(black_box(bytes)).unwrap()))
    });
    group.bench_function("parse + iterate + utf8", |b| {
        b.iter(|| iterate_utf8(&Gguf::parse(black_box(bytes)).unwrap()))
    });
    group.bench_function("parse + Array::iter (Value per element)", |b| {
        b.iter(|| iterate_values(&Gguf::parse(black_box(bytes)).unwrap()))
    });
    for (profile, label) in PROFILES {
        group.bench_function(format!("parse + check {label}"), |b| {
            b.iter(|| {
                let gguf = Gguf::parse(black_box(bytes)).unwrap();
                validate::check(&gguf, bytes.len() as u64, profile).len()
            })
        });
    }
    group.bench_function("parse + json", |b| {
        b.iter(|| {
            let gguf = Gguf::parse(black_box(bytes)).unwrap();
            let mut out = BufWriter::new(io::sink());
            render::json::write(&gguf, bytes.len() as u64, &mut out).unwrap();
            out.flush().unwrap();
        })
    });
    group.bench_function("parse + gguf-py json", |b| {
        b.iter(|| {
            let gguf = Gguf::parse(black_box(bytes)).unwrap();
            let mut out = Vec::new();
            render::gguf_py::write(&gguf, "model.gguf", &mut out).unwrap();
            out.len()
        })
    });
    group.finish();
}

/// Strings that fail the UTF-8 check (none in these headers; counted so the assertion
/// above says what it checks).
fn invalid_strings(gguf: &Gguf<'_>) -> u64 {
    gguf.kvs
        .iter()
        .filter_map(|kv| kv.value.as_array()?.strs())
        .flatten()
        .filter(Result::is_err)
        .count() as u64
}

fn bench(c: &mut Criterion) {
    let llama3 = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/corpus/ggml-vocab-llama-bpe.gguf"
    ))
    .unwrap();
    bench_header(c, "llama3-tokenizer", &llama3);
    bench_header(c, "vocab-262k", &vocab_262k());
    if let Some(file) = smollm2() {
        bench_header(c, "smollm2-header", &file);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
