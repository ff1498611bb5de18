//! Keys of the type the GGUF specification allows but not the one llama.cpp's loader reads
//! (`GKV<T>::get_kv` wants the exact type; `get_arr` u32 or i32 elements, u64 too in 0.3.36):
//! each is refused with the loader's own words. The same files run through llama.cpp's loader
//! are `gguf mutate`'s `key-type-*` rules, whose verdicts scripts/check-llama-loader.sh records.

use gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_grammar::{Gguf, ValueType};
use gguf_llama::{schema, Release};

fn minimal_llama_with(edit: impl FnOnce(&mut GgufBuilder<'_>)) -> Vec<u8> {
    let llama = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/bundled/minimal-llama.gguf"
    ))
    .unwrap();
    let gguf = Gguf::parse(&llama).unwrap();
    let mut builder = GgufBuilder::from_gguf(&gguf);
    edit(&mut builder);
    builder.build().unwrap()
}

/// The `schema-key-type` messages of each release, in release order.
fn key_type_messages(bytes: &[u8]) -> Vec<Vec<String>> {
    let gguf = Gguf::parse(bytes).unwrap();
    Release::ALL
        .iter()
        .map(|&release| {
            schema::check_model_in(&gguf, release)
                .into_iter()
                .filter(|d| d.code == "schema-key-type")
                .map(|d| d.message)
                .collect()
        })
        .collect()
}

#[test]
fn a_count_must_be_a_u32_and_a_float_an_f32() {
    let bytes = minimal_llama_with(|b| {
        b.set("llama.context_length", u64::MAX);
        b.set("llama.attention.layer_norm_rms_epsilon", 1e-5f64);
        b.set("tokenizer.ggml.bos_token_id", 1u16);
    });
    for (release, messages) in Release::ALL.iter().zip(key_type_messages(&bytes)) {
        let loader = format!("the {} fails to load it", release.name());
        assert_eq!(
            messages,
            [
                format!("{loader}: \"key llama.context_length has wrong type u64 but expected type u32\""),
                format!("{loader}: \"key llama.attention.layer_norm_rms_epsilon has wrong type f64 but expected type f32\""),
                format!("{loader}: \"key tokenizer.ggml.bos_token_id has wrong type u16 but expected type u32\""),
            ]
        );
    }
}

#[test]
fn a_per_block_array_of_u64_is_refused_in_each_release_s_words() {
    let bytes = minimal_llama_with(|b| {
        b.set(
            "llama.attention.head_count",
            OwnedValue::array(ValueType::U64, [2u64]),
        );
    });
    assert_eq!(
        key_type_messages(&bytes),
        [
            vec!["the llama.cpp vendored in llama-cpp-python 0.3.16 fails to load it: \"llama.attention.head_count is not a string/float32/uint32/int32 array\"".to_string()],
            vec!["the llama.cpp vendored in llama-cpp-python 0.3.36 fails to load it: \"llama.attention.head_count has wrong array element type u64\"".to_string()],
        ]
    );
    // u32 and i32 elements are what both releases read.
    for element in [ValueType::U32, ValueType::I32] {
        let value = match element {
            ValueType::U32 => OwnedValue::array(element, [2u32]),
            _ => OwnedValue::array(element, [2i32]),
        };
        let bytes = minimal_llama_with(|b| {
            b.set("llama.attention.head_count", value);
        });
        assert_eq!(
            key_type_messages(&bytes),
            [Vec::<String>::new(), Vec::new()]
        );
    }
}

#[test]
fn a_key_llama_cpp_never_reads_may_be_any_count() {
    let bytes = minimal_llama_with(|b| {
        b.set("general.quantization_version", 2u64);
    });
    assert_eq!(
        key_type_messages(&bytes),
        [Vec::<String>::new(), Vec::new()]
    );
}
