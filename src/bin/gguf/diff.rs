//! `gguf diff`: what differs between two models' metadata, tensor descriptors and (with
//! `--data`) tensor bytes.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gguf_grammar::render::diff::{self, Diff};
use gguf_grammar::render::escape::terminal;
use gguf_grammar::set::{GgufSet, ParsedSet};
use gguf_grammar::source::http::is_remote;
use gguf_grammar::Gguf;

use crate::{remote, Failure};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  gguf diff model.gguf edited.gguf
  gguf diff --data --json a-00001-of-00002.gguf b.gguf")]
pub struct Args {
    /// Also compare every tensor present in both (same size) byte for byte.
    #[arg(long)]
    data: bool,
    /// Print one JSON object with the fields equal, keys, tensors and data.
    #[arg(long)]
    json: bool,
    /// For shards, compare the files alone rather than their whole sets.
    #[arg(long)]
    shard_only: bool,
    /// The first model: a file, any shard of a set, or a URL (its header; a shard's URL
    /// stands for that file alone).
    a: PathBuf,
    /// The second model.
    b: PathBuf,
}

/// Exit 0 when equal, 1 when different, 2 when a model cannot be read or parsed.
pub fn run(args: Args) -> ExitCode {
    match diff_models(&args) {
        Ok(d) => {
            let mut out = BufWriter::new(io::stdout().lock());
            let written = match args.json {
                true => diff::write_json(&d, &mut out),
                false => diff::write_text(&d, &mut out),
            };
            if let Err(e) = written.and_then(|()| out.flush()) {
                if e.kind() != io::ErrorKind::BrokenPipe {
                    eprintln!("gguf: writing output: {e}");
                    return ExitCode::from(2);
                }
            }
            ExitCode::from(u8::from(!d.is_empty()))
        }
        Err(message) => {
            eprintln!("gguf: {}", terminal(message.as_bytes()));
            ExitCode::from(2)
        }
    }
}

fn diff_models(args: &Args) -> Result<Diff, String> {
    let (a, b) = (
        load(&args.a, args.shard_only, args.data)?,
        load(&args.b, args.shard_only, args.data)?,
    );
    let (a, b) = (parse(&a)?, parse(&b)?);
    let offsets = a.shards.len() == 1 && b.shards.len() == 1;
    if !offsets {
        eprintln!("note: a shard set's tensor offsets are relative to each shard: offsets are not compared");
    }
    let mut d = diff::compare_with(&a.model(), &b.model(), offsets);
    if args.data {
        d.data = diff::data_differences(&tensor_data(&args.a, &a)?, &tensor_data(&args.b, &b)?);
    }
    Ok(d)
}

/// A model on disk (a file or a shard set), or the header of a file at a URL.
enum Model {
    Local(GgufSet),
    Remote(String, Vec<u8>),
}

fn load(path: &Path, shard_only: bool, data: bool) -> Result<Model, String> {
    let Some(url) = path.to_str().filter(|p| is_remote(p)) else {
        return open(path, shard_only).map(Model::Local);
    };
    if data {
        return Err(format!(
            "{url}: --data compares local files only (a URL gives its header)"
        ));
    }
    match remote::fetch_header(url, false) {
        Ok((header, _)) => Ok(Model::Remote(url.to_string(), header)),
        Err(Failure::Invalid(message) | Failure::Unreadable(message)) => Err(message),
    }
}

fn parse(model: &Model) -> Result<ParsedSet<'_>, String> {
    match model {
        Model::Local(set) => set.parse().map_err(|e| e.to_string()),
        Model::Remote(url, header) => Ok(ParsedSet {
            shards: vec![Gguf::parse(header).map_err(|e| format!("{url}: {e}"))?],
        }),
    }
}

fn open(path: &Path, shard_only: bool) -> Result<GgufSet, String> {
    let set = GgufSet::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if shard_only && set.is_sharded() {
        // The given file alone: a set of one.
        let shard = set
            .shards
            .into_iter()
            .find(|s| s.path == path)
            .ok_or_else(|| format!("{}: not found in its set", path.display()))?;
        return Ok(GgufSet {
            prefix: None,
            shards: vec![shard],
        });
    }
    Ok(set)
}

/// A tensor's name and its bytes.
type NamedData<'a> = (&'a [u8], &'a [u8]);

/// Every tensor's name and bytes, read from its shard.
fn tensor_data<'a>(path: &Path, set: &ParsedSet<'a>) -> Result<Vec<NamedData<'a>>, String> {
    set.tensors()
        .map(|(shard, t)| {
            let bytes = set.shards[shard].bytes;
            let range = t.data_offset.zip(t.n_bytes).and_then(|(start, len)| {
                let start = usize::try_from(start).ok()?;
                bytes.get(start..start.checked_add(usize::try_from(len).ok()?)?)
            });
            range.map(|data| (t.info.name.as_bytes(), data)).ok_or_else(|| {
                format!(
                    "{}: tensor \"{}\": its data has no known size or lies past the end of the file",
                    path.display(),
                    t.info.name
                )
            })
        })
        .collect()
}
