//! `gguf fixtures`: write the deterministic sample files, their checksums and manifest.

use std::fs;
use std::path::PathBuf;

use gguf_tools::fixtures;

use crate::{atomic, Failure};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  gguf fixtures testdata/gguf
  gguf fixtures out && (cd out && sha256sum -c SHA256SUMS)
  gguf fixtures --arch qwen2 out          tiny-qwen2.gguf: a tiny random qwen2 model
  gguf fixtures --all-archs out           one tiny model per architecture of the schema's table")]
pub struct Args {
    /// The folder to write into (created if missing; files of the same names are replaced).
    outdir: PathBuf,
    /// Instead of the sample files, a tiny random model of this architecture (repeatable):
    /// one of the schema's table that llama.cpp loads (an unknown name lists them).
    #[arg(long = "arch", value_name = "NAME")]
    archs: Vec<String>,
    /// Instead of the sample files, a tiny random model of every architecture of the table.
    #[arg(long, conflicts_with = "archs")]
    all_archs: bool,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let dir = &args.outdir;
    let fail = |what: &str, e: std::io::Error| Failure::Unreadable(format!("{what}: {e}"));
    fs::create_dir_all(dir).map_err(|e| fail(&dir.display().to_string(), e))?;
    let files = if args.all_archs {
        fixtures::all_archs()
    } else if !args.archs.is_empty() {
        let mut files = Vec::new();
        for arch in &args.archs {
            let known = fixtures::arch_file_name(arch);
            let (Some(name), Some(bytes)) = (known, fixtures::tiny_model(arch)) else {
                let names = fixtures::arch_names();
                return Err(Failure::Unreadable(format!(
                    "no tiny model for architecture {}: the table has {}",
                    gguf_grammar::escape::terminal(arch.as_bytes()),
                    names.join(", ")
                )));
            };
            files.push(fixtures::Fixture { name, bytes });
        }
        files
    } else {
        fixtures::all()
    };
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
