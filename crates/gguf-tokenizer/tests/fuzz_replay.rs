//! Replays the `tokenizer` fuzz target's corpus and fixed reproducers through its check.

#[path = "common/fuzz.rs"]
mod fuzz;
#[path = "../../../fuzz/replay.rs"]
mod replay;

#[test]
fn tokenizer_fuzz_inputs_load_and_tokenize_or_fail_cleanly() {
    assert!(
        replay::replay("tokenizer", fuzz::check) > 0,
        "fuzz/corpus/tokenizer is empty"
    );
}
