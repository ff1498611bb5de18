//! The diagnostic codes of every crate the `gguf` command reports, together: no name is used
//! twice, only the container's name rejecting references, and every code the conformance
//! README's parity table names is one of them.

use gguf_grammar::validate::{codes, Code};

const LISTS: [&[Code]; 5] = [
    codes::ALL,
    gguf_llama::codes::ALL,
    gguf_tools::codes::ALL,
    gguf_tokenizer::codes::ALL,
    gguf_template::codes::ALL,
];

#[test]
fn no_code_name_is_used_by_two_crates() {
    let mut names: Vec<&str> = LISTS
        .iter()
        .flat_map(|l| l.iter().map(|c| c.name()))
        .collect();
    let all = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all, "a code name appears in two lists");
}

#[test]
fn only_container_codes_name_rejecting_references() {
    for list in &LISTS[1..] {
        for code in list.iter() {
            assert!(
                code.rejected_by().is_empty(),
                "{code}: not a container rule"
            );
        }
    }
}

#[test]
fn codes_named_in_the_parity_table_exist() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/conformance/README.md"
    );
    let readme = std::fs::read_to_string(path).unwrap();
    let section = &readme[readme.find("## Parity with ggml and gguf-py").unwrap()..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let mut named = 0;
    for row in section.lines().filter(|l| l.starts_with("| `")) {
        let cell = row.split(" | ").next().unwrap();
        for quoted in cell.split('`').skip(1).step_by(2) {
            assert!(
                LISTS.iter().any(|list| Code::find(list, quoted).is_some()),
                "tests/conformance/README.md names `{quoted}`, not a code"
            );
            named += 1;
        }
    }
    assert!(named > 30, "only {named} codes found in the parity table");
}
