//! `gguf edit` and the writer lose nothing and break nothing: tensor data is kept or the edit
//! is refused, links and special files are respected, owner and mode are kept, concurrent
//! and interrupted edits leave a whole file, memory is bounded by the output.

mod common;
use common::alloc;

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use gguf_grammar::write::{GgufBuilder, WriteError};
use gguf_grammar::{Ctx, GgmlType, Gguf, ValueType};
use gguf_tools::edit::{write_atomically, EditError, Replace};

#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A fresh, empty folder for one test, removed when dropped.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn scratch(test: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("gguf-edit-safety-{}-{test}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// Two F32 tensors of distinct bytes (`len` floats each), `general.alignment` = 32 stored.
fn model(len: usize) -> Vec<u8> {
    let a: Vec<u8> = (0..len * 4).map(|i| (i % 251) as u8).collect();
    let b: Vec<u8> = (0..len * 4).map(|i| (i % 241) as u8 ^ 0x55).collect();
    GgufBuilder::new(Ctx::V3_LE)
        .kv("general.architecture", "llama")
        .kv("general.alignment", 32u32)
        .kv("general.name", "model")
        .tensor("a", &[len as u64], GgmlType::F32, &a)
        .tensor("b", &[len as u64], GgmlType::F32, &b)
        .build()
        .unwrap()
}

/// The elements of the integer array `key`.
fn u64s(gguf: &Gguf, key: &str) -> Vec<u64> {
    let array = gguf.get(key).unwrap().as_array().unwrap();
    array.iter().map(|v| v.as_u64().unwrap()).collect()
}

/// Each tensor's name and bytes.
fn tensor_bytes(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let gguf = Gguf::parse(bytes).unwrap();
    gguf.tensors
        .iter()
        .map(|t| {
            let start = t.data_offset.unwrap() as usize;
            let end = start + t.n_bytes.unwrap() as usize;
            (t.info.name.to_string(), bytes[start..end].to_vec())
        })
        .collect()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    path
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

// Item 1.
#[test]
fn a_source_missing_tensor_data_is_refused_unless_allowed() {
    let dir = scratch("data-loss");
    let mut bytes = model(64);
    // general.alignment's value: the 4 bytes after its key and type tag.
    let key = b"general.alignment";
    let at = bytes.windows(key.len()).position(|w| w == key).unwrap() + key.len() + 4;
    bytes[at..at + 4].copy_from_slice(&(1u32 << 31).to_le_bytes());
    let path = write(&dir, "m.gguf", &bytes);

    let out = common::gguf_in_root(&[
        "edit",
        s(&path),
        "--in-place",
        "--set",
        "general.alignment=u32:32",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not in the source"),
        "{}",
        stderr(&out)
    );
    assert_eq!(fs::read(&path).unwrap(), bytes, "the file was changed");
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        1,
        "temporary file left"
    );

    let out = common::gguf_in_root(&[
        "edit",
        s(&path),
        "--in-place",
        "--allow-data-loss",
        "--set",
        "general.alignment=u32:32",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let edited = fs::read(&path).unwrap();
    assert_eq!(Gguf::parse(&edited).unwrap().alignment, 32);
}

// Item 1: the data survives an edit that moves the data start.
#[test]
fn every_tensor_byte_survives_an_edit_that_moves_the_data() {
    let dir = scratch("moves");
    let bytes = model(1000);
    let path = write(&dir, "m.gguf", &bytes);
    let out = common::gguf_in_root(&[
        "edit",
        s(&path),
        "--in-place",
        "--set",
        &format!("general.name={}", "x".repeat(100)),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let edited = fs::read(&path).unwrap();
    assert_ne!(edited.len(), bytes.len());
    assert_eq!(tensor_bytes(&edited), tensor_bytes(&bytes));
}

// Item 8.
#[test]
fn a_builder_over_a_streamed_header_refuses_to_write_data_it_lacks() {
    let bytes = model(100_000);
    let owned = gguf_grammar::stream::read_header(&bytes[..], None).unwrap();
    let gguf = owned.gguf();
    let mut builder = GgufBuilder::from_gguf(gguf);
    match builder.build() {
        Err(WriteError::MissingTensorData { name, .. }) => assert_eq!(name, "a"),
        other => panic!("{other:?}"),
    }
    // Allowed, it writes the header: the descriptors, no invented data.
    let header_only = builder.allow_missing_data().build().unwrap();
    assert_eq!(header_only.len() as u64, gguf.tensor_data_offset);
}

#[test]
fn a_builder_over_a_files_header_refuses_to_write_data_it_lacks() {
    // A regular file's header is read with room to spare: some tensor data is read too,
    // and must not pass for all of it.
    let dir = scratch("file-header");
    let bytes = model(100_000);
    let path = write(&dir, "m.gguf", &bytes);
    let (header, len) = gguf_tools::source::Source::open(&path)
        .unwrap()
        .read_header()
        .unwrap();
    assert_eq!(len, bytes.len() as u64);
    let gguf = header.gguf();
    assert_eq!(header.bytes().len() as u64, gguf.tensor_data_offset);
    let builder = GgufBuilder::from_gguf(gguf);
    match builder.build() {
        Err(WriteError::MissingTensorData { name, .. }) => assert_eq!(name, "a"),
        other => panic!("{other:?}"),
    }
}

// Item 6.
#[test]
fn changing_the_alignment_of_a_file_with_tensors_is_refused() {
    let dir = scratch("alignment");
    let bytes = model(10);
    let path = write(&dir, "m.gguf", &bytes);
    for set in ["general.alignment=u32:64", "general.alignment=u32:16"] {
        let out = common::gguf_in_root(&["edit", s(&path), "--in-place", "--set", set]);
        assert_eq!(out.status.code(), Some(1), "{set}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("alignment changes"),
            "{}",
            stderr(&out)
        );
    }
    assert_eq!(fs::read(&path).unwrap(), bytes);
    let out = common::gguf_in_root(&[
        "edit",
        s(&path),
        "--in-place",
        "--remove",
        "general.alignment",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "32 is the default: {}",
        stderr(&out)
    );
    let edited = fs::read(&path).unwrap();
    assert!(Gguf::parse(&edited)
        .unwrap()
        .get("general.alignment")
        .is_none());
    assert_eq!(tensor_bytes(&edited), tensor_bytes(&bytes));
}

// Item 6.
#[test]
fn edits_that_would_write_a_broken_or_surprising_file_are_refused() {
    let dir = scratch("refused");
    let path = write(&dir, "m.gguf", &model(4));
    let before = fs::read(&path).unwrap();
    for (args, why) in [
        (&["--set", "=u8:1"][..], "empty key"),
        (
            &["--rename", "general.name=general.architecture"],
            "exists already",
        ),
        (&["--set", "general.name=u32:3"], "--force-type"),
        (&["--set", "x=f32:3.5e38"], "not a valid float32"),
        (&["--set", "x=f64:1e400"], "not a valid float64"),
        (&["--set", "x=[u8]:[1,256]"], "not a valid array of uint8"),
    ] {
        let out = common::gguf_in_root(&[&["edit", s(&path), "--in-place"], args].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(why), "{args:?}: {}", stderr(&out));
    }
    assert_eq!(fs::read(&path).unwrap(), before);
    let out = common::gguf_in_root(&[
        "edit",
        s(&path),
        "--in-place",
        "--force-type",
        "--set",
        "general.name=u32:3",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = common::gguf_in_root(&["edit", s(&path), "--in-place", "--set", "x=f32:inf"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

// Item 6.
#[test]
fn arrays_can_be_set_edits_apply_in_order_and_dash_is_stdout() {
    let dir = scratch("arrays");
    let path = write(&dir, "m.gguf", &model(4));
    let out = common::gguf_in_root(&[
        "edit",
        s(&path),
        "-o",
        "-",
        "--set",
        "my.ids=[u32]:[1, 2, 3]",
        "--set",
        r#"my.words=[string]:["a", "b,\"c\""]"#,
        "--rename",
        "my.ids=my.numbers",
        "--set",
        "my.numbers=[7]",
        "--set",
        "my.ids=u8:1",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let gguf = Gguf::parse(&out.stdout).unwrap();
    let numbers = u64s(&gguf, "my.numbers");
    assert_eq!(numbers, [7]);
    let words = gguf.get("my.words").unwrap().as_array().unwrap();
    assert!(words.element_type() == ValueType::String);
    let words: Vec<&str> = words.iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(words, ["a", "b,\"c\""]);
    assert_eq!(gguf.get("my.ids").unwrap().as_u64(), Some(1));
    assert_eq!(tensor_bytes(&out.stdout), tensor_bytes(&model(4)));
}

// Item 6: arrays (and any value) from a file.
#[test]
fn set_file_reads_the_value_from_a_file_in_command_line_order() {
    let dir = scratch("set-file");
    let path = write(&dir, "m.gguf", &model(4));
    let ids = write(&dir, "ids.json", b"[4, 5, 6]\n");
    let template = write(&dir, "t.jinja", "{{ bos }}\u{1b}[31m ✓\n".as_bytes());
    let out = common::gguf_in_root(&[
        "edit",
        s(&path),
        "-o",
        "-",
        "--set-file",
        &format!("my.ids=[u32]:{}", s(&ids)),
        "--set",
        "my.ids=[u32]:[1]",
        "--set-file",
        &format!("my.template=string:{}", s(&template)),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let edited = Gguf::parse(&out.stdout).unwrap();
    let ids = u64s(&edited, "my.ids");
    assert_eq!(
        ids,
        [1],
        "the later --set wins: edits apply in the order given"
    );
    let template = edited.get("my.template").unwrap().as_str().unwrap();
    assert_eq!(template, "{{ bos }}\u{1b}[31m ✓\n");

    // A missing file is a usage error, and nothing is written.
    let missing = dir.join("missing.json");
    let out = common::gguf_in_root(&[
        "edit",
        s(&path),
        "-o",
        s(&dir.join("out.gguf")),
        "--set-file",
        &format!("my.ids=[u32]:{}", s(&missing)),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("missing.json"), "{}", stderr(&out));
    assert!(!dir.join("out.gguf").exists());
}

// Item 2.
#[test]
fn links_are_followed_and_special_files_are_not_replaced() {
    let dir = scratch("links");
    let bytes = model(4);
    let target = write(&dir, "real.gguf", &bytes);
    let link = dir.join("link.gguf");
    std::os::unix::fs::symlink("real.gguf", &link).unwrap();
    let out = common::gguf_in_root(&[
        "edit",
        s(&link),
        "--in-place",
        "--set",
        "general.name=via link",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let edited = fs::read(&target).unwrap();
    assert_eq!(
        Gguf::parse(&edited)
            .unwrap()
            .get("general.name")
            .unwrap()
            .as_str(),
        Some("via link")
    );

    // -o onto a symbolic link writes its target.
    let out_target = write(&dir, "out.gguf", b"old");
    let out_link = dir.join("out-link.gguf");
    std::os::unix::fs::symlink(&out_target, &out_link).unwrap();
    let out = common::gguf_in_root(&[
        "edit",
        s(&target),
        "-o",
        s(&out_link),
        "--set",
        "general.name=o",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(fs::symlink_metadata(&out_link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(Gguf::parse(&fs::read(&out_target).unwrap()).is_ok());

    // A FIFO and a character device are not replaced.
    let fifo = dir.join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for special in [s(&fifo), "/dev/null"] {
        let out =
            common::gguf_in_root(&["edit", s(&target), "-o", special, "--set", "general.name=x"]);
        assert_eq!(out.status.code(), Some(2), "{special}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("not a regular file"),
            "{}",
            stderr(&out)
        );
    }
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());

    // A hard-linked file is not split from its other name without --break-links.
    let other = dir.join("other-name.gguf");
    fs::hard_link(&target, &other).unwrap();
    let out = common::gguf_in_root(&[
        "edit",
        s(&target),
        "--in-place",
        "--set",
        "general.name=split",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("hard links"), "{}", stderr(&out));
    assert_eq!(fs::read(&target).unwrap(), fs::read(&other).unwrap());
    let out = common::gguf_in_root(&[
        "edit",
        s(&target),
        "--in-place",
        "--break-links",
        "--set",
        "general.name=split",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_ne!(fs::read(&target).unwrap(), fs::read(&other).unwrap());
}

// Item 3.
#[test]
fn owner_group_and_mode_are_kept_and_read_only_files_refused() {
    let dir = scratch("owner");
    let path = write(&dir, "m.gguf", &model(4));
    // Root can give the file away; others keep their own uid, which is what is checked then.
    let _ = std::os::unix::fs::chown(&path, Some(4321), Some(4322));
    fs::set_permissions(&path, fs::Permissions::from_mode(0o4750)).unwrap();
    let before = fs::metadata(&path).unwrap();
    let out = common::gguf_in_root(&[
        "edit",
        s(&path),
        "--in-place",
        "--set",
        "general.name=changed",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = fs::metadata(&path).unwrap();
    assert_ne!(after.ino(), before.ino(), "replaced, not patched");
    assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    assert_eq!(after.mode() & 0o7777, 0o4750);

    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    let out = common::gguf_in_root(&[
        "edit",
        s(&path),
        "--in-place",
        "--set",
        "general.name=again",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("read-only"), "{}", stderr(&out));
    let out = common::gguf_in_root(&[
        "edit",
        s(&path),
        "--in-place",
        "--force",
        "--set",
        "general.name=again",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(fs::metadata(&path).unwrap().mode() & 0o7777, 0o444);
}

// Item 4.
#[test]
fn concurrent_in_place_edits_both_land() {
    let dir = scratch("concurrent");
    // Large enough that the two runs overlap.
    let path = write(&dir, "m.gguf", &model(4 << 20));
    let spawn = |set: &str| {
        Command::new(common::bin())
            .args(["edit", s(&path), "--in-place", "--set", set])
            .spawn()
            .unwrap()
    };
    let (mut one, mut two) = (spawn("first.key=u8:1"), spawn("second.key=u8:2"));
    assert!(one.wait().unwrap().success());
    assert!(two.wait().unwrap().success());
    let bytes = fs::read(&path).unwrap();
    let gguf = Gguf::parse(&bytes).unwrap();
    assert!(
        gguf.get("first.key").is_some() && gguf.get("second.key").is_some(),
        "an edit was lost"
    );
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
}

// Item 4: a file replaced under a holder of its identity is not overwritten.
#[test]
fn a_target_changed_since_it_was_read_is_not_replaced() {
    let dir = scratch("changed");
    let path = write(&dir, "m.gguf", &model(4));
    let locked = gguf_tools::edit::Locked::open(&path).unwrap();
    let bytes = fs::read(&path).unwrap();
    let gguf = Gguf::parse(&bytes).unwrap();
    let builder = GgufBuilder::from_gguf(&gguf);
    fs::write(&path, b"someone else's content").unwrap();
    let err =
        write_atomically(&builder, &path, &Replace::default(), Some(locked.identity)).unwrap_err();
    assert!(matches!(err, EditError::Changed(_)), "{err}");
    assert_eq!(fs::read(&path).unwrap(), b"someone else's content");
}

// Item 5.
#[test]
fn cancelled_writes_and_stale_temporary_files_are_cleaned_up() {
    let dir = scratch("interrupted");
    let path = write(&dir, "m.gguf", &model(4));
    // A temporary file of a run that no longer exists (pid far above any in use).
    let stale = dir.join(".m.gguf.gguf-edit.2147483000.tmp");
    fs::write(&stale, b"partial").unwrap();
    let bytes = fs::read(&path).unwrap();
    let gguf = Gguf::parse(&bytes).unwrap();
    let builder = GgufBuilder::from_gguf(&gguf);
    let cancel = Replace {
        cancel: Some(Arc::new(AtomicBool::new(true))),
        ..Replace::default()
    };
    let err = write_atomically(&builder, &path, &cancel, None).unwrap_err();
    assert!(matches!(err, EditError::Cancelled), "{err}");
    let left: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["m.gguf"]);
    assert_eq!(fs::read(&path).unwrap(), bytes);
}

// Item 7.
#[test]
fn huge_alignments_are_refused_and_padding_is_streamed() {
    let dir = scratch("huge-alignment");
    let path = write(&dir, "m.gguf", &model(4));
    let out = common::gguf_in_root(&[
        "edit",
        s(&path),
        "-o",
        s(&dir.join("out.gguf")),
        "--set",
        "general.alignment=2147483648",
    ]);
    // Refused: the alignment changes on a file with tensors, and it is above the cap.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));

    let data = [3u8; 16];
    let mut builder = GgufBuilder::new(Ctx::V3_LE);
    builder
        .alignment(1 << 31)
        .tensor("t", &[4], GgmlType::F32, &data);
    assert!(matches!(
        builder.build(),
        Err(WriteError::AlignmentTooLarge { .. })
    ));

    builder.alignment(1 << 24);
    let (written, peak) = alloc::peak_during(|| builder.write_to(&mut std::io::sink()).unwrap());
    assert_eq!(written, (1 << 24) + (1 << 24));
    assert!(
        peak < 1 << 20,
        "{peak} bytes allocated for {written} written"
    );
}

// Item 3: an editor that cannot keep the owner drops setuid and setgid. Needs root (to
// create a file owned by someone else) and setpriv (util-linux, to edit as `nobody`).
#[test]
fn setuid_and_setgid_are_dropped_when_the_owner_cannot_be_kept() {
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok();
    if !root || !setpriv {
        eprintln!("SKIPPED: needs root and setpriv (root: {root}, setpriv: {setpriv})");
        return;
    }
    let dir = scratch("setuid");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
    let path = write(&dir, "m.gguf", &model(4));
    std::os::unix::fs::chown(&path, Some(4321), Some(4322)).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o6777)).unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(common::bin())
        .args([
            "edit",
            s(&path),
            "--in-place",
            "--set",
            "general.name=by nobody",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = fs::metadata(&path).unwrap();
    assert_eq!(after.uid(), 65534, "the editor owns the new file");
    assert_eq!(
        after.mode() & 0o7777,
        0o0777,
        "setuid/setgid kept for a new owner"
    );
}
