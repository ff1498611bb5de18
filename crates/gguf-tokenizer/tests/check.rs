//! `gguf_tokenizer::check`: each code on a real vocabulary (tests/corpus) changed in one
//! place, and on the unchanged corpus only the findings checked against llama.cpp.
//! `GGUF_TOKENIZER_CHECK_OUT=DIR` writes the changed files there (to run llama.cpp on them).

use std::path::{Path, PathBuf};

use gguf_tokenizer::gguf_grammar::validate::Code;
use gguf_tokenizer::gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_tokenizer::gguf_grammar::{Gguf, ValueType};

fn corpus(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/corpus")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn codes(bytes: &[u8]) -> Vec<(Code, String)> {
    let g = Gguf::parse(bytes).expect("parses");
    gguf_tokenizer::check::check(&g)
        .into_iter()
        .map(|d| (d.code, d.message))
        .collect()
}

/// The vocabulary `name` with `edit` applied, written out when asked.
fn changed(name: &str, what: &str, edit: impl FnOnce(&Gguf<'_>, &mut GgufBuilder<'_>)) -> Vec<u8> {
    let bytes = corpus(name);
    let g = Gguf::parse(&bytes).expect("parses");
    let mut b = GgufBuilder::from_gguf(&g);
    edit(&g, &mut b);
    let out = b.build().expect("builds");
    if let Some(dir) = std::env::var_os("GGUF_TOKENIZER_CHECK_OUT") {
        let p = PathBuf::from(dir).join(format!("{what}.gguf"));
        std::fs::write(&p, &out).expect("write");
    }
    out
}

fn strings(g: &Gguf<'_>, key: &str) -> Vec<Vec<u8>> {
    let a = g.get_array(key).expect(key);
    a.strings()
        .expect(key)
        .map(|s| s.as_bytes().to_vec())
        .collect()
}

fn set_strings(b: &mut GgufBuilder<'_>, key: &str, v: Vec<Vec<u8>>) {
    b.set(
        key,
        OwnedValue::array(ValueType::String, v.into_iter().map(OwnedValue::string)),
    );
}

fn set_type(g: &Gguf<'_>, b: &mut GgufBuilder<'_>, id: usize, ty: i32) {
    let mut types = g
        .get_array("tokenizer.ggml.token_type")
        .expect("types")
        .to_vec::<i32>()
        .expect("i32");
    types[id] = ty;
    b.set(
        "tokenizer.ggml.token_type",
        OwnedValue::array(ValueType::I32, types),
    );
}

fn id_of(g: &Gguf<'_>, text: &[u8]) -> usize {
    strings(g, "tokenizer.ggml.tokens")
        .iter()
        .position(|t| t == text)
        .expect("token")
}

fn only(found: &[(Code, String)], code: Code) -> &str {
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, code, "{found:?}");
    &found[0].1
}

#[test]
fn merge_without_space_or_unknown_result() {
    let found = codes(&changed(
        "ggml-vocab-gpt-2.gguf",
        "merge-no-space",
        |g, b| {
            let mut m = strings(g, "tokenizer.ggml.merges");
            m[3] = m[3].iter().copied().filter(|&c| c != b' ').collect();
            set_strings(b, "tokenizer.ggml.merges", m);
        },
    ));
    assert!(only(&found, gguf_tokenizer::codes::TOKENIZER_MERGE_UNKNOWN).contains("has no space"));
    // "Ā" and "ā" (bytes 0x00, 0x01) are tokens; "Āā" is none.
    let found = codes(&changed(
        "ggml-vocab-gpt-2.gguf",
        "merge-unknown",
        |g, b| {
            let mut m = strings(g, "tokenizer.ggml.merges");
            m.push("Ā ā".into());
            set_strings(b, "tokenizer.ggml.merges", m);
        },
    ));
    assert!(only(&found, gguf_tokenizer::codes::TOKENIZER_MERGE_UNKNOWN)
        .contains("\"Ā ā\" joins to a text that is no token"));
}

#[test]
fn byte_alphabet_token_missing() {
    let found = codes(&changed(
        "ggml-vocab-gpt-2.gguf",
        "byte-alphabet",
        |g, b| {
            let mut t = strings(g, "tokenizer.ggml.tokens");
            let i = id_of(g, "ā".as_bytes());
            t[i] = "ā-renamed".into();
            set_strings(b, "tokenizer.ggml.tokens", t);
        },
    ));
    assert!(only(&found, gguf_tokenizer::codes::TOKENIZER_BYTE_ALPHABET).contains("1 of the 243"));
}

#[test]
fn byte_tokens_llama_cpp_cannot_decode() {
    // SPM: "a" (under 3 bytes) marked as a byte token.
    let found = codes(&changed(
        "ggml-vocab-llama-spm.gguf",
        "byte-token-spm",
        |g, b| {
            set_type(g, b, id_of(g, b"a"), 6);
        },
    ));
    assert!(only(&found, gguf_tokenizer::codes::TOKENIZER_BYTE_TOKEN).contains("std::out_of_range"));
    let found = codes(&changed(
        "ggml-vocab-bert-bge.gguf",
        "byte-token-wpm",
        |g, b| {
            set_type(g, b, id_of(g, b"a"), 6);
        },
    ));
    assert!(only(&found, gguf_tokenizer::codes::TOKENIZER_BYTE_TOKEN).contains("GGML_ABORT"));
}

#[test]
fn special_id_on_a_normal_token() {
    let found = codes(&changed(
        "ggml-vocab-llama-spm.gguf",
        "special-type",
        |g, b| {
            let id = id_of(g, "▁the".as_bytes());
            b.set("tokenizer.ggml.eos_token_id", id as u32);
        },
    ));
    assert!(only(&found, gguf_tokenizer::codes::TOKENIZER_SPECIAL_TYPE)
        .contains("decodes it as the text \" the\""));
}

/// The unchanged corpus: only the missing byte-alphabet tokens of refact and starcoder
/// (0xF1; llama.cpp drops that byte from U+40000.., checked with scripts/llama/tokenizer-ref).
#[test]
fn corpus_has_only_known_findings() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("corpus")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".gguf"))
        .collect();
    names.sort();
    assert!(names.len() >= 12, "{names:?}");
    for name in names {
        let found = codes(&corpus(&name));
        match name.as_str() {
            "ggml-vocab-refact.gguf" | "ggml-vocab-starcoder.gguf" => {
                assert!(
                    only(&found, gguf_tokenizer::codes::TOKENIZER_BYTE_ALPHABET)
                        .contains("byte 0xF1"),
                    "{name}"
                );
            }
            _ => assert!(found.is_empty(), "{name}: {found:?}"),
        }
    }
}
