//! The README's table of diagnostic codes is the container's code list, and every code the
//! README names elsewhere is one of the workspace's.

use gguf_grammar::validate::{codes, readme_table, table_in_readme, Code};

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap()
}

#[test]
fn readme_table_is_the_code_list() {
    let readme = readme();
    let expected = readme_table(codes::ALL);
    assert_eq!(
        table_in_readme(&readme),
        Some(expected.as_str()),
        "README.md's code table (between <!-- codes --> and <!-- /codes -->) is not codes::ALL; it should hold:\n{expected}"
    );
}

#[test]
fn codes_named_in_the_readme_exist() {
    let readme = readme();
    let section = &readme[readme.find("## Parity with ggml and gguf-py").unwrap()..];
    let section = &section[..section.find("## Writing and editing").unwrap()];
    let table_rows = section.lines().filter(|l| l.starts_with("| `"));
    let lists = [codes::ALL, gguf_llama::codes::ALL, gguf_tools::codes::ALL];
    let mut named = 0;
    for row in table_rows {
        let cell = row.split(" | ").next().unwrap();
        for quoted in cell.split('`').skip(1).step_by(2) {
            assert!(
                lists.iter().any(|list| Code::find(list, quoted).is_some()),
                "README names `{quoted}`, not a code"
            );
            named += 1;
        }
    }
    assert!(named > 30, "only {named} codes found in the parity table");
}
