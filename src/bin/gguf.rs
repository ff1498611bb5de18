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
