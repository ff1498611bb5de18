//! A source file truncated by another process while its tensor data is being copied: the
//! copy fails with a located error (exit 1) instead of a SIGBUS, and nothing is replaced.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use gguf_grammar::file_range::RangeError;
use gguf_grammar::write::{GgufBuilder, WriteError};
use gguf_grammar::{Ctx, GgmlType};
use gguf_tools::edit::{replace_atomically, write_atomically, EditError, Replace};
use gguf_tools::source::Source;

/// A model with `mib` MiB of f32 tensor data: one tensor of rows of 1024 values.
fn model(mib: usize) -> Vec<u8> {
    let data: Vec<u8> = (0..mib << 20).map(|i| (i % 251) as u8).collect();
    GgufBuilder::new(Ctx::V3_LE)
        .set("general.architecture", "llama")
        .tensor("big", &[1024, (mib << 8) as u64], GgmlType::F32, &data)
        .build()
        .unwrap()
}

/// A scratch folder (removed when dropped) with `model.gguf` of `mib` MiB of data and
/// `target.gguf` holding "the old target".
fn model_and_target(test: &str, mib: usize) -> (common::RemoveOnDrop, PathBuf, PathBuf) {
    let dir = common::scratch(test);
    let (src, target) = (dir.join("model.gguf"), dir.join("target.gguf"));
    std::fs::write(&src, model(mib)).unwrap();
    std::fs::write(&target, b"the old target").unwrap();
    (common::RemoveOnDrop(dir), src, target)
}

/// What another process does to the source meanwhile.
fn truncate(path: &Path, len: u64) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_len(len).unwrap();
}

/// Runs `f` with a builder over `src`'s header (read into memory) and its file, and the
/// file's length.
fn with_builder<T>(src: &Path, f: impl FnOnce(GgufBuilder<'_>, u64) -> T) -> T {
    let (header, len) = Source::open(src).unwrap().read_header().unwrap();
    let file = std::fs::File::open(src).unwrap();
    f(
        GgufBuilder::from_header_and_file(header.gguf(), &file, len),
        len,
    )
}

/// Runs `gguf ARGS` in a folder with a 16 MiB `model.gguf`, writing to a pipe; cuts the
/// model to 4096 bytes once 1 MiB has been read from the pipe (the pipe holds 64 KiB and a
/// copy's buffer 1 MiB, so the command is blocked early in the data then). Returns the exit
/// code and standard error.
fn cut_while_piping(test: &str, args: &[&str]) -> (Option<i32>, String) {
    let (scratch, src, _) = model_and_target(test, 16);
    let mut child = common::spawn_piped(args, &scratch.0);
    let mut stdout = child.stdout.take().unwrap();
    let mut first = vec![0u8; 1 << 20];
    stdout.read_exact(&mut first).unwrap();
    truncate(&src, 4096);
    std::io::copy(&mut stdout, &mut std::io::sink()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), stderr)
}

#[test]
fn edit_to_a_pipe_of_a_source_truncated_meanwhile_fails_with_a_message_not_sigbus() {
    let args = [
        "edit",
        "--set",
        "general.name=string:x",
        "model.gguf",
        "-o",
        "-",
    ];
    let (code, stderr) = cut_while_piping("shrinking-edit", &args);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("model.gguf: the source shrank while being read: it ends at byte 4096, inside the 16777216 bytes at offset 128; the output is incomplete"),
        "{stderr}"
    );
}

#[test]
fn tensor_values_of_a_source_truncated_meanwhile_fail_with_a_message_not_sigbus() {
    let args = ["tensor", "model.gguf", "big", "--format", "raw"];
    let (code, stderr) = cut_while_piping("shrinking-tensor", &args);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "model.gguf: the source shrank while being read: it ends at byte 4096, inside the"
        ),
        "{stderr}"
    );
}

#[test]
fn a_source_truncated_before_the_copy_leaves_the_target_untouched() {
    let (scratch, src, target) = model_and_target("shrinking-target", 4);

    let (result, cut) = with_builder(&src, |mut builder, len| {
        builder.set("general.name", "edited");
        truncate(&src, len - 1000);
        let result = write_atomically(&builder, &target, &Replace::default(), None);
        (result, len - 1000)
    });
    match result {
        Err(EditError::Write(WriteError::Source(RangeError::Shrank { end, .. }))) => {
            assert_eq!(end, cut)
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read(&target).unwrap(), b"the old target");
    let mut names: Vec<_> = std::fs::read_dir(&scratch.0)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["model.gguf", "target.gguf"]);
}

#[test]
fn a_source_changed_after_the_copy_fails_the_check_before_the_rename() {
    let (_cleanup, src, _) = model_and_target("changed-source", 1);

    let err = with_builder(&src, |builder, len| {
        let mut written = builder.build().unwrap();
        builder.verify(&written).unwrap();
        // The check reads the source again: a byte changed since the copy is found.
        let last = written.len() - 1;
        written[last] ^= 1;
        assert!(builder.verify(&written).is_err());
        truncate(&src, len - 1);
        written[last] ^= 1;
        builder.verify(&written).unwrap_err().to_string()
    });
    assert!(
        err.contains("the source changed while being copied"),
        "{err}"
    );
}

/// Runs `gguf ARGS` in a folder with a 32 MiB `model.gguf` and `target.gguf`, and cuts the
/// model to 4096 bytes once a temporary output appears (the header was read: the copy, or
/// the check that reads the source again, is under way). Returns the exit code, standard
/// error and the folder's files after the run.
fn cut_while_writing(test: &str, args: &[&str]) -> (Option<i32>, String, Vec<String>) {
    let (scratch, src, target) = model_and_target(test, 32);
    let files = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&scratch.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let mut child = common::command(args)
        .current_dir(&scratch.0)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while !files().iter().any(|name| name.ends_with(".tmp")) {
        assert!(child.try_wait().unwrap().is_none(), "ended before writing");
        std::thread::yield_now();
    }
    truncate(&src, 4096);
    let out = child.wait_with_output().unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"the old target");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), stderr, files())
}

#[test]
fn convert_endian_of_a_source_truncated_meanwhile_fails_with_a_message_and_replaces_nothing() {
    let args = ["convert-endian", "model.gguf", "big", "-o", "target.gguf"];
    let (code, stderr, files) = cut_while_writing("shrinking-convert", &args);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("model.gguf: the source shrank while being read: it ends at byte 4096"),
        "{stderr}"
    );
    assert_eq!(files, ["model.gguf", "target.gguf"]);
}

#[test]
fn split_of_a_source_truncated_meanwhile_fails_with_a_message_and_writes_no_shard() {
    let args = ["split", "model.gguf", "shard"];
    let (code, stderr, files) = cut_while_writing("shrinking-split", &args);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("model.gguf: the source shrank while being read: it ends at byte 4096"),
        "{stderr}"
    );
    assert_eq!(files, ["model.gguf", "target.gguf"]);
}

/// A folder with `m.gguf` (2,000 keys of 200-byte strings, two tensors) split into
/// `m-00001-of-00002.gguf` (every key, the first tensor) and `m-00002-of-00002.gguf`.
fn shard_set(test: &str) -> common::RemoveOnDrop {
    use gguf_tools::set::split::{split, SplitLimit, SplitOptions};
    let dir = common::scratch(test);
    let mut builder = GgufBuilder::new(Ctx::V3_LE);
    builder.set("general.architecture", "llama");
    let long = "x".repeat(200);
    for i in 0..2000 {
        builder.set(format!("test.key.{i:05}"), long.as_str());
    }
    let model = builder
        .tensor("a", &[16], GgmlType::F32, &[1; 64])
        .tensor("b", &[16], GgmlType::F32, &[2; 64])
        .build()
        .unwrap();
    std::fs::write(dir.join("m.gguf"), model).unwrap();
    let options = SplitOptions {
        limit: SplitLimit::Tensors(1),
        no_tensor_first_split: false,
    };
    split(&dir.join("m.gguf"), &dir.join("m"), &options).unwrap();
    common::RemoveOnDrop(dir)
}

#[test]
fn dump_of_a_shard_set_to_a_slow_pipe_survives_a_shard_truncated_meanwhile() {
    let scratch = shard_set("shrinking-set-dump");
    let first = scratch.0.join("m-00001-of-00002.gguf");
    let whole = common::gguf(&["dump", "m-00001-of-00002.gguf"], &scratch.0);
    assert_eq!(whole.status.code(), Some(0));
    assert!(whole.stdout.len() > 400_000, "{}", whole.stdout.len());

    let mut child = common::spawn_piped(&["dump", "m-00001-of-00002.gguf"], &scratch.0);
    let mut stdout = child.stdout.take().unwrap();
    // The pipe holds 64 KiB: the command is blocked with most keys still to print.
    let mut printed = vec![0u8; 1000];
    stdout.read_exact(&mut printed).unwrap();
    truncate(&first, 0);
    stdout.read_to_end(&mut printed).unwrap();
    let out = child.wait_with_output().unwrap();
    // The header was read into memory: nothing is read from the file while printing.
    assert_eq!(out.status.code(), Some(0), "{}", common::text(&out.stderr));
    assert_eq!(printed, whole.stdout);
}

#[test]
fn snapshot_reads_the_header_of_a_pipe_and_gives_the_whole_file_size() {
    let (scratch, src, _) = model_and_target("snapshot-pipe", 1);
    let by_path = common::gguf(&["snapshot", "model.gguf"], &scratch.0);
    assert_eq!(by_path.status.code(), Some(0));
    let size = std::fs::metadata(&src).unwrap().len();
    assert!(common::text(&by_path.stdout).contains(&format!("\nfile_size: {size}\n")));

    let bytes = std::fs::read(&src).unwrap();
    let piped = common::with_stdin(&["snapshot", "/dev/stdin"], &bytes);
    assert_eq!(
        piped.status.code(),
        Some(0),
        "{}",
        common::text(&piped.stderr)
    );
    assert_eq!(piped.stdout, by_path.stdout);
}

#[test]
fn diff_data_of_a_shard_set_compares_by_positioned_reads() {
    let scratch = shard_set("diff-set-data");
    let dir = &scratch.0;
    let same = common::gguf(&["diff", "--data", "m-00002-of-00002.gguf", "m.gguf"], dir);
    assert!(common::text(&same.stdout).contains("split.count"));
    assert!(!common::text(&same.stdout).contains("data differs"));

    // The second tensor's last byte, at the end of the second shard, changed.
    let second = dir.join("m-00002-of-00002.gguf");
    let mut bytes = std::fs::read(&second).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    std::fs::write(&second, &bytes).unwrap();
    let changed = common::gguf(&["diff", "--data", "m-00001-of-00002.gguf", "m.gguf"], dir);
    assert_eq!(changed.status.code(), Some(1));
    assert!(common::text(&changed.stdout).ends_with("data differs   b\n"));

    // Cut inside its data: an invalid set (1), not an unreadable one (2).
    truncate(&second, bytes.len() as u64 - 1);
    let cut = common::gguf(&["diff", "--data", "m-00001-of-00002.gguf", "m.gguf"], dir);
    assert_eq!(cut.status.code(), Some(1), "{}", common::text(&cut.stderr));
    assert!(
        common::text(&cut.stderr)
            .contains("m-00002-of-00002.gguf: tensor \"b\": 64 bytes of data at offset"),
        "{}",
        common::text(&cut.stderr)
    );
}

#[test]
fn a_written_file_cut_short_before_its_check_is_a_located_error_and_nothing_is_replaced() {
    let (scratch, src, target) = model_and_target("shrinking-output", 4);

    let (err, written) = with_builder(&src, |mut builder, _| {
        builder.set("general.name", "edited");
        let mut written = 0;
        let err = replace_atomically(
            &target,
            &Replace::default(),
            None,
            |out| Ok(builder.write_to(out)?),
            |temp| {
                // Another process cuts the file the check is about to read.
                written = std::fs::metadata(temp).unwrap().len();
                truncate(temp, written - 1000);
                let file = std::fs::File::open(temp).unwrap();
                Ok(builder.verify_file(&file)?)
            },
        )
        .unwrap_err();
        (err.to_string(), written)
    });
    assert!(
        err.ends_with(&format!(
            "it is {} bytes long, not {written}",
            written - 1000
        )),
        "{err}"
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"the old target");
    assert_eq!(std::fs::read_dir(&scratch.0).unwrap().count(), 2);
}
