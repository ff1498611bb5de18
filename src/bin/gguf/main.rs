//! `gguf`: inspect GGUF files from the command line.
//!
//! `main.rs` holds only the list of commands; each command lives in a module of its own with
//! its arguments (`Args`) and its `run`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod check;
mod diff;
mod dump;
mod edit;
mod merge;
mod remote;
mod scan;
mod split;

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
    /// start (relative offsets unchanged). Edits apply in this order: removals, renames, sets.
    /// The output is written to a temporary file in the destination's folder, checked, and
    /// renamed into place: a failure never leaves a damaged or half-written file.
    Edit(edit::Args),
    /// Cut a model into a shard set, byte for byte as llama.cpp's `llama-gguf-split`.
    ///
    /// Writes PREFIX-00001-of-0000N.gguf ...: the first shard holds the metadata, every shard
    /// gets split.no, split.count and split.tensors.count. Prints the shards' paths. Each shard is written beside its destination, checked and renamed into place.
    Split(split::Args),
    /// Join a shard set into one model, byte for byte as `llama-gguf-split --merge`.
    ///
    /// Tensor data is streamed, never held in memory; the output is written beside its
    /// destination, checked (header and every tensor's bytes) and renamed into place.
    Merge(merge::Args),
    /// Show what differs between two models: metadata, tensors and, with --data, tensor bytes.
    ///
    /// Keys added, removed or changed (arrays summarised by length and first differing
    /// index), tensor descriptors added, removed or changed (dims, type, offset) and, with
    /// --data, tensors whose bytes differ. A shard stands for its whole set.
    ///
    /// Exit status: 0 when equal, 1 when different, 2 when a model cannot be read.
    Diff(diff::Args),
    /// List every model under the given paths, one row each (a shard set is one row).
    ///
    /// Each row: path, bytes, version, byte order, architecture, name, size label, parameters,
    /// file type, quantization mix, tensors, context length and the profile's verdict with the
    /// first error. Only headers are read, in parallel; a progress bar shows on a terminal.
    ///
    /// Exit status: 0 when every model is accepted, 1 when one is rejected, 2 when one cannot
    /// be read (it is still a row).
    Scan(scan::Args),
}

/// Why a command failed, which decides its exit status.
enum Failure {
    /// The input is not valid GGUF: exit 1.
    Invalid(String),
    /// The file could not be read: exit 2.
    Unreadable(String),
}

impl Failure {
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

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Dump(args) => Failure::report(dump::run(args)),
        Command::Check(args) => check::run(args),
        Command::Edit(args) => Failure::report(edit::run(args)),
        Command::Split(args) => Failure::report(split::run(args)),
        Command::Merge(args) => Failure::report(merge::run(args)),
        Command::Diff(args) => diff::run(args),
        Command::Scan(args) => scan::run(args),
    }
}
