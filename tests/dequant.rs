//! Dequantisation against gguf-py 0.19.0, bit for bit.
//!
//! `scripts/check-dequant.sh` runs `scripts/dequant_reference.py`, which writes a file of
//! random blocks of every type gguf-py dequantises (with Inf, NaN and subnormal scales) and
//! the sha256 of gguf-py's `f32` output for each tensor of it and of SmolLM2, then runs this
//! test with `GGUF_DEQUANT_REF` pointing at that folder. Without it the test says it skips.

use std::path::{Path, PathBuf};

use gguf_grammar::data::dequant::{dequantize, dequantize_into, supported};
use gguf_grammar::{GgmlType, GgufFile};
use sha2::{Digest, Sha256};

fn reference_dir() -> Option<PathBuf> {
    match std::env::var_os("GGUF_DEQUANT_REF") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => {
            eprintln!("SKIPPED: GGUF_DEQUANT_REF not set (scripts/check-dequant.sh sets it)");
            None
        }
    }
}

fn bytes_of(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Checks every tensor of `model` against `<dir>/<file name>.jsonl`; returns the values of
/// all tensors, in order.
fn check_file(model: &Path, dir: &Path) -> Vec<f32> {
    let manifest = dir.join(format!(
        "{}.jsonl",
        model.file_name().unwrap().to_string_lossy()
    ));
    let manifest = std::fs::read_to_string(&manifest)
        .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let file = GgufFile::open(model).unwrap();
    let gguf = file.parse().unwrap();
    let lines: Vec<serde_json::Value> = manifest
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), gguf.tensors.len(), "{}", model.display());
    let mut all = Vec::new();
    for (t, expected) in gguf.tensors.iter().zip(&lines) {
        let name = t.info.name.to_str().unwrap();
        assert_eq!(expected["name"], name);
        assert_eq!(expected["type"], t.info.ggml_type.0);
        assert!(supported(t.info.ggml_type), "{name}: {}", t.info.ggml_type);
        let n = expected["n"].as_u64().unwrap() as usize;
        let values = dequantize(t.info.ggml_type, t.data(file.bytes()).unwrap(), n).unwrap();
        let digest = format!("{:x}", Sha256::digest(bytes_of(&values)));
        assert_eq!(
            digest,
            expected["sha256"].as_str().unwrap(),
            "{}: {name} ({})",
            model.display(),
            t.info.ggml_type
        );
        all.extend(values);
    }
    all
}

#[test]
fn random_blocks_of_every_type_match_gguf_py() {
    let Some(dir) = reference_dir() else { return };
    let random = dir.join("random.gguf");
    // Value by value first, so a mismatch names the value and both bit patterns.
    let file = GgufFile::open(&random).unwrap();
    let gguf = file.parse().unwrap();
    let expected = std::fs::read(dir.join("random.f32")).unwrap();
    let mut at = 0;
    let mut types = Vec::new();
    for t in &gguf.tensors {
        let data = t.data(file.bytes()).unwrap();
        let n = GgmlType::n_elements(&t.info.dims).unwrap() as usize;
        let values = dequantize(t.info.ggml_type, data, n).unwrap();
        for (i, v) in values.iter().enumerate() {
            let want = u32::from_le_bytes(expected[at..at + 4].try_into().unwrap());
            assert_eq!(
                v.to_bits(),
                want,
                "{} value {i}: ours {:#010x}, gguf-py {want:#010x}",
                t.info.ggml_type,
                v.to_bits()
            );
            at += 4;
        }
        types.push(t.info.ggml_type);
    }
    assert_eq!(at, expected.len());
    let all: Vec<GgmlType> = (0..GgmlType::COUNT)
        .map(GgmlType)
        .filter(|&t| supported(t))
        .collect();
    types.sort();
    assert_eq!(
        types, all,
        "the random file has one tensor of each supported type"
    );
    check_file(&random, &dir);
}

#[test]
fn every_smollm2_tensor_matches_gguf_py() {
    let Some(dir) = reference_dir() else { return };
    let model = std::env::var_os("GGUF_SMOLLM2")
        .map(PathBuf::from)
        .expect("GGUF_SMOLLM2 is set by scripts/check-dequant.sh");
    let all = check_file(&model, &dir);
    assert!(all.len() > 100_000_000, "{}", all.len());
}

/// Streaming by rows gives the same values as the whole-tensor call.
#[test]
fn rows_stream_into_a_buffer() {
    let Some(dir) = reference_dir() else { return };
    let file = GgufFile::open(dir.join("random.gguf")).unwrap();
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
