//! `gguf tensor`: one tensor's values, dequantised to f32, as text, JSON, raw f32 or `.npy`.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::ops::Range;
use std::path::PathBuf;

use clap::ValueEnum;
use gguf_grammar::data::{
    self,
    dequant::{dequantize_into, supported},
    DataError,
};
use gguf_grammar::escape::terminal;
use gguf_grammar::file_range::{read_exact_at, COPY_BUFFER};
use gguf_grammar::{GgmlType, Tensor};
use gguf_tools::edit::{replace_atomically, EditError, Replace};

use crate::Failure;

#[derive(clap::Args)]
#[command(after_help = "\
A row is the tensor's first (fastest) dimension, ne0. Values are dequantised to f32 exactly as
gguf-py 0.19.0's gguf.quants.dequantize computes them; q1_0 and q2_0, which it does not
dequantise, exactly as llama.cpp 0.3.36's ggml does. Shapes are in numpy's order (slowest
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
    /// Write to this file instead of standard output (`-`: standard output).
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

/// A tensor's rows (its first dim, ne0), read from the file with positioned reads of up to
/// [`COPY_BUFFER`] bytes (a file truncated by another process meanwhile is an error, not a
/// SIGBUS) and dequantised a piece at a time: a row of any length streams through buffers of
/// fixed size, so memory never depends on a dimension read from the file.
pub struct Rows<'f> {
    file: &'f File,
    ty: GgmlType,
    start: u64,
    /// Rows in the tensor.
    pub count: u64,
    row_bytes: u64,
    /// Bytes per dequantised piece: whole blocks, at most [`PIECE`] bytes (one block at least).
    piece: u64,
    /// Values per block, bytes per block.
    block: (u64, u64),
    /// The tensor's bytes from `at` (relative to `start`) held in `raw`.
    at: u64,
    raw: Vec<u8>,
    values: Vec<f32>,
}

/// Why [`Rows::read`] stopped.
pub enum RowError {
    /// Reading or decoding the file.
    Source(String),
    /// What the caller did with the values.
    Output(io::Error),
}

/// The most bytes dequantised at once.
const PIECE: u64 = 1 << 16;

impl<'f> Rows<'f> {
    /// The rows of `tensor` in `file`, `file_len` bytes long; an error when its data is not
    /// wholly in the file.
    pub fn new(file: &'f File, file_len: u64, tensor: &Tensor<'_>) -> Result<Self, DataError> {
        let range = tensor.data_range(file_len)?;
        let dims = &tensor.info.dims;
        let count = data::rows(dims, usize::try_from(range.end - range.start).unwrap_or(1));
        // A row is a whole number of blocks of data in the file (data_range checked the size).
        // A tensor without rows needs none: its first dim is then bounded by nothing
        // (`[2^62, 0]` holds no data).
        let row_bytes = match count {
            0 => 0,
            _ => (range.end - range.start) / count,
        };
        let ty = tensor.info.ggml_type;
        let block = (
            ty.block_size().unwrap_or(1).max(1),
            ty.type_size().unwrap_or(1).max(1),
        );
        let piece = (PIECE / block.1).max(1) * block.1;
        Ok(Rows {
            file,
            ty,
            start: range.start,
            count,
            row_bytes,
            piece,
            block,
            at: 0,
            raw: Vec::new(),
            values: Vec::new(),
        })
    }

    /// Row `r` (below [`Rows::count`]), dequantised, given to `each` in consecutive pieces
    /// of at most [`PIECE`] bytes of data; stops at the first error `each` returns.
    pub fn read(
        &mut self,
        r: u64,
        mut each: impl FnMut(&[f32]) -> io::Result<()>,
    ) -> Result<(), RowError> {
        let row_start = r * self.row_bytes;
        let row_end = row_start + self.row_bytes;
        let mut from = row_start;
        while from < row_end {
            let to = (from + self.piece).min(row_end);
            let held = self.at..self.at + self.raw.len() as u64;
            if !(held.contains(&from) && to <= held.end) {
                // As much of the tensor from `from` as the buffer takes (whole blocks).
                let total = self.count * self.row_bytes;
                let fill = (COPY_BUFFER as u64 / self.block.1).max(1) * self.block.1;
                let n = fill.max(to - from).min(total - from);
                self.raw.resize(n as usize, 0);
                read_exact_at(self.file, self.start + from, &mut self.raw)
                    .map_err(|e| RowError::Source(e.to_string()))?;
                self.at = from;
            }
            let bytes = &self.raw[(from - self.at) as usize..(to - self.at) as usize];
            let n = (to - from) / self.block.1 * self.block.0;
            self.values.resize(n as usize, 0.0);
            dequantize_into(self.ty, bytes, &mut self.values)
                .map_err(|e| RowError::Source(e.to_string()))?;
            each(&self.values).map_err(RowError::Output)?;
            from = to;
        }
        Ok(())
    }
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
    // Before the header is read, which moves standard input's offset.
    let input = crate::input::data_path(&args.file)?;
    let (file, header, file_len) = crate::input::with_data(&args.file)?;
    let gguf = header.gguf();
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
    let mut reader = Rows::new(&file, file_len, tensor)
        .map_err(|e| Failure::Invalid(format!("{shown}: {e}")))?;
    let dims = &tensor.info.dims;
    let row_len = dims.first().copied().unwrap_or(1);
    let n_rows = reader.count;
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
    // Why reading the source failed (exit 1), as opposed to writing the output (exit 2).
    let source_failed = std::cell::Cell::new(None);
    let mut write = |out: &mut dyn Write| -> io::Result<()> {
        match args.format {
            Format::Npy => out.write_all(&npy_header(&shape))?,
            Format::Json => {
                out.write_all(b"{\"name\":")?;
                gguf_tools::render::json::string(tensor.info.name, &mut &mut *out)?;
                write!(out, ",\"type\":\"{ty}\",\"shape\":{shape:?},\"values\":[")?;
            }
            _ => {}
        }
        let mut first = true;
        for r in rows.clone() {
            let mut sep = "";
            let piece = |values: &[f32]| -> io::Result<()> {
                match args.format {
                    Format::Raw | Format::Npy => {
                        let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
                        out.write_all(&raw)?;
                    }
                    Format::Text => {
                        for v in values {
                            write!(out, "{sep}{v}")?;
                            sep = " ";
                        }
                    }
                    Format::Json => {
                        for v in values {
                            let sep = if first { "" } else { "," };
                            first = false;
                            match (v.is_nan(), v.is_infinite()) {
                                (true, _) => write!(out, "{sep}\"NaN\"")?,
                                (_, true) => write!(
                                    out,
                                    "{sep}\"{}\"",
                                    if *v > 0.0 { "inf" } else { "-inf" }
                                )?,
                                _ => write!(out, "{sep}{v:?}")?,
                            }
                        }
                    }
                }
                Ok(())
            };
            reader.read(r, piece).map_err(|e| match e {
                RowError::Source(e) => {
                    let e = format!("{shown}: {e}");
                    source_failed.set(Some(e.clone()));
                    io::Error::other(e)
                }
                RowError::Output(e) => e,
            })?;
            if args.format == Format::Text {
                writeln!(out)?;
            }
        }
        if args.format == Format::Json {
            writeln!(out, "]}}")?;
        }
        Ok(())
    };
    // `-o -` is standard output.
    let output = args
        .output
        .as_ref()
        .filter(|dest| !crate::input::is_stdout(dest));
    let written = match output {
        Some(dest) => {
            if gguf_tools::same_file::same_file(&input, dest) {
                return Err(crate::onto_input(dest));
            }
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
            .map_err(|e| Failure::Unreadable(crate::atomic::message(&dest, &e)))
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
    };
    match source_failed.take() {
        Some(e) => Err(Failure::Invalid(e)),
        None => written,
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
