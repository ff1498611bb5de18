//! Each README's table of diagnostic codes is the part of the `Code` list that its crate
//! reports, and every code the parity table names is one.

use gguf_grammar::validate::Code;

fn read(path: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(path)).unwrap()
}

/// The README (from the workspace root) and the marker of the block that lists `code`: the
/// README of the crate whose checks report it.
fn home(code: Code) -> (&'static str, &'static str) {
    let name = code.name();
    if name.starts_with("schema-") {
        ("README.md", "codes schema")
    } else if name.starts_with("set-") {
        ("crates/gguf-tools/README.md", "codes")
    } else if name.starts_with("tokenizer-") {
        ("crates/gguf-tokenizer/README.md", "codes")
    } else if name.starts_with("template-") {
        ("crates/gguf-template/README.md", "codes")
    } else {
        ("README.md", "codes")
    }
}

/// The table of `codes`, in the list's order.
fn table(codes: &[Code]) -> String {
    let mut out = String::from("| code | severity | rejected by | rule |\n|---|---|---|---|\n");
    for &code in codes {
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
fn each_readme_table_is_its_crates_codes() {
    let mut homes: Vec<(&str, &str)> = Code::ALL.iter().map(|&c| home(c)).collect();
    homes.sort();
    homes.dedup();
    for (path, marker) in homes {
        let codes: Vec<Code> = Code::ALL
            .iter()
            .copied()
            .filter(|&c| home(c) == (path, marker))
            .collect();
        let readme = read(path);
        let open = format!("<!-- {marker} -->\n");
        let start = readme
            .find(&open)
            .unwrap_or_else(|| panic!("{path} has no {open}"))
            + open.len();
        let end = readme[start..]
            .find(&format!("<!-- /{marker} -->"))
            .unwrap_or_else(|| panic!("{path} has no <!-- /{marker} -->"))
            + start;
        let expected = table(&codes);
        assert_eq!(
            readme[start..end],
            expected,
            "{path}'s <!-- {marker} --> table is not its codes; the table it should hold is above"
        );
    }
}

#[test]
fn codes_named_in_the_parity_table_exist() {
    let readme = read("tests/conformance/README.md");
    let section = &readme[readme.find("## Parity with ggml and gguf-py").unwrap()..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let table_rows = section.lines().filter(|l| l.starts_with("| `"));
    let mut named = 0;
    for row in table_rows {
        let cell = row.split(" | ").next().unwrap();
        for quoted in cell.split('`').skip(1).step_by(2) {
            assert!(
                Code::from_name(quoted).is_some(),
                "tests/conformance/README.md names `{quoted}`, not a code"
            );
            named += 1;
        }
    }
    assert!(named > 30, "only {named} codes found in the parity table");
}
