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
    let file = File::open(data_path(path)?)
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

/// The whole of an input that a command holds in memory (a manifest, a `--set-file` value,
/// text to tokenize, the file `mutate` breaks, a streamed `edit`): `-` is standard input. At
/// most [`gguf_tools::source::max_header`] bytes (256 MiB unless `--max-header` sets it), so
/// `/dev/zero` or an endless FIFO fails instead of exhausting memory; a longer regular file
/// fails before it is read.
pub fn read_whole(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let limit = gguf_tools::source::max_header();
    let too_long = || {
        std::io::Error::other(format!(
            "larger than {limit} bytes, the most read into memory (raise it with --max-header BYTES)"
        ))
    };
    let mut reader: Box<dyn Read> = match path == Path::new("-") {
        true => Box::new(std::io::stdin().lock()),
        false => {
            let file = File::open(path)?;
            let meta = file.metadata()?;
            if meta.is_dir() {
                return Err(std::io::Error::other("is a directory"));
            }
            if meta.is_file() && meta.len() > limit {
                return Err(too_long());
            }
            Box::new(file)
        }
    };
    let mut bytes = Vec::new();
    reader.by_ref().take(limit).read_to_end(&mut bytes)?;
    match reader.read(&mut [0])? {
        0 => Ok(bytes),
        _ => Err(too_long()),
    }
}

/// The path to open for a command that reads tensor data at offsets: `path` itself, or for
/// `-` standard input's file when it is redirected from a regular file at its start
/// (`/dev/stdin`, which opens that file). A pipe or terminal on standard input cannot be read
/// at offsets: exit 2, saying so.
pub fn data_path(path: &Path) -> Result<std::path::PathBuf, Failure> {
    use std::io::Seek;
    use std::os::fd::AsFd;
    if path != Path::new("-") {
        return Ok(path.to_path_buf());
    }
    let stdin = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map(File::from);
    let at = stdin.and_then(|mut file| match file.metadata()?.is_file() {
        true => file.stream_position().map(Some),
        false => Ok(None),
    });
    match at {
        Ok(Some(0)) => Ok("/dev/stdin".into()),
        Ok(Some(at)) => Err(Failure::Unreadable(format!(
            "-: standard input stands at byte {at} of its file; this command reads tensor data \
             at offsets from the file's start: give the file's path"
        ))),
        _ => Err(Failure::Unreadable(
            "-: standard input is not a regular file; this command reads tensor data at \
             offsets: redirect a file (`< FILE`) or give its path"
                .into(),
        )),
    }
}

/// Whether the output `path` is standard output: `-`, or a path to the very file, pipe or
/// terminal on descriptor 1 (`/dev/stdout`, `/dev/fd/1`), which is written there rather than
/// replaced (a pipe's `/proc/self/fd/1` links to no file to replace).
pub fn is_stdout(path: &Path) -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    if path == Path::new("-") {
        return true;
    }
    let stdout = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .map(File::from);
    match (stdout.and_then(|f| f.metadata()), std::fs::metadata(path)) {
        (Ok(out), Ok(meta)) => (out.dev(), out.ino()) == (meta.dev(), meta.ino()),
        _ => false,
    }
}
