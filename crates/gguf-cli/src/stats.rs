//! `gguf stats`: per-tensor summary statistics of the dequantised values.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use std::fs::File;

use gguf_grammar::data::dequant::supported;
use gguf_grammar::escape::terminal;
use gguf_grammar::Tensor;

use crate::tensor::{RowError, Rows};
use crate::Failure;

#[derive(clap::Args)]
#[command(after_help = "\
One line per tensor: name, type, number of values, then min, max, mean and standard deviation
(population) of the finite values, then the counts of NaN and of infinite values. Values are
dequantised as gguf-py 0.19.0 does, streamed row by row (sums in f64), tensors in parallel.
Tensors whose type cannot be dequantised show `-` for the statistics.

Examples:
  gguf stats model.gguf
  gguf stats model.gguf output_norm.weight token_embd.weight")]
pub struct Args {
    /// The GGUF file.
    file: PathBuf,
    /// Only these tensors (default: all, in file order).
    names: Vec<String>,
}

/// Running statistics over finite values, plus NaN and infinity counts.
#[derive(Default)]
struct Stats {
    n: u64,
    min: f32,
    max: f32,
    sum: f64,
    sum_sq: f64,
    nan: u64,
    inf: u64,
}

impl Stats {
    fn add(&mut self, values: &[f32]) {
        for &v in values {
            if v.is_nan() {
                self.nan += 1;
            } else if v.is_infinite() {
                self.inf += 1;
            } else {
                if self.n == 0 || v < self.min {
                    self.min = v;
                }
                if self.n == 0 || v > self.max {
                    self.max = v;
                }
                self.n += 1;
                self.sum += v as f64;
                self.sum_sq += (v as f64) * (v as f64);
            }
        }
    }
}

/// The statistics of `t`'s values (`None` for a type that cannot be dequantised), or why
/// its data could not be read.
fn stats(t: &Tensor<'_>, file: &File, file_len: u64) -> Result<Option<Stats>, String> {
    if !supported(t.info.ggml_type) {
        return Ok(None);
    }
    let mut rows = Rows::new(file, file_len, t).map_err(|e| e.to_string())?;
    let mut s = Stats::default();
    for r in 0..rows.count {
        rows.read(r, |values| {
            s.add(values);
            Ok(())
        })
        .map_err(|e| match e {
            RowError::Source(e) => e,
            RowError::Output(e) => e.to_string(),
        })?;
    }
    Ok(Some(s))
}

pub fn run(args: Args) -> Result<(), Failure> {
    let shown = terminal(args.file.to_string_lossy().as_bytes()).into_owned();
    let (file, header, file_len) = crate::input::with_data(&args.file)?;
    let gguf = header.gguf();
    let tensors: Vec<&Tensor<'_>> = if args.names.is_empty() {
        gguf.tensors.iter().collect()
    } else {
        args.names
            .iter()
            .map(|n| {
                gguf.tensor(n).ok_or_else(|| {
                    Failure::Unreadable(format!(
                        "{shown}: no tensor named \"{}\"",
                        terminal(n.as_bytes())
                    ))
                })
            })
            .collect::<Result<_, _>>()?
    };
    // Data past the end of the file is an invalid file, not a statistic.
    for t in &tensors {
        if t.info.ggml_type.type_size().is_some() {
            t.data_range(file_len)
                .map_err(|e| Failure::Invalid(format!("{shown}: {e}")))?;
        }
    }
    let results = crate::hash::run_parallel(&tensors, |t| stats(t, &file, file_len));
    let results = results
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Failure::Invalid(format!("{shown}: {e}")))?;
    let mut out = BufWriter::new(io::stdout().lock());
    let write = |out: &mut dyn Write| -> io::Result<()> {
        writeln!(out, "name\ttype\tn\tmin\tmax\tmean\tstd\tnan\tinf")?;
        for (t, s) in tensors.iter().zip(&results) {
            let name = terminal(t.info.name.as_bytes());
            let n = gguf_grammar::GgmlType::n_elements(&t.info.dims).unwrap_or(0);
            match s {
                Some(s) if s.n > 0 => {
                    let mean = s.sum / s.n as f64;
                    let var = (s.sum_sq / s.n as f64 - mean * mean).max(0.0);
                    writeln!(
                        out,
                        "{name}\t{}\t{n}\t{:e}\t{:e}\t{mean:.9e}\t{:.9e}\t{}\t{}",
                        t.info.ggml_type,
                        s.min,
                        s.max,
                        var.sqrt(),
                        s.nan,
                        s.inf
                    )?
                }
                Some(s) => writeln!(
                    out,
                    "{name}\t{}\t{n}\t-\t-\t-\t-\t{}\t{}",
                    t.info.ggml_type, s.nan, s.inf
                )?,
                None => writeln!(out, "{name}\t{}\t{n}\t-\t-\t-\t-\t-\t-", t.info.ggml_type)?,
            }
        }
        out.flush()
    };
    write(&mut out).map_err(|e| Failure::Unreadable(format!("writing the output: {e}")))
}
