//! Bounded work and memory on hostile inputs (issue 25, items 9–14 and 18): sparse files
//! claiming huge rows or headers, special files where a command reads, deep folders, and
//! inputs that never end. Every run is under an address-space limit and a time limit, so a
//! regression fails here instead of exhausting the machine.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use gguf_grammar::write::GgufBuilder;
use gguf_grammar::{Ctx, GgmlType};

/// Runs gguf with `args` in `dir` under an address-space limit of `mib` MiB and a time limit
/// of `secs` seconds, standard output thrown away when `discard`; exit code (124 for the time
/// limit, -1 for a signal) and standard error.
fn run_limited(args: &[&str], dir: &Path, mib: u64, secs: u64, discard: bool) -> (i32, String) {
    let mut command = common::limited(args, dir, mib, secs);
    if discard {
        command.stdout(Stdio::null());
    }
    let out = command.output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    let mut text = common::text(&out.stdout);
    text.push_str(&common::text(&out.stderr));
    (code, text)
}

/// A valid file whose only tensor `big` is f32 with `n` values, its data a hole (a sparse
/// file, so no disk is used).
fn sparse_f32(dir: &Path, name: &str, n: u64) -> PathBuf {
    let bytes = GgufBuilder::new(Ctx::V3_LE)
        .kv("general.architecture", "llama")
        .tensor("big", &[4], GgmlType::F32, &[0; 16])
        .build()
        .unwrap();
    let mut bytes = bytes[..bytes.len() - 16].to_vec();
    // name "big", one dim of 4: the dim follows the name's bytes and the u32 dim count.
    let at = bytes.windows(3).position(|w| w == b"big").unwrap() + 3 + 4;
    assert_eq!(bytes[at..at + 8], 4u64.to_le_bytes());
    bytes[at..at + 8].copy_from_slice(&n.to_le_bytes());
    let path = dir.join(name);
    fs::write(&path, &bytes).unwrap();
    let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(bytes.len() as u64 + 4 * n).unwrap();
    path
}

/// Item 9: `tensor` and `stats` stream within a row through a fixed buffer. A 1 GiB row runs
/// under a 256 MiB address-space limit, and a 4 TiB row (`[2^40]`) never aborts (before the
/// fix: the row's values were allocated whole, exit 134 or killed).
#[test]
fn tensor_and_stats_stream_within_a_row() {
    let dir = common::scratch("bounds-row");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    sparse_f32(&dir, "gib.gguf", 1 << 28);
    let (code, out) = run_limited(&["stats", "gib.gguf"], &dir, 256, 120, false);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("big\tf32\t268435456\t0e0\t0e0\t0.000000000e0\t0.000000000e0\t0\t0"),
        "{out}"
    );
    let (code, out) = run_limited(
        &["tensor", "gib.gguf", "big", "--format", "raw"],
        &dir,
        256,
        120,
        true,
    );
    assert_eq!(code, 0, "{out}");

    // 4 TiB of values: not read to the end here, only shown not to abort at the start.
    sparse_f32(&dir, "tib.gguf", 1 << 40);
    for args in [
        &["stats", "tib.gguf"][..],
        &["tensor", "tib.gguf", "big"],
        &["tensor", "tib.gguf", "big", "--format", "json"],
    ] {
        let (code, out) = run_limited(args, &dir, 256, 1, true);
        assert_eq!(code, 124, "{args:?}: should still be reading: {out}");
    }
}

/// Item 12: a FIFO at a sibling shard's name is refused, "is not a regular file", exit 2, by
/// every command that reads the set from its first shard (before the fix: `check`, `map` and
/// `merge` blocked forever opening it).
#[test]
fn a_fifo_at_a_siblings_name_is_refused() {
    let dir = common::scratch("bounds-fifo-shard");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let w = [0u8; 64];
    let model = GgufBuilder::new(Ctx::V3_LE)
        .kv("general.architecture", "llama")
        .tensor("a", &[16], GgmlType::F32, &w)
        .tensor("b", &[16], GgmlType::F32, &w)
        .build()
        .unwrap();
    fs::write(dir.join("m.gguf"), model).unwrap();
    let (code, _, err) = common::outcome(common::gguf(
        &["split", "--split-max-tensors", "1", "m.gguf", "q"],
        &dir,
    ));
    assert_eq!(code, 0, "{err}");
    fs::remove_file(dir.join("q-00002-of-00002.gguf")).unwrap();
    let made = Command::new("mkfifo")
        .arg(dir.join("q-00002-of-00002.gguf"))
        .status()
        .unwrap();
    assert!(made.success());
    for args in [
        &["check", "q-00001-of-00002.gguf"][..],
        &["map", "q-00001-of-00002.gguf"],
        &["merge", "q-00001-of-00002.gguf", "out.gguf"],
        &["dump", "q-00001-of-00002.gguf"],
    ] {
        let (code, out) = run_limited(args, &dir, 1024, 10, false);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(
            out.contains("q-00002-of-00002.gguf: is not a regular file"),
            "{args:?}: {out}"
        );
    }
    assert!(!dir.join("out.gguf").exists());
}

/// Item 18: `diff` matches duplicates by occurrence, so a second key of a name is a change,
/// and the data comparison gives the same answer in both argument orders (before the fix:
/// `[k=0]` and `[k=0, k=1]` were equal, exit 0; with a duplicated tensor name one order was
/// equal and the other "data differs").
#[test]
fn diff_sees_duplicates_in_both_orders() {
    let dir = common::scratch("bounds-diff-dup");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let one = GgufBuilder::new(Ctx::V3_LE).kv("k", 0u32).build().unwrap();
    let two = GgufBuilder::new(Ctx::V3_LE)
        .kv("k", 0u32)
        .kv("k", 1u32)
        .build()
        .unwrap();
    fs::write(dir.join("one.gguf"), one).unwrap();
    fs::write(dir.join("two.gguf"), two).unwrap();
    for (a, b, expected) in [
        (
            "one.gguf",
            "two.gguf",
            "key added      k (occurrence 2): uint32 1",
        ),
        (
            "two.gguf",
            "one.gguf",
            "key removed    k (occurrence 2): uint32 1",
        ),
    ] {
        let (code, out, err) = common::outcome(common::gguf(&["diff", a, b], &dir));
        assert_eq!(code, 1, "{a} {b}: {out}{err}");
        assert!(out.contains(expected), "{a} {b}: {out}");
    }

    let (zeros, ones) = ([0u8; 64], [1u8; 64]);
    let t1 = GgufBuilder::new(Ctx::V3_LE)
        .tensor("w", &[16], GgmlType::F32, &zeros)
        .tensor("w", &[16], GgmlType::F32, &ones)
        .build()
        .unwrap();
    let t2 = GgufBuilder::new(Ctx::V3_LE)
        .tensor("w", &[16], GgmlType::F32, &zeros)
        .tensor("w", &[16], GgmlType::F32, &zeros)
        .build()
        .unwrap();
    fs::write(dir.join("t1.gguf"), t1).unwrap();
    fs::write(dir.join("t2.gguf"), t2).unwrap();
    for (a, b) in [("t1.gguf", "t2.gguf"), ("t2.gguf", "t1.gguf")] {
        let (code, out, err) = common::outcome(common::gguf(&["diff", "--data", a, b], &dir));
        assert_eq!(code, 1, "{a} {b}: {out}{err}");
        assert!(out.contains("w (occurrence 2)"), "{a} {b}: {out}");
    }
}

/// Item 13: `scan` of a folder chain 1,800 deep (3,600 bytes, inside PATH_MAX) finishes inside
/// a 30 s guard that one canonicalisation per folder does not (quadratic: 35 s at 1,500 deep,
/// over 120 s at 2,000); a link loop is still searched once.
#[test]
fn scan_of_a_deep_chain_is_linear() {
    let dir = common::scratch("bounds-deep");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let mut deep = dir.join("deep");
    for _ in 0..1800 {
        deep.push("d");
    }
    fs::create_dir_all(&deep).unwrap();
    std::os::unix::fs::symlink("../..", deep.join("loop")).unwrap();
    let (code, out) = run_limited(&["scan", "deep"], &dir, 1024, 30, false);
    assert_eq!(code, 0, "{out}");
}
