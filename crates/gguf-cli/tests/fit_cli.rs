//! `gguf fit` as a command: what it writes and how it exits.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};

/// `gguf fit --json … | head -c 10`: the reader closing the pipe is not a failure and not a
/// panic (before the fix: "failed printing to stdout: Broken pipe", exit 101). The output
/// (200 context sizes, 132 kB) is larger than a pipe's buffer, so the write meets the
/// closed pipe whatever the timing.
#[test]
fn a_closed_pipe_is_not_a_failure() {
    let model = common::root().join("tests/conformance/cases/llama-8-tokens.gguf");
    let sizes: Vec<String> = (1..=200).map(|i| (256 * i).to_string()).collect();
    let mut child = Command::new(common::bin())
        .args(["fit", "--json", "--ctx-size", &sizes.join(",")])
        .arg(&model)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(&first, b"[{\"archite");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}
