//! Writing a whole file from bytes in memory, through the crate's one safe replacement
//! ([`gguf_tools::edit::replace_atomically`]: a new file beside the target, synced, read
//! back, renamed over it; links followed, owner and mode kept, special files refused), and
//! the messages of its refusals.

use std::path::Path;

use gguf_tools::edit::{replace_atomically, CheckError, EditError, Replace};

use crate::shown;

/// Whose name the destination is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Name {
    /// A path the user named: links are followed to their target.
    Given,
    /// A name the command chose inside an output folder: a link or special file there is
    /// refused ([`Replace::generated`]).
    Generated,
}

/// Writes `bytes` to `path` atomically: readers see the old file or the new one, never a
/// part. On failure the temporary file is removed, `path` is untouched, and the message
/// names the path (escaped once).
pub fn write(path: &Path, bytes: &[u8], name: Name) -> Result<(), String> {
    let replace = Replace {
        generated: name == Name::Generated,
        ..Replace::default()
    };
    replace_atomically(
        path,
        &replace,
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
            Ok(_) => Err(CheckError::Differs {
                path: path.to_path_buf(),
                what: "it reads back different".into(),
            }
            .into()),
            Err(source) => Err(EditError::Io {
                path: temp.to_path_buf(),
                source,
            }),
        },
    )
    .map(|_| ())
    .map_err(|e| message(path, &e))
}

/// The message of a failed replacement of `dest` for a command without `edit`'s
/// `--break-links` and `--force`: every path escaped once, no flag suggested.
pub fn message(dest: &Path, e: &EditError) -> String {
    match e {
        EditError::NotRegular(p) => {
            format!("{}: not a regular file; refusing to replace it", shown(p))
        }
        EditError::Linked(p) => format!(
            "{}: is a symbolic link; refusing to write a generated file through it",
            shown(p)
        ),
        EditError::HardLinked { path, links } => format!(
            "{}: has {links} hard links; refusing to replace it",
            shown(path)
        ),
        EditError::ReadOnly(p) => format!("{}: is read-only; refusing to replace it", shown(p)),
        EditError::Changed(p) => format!(
            "{}: changed while being written (another writer?); nothing replaced",
            shown(p)
        ),
        EditError::Dangling { link, target } => format!(
            "{}: dangling symbolic link to {}; nothing written",
            shown(link),
            shown(target)
        ),
        EditError::Io { path, source } => format!(
            "{}: {}",
            shown(path),
            gguf_grammar::escape::terminal(source.to_string().as_bytes())
        ),
        EditError::Check(e) => format!(
            "{}: the written file failed its check: {}",
            shown(dest),
            check_message(e)
        ),
        e => format!(
            "{}: {}",
            shown(dest),
            gguf_grammar::escape::terminal(e.to_string().as_bytes())
        ),
    }
}

/// Why a written file failed its check, with its path escaped for the terminal.
pub fn check_message(e: &CheckError) -> String {
    let escaped = |what: &dyn std::fmt::Display| {
        gguf_grammar::escape::terminal(what.to_string().as_bytes()).into_owned()
    };
    match e {
        CheckError::Read { path, source } => format!("{}: {}", shown(path), escaped(source)),
        CheckError::NotGguf { path, source } => format!("{}: {}", shown(path), escaped(source)),
        CheckError::Differs { path, what } => format!("{}: {}", shown(path), escaped(what)),
        e => escaped(e),
    }
}
