//! A name one release does not know and another does: the refusal says which release loads it
//! (issue 35 item 1: "an unknown pre-tokenizer under one release, known under the other, says
//! so").

use gguf_grammar::write::GgufBuilder;
use gguf_grammar::Gguf;
use gguf_llama::{schema, Release};

fn edited(file: &str, edit: impl FnOnce(&mut GgufBuilder<'_>)) -> Vec<u8> {
    let bytes = std::fs::read(format!("{}/../../{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let mut builder = GgufBuilder::from_gguf(&Gguf::parse(&bytes).unwrap());
    edit(&mut builder);
    builder.build().unwrap()
}

/// The messages of `code` under `release`.
fn messages(bytes: &[u8], release: Release, code: &str) -> Vec<String> {
    schema::check_model_in(&Gguf::parse(bytes).unwrap(), release)
        .into_iter()
        .filter(|d| d.code == code)
        .map(|d| d.message)
        .collect()
}

#[test]
fn a_pre_tokenizer_new_in_0336_is_named_so_under_0316() {
    let bytes = edited("tests/corpus/ggml-vocab-gpt-2.gguf", |b| {
        b.set("tokenizer.ggml.pre", "qwen35");
    });
    assert_eq!(
        messages(&bytes, Release::LlamaCppPython0316, "schema-tokenizer-pre"),
        ["the llama.cpp vendored in llama-cpp-python 0.3.16 fails to load it: \"unknown pre-tokenizer type: 'qwen35'\"; the llama.cpp of llama-cpp-python 0.3.36 loads it"]
    );
    assert!(messages(&bytes, Release::LlamaCppPython0336, "schema-tokenizer-pre").is_empty());
    // A name no release knows says nothing more.
    let bytes = edited("tests/corpus/ggml-vocab-gpt-2.gguf", |b| {
        b.set("tokenizer.ggml.pre", "no-such-pre");
    });
    for &release in Release::ALL {
        let found = messages(&bytes, release, "schema-tokenizer-pre");
        assert_eq!(found.len(), 1);
        assert!(found[0].ends_with("'no-such-pre'\""), "{found:?}");
    }
}

#[test]
fn an_architecture_new_in_0336_is_named_so_under_0316() {
    let bytes = edited("tests/bundled/minimal-llama.gguf", |b| {
        b.set("general.architecture", "gemma4");
    });
    assert_eq!(
        messages(&bytes, Release::LlamaCppPython0316, "schema-architecture-unsupported"),
        ["the llama.cpp vendored in llama-cpp-python 0.3.16 fails to load it: \"unknown model architecture: 'gemma4'\"; the llama.cpp of llama-cpp-python 0.3.36 loads it"]
    );
}
