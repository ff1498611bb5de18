//! `gguf scan`: one row per model found under the given paths, headers only, in parallel.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gguf_grammar::escape::terminal;
use gguf_grammar::summary::{size_label, Summary};
use gguf_grammar::validate::{self, Profile};
use gguf_grammar::{Gguf, GgufStr};
use gguf_tools::render::json;
use gguf_tools::set::{self, shard_name, GgufSet};
use rayon::prelude::*;

use crate::check::CheckProfile;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  gguf scan ~/models
  gguf scan --csv --profile ggml /data/models > models.csv")]
pub struct Args {
    /// One JSON object per line.
    #[arg(long)]
    jsonl: bool,
    /// Comma-separated values with a header line.
    #[arg(long, conflicts_with = "jsonl")]
    csv: bool,
    /// Whose rules give each model's verdict (as `gguf check --profile`).
    #[arg(long, value_enum, default_value = "strict")]
    profile: CheckProfile,
    /// Files and folders; folders are searched recursively for `*.gguf` (symbolic links are
    /// followed, each folder visited once); `-` is standard input, a single file.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

/// One model: a file, or a shard set (its first shard's path and all shards' bytes).
#[derive(Default)]
struct Row {
    /// The path's bytes, and the name and architecture as stored: text that is not UTF-8
    /// stays distinguishable from its lossy form in every format.
    path: Vec<u8>,
    bytes: u64,
    shards: usize,
    version: Option<u32>,
    byte_order: Option<&'static str>,
    architecture: Option<Vec<u8>>,
    name: Option<Vec<u8>>,
    size_label: Option<String>,
    parameters: Option<u128>,
    file_type: Option<u64>,
    quantization: Option<String>,
    tensors: Option<usize>,
    context_length: Option<u64>,
    /// The chat templates: families, named ones as `NAME=FAMILY`, and the screen's worst.
    template: Option<String>,
    verdict: &'static str,
    error: Option<String>,
}

const COLUMNS: [&str; 16] = [
    "path",
    "bytes",
    "shards",
    "version",
    "byte_order",
    "architecture",
    "name",
    "size_label",
    "parameters",
    "file_type",
    "quantization",
    "tensors",
    "context_length",
    "template",
    "verdict",
    "error",
];

/// Exit 0 when every model is accepted, 1 when one is rejected, 2 when one cannot be read.
pub fn run(args: Args) -> ExitCode {
    let profile: Profile = args.profile.into();
    let mut models = Vec::new();
    let mut visited = HashSet::new();
    let mut unlisted = HashMap::new();
    for path in &args.paths {
        find(path, true, &mut visited, &mut models, &mut unlisted);
    }
    let models = group_shards(models);

    let progress = io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(models.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} headers {elapsed}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let rows: Vec<Row> = models
        .par_iter()
        .map(|path| {
            let row = match unlisted.get(path) {
                Some(error) => Row {
                    path: path.as_os_str().as_bytes().to_vec(),
                    verdict: "unreadable",
                    error: Some(format!("cannot list the folder: {error}")),
                    ..Row::default()
                },
                None => row(path, profile),
            };
            if let Some(bar) = &progress {
                bar.inc(1);
            }
            row
        })
        .collect();
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }

    let mut out = BufWriter::new(io::stdout().lock());
    let written = if args.jsonl {
        rows.iter().try_for_each(|r| write_json(r, &mut out))
    } else if args.csv {
        write_csv(&rows, &mut out)
    } else {
        write_text(&rows, &mut out)
    };
    if let Err(e) = written.and_then(|()| out.flush()) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("gguf: writing output: {e}");
            return ExitCode::from(2);
        }
    }
    let worst = rows.iter().map(|r| match r.verdict {
        "accepted" => 0,
        "rejected" => 1,
        _ => 2,
    });
    ExitCode::from(worst.max().unwrap_or(0))
}

/// Adds `path` (a file given by name, or a `*.gguf` found in a folder) or, for a folder,
/// what is under it. A folder reached twice (a link loop, or given twice) is searched once;
/// an unreadable path becomes a row with its error (a folder that cannot be listed: its
/// error in `unlisted`).
fn find(
    path: &Path,
    given: bool,
    visited: &mut HashSet<(u64, u64)>,
    found: &mut Vec<PathBuf>,
    unlisted: &mut HashMap<PathBuf, io::Error>,
) {
    let Ok(meta) = fs::metadata(path) else {
        found.push(path.to_path_buf()); // reported as unreadable
        return;
    };
    if !meta.is_dir() {
        if given || path.extension().is_some_and(|e| e == "gguf") {
            found.push(path.to_path_buf());
        }
        return;
    }
    // The folder's identity, from the metadata already read: canonicalising each folder
    // would cost one `readlink` per level above it (quadratic in a deep chain).
    if !visited.insert((meta.dev(), meta.ino())) {
        return;
    }
    let entries = match fs::read_dir(path) {
        Ok(entries) => entries,
        Err(e) => {
            found.push(path.to_path_buf());
            unlisted.insert(path.to_path_buf(), e);
            return;
        }
    };
    let mut children: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    children.sort();
    for child in children {
        find(&child, false, visited, found, unlisted);
    }
}

/// One entry per model: a shard set's files become its first shard's path.
fn group_shards(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = HashSet::new();
    let mut models = Vec::new();
    for path in paths {
        let model = match shard_name(&path) {
            Some((prefix, _, count)) => set::shard_path(&prefix, 0, count),
            None => path,
        };
        if seen.insert(model.clone()) {
            models.push(model);
        }
    }
    models
}

fn row(path: &Path, profile: Profile) -> Row {
    let mut row = Row {
        path: path.as_os_str().as_bytes().to_vec(),
        verdict: "unreadable",
        ..Row::default()
    };
    if path == Path::new("-") {
        return stream_row(row, profile);
    }
    let set = match GgufSet::open(path) {
        Ok(set) => set,
        Err(e) => {
            row.error = Some(e.to_string());
            return row;
        }
    };
    row.shards = set.shards.len();
    row.bytes = set
        .shards
        .iter()
        .filter_map(|s| s.file.as_ref().ok())
        .map(|f| f.len())
        .sum();
    let parsed = match set.parse() {
        Ok(parsed) => parsed,
        Err(e) => {
            row.verdict = match e {
                set::SetError::Parse { .. } => "rejected",
                _ => "unreadable",
            };
            row.error = Some(e.to_string());
            return row;
        }
    };
    let model = parsed.model();
    describe(&model, &mut row);
    let mut first_error = None;
    for (shard, gguf) in parsed.shards.iter().enumerate() {
        let len = set.shards[shard].file.as_ref().map_or(0, |f| f.len());
        let found = validate::check(gguf, len, profile);
        if let Some(d) = found.iter().find(|d| profile.rejects(d.rejected_by)) {
            first_error.get_or_insert_with(|| {
                format!(
                    "{}: {} {}",
                    terminal(set.shards[shard].path.as_os_str().as_bytes()),
                    d.path,
                    d.message
                )
            });
        }
    }
    let set_findings: Vec<_> = set.diagnose().into_iter().map(|(_, d)| d).collect();
    if !set::accepts_set(&set_findings) {
        if let Some(d) = set_findings
            .iter()
            .find(|d| d.severity == validate::Severity::Error)
        {
            first_error.get_or_insert_with(|| format!("{} {}", d.path, d.message));
        }
    }
    row.verdict = if first_error.is_some() {
        "rejected"
    } else {
        "accepted"
    };
    row.error = first_error;
    row
}

/// The row of `-`: standard input's header, read as `dump -` reads it (a stream, or the file
/// it is redirected from); its size is what was read, or the file's.
fn stream_row(mut row: Row, profile: Profile) -> Row {
    let (header, len) = match crate::input::header_or_parse_error(Path::new("-")) {
        Ok(Ok(read)) => read,
        Ok(Err(e)) => {
            row.verdict = "rejected";
            row.error = Some(e.to_string());
            return row;
        }
        Err(failure) => {
            row.error = Some(failure.message().to_string());
            return row;
        }
    };
    let gguf = header.gguf();
    (row.shards, row.bytes) = (1, len);
    describe(gguf, &mut row);
    let found = validate::check(gguf, len, profile);
    if let Some(d) = found.iter().find(|d| profile.rejects(d.rejected_by)) {
        row.error = Some(format!("-: {} {}", d.path, d.message));
    }
    row.verdict = match row.error {
        Some(_) => "rejected",
        None => "accepted",
    };
    row
}

fn describe(gguf: &Gguf<'_>, row: &mut Row) {
    let s = Summary::of(gguf);
    row.version = Some(gguf.version().number());
    row.byte_order = Some(gguf.endian().name());
    let stored = |key| match gguf.get(key) {
        Some(gguf_grammar::Value::String(text)) => Some(text.as_bytes().to_vec()),
        _ => None,
    };
    row.architecture = stored("general.architecture");
    row.name = stored("general.name");
    row.size_label = s
        .size_label
        .map(str::to_string)
        .or_else(|| s.parameters.filter(|&p| p > 0).map(size_label));
    row.parameters = s.parameters;
    row.file_type = s.file_type;
    let mix: Vec<String> = s
        .tensor_types
        .iter()
        .map(|(ty, n)| format!("{n} {ty}"))
        .collect();
    row.quantization = (!mix.is_empty()).then(|| mix.join(", "));
    row.tensors = Some(s.tensors);
    row.context_length = s.hparams.context_length;
    row.template = crate::template::scan_cell(gguf);
}

/// The row's fields in [`COLUMNS`] order, as bytes (`None` when unknown).
fn fields(r: &Row) -> [Option<Vec<u8>>; 16] {
    let n = |v: Option<u64>| v.map(|v| v.to_string().into_bytes());
    let text = |v: Option<&str>| v.map(|v| v.as_bytes().to_vec());
    [
        Some(r.path.clone()),
        n(Some(r.bytes)),
        n(Some(r.shards as u64)),
        n(r.version.map(u64::from)),
        text(r.byte_order),
        r.architecture.clone(),
        r.name.clone(),
        text(r.size_label.as_deref()),
        r.parameters.map(|p| p.to_string().into_bytes()),
        n(r.file_type),
        text(r.quantization.as_deref()),
        n(r.tensors.map(|t| t as u64)),
        n(r.context_length),
        text(r.template.as_deref()),
        text(Some(r.verdict)),
        text(r.error.as_deref()),
    ]
}

fn write_text(rows: &[Row], out: &mut impl Write) -> io::Result<()> {
    for r in rows {
        let f = fields(r);
        let show = |i: usize| terminal(f[i].as_deref().unwrap_or(b"-")).into_owned();
        writeln!(
            out,
            "{}  {} bytes{}  v{} {}  {} \"{}\" {} {} params  {} tensors ({})  ctx {}  template {}  {}{}",
            show(0),
            show(1),
            if r.shards > 1 {
                format!(" in {} shards", r.shards)
            } else {
                String::new()
            },
            show(3),
            show(4),
            show(5),
            show(6),
            show(7),
            show(8),
            show(11),
            show(10),
            show(12),
            show(13),
            show(14),
            r.error
                .as_ref()
                .map_or(String::new(), |e| format!(": {}", terminal(e.as_bytes()))),
        )?;
    }
    Ok(())
}

fn write_csv(rows: &[Row], out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{}", COLUMNS.join(","))?;
    for r in rows {
        let cells: Vec<String> = fields(r)
            .iter()
            .map(|f| csv_cell(f.as_deref().unwrap_or(b"")))
            .collect();
        writeln!(out, "{}", cells.join(","))?;
    }
    Ok(())
}

/// A CSV cell of `bytes`: escaped as for the terminal (control and bidi characters, a
/// backslash, bytes that are not UTF-8), so that a cell is one line and two different names
/// never print alike; a cell that a spreadsheet would run as a formula (starting with `=`,
/// `+`, `-`, `@`, as OWASP's "CSV Injection" lists them) or that starts with `'` gets a `'`
/// in front, which the spreadsheet hides and a reader strips (one, so nothing is ambiguous);
/// quoted when it holds `,` or `"`.
fn csv_cell(bytes: &[u8]) -> String {
    let text = terminal(bytes);
    let text = match text.starts_with(['=', '+', '-', '@', '\'']) {
        true => format!("'{text}"),
        false => text.into_owned(),
    };
    match text.contains([',', '"']) {
        true => format!("\"{}\"", text.replace('"', "\"\"")),
        false => text,
    }
}

fn write_json(r: &Row, out: &mut impl Write) -> io::Result<()> {
    let numeric = [1, 2, 3, 8, 9, 11, 12];
    out.write_all(b"{")?;
    for (i, (column, value)) in COLUMNS.iter().zip(fields(r)).enumerate() {
        write!(out, "{}\"{column}\": ", if i == 0 { "" } else { ", " })?;
        match value {
            None => out.write_all(b"null")?,
            Some(v) if numeric.contains(&i) => out.write_all(&v)?,
            Some(v) => json::string(GgufStr(&v), out)?,
        }
    }
    out.write_all(b"}\n")
}
