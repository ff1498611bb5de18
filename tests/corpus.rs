//! Snapshots of every real file in `gguf_tools::snapshot`'s format (what `gguf snapshot`
//! prints): version, byte order, alignment, data start, every key with its offset, type and
//! value (long arrays: length, first and last elements, sha256 of all element bytes), every
//! tensor descriptor. Their facts were checked against gguf-py 0.19.0 with
//! `scripts/check-gguf-py.sh`, which compares every value in full. Each file is its own
//! snapshot (`insta::glob!`): one mismatch does not hide the others.

mod common;

use std::path::Path;

use gguf_grammar::GgufFile;
use gguf_tools::snapshot;

fn assert_snapshot_of(path: &Path) {
    let file = GgufFile::open(path).unwrap();
    let gguf = file
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    // Named after the file alone (no glob suffix), as `gguf snapshot --update` names them.
    insta::with_settings!({
        snapshot_path => "../snapshots",
        prepend_module_to_snapshot => false,
        snapshot_suffix => "",
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, snapshot::render(&gguf));
    });
}

#[test]
fn every_bundled_real_file() {
    insta::glob!("corpus/*.gguf", assert_snapshot_of);
}

#[test]
fn smollm2() {
    if let Some(path) = common::smollm2() {
        assert_snapshot_of(&path);
    }
}
