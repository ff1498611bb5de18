//! Reading a command's input: a file, `-` for standard input, or any other readable path
//! (a pipe, `/dev/stdin`), through [`gguf_tools::source`].

use std::fs::File;
use std::path::Path;

use gguf_grammar::OwnedGguf;
use gguf_tools::source::{Source, SourceError};

use crate::Failure;

/// The header of the input at `path` (parsed once, owning its bytes) and the input's
/// length. An unreadable input fails with exit 2, bytes that are not GGUF with exit 1.
pub fn header(path: &Path) -> Result<(OwnedGguf, u64), Failure> {
    header_or_parse_error(path)?
        .map_err(|e| Failure::Invalid(format!("{}: {e}", crate::shown(path))))
}

/// Like [`header`], with a parse error returned for the caller to report.
pub fn header_or_parse_error(
    path: &Path,
) -> Result<Result<(OwnedGguf, u64), gguf_grammar::Error>, Failure> {
    let shown = crate::shown(path);
    let read = Source::open(path).and_then(|mut source| source.read_header());
    match read {
        Ok(header) => Ok(Ok(header)),
        Err(SourceError::Invalid(e)) => Ok(Err(e)),
        Err(SourceError::IsADirectory(_)) => {
            Err(Failure::Unreadable(format!("{shown}: is a directory")))
        }
        Err(SourceError::Io { source, .. }) => {
            Err(Failure::Unreadable(format!("{shown}: {source}")))
        }
        Err(e) => Err(Failure::Unreadable(format!("{shown}: {e}"))),
    }
}

/// The regular file at `path` opened for positioned reads of its tensor data (see
/// [`gguf_grammar::file_range::read_exact_at`]: no memory map, so no SIGBUS when another process
/// truncates it), with its header and its length.
pub fn with_data(path: &Path) -> Result<(File, OwnedGguf, u64), Failure> {
    let file = File::open(path)
        .map_err(|e| Failure::Unreadable(format!("{}: {e}", crate::shown(path))))?;
    let (header, len) = header(path)?;
    Ok((file, header, len))
}

/// Fails (exit 2) when `path` exists and is neither a regular file nor a directory.
pub fn refuse_special(path: &Path) -> Result<(), Failure> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() && !meta.is_dir() => Err(Failure::Unreadable(format!(
            "{}: is not a regular file",
            crate::shown(path)
        ))),
        _ => Ok(()),
    }
}
