//! The README's table of diagnostic codes is this crate's code list.

use gguf_grammar::validate::{readme_table, table_in_readme, Code};
use gguf_tools::codes;

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

#[test]
fn names_are_unique_and_found() {
    let mut names: Vec<&str> = codes::ALL.iter().map(|c| c.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), codes::ALL.len());
    for &code in codes::ALL {
        assert_eq!(Code::find(codes::ALL, code.name()), Some(code));
        assert!(!code.summary().is_empty(), "{code}");
        assert!(
            code.rejected_by().is_empty(),
            "{code}: not a container rule"
        );
    }
}
