//! `gguf diff`: what differs between two models' metadata, tensor descriptors and (with
//! `--data`) tensor bytes.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gguf_grammar::escape::terminal;
use gguf_grammar::file_range::{read_exact_at, RangeError, COPY_BUFFER};
use gguf_grammar::Gguf;
use gguf_tools::render::diff;
use gguf_tools::set::{GgufSet, ParsedSet, SetError};
use gguf_tools::source::http::is_remote;

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
    /// The first model: a file, any shard of a set, or a URL (its header; a shard's URL stands for
    /// that file alone). A URL's read stops after 10 s to connect, 30 s to the first byte or 120 s
    /// in all (one retry at most).
    a: PathBuf,
    /// The second model.
    b: PathBuf,
}

/// Exit 0 when equal, 1 when different or when a model is not valid GGUF (its tensor data
/// past the end of its file, or a file shrinking while read), 2 when a model cannot be read.
/// The changes are written as they are found, not kept (a million changed keys cost no more
/// memory than their headers).
pub fn run(args: Args) -> ExitCode {
    let mut out = BufWriter::new(io::stdout().lock());
    let result = diff_models(&args, &mut out).and_then(|differs| {
        out.flush().map_err(Output)?;
        Ok(differs)
    });
    match result {
        Ok(differs) => ExitCode::from(u8::from(differs)),
        // Stopped reading: what was written differs (an equal diff writes nothing in text).
        Err(Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::from(1),
        Err(Output(e)) => {
            eprintln!("gguf: writing output: {e}");
            ExitCode::from(2)
        }
        Err(Model(failure)) => {
            let _ = out.flush();
            let message = terminal(failure.message().as_bytes()).into_owned();
            Failure::report(Err(match failure {
                Failure::Invalid(_) => Failure::Invalid(message),
                Failure::Unreadable(_) => Failure::Unreadable(message),
            }))
        }
    }
}

/// Why a diff stopped: a model that cannot be compared, or the output.
enum Stop {
    Model(Failure),
    Output(io::Error),
}
use Stop::{Model, Output};

impl From<Failure> for Stop {
    fn from(failure: Failure) -> Stop {
        Model(failure)
    }
}

/// Compares and writes; whether the models differ.
fn diff_models(args: &Args, out: &mut impl Write) -> Result<bool, Stop> {
    let data_path = crate::input::data_path;
    let (a_path, b_path) = (data_path(&args.a)?, data_path(&args.b)?);
    let (a_model, b_model) = (
        load(&a_path, args.shard_only, args.data).map_err(Failure::Unreadable)?,
        load(&b_path, args.shard_only, args.data).map_err(Failure::Unreadable)?,
    );
    let (a, b) = (parse(&a_model)?, parse(&b_model)?);
    let offsets = a.shards.len() == 1 && b.shards.len() == 1;
    if !offsets {
        eprintln!("note: a shard set's tensor offsets are relative to each shard: offsets are not compared");
    }
    let mut data = Vec::new();
    if let (true, Location::Local(a_set), Location::Local(b_set)) = (args.data, &a_model, &b_model)
    {
        let (a_data, b_data) = (tensor_data(a_set, &a)?, tensor_data(b_set, &b)?);
        data = diff::data_differences(&a_data, &b_data, |x, y| data_differs(x, y))?;
    }
    let (a, b) = (a.model(), b.model());
    let mut differs = !data.is_empty();
    if args.json {
        // `equal` comes first: a pass that stops at the first change, then one that writes.
        differs |= diff::for_each_change(&a, &b, offsets, |_, _| Err(())).is_err();
        let mut json = diff::JsonWriter::start(!differs, out).map_err(Output)?;
        diff::for_each_change(&a, &b, offsets, |section, c| json.change(section, &c))
            .map_err(Output)?;
        json.finish(&data).map_err(Output)?;
    } else {
        diff::for_each_change(&a, &b, offsets, |section, c| {
            differs = true;
            diff::write_text_change(section, &c, out)
        })
        .map_err(Output)?;
        for name in &data {
            diff::write_text_data(name, out).map_err(Output)?;
        }
    }
    Ok(differs)
}

/// A model on disk (a file or a shard set), or the header of a file at a URL.
enum Location {
    Local(GgufSet),
    Remote(String, Vec<u8>),
}

fn load(path: &Path, shard_only: bool, data: bool) -> Result<Location, String> {
    let Some(url) = path.to_str().filter(|p| is_remote(p)) else {
        return open(path, shard_only).map(Location::Local);
    };
    if data {
        return Err(format!(
            "{url}: --data compares local files only (a URL gives its header)"
        ));
    }
    match remote::fetch_header(url, false) {
        Ok((header, _)) => Ok(Location::Remote(url.to_string(), header)),
        Err(Failure::Invalid(message) | Failure::Unreadable(message)) => Err(message),
    }
}

fn parse(model: &Location) -> Result<ParsedSet<'_>, Failure> {
    match model {
        Location::Local(set) => set.parse().map_err(|e| match e {
            SetError::Parse { .. } => Failure::Invalid(e.to_string()),
            _ => Failure::Unreadable(e.to_string()),
        }),
        Location::Remote(url, header) => Ok(ParsedSet {
            shards: vec![Gguf::parse(header).map_err(|e| Failure::Invalid(format!("{url}: {e}")))?],
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

/// Where a tensor's data is: its shard's path and file, and the range in that file.
struct Located<'s> {
    path: &'s Path,
    file: &'s File,
    range: Range<u64>,
}

/// Every tensor's name and where its data is, checked against its shard's length.
fn tensor_data<'s>(
    set: &'s GgufSet,
    parsed: &ParsedSet<'s>,
) -> Result<Vec<(&'s [u8], Located<'s>)>, Failure> {
    parsed
        .tensors()
        .map(|(shard, t)| {
            let shard = &set.shards[shard];
            let file = shard
                .file
                .as_ref()
                .map_err(|e| Failure::Unreadable(format!("{}: {e}", shard.path.display())))?;
            let range = t
                .data_range(file.len())
                .map_err(|e| Failure::Invalid(format!("{}: {e}", shard.path.display())))?;
            let located = Located {
                path: &shard.path,
                file: file.file(),
                range,
            };
            Ok((t.info.name.as_bytes(), located))
        })
        .collect()
}

/// Whether two tensors of the same size hold different bytes, read with positioned reads
/// through buffers of at most [`COPY_BUFFER`] bytes each (tensors of different sizes are
/// reported as changed descriptors instead).
fn data_differs(a: &Located<'_>, b: &Located<'_>) -> Result<bool, Failure> {
    let len = a.range.end - a.range.start;
    if len != b.range.end - b.range.start {
        return Ok(false);
    }
    let size = usize::try_from(len).map_or(COPY_BUFFER, |n| n.min(COPY_BUFFER));
    let (mut x, mut y) = (vec![0u8; size], vec![0u8; size]);
    let mut done = 0;
    while done < len {
        let n = usize::try_from(len - done).map_or(size, |left| left.min(size));
        for (side, buf) in [(a, &mut x), (b, &mut y)] {
            read_exact_at(side.file, side.range.start + done, &mut buf[..n]).map_err(|e| {
                let message = format!("{}: {e}", side.path.display());
                match e {
                    RangeError::Shrank { .. } => Failure::Invalid(message),
                    _ => Failure::Unreadable(message),
                }
            })?;
        }
        if x[..n] != y[..n] {
            return Ok(true);
        }
        done += n as u64;
    }
    Ok(false)
}
