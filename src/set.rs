//! Shard sets: one model stored as `NAME-00001-of-0000N.gguf` … as llama.cpp's `gguf-split`
//! writes them.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

pub mod split;

/// The path of shard `no` (from 0) of `count`: `PREFIX-0000{no+1}-of-0000{count}.gguf`, as
/// llama.cpp's `llama_split_path` names it.
///
/// ```
/// use gguf_grammar::set::shard_path;
/// use std::path::Path;
///
/// assert_eq!(shard_path(Path::new("out/model"), 0, 3), Path::new("out/model-00001-of-00003.gguf"));
/// ```
pub fn shard_path(prefix: &Path, no: usize, count: usize) -> PathBuf {
    let mut path = OsString::from(prefix.as_os_str());
    path.push(shard_suffix(no, count));
    PathBuf::from(path)
}

/// The prefix of `path` when it is named as shard `no` of `count` (the inverse of
/// [`shard_path`], as llama.cpp's `llama_split_prefix`), else `None`.
///
/// ```
/// use gguf_grammar::set::shard_prefix;
/// use std::path::Path;
///
/// let first = Path::new("out/model-00001-of-00003.gguf");
/// assert_eq!(shard_prefix(first, 0, 3).as_deref(), Some(Path::new("out/model")));
/// assert_eq!(shard_prefix(first, 0, 2), None);
/// ```
pub fn shard_prefix(path: &Path, no: usize, count: usize) -> Option<PathBuf> {
    strip_suffix(path.as_os_str(), &shard_suffix(no, count)).map(PathBuf::from)
}

fn shard_suffix(no: usize, count: usize) -> String {
    format!("-{:05}-of-{count:05}.gguf", no + 1)
}

/// `name` without the ASCII `suffix`, when it ends with it and something precedes it.
fn strip_suffix(name: &OsStr, suffix: &str) -> Option<OsString> {
    let bytes = name.as_encoded_bytes();
    let kept = bytes.strip_suffix(suffix.as_bytes())?;
    if kept.is_empty() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Some(OsStr::from_bytes(kept).to_os_string())
    }
    #[cfg(not(unix))]
    {
        name.to_str()?.strip_suffix(suffix).map(OsString::from)
    }
}
