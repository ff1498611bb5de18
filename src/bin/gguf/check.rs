//! `gguf check`: diagnostics under a reader's or the specification's rules.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::ValueEnum;
use gguf_grammar::render::escape::Terminal;
use gguf_grammar::validate::{self, Diagnostic, Profile};

#[derive(clap::Args)]
pub struct Args {
    /// Whose rules: ggml's reader (metadata only), ggml also loading the tensor data,
    /// gguf-py 0.19.0's GGUFReader, the GGUF specification, or all of them.
    #[arg(long, value_enum, default_value = "strict")]
    profile: CheckProfile,
    /// Print the diagnostics as JSON: one object per file.
    #[arg(long)]
    json: bool,
    /// Also check the model against the LLaMA-family schema of its architecture (keys,
    /// tokenizer, hyperparameters, tensor names and shapes); a schema error rejects.
    #[arg(long)]
    schema: bool,
    /// The GGUF files; `-` reads standard input.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum CheckProfile {
    /// What ggml's C reader accepts reading metadata only.
    Ggml,
    /// What ggml's C reader accepts when it also loads the tensor data.
    GgmlData,
    /// What gguf-py 0.19.0's GGUFReader accepts.
    GgufPy,
    /// The GGUF specification's rules.
    Spec,
    /// All of them.
    Strict,
}

pub fn run(args: Args) -> ExitCode {
    check(&args.files, args.profile.into(), args.json, args.schema)
}

impl From<CheckProfile> for Profile {
    fn from(profile: CheckProfile) -> Self {
        match profile {
            CheckProfile::Ggml => Profile::Ggml,
            CheckProfile::GgmlData => Profile::GgmlData,
            CheckProfile::GgufPy => Profile::GgufPy,
            CheckProfile::Spec => Profile::Spec,
            CheckProfile::Strict => Profile::Strict,
        }
    }
}

/// `gguf check`: exit 0 when every file is accepted, 1 when one is rejected, 2 when one
/// cannot be read.
fn check(files: &[PathBuf], profile: Profile, json: bool, schema: bool) -> ExitCode {
    let mut out = BufWriter::new(io::stdout().lock());
    let (mut rejected, mut unreadable) = (false, false);
    let mut written = Ok(());
    let mut documents = Vec::new();
    for path in files {
        let shown = path.display().to_string();
        let mut buf = Vec::new();
        let header = match crate::input::header_or_parse_error(path, &mut buf) {
            Ok(header) => header,
            Err(failure) => {
                let message = failure.message();
                eprintln!("gguf: {message}");
                unreadable = true;
                if json {
                    documents.push(serde_json::json!({
                        "file": shown, "profile": profile.name(), "accepted": false,
                        "error": message, "diagnostics": [],
                    }));
                }
                continue;
            }
        };
        let diagnostics = match header {
            Ok((gguf, file_len)) => {
                let mut found = validate::check(&gguf, file_len, profile);
                if schema {
                    found.extend(validate::schema::check_model(&gguf));
                }
                found
            }
            Err(e) => vec![validate::parse_failure(&e)],
        };
        let accepted = validate::accepts(&diagnostics, profile)
            && validate::schema::accepts_model(&diagnostics);
        rejected |= !accepted;
        if json {
            documents.push(check_json(&shown, profile, accepted, &diagnostics));
        } else {
            let shown = crate::shown(path);
            written = written.and_then(|()| {
                diagnostics
                    .iter()
                    .try_for_each(|d| check_line(&shown, profile, d, &mut out))
            });
        }
    }
    if json {
        written = serde_json::to_writer_pretty(&mut out, &documents)
            .map_err(io::Error::from)
            .and_then(|()| writeln!(out));
    }
    if let Err(e) = written.and_then(|()| out.flush()) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("gguf: writing output: {e}");
            return ExitCode::from(2);
        }
    }
    ExitCode::from(if unreadable {
        2
    } else if rejected {
        1
    } else {
        0
    })
}

/// What a diagnostic is under `profile`: an error when the profile rejects for it.
fn level(profile: Profile, d: &Diagnostic) -> &'static str {
    if profile.rejects(d.rejected_by) {
        "error"
    } else {
        d.severity.name()
    }
}

fn rejecters(d: &Diagnostic) -> String {
    let names: Vec<_> = d.rejected_by.iter().map(|r| r.name()).collect();
    names.join(", ")
}

/// `FILE:OFFSET: error[CODE] PATH: MESSAGE (rejected by: ...)`
fn check_line(
    file: &str,
    profile: Profile,
    d: &Diagnostic,
    out: &mut impl Write,
) -> io::Result<()> {
    let offset = d.span.as_ref().map_or(0, |span| span.start);
    write!(out, "{file}:{offset}: {}[{}] ", level(profile, d), d.code)?;
    if !d.path.0.is_empty() {
        write!(out, "{}: ", d.path)?;
    }
    write!(out, "{}", Terminal(d.message.as_bytes()))?;
    if !d.rejected_by.is_empty() {
        write!(out, " (rejected by: {})", rejecters(d))?;
    }
    writeln!(out)
}

/// `{"file", "profile", "accepted", "diagnostics": [{"level", "code", "severity", "offset",
/// "span", "path", "message", "rejected_by"}]}`
fn check_json(
    file: &str,
    profile: Profile,
    accepted: bool,
    diagnostics: &[Diagnostic],
) -> serde_json::Value {
    let diagnostics: Vec<_> = diagnostics
        .iter()
        .map(|d| {
            let refs: Vec<_> = d.rejected_by.iter().map(|r| r.name()).collect();
            serde_json::json!({
                "level": level(profile, d),
                "code": d.code,
                "severity": d.severity.name(),
                "offset": d.span.as_ref().map_or(0, |s| s.start),
                "span": d.span.as_ref().map(|s| [s.start, s.end]),
                "path": d.path.to_string(),
                "message": d.message,
                "rejected_by": refs,
            })
        })
        .collect();
    serde_json::json!({
        "file": file,
        "profile": profile.name(),
        "accepted": accepted,
        "diagnostics": diagnostics,
    })
}
