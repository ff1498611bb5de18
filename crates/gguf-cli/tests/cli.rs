//! The `gguf` binary behaves like a Unix tool: data on stdout, messages on stderr, exit 0 on
//! success, 1 for invalid GGUF, 2 for usage errors and unreadable files.

mod common;

use common::{gguf_in_root as gguf, text};

#[test]
fn dump_prints_header_kvs_and_tensors() {
    let out = gguf(&["dump", "tests/conformance/cases/llama-8-tokens.gguf"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("GGUF v3, little endian"), "{stdout}");
    assert!(stdout.contains("25 key/value pairs:"), "{stdout}");
    assert!(stdout.contains("12 tensors:"), "{stdout}");
    assert!(out.stderr.is_empty());
}

#[test]
fn dump_json_is_valid_json_with_full_arrays() {
    let out = gguf(&["dump", "--json", "tests/corpus/ggml-vocab-llama-spm.gguf"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["version"], 3);
    assert_eq!(doc["endian"], "little");
    let tokens = doc["metadata"]
        .as_array()
        .unwrap()
        .iter()
        .find(|kv| kv["key"] == "tokenizer.ggml.tokens")
        .unwrap();
    assert_eq!(
        (tokens["type"].as_str(), tokens["element_type"].as_str()),
        (Some("array"), Some("string"))
    );
    assert_eq!(tokens["value"].as_array().unwrap().len(), 32000);
}

#[test]
fn invalid_gguf_exits_1_with_offset_and_path_on_stderr() {
    let out = gguf(&[
        "dump",
        "tests/conformance/cases/string-length-past-eof.gguf",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "offset 0x2a (42): kv[0] \"test.s\": string length 1000 exceeds the 3 bytes left"
        ),
        "{stderr}"
    );
}

#[test]
fn usage_errors_and_unreadable_files_exit_2() {
    let out = gguf(&["dump"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!out.stderr.is_empty());
    let out = gguf(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    let out = gguf(&["dump", "no/such/file.gguf"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no/such/file.gguf"));
}

#[test]
fn help_goes_to_stdout() {
    let out = gguf(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("dump"));
}
