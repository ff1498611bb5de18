//! Where the tests find llama.cpp's source (vectors, vocabularies) and load tokenizers.
#![allow(dead_code)]

use std::path::PathBuf;

use gguf_tokenizer::gguf_grammar::OwnedGguf;
use gguf_tokenizer::{Release, Tokenizer};

/// [`llama_src_of`] 0.3.16.
pub fn llama_src() -> Option<PathBuf> {
    llama_src_of(Release::LlamaCppPython0316)
}

/// llama.cpp `release`'s source: `$GGUF_LLAMA_SRC` (0.3.16) or `$GGUF_LLAMA_SRC_0_3_36`
/// (0.3.36), else the cache `scripts/build-llama-tools.sh --release` fills; `None` when
/// absent (the tests then compare with outputs recorded in `tests/data/`), unless
/// `GGUF_REQUIRE_LLAMA=1`, which makes it a failure.
pub fn llama_src_of(release: Release) -> Option<PathBuf> {
    let var = match release {
        Release::LlamaCppPython0316 => "GGUF_LLAMA_SRC".to_string(),
        r => format!("GGUF_LLAMA_SRC_{}", r.version().replace('.', "_")),
    };
    let dir = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").unwrap_or_default();
        PathBuf::from(home).join(format!(
            ".cache/gguf-grammar/llama.cpp-{}/src",
            release.version()
        ))
    });
    if dir.join("models").is_dir() {
        return Some(dir);
    }
    if std::env::var("GGUF_REQUIRE_LLAMA").as_deref() == Ok("1") {
        panic!(
            "llama.cpp source not found at {} (GGUF_REQUIRE_LLAMA=1)",
            dir.display()
        );
    }
    eprintln!(
        "llama.cpp source not found at {}: comparing with the recorded outputs",
        dir.display()
    );
    None
}

/// The `ggml-vocab-*.gguf` files of llama.cpp's `models/`, sorted.
pub fn vocabularies(src: &std::path::Path) -> Vec<PathBuf> {
    vocabularies_in(&src.join("models"))
}

/// The `ggml-vocab-*.gguf` files of a folder, sorted.
pub fn vocabularies_in(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("ggml-vocab-") && n.ends_with(".gguf")
        })
        .collect();
    v.sort();
    v
}

/// The tokenizer of a vocabulary file as llama.cpp 0.3.16 builds it.
pub fn load(path: &std::path::Path) -> Tokenizer {
    load_as(path, Release::LlamaCppPython0316)
}

/// The tokenizer of a vocabulary file as llama.cpp `release` builds it.
pub fn load_as(path: &std::path::Path, release: Release) -> Tokenizer {
    let model = OwnedGguf::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Tokenizer::from_gguf_release(model.gguf(), release)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn name(path: &std::path::Path) -> String {
    let n = path.file_name().unwrap().to_string_lossy().into_owned();
    n.trim_start_matches("ggml-vocab-")
        .trim_end_matches(".gguf")
        .to_string()
}
