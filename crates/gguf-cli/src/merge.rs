//! `gguf merge`: join a shard set into one model, byte for byte as `llama-gguf-split --merge`.

use std::path::PathBuf;

use gguf_tools::set::split::merge;

use crate::Failure;

#[derive(clap::Args)]
#[command(after_help = "Example:
  gguf merge model-00001-of-00003.gguf model.gguf")]
pub struct Args {
    /// The first shard, named PREFIX-00001-of-0000N.gguf; the others are found beside it.
    first_shard: PathBuf,
    /// The merged model (must not exist).
    output: PathBuf,
}

pub fn run(args: Args) -> Result<(), Failure> {
    if args.first_shard == std::path::Path::new("-") {
        return Err(Failure::Unreadable(
            "-: merge finds the other shards beside the first by its name, which standard \
             input has not: give the first shard's path"
                .into(),
        ));
    }
    merge(&args.first_shard, &args.output).map_err(crate::split::failure)?;
    Ok(())
}
