//! The README's table of diagnostic codes is the container's code list. (The codes of every
//! crate together are checked by gguf-cli's tests/codes.rs, which sees every list.)

use gguf_grammar::validate::{codes, readme_table, table_in_readme};

#[test]
fn readme_table_is_the_code_list() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let expected = readme_table(codes::ALL);
    assert_eq!(
        table_in_readme(&readme),
        Some(expected.as_str()),
        "README.md's code table (between <!-- codes --> and <!-- /codes -->) is not codes::ALL; it should hold:\n{expected}"
    );
}
