//! Snapshots of every real file in `gguf_testkit::snapshot`'s format (what `gguf snapshot`
//! prints): version, byte order, alignment, data start, every key with its offset, type and
//! value (long arrays: length, first and last elements, sha256 of all element bytes), every
//! tensor descriptor. Their facts were checked against gguf-py 0.19.0 with
//! `scripts/check-gguf-py.sh`, which compares every value in full. Each file is its own
//! snapshot (`insta::glob!`): one mismatch does not hide the others.

#[path = "../../../tests/common/mod.rs"]
mod common;

use std::path::Path;

use gguf_grammar::GgufFile;
use gguf_testkit::snapshot;

fn assert_snapshot_of(path: &Path) {
    let file = GgufFile::open(path).unwrap();
    let gguf = file
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    assert_named_snapshot(&name, &snapshot::render(&gguf));
}

fn assert_named_snapshot(name: &str, text: &str) {
    // Named after the file alone (no glob suffix), as `gguf snapshot --update` names them.
    insta::with_settings!({
        snapshot_path => "../../../snapshots",
        prepend_module_to_snapshot => false,
        snapshot_suffix => "",
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn every_bundled_real_file() {
    insta::glob!("../../../tests/corpus", "*.gguf", assert_snapshot_of);
}

/// SmolLM2's snapshot, from its recorded header and size (`common::smollm2_header`, which
/// checks the recording against the model when it is fetched): the same text as the whole
/// file's.
#[test]
fn smollm2() {
    let header = std::fs::read(common::smollm2_header()).unwrap();
    let gguf = gguf_grammar::Gguf::parse(&header).unwrap();
    let text = snapshot::render_with_size(&gguf, common::SMOLLM2_SIZE);
    assert_named_snapshot("SmolLM2-135M-Instruct.Q4_1", &text);
}
