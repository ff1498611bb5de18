//! `gguf tensor`: one tensor's values, dequantised to f32, as text, JSON, raw f32 or `.npy`.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::ops::Range;
use std::path::PathBuf;

use clap::ValueEnum;
use gguf_grammar::data::{
    self,
    dequant::{dequantize_into, supported},
};
use gguf_grammar::edit::{replace_atomically, EditError, Replace};
use gguf_grammar::render::escape::terminal;

use crate::Failure;

#[derive(clap::Args)]
#[command(after_help = "\
A row is the tensor's first (fastest) dimension, ne0. Values are dequantised to f32 exactly as
gguf-py 0.19.0's gguf.quants.dequantize computes them. Shapes are in numpy's order (slowest
first); with --rows the leading dimensions are flattened into rows.

Formats: text (one row per line, values separated by spaces), json ({\"name\", \"type\",
\"shape\", \"values\"}: a flat array in row order, with NaN and infinities as the strings
\"NaN\", \"inf\", \"-inf\", which JSON numbers cannot hold), raw (little-endian f32), npy
(numpy.load reads it). raw and npy are not written to a terminal.

Examples:
  gguf tensor model.gguf output_norm.weight
  gguf tensor model.gguf token_embd.weight --rows 0..10 --format npy -o embd.npy
  gguf tensor model.gguf blk.0.attn_q.weight --format raw | od -f | head")]
pub struct Args {
    /// The GGUF file.
    file: PathBuf,
    /// The tensor's name.
    name: String,
    /// Only rows A to B (B excluded), e.g. 0..10.
    #[arg(long, value_name = "A..B", value_parser = parse_rows)]
    rows: Option<Range<u64>>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum Format {
    Text,
    Json,
    Raw,
    Npy,
}

/// Room for one row of dequantised values: none when the tensor holds no rows, as then its
/// first dim is bounded by nothing (`[2^62, 0]` holds no data); else the row is part of the
/// tensor's data, whose size `Tensor::data` checked against the file.
pub fn row_buffer(dims: &[u64], n_rows: u64) -> Vec<f32> {
    let row_len = match n_rows {
        0 => 0,
        _ => dims.first().copied().unwrap_or(1),
    };
    vec![0f32; usize::try_from(row_len).unwrap_or(0)]
}

fn parse_rows(text: &str) -> Result<Range<u64>, String> {
    let (a, b) = text.split_once("..").ok_or("expected A..B, e.g. 0..10")?;
    let n = |s: &str| s.parse::<u64>().map_err(|e| format!("{s:?}: {e}"));
    let (a, b) = (n(a)?, n(b)?);
    if a > b {
        return Err(format!("{a}..{b} is empty the wrong way round"));
    }
    Ok(a..b)
}

pub fn run(args: Args) -> Result<(), Failure> {
    let shown = terminal(args.file.to_string_lossy().as_bytes()).into_owned();
    let file = crate::input::mapped(&args.file)?;
    let gguf = crate::input::parsed(&args.file, &file)?;
    let name = terminal(args.name.as_bytes()).into_owned();
    let tensor = gguf
        .tensor(&args.name)
        .ok_or_else(|| Failure::Unreadable(format!("{shown}: no tensor named \"{name}\"")))?;
    let ty = tensor.info.ggml_type;
    if !supported(ty) {
        return Err(Failure::Invalid(format!(
            "{shown}: tensor \"{name}\" has type {ty}, which cannot be dequantised (gguf-py 0.19.0 cannot either)"
        )));
    }
    let data = tensor
        .data(file.bytes())
        .map_err(|e| Failure::Invalid(format!("{shown}: {e}")))?;
    let dims = &tensor.info.dims;
    let row_len = dims.first().copied().unwrap_or(1);
    let n_rows = data::rows(dims, data.len());
    let rows = args.rows.clone().unwrap_or(0..n_rows);
    if rows.end > n_rows {
        return Err(Failure::Unreadable(format!(
            "--rows {}..{}: the tensor has {n_rows} rows",
            rows.start, rows.end
        )));
    }
    let shape: Vec<u64> = match args.rows {
        Some(_) => vec![rows.end - rows.start, row_len],
        None => dims.iter().rev().copied().collect(),
    };
    // The row length is a whole number of blocks (Tensor::data checked the size).
    let row_bytes = (data.len() as u64).checked_div(n_rows).unwrap_or(0) as usize;

    let write = |out: &mut dyn Write| -> io::Result<()> {
        let mut row = row_buffer(dims, n_rows);
        match args.format {
            Format::Npy => out.write_all(&npy_header(&shape))?,
            Format::Json => {
                out.write_all(b"{\"name\":")?;
                gguf_grammar::render::json::string(tensor.info.name, &mut &mut *out)?;
                write!(out, ",\"type\":\"{ty}\",\"shape\":{shape:?},\"values\":[")?;
            }
            _ => {}
        }
        for (i, r) in rows.clone().enumerate() {
            let bytes = &data[r as usize * row_bytes..][..row_bytes];
            dequantize_into(ty, bytes, &mut row).map_err(io::Error::other)?;
            match args.format {
                Format::Raw | Format::Npy => {
                    let raw: Vec<u8> = row.iter().flat_map(|v| v.to_le_bytes()).collect();
                    out.write_all(&raw)?;
                }
                Format::Text => {
                    let line: Vec<String> = row.iter().map(f32::to_string).collect();
                    writeln!(out, "{}", line.join(" "))?;
                }
                Format::Json => {
                    for (j, v) in row.iter().enumerate() {
                        let sep = if i == 0 && j == 0 { "" } else { "," };
                        match (v.is_nan(), v.is_infinite()) {
                            (true, _) => write!(out, "{sep}\"NaN\"")?,
                            (_, true) => {
                                write!(out, "{sep}\"{}\"", if *v > 0.0 { "inf" } else { "-inf" })?
                            }
                            _ => write!(out, "{sep}{v:?}")?,
                        }
                    }
                }
            }
        }
        if args.format == Format::Json {
            writeln!(out, "]}}")?;
        }
        Ok(())
    };
    match &args.output {
        Some(dest) => {
            let dest = std::fs::canonicalize(dest).unwrap_or_else(|_| dest.clone());
            replace_atomically(
                &dest,
                &Replace::default(),
                None,
                |out| {
                    write(out).map_err(|source| EditError::Io {
                        path: dest.clone(),
                        source,
                    })?;
                    Ok(0)
                },
                |_| Ok(()),
            )
            .map(|_| ())
            .map_err(|e| {
                Failure::Unreadable(format!(
                    "{}: {e}",
                    terminal(dest.to_string_lossy().as_bytes())
                ))
            })
        }
        None => {
            let stdout = io::stdout();
            if matches!(args.format, Format::Raw | Format::Npy) && stdout.is_terminal() {
                return Err(Failure::Unreadable(
                    "refusing to write binary data to a terminal; use -o OUT or a pipe".into(),
                ));
            }
            let mut out = BufWriter::new(stdout.lock());
            write(&mut out)
                .and_then(|()| out.flush())
                .map_err(|e| Failure::Unreadable(format!("writing the output: {e}")))
        }
    }
}

/// A `.npy` version 1.0 header for a little-endian f32 C-order array of `shape`.
fn npy_header(shape: &[u64]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    // magic (6) + version (2) + length (2) + dict + '\n' is a multiple of 64
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((dict.len() as u16).to_le_bytes());
    out.extend(dict.into_bytes());
    out
}
