//! Snapshots of every real file: version, byte order, alignment, data start, every key with
//! its type and value (long arrays: length, first and last elements, sha256 of all element
//! bytes), every tensor descriptor. Their facts were checked against gguf-py 0.19.0 with
//! `scripts/check-gguf-py.sh`, which compares every value in full.

mod common;

use std::fmt::Write;

use gguf_grammar::{Array, Gguf, GgufFile, Value};
use sha2::{Digest, Sha256};

/// Arrays up to this long are shown whole; longer ones by their ends and a hash.
const SHOWN: u64 = 8;
const ENDS: usize = 3;

fn describe_value(value: Value<'_>) -> String {
    match value {
        Value::String(s) => format!("{:?}", s.to_string()),
        Value::Bool(byte) => format!("bool({byte})"),
        Value::Array(array) => describe_array(array),
        Value::F32(v) => format!("{v:?}"),
        Value::F64(v) => format!("{v:?}"),
        Value::U64(v) => v.to_string(),
        integer => integer.as_i64().map_or_else(String::new, |v| v.to_string()),
    }
}

fn describe_array(array: Array<'_>) -> String {
    let head = format!("[{}; {}]", array.element_type(), array.len());
    let elements: Vec<String> = if array.len() <= SHOWN {
        array.iter().map(describe_value).collect()
    } else {
        let first = array.iter().take(ENDS).map(describe_value);
        let last = array
            .iter()
            .skip(array.len() as usize - ENDS)
            .map(describe_value);
        first.chain(["...".to_string()]).chain(last).collect()
    };
    let sha = Sha256::digest(array.raw_elements());
    let sha: String = sha.iter().map(|b| format!("{b:02x}")).collect();
    format!("{head} [{}] sha256:{}", elements.join(", "), &sha[..16])
}

fn snapshot(gguf: &Gguf<'_>, file_size: usize) -> String {
    let mut out = String::new();
    writeln!(out, "version: {}", gguf.version().number()).unwrap();
    writeln!(out, "endian: {}", gguf.endian().name()).unwrap();
    writeln!(out, "file_size: {file_size}").unwrap();
    writeln!(out, "alignment: {}", gguf.alignment).unwrap();
    writeln!(out, "tensor_infos_end: {}", gguf.tensor_infos_end).unwrap();
    writeln!(out, "tensor_data_offset: {}", gguf.tensor_data_offset).unwrap();
    writeln!(out, "kvs: {}", gguf.kvs.len()).unwrap();
    for pair in &gguf.kvs {
        let offset = gguf.offset_of(pair.raw).unwrap();
        let ty = pair.value.value_type();
        let value = describe_value(pair.value);
        writeln!(out, "  @{offset} {} {ty} = {value}", pair.key).unwrap();
    }
    writeln!(out, "tensors: {}", gguf.tensors.len()).unwrap();
    for t in &gguf.tensors {
        let i = &t.info;
        writeln!(
            out,
            "  {} {} {:?} offset={} data_offset={:?} n_bytes={:?}",
            i.name, i.ggml_type, i.dims, i.offset, t.data_offset, t.n_bytes
        )
        .unwrap();
    }
    out
}

fn assert_snapshot_of(path: &std::path::Path) {
    let file = GgufFile::open(path).unwrap();
    let gguf = file
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, snapshot(&gguf, file.bytes().len()));
    });
}

#[test]
fn every_bundled_real_file() {
    for path in common::corpus_files() {
        assert_snapshot_of(&path);
    }
}

#[test]
fn smollm2() {
    if let Some(path) = common::smollm2() {
        assert_snapshot_of(&path);
    }
}
