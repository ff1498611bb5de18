//! `gguf hash` as a user meets it: exit statuses, messages, hostile names. Its output is
//! compared with llama.cpp's llama-gguf-hash byte for byte by `scripts/check-hash.sh`.

mod common;

use gguf_grammar::{write::GgufBuilder, Ctx, GgmlType};

/// Runs the binary under test: (exit code, stdout, stderr).
fn gguf(args: &[&str]) -> (i32, String, String) {
    common::outcome(common::gguf_in_root(args))
}

fn temp(name: &str, bytes: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("gguf-hash-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn statuses_and_messages() {
    let data = [0u8; 8];
    let bytes = GgufBuilder::new(Ctx::V3_LE)
        .tensor("a\x1b[2Jb", &[2], GgmlType::F32, &data)
        .build()
        .unwrap();
    let file = temp("hostile.gguf", &bytes);

    // The escape sequence in the tensor name is shown, not obeyed.
    let (code, out, _) = gguf(&["hash", &file]);
    assert_eq!(code, 0);
    assert!(out.contains(":a\\e[2Jb\n"), "{out}");
    // xxh64 of 8 zero bytes, seed 0, as llama-gguf-hash prints it for this file
    assert!(out.starts_with("xxh64     34c96acdcadb1bbb  "), "{out}");

    // Its own output is a manifest it verifies.
    let (_, lines, _) = gguf(&["hash", "--all", "--uuid", &file]);
    let manifest = temp("hostile.manifest", lines.as_bytes());
    let (code, out, _) = gguf(&["hash", "--check", &manifest, &file]);
    assert_eq!(code, 0, "{out}");
    assert!(out.ends_with(" - Success\n"), "{out}");
    let bad = temp(
        "bad.manifest",
        lines.replace("sha256    ", "sha256    0").as_bytes(),
    );
    assert_eq!(gguf(&["hash", "--check", &bad, &file]).0, 1);

    // The reference's statuses: 3 no entry, 4 no known type, 5 unreadable manifest.
    let other = temp("other.manifest", b"sha256  00  elsewhere.gguf\n");
    assert_eq!(gguf(&["hash", "--check", &other, &file]).0, 3);
    let unknown = temp("unknown.manifest", b"md5  00  x\n");
    let (code, _, err) = gguf(&["hash", "--check", &unknown, &file]);
    assert_eq!(
        (code, err.contains("no known hash type")),
        (4, true),
        "{err}"
    );
    let (code, _, err) = gguf(&["hash", "--check", "/nonexistent/m", &file]);
    assert_eq!(
        (code, err.contains("cannot open manifest")),
        (5, true),
        "{err}"
    );

    // Not GGUF, or data cut short: 1, with the offset and the construct.
    let (code, out, err) = gguf(&["hash", &temp("text.gguf", b"hello world")]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(err.contains("offset 0x0 (0): header.magic"), "{err}");
    let cut = temp("cut.gguf", &bytes[..bytes.len() - 30]);
    let (code, _, err) = gguf(&["hash", &cut]);
    assert_eq!(code, 1);
    assert!(
        err.contains("8 bytes of data at offset 0x40 (64) run past the end of the file (66 bytes)"),
        "{err}"
    );
    // Unreadable: 2, like every other command (llama-gguf-hash crashes on these).
    let dir = std::path::Path::new(&file).parent().unwrap();
    let missing = dir.join("missing.gguf");
    let (code, out, err) = gguf(&["hash", missing.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains("missing.gguf: No such file or directory"),
        "{err}"
    );
    let (code, _, err) = gguf(&["hash", dir.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(": is a directory"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}
