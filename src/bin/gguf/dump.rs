//! `gguf dump`: the text dump, native JSON, gguf-py's JSON or a model summary.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use gguf_grammar::render;

use crate::Failure;

#[derive(clap::Args)]
pub struct Args {
    /// Print the native JSON document instead: every key/value in order with full
    /// array values, and every tensor descriptor.
    #[arg(long)]
    json: bool,
    /// Print a one-screen model summary instead: architecture, name, parameter count,
    /// size label, context, layers, heads, vocabulary, quantization, bits per weight.
    #[arg(long, conflicts_with = "json")]
    summary: bool,
    /// Output format: `text` (the default), `native` (the same as --json) or `gguf-py`
    /// (what gguf-py's `gguf-dump --json --json-array FILE` prints).
    #[arg(long, value_enum, conflicts_with_all = ["json", "summary"])]
    format: Option<DumpFormat>,
    /// The GGUF file; `-` reads standard input (pipes and other non-regular inputs are read
    /// as a stream; a FIFO with no writer waits for one, as `cat` does).
    file: PathBuf,
}

#[derive(Clone, Copy, ValueEnum)]
enum DumpFormat {
    /// The human-readable dump.
    Text,
    /// The native JSON document.
    Native,
    /// gguf-py's `gguf-dump --json --json-array` document.
    GgufPy,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let Args {
        json,
        summary,
        format,
        file,
    } = args;
    match format {
        Some(DumpFormat::GgufPy) => dump_gguf_py(&file),
        Some(DumpFormat::Native) => dump(&file, true, summary),
        Some(DumpFormat::Text) | None => dump(&file, json, summary),
    }
}

fn dump(path: &Path, json: bool, summary: bool) -> Result<(), Failure> {
    let mut buf = Vec::new();
    let (gguf, file_size) = crate::input::header(path, &mut buf)?;
    let mut out = BufWriter::new(io::stdout().lock());
    let written = if summary {
        render::summary::write(&gguf, &mut out)
    } else if json {
        render::json::write(&gguf, file_size, &mut out)
    } else {
        render::text::write(&gguf, file_size, &mut out)
    };
    match written.and_then(|()| out.flush()) {
        // A closed pipe (`gguf dump f | head`) is the reader's choice, not a failure.
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Failure::Unreadable(format!("writing output: {e}")))
        }
        _ => Ok(()),
    }
}

/// `gguf dump --format gguf-py`: rendered whole before printing, so that a string gguf-py
/// cannot decode fails the command without partial output.
fn dump_gguf_py(path: &Path) -> Result<(), Failure> {
    let shown = crate::shown(path);
    let mut buf = Vec::new();
    let (gguf, _) = crate::input::header(path, &mut buf)?;
    let mut doc = Vec::new();
    render::gguf_py::write(&gguf, &path.to_string_lossy(), &mut doc)
        .map_err(|e| Failure::Invalid(format!("{shown}: {e}")))?;
    match io::stdout().lock().write_all(&doc) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Failure::Unreadable(format!("writing output: {e}")))
        }
        _ => Ok(()),
    }
}
