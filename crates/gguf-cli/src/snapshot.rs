//! `gguf snapshot`: print the stable snapshot of files, or compare them with stored ones.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gguf_grammar::escape::terminal;
use gguf_tools::snapshot;

use crate::atomic;

#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 when every snapshot matches (or was written), 1 when one \
differs, is missing or a file is not valid GGUF, 2 when a file cannot be read.

Examples:
  gguf snapshot model.gguf                        # print it
  gguf snapshot --check snapshots/ out/*.gguf     # in CI: fail with a diff on any change
  gguf snapshot --check snapshots/ --update out/*.gguf   # accept the changes"
)]
pub struct Args {
    /// Compare each FILE with DIR/NAME.snap (NAME: the file name without `.gguf`); print a
    /// unified diff for each that differs. Reads the crate's (insta) snapshots as well.
    #[arg(long, value_name = "DIR")]
    check: Option<PathBuf>,
    /// With --check: write the snapshots that differ or are missing instead of failing.
    #[arg(long, requires = "check")]
    update: bool,
    /// The GGUF files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// What became of one file.
#[derive(PartialEq, PartialOrd)]
enum Outcome {
    Same,
    Changed,
    Unreadable,
}

pub fn run(args: Args) -> ExitCode {
    let mut out = io::stdout().lock();
    let mut worst = Outcome::Same;
    if let Some(dir) = &args.check {
        if let Some(clash) = name_clash(&args.files) {
            eprintln!("gguf: two files would share the snapshot {clash}.snap");
            return ExitCode::from(2);
        }
        for path in &args.files {
            let outcome = check(path, dir, args.update, &mut out);
            if outcome > worst {
                worst = outcome;
            }
        }
    } else {
        for (i, path) in args.files.iter().enumerate() {
            let text = match render(path) {
                Ok(text) => text,
                Err(outcome) => {
                    worst = worst.max_with(outcome);
                    continue;
                }
            };
            let written = if args.files.len() > 1 {
                let sep = if i == 0 { "" } else { "\n" };
                write!(out, "{sep}==> {} <==\n{text}", shown(path))
            } else {
                out.write_all(text.as_bytes())
            };
            if written.is_err() {
                break; // a closed pipe: nothing more to say
            }
        }
    }
    ExitCode::from(match worst {
        Outcome::Same => 0,
        Outcome::Changed => 1,
        Outcome::Unreadable => 2,
    })
}

impl Outcome {
    fn max_with(self, other: Outcome) -> Outcome {
        if other > self {
            other
        } else {
            self
        }
    }
}

fn shown(path: &Path) -> String {
    terminal(path.as_os_str().as_encoded_bytes()).into_owned()
}

/// The snapshot of the file at `path`, or (with the message printed) why there is none.
fn render(path: &Path) -> Result<String, Outcome> {
    let parsed = crate::input::header_or_parse_error(path).map_err(|failure| {
        eprintln!("gguf: {}", failure.message());
        Outcome::Unreadable
    })?;
    let (header, file_size) = parsed.map_err(|e| {
        eprintln!("gguf: {}: {e}", shown(path));
        Outcome::Changed
    })?;
    Ok(snapshot::render_with_size(header.gguf(), file_size))
}

/// The snapshot's name: the file name without its `.gguf` extension.
fn name(path: &Path) -> String {
    let file_name = path.file_name().unwrap_or(path.as_os_str());
    let stem = Path::new(file_name).file_stem().unwrap_or(file_name);
    stem.to_string_lossy().into_owned()
}

fn name_clash(files: &[PathBuf]) -> Option<String> {
    let mut seen = HashMap::new();
    files.iter().find_map(|path| {
        let name = name(path);
        match seen.insert(name.clone(), path) {
            Some(other) if other != path => Some(terminal(name.as_bytes()).into_owned()),
            _ => None,
        }
    })
}

/// The body of a stored snapshot: without insta's `---`-delimited metadata header.
fn body(stored: &str) -> &str {
    stored
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
        .map_or(stored, |(_, body)| body)
}

fn check(path: &Path, dir: &Path, update: bool, out: &mut impl Write) -> Outcome {
    let text = match render(path) {
        Ok(text) => text,
        Err(outcome) => return outcome,
    };
    let snap = dir.join(format!("{}.snap", name(path)));
    let stored = match fs::read_to_string(&snap) {
        Ok(stored) => Some(stored),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            eprintln!("gguf: {}: {e}", shown(&snap));
            return Outcome::Unreadable;
        }
    };
    if stored.as_deref().map(body) == Some(text.as_str()) {
        return Outcome::Same;
    }
    if update {
        let header = format!(
            "---\nsource: gguf snapshot\ninput_file: {}\n---\n",
            shown(path)
        );
        let written = fs::create_dir_all(dir)
            .and_then(|()| atomic::write(&snap, format!("{header}{text}").as_bytes()));
        return match written {
            Ok(()) => {
                eprintln!("gguf: updated {}", shown(&snap));
                Outcome::Same
            }
            Err(e) => {
                eprintln!("gguf: {}: {e}", shown(&snap));
                Outcome::Unreadable
            }
        };
    }
    match stored {
        None => eprintln!(
            "gguf: {}: no snapshot {} (write it with --update)",
            shown(path),
            shown(&snap)
        ),
        Some(stored) => {
            eprintln!("gguf: {}: differs from {}", shown(path), shown(&snap));
            let diff = similar::TextDiff::from_lines(body(&stored), text.as_str());
            let _ = write!(
                out,
                "{}",
                diff.unified_diff()
                    .header(&shown(&snap), &shown(path))
                    .context_radius(2)
            );
        }
    }
    Outcome::Changed
}
