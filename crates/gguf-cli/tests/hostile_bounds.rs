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

/// Item 11: `hash` and `diff` hold little beyond the parsed headers. A million tensors hash
/// (and check against their 59 MB manifest) and a million keys diff (changed, or equal) under a
/// 512 MiB address-space limit (measured peak RSS on this machine: `hash` 289 MB where
/// `dump --summary` takes 289 MB, `hash --check` 447 MB, `diff` 379 MB; before the fix `hash`
/// kept every name and digest until the end, 922 MB, `--check` copied each manifest word,
/// 1181 MB, and `diff` copied both models into hash maps and every change into a list, 911 MB;
/// each aborted here).
/// The output is unchanged: each line once, in order.
#[test]
fn hash_and_diff_hold_little_beyond_the_headers() {
    let dir = common::scratch("bounds-hash-diff");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    const N: u32 = 1_000_000;
    let data: Vec<u8> = (0..N).flat_map(u32::to_le_bytes).collect();
    let mut tensors = GgufBuilder::new(Ctx::V3_LE);
    for (i, value) in data.chunks(4).enumerate() {
        tensors.tensor(format!("blk.{i}.weight"), &[1], GgmlType::F32, value);
    }
    fs::write(dir.join("tensors.gguf"), tensors.build().unwrap()).unwrap();
    let keys = |add: u32| {
        let mut b = GgufBuilder::new(Ctx::V3_LE);
        for i in 0..N {
            b.kv(format!("key.{i}"), i + add);
        }
        b.build().unwrap()
    };
    fs::write(dir.join("a.gguf"), keys(0)).unwrap();
    fs::write(dir.join("a2.gguf"), keys(0)).unwrap();
    fs::write(dir.join("b.gguf"), keys(1)).unwrap();
    let lines = |args: &[&str], expected_code: i32| {
        let out = common::limited(args, &dir, 512, 120).output().unwrap();
        let err = common::text(&out.stderr);
        assert_eq!(out.status.code(), Some(expected_code), "{args:?}: {err}");
        let text = common::text(&out.stdout);
        let count = text.lines().count();
        (text, count)
    };
    let (text, count) = lines(&["hash", "tensors.gguf"], 0);
    assert_eq!(count, N as usize + 1);
    assert!(text.starts_with("xxh64     "), "{}", &text[..100]);
    assert!(text.contains("  tensors.gguf:blk.999999.weight\n"));
    fs::write(dir.join("tensors.manifest"), text).unwrap();
    let (text, count) = lines(&["hash", "--check", "tensors.manifest", "tensors.gguf"], 0);
    assert_eq!(count, N as usize + 4);
    assert!(text.ends_with("\nVerification results for tensors.manifest - Success\n"));
    let (text, count) = lines(&["diff", "a.gguf", "b.gguf"], 1);
    assert_eq!(count, N as usize);
    assert!(
        text.starts_with("key changed    key.0: uint32 0 -> uint32 1\n"),
        "{}",
        &text[..100]
    );
    let (text, _) = lines(&["diff", "--json", "a.gguf", "b.gguf"], 1);
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["keys"].as_array().map(Vec::len), Some(N as usize));
    assert_eq!(doc["equal"], false);
    let (text, _) = lines(&["diff", "a.gguf", "a2.gguf"], 0);
    assert_eq!(text, "");
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

/// A header whose first key is `general.name`, a string declaring `declared` bytes, in a
/// sparse file `len` bytes long (4 KiB of it written).
fn long_string(dir: &Path, name: &str, declared: u64, len: u64) -> PathBuf {
    let mut bytes = b"GGUF".to_vec();
    for n in [3u32.to_le_bytes().to_vec(), 0u64.to_le_bytes().to_vec()] {
        bytes.extend(n);
    }
    bytes.extend(1u64.to_le_bytes());
    bytes.extend(12u64.to_le_bytes());
    bytes.extend(b"general.name");
    bytes.extend(8u32.to_le_bytes());
    bytes.extend(declared.to_le_bytes());
    bytes.resize(4096, b'x');
    let path = dir.join(name);
    fs::write(&path, &bytes).unwrap();
    let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(len).unwrap();
    path
}

/// Item 10: one cap on the header read into memory, 256 MiB from every source unless
/// `gguf --max-header BYTES` sets it. A 3 GB string in a 3 GB sparse file is refused with
/// the construct and the flag named, exit 2, by every command that reads headers (before the
/// fix: each read the 3 GB, 4.2 GB of memory, or "out of memory" under this limit).
#[test]
fn one_header_cap_for_every_source() {
    let dir = common::scratch("bounds-header-cap");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    fs::create_dir(dir.join("scan")).unwrap();
    long_string(&dir, "scan/big.gguf", 3_000_000_000, 3_000_100_000);
    let refused = |limit: u64| {
        format!(
            "offset 0x30 (48): kv[0] \"general.name\": the header is larger than {limit} bytes, \
             the most read into memory (raise it with --max-header BYTES)"
        )
    };
    let (code, out) = run_limited(
        &["dump", "--summary", "scan/big.gguf"],
        &dir,
        768,
        60,
        false,
    );
    assert_eq!(code, 2, "{out}");
    assert!(out.contains(&refused(268435456)), "{out}");
    // The other readers under a 1 MiB cap, which reads less of the sparse file.
    for args in [
        &["check", "scan/big.gguf"][..],
        &["map", "scan/big.gguf"],
        &["snapshot", "scan/big.gguf"],
        &["diff", "scan/big.gguf", "scan/big.gguf"],
        &["hash", "scan/big.gguf"],
        &["tensor", "scan/big.gguf", "t"],
        &["stats", "scan/big.gguf"],
        &["edit", "scan/big.gguf", "-o", "out.gguf"],
        &["scan", "scan"],
    ] {
        let args = [&["--max-header", "1048576"], args].concat();
        let (code, out) = run_limited(&args, &dir, 768, 60, false);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(out.contains(&refused(1 << 20)), "{args:?}: {out}");
        assert!(out.contains("big.gguf"), "{args:?}: {out}");
    }

    // The flag sets the cap both ways, for a file and for a stream (the Llama SPM header is
    // 723,872 bytes).
    let spm = common::root().join("tests/corpus/ggml-vocab-llama-spm.gguf");
    let spm = spm.to_str().unwrap();
    let (code, out) = run_limited(
        &["--max-header", "500000", "dump", spm],
        &dir,
        768,
        60,
        true,
    );
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("the header is larger than 500000 bytes"),
        "{out}"
    );
    let (code, out) = run_limited(
        &["dump", spm, "--max-header", "1000000"],
        &dir,
        768,
        60,
        true,
    );
    assert_eq!(code, 0, "{out}");
    let piped = |limit: &str| {
        let script = format!("cat {spm} | \"$0\" --max-header {limit} dump -");
        let out = Command::new("sh")
            .args(["-c", &script])
            .arg(common::bin())
            .output()
            .unwrap();
        (out.status.code().unwrap(), common::text(&out.stderr))
    };
    let (code, err) = piped("500000");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("-: offset 0x"), "{err}");
    assert!(
        err.contains("the header is larger than 500000 bytes"),
        "{err}"
    );
    assert_eq!(piped("1000000").0, 0);

    // A length past the end of the file itself is the file's error (exit 1), its figures
    // counted to the end of the file, not to the cap: 4 MiB - 56 bytes left, not 1 MiB - 56.
    long_string(&dir, "past.gguf", 1 << 40, 4 << 20);
    let (code, out) = run_limited(
        &["--max-header", "1048576", "dump", "past.gguf"],
        &dir,
        768,
        60,
        false,
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("string length 1099511627776 exceeds the 4194248 bytes left"),
        "{out}"
    );
}

/// Item 11: inputs a command holds whole (a manifest, a `--set-file` value, text to tokenize,
/// the file `mutate` breaks, a streamed `edit`, `template --messages`, `edit --chat-template`)
/// are read up to the `--max-header` cap, so
/// `/dev/zero` and a FIFO fed from it end with an error (before the fix: each grew until
/// memory ran out, 7–18 GB, or "out of memory" under this limit).
#[test]
fn inputs_held_whole_are_bounded() {
    let dir = common::scratch("bounds-whole");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let model = common::root().join("tests/conformance/cases/llama-8-tokens.gguf");
    let m = model.to_str().unwrap();
    let fifo = dir.join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let too_long = |limit: u64| format!("larger than {limit} bytes, the most read into memory");
    let with_template = GgufBuilder::new(Ctx::V3_LE)
        .kv("tokenizer.chat_template", "{{ messages }}")
        .build()
        .unwrap();
    fs::write(dir.join("t.gguf"), with_template).unwrap();
    // One at the default cap, the rest at 1 MiB (cheaper to reach).
    let (code, out) = run_limited(&["mutate", "--list", "/dev/zero"], &dir, 768, 60, false);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains(&too_long(268435456)), "{out}");
    let key = "general.name=/dev/zero";
    for (args, expected, stdin_zero) in [
        (&["hash", "--check", "/dev/zero", m][..], 5, false),
        (&["mutate", "--list", "/dev/zero"], 2, false),
        (
            &["mutate", "/dev/zero", "--rule", "duplicate-key", "-o", "x"],
            2,
            false,
        ),
        (&["edit", "/dev/zero", "-o", "x"], 2, false),
        (&["edit", "-", "-o", "x"], 2, true),
        (&["edit", m, "--set-file", key, "-o", "x"], 2, false),
        (&["tokenize", m, "-f", "/dev/zero"], 2, false),
        (&["tokenize", m, "--stdin"], 2, true),
        (&["mutate", "--list", "fifo"], 2, false),
        (&["edit", "fifo", "-o", "x"], 2, false),
        // (before: read whole, 1 GB and on under a 2 GB limit)
        (
            &["template", "t.gguf", "--render", "--messages", "/dev/zero"],
            2,
            false,
        ),
        (
            &["template", "t.gguf", "--render", "--messages", "-"],
            2,
            true,
        ),
        (
            &["edit", m, "--chat-template", "/dev/zero", "-o", "x"],
            2,
            false,
        ),
        (
            &["edit", m, "--chat-template-config", "/dev/zero", "-o", "x"],
            2,
            false,
        ),
    ] {
        let args = [&["--max-header", "1048576"], args].concat();
        // A writer for the FIFO, ended with the run.
        let mut writer = args.contains(&"fifo").then(|| {
            Command::new("sh")
                .arg("-c")
                .arg("exec cat /dev/zero > fifo")
                .current_dir(&dir)
                .spawn()
                .unwrap()
        });
        let mut command = common::limited(&args, &dir, 768, 60);
        if stdin_zero {
            command.stdin(fs::File::open("/dev/zero").unwrap());
        }
        let out = command.output().unwrap();
        if let Some(writer) = writer.as_mut() {
            let _ = writer.kill();
            let _ = writer.wait();
        }
        let text = format!("{}{}", common::text(&out.stdout), common::text(&out.stderr));
        assert_eq!(out.status.code(), Some(expected), "{args:?}: {text}");
        assert!(text.contains(&too_long(1 << 20)), "{args:?}: {text}");
    }
    assert!(!dir.join("x").exists());
}

/// Item 11: `hash --check` looks each tensor up in the manifest by type and name: 30,000
/// tensors against their 30,001-line manifest finish inside an 8 s guard (before the fix: a
/// linear search per tensor; 40,000 took 27.6 s, a million would take hours).
#[test]
fn hash_check_is_linear_in_the_manifest() {
    let dir = common::scratch("bounds-manifest");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let mut b = GgufBuilder::new(Ctx::V3_LE);
    for i in 0..30_000 {
        b.tensor(format!("t{i}"), &[1], GgmlType::F32, &[1, 2, 3, 4]);
    }
    fs::write(dir.join("many.gguf"), b.build().unwrap()).unwrap();
    let out = common::gguf(&["hash", "--sha256", "many.gguf"], &dir);
    assert!(out.status.success());
    fs::write(dir.join("many.manifest"), &out.stdout).unwrap();
    let args = ["hash", "--check", "many.manifest", "many.gguf"];
    let (code, out) = run_limited(&args, &dir, 1024, 8, false);
    assert_eq!(code, 0, "{}", &out[out.len().saturating_sub(300)..]);
    assert!(
        out.ends_with("Verification results for many.manifest - Success\n"),
        "{}",
        &out[out.len() - 100..]
    );
}

/// Item 14: `map --html` writes at most `--max-page` bytes (128 MiB by default): an array
/// of alternating bytes, one row per element, gives a page 50 times the header, refused
/// before it is built past the limit, nothing written (before the fix: a 4 MB header gave a
/// 211 MB page, a million tensor infos one no browser opens, exit 0). The limit counts the
/// page exactly: the Llama SPM page is 3,507,131 bytes.
#[test]
fn map_html_pages_are_bounded() {
    let dir = common::scratch("bounds-page");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let n = 100_000u64;
    let mut bytes = b"GGUF".to_vec();
    bytes.extend(3u32.to_le_bytes());
    bytes.extend(0u64.to_le_bytes());
    bytes.extend(1u64.to_le_bytes());
    bytes.extend(1u64.to_le_bytes());
    bytes.push(b'a');
    bytes.extend(9u32.to_le_bytes()); // an array
    bytes.extend(0u32.to_le_bytes()); // of u8
    bytes.extend(n.to_le_bytes());
    bytes.extend((0..n).map(|i| (i % 2) as u8));
    fs::write(dir.join("alt.gguf"), &bytes).unwrap();
    let args = [
        "map",
        "alt.gguf",
        "--html",
        "alt.html",
        "--max-page",
        "1000000",
    ];
    let (code, out) = run_limited(&args, &dir, 768, 60, false);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains(
            "the page would be larger than 1000000 bytes (raise the limit with --max-page BYTES"
        ),
        "{out}"
    );
    assert!(!dir.join("alt.html").exists());

    let spm = common::root().join("tests/corpus/ggml-vocab-llama-spm.gguf");
    let spm = spm.to_str().unwrap();
    for (limit, expected) in [("3507131", 0), ("3507130", 2)] {
        let args = ["map", spm, "--html", "spm.html", "--max-page", limit];
        let (code, out) = run_limited(&args, &dir, 768, 60, false);
        assert_eq!(code, expected, "{limit}: {out}");
    }
    assert_eq!(fs::metadata(dir.join("spm.html")).unwrap().len(), 3507131);
}
