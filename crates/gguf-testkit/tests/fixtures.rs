//! The fixtures against the copies of them the repository holds.

#[path = "../../../tests/common/mod.rs"]
mod common;

#[test]
fn the_bundled_minimal_llama_is_the_fixture() {
    // The library's doctests read this copy (the library cannot call the tools' fixtures).
    let bundled = std::fs::read(common::root().join("tests/bundled/minimal-llama.gguf")).unwrap();
    assert_eq!(bundled, gguf_testkit::fixtures::minimal_llama());
}
