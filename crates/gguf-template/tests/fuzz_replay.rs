//! Replays the `template` fuzz target's corpus and fixed reproducers through its check.

#[path = "common/fuzz.rs"]
mod fuzz;
#[path = "../../../fuzz/replay.rs"]
mod replay;

#[test]
fn template_fuzz_inputs_render_or_fail_cleanly() {
    assert!(
        replay::replay("template", fuzz::check) > 0,
        "fuzz/corpus/template is empty"
    );
}
