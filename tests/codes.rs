//! The README's table of diagnostic codes is the `Code` list, and every code the README
//! names elsewhere is one.

use gguf_grammar::validate::Code;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap()
}

/// The table the README must hold between `<!-- codes -->` and `<!-- /codes -->`.
fn table() -> String {
    let mut out = String::from("| code | severity | rejected by | rule |\n|---|---|---|---|\n");
    for &code in Code::ALL {
        let refs: Vec<&str> = code.rejected_by().iter().map(|r| r.name()).collect();
        out += &format!(
            "| `{code}` | {} | {} | {} |\n",
            code.severity().name(),
            if refs.is_empty() {
                "-".into()
            } else {
                refs.join(", ")
            },
            code.summary().replace('|', "\\|")
        );
    }
    out
}

#[test]
fn readme_table_is_the_code_list() {
    let readme = readme();
    let start = readme
        .find("<!-- codes -->\n")
        .expect("a <!-- codes --> block")
        + 15;
    let end = readme
        .find("<!-- /codes -->")
        .expect("a <!-- /codes --> end");
    assert_eq!(
        readme[start..end],
        table(),
        "README.md's code table is not Code::ALL; the table it should hold is above"
    );
}

#[test]
fn codes_named_in_the_readme_exist() {
    let readme = readme();
    let section = &readme[readme.find("## Parity with ggml and gguf-py").unwrap()..];
    let section = &section[..section.find("## Writing and editing").unwrap()];
    let table_rows = section.lines().filter(|l| l.starts_with("| `"));
    let mut named = 0;
    for row in table_rows {
        let cell = row.split(" | ").next().unwrap();
        for quoted in cell.split('`').skip(1).step_by(2) {
            assert!(
                Code::from_name(quoted).is_some(),
                "README names `{quoted}`, not a code"
            );
            named += 1;
        }
    }
    assert!(named > 30, "only {named} codes found in the parity table");
}
