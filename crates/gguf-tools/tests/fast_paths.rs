//! The fast element paths (crate::elements) give validation and the JSON renderers exactly the
//! answers the element-by-element paths gave. The expected diagnostics (codes, spans, paths,
//! messages) are what `gguf check --json` built from the commit before the fast paths (54bdc30)
//! printed for this file.

#[path = "../../../tests/common/mod.rs"]
mod common;

use gguf_grammar::validate::{self, Profile};
use gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_grammar::{Ctx, Gguf, Value, ValueType};
use gguf_tools::render;

/// String arrays mixing valid runs, strings of 128+ bytes (length prefixes that are not
/// ASCII), a cut sequence that the next length byte 0xa9 would complete, and invalid strings;
/// an invalid scalar string, an invalid key and nested string arrays.
fn hostile() -> Vec<u8> {
    let pieces: [&[u8]; 8] = [
        b"ok",
        b"\xc3",
        &[b'y'; 169],
        b"a\xff",
        &[b'z'; 200],
        "é".as_bytes(),
        b"\xff\xfe",
        b"fine",
    ];
    let strings = (0..50).flat_map(|_| pieces.map(|p| OwnedValue::String(p.to_vec())));
    let nested = OwnedValue::array(
        ValueType::Array,
        [
            OwnedValue::array(
                ValueType::String,
                [OwnedValue::String(b"\xc3".to_vec()), "ok".into()],
            ),
            OwnedValue::array(ValueType::String, [OwnedValue::String(b"\x80".to_vec())]),
        ],
    );
    GgufBuilder::new(Ctx::V3_LE)
        .kv(
            "test.strings",
            OwnedValue::array(ValueType::String, strings),
        )
        .kv("test.one", OwnedValue::String(b"\xe2\x82".to_vec()))
        .kv(b"bad.\xffkey", 1u32)
        .kv("test.nested", nested)
        .build()
        .unwrap()
}

#[test]
fn check_reports_what_the_element_by_element_check_reported() {
    let bytes = hostile();
    let gguf = Gguf::parse(&bytes).unwrap();
    let found: Vec<String> = validate::check(&gguf, bytes.len() as u64, Profile::Strict)
        .iter()
        .map(|d| format!("{:?} {} {}: {}", d.span, d.code, d.path, d.message))
        .collect();
    assert_eq!(
        found,
        [
            r#"Some(78..79) string-invalid-utf8 kv[0] "test.strings".value[1]: string is not UTF-8 (150 of 400 strings): the spec requires UTF-8"#,
            r#"Some(22388..22390) string-invalid-utf8 kv[1] "test.one".value: string is not UTF-8: the spec requires UTF-8"#,
            r#"Some(22390..22414) key-invalid-utf8 kv[2] "bad.\xffkey": key is not UTF-8 (at byte 4): gguf-py cannot decode it"#,
            r#"Some(22449..22501) array-nested kv[3] "test.nested".value: array of arrays: ggml reads only arrays of scalars and strings"#,
            r#"Some(22469..22470) string-invalid-utf8 kv[3] "test.nested".value[0][0]: string is not UTF-8 (1 of 2 strings): the spec requires UTF-8"#,
            r#"Some(22500..22501) string-invalid-utf8 kv[3] "test.nested".value[1][0]: string is not UTF-8 (1 of 1 strings): the spec requires UTF-8"#,
        ]
    );
}

#[test]
fn json_renders_invalid_strings_as_bytes_and_the_rest_as_text() {
    let bytes = hostile();
    let gguf = Gguf::parse(&bytes).unwrap();
    let mut out = Vec::new();
    render::json::write(&gguf, bytes.len() as u64, &mut out).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let strings = &doc["metadata"][0]["value"];
    assert_eq!(strings[0], "ok");
    assert_eq!(strings[1], serde_json::json!({"bytes_hex": "c3"}));
    assert_eq!(strings[2], "y".repeat(169));
    assert_eq!(strings[3], serde_json::json!({"bytes_hex": "61ff"}));
    assert_eq!(strings[5], "é");
    assert_eq!(strings.as_array().unwrap().len(), 400);
    let mut err = Vec::new();
    let e = render::gguf_py::write(&gguf, "f.gguf", &mut err).unwrap_err();
    assert_eq!(
        e.to_string(),
        r#""\xc3" is not UTF-8 (at byte 0): gguf-py cannot decode it"#
    );
}

#[test]
fn bulk_readers_agree_with_iter_on_every_real_and_conformance_file() {
    let mut files = common::corpus_files();
    files.extend(common::gguf_files_in("tests/conformance/cases"));
    files.extend(common::smollm2());
    files.push(std::path::PathBuf::new()); // the hostile file above
    let mut string_arrays = 0;
    for path in &files {
        let bytes = if path.as_os_str().is_empty() {
            hostile()
        } else {
            std::fs::read(path).unwrap()
        };
        let Ok(gguf) = Gguf::parse(&bytes) else {
            continue;
        };
        for kv in &gguf.kvs {
            if let Value::Array(array) = kv.value {
                string_arrays += usize::from(array.element_type() == ValueType::String);
                common::checks::fast_paths_agree(array);
            }
        }
    }
    assert!(
        string_arrays >= 20,
        "only {string_arrays} string arrays seen"
    );
}
