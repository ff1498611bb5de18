//! The container's code list is sound and the README's table lists it. (The codes of every
//! crate together are checked by gguf-cli's tests/codes.rs, which sees every list.)

#[test]
fn code_list_and_readme_table_agree() {
    let readme = include_str!("../README.md");
    if let Err(wrong) =
        gguf_grammar::validate::check_code_list(gguf_grammar::validate::codes::ALL, readme)
    {
        panic!("{wrong}");
    }
}
