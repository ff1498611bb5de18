//! This crate's code list is sound and its README's table lists it.

#[test]
fn code_list_and_readme_table_agree() {
    let readme = include_str!("../README.md");
    if let Err(wrong) = gguf_grammar::validate::check_code_list(gguf_template::codes::ALL, readme) {
        panic!("{wrong}");
    }
}
