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

/// Item 6: `scan --csv` cells are one line each, never a live spreadsheet formula, and
/// `--csv`, `--jsonl` and the text rows keep a name that is not UTF-8 apart from its lossy
/// form (before the fix: raw control characters, formulas as written, and `caf\xe9` and
/// `caf\u{fffd}` printed alike).
#[test]
fn scan_csv_neutralises_formulas_and_keeps_names_apart() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = common::scratch("scan-csv");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let named = |file: &[u8], name: &[u8]| {
        let mut b = GgufBuilder::new(Ctx::V3_LE);
        b.kv("general.architecture", "llama");
        b.kv(
            "general.name",
            gguf_grammar::write::OwnedValue::String(name.to_vec()),
        );
        fs::write(dir.join(OsStr::from_bytes(file)), b.build().unwrap()).unwrap();
    };
    named(b"a.gguf", b"=HYPERLINK(\"http://evil/\",\"x\")");
    named(b"b.gguf", b"@SUM(1+1)");
    named(b"c.gguf", b"caf\xe9");
    named(b"d.gguf", "caf\u{fffd}".as_bytes());
    named(format!("e{HOSTILE}.gguf").as_bytes(), b"-2+3");
    named(b"f\xff.gguf", b"'quoted");
    named("f\u{fffd}.gguf".as_bytes(), b"+1");
    let out = common::gguf(&["scan", "--csv", "--profile", "ggml", "."], &dir);
    assert_eq!(out.status.code(), Some(0), "{}", common::text(&out.stderr));
    assert_safe("csv", &out.stdout);
    let csv = std::str::from_utf8(&out.stdout).expect("the CSV is UTF-8");
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 8, "{csv}");
    let name = |file: &str| {
        let row = rows.iter().find(|r| r.starts_with(file)).unwrap();
        row.split(',').nth(6).unwrap().to_string()
    };
    // No cell starts with a formula character; quotes doubled inside a quoted cell.
    assert_eq!(name("./a.gguf"), "\"'=HYPERLINK(\"\"http://evil/\"\"");
    assert!(
        csv.contains(",\"'=HYPERLINK(\"\"http://evil/\"\",\"\"x\"\")\","),
        "{csv}"
    );
    assert_eq!(name("./b.gguf"), "'@SUM(1+1)");
    assert_eq!(name("./c.gguf"), "caf\\xe9");
    assert_eq!(name("./d.gguf"), "caf\u{fffd}");
    assert_eq!(name("./e"), "'-2+3");
    assert_eq!(name("./f\\xff.gguf"), "''quoted");
    assert_eq!(name("./f\u{fffd}.gguf"), "'+1");
    for row in &rows[1..] {
        for cell in row.split(',') {
            assert!(!cell.starts_with(['=', '+', '-', '@']), "{cell:?} in {row}");
        }
    }

    // JSON Lines: a name or path that is not UTF-8 is its bytes in hex, as `dump --json` shows it.
    let out = common::gguf(&["scan", "--jsonl", "--profile", "ggml", "."], &dir);
    let lines: Vec<serde_json::Value> = out
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let row = |path: serde_json::Value| lines.iter().find(|l| l["path"] == path).unwrap();
    let path = |p: &str| serde_json::Value::from(p);
    assert_eq!(
        row(path("./c.gguf"))["name"],
        serde_json::json!({"bytes_hex": "636166e9"})
    );
    assert_eq!(row(path("./d.gguf"))["name"], "caf\u{fffd}");
    assert_eq!(row(path("./f\u{fffd}.gguf"))["name"], "+1");
    let raw = serde_json::json!({"bytes_hex": hex(b"./f\xff.gguf")});
    assert_eq!(row(raw)["name"], "'quoted");

    // The text rows: escaped, and apart.
    let out = common::gguf(&["scan", "--profile", "ggml", "."], &dir);
    let text = common::text(&out.stdout);
    assert_safe("text", &out.stdout);
    assert!(text.contains("\"caf\\xe9\""), "{text}");
    assert!(text.contains("\"caf\u{fffd}\""), "{text}");
    assert!(text.contains("./f\\xff.gguf "), "{text}");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Item 19: a type named in a message takes its article: "an int32", "an array of string"
/// (before the fix: "split.count is a int32", "setting a int32").
#[test]
fn types_in_messages_take_their_article() {
    let dir = common::scratch("articles");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let model = common::root().join("tests/conformance/cases/llama-8-tokens.gguf");
    let m = model.to_str().unwrap();
    for (args, expected) in [
        (
            &[
                "edit",
                m,
                "--set",
                "general.architecture=i32:5",
                "-o",
                "o.gguf",
            ][..],
            "general.architecture: holds a string; setting an int32 changes its type",
        ),
        (
            &[
                "edit",
                m,
                "--set",
                "llama.block_count=[string]:[\"x\"]",
                "-o",
                "o.gguf",
            ],
            "llama.block_count: holds a uint32; setting an array of string changes its type",
        ),
    ] {
        let (code, _, err) = common::outcome(common::gguf(args, &dir));
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(expected), "{err}");
    }
    let shard = "s-00001-of-00002.gguf";
    let made = common::gguf(
        &["edit", m, "--set", "split.count=i32:2", "-o", shard],
        &dir,
    );
    assert_eq!(
        made.status.code(),
        Some(0),
        "{}",
        common::text(&made.stderr)
    );
    let (code, _, err) = common::outcome(common::gguf(&["merge", shard, "out.gguf"], &dir));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("split.count is an int32, not a u16"), "{err}");
}

/// Issue 25 items 5–7: JSON outputs carry no raw C1 control, bidi control or line or
/// paragraph separator: JSON allows them unescaped, and serde_json and the fast writers left
/// them so (a document printed on a terminal or pasted into JavaScript then carried them).
/// Each is written `\uXXXX`, and every document still parses back to the file's exact text.
#[test]
fn json_outputs_escape_c1_bidi_and_separators() {
    const SNEAKY: &str = "\u{85}\u{9b}\u{61c}\u{200e}\u{202e}\u{2028}\u{2029}\u{2066}";
    let dir = common::scratch("hostile-json");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let name = format!("name{SNEAKY}");
    let template = format!("{{{{ '{SNEAKY}' }}}}");
    let bytes = GgufBuilder::new(Ctx::V3_LE)
        .kv("general.architecture", "llama")
        .kv("general.name", name.as_str())
        .kv(format!("evil.{SNEAKY}"), 1u32)
        .kv("tokenizer.chat_template", template.as_str())
        .tensor(format!("t{SNEAKY}"), &[4], GgmlType::F32, &[0; 16])
        .build()
        .unwrap();
    fs::write(dir.join("m.gguf"), bytes).unwrap();
    let other = common::root().join("tests/conformance/cases/kv-only.gguf");
    let other = other.to_str().unwrap();
    for args in [
        &["dump", "--json", "m.gguf"][..],
        &["map", "--json", "m.gguf"],
        &["scan", "--jsonl", "m.gguf"],
        &["diff", "--json", "m.gguf", other],
        &["check", "--json", "m.gguf"],
        &["template", "--json", "m.gguf"],
        &["template", "--json", "--name", "default", "m.gguf"],
    ] {
        let out = common::gguf(args, &dir);
        let text = String::from_utf8(out.stdout).unwrap();
        for c in SNEAKY.chars() {
            assert!(!text.contains(c), "{args:?}: raw {c:?} in {text}");
        }
        // Parsed back (a document, or one per line): the exact text, whatever its escapes.
        let docs: Vec<serde_json::Value> = match args[0] {
            "map" | "scan" => text.lines().map(serde_json::from_str).collect(),
            _ => serde_json::from_str(&text).map(|doc| vec![doc]),
        }
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {text}"));
        let mut parsed = Vec::new();
        docs.iter().for_each(|doc| strings(doc, &mut parsed));
        // (`check` names constructs by their paths, escaped for the terminal already.)
        assert!(
            args[0] == "check" || parsed.iter().any(|s| s.contains(SNEAKY)),
            "{args:?}: {parsed:?}"
        );
    }
}

/// Every string in `value`, its keys included.
fn strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k.clone());
            strings(v, out);
        }),
        _ => {}
    }
}
