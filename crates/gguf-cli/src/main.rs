//! `gguf`: inspect GGUF files from the command line.
//!
//! `main.rs` holds only the list of commands; each command lives in a module of its own with
//! its arguments (`Args`) and its `run`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod atomic;
mod check;
mod convert_endian;
mod diff;
mod dump;
mod edit;
mod fit;
mod fixtures;
mod hash;
mod input;
mod map;
mod merge;
mod mutate;
mod releases;
mod remote;
mod scan;
mod snapshot;
mod split;
mod stats;
mod template;
mod tensor;
mod tokenize;

/// Inspect GGUF model files (llama.cpp / ggml).
///
/// Exit status: 0 on success, 1 when a file is not valid GGUF, 2 on usage errors or when a
/// file cannot be read.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The most bytes a header may take, from a file, a stream or a URL, and the most read
    /// of an input held whole (a manifest, a --set-file value, text to tokenize, mutate's
    /// file, a streamed edit); default 268435456 (256 MiB). More is refused, exit 2, rather
    /// than read into memory.
    #[arg(long, global = true, value_name = "BYTES")]
    max_header: Option<u64>,
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
    /// Print the annotated byte map of the header: one row per construct in file order, with
    /// offset (hex and decimal), length, raw bytes, construct path and meaning.
    ///
    /// Only the header is read, whatever the file's size. Text from the file is escaped;
    /// colour only on a terminal and never with NO_COLOR set.
    Map(map::Args),
    /// Will it fit? The memory llama.cpp allocates to run the model, from its header alone:
    /// per device, the weights (as llama.cpp assigns layers and buffers), the KV cache or
    /// recurrent state, the output buffer and the compute buffer (the one estimate), at each
    /// context size given (`--ctx-size 4096,32768,131072`).
    Fit(fit::Args),
    /// Write deterministic sample files (a minimal llama, a tiny Llama 3 with f32, f16, q8_0
    /// and q4_K tensors, a truncated header) with SHA256SUMS and manifest.json (each file's
    /// expected verdict per profile): the same bytes on every run.
    Fixtures(fixtures::Args),
    /// Print the stable, diff-friendly snapshot of files (every key/value with its offset,
    /// type and value, long arrays by their ends and a hash; every tensor), or compare them
    /// with stored snapshots (`--check DIR`) and show a unified diff of what changed.
    Snapshot(snapshot::Args),
    /// Break a file on purpose: one variant per rule of the validation table (bad magic,
    /// versions, byte order, truncation, keys, alignment, value types, lengths, dims, ggml
    /// types, tensor offsets...), each with its verdict per profile.
    Mutate(mutate::Args),
    /// Hash the tensor data as llama.cpp's llama-gguf-hash does (xxh64, SHA-1, SHA-256 per
    /// tensor and of the whole model, a UUIDv5 of the model) and verify against a manifest.
    Hash(hash::Args),
    /// Convert a file to the other byte order, header and tensor data, as gguf-py's
    /// gguf-convert-endian does (refusing the tensor types it refuses).
    ConvertEndian(convert_endian::Args),
    /// Print or export one tensor's values, dequantised to f32 as gguf-py does (q1_0, q2_0:
    /// as ggml 0.3.36) (text, JSON, raw f32 or .npy), optionally only some rows.
    Tensor(tensor::Args),
    /// Per-tensor statistics of the dequantised values: min, max, mean, standard deviation,
    /// NaN and infinity counts, tensors in parallel.
    Stats(stats::Args),
    /// Turn text into token ids with the file's vocabulary, as llama.cpp's llama-tokenize
    /// does (same defaults and flags; `--ids` prints what `llama-tokenize --ids` prints).
    Tokenize(tokenize::Args),
    /// List, print or render the chat templates a file carries (`tokenizer.chat_template` and
    /// `tokenizer.chat_template.NAME`), as transformers renders them, in a sandbox.
    ///
    /// Only the header is read. Exit status: 0 ok, 1 when the file is not GGUF or the template
    /// does not render, 2 on usage errors, unreadable input or no template of that name.
    Template(template::Args),
    /// Turn token ids back into text with the file's vocabulary, as llama_detokenize does.
    Detokenize(tokenize::DetokenizeArgs),
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
    /// file type, quantization mix, tensors, context length, chat templates (family, screen)
    /// and the profile's verdict with the first error. Only headers are read, in parallel; a
    /// progress bar shows on a terminal.
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
/// The refusal of an output that is the input file (exit 2).
fn onto_input(output: &std::path::Path) -> Failure {
    Failure::Unreadable(format!(
        "{}: is the input file; refusing to overwrite it",
        shown(output)
    ))
}

fn shown(path: &std::path::Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    gguf_grammar::escape::terminal(path.as_os_str().as_bytes()).into_owned()
}

/// The command line, or the end of the process with clap's message: a usage error echoes
/// arguments, so its text goes through the terminal escape line by line (help and version
/// are ours and print as clap prints them).
fn parse() -> Cli {
    let e = match Cli::try_parse() {
        Ok(cli) => return cli,
        Err(e) => e,
    };
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        e.exit();
    }
    let text = e.render().to_string();
    let lines: Vec<_> = text
        .split('\n')
        .map(|line| gguf_grammar::escape::terminal(line.as_bytes()))
        .collect();
    eprint!("{}", lines.join("\n"));
    std::process::exit(e.exit_code())
}

fn main() -> ExitCode {
    let cli = parse();
    if let Some(bytes) = cli.max_header {
        gguf_tools::source::set_max_header(bytes);
    }
    match cli.command {
        Command::Dump(args) => Failure::report(dump::run(args)),
        Command::Check(args) => check::run(args),
        Command::Edit(args) => Failure::report(edit::run(args)),
        Command::Map(args) => Failure::report(map::run(args)),
        Command::Fit(args) => Failure::report(fit::run(args)),
        Command::Fixtures(args) => Failure::report(fixtures::run(args)),
        Command::Snapshot(args) => snapshot::run(args),
        Command::Mutate(args) => mutate::run(args),
        Command::Hash(args) => hash::run(args),
        Command::ConvertEndian(args) => Failure::report(convert_endian::run(args)),
        Command::Tensor(args) => Failure::report(tensor::run(args)),
        Command::Stats(args) => Failure::report(stats::run(args)),
        Command::Tokenize(args) => Failure::report(tokenize::run(args)),
        Command::Detokenize(args) => Failure::report(tokenize::run_detokenize(args)),
        Command::Template(args) => Failure::report(template::run(args)),
        Command::Split(args) => Failure::report(split::run(args)),
        Command::Merge(args) => Failure::report(merge::run(args)),
        Command::Diff(args) => diff::run(args),
        Command::Scan(args) => scan::run(args),
    }
}
