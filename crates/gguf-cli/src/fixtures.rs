//! `gguf fixtures`: write the deterministic sample files, their checksums and manifest.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use gguf_testkit::fixtures;
use gguf_tools::edit::EditError;

use crate::{atomic, shown, Failure};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  gguf fixtures testdata/gguf
  gguf fixtures out && (cd out && sha256sum -c SHA256SUMS)
  gguf fixtures --arch qwen2 out          tiny-qwen2.gguf: a tiny random qwen2 model
  gguf fixtures --all-archs out           one tiny model per architecture of the schema's table")]
pub struct Args {
    /// The folder to write into (created if missing; files of the same names are replaced,
    /// all or none; a link or special file at one of those names is refused).
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
    let all: Vec<(&str, &[u8])> = files
        .iter()
        .map(|f| (f.name, f.bytes.as_slice()))
        .chain(extra.iter().map(|(name, text)| (*name, text.as_bytes())))
        .collect();
    write_set(dir, &all).map_err(Failure::Unreadable)
}

/// Writes the whole set or nothing: the files go into a temporary folder (beside `dir`
/// when it does not exist yet, then renamed to it; inside it otherwise, then each renamed
/// into place). The names are ours: a link or anything but a regular file at one of them
/// is refused before anything is written.
fn write_set(dir: &Path, all: &[(&str, &[u8])]) -> Result<(), String> {
    fn fail(path: &Path) -> impl Fn(io::Error) -> String + '_ {
        move |e| format!("{}: {e}", shown(path))
    }
    let exists = match fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => true,
        Ok(_) if fs::metadata(dir).is_ok_and(|m| m.is_dir()) => true,
        Ok(_) => return Err(format!("{}: not a folder", shown(dir))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => false,
        Err(e) => return Err(fail(dir)(e)),
    };
    if exists {
        for (name, _) in all {
            let path = dir.join(name);
            match fs::symlink_metadata(&path) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(atomic::message(&path, &EditError::Linked(path.clone())))
                }
                Ok(meta) if !meta.is_file() => {
                    return Err(atomic::message(&path, &EditError::NotRegular(path.clone())))
                }
                _ => {}
            }
        }
    }
    let temp_name = format!(".gguf-fixtures.{}.tmp", std::process::id());
    let temp = match exists {
        true => dir.join(&temp_name),
        false => {
            let parent = match dir.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            fs::create_dir_all(parent).map_err(fail(parent))?;
            parent.join(&temp_name)
        }
    };
    let _ = fs::remove_dir_all(&temp);
    fs::create_dir(&temp).map_err(fail(&temp))?;
    let written = (|| {
        for (name, bytes) in all {
            let path = temp.join(name);
            let mut file = File::options()
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(fail(&path))?;
            file.write_all(bytes)
                .and_then(|()| file.sync_all())
                .map_err(fail(&path))?;
        }
        if !exists {
            return fs::rename(&temp, dir).map_err(fail(dir));
        }
        for (name, _) in all {
            let path = dir.join(name);
            fs::rename(temp.join(name), &path).map_err(fail(&path))?;
        }
        Ok(())
    })();
    let _ = fs::remove_dir_all(&temp);
    written
}
