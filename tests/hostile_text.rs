//! Text from a file (keys, tensor names, strings) and from the command line (file names)
//! reaches the terminal escaped in every human-readable output; JSON output stays JSON.

mod common;

use std::fs;
use std::path::PathBuf;

use gguf_grammar::write::GgufBuilder;
use gguf_grammar::{Ctx, GgmlType};

/// What must never reach a terminal raw: ESC, BEL, CR, a C1 control (CSI, U+009B) and the
/// bidi overrides.
const HOSTILE: &str = "\x1b]0;pwned\x07\x1b[2J\r\u{9b}31m\u{202e}\u{2066}";

fn assert_safe(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for c in ['\x1b', '\x07', '\r', '\u{9b}', '\u{202e}', '\u{2066}'] {
        assert!(!text.contains(c), "{what}: raw {c:?} in {text:?}");
    }
}

/// A file whose key, tensor name, `general.name` and a duplicate key carry [`HOSTILE`], at a
/// path whose name carries it too.
fn hostile_file(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gguf-hostile-{}-{test}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let data = [0u8; 16];
    let key = format!("evil.{HOSTILE}");
    let bytes = GgufBuilder::new(Ctx::V3_LE)
        .kv("general.architecture", format!("llama{HOSTILE}"))
        .kv("general.name", format!("name{HOSTILE}"))
        .kv(&key, format!("value{HOSTILE}"))
        .kv(&key, 1u8)
        .tensor(format!("t{HOSTILE}"), &[4], GgmlType::F32, &data)
        .build()
        .unwrap();
    let path = dir.join(format!("m{HOSTILE}.gguf"));
    fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn dump_summary_and_check_escape_what_the_file_says() {
    let path = hostile_file("outputs");
    let _cleanup = common::RemoveOnDrop(path.parent().unwrap().to_path_buf());
    let path = path.to_str().unwrap();
    for args in [
        &["dump", path][..],
        &["dump", "--summary", path],
        &["check", path],
        &["check", "--schema", path],
    ] {
        let out = common::gguf_in_root(args);
        assert!(!out.stdout.is_empty(), "{args:?}");
        assert_safe(&format!("{args:?} stdout"), &out.stdout);
        assert_safe(&format!("{args:?} stderr"), &out.stderr);
    }
    let out = common::gguf_in_root(&["dump", path]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("evil.\\e]0;pwned\\u{7}\\e[2J\\r\\u{9b}31m\\u{202e}\\u{2066}"),
        "{text}"
    );
    // JSON keeps the exact text.
    let out = common::gguf_in_root(&["dump", "--json", path]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.to_string().contains("evil.\\u001b]0;pwned"), "{doc}");
}

#[test]
fn error_messages_escape_file_names_and_keys() {
    let path = hostile_file("errors");
    let _cleanup = common::RemoveOnDrop(path.parent().unwrap().to_path_buf());
    let cut = path.with_extension("cut");
    let bytes = fs::read(&path).unwrap();
    fs::write(&cut, &bytes[..200]).unwrap();
    for args in [
        &["dump", cut.to_str().unwrap()][..],
        &["check", cut.to_str().unwrap()],
        &[
            "edit",
            path.to_str().unwrap(),
            "-o",
            "-",
            "--set",
            &format!("x{HOSTILE}=1"),
        ],
        &[
            "dump",
            &format!("{}/missing{HOSTILE}", path.parent().unwrap().display()),
        ],
    ] {
        let out = common::gguf_in_root(args);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        assert!(!out.stderr.is_empty() || !out.stdout.is_empty(), "{args:?}");
        assert_safe(&format!("{args:?} stdout"), &out.stdout);
        assert_safe(&format!("{args:?} stderr"), &out.stderr);
    }
}

// Item 17.
#[test]
fn check_json_is_one_valid_document_whatever_fails() {
    let ok = common::root()
        .join("tests/conformance/cases/kv-only.gguf")
        .to_str()
        .unwrap()
        .to_owned();
    for files in [
        vec!["/nonexistent/a.gguf", &ok],
        vec![&ok, "/nonexistent/a.gguf"],
        vec!["/nonexistent/a.gguf"],
    ] {
        let out = common::gguf_in_root(&[&["check", "--json"][..], &files].concat());
        assert_eq!(out.status.code(), Some(2), "{files:?}");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{files:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)));
        assert_eq!(doc.as_array().unwrap().len(), files.len());
    }
}

/// Item 9: the dump's string values go through the one escaping function (ESC as `\e`, as in
/// keys and names), between quotes, with a quote inside written `\"`.
#[test]
fn dump_string_values_are_escaped_by_the_one_function() {
    let dir = std::env::temp_dir().join(format!("gguf-hostile-{}-values", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let bytes = GgufBuilder::new(Ctx::V3_LE)
        .kv("test.s", "a\x1b[31m\"b\\")
        .build()
        .unwrap();
    let path = dir.join("values.gguf");
    fs::write(&path, bytes).unwrap();
    let out = common::gguf_in_root(&["dump", path.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(r#"test.s = "a\e[31m\"b\\""#), "{text}");
    assert_safe("dump", text.as_bytes());
}

/// Issue 25 item 7: a usage error echoes the argument it refuses, escaped.
#[test]
fn usage_errors_escape_the_arguments_they_echo() {
    let flag = format!("--bogus{HOSTILE}");
    let out = common::gguf(&["dump", flag.as_str()], &common::root());
    assert_eq!(out.status.code(), Some(2));
    assert_safe("usage error", &out.stderr);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("\\u{202e}"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
