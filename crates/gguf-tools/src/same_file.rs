//! Whether two paths name one file: an output must never be written over its own input.

use std::io;
use std::path::Path;

/// Whether `a` and `b` are the same existing file, by identity (device and inode on Unix;
/// the canonical path elsewhere), following symbolic links: `x.gguf`, `./x.gguf`, a link
/// to it and a hard link all name it. A path that does not exist is no file's (`false`).
///
/// ```
/// use gguf_tools::same_file::same_file;
///
/// let dir = std::env::temp_dir().join(format!("gguf-same-file-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("a"), b"a")?;
/// assert!(same_file(&dir.join("a"), &dir.join(".").join("a")));
/// assert!(!same_file(&dir.join("a"), &dir.join("absent")));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn same_file(a: &Path, b: &Path) -> bool {
    identity(a)
        .ok()
        .zip(identity(b).ok())
        .is_some_and(|(a, b)| a == b)
}

#[cfg(unix)]
fn identity(path: &Path) -> io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path)?;
    Ok((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn identity(path: &Path) -> io::Result<std::path::PathBuf> {
    std::fs::canonicalize(path)
}
