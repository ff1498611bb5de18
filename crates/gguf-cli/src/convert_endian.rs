//! `gguf convert-endian`: the whole file (header and tensor data) in the other byte order,
//! byte for byte as gguf-py 0.19.0's `gguf-convert-endian` makes it.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use gguf_grammar::data::swap::{convertible, swap_blocks};
use gguf_grammar::escape::terminal;
use gguf_grammar::file_range::{range_is, read_exact_at};
use gguf_grammar::write::GgufBuilder;
use gguf_grammar::{Endian, GgmlType};
use gguf_tools::edit::{replace_atomically, CheckError, EditError, Replace};
use gguf_tools::source::Source;

use crate::Failure;

#[derive(clap::Args)]
#[command(after_help = "\
Types converted (as gguf-py's gguf-convert-endian): f32, f16, bf16, q4_0, q8_0, q4_K, q6_K,
mxfp4, nvfp4. A file with a tensor of any other type is refused (exit 1) and nothing is
written. The output is written to a temporary file beside the destination, checked (header
and every tensor's bytes), synced and renamed into place; --in-place follows a symbolic link
to the file it points at.

Examples:
  gguf convert-endian model.gguf big -o model-be.gguf
  gguf convert-endian model-be.gguf little --in-place")]
pub struct Args {
    /// The GGUF file.
    file: PathBuf,
    /// The byte order wanted.
    #[arg(value_enum)]
    order: Order,
    /// Write the converted file here.
    #[arg(short, long, value_name = "OUT", required_unless_present = "in_place")]
    output: Option<PathBuf>,
    /// Replace FILE with the converted file.
    #[arg(long, conflicts_with = "output")]
    in_place: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Order {
    Little,
    Big,
}

/// Bytes converted per write: a multiple of every block size in bytes is not needed, as
/// whole blocks are taken from it.
const CHUNK: usize = 1 << 20;

pub fn run(args: Args) -> Result<(), Failure> {
    if args.output.as_deref() == Some(Path::new("-")) {
        return Err(Failure::Unreadable(
            "-o -: convert-endian reads back the file it writes, which standard output cannot be; give a file name".into(),
        ));
    }
    let target = match args.order {
        Order::Little => Endian::Little,
        Order::Big => Endian::Big,
    };
    let shown = crate::shown(&args.file);
    // The header is read into memory and the tensor data with positioned reads: a file
    // truncated by another process meanwhile is an error, not a SIGBUS.
    let (file, header, file_len) = crate::input::with_data(&args.file)?;
    let gguf = header.gguf();
    let swap = gguf.endian() != target;

    // Every tensor's region, sorted; refused: types gguf-py cannot convert, data past the
    // end, regions that overlap (swapping shared bytes twice would undo the swap).
    let mut regions: Vec<(u64, u64, GgmlType)> = Vec::new();
    for t in &gguf.tensors {
        let data = t
            .data_range(file_len)
            .map_err(|e| Failure::Invalid(format!("{shown}: {e}")))?;
        let ty = t.info.ggml_type;
        if swap && !convertible(ty) {
            return Err(Failure::Invalid(format!(
                "{shown}: tensor \"{}\" has type {ty}, which gguf-convert-endian cannot convert either; nothing written",
                terminal(t.info.name.as_bytes())
            )));
        }
        regions.push((data.start, data.end, ty));
    }
    regions.sort();
    if let Some(w) = regions.windows(2).find(|w| w[1].0 < w[0].1) {
        return Err(Failure::Invalid(format!(
            "{shown}: tensor data at offsets {:#x} and {:#x} overlap; refusing to convert",
            w[0].0, w[1].0
        )));
    }
    let mut builder = GgufBuilder::from_header_and_file(gguf, &file, file_len);
    builder.endian(target);
    let head = match builder.in_place_patch() {
        Ok(Some(head)) if head.len() as u64 == gguf.tensor_data_offset.min(file_len) => head,
        Ok(_) => {
            return Err(Failure::Invalid(format!(
                "{shown}: the header changes size in the other byte order; refusing"
            )))
        }
        Err(e) => return Err(Failure::Invalid(format!("{shown}: {e}"))),
    };

    let dest = match (&args.output, args.in_place) {
        (Some(out), _) => resolve(out),
        (None, _) => resolve(&args.file),
    };
    let differs = |what: String| {
        EditError::from(CheckError::Differs {
            path: dest.clone(),
            what,
        })
    };
    let convert = |out: &mut dyn Write, check: Option<&File>| -> Result<u64, EditError> {
        let put = |out: &mut dyn Write, chunk: &[u8], at: u64| -> Result<(), EditError> {
            match check.map(|written| range_is(written, at, chunk)) {
                None => out.write_all(chunk).map_err(|source| EditError::Io {
                    path: dest.clone(),
                    source,
                }),
                Some(Ok(true)) => Ok(()),
                Some(Ok(false)) => Err(differs(format!(
                    "the converted file differs from the expected bytes at offset {at:#x}"
                ))),
                Some(Err(e)) => Err(differs(format!("reading it back: {e}"))),
            }
        };
        put(out, &head, 0)?;
        // Bytes between and after the tensors are copied as they are (a block of 1 byte).
        let mut at = head.len() as u64;
        let gaps_and_tensors = regions
            .iter()
            .flat_map(|&(start, end, ty)| [(start, None), (end, Some(ty))])
            .chain([(file_len, None)]);
        let mut buf = Vec::with_capacity(CHUNK);
        for (end, ty) in gaps_and_tensors {
            let block = ty.and_then(GgmlType::type_size).unwrap_or(1);
            // A type size is at most a few hundred bytes: the step is a whole number of blocks.
            let step = (CHUNK as u64 / block).max(1) * block;
            while at < end {
                let to = at.saturating_add(step).min(end);
                buf.resize((to - at) as usize, 0);
                read_exact_at(&file, at, &mut buf).map_err(|source| CheckError::Read {
                    path: args.file.clone(),
                    source,
                })?;
                if let (true, Some(ty)) = (swap, ty) {
                    // The types were checked convertible above.
                    swap_blocks(ty, &mut buf).map_err(|e| differs(e.to_string()))?;
                }
                put(out, &buf, at)?;
                at = to;
            }
        }
        Ok(file_len)
    };
    replace_atomically(
        &dest,
        &Replace::default(),
        None,
        |out| convert(out, None),
        |temp: &Path| {
            // Read back with positioned reads (no memory map: a file cut short meanwhile is an
            // error, not a SIGBUS): parses in the new byte order, and every byte is what was meant.
            let written = File::open(temp).map_err(|source| EditError::Io {
                path: dest.clone(),
                source,
            })?;
            let (again, len) = Source::open(temp)
                .and_then(|mut source| source.read_header())
                .map_err(|source| CheckError::NotGguf {
                    path: dest.clone(),
                    source,
                })?;
            if again.gguf().endian() != target || len != file_len {
                return Err(differs("the converted file does not read back".into()));
            }
            convert(&mut std::io::sink(), Some(&written)).map(|_| ())
        },
    )
    .map_err(|e| match e {
        // The conversion's own errors name their file: a source that shrank or is unreadable,
        // output that does not read back.
        EditError::Check(why) => Failure::Invalid(format!(
            "{}; nothing written",
            crate::atomic::check_message(&why)
        )),
        e => Failure::Unreadable(crate::atomic::message(&dest, &e)),
    })?;
    Ok(())
}

/// The file a path names, following symbolic links (a path that does not exist yet is kept).
fn resolve(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}
