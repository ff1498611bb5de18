//! Runs the `examples/` program of gguf-tools on a real file.

#[path = "../../../tests/common/mod.rs"]
mod common;

#[allow(dead_code)]
#[path = "../examples/edit_key.rs"]
mod edit_key;

use std::path::Path;

use gguf_grammar::Gguf;

#[test]
fn edit_key_keeps_everything_else() {
    let source = common::root().join("tests/conformance/cases/llama-8-tokens.gguf");
    let dir = common::root().join("target/test-tmp");
    std::fs::create_dir_all(&dir).unwrap();
    let dest = dir.join(format!("edit-key-{}.gguf", std::process::id()));
    edit_key::run(&source, &dest, "general.name", "edited by the example").unwrap();

    let (before, after) = (
        std::fs::read(&source).unwrap(),
        std::fs::read(&dest).unwrap(),
    );
    std::fs::remove_file(&dest).unwrap();
    let (old, new) = (Gguf::parse(&before).unwrap(), Gguf::parse(&after).unwrap());
    assert_eq!(new.name(), Ok("edited by the example"));
    let others = |g: &Gguf<'_>| -> Vec<Vec<u8>> {
        g.kvs
            .iter()
            .filter(|kv| kv.key.as_bytes() != b"general.name")
            .map(|kv| kv.raw.to_vec())
            .collect()
    };
    assert_eq!(others(&old), others(&new));
    assert_eq!(old.tensors.len(), new.tensors.len());
    let data = |g: &Gguf<'_>, bytes: &[u8]| -> Vec<Vec<u8>> {
        g.tensors
            .iter()
            .map(|t| {
                let start = t.data_offset.unwrap() as usize;
                bytes[start..start + t.n_bytes.unwrap() as usize].to_vec()
            })
            .collect()
    };
    assert_eq!(data(&old, &before), data(&new, &after));
    assert!(edit_key::run(Path::new("/no/such.gguf"), &dest, "k", "v").is_err());
}
