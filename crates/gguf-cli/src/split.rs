//! `gguf split`: cut a model into a shard set, byte for byte as `llama-gguf-split`.

use std::path::{Path, PathBuf};

use gguf_grammar::escape::{controls, terminal};
use gguf_tools::edit::EditError;
use gguf_tools::set::split::{split, SplitError, SplitLimit, SplitOptions};
use gguf_tools::set::SetError;

use crate::Failure;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  gguf split --split-max-size 2G model.gguf out/model
      writes out/model-00001-of-0000N.gguf ... and prints their paths
  gguf split --split-max-tensors 100 --no-tensor-first-split model.gguf model")]
pub struct Args {
    /// At most N tensors per shard (the default, with N = 128).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    split_max_tensors: Option<u64>,
    /// At most N megabytes (M, 10^6 bytes) or gigabytes (G, 10^9 bytes) of tensor data per
    /// shard, each tensor counted rounded up to 32 bytes, metadata not counted.
    #[arg(long, value_name = "N(M|G)", value_parser = parse_size, conflicts_with = "split_max_tensors")]
    split_max_size: Option<u64>,
    /// Give the first shard the metadata only, no tensors.
    #[arg(long)]
    no_tensor_first_split: bool,
    /// The model to split.
    input: PathBuf,
    /// Shards are written to OUT_PREFIX-00001-of-0000N.gguf ... (existing ones replaced).
    out_prefix: PathBuf,
}

/// `100M` → 100,000,000 and `2G` → 2,000,000,000, as `llama-gguf-split` reads them.
fn parse_size(text: &str) -> Result<u64, String> {
    let (number, unit) = match text.strip_suffix('M') {
        Some(n) => (n, 1_000_000),
        None => match text.strip_suffix('G') {
            Some(n) => (n, 1_000_000_000),
            None => return Err("give a whole number followed by M or G, e.g. 500M".into()),
        },
    };
    match number.parse::<u64>() {
        Ok(n) if n > 0 => n
            .checked_mul(unit)
            .ok_or_else(|| "the size does not fit in 64 bits".into()),
        _ => Err("give a positive whole number followed by M or G, e.g. 500M".into()),
    }
}

pub fn run(args: Args) -> Result<(), Failure> {
    let limit = match (args.split_max_size, args.split_max_tensors) {
        (Some(bytes), _) => SplitLimit::Bytes(bytes),
        (None, Some(n)) => SplitLimit::Tensors(n),
        (None, None) => SplitOptions::default().limit,
    };
    let options = SplitOptions {
        limit,
        no_tensor_first_split: args.no_tensor_first_split,
    };
    let shards = split(&args.input, &args.out_prefix, &options).map_err(failure)?;
    for shard in shards {
        println!("{}", terminal(shard.as_os_str().as_encoded_bytes()));
    }
    Ok(())
}

/// Exit 1 when an input is not (usable) GGUF, 2 for files that cannot be read or written
/// and for limits that cannot be met.
pub fn failure(e: SplitError) -> Failure {
    // Names in the library's reasons are escaped there; paths are escaped here, once.
    let message = match &e {
        SplitError::Refused { path, reason } => {
            format!("{}: {}", crate::shown(path), controls(reason))
        }
        SplitError::OntoInput { path } => return crate::onto_input(path),
        SplitError::Write(write) => crate::atomic::message(Path::new(""), write),
        e => controls(&e.to_string()).into_owned(),
    };
    match e {
        // A check failure includes a source that shrank while being copied.
        SplitError::Input(SetError::Parse { .. })
        | SplitError::Refused { .. }
        | SplitError::Write(EditError::Check(_)) => Failure::Invalid(message),
        _ => Failure::Unreadable(message),
    }
}
