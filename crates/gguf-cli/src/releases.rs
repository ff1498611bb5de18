//! `gguf check --releases`: which llama.cpp releases load a file, one row per release.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gguf_grammar::validate::{self, Diagnostic};
use gguf_grammar::Gguf;
use gguf_llama::loader::{self, Load};
use gguf_llama::Release;
use gguf_tools::source::http::is_remote;

use crate::{remote, Failure};

/// What one release does with a file.
struct Row {
    release: Release,
    /// It loads the file: the whole model, or with `vocab_only` when `vocab_only`.
    loads: bool,
    /// The file has no tensors: judged as llama.cpp loads it with `vocab_only`.
    vocab_only: bool,
    /// The first diagnostic that rejects, when it does not load.
    reason: Option<Diagnostic>,
}

/// The rows of every release we hold, newest first.
fn rows(gguf: &Gguf<'_>, file_len: u64) -> Vec<Row> {
    let vocab_only = gguf.tensors.is_empty();
    let load = match vocab_only {
        true => Load::VocabOnly,
        false => Load::Model,
    };
    Release::ALL
        .iter()
        .rev()
        .map(|&release| {
            let found = gguf_tokenizer::check::llama_cpp_in(gguf, file_len, release, load);
            let refusing: Vec<Diagnostic> = found
                .into_iter()
                .filter(|d| !loader::accepts_in(std::slice::from_ref(d), release))
                .collect();
            // llama.cpp reads the container, then the architecture, then the rest.
            let reason = [
                |d: &Diagnostic| !d.rejected_by.is_empty(),
                |d: &Diagnostic| d.code == "schema-architecture-unsupported",
                |_: &Diagnostic| true,
            ]
            .into_iter()
            .find_map(|first| refusing.iter().find(|&d| first(d)).cloned());
            Row {
                release,
                loads: reason.is_none(),
                vocab_only,
                reason,
            }
        })
        .collect()
}

/// The rows of a file that does not parse: no release reads it.
fn unparsed(why: Diagnostic) -> Vec<Row> {
    Release::ALL
        .iter()
        .rev()
        .map(|&release| Row {
            release,
            loads: false,
            vocab_only: false,
            reason: Some(why.clone()),
        })
        .collect()
}

impl Row {
    fn verdict(&self) -> &'static str {
        match (self.loads, self.vocab_only) {
            (true, false) => "loads",
            (true, true) => "loads the vocabulary (vocab_only; no tensors)",
            (false, _) => "does not load",
        }
    }

    fn json(&self) -> serde_json::Value {
        let reason = self.reason.as_ref().map(|d| {
            serde_json::json!({
                "code": d.code.name(),
                "offset": d.span.as_ref().map_or(0, |s| s.start),
                "path": d.path.to_string(),
                "message": d.message,
            })
        });
        serde_json::json!({
            "release": self.release.version(),
            "profile": loader::profile_name(self.release),
            "models": loader::models(self.release),
            "loads": self.loads,
            "vocab_only": self.vocab_only,
            "reason": reason,
        })
    }
}

/// `FILE: PROFILE (llama-cpp-python VERSION): VERDICT[: CODE PATH: MESSAGE]`
fn row_line(file: &str, row: &Row, out: &mut impl Write) -> io::Result<()> {
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
fn judge(path: &Path, verbose: bool) -> Result<Vec<Row>, Failure> {
    match path.to_str().filter(|p| is_remote(p)) {
        Some(url) => remote::with_header(url, verbose, |gguf, size| Ok(rows(gguf, size))),
        None => match crate::input::header_or_parse_error(path)? {
            Ok((header, file_len)) => Ok(rows(header.gguf(), file_len)),
            Err(e) => Ok(unparsed(validate::parse_failure(&e))),
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
                        "releases": rows.iter().map(Row::json).collect::<Vec<_>>(),
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
