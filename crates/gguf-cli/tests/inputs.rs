//! Inputs that are not regular files: standard input (`-`), `/dev/stdin`, pipes, devices and
//! directories; and a file truncated while its dump is being printed.

mod common;

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

const FILE: &str = "tests/corpus/ggml-vocab-llama-spm.gguf";

/// Waits at most 20 s for `child`, killing it after that.
fn wait_bounded(mut child: Child) -> Output {
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("still running after 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

// Item 10.
#[test]
fn a_pipe_gives_the_same_output_as_the_file() {
    let bytes = std::fs::read(common::root().join(FILE)).unwrap();
    for args in [
        &["dump"][..],
        &["dump", "--json"],
        &["dump", "--summary"],
        &["dump", "--format", "gguf-py"],
        &["check"],
    ] {
        let from_file = common::command(&[args, &[FILE]].concat()).output().unwrap();
        for stdin_name in ["-", "/dev/stdin"] {
            let piped = common::with_stdin(&[args, &[stdin_name]].concat(), &bytes);
            assert_eq!(
                piped.status.code(),
                from_file.status.code(),
                "{args:?} {stdin_name}"
            );
            assert!(
                piped.status.success(),
                "{args:?} {stdin_name}: {}",
                String::from_utf8_lossy(&piped.stderr)
            );
            if args != ["dump", "--format", "gguf-py"] && args != ["check"] {
                assert_eq!(piped.stdout, from_file.stdout, "{args:?} {stdin_name}");
            }
        }
    }
}

#[test]
fn standard_input_from_a_file_at_an_offset_reads_what_remains_as_a_pipe_would() {
    let bytes = std::fs::read(common::root().join(FILE)).unwrap();
    let dir = common::scratch("stdin-offset");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    // What a shell or `head -c` consumed before the command runs, then the model.
    let junk = 1000;
    let path = dir.join("prefixed.gguf");
    std::fs::write(&path, [&vec![0xab; junk][..], &bytes].concat()).unwrap();
    let whole = std::fs::read(&path).unwrap();
    // At the model (accepted), inside its magic, and inside its tokens (both rejected).
    for offset in [junk, junk + 2, junk + bytes.len() / 2] {
        for args in [&["check", "-"][..], &["dump", "--json", "-"]] {
            let mut file = std::fs::File::open(&path).unwrap();
            std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(offset as u64)).unwrap();
            let from_file = common::command(args)
                .stdin(Stdio::from(file))
                .output()
                .unwrap();
            let piped = common::with_stdin(args, &whole[offset..]);
            assert_eq!(
                from_file.status.code(),
                piped.status.code(),
                "{args:?} at {offset}"
            );
            assert_eq!(from_file.stdout, piped.stdout, "{args:?} at {offset}");
            assert_eq!(from_file.stderr, piped.stderr, "{args:?} at {offset}");
        }
    }
    // Opened for writing only, it cannot be read: exit 2, not "ends inside the magic".
    let write_only = std::fs::File::options().append(true).open(&path).unwrap();
    let out = common::command(&["check", "-"])
        .stdin(Stdio::from(write_only))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", common::text(&out.stderr));
}

// Item 10.
#[test]
fn endless_devices_end_with_exit_1_and_directories_with_exit_2() {
    for device in ["/dev/zero", "/dev/urandom"] {
        for cmd in ["dump", "check"] {
            let child = common::command(&[cmd, device])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let out = wait_bounded(child);
            assert_eq!(out.status.code(), Some(1), "{cmd} {device}");
        }
    }
    let out = common::command(&["dump", "tests"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tests: is a directory"));
}

// Item 11.
#[test]
fn a_file_truncated_while_its_dump_is_printed_does_not_kill_the_reader() {
    let dir = std::env::temp_dir().join(format!("gguf-inputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let path = dir.join("model.gguf");
    std::fs::copy(common::root().join(FILE), &path).unwrap();
    let mut child = common::command(&["dump", "--json", path.to_str().unwrap()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    // Output has started: the header has been read. The pipe then fills and the writer waits.
    let mut first = [0u8; 4096];
    stdout.read_exact(&mut first).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        None,
        "killed by signal {:?}",
        status.signal()
    );
    assert!(status.success());
    let doc: serde_json::Value = serde_json::from_slice(&[&first[..], &rest].concat()).unwrap();
    assert_eq!(doc["metadata"].as_array().map(Vec::len), Some(22));
}

// Item 10: edit reads standard input too.
#[test]
fn edit_reads_standard_input_and_refuses_in_place_on_it() {
    let bytes = std::fs::read(common::root().join(FILE)).unwrap();
    let out = common::with_stdin(
        &["edit", "-", "-o", "-", "--set", "general.name=piped"],
        &bytes,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let gguf = gguf_grammar::Gguf::parse(&out.stdout).unwrap();
    assert_eq!(
        gguf.get("general.name").and_then(|v| v.as_str()),
        Some("piped")
    );
    let out = common::with_stdin(
        &["edit", "-", "--in-place", "--set", "general.name=x"],
        &bytes,
    );
    assert_eq!(out.status.code(), Some(2));
    let out = common::command(&["edit", "tests", "-o", "-", "--set", "general.name=x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a directory"));
}

#[test]
fn a_pipe_named_as_a_shard_is_checked_as_one_stream() {
    let dir = common::scratch("fifo-shard");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let fifo = dir.join("m-00001-of-00002.gguf");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let bytes = std::fs::read(common::root().join(FILE)).unwrap();
    let writer = std::thread::spawn(move || {
        // Blocks until the command opens the pipe; a reader that stops early closes it.
        let mut pipe = std::fs::File::options().write(true).open(&fifo).unwrap();
        let _ = std::io::Write::write_all(&mut pipe, &bytes);
    });
    let child = common::spawn_piped(&["check", "m-00001-of-00002.gguf"], &dir);
    let out = wait_bounded(child);
    writer.join().unwrap();
    // A set's shards are read at offsets: a pipe is not opened as one, but read as a file.
    assert_eq!(out.status.code(), Some(0), "{}", common::text(&out.stderr));
}
