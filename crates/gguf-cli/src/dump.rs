//! `gguf dump`: the text dump, native JSON, gguf-py's JSON or a model summary.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use gguf_grammar::escape::terminal;
use gguf_grammar::Gguf;
use gguf_tools::render;
use gguf_tools::set::{shard_name, shard_path, GgufSet, ParsedSet, SetError};
use gguf_tools::source::http::is_remote;

use crate::{remote, Failure};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  gguf dump model.gguf
  gguf dump --summary model-00002-of-00003.gguf      the whole shard set
  gguf dump --summary --verbose hf://OWNER/REPO/model.gguf   the header only, by range requests")]
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
    /// For a shard (NAME-00001-of-0000N.gguf), show this file alone. Without it the text
    /// dump and --summary show the whole set: the first shard's metadata and every shard's
    /// tensors (JSON is always of the one file given).
    #[arg(long)]
    shard_only: bool,
    /// For a URL, report the requests made and the bytes fetched on stderr.
    #[arg(long, short)]
    verbose: bool,
    /// The GGUF file (`-` reads standard input; pipes and other non-regular inputs are read as a
    /// stream, and a FIFO with no writer waits for one, as `cat` does), or an `http://`, `https://`
    /// or `hf://OWNER/REPO/PATH[@REVISION]` URL (only the header is fetched, with range requests).
    /// A URL's read stops after 10 s to connect, 30 s to the first byte or 120 s in all (one retry
    /// at most).
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
        shard_only,
        verbose,
        file,
    } = args;
    let json = json || matches!(format, Some(DumpFormat::Native));
    if let Some(url) = file.to_str().filter(|f| is_remote(f)) {
        let whole_set = !shard_only && !json && !matches!(format, Some(DumpFormat::GgufPy));
        if whole_set && shard_name(Path::new(url)).is_some() {
            return dump_remote_set(url, verbose, summary);
        }
        return remote::with_header(url, verbose, |gguf, size| {
            let mut out = BufWriter::new(io::stdout().lock());
            let written = match format {
                Some(DumpFormat::GgufPy) => {
                    let mut doc = Vec::new();
                    render::gguf_py::write(gguf, url, &mut doc).map_err(|e| {
                        Failure::Invalid(terminal(format!("{url}: {e}").as_bytes()).into_owned())
                    })?;
                    out.write_all(&doc)
                }
                _ if summary => render::summary::write(gguf, &mut out)
                    .and_then(|()| crate::template::summary(gguf, &mut out)),
                _ if json => render::json::write(gguf, size, &mut out),
                _ => render::text::write(gguf, size, &mut out),
            };
            finish(written.and_then(|()| out.flush()))
        });
    }
    let whole_set = !shard_only && !json && !matches!(format, Some(DumpFormat::GgufPy));
    if whole_set && shard_name(&file).is_some() {
        let set = GgufSet::open(&file).map_err(|e| {
            Failure::Unreadable(format!(
                "{}: {e}",
                terminal(file.as_os_str().as_encoded_bytes())
            ))
        })?;
        if set.is_sharded() {
            return dump_set(&file, &set, summary);
        }
    }
    match format {
        Some(DumpFormat::GgufPy) => dump_gguf_py(&file),
        _ => dump(&file, json, summary),
    }
}

/// The text dump or summary of a whole shard set, then the list of its shards.
fn dump_set(given: &Path, set: &GgufSet, summary: bool) -> Result<(), Failure> {
    let parsed = set.parse().map_err(|e| {
        let message = terminal(e.to_string().as_bytes()).into_owned();
        match e {
            SetError::Parse { .. } => Failure::Invalid(message),
            _ => Failure::Unreadable(message),
        }
    })?;
    let paths: Vec<PathBuf> = set.shards.iter().map(|s| s.path.clone()).collect();
    // Every shard parsed, so every shard opened.
    let sizes: Vec<u64> = set
        .shards
        .iter()
        .map(|s| s.file.as_ref().map_or(0, |f| f.len()))
        .collect();
    write_set(given, &paths, &parsed, &sizes, summary)
}

/// The text dump or summary of a shard set at URLs: every shard's header is fetched.
fn dump_remote_set(url: &str, verbose: bool, summary: bool) -> Result<(), Failure> {
    let Some((prefix, _, count)) = shard_name(Path::new(url)) else {
        return Err(Failure::Unreadable(format!("{url}: not a shard")));
    };
    // Grown as the shards are fetched, never reserved by the count the name claims.
    let (mut paths, mut headers) = (Vec::new(), Vec::new());
    for no in 0..count {
        let path = shard_path(&prefix, no, count);
        headers.push(remote::fetch_header(&path.to_string_lossy(), verbose)?);
        paths.push(path);
    }
    let shards = headers
        .iter()
        .zip(&paths)
        .map(|((buf, _), path)| {
            Gguf::parse(buf).map_err(|e| Failure::Invalid(format!("{}: {e}", path.display())))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let sizes: Vec<u64> = headers.iter().map(|(_, size)| *size).collect();
    write_set(
        Path::new(url),
        &paths,
        &ParsedSet { shards },
        &sizes,
        summary,
    )
}

/// The whole set's text dump (then the list of its shards) or summary.
fn write_set(
    given: &Path,
    paths: &[PathBuf],
    parsed: &ParsedSet<'_>,
    sizes: &[u64],
    summary: bool,
) -> Result<(), Failure> {
    let shown = |path: &Path| terminal(path.as_os_str().as_encoded_bytes()).into_owned();
    eprintln!(
        "note: {} is a shard of {} files: showing the whole set (--shard-only shows this file alone)",
        shown(given),
        paths.len()
    );
    let model = parsed.model();
    let mut out = BufWriter::new(io::stdout().lock());
    let mut written = if summary {
        render::summary::write(&model, &mut out)
            .and_then(|()| crate::template::summary(&model, &mut out))
    } else {
        render::text::write(&model, sizes.iter().sum(), &mut out)
    };
    if !summary {
        written = written.and_then(|()| {
            writeln!(
                out,
                "shard set of {} files (tensor offsets are within each tensor's shard):",
                paths.len()
            )?;
            let mut first = 1;
            for ((path, gguf), size) in paths.iter().zip(&parsed.shards).zip(sizes) {
                let n = gguf.tensors.len();
                let tensors = match n {
                    0 => "no tensors".to_string(),
                    _ => format!("tensors {first}..={}", first + n - 1),
                };
                writeln!(out, "  {}: {size} bytes, {tensors}", shown(path))?;
                first += n;
            }
            Ok(())
        });
    }
    finish(written.and_then(|()| out.flush()))
}

/// A closed pipe (`gguf dump f | head`) is the reader's choice, not a failure.
fn finish(written: io::Result<()>) -> Result<(), Failure> {
    match written {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Failure::Unreadable(format!("writing output: {e}")))
        }
        _ => Ok(()),
    }
}

fn dump(path: &Path, json: bool, summary: bool) -> Result<(), Failure> {
    let (header, file_size) = crate::input::header(path)?;
    let gguf = header.gguf();
    let mut out = stdout_for_bulk();
    let written = if summary {
        render::summary::write(gguf, &mut out)
            .and_then(|()| crate::template::summary(gguf, &mut out))
    } else if json {
        render::json::write(gguf, file_size, &mut out)
    } else {
        render::text::write(gguf, file_size, &mut out)
    };
    finish(written.and_then(|()| out.flush()))
}

/// Standard output for a document of megabytes: buffered straight over the descriptor rather
/// than through std's line buffering, which searches every block it passes on for its last
/// newline. (std opens /dev/null on a closed descriptor 1 at start-up, so the duplicate is
/// standard output; if it cannot be made, std's stdout serves.)
fn stdout_for_bulk() -> BufWriter<Box<dyn Write>> {
    use std::os::fd::AsFd;
    let raw: Box<dyn Write> = match io::stdout().as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(std::fs::File::from(fd)),
        Err(_) => Box::new(io::stdout().lock()),
    };
    BufWriter::with_capacity(1 << 16, raw)
}

/// `gguf dump --format gguf-py`: rendered whole before printing, so that a string gguf-py
/// cannot decode fails the command without partial output.
fn dump_gguf_py(path: &Path) -> Result<(), Failure> {
    let shown = crate::shown(path);
    let (header, _) = crate::input::header(path)?;
    let gguf = header.gguf();
    let mut doc = Vec::new();
    render::gguf_py::write(gguf, &path.to_string_lossy(), &mut doc)
        .map_err(|e| Failure::Invalid(format!("{shown}: {e}")))?;
    finish(io::stdout().lock().write_all(&doc))
}
