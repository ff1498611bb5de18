//! Shared by the tests of the `gguf` command: the repository's test helpers (the root's
//! `tests/common`, included by path so that there is one copy of them; the test data stays
//! in the root `tests/` folder, which the library's tests and the fuzz targets read too) and
//! the ways to run the binary under test.
#![allow(dead_code)]

#[path = "../../../../tests/common/mod.rs"]
mod repository;
pub use repository::*;

use std::path::PathBuf;

/// The binary under test: this build's, or `$GGUF_BIN` (to show that another build, such as
/// one from before a fix, fails the tests).
pub fn bin() -> PathBuf {
    let built = env!("CARGO_BIN_EXE_gguf");
    std::env::var_os("GGUF_BIN").map_or(built.into(), PathBuf::from)
}

/// The binary under test with `args`, to run in the repository root (paths in `args`
/// relative to it) unless told otherwise.
pub fn command<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> std::process::Command {
    let mut command = std::process::Command::new(bin());
    command.args(args).current_dir(root());
    command
}

/// Runs the binary under test with `args` in the repository root.
pub fn gguf_in_root<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> std::process::Output {
    command(args).output().unwrap()
}

/// Runs the binary under test with `args` in `cwd`.
pub fn gguf<S: AsRef<std::ffi::OsStr>>(args: &[S], cwd: &std::path::Path) -> std::process::Output {
    command(args).current_dir(cwd).output().unwrap()
}

/// The binary under test with `args` in `cwd`, under an address-space limit of `mib` MiB
/// (`prlimit`) and a time limit of `secs` seconds (`timeout`, exit 124), standard input empty
/// and standard output and error piped: a command that allocates by an untrusted count or
/// never ends fails its test instead of exhausting the machine.
pub fn limited(args: &[&str], cwd: &std::path::Path, mib: u64, secs: u64) -> std::process::Command {
    use std::process::Stdio;
    let mut command = std::process::Command::new("timeout");
    command
        .arg(secs.to_string())
        .arg("prlimit")
        .arg(format!("--as={}", mib << 20))
        .arg("--")
        .arg(bin())
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Output bytes as text, invalid UTF-8 replaced.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A run's exit code (panics if a signal ended it), standard output and standard error.
pub fn outcome(out: std::process::Output) -> (i32, String, String) {
    let code = out.status.code().expect("ended by a signal");
    (code, text(&out.stdout), text(&out.stderr))
}

/// Starts the binary under test with `args` in `cwd`, its standard output and error piped.
pub fn spawn_piped(args: &[&str], cwd: &std::path::Path) -> std::process::Child {
    use std::process::Stdio;
    command(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs the binary under test with `args` and `input` on standard input (a pipe).
pub fn with_stdin(args: &[&str], input: &[u8]) -> std::process::Output {
    let mut child = command(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // A writer thread: the reader may stop early (an error, or only the header needed),
    // closing the pipe.
    let writer = std::thread::spawn(move || {
        let _ = std::io::Write::write_all(&mut stdin, &input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// A five-tensor model split two tensors a shard: `m-00001-of-00003.gguf` … in `dir`.
pub fn three_shards(dir: &std::path::Path) -> Vec<PathBuf> {
    use gguf_grammar::{write::GgufBuilder, Ctx, GgmlType};
    use gguf_tools::set::split::{split, SplitLimit, SplitOptions};
    let w = [1u8; 64];
    let mut b = GgufBuilder::new(Ctx::V3_LE);
    b.kv("general.architecture", "llama")
        .kv("general.name", "five");
    for i in 0..5 {
        b.tensor(format!("t{i}"), &[16], GgmlType::F32, &w);
    }
    std::fs::write(dir.join("m.gguf"), b.build().unwrap()).unwrap();
    let options = SplitOptions {
        limit: SplitLimit::Tensors(2),
        no_tensor_first_split: false,
    };
    split(&dir.join("m.gguf"), &dir.join("m"), &options).unwrap()
}
