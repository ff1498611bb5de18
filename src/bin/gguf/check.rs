//! `gguf check`: diagnostics under a reader's or the specification's rules.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::ValueEnum;
use gguf_grammar::render::escape::terminal;
use gguf_grammar::set::{self, GgufSet};
use gguf_grammar::source::http::is_remote;
use gguf_grammar::validate::{self, Diagnostic, Profile};
use gguf_grammar::{render, Gguf, GgufFile, GgufStr};

use crate::{remote, Failure};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  gguf check --profile ggml model.gguf
  gguf check model-00001-of-00003.gguf      every shard, and the set as a whole
  gguf check https://example.org/model.gguf      the header only, by range requests")]
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
    /// For a shard (NAME-00001-of-0000N.gguf), check this file alone. Without it every
    /// shard of the set is checked, and the set as a whole: all shards present, split.no in
    /// order, split.count and split.tensors.count right, metadata in the first shard only,
    /// no tensor in two shards.
    #[arg(long)]
    shard_only: bool,
    /// For URLs, report the requests made and the bytes fetched on stderr.
    #[arg(long, short)]
    verbose: bool,
    /// The GGUF files, or `http://`, `https://` or `hf://OWNER/REPO/PATH[@REVISION]` URLs (only
    /// the header is fetched, with range requests).
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum CheckProfile {
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
    let files = if args.shard_only {
        args.files.into_iter().map(|path| (path, None)).collect()
    } else {
        with_shards(args.files)
    };
    check(
        &files,
        args.profile.into(),
        args.json,
        args.schema,
        args.verbose,
    )
}

/// Each file, or for a shard every shard of its set, with the set's findings about it
/// (`Some`, possibly empty, for a shard).
fn with_shards(files: Vec<PathBuf>) -> Vec<(PathBuf, Option<Vec<Diagnostic>>)> {
    let mut expanded = Vec::new();
    for path in files {
        let set = match GgufSet::open(&path) {
            Ok(set) if set.is_sharded() => set,
            // A single file, or one that cannot be read (reported when checked).
            _ => {
                expanded.push((path, None));
                continue;
            }
        };
        eprintln!(
            "note: {} is a shard of {} files: checking the whole set (--shard-only checks this file alone)",
            terminal(path.as_os_str().as_encoded_bytes()),
            set.shards.len()
        );
        let mut found: Vec<Vec<Diagnostic>> = vec![Vec::new(); set.shards.len()];
        for (shard, d) in set.diagnose() {
            found[shard].push(d);
        }
        for (shard, found) in set.shards.iter().zip(found) {
            if !expanded.iter().any(|(p, _)| *p == shard.path) {
                expanded.push((shard.path.clone(), Some(found)));
            }
        }
    }
    expanded
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

/// The profile's diagnostics, and the schema's when asked.
fn judge(gguf: &Gguf<'_>, file_len: u64, profile: Profile, schema: bool) -> Vec<Diagnostic> {
    let mut found = validate::check(gguf, file_len, profile);
    if schema {
        found.extend(validate::schema::check(gguf));
    }
    found
}

/// `gguf check`: exit 0 when every file is accepted, 1 when one is rejected, 2 when one
/// cannot be read.
fn check(
    files: &[(PathBuf, Option<Vec<Diagnostic>>)],
    profile: Profile,
    json: bool,
    schema: bool,
    verbose: bool,
) -> ExitCode {
    let mut out = BufWriter::new(io::stdout().lock());
    let (mut rejected, mut unreadable) = (false, false);
    let mut written = if json { out.write_all(b"[") } else { Ok(()) };
    for (i, (path, set_findings)) in files.iter().enumerate() {
        let shown = path.display().to_string();
        let missing_shard = set_findings
            .iter()
            .flatten()
            .any(|d| d.code == "set-missing-shard");
        let remote_found = match path.to_str().filter(|p| is_remote(p)) {
            None => None,
            Some(url) => {
                match remote::with_header(url, verbose, |gguf, size| {
                    Ok(judge(gguf, size, profile, schema))
                }) {
                    Ok(found) => Some(found),
                    Err(Failure::Invalid(message)) => {
                        eprintln!("gguf: {message}");
                        rejected = true;
                        continue;
                    }
                    Err(Failure::Unreadable(message)) => {
                        eprintln!("gguf: {message}");
                        unreadable = true;
                        continue;
                    }
                }
            }
        };
        let opened = if remote_found.is_some() {
            Ok(None)
        } else {
            GgufFile::open(path).map(Some)
        };
        let file = match opened {
            Ok(file) => file,
            // A missing shard is a finding about the set, not an unreadable argument.
            Err(_) if missing_shard => None,
            Err(e) => {
                eprintln!("gguf: {shown}: {e}");
                unreadable = true;
                continue;
            }
        };
        let parsed = file
            .as_ref()
            .map(|file| (file.bytes().len() as u64, file.parse()));
        let mut diagnostics = match parsed {
            None => remote_found.unwrap_or_default(),
            Some((len, Ok(gguf))) => judge(&gguf, len, profile, schema),
            Some((_, Err(e))) => vec![validate::parse_failure(&e)],
        };
        diagnostics.extend(set_findings.iter().flatten().cloned());
        let accepted = validate::accepts(&diagnostics, profile)
            && validate::schema::accepts(&diagnostics)
            && set::accepts(&diagnostics);
        rejected |= !accepted;
        written = written.and_then(|()| {
            if json {
                let sep = if i == 0 { "" } else { "," };
                writeln!(out, "{sep}")?;
                check_json(&shown, profile, accepted, &diagnostics, &mut out)
            } else {
                diagnostics
                    .iter()
                    .try_for_each(|d| check_line(&shown, profile, d, &mut out))
            }
        });
    }
    if json {
        written = written.and_then(|()| out.write_all(b"]\n"));
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
    write!(out, "{}", d.message)?;
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
    out: &mut impl Write,
) -> io::Result<()> {
    out.write_all(b"{\"file\": ")?;
    render::json::string(GgufStr(file.as_bytes()), out)?;
    write!(
        out,
        ", \"profile\": \"{}\", \"accepted\": {accepted}, \"diagnostics\": [",
        profile.name()
    )?;
    for (i, d) in diagnostics.iter().enumerate() {
        let span = d
            .span
            .as_ref()
            .map_or("null".to_string(), |s| format!("[{}, {}]", s.start, s.end));
        write!(
            out,
            "{}\n  {{\"level\": \"{}\", \"code\": \"{}\", \"severity\": \"{}\", \"offset\": {}, \"span\": {span}, \"path\": ",
            if i == 0 { "" } else { "," },
            level(profile, d),
            d.code,
            d.severity.name(),
            d.span.as_ref().map_or(0, |s| s.start),
        )?;
        render::json::string(GgufStr(d.path.to_string().as_bytes()), out)?;
        out.write_all(b", \"message\": ")?;
        render::json::string(GgufStr(d.message.as_bytes()), out)?;
        let refs: Vec<_> = d
            .rejected_by
            .iter()
            .map(|r| format!("\"{}\"", r.name()))
            .collect();
        write!(out, ", \"rejected_by\": [{}]}}", refs.join(", "))?;
    }
    write!(out, "]}}")
}
