//! `gguf convert-endian`: the whole file (header and tensor data) in the other byte order,
//! byte for byte as gguf-py 0.19.0's `gguf-convert-endian` makes it.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use gguf_grammar::data::swap::{convertible, swap_blocks};
use gguf_grammar::edit::{replace_atomically, EditError, Replace};
use gguf_grammar::render::escape::terminal;
use gguf_grammar::write::GgufBuilder;
use gguf_grammar::{Endian, GgmlType, GgufFile};

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
    let target = match args.order {
        Order::Little => Endian::Little,
        Order::Big => Endian::Big,
    };
    let shown = terminal(args.file.to_string_lossy().as_bytes()).into_owned();
    let file =
        GgufFile::open(&args.file).map_err(|e| Failure::Unreadable(format!("{shown}: {e}")))?;
    let bytes = file.bytes();
    let gguf = file
        .parse()
        .map_err(|e| Failure::Invalid(format!("{shown}: {e}")))?;
    let swap = gguf.endian() != target;

    // Every tensor's region, sorted; refused: types gguf-py cannot convert, data past the
    // end, regions that overlap (swapping shared bytes twice would undo the swap).
    let mut regions: Vec<(usize, usize, GgmlType)> = Vec::new();
    for t in &gguf.tensors {
        let data = t
            .data(bytes)
            .map_err(|e| Failure::Invalid(format!("{shown}: {e}")))?;
        let ty = t.info.ggml_type;
        if swap && !convertible(ty) {
            return Err(Failure::Invalid(format!(
                "{shown}: tensor \"{}\" has type {ty}, which gguf-convert-endian cannot convert either; nothing written",
                terminal(t.info.name.as_bytes())
            )));
        }
        let start = data.as_ptr() as usize - bytes.as_ptr() as usize;
        regions.push((start, start + data.len(), ty));
    }
    regions.sort();
    if let Some(w) = regions.windows(2).find(|w| w[1].0 < w[0].1) {
        return Err(Failure::Invalid(format!(
            "{shown}: tensor data at offsets {:#x} and {:#x} overlap; refusing to convert",
            w[0].0, w[1].0
        )));
    }
    let mut builder = GgufBuilder::from_gguf(&gguf);
    builder.endian(target);
    let head = match builder.in_place_patch() {
        Ok(Some(head)) if head.len() as u64 == gguf.tensor_data_offset.min(bytes.len() as u64) => {
            head
        }
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
    let convert = |out: &mut dyn Write, check: Option<&[u8]>| -> Result<u64, String> {
        let mut at = head.len();
        let put = |out: &mut dyn Write, chunk: &[u8], at: usize| -> Result<(), String> {
            match check {
                None => out.write_all(chunk).map_err(|e| e.to_string()),
                Some(written) if written.get(at..at + chunk.len()) == Some(chunk) => Ok(()),
                Some(_) => Err(format!(
                    "the converted file differs from the expected bytes at offset {at:#x}"
                )),
            }
        };
        put(out, &head, 0)?;
        let mut buf = Vec::with_capacity(CHUNK);
        for &(start, end, ty) in &regions {
            put(out, &bytes[at..start], at)?;
            let block = ty.type_size().unwrap_or(1) as usize;
            let step = (CHUNK / block).max(1) * block;
            let mut from = start;
            while from < end {
                let to = (from + step).min(end);
                buf.clear();
                buf.extend_from_slice(&bytes[from..to]);
                if swap {
                    swap_blocks(ty, &mut buf).map_err(|e| e.to_string())?;
                }
                put(out, &buf, from)?;
                from = to;
            }
            at = end;
        }
        put(out, &bytes[at..], at)?;
        Ok(bytes.len() as u64)
    };
    let failed = EditError::Check;
    replace_atomically(
        &dest,
        &Replace::default(),
        None,
        |out| convert(out, None).map_err(failed),
        |temp: &Path| {
            // Read back: parses in the new byte order, and every byte is what was meant.
            let written = GgufFile::open(temp).map_err(|e| failed(e.to_string()))?;
            let again = written.parse().map_err(|e| failed(e.to_string()))?;
            if again.endian() != target || written.bytes().len() != bytes.len() {
                return Err(failed("the converted file does not read back".into()));
            }
            convert(&mut std::io::sink(), Some(written.bytes()))
                .map(|_| ())
                .map_err(failed)
        },
    )
    .map_err(|e| {
        Failure::Unreadable(format!(
            "{}: {e}",
            terminal(dest.to_string_lossy().as_bytes())
        ))
    })?;
    Ok(())
}

/// The file a path names, following symbolic links (a path that does not exist yet is kept).
fn resolve(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}
