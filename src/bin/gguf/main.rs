//! `gguf`: inspect GGUF files from the command line.
//!
//! `main.rs` holds only the list of commands; each command lives in a module of its own with
//! its arguments (`Args`) and its `run`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod check;
mod dump;
mod edit;
mod input;

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
    Dump(dump::Args),
    /// Check files against a reader's or the specification's rules: one line per diagnostic,
    /// `FILE:OFFSET: error[CODE] PATH: MESSAGE`.
    ///
    /// Exit status: 0 when the profile accepts every file, 1 when it rejects one (a file that
    /// does not parse is rejected), 2 when a file cannot be read at all.
    Check(check::Args),
    /// Edit metadata: set, remove or rename keys, keeping every tensor's bytes.
    ///
    /// The header is rewritten and the tensor data copied after it at the re-aligned data
    /// start (relative offsets unchanged). Edits apply in the order given. The output is
    /// written to a temporary file beside the destination (a link's target), checked (every
    /// tensor byte), and renamed into place, keeping owner and mode; an in-place edit holds
    /// a lock on the file. A failure or Ctrl-C never leaves a damaged or half-written file.
    ///
    /// Refused (exit 1, nothing written): a source that lacks tensor data
    /// (--allow-data-loss), an alignment change on a file with tensors, an alignment above
    /// 16 MiB. Refused (exit 2): a type change (--force-type), an empty or duplicate key, a
    /// destination that is not a regular file, has other hard links (--break-links) or is
    /// read-only (--force).
    Edit(edit::Args),
}

/// Why a command failed, which decides its exit status.
enum Failure {
    /// The input is not valid GGUF: exit 1.
    Invalid(String),
    /// The file could not be read: exit 2.
    Unreadable(String),
}

impl Failure {
    /// The message, without the exit status.
    fn message(&self) -> &str {
        match self {
            Failure::Invalid(message) | Failure::Unreadable(message) => message,
        }
    }

    /// Print the message on stderr and give the exit status.
    fn report(result: Result<(), Failure>) -> ExitCode {
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
}

/// A path from the command line as it is shown in messages: control and bidi characters
/// escaped, like all text that did not come from us.
fn shown(path: &std::path::Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    gguf_grammar::render::escape::terminal(path.as_os_str().as_bytes()).into_owned()
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Dump(args) => Failure::report(dump::run(args)),
        Command::Check(args) => check::run(args),
        Command::Edit(args) => Failure::report(edit::run(args)),
    }
}
