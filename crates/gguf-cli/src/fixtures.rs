//! `gguf fixtures`: write the deterministic sample files, their checksums and manifest.

use std::fs;
use std::path::PathBuf;

use gguf_tools::fixtures;

use crate::{atomic, Failure};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  gguf fixtures testdata/gguf
  gguf fixtures out && (cd out && sha256sum -c SHA256SUMS)")]
pub struct Args {
    /// The folder to write into (created if missing; files of the same names are replaced).
    outdir: PathBuf,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let dir = &args.outdir;
    let fail = |what: &str, e: std::io::Error| Failure::Unreadable(format!("{what}: {e}"));
    fs::create_dir_all(dir).map_err(|e| fail(&dir.display().to_string(), e))?;
    let files = fixtures::all();
    let extra = [
        ("SHA256SUMS", fixtures::sha256sums(&files)),
        ("manifest.json", fixtures::manifest(&files)),
    ];
    let all = files
        .iter()
        .map(|f| (f.name, f.bytes.as_slice()))
        .chain(extra.iter().map(|(name, text)| (*name, text.as_bytes())));
    for (name, bytes) in all {
        let path = dir.join(name);
        atomic::write(&path, bytes).map_err(|e| fail(&path.display().to_string(), e))?;
    }
    Ok(())
}
