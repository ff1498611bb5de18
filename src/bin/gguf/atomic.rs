//! Writing a whole file safely, as design.md's "Nothing lost" asks: a new file beside the
//! target, synced, then renamed over it; a link is followed to its target, an existing
//! target keeps its mode.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically: readers see the old file or the new one, never a
/// part. On failure the temporary file is removed and `path` is untouched.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = resolve(path)?;
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let (temp, mut file) = (0..100)
        .map(|n| dir.join(format!(".{name}.{}-{n}.tmp", std::process::id())))
        .find_map(
            |temp| match File::options().write(true).create_new(true).open(&temp) {
                Ok(file) => Some(Ok((temp, file))),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => None,
                Err(e) => Some(Err(e)),
            },
        )
        .unwrap_or_else(|| {
            Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "no free temporary file name",
            ))
        })?;
    let result = (|| {
        file.write_all(bytes)?;
        file.sync_all()?;
        if let Ok(meta) = fs::metadata(&target) {
            fs::set_permissions(&temp, meta.permissions())?;
        }
        if fs::read(&temp)? != bytes {
            return Err(io::Error::other("the written file reads back different"));
        }
        fs::rename(&temp, &target)?;
        if let Ok(dir) = File::open(&dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// `path` with every symbolic link followed (also a dangling one, to where it points).
fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) => dir.join(link),
                    None => link,
                };
            }
            Ok(meta) if !meta.is_file() => {
                return Err(io::Error::other("not a regular file"));
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}
