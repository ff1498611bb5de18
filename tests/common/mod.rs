//! Shared by the integration tests, the fuzz targets and the `gguf` command's tests
//! (`fuzz/fuzz_targets/*.rs` and `crates/gguf-cli/tests/common` include this folder by path):
//! where the real files are, and the allocation bound ([`alloc`]), the property checks
//! ([`checks`]) and the document generator ([`generate`]).
#![allow(dead_code)]

pub mod alloc;
pub mod checks;
pub mod generate;

use std::path::PathBuf;

/// The repository root: the nearest folder above the package's that holds grammar/gguf.ksy.
pub fn root() -> PathBuf {
    let package = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    package
        .ancestors()
        .find(|dir| dir.join("grammar/gguf.ksy").is_file())
        .expect("the repository root holds grammar/gguf.ksy")
        .to_path_buf()
}

/// The `.gguf` files in `dir` (relative to the repository root), sorted.
pub fn gguf_files_in(dir: &str) -> Vec<PathBuf> {
    let dir = root().join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "gguf"))
        .collect();
    files.sort();
    files
}

/// Every bundled real file, sorted.
pub fn corpus_files() -> Vec<PathBuf> {
    let files = gguf_files_in("tests/corpus");
    assert!(files.len() >= 12, "tests/corpus is missing files");
    files
}

/// The SmolLM2-135M model fetched by `scripts/fetch-models.sh`: `$GGUF_SMOLLM2`, else the
/// default cache. `None` (with a note) when it has not been fetched; `scripts/test.sh` (CI)
/// always fetches it and sets `GGUF_SMOLLM2`, and then its absence is a failure.
pub fn smollm2() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("GGUF_SMOLLM2") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "GGUF_SMOLLM2={} is not a file",
            path.display()
        );
        return Some(path);
    }
    let cached = root().join(".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf");
    if cached.is_file() {
        Some(cached)
    } else {
        eprintln!("note: SmolLM2 not fetched (run scripts/fetch-models.sh); skipping it");
        None
    }
}

/// SmolLM2's size in bytes, as `scripts/fetch-models.sh` checks it.
pub const SMOLLM2_SIZE: u64 = 98_362_432;

/// SmolLM2-135M's header (magic to the start of its tensor data: every key/value and tensor
/// descriptor, none of the data), recorded in `tests/models/` from the model
/// `scripts/fetch-models.sh` fetches, so that the tests that read only the header run
/// without the model. When the model is fetched, checks that the recording is its first
/// bytes (`GGUF_RECORD=1` rewrites it instead).
pub fn smollm2_header() -> PathBuf {
    let header = root().join("tests/models/SmolLM2-135M-Instruct.Q4_1.header.gguf");
    if let Some(model) = smollm2() {
        let bytes = std::fs::read(&model).unwrap();
        let end = gguf_grammar::Gguf::parse(&bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", model.display()))
            .tensor_data_offset as usize;
        if std::env::var_os("GGUF_RECORD").is_some_and(|v| v == "1") {
            std::fs::write(&header, &bytes[..end]).unwrap();
        }
        let recorded = std::fs::read(&header).unwrap();
        assert!(
            recorded == bytes[..end],
            "{} is not the header of {} (GGUF_RECORD=1 rewrites it)",
            header.display(),
            model.display()
        );
    }
    header
}

/// Removes a test's scratch folder when the test ends, passed or failed.
pub struct RemoveOnDrop(pub PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh, empty folder for one test, named after it and this process.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gguf-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
