//! `gguf edit`: set, remove or rename metadata keys, keeping every tensor's bytes.

use std::path::PathBuf;

use gguf_grammar::GgufFile;

use crate::Failure;

#[derive(clap::Args)]
pub struct Args {
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
}

pub fn run(args: Args) -> Result<(), Failure> {
    let dest = args.output.unwrap_or_else(|| args.file.clone());
    edit(&args.file, &args.set, &args.remove, &args.rename, &dest)
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
