//! Hostile names and paths (issue 25): shard names with absurd counts, an output onto its
//! own input, links and special files where a command reads or writes by a name it chose.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gguf_grammar::write::GgufBuilder;
use gguf_grammar::{Ctx, GgmlType};

/// A small valid model.
fn model() -> Vec<u8> {
    let w = [0u8; 64];
    GgufBuilder::new(Ctx::V3_LE)
        .kv("general.architecture", "llama")
        .tensor("a", &[16], GgmlType::F32, &w)
        .tensor("b", &[16], GgmlType::F32, &w)
        .build()
        .unwrap()
}

fn write_model(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, model()).unwrap();
    path
}

/// Runs gguf with `args` in `dir` under a 2 GiB address-space limit (and a 10-minute guard).
fn gguf_limited(args: &[&str], dir: &Path) -> (i32, String, String) {
    let out = common::limited(args, dir, 2048, 600).output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    (code, common::text(&out.stdout), common::text(&out.stderr))
}

/// `split.count` is a u16 in llama.cpp: a name claiming more shards is a file of its own,
/// never a count to allocate by. Every command that finds siblings by name reads it as one
/// file (before the fix: "capacity overflow" panics, and aborts allocating gigabytes).
#[test]
fn a_shard_count_beyond_u16_is_not_a_shard_set() {
    let dir = common::scratch("hostile-shard-count");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    for name in [
        "m-00001-of-18446744073709551615.gguf",
        "m-00001-of-99999999.gguf",
        "m-00001-of-65536.gguf",
    ] {
        let path = write_model(&dir, name);
        let path = path.to_str().unwrap();
        for args in [
            &["dump", path][..],
            &["dump", "--summary", path],
            &["check", path],
            &["map", path],
            &["diff", path, path],
        ] {
            let (code, out, err) = gguf_limited(args, &dir);
            assert_eq!(code, 0, "{args:?}: exit {code}\n{out}\n{err}");
            assert!(!err.contains("shard of"), "{args:?}: {err}");
            assert!(!err.contains("panicked"), "{args:?}: {err}");
        }
        fs::remove_file(path).unwrap();
    }
    for name in [
        "m-00001-of-18446744073709551615.gguf",
        "n-00001-of-99999999.gguf",
    ] {
        write_model(&dir, name);
    }
    let (code, out, err) = gguf_limited(&["scan", dir.to_str().unwrap()], &dir);
    assert_eq!(code, 0, "scan: exit {code}\n{out}\n{err}");
    assert!(!err.contains("panicked"), "scan: {err}");
}

/// A name within the u16 count whose siblings are missing: `check` reports the missing
/// shards, at most [`MAX_PER_KIND`](gguf_grammar::validate::MAX_PER_KIND) of them and then
/// one "and N more", over the whole set (before the fix: one line per missing shard, and a
/// quadratic dedupe).
#[test]
fn check_of_a_lone_shard_reports_missing_shards_boundedly() {
    let dir = common::scratch("hostile-lone-shard");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let path = write_model(&dir, "q-00001-of-03000.gguf");
    let (code, out, err) = gguf_limited(&["check", path.to_str().unwrap()], &dir);
    assert_eq!(code, 1, "{out}\n{err}");
    let missing = out
        .lines()
        .filter(|l| l.contains("set-missing-shard"))
        .count();
    assert!(
        (100..=101).contains(&missing),
        "{missing} missing-shard lines:\n{}",
        &out[..out.len().min(4000)]
    );
    assert!(out.contains("and 2899 more"), "{out}");
    assert!(!err.contains("No such file"), "{err}");

    // The largest count llama.cpp can write: bounded in time as in output.
    fs::remove_file(&path).unwrap();
    let path = write_model(&dir, "q-00001-of-65535.gguf");
    let started = Instant::now();
    let (code, out, err) = gguf_limited(&["check", path.to_str().unwrap()], &dir);
    let took = started.elapsed();
    assert_eq!(code, 1, "{err}");
    assert!(out.lines().count() < 200, "{} lines", out.lines().count());
    assert!(took < Duration::from_secs(60), "check took {took:?}");
}

fn same_bytes(path: &Path, expected: &[u8], what: &str) {
    assert_eq!(
        fs::read(path).unwrap(),
        expected,
        "{what}: the input changed"
    );
}

/// `-o` naming the input, directly, by another spelling or through a link: refused (exit 2,
/// the path named) and the input untouched (before the fix: replaced, exit 0).
#[test]
fn an_output_onto_its_own_input_is_refused() {
    let dir = common::scratch("hostile-onto-input");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let input = write_model(&dir, "a.gguf");
    let bytes = fs::read(&input).unwrap();
    std::os::unix::fs::symlink("a.gguf", dir.join("link.npy")).unwrap();
    for args in [
        &["tensor", "a.gguf", "a", "-o", "a.gguf"][..],
        &["tensor", "a.gguf", "a", "-o", "./a.gguf"],
        &["tensor", "a.gguf", "a", "--format", "npy", "-o", "link.npy"],
        &[
            "mutate",
            "a.gguf",
            "--rule",
            "truncate-first-kv",
            "-o",
            "a.gguf",
        ],
        &[
            "mutate",
            "a.gguf",
            "--rule",
            "truncate-first-kv",
            "-o",
            "link.npy",
        ],
        &["map", "a.gguf", "--html", "link.npy"],
    ] {
        let (code, _, err) = common::outcome(common::gguf(args, &dir));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("is the input file"), "{args:?}: {err}");
        assert!(err.contains(args[args.len() - 1]), "{args:?}: {err}");
        same_bytes(&input, &bytes, &format!("{args:?}"));
    }

    // A split whose second shard has the input's name: refused before any shard is written.
    let input = write_model(&dir, "q-00002-of-00002.gguf");
    let args = [
        "split",
        "--split-max-tensors",
        "1",
        "q-00002-of-00002.gguf",
        "q",
    ];
    let (code, out, err) = common::outcome(common::gguf(&args, &dir));
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("q-00002-of-00002.gguf: is the input file"),
        "{err}"
    );
    same_bytes(&input, &bytes, "split");
    assert!(!dir.join("q-00001-of-00002.gguf").exists());
}

/// Runs gguf with `args` in `dir`, killed after 60 s (a read of a FIFO would block forever).
fn gguf_timed(args: &[&str], dir: &Path) -> (i32, String, String) {
    let out = std::process::Command::new("timeout")
        .arg("60")
        .arg(common::bin())
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    (code, common::text(&out.stdout), common::text(&out.stderr))
}

/// `snapshot --check` reads only regular files from the snapshot folder, and a bounded
/// amount: a link (to a secret, to /dev/zero), a FIFO, a device or an oversized file is
/// refused, exit 2, nothing of it printed (before the fix: printed, read without end, hung).
#[test]
fn snapshot_check_reads_no_link_or_special_file() {
    let dir = common::scratch("hostile-snap-links");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let snaps = dir.join("s");
    fs::create_dir(&snaps).unwrap();
    fs::write(dir.join("secret"), "CI_TOKEN=hunter2\n").unwrap();
    let secret = dir.join("secret");
    type Make<'a> = &'a dyn Fn(&Path);
    let cases: [(&str, Make); 5] = [
        ("linked", &|p| {
            std::os::unix::fs::symlink(&secret, p).unwrap()
        }),
        ("zero", &|p| {
            std::os::unix::fs::symlink("/dev/zero", p).unwrap()
        }),
        ("null", &|p| {
            std::os::unix::fs::symlink("/dev/null", p).unwrap()
        }),
        ("fifo", &|p| {
            let made = std::process::Command::new("mkfifo")
                .arg(p)
                .status()
                .unwrap();
            assert!(made.success());
        }),
        ("huge", &|p| {
            fs::File::create(p).unwrap().set_len(200 << 20).unwrap();
        }),
    ];
    for (name, make) in cases {
        write_model(&dir, &format!("{name}.gguf"));
        make(&snaps.join(format!("{name}.snap")));
        let file = format!("{name}.gguf");
        let (code, out, err) = gguf_timed(&["snapshot", "--check", "s", &file], &dir);
        assert_eq!(code, 2, "{name}: exit {code}\n{out}\n{err}");
        assert!(
            !out.contains("hunter2") && !err.contains("hunter2"),
            "{name}: {out}{err}"
        );
        assert!(out.len() < 10_000, "{name}: {} bytes of output", out.len());
        assert!(err.contains(&format!("s/{name}.snap: ")), "{name}: {err}");
        let (code, _, err) = gguf_timed(&["snapshot", "--check", "s", "--update", &file], &dir);
        assert_eq!(code, 2, "{name} --update: {err}");
    }
    assert_eq!(fs::read(&secret).unwrap(), b"CI_TOKEN=hunter2\n");
}

/// The stored side of a `snapshot --check` diff is escaped as the file's side is (before the
/// fix: OSC, CSI, bidi and C1 controls from the `.snap` reached the terminal raw).
#[test]
fn snapshot_check_escapes_the_stored_side() {
    let dir = common::scratch("hostile-snap-escape");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let snaps = dir.join("s");
    fs::create_dir(&snaps).unwrap();
    write_model(&dir, "e.gguf");
    let (code, text, err) = common::outcome(common::gguf(&["snapshot", "e.gguf"], &dir));
    assert_eq!(code, 0, "{err}");
    let hostile = "evil \x1b]0;title\x07 \x1b[2J \u{202e} \u{9b}31m \0 back\\slash";
    fs::write(snaps.join("e.snap"), format!("{text}{hostile}\n")).unwrap();
    let (code, out, err) =
        common::outcome(common::gguf(&["snapshot", "--check", "s", "e.gguf"], &dir));
    assert_eq!(code, 1, "{err}");
    for c in ['\x1b', '\x07', '\u{202e}', '\u{9b}', '\0'] {
        assert!(!out.contains(c), "raw {c:?} in {out:?}");
    }
    assert!(
        out.contains("-evil \\e]0;title\\u{7} \\e[2J \\u{202e} \\u{9b}31m \\u{0} back\\slash\n"),
        "{out}"
    );
    assert!(out.starts_with("--- s/e.snap\n+++ e.gguf\n@@ "), "{out}");
}

/// `-o -` is standard output where a command writes data, never a file named `-` (before
/// the fix: a file `-` in the working folder).
#[test]
fn dash_output_is_standard_output() {
    let dir = common::scratch("hostile-dash-output");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let bytes = fs::read(write_model(&dir, "a.gguf")).unwrap();
    let (code, out, err) =
        common::outcome(common::gguf(&["tensor", "a.gguf", "a", "-o", "-"], &dir));
    assert_eq!(
        (code, out.as_str()),
        (0, "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"),
        "{err}"
    );
    let out = common::gguf(
        &["mutate", "a.gguf", "--rule", "truncate-first-kv", "-o", "-"],
        &dir,
    );
    assert_eq!(out.status.code(), Some(0), "{}", common::text(&out.stderr));
    assert!(out.stdout.len() < bytes.len() && bytes.starts_with(&out.stdout));
    let (code, out, err) = common::outcome(common::gguf(&["map", "a.gguf", "--html", "-"], &dir));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("<!DOCTYPE html>") || out.starts_with("<!doctype html>"),
        "{}",
        &out[..out.len().min(200)]
    );
    let (code, _, err) = common::outcome(common::gguf(
        &["convert-endian", "a.gguf", "big", "-o", "-"],
        &dir,
    ));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("-o -"), "{err}");
    assert!(!dir.join("-").exists(), "a file named - was written");
}
