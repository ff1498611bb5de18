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

/// Runs gguf with `args` in `dir`, standard input `stdin`.
fn gguf_with_stdin(args: &[&str], dir: &Path, stdin: std::process::Stdio) -> (i32, String, String) {
    let out = common::command(args)
        .current_dir(dir)
        .stdin(stdin)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        common::text(&out.stdout),
        common::text(&out.stderr),
    )
}

/// Item 19: `-` is standard input for the commands that read tensor data at offsets too
/// (`hash`, `stats`, `tensor`, `diff`, `split`, `convert-endian`) when it is redirected from a
/// file, giving what the file's path gives; from a pipe they say why not, exit 2; and `-`
/// still counts as the input for the refusal to write onto it (before the fix: "-: No such
/// file or directory" from each).
#[test]
fn dash_input_reads_tensor_data_from_a_redirected_file() {
    use std::process::Stdio;
    let dir = common::scratch("hostile-dash-input");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let bytes = fs::read(write_model(&dir, "a.gguf")).unwrap();
    let from_file = || Stdio::from(fs::File::open(dir.join("a.gguf")).unwrap());
    for args in [
        &["stats", "A"][..],
        &["tensor", "A", "b"],
        &["diff", "--data", "A", "a.gguf"],
        &["hash", "--sha256", "A"],
    ] {
        let by_path: Vec<&str> = args
            .iter()
            .map(|&a| if a == "A" { "a.gguf" } else { a })
            .collect();
        let by_dash: Vec<&str> = args
            .iter()
            .map(|&a| if a == "A" { "-" } else { a })
            .collect();
        let (code, expected, err) = gguf_with_stdin(&by_path, &dir, Stdio::null());
        assert_eq!(code, 0, "{by_path:?}: {err}");
        let (code, out, err) = gguf_with_stdin(&by_dash, &dir, from_file());
        assert_eq!(code, 0, "{by_dash:?}: {err}");
        assert_eq!(
            out.replace("  -:", "  a.gguf:")
                .replace("  -\n", "  a.gguf\n"),
            expected,
            "{by_dash:?}"
        );
    }
    let (code, _, err) = gguf_with_stdin(
        &["convert-endian", "-", "big", "-o", "be.gguf"],
        &dir,
        from_file(),
    );
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = gguf_with_stdin(
        &["convert-endian", "be.gguf", "little", "-o", "le.gguf"],
        &dir,
        Stdio::null(),
    );
    assert_eq!(code, 0, "{err}");
    same_bytes(&dir.join("le.gguf"), &bytes, "converted from - and back");
    let (code, out, err) = gguf_with_stdin(
        &["split", "--split-max-tensors", "1", "-", "q"],
        &dir,
        from_file(),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "q-00001-of-00002.gguf\nq-00002-of-00002.gguf\n");

    // The output onto the input, named by `-`: refused, the file kept.
    for args in [
        &["tensor", "-", "b", "-o", "a.gguf"][..],
        &["mutate", "-", "--rule", "duplicate-key", "-o", "a.gguf"],
    ] {
        let (code, _, err) = gguf_with_stdin(args, &dir, from_file());
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("a.gguf: is the input file"), "{args:?}: {err}");
    }
    same_bytes(&dir.join("a.gguf"), &bytes, "the input");

    // `scan -`: standard input's row, as the file's (before: "No such file or directory",
    // exit 2). `merge -` says why it cannot (before: "No such file or directory").
    let (code, expected, err) =
        gguf_with_stdin(&["scan", "--jsonl", "a.gguf"], &dir, Stdio::null());
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = gguf_with_stdin(&["scan", "--jsonl", "-"], &dir, from_file());
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.replace("\"path\": \"-\"", "\"path\": \"a.gguf\""),
        expected
    );
    let (code, _, err) = gguf_with_stdin(&["merge", "-", "m.gguf"], &dir, from_file());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("-: merge finds the other shards beside the first by its name"),
        "{err}"
    );

    // From a pipe: why not, exit 2.
    let mut cat = std::process::Command::new("cat")
        .arg(dir.join("a.gguf"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pipe = Stdio::from(cat.stdout.take().unwrap());
    let (code, _, err) = gguf_with_stdin(&["stats", "-"], &dir, pipe);
    let _ = cat.wait();
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "-: standard input is not a regular file; this command reads tensor data at offsets"
        ),
        "{err}"
    );
}

/// Item 19: `-o /dev/stdout` (or `/dev/fd/1`) into a pipe is standard output, as `-o -` is,
/// in every command that writes its data there (before the fix: "/dev/stdout: dangling
/// symbolic link", exit 2, as the link names `pipe:[N]`); convert-endian refuses it as it
/// refuses `-o -`.
#[test]
fn dev_stdout_into_a_pipe_is_standard_output() {
    let dir = common::scratch("hostile-dev-stdout");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    write_model(&dir, "a.gguf");
    for args in [
        &[
            "edit",
            "a.gguf",
            "--set",
            "general.name=string:x",
            "-o",
            "OUT",
        ][..],
        &["tensor", "a.gguf", "a", "-o", "OUT"],
        &[
            "mutate",
            "a.gguf",
            "--rule",
            "truncate-first-kv",
            "-o",
            "OUT",
        ],
        &["map", "a.gguf", "--html", "OUT"],
    ] {
        let with = |out: &str| -> Vec<String> {
            args.iter()
                .map(|&a| if a == "OUT" { out } else { a }.to_string())
                .collect()
        };
        let expected = common::gguf(&with("-"), &dir);
        assert_eq!(expected.status.code(), Some(0), "{args:?}");
        for out in ["/dev/stdout", "/dev/fd/1"] {
            let got = common::gguf(&with(out), &dir);
            assert_eq!(
                got.status.code(),
                Some(0),
                "{out} {args:?}: {}",
                common::text(&got.stderr)
            );
            assert!(
                got.stdout == expected.stdout,
                "{out} {args:?}: output differs"
            );
        }
    }
    let (code, _, err) = common::outcome(common::gguf(
        &["convert-endian", "a.gguf", "big", "-o", "/dev/stdout"],
        &dir,
    ));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("-o /dev/stdout: convert-endian reads back the file it writes"),
        "{err}"
    );
}

/// A web server on loopback that answers every request with `respond(first, last)` of its
/// `Range: bytes=FIRST-LAST` (a whole raw response); its base URL. It serves until the test
/// process ends.
fn serve(respond: impl Fn(u64, u64) -> Vec<u8> + Send + 'static) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/model.gguf", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut range = (0, 0);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(spec) = lower.strip_prefix("range: bytes=") {
                    let (a, b) = spec.trim().split_once('-').unwrap();
                    range = (a.parse().unwrap(), b.parse().unwrap());
                }
            }
            let _ = stream.write_all(&respond(range.0, range.1));
        }
    });
    url
}

/// A 206 answer with `body` and the given `Content-Range` value.
fn partial(content_range: &str, body: &[u8]) -> Vec<u8> {
    let mut answer = format!(
        "HTTP/1.1 206 Partial Content\r\nContent-Range: {content_range}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(body);
    answer
}

/// Item 19: a server's `Content-Range` is checked against what it sends. A total smaller than
/// the bytes sent, a short 206 of a file said to be 100 GB, and a size that changes between
/// requests are transfer errors, exit 2 (before the fix: the first was accepted, exit 0, the
/// second reported the file as invalid, exit 1).
#[test]
fn a_servers_content_range_is_checked() {
    let spm = fs::read(common::root().join("tests/corpus/ggml-vocab-llama-spm.gguf")).unwrap();
    let small = model();
    let slice = |bytes: &[u8], a: u64, b: u64| {
        let b = b.min(bytes.len() as u64 - 1);
        bytes[a as usize..=b as usize].to_vec()
    };

    let lying = serve(move |a, b| {
        let body = slice(&small, a, b);
        partial(
            &format!("bytes {a}-{}/100", a + body.len() as u64 - 1),
            &body,
        )
    });
    let short = serve(move |a, _| {
        let body = slice(&spm, a, a + 999);
        partial(&format!("bytes {a}-{}/100000000000", a + 999), &body)
    });
    // The Llama 3 header (7.8 MB) takes more than one request.
    let bpe = fs::read(common::root().join("tests/corpus/ggml-vocab-llama-bpe.gguf")).unwrap();
    let calls = std::sync::atomic::AtomicU64::new(0);
    let changing = serve(move |a, b| {
        let n = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let body = slice(&bpe, a, b);
        let total = bpe.len() as u64 + n;
        partial(
            &format!("bytes {a}-{}/{total}", a + body.len() as u64 - 1),
            &body,
        )
    });
    for (url, expected) in [
        (
            &lying,
            "Content-Range bytes 0-287/100: a total smaller than the bytes sent",
        ),
        (
            &short,
            "asked for bytes 0-1048575 of a 100000000000-byte file, the server sent 0-999 only",
        ),
        (
            &changing,
            "the file's size changed from 7818140 to 7818141 bytes between requests",
        ),
    ] {
        let out = common::limited(&["dump", url], Path::new("/"), 1024, 60)
            .output()
            .unwrap();
        let err = common::text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{url}: {err}");
        assert!(err.contains(expected), "{url}: {err}");
    }
}

/// Item 19: a refusal to replace a hard-linked or read-only destination suggests
/// `--break-links` or `--force` only to `edit`, the command that has them; the others
/// (`atomic::message`) name the path once and no flag (before the fix, in a build of this
/// session's start: "/x: /x: has 2 hard links; ... (allow with --break-links)" from `tensor`
/// and `map`, which reject that flag).
#[test]
fn refusals_suggest_only_flags_the_command_has() {
    use std::os::unix::fs::PermissionsExt;
    let dir = common::scratch("hostile-flag-hints");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    write_model(&dir, "a.gguf");
    fs::write(dir.join("linked.out"), "x").unwrap();
    fs::hard_link(dir.join("linked.out"), dir.join("other.out")).unwrap();
    fs::write(dir.join("ro.out"), "y").unwrap();
    fs::set_permissions(dir.join("ro.out"), fs::Permissions::from_mode(0o444)).unwrap();
    let shown = |name: &str| {
        fs::canonicalize(dir.join(name))
            .unwrap()
            .display()
            .to_string()
    };
    for (out, refusal, flag) in [
        ("linked.out", "has 2 hard links", "--break-links"),
        ("ro.out", "is read-only", "--force"),
    ] {
        for args in [
            &["tensor", "a.gguf", "a", "-o", out][..],
            &["mutate", "a.gguf", "--rule", "duplicate-key", "-o", out],
            &["map", "a.gguf", "--html", out],
            &["convert-endian", "a.gguf", "big", "-o", out],
        ] {
            let (code, _, err) = common::outcome(common::gguf(args, &dir));
            assert_eq!(code, 2, "{args:?}: {err}");
            let expected = format!("gguf: {}: {refusal}; refusing to replace it\n", shown(out));
            assert_eq!(err, expected, "{args:?}");
        }
        let (code, _, err) = common::outcome(common::gguf(&["edit", "a.gguf", "-o", out], &dir));
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(&format!("(allow with {flag})")), "{err}");
    }
    assert_eq!(fs::read(dir.join("linked.out")).unwrap(), b"x");
    assert_eq!(fs::read(dir.join("ro.out")).unwrap(), b"y");
}

/// Item 7: a destination that is a dangling symbolic link is refused naming the link once
/// and where it points, escaped, in every command that writes a file the user names (before
/// the fix: "gguf: lnk: dangling symbolic link", the target never named, and from `edit`
/// "gguf: lnk: lnk: dangling symbolic link"; `edit`'s other refusals named the path twice
/// too).
#[test]
fn a_dangling_link_destination_is_named_with_its_target() {
    let dir = common::scratch("hostile-dangling");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    write_model(&dir, "a.gguf");
    let target = "missing/\u{1b}[2J\u{202e}.gguf";
    std::os::unix::fs::symlink(target, dir.join("lnk.out")).unwrap();
    for args in [
        &["tensor", "a.gguf", "a", "-o", "lnk.out"][..],
        &[
            "mutate",
            "a.gguf",
            "--rule",
            "duplicate-key",
            "-o",
            "lnk.out",
        ],
        &["map", "a.gguf", "--html", "lnk.out"],
        &["convert-endian", "a.gguf", "big", "-o", "lnk.out"],
        &["edit", "a.gguf", "--set", "a.b=u32:1", "-o", "lnk.out"],
    ] {
        let (code, _, err) = common::outcome(common::gguf(args, &dir));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(
            err,
            "gguf: lnk.out: dangling symbolic link to missing/\\e[2J\\u{202e}.gguf; nothing written\n",
            "{args:?}"
        );
    }
    assert!(!dir.join("missing").exists());
    fs::write(dir.join("linked.out"), "x").unwrap();
    fs::hard_link(dir.join("linked.out"), dir.join("other.out")).unwrap();
    let (code, _, err) =
        common::outcome(common::gguf(&["edit", "a.gguf", "-o", "linked.out"], &dir));
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.matches("linked.out").count(), 1, "{err}");
}

/// Item 19: a folder `scan` cannot list is reported with the reason (before the fix:
/// "unreadable: is a directory"). Run as a user, the folder is mode 000; as root, which reads
/// it anyway, it belongs to a user that `unshare -r`'s namespace does not map.
#[test]
fn scan_says_why_a_folder_cannot_be_listed() {
    use std::os::unix::fs::PermissionsExt;
    let dir = common::scratch("hostile-unlisted");
    let inner = dir.join("inner");
    fs::create_dir(&inner).unwrap();
    fs::set_permissions(&inner, fs::Permissions::from_mode(0o000)).unwrap();
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let reset = || fs::set_permissions(&inner, fs::Permissions::from_mode(0o755)).unwrap();
    let out = if fs::read_dir(&inner).is_err() {
        common::gguf(&["scan", "inner"], &dir)
    } else {
        std::os::unix::fs::chown(&inner, Some(12345), None).unwrap();
        let mut command = std::process::Command::new("unshare");
        command.arg("-r").arg(common::bin()).args(["scan", "inner"]);
        let out = command.current_dir(&dir).output();
        match out {
            Ok(out) if !common::text(&out.stderr).contains("unshare:") => out,
            _ => {
                reset();
                eprintln!("skipped: root without user namespaces");
                return;
            }
        }
    };
    reset();
    let (code, text, err) = common::outcome(out);
    assert_eq!(code, 2, "{text}{err}");
    assert!(
        text.contains("unreadable: cannot list the folder: Permission denied"),
        "{text}"
    );
}
