//! Replacing a file through a symbolic link writes the link's target and keeps the link
//! (design.md, "Nothing lost": follow links). `gguf edit --in-place` on a link used to
//! replace the link with a regular file.

#[cfg(unix)]
#[test]
fn write_atomically_follows_links() {
    use gguf_grammar::edit::write_atomically;
    use gguf_grammar::write::GgufBuilder;
    use gguf_grammar::Ctx;

    let dir = std::env::temp_dir().join(format!("gguf-replace-link-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (target, link) = (dir.join("target.gguf"), dir.join("link.gguf"));
    std::fs::write(&target, b"old").unwrap();
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("target.gguf", &link).unwrap();

    let mut builder = GgufBuilder::new(Ctx::V3_LE);
    builder.kv("general.name", "new");
    write_atomically(&builder, &link).unwrap();

    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), builder.build().unwrap());
    let _ = std::fs::remove_dir_all(dir);
}
