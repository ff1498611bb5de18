//! `gguf`: inspect GGUF files from the command line.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gguf_grammar::{render, GgufFile};

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
        /// The GGUF file.
        file: PathBuf,
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
            file,
        } => dump(&file, json, summary),
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
