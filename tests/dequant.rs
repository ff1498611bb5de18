//! Dequantisation against gguf-py 0.19.0 and llama.cpp 0.3.36's ggml, bit for bit.
//!
//! Without any environment the tests compare with gguf-py's output recorded in
//! `tests/dequant/` by `scripts/dequant_reference.py` (`scripts/check-dequant.sh --record`):
//! `random.gguf`, random blocks of every type gguf-py dequantises (Inf, NaN and subnormal
//! scales among them), with the sha256 of gguf-py's `f32` values per tensor in
//! `random.gguf.jsonl`; and the same digests for every tensor of SmolLM2-135M in
//! `SmolLM2-135M-Instruct.Q4_1.gguf.jsonl`, checked on the whole model when it is fetched
//! (`GGUF_SMOLLM2`, or the cache of `scripts/fetch-models.sh`) and otherwise on
//! `smollm2-excerpt.gguf`, three of its tensors copied byte for byte. `random-ggml.gguf`
//! (`dequant_reference.py --ggml`) holds random blocks of `mxfp4`, `nvfp4`, `q1_0` and `q2_0`
//! the same way, with the digests of ggml 0.3.36's `to_float` output
//! (`scripts/llama/dequant-ref.cpp`) in `random-ggml.gguf.jsonl`.
//!
//! `scripts/check-dequant.sh` runs gguf-py and ggml again and sets `GGUF_DEQUANT_REF` to the
//! folder they wrote: the tests then compare with that live output instead (value by value for the random
//! file), and the script fails when the recording differs from it.

mod common;

use std::path::{Path, PathBuf};

use gguf_grammar::data::dequant::{dequantize, dequantize_into, supported};
use gguf_grammar::{GgmlType, GgufFile};
use sha2::{Digest, Sha256};

/// The SmolLM2 model's file name, which names its digests file.
const SMOLLM2: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// Where gguf-py's output is: the live run's folder (`GGUF_DEQUANT_REF`) or the recording.
fn reference_dir() -> PathBuf {
    match std::env::var_os("GGUF_DEQUANT_REF") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            assert!(
                dir.join("random.gguf.jsonl").is_file(),
                "GGUF_DEQUANT_REF={} holds no random.gguf.jsonl: set it to the folder \
                 scripts/dequant_reference.py wrote (scripts/check-dequant.sh does), or unset it \
                 to compare with the recording in tests/dequant/",
                dir.display()
            );
            dir
        }
        None => common::root().join("tests/dequant"),
    }
}

fn bytes_of(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// gguf-py's output in `manifest`: per tensor, one JSON line with its name, type, value
/// count and the sha256 of its `f32` values.
fn manifest(manifest: &Path) -> Vec<serde_json::Value> {
    let text =
        std::fs::read_to_string(manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Dequantises `tensor` of `file` (whose bytes are `bytes`) and checks it against gguf-py's
/// `expected` line; returns the values.
fn check_tensor(
    tensor: &gguf_grammar::Tensor<'_>,
    bytes: &[u8],
    expected: &serde_json::Value,
    file: &Path,
) -> Vec<f32> {
    let name = tensor.info.name.to_str().unwrap();
    let ty = tensor.info.ggml_type;
    assert_eq!(expected["name"], name);
    assert_eq!(expected["type"], ty.0);
    assert!(supported(ty), "{name}: {ty}");
    let n = expected["n"].as_u64().unwrap() as usize;
    let values = dequantize(ty, tensor.data(bytes).unwrap(), n).unwrap();
    let digest = format!("{:x}", Sha256::digest(bytes_of(&values)));
    assert_eq!(
        digest,
        expected["sha256"].as_str().unwrap(),
        "{}: {name} ({ty})",
        file.display()
    );
    values
}

/// Checks every tensor of `model` against `<dir>/<file name>.jsonl`, in order; returns the
/// values of all tensors.
fn check_file(model: &Path, dir: &Path) -> Vec<f32> {
    let lines = manifest(&dir.join(format!(
        "{}.jsonl",
        model.file_name().unwrap().to_string_lossy()
    )));
    let file = GgufFile::open(model).unwrap();
    let gguf = file.parse().unwrap();
    assert_eq!(lines.len(), gguf.tensors.len(), "{}", model.display());
    let mut all = Vec::new();
    for (t, expected) in gguf.tensors.iter().zip(&lines) {
        all.extend(check_tensor(t, file.bytes(), expected, model));
    }
    all
}

/// Checks each tensor of `path` against the line of `manifest_path` with its name; returns
/// how many it checked.
fn check_tensors(path: &Path, manifest_path: &Path) -> usize {
    let lines = manifest(manifest_path);
    let file = GgufFile::open(path).unwrap();
    let gguf = file.parse().unwrap();
    for t in &gguf.tensors {
        let name = t.info.name.to_str().unwrap();
        let expected = lines
            .iter()
            .find(|line| line["name"] == name)
            .unwrap_or_else(|| panic!("{name}: not in {}", manifest_path.display()));
        check_tensor(t, file.bytes(), expected, path);
    }
    gguf.tensors.len()
}

/// Checks `<dir>/<stem>.gguf` against `reference`'s output: value by value first where the
/// live run wrote all values (`<stem>.f32`; the recording keeps only their digests), so a
/// mismatch names the value and both bit patterns; then by the digests in
/// `<stem>.gguf.jsonl`. Returns the file's tensor types, sorted.
fn check_random(dir: &Path, stem: &str, reference: &str) -> Vec<GgmlType> {
    let random = dir.join(format!("{stem}.gguf"));
    let file = GgufFile::open(&random).unwrap();
    let gguf = file.parse().unwrap();
    let expected = std::fs::read(dir.join(format!("{stem}.f32"))).ok();
    let mut at = 0;
    let mut types = Vec::new();
    for t in &gguf.tensors {
        types.push(t.info.ggml_type);
        let Some(expected) = &expected else { continue };
        let data = t.data(file.bytes()).unwrap();
        let n = GgmlType::n_elements(&t.info.dims).unwrap() as usize;
        let values = dequantize(t.info.ggml_type, data, n).unwrap();
        for (i, v) in values.iter().enumerate() {
            let want = u32::from_le_bytes(expected[at..at + 4].try_into().unwrap());
            assert_eq!(
                v.to_bits(),
                want,
                "{} value {i}: ours {:#010x}, {reference} {want:#010x}",
                t.info.ggml_type,
                v.to_bits()
            );
            at += 4;
        }
    }
    if let Some(expected) = &expected {
        assert_eq!(at, expected.len());
    }
    check_file(&random, dir);
    types.sort();
    types
}

/// The types gguf-py 0.19.0 does not dequantise, checked against llama.cpp 0.3.36's ggml only.
const GGML_ONLY: [GgmlType; 2] = [GgmlType::Q1_0, GgmlType::Q2_0];

#[test]
fn random_blocks_of_every_type_match_gguf_py() {
    let types = check_random(&reference_dir(), "random", "gguf-py");
    let all: Vec<GgmlType> = (0..GgmlType::COUNT)
        .map(GgmlType)
        .filter(|&t| supported(t) && !GGML_ONLY.contains(&t))
        .collect();
    assert_eq!(
        types, all,
        "the random file has one tensor of each supported type gguf-py dequantises"
    );
}

/// `random-ggml.gguf` against `ggml_get_type_traits(type)->to_float` of llama.cpp 0.3.36
/// (scripts/llama/dequant-ref.cpp): the types it adds to gguf-py's and the two 4-bit float
/// types both have.
#[test]
fn random_blocks_match_ggml_0_3_36() {
    let types = check_random(&reference_dir(), "random-ggml", "ggml 0.3.36");
    assert_eq!(
        types,
        [
            GgmlType::MXFP4,
            GgmlType::NVFP4,
            GgmlType::Q1_0,
            GgmlType::Q2_0
        ]
    );
}

#[test]
fn every_smollm2_tensor_matches_gguf_py() {
    let dir = reference_dir();
    match common::smollm2() {
        Some(model) => {
            assert_eq!(
                model.file_name().unwrap(),
                SMOLLM2,
                "its digests are named after it"
            );
            let all = check_file(&model, &dir);
            assert!(all.len() > 100_000_000, "{}", all.len());
        }
        None => {
            assert!(
                std::env::var_os("GGUF_DEQUANT_REF").is_none(),
                "GGUF_DEQUANT_REF is set but SmolLM2 is not fetched: run scripts/fetch-models.sh \
                 and set GGUF_SMOLLM2 (scripts/check-dequant.sh does both)"
            );
            let excerpt = common::root().join("tests/dequant/smollm2-excerpt.gguf");
            let n = check_tensors(&excerpt, &dir.join(format!("{SMOLLM2}.jsonl")));
            assert_eq!(n, 3, "the excerpt's tensors, each with its recorded digest");
        }
    }
}

/// Streaming by rows gives the same values as the whole-tensor call.
#[test]
fn rows_stream_into_a_buffer() {
    let dir = reference_dir();
    for stem in ["random", "random-ggml"] {
        rows_stream_in(&dir.join(format!("{stem}.gguf")));
    }
}

fn rows_stream_in(path: &Path) {
    let file = GgufFile::open(path).unwrap();
    let gguf = file.parse().unwrap();
    for t in &gguf.tensors {
        let ty = t.info.ggml_type;
        let data = t.data(file.bytes()).unwrap();
        let (row_len, rows) = (t.info.dims[0] as usize, t.info.dims[1] as usize);
        let whole = dequantize(ty, data, row_len * rows).unwrap();
        let row_bytes = data.len() / rows;
        let mut row = vec![0f32; row_len];
        for (r, bytes) in data.chunks(row_bytes).enumerate() {
            dequantize_into(ty, bytes, &mut row).unwrap();
            assert_eq!(
                bytes_of(&row),
                bytes_of(&whole[r * row_len..][..row_len]),
                "{ty} row {r}"
            );
        }
    }
}
