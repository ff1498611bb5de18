//! Extreme file values through every command that reads tensor data: dims, offsets and counts
//! near the top of their types and a 2^31 alignment must give an answer or a located error,
//! never a panic, an abort or a wrap (the tests run with overflow checks on).

mod common;
use common::alloc;

use std::path::{Path, PathBuf};

use gguf_grammar::write::GgufBuilder;
use gguf_grammar::{Ctx, GgmlType};
use gguf_testkit::mutate;

#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

/// The crafted files, each a small valid-looking header whose values are extreme.
fn extreme_files(dir: &Path) -> Vec<PathBuf> {
    let top = u64::MAX;
    let data = [0x3cu8; 256];
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "dims-near-max",
            GgufBuilder::new(Ctx::V3_LE)
                .set("general.architecture", "llama")
                .tensor_at("a", &[top, 1], GgmlType::F32, 0, &[])
                .tensor_at("b", &[top / 2 + 1, 2], GgmlType::F16, 0, &[])
                .tensor_at("c", &[top - 30], GgmlType::Q4_0, 0, &[])
                .tensor_at("d", &[1 << 62, 1 << 62, 1 << 62, 0], GgmlType::F32, 0, &[])
                .tensor_at("e", &[top / 4 + 1], GgmlType::F32, 0, &[])
                .tensor_at("f", &[16], GgmlType::F32, 0, &data[..64])
                .build()
                .unwrap(),
        ),
        (
            "offsets-near-max",
            GgufBuilder::new(Ctx::V3_LE)
                .set("general.architecture", "llama")
                .tensor_at("f", &[16], GgmlType::F32, 0, &data[..64])
                .tensor_at("a", &[16], GgmlType::F32, top - 3, &[])
                .tensor_at("b", &[1], GgmlType::F32, top, &[])
                .tensor_at("c", &[32], GgmlType::Q8_0, top - 31, &[])
                .tensor_at("d", &[0], GgmlType::F32, top, &[])
                .build()
                .unwrap(),
        ),
        ("alignment-2-31", {
            let mut b = GgufBuilder::new(Ctx::V3_LE);
            b.set("general.architecture", "llama")
                .set("general.alignment", 1u32 << 31)
                .tensor_at("f", &[16], GgmlType::F32, 0, &[])
                .tensor_at("g", &[16], GgmlType::F32, 1 << 31, &[]);
            b.allow_missing_data().build().unwrap()
        }),
        ("alignment-top", {
            let mut b = GgufBuilder::new(Ctx::V3_LE);
            b.set("general.alignment", u32::MAX)
                .tensor_at("f", &[16], GgmlType::F32, 0, &[]);
            b.allow_missing_data().build().unwrap()
        }),
        ("counts-near-max", counts_near_max(u64::MAX, u64::MAX)),
        (
            "array-count-near-usize-max",
            array_of(9, usize::MAX as u64 - 7),
        ),
        ("string-array-count-near-max", array_of(8, u64::MAX)),
        ("n-dims-near-max", n_dims(u32::MAX)),
    ];
    cases
        .into_iter()
        .map(|(name, bytes)| {
            let path = dir.join(format!("{name}.gguf"));
            std::fs::write(&path, bytes).unwrap();
            path
        })
        .collect()
}

/// A v3 little-endian header claiming `tensors` tensors and `kvs` key/values, and no more.
fn counts_near_max(tensors: u64, kvs: u64) -> Vec<u8> {
    let mut bytes = b"GGUF".to_vec();
    bytes.extend(3u32.to_le_bytes());
    bytes.extend(tensors.to_le_bytes());
    bytes.extend(kvs.to_le_bytes());
    bytes
}

/// One key/value `k`, an array of value type `element` claiming `count` elements, with 64
/// bytes after it.
fn array_of(element: u32, count: u64) -> Vec<u8> {
    let mut bytes = counts_near_max(0, 1);
    bytes.extend(1u64.to_le_bytes());
    bytes.push(b'k');
    bytes.extend(9u32.to_le_bytes());
    bytes.extend(element.to_le_bytes());
    bytes.extend(count.to_le_bytes());
    bytes.extend([0xffu8; 64]);
    bytes
}

/// One tensor info `t` claiming `n` dims, each u64::MAX, as many as 64 bytes hold.
fn n_dims(n: u32) -> Vec<u8> {
    let mut bytes = counts_near_max(1, 0);
    bytes.extend(1u64.to_le_bytes());
    bytes.push(b't');
    bytes.extend(n.to_le_bytes());
    bytes.extend([0xffu8; 64]);
    bytes
}

#[test]
fn extreme_values_through_every_command_that_reads_tensor_data() {
    let dir = common::scratch("extreme-values");
    let _cleanup = std::env::var_os("KEEP")
        .is_none()
        .then(|| common::RemoveOnDrop(dir.clone()));
    let mut failures = Vec::new();
    for file in extreme_files(&dir) {
        let f = file.file_name().unwrap().to_str().unwrap();
        let runs: Vec<Vec<&str>> = vec![
            vec!["check", "--profile", "ggml-data", f],
            vec!["check", "--profile", "ggml-0.3.16-data", f],
            vec!["check", "--profile", "spec", f],
            vec!["check", "--profile", "gguf-py", f],
            vec!["tensor", f, "a"],
            vec!["tensor", f, "c"],
            vec!["tensor", f, "d"],
            vec!["tensor", f, "f"],
            vec!["stats", f],
            vec!["stats", f, "d", "f"],
            vec!["hash", f],
            vec!["convert-endian", f, "big", "-o", "swapped.gguf"],
            vec!["split", "--split-max-tensors", "1", f, "shard"],
            vec!["diff", f, f],
            vec!["diff", "--data", f, f],
            vec!["map", f],
            vec!["scan", f],
            vec!["dump", f],
            vec!["dump", "--summary", f],
            vec!["dump", "--json", f],
            vec!["dump", "--format", "gguf-py", f],
            vec![
                "edit",
                "--set",
                "general.name=string:x",
                f,
                "-o",
                "edited.gguf",
            ],
            vec!["snapshot", f],
            vec!["mutate", "--list", f],
        ];
        for args in runs {
            let out = common::gguf(&args, &dir);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let code = out.status.code();
            // A failure says why: a message on stderr, or (check, scan) the verdict's row.
            let said_why = !stderr.trim().is_empty() || !out.stdout.is_empty();
            if !matches!(code, Some(0..=2))
                || stderr.contains("panicked")
                || (code != Some(0) && !said_why)
            {
                failures.push(format!(
                    "gguf {}: {:?}\n{stderr}",
                    args.join(" "),
                    out.status
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn mutations_of_a_file_with_a_huge_alignment_allocate_by_the_file_not_the_alignment() {
    let mut builder = GgufBuilder::new(Ctx::V3_LE);
    builder
        .set("general.alignment", 1u32 << 31)
        .tensor_at("f", &[16], GgmlType::F32, 0, &[]);
    let bytes = builder.allow_missing_data().build().unwrap();
    let (mutations, peak) = alloc::peak_during(|| mutate::applicable(&bytes));
    assert!(!mutations.is_empty());
    assert!(
        peak < 1 << 20,
        "peak {peak} bytes for a {}-byte file",
        bytes.len()
    );
}

#[test]
fn a_data_offset_that_overflows_is_called_an_overflow_not_a_fake_offset() {
    let bytes = GgufBuilder::new(Ctx::V3_LE)
        .set("general.architecture", "llama")
        .tensor_at("w", &[2], GgmlType::F32, u64::MAX - 31, &[])
        .build()
        .unwrap();
    let gguf = gguf_grammar::Gguf::parse(&bytes).unwrap();
    let err = gguf.tensors[0]
        .data_range(bytes.len() as u64)
        .unwrap_err()
        .to_string();
    let want = "tensor \"w\": the data start plus its relative offset 0xffffffffffffffe0 overflows 64 bits";
    assert_eq!(err, want);

    let dir = common::scratch("offset-overflow");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    std::fs::write(dir.join("m.gguf"), &bytes).unwrap();
    let out = common::gguf(&["tensor", "m.gguf", "w"], &dir);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        common::text(&out.stderr).contains(want),
        "{}",
        common::text(&out.stderr)
    );
}
