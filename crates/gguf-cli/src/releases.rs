//! `gguf check --releases`: which llama.cpp releases load a file, one row per release.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gguf_grammar::validate;
use gguf_llama::loader;
use gguf_tokenizer::check::{releases, releases_unparsed, ReleaseVerdict};
use gguf_tools::source::http::is_remote;

use crate::{remote, Failure};

/// `FILE: PROFILE (llama-cpp-python VERSION): VERDICT[: CODE PATH: MESSAGE]`
fn row_line(file: &str, row: &ReleaseVerdict, out: &mut impl Write) -> io::Result<()> {
    write!(
        out,
        "{file}: {} (llama-cpp-python {}): {}",
        loader::profile_name(row.release),
        row.release.version(),
        row.verdict()
    )?;
    if let Some(d) = &row.reason {
        write!(out, ": error[{}] ", d.code)?;
        if !d.path.0.is_empty() {
            write!(out, "{}: ", d.path)?;
        }
        write!(out, "{}", gguf_grammar::escape::controls(&d.message))?;
    }
    writeln!(out)
}

/// The header of `path` (a file, `-` or a URL) judged by every release.
fn judge(path: &Path, verbose: bool) -> Result<Vec<ReleaseVerdict>, Failure> {
    match path.to_str().filter(|p| is_remote(p)) {
        Some(url) => remote::with_header(url, verbose, |gguf, size| Ok(releases(gguf, size))),
        None => match crate::input::header_or_parse_error(path)? {
            Ok((header, file_len)) => Ok(releases(header.gguf(), file_len)),
            Err(e) => Ok(releases_unparsed(&validate::parse_failure(&e))),
        },
    }
}

/// Exit 0 when some release loads every file, 1 when one file loads in none (or is not
/// GGUF), 2 when one cannot be read.
pub fn run(files: &[PathBuf], json: bool, verbose: bool) -> ExitCode {
    let mut out = BufWriter::new(io::stdout().lock());
    let (mut refused, mut unreadable) = (false, false);
    let mut documents = Vec::new();
    let mut written = Ok(());
    for path in files {
        let shown = crate::shown(path);
        match judge(path, verbose) {
            Ok(rows) => {
                refused |= !rows.iter().any(|r| r.loads);
                if json {
                    documents.push(serde_json::json!({
                        "file": path.display().to_string(),
                        "releases": rows.iter().map(ReleaseVerdict::json).collect::<Vec<_>>(),
                    }));
                } else {
                    written = written
                        .and_then(|()| rows.iter().try_for_each(|r| row_line(&shown, r, &mut out)));
                }
            }
            Err(failure) => {
                eprintln!("gguf: {}", failure.message());
                match failure {
                    Failure::Invalid(_) => refused = true,
                    Failure::Unreadable(_) => unreadable = true,
                }
                if json {
                    documents.push(serde_json::json!({
                        "file": path.display().to_string(),
                        "error": failure.message(),
                        "releases": [],
                    }));
                }
            }
        }
    }
    if json {
        written = written.and_then(|()| {
            gguf_tools::render::json::write_value(
                &serde_json::Value::Array(documents),
                true,
                &mut out,
            )
            .and_then(|()| writeln!(out))
        });
    }
    if let Err(e) = written.and_then(|()| out.flush()) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("gguf: writing output: {e}");
            return ExitCode::from(2);
        }
    }
    ExitCode::from(match (unreadable, refused) {
        (true, _) => 2,
        (false, true) => 1,
        (false, false) => 0,
    })
}
