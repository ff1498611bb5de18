//! Writing a whole file from bytes in memory, through the crate's one safe replacement
//! ([`gguf_tools::edit::replace_atomically`]: a new file beside the target, synced, read
//! back, renamed over it; links followed, owner and mode kept, special files refused).

use std::io;
use std::path::Path;

use gguf_tools::edit::{replace_atomically, EditError, Replace};

/// Writes `bytes` to `path` atomically: readers see the old file or the new one, never a
/// part. On failure the temporary file is removed and `path` is untouched.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace_atomically(
        path,
        &Replace::default(),
        None,
        |out| {
            out.write_all(bytes).map_err(|source| EditError::Io {
                path: path.to_path_buf(),
                source,
            })?;
            Ok(bytes.len() as u64)
        },
        |temp| match std::fs::read(temp) {
            Ok(read) if read == bytes => Ok(()),
            Ok(_) => Err(EditError::Check("it reads back different".into())),
            Err(source) => Err(EditError::Io {
                path: temp.to_path_buf(),
                source,
            }),
        },
    )
    .map(|_| ())
    .map_err(|e| match e {
        EditError::Io { source, .. } => source,
        e => io::Error::other(e.to_string()),
    })
}
