//! `gguf`: inspect GGUF files from the command line.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use gguf_grammar::validate::{self, Diagnostic, Profile};
use gguf_grammar::{render, GgufFile, GgufStr};

/// Inspect GGUF model files (llama.cpp / ggml).
///
/// Exit status: 0 on success, 1 when a file is not valid GGUF, 2 on usage errors or when a
/// file cannot be read.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the header, every key/value (long arrays abbreviated) and every tensor.
    Dump {
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
        /// The GGUF file.
        file: PathBuf,
    },
    /// Check files against a reader's or the specification's rules: one line per diagnostic,
    /// `FILE:OFFSET: error[CODE] PATH: MESSAGE`.
    ///
    /// Exit status: 0 when the profile accepts every file, 1 when it rejects one (a file that
    /// does not parse is rejected), 2 when a file cannot be read at all.
    Check {
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
        /// The GGUF files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Edit metadata: set, remove or rename keys, keeping every tensor's bytes.
    ///
    /// The header is rewritten and the tensor data copied after it at the re-aligned data
    /// start (relative offsets unchanged). Edits apply in this order: removals, renames, sets.
    /// The output is written to a temporary file in the destination's folder, checked, and
    /// renamed into place: a failure never leaves a damaged or half-written file.
    Edit {
        /// The GGUF file.
        file: PathBuf,
        /// Set a key: `KEY=VALUE` keeps the existing key's type (the value is checked
        /// against it); `KEY=TYPE:VALUE` gives the type, one of u8 i8 u16 i16 u32 i32 u64
        /// i64 f32 f64 bool string (required for a new key).
        #[arg(long = "set", value_name = "KEY=[TYPE:]VALUE")]
        set: Vec<String>,
        /// Remove every pair with this key.
        #[arg(long = "remove", value_name = "KEY")]
        remove: Vec<String>,
        /// Rename a key.
        #[arg(long = "rename", value_name = "OLD=NEW")]
        rename: Vec<String>,
        /// Write the edited file here.
        #[arg(short, long, value_name = "OUT", required_unless_present = "in_place")]
        output: Option<PathBuf>,
        /// Replace FILE with the edited file.
        #[arg(long, conflicts_with = "output")]
        in_place: bool,
    },
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

enum Failure {
    /// The input is not valid GGUF: exit 1.
    Invalid(String),
    /// The file could not be read: exit 2.
    Unreadable(String),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Dump {
            json,
            summary,
            format,
            file,
        } => match format {
            Some(DumpFormat::GgufPy) => dump_gguf_py(&file),
            Some(DumpFormat::Native) => dump(&file, true, summary),
            Some(DumpFormat::Text) | None => dump(&file, json, summary),
        },
        Command::Check {
            profile,
            json,
            schema,
            files,
        } => return check(&files, profile.into(), json, schema),
        Command::Edit {
            file,
            set,
            remove,
            rename,
            output,
            in_place: _,
        } => {
            let dest = output.unwrap_or_else(|| file.clone());
            edit(&file, &set, &remove, &rename, &dest)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Invalid(message)) => {
            eprintln!("gguf: {message}");
            ExitCode::from(1)
        }
        Err(Failure::Unreadable(message)) => {
            eprintln!("gguf: {message}");
            ExitCode::from(2)
        }
    }
}

fn dump(path: &PathBuf, json: bool, summary: bool) -> Result<(), Failure> {
    let shown = path.display();
    let file = GgufFile::open(path).map_err(|e| Failure::Unreadable(format!("{shown}: {e}")))?;
    let gguf = file
        .parse()
        .map_err(|e| Failure::Invalid(format!("{shown}: {e}")))?;
    let file_size = file.bytes().len() as u64;
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
fn dump_gguf_py(path: &PathBuf) -> Result<(), Failure> {
    let shown = path.display();
    let file = GgufFile::open(path).map_err(|e| Failure::Unreadable(format!("{shown}: {e}")))?;
    let gguf = file
        .parse()
        .map_err(|e| Failure::Invalid(format!("{shown}: {e}")))?;
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
    let mut written = if json { out.write_all(b"[") } else { Ok(()) };
    for (i, path) in files.iter().enumerate() {
        let shown = path.display().to_string();
        let file = match GgufFile::open(path) {
            Ok(file) => file,
            Err(e) => {
                eprintln!("gguf: {shown}: {e}");
                unreadable = true;
                continue;
            }
        };
        let diagnostics = match file.parse() {
            Ok(gguf) => {
                let mut found = validate::check(&gguf, file.bytes().len() as u64, profile);
                if schema {
                    found.extend(validate::schema::check(&gguf));
                }
                found
            }
            Err(e) => vec![validate::parse_failure(&e)],
        };
        let accepted =
            validate::accepts(&diagnostics, profile) && validate::schema::accepts(&diagnostics);
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

/// `gguf edit`: exit 1 when FILE is not GGUF, 2 on a bad edit or a file error.
fn edit(
    path: &std::path::Path,
    set: &[String],
    remove: &[String],
    rename: &[String],
    dest: &std::path::Path,
) -> Result<(), Failure> {
    use gguf_grammar::edit::{write_atomically, Edit};
    use gguf_grammar::write::GgufBuilder;

    let shown = path.display();
    let file = GgufFile::open(path).map_err(|e| Failure::Unreadable(format!("{shown}: {e}")))?;
    let gguf = file
        .parse()
        .map_err(|e| Failure::Invalid(format!("{shown}: {e}")))?;
    let usage = |e: gguf_grammar::edit::EditError| Failure::Unreadable(e.to_string());
    let edits = remove
        .iter()
        .map(|key| Ok(Edit::Remove(key.clone())))
        .chain(rename.iter().map(|arg| Edit::parse_rename(arg)))
        .chain(set.iter().map(|arg| Edit::parse_set(arg)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(usage)?;
    let mut builder = GgufBuilder::from_gguf(&gguf);
    for edit in &edits {
        edit.apply(&mut builder).map_err(usage)?;
    }
    write_atomically(&builder, dest)
        .map_err(|e| Failure::Unreadable(format!("{}: {e}", dest.display())))?;
    Ok(())
}
