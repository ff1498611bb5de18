//! `gguf snapshot`: print the stable snapshot of files, or compare them with stored ones.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gguf_grammar::escape::terminal;
use gguf_testkit::snapshot;

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
    let limit = STORED_LIMIT.max(2 * text.len() as u64);
    let stored = match read_stored(&snap, limit) {
        Ok(stored) => stored,
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
            .map_err(|e| format!("{}: {e}", shown(dir)))
            .and_then(|()| {
                let snapshot = format!("{header}{text}");
                atomic::write(&snap, snapshot.as_bytes(), atomic::Name::Generated)
            });
        return match written {
            Ok(()) => {
                eprintln!("gguf: updated {}", shown(&snap));
                Outcome::Same
            }
            Err(e) => {
                eprintln!("gguf: {e}");
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
            let _ = write_diff(body(&stored), &text, (&shown(&snap), &shown(path)), out);
        }
    }
    Outcome::Changed
}

/// The largest stored snapshot read (or twice the file's own snapshot, when larger).
const STORED_LIMIT: u64 = 64 << 20;

/// The snapshot stored at `snap`, `None` when there is none. Only a regular file is read,
/// never through a link, a FIFO or a device (in CI a pull request controls the folder), and
/// at most `limit` bytes of it.
fn read_stored(snap: &Path, limit: u64) -> Result<Option<String>, String> {
    use rustix::fs::{Mode, OFlags};
    let meta = match fs::symlink_metadata(snap) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let not_regular = "is not a regular file; refusing to read it as a snapshot";
    if meta.file_type().is_symlink() {
        return Err("is a symbolic link; refusing to read a snapshot through it".into());
    }
    if !meta.is_file() {
        return Err(not_regular.into());
    }
    // No link followed and no wait on a FIFO put in its place since.
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = fs::File::from(
        rustix::fs::open(snap, flags, Mode::empty()).map_err(|e| io::Error::from(e).to_string())?,
    );
    if !file.metadata().map_err(|e| e.to_string())?.is_file() {
        return Err(not_regular.into());
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "larger than {limit} bytes; refusing to read it as a snapshot"
        ));
    }
    String::from_utf8(bytes).map(Some).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        format!("not UTF-8 (byte {at}); not a snapshot")
    })
}

/// The unified diff of `stored` and `text` (2 lines of context), the stored lines escaped
/// for the terminal as the file's side already is: only they can hold raw controls, as the
/// lines both sides share are the file's.
fn write_diff(
    stored: &str,
    text: &str,
    (stored_name, text_name): (&str, &str),
    out: &mut impl Write,
) -> io::Result<()> {
    let diff = similar::TextDiff::from_lines(stored, text);
    let mut header = Some((stored_name, text_name));
    for hunk in diff.unified_diff().context_radius(2).iter_hunks() {
        if let Some((old, new)) = header.take() {
            writeln!(out, "--- {old}\n+++ {new}")?;
        }
        writeln!(out, "{}", hunk.header())?;
        for change in hunk.iter_changes() {
            let line = change.value();
            let (line, newline) = match line.strip_suffix('\n') {
                Some(line) => (line, true),
                None => (line, false),
            };
            match change.tag() {
                similar::ChangeTag::Delete => write!(out, "-{}", stored_line(line))?,
                tag => write!(out, "{tag}{line}")?,
            }
            if newline {
                writeln!(out)?;
            } else {
                writeln!(out, "\n\\ No newline at end of file")?;
            }
        }
    }
    Ok(())
}

/// A stored line with what the terminal would obey escaped; its backslashes are kept, as the
/// stored text is already in the escaped form the file's side is rendered in.
fn stored_line(line: &str) -> String {
    let parts: Vec<_> = line
        .split('\\')
        .map(|part| terminal(part.as_bytes()))
        .collect();
    parts.join("\\")
}
