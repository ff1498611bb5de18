//! `gguf hash`: per-tensor and whole-model hashes of the tensor data, output byte for byte as
//! llama.cpp's `llama-gguf-hash` prints it, and `--check` against a manifest of such lines.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::ops::Range;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use gguf_grammar::escape::terminal;
use gguf_grammar::file_range::{read_exact_at, RangeError, COPY_BUFFER};
use gguf_tools::hash::{Algorithm, Hasher};

use crate::Failure;

/// Exit statuses, as `llama-gguf-hash` defines them.
const MISMATCH_OR_FAILURE: u8 = 1;
const MISSING_ENTRY: u8 = 3;
const UNKNOWN_HASH: u8 = 4;
const MANIFEST_ERROR: u8 = 5;

#[derive(clap::Args)]
#[command(after_help = "\
Output lines are `TYPE  HASH  FILE:TENSOR` for each tensor, then `TYPE  HASH  FILE` for the
whole model, exactly as llama.cpp's llama-gguf-hash prints them; with --check each line ends
in `  -  Ok`, `  -  Mismatch` or `  -  Not Found`.

Exit status (llama-gguf-hash's): 0 success, 1 a hash mismatches or the file is not valid GGUF,
3 the manifest has no entry for this file, 4 the manifest has no known hash type, 5 the
manifest cannot be read; 2 on usage errors and when the file cannot be read (where
llama-gguf-hash crashes).

Examples:
  gguf hash model.gguf                      # xxh64 per tensor and of the model
  gguf hash --all model.gguf > model.manifest
  gguf hash --check model.manifest model.gguf
  gguf hash --uuid --no-layer model.gguf   # one UUIDv5 identifying the tensor data")]
pub struct Args {
    /// XXH64 (seed 0); the default when no hash is chosen.
    #[arg(long)]
    xxh64: bool,
    /// SHA-1.
    #[arg(long)]
    sha1: bool,
    /// SHA-256.
    #[arg(long)]
    sha256: bool,
    /// XXH64, SHA-1 and SHA-256.
    #[arg(long)]
    all: bool,
    /// Only the whole-model hashes, no per-tensor lines.
    #[arg(long)]
    no_layer: bool,
    /// The UUIDv5 of all tensor data in llama.cpp's namespace.
    #[arg(long)]
    uuid: bool,
    /// Verify against a manifest (lines `TYPE HASH NAME`); without a hash option, the
    /// strongest type the manifest holds is used.
    #[arg(short = 'c', long, value_name = "MANIFEST")]
    check: Option<PathBuf>,
    /// The GGUF file.
    file: PathBuf,
}

/// `TYPE HASH NAME` lines of a manifest, split on whitespace as C++ streams do: the hash of
/// the first line of each type and name (looked up by both, so checking N tensors against a
/// manifest of N lines is linear, not N^2), and the types named; each a slice of the
/// manifest's text, nothing copied.
struct Manifest<'t>(HashMap<(&'t [u8], &'t [u8]), &'t [u8]>, HashSet<&'t [u8]>);

impl<'t> Manifest<'t> {
    fn parse(text: &'t [u8]) -> Manifest<'t> {
        let (mut entries, mut types) = (HashMap::new(), HashSet::new());
        for line in text.split(|&b| b == b'\n') {
            let mut words = line
                .split(|b| b" \t\r\x0b\x0c".contains(b))
                .filter(|w| !w.is_empty());
            if let Some(ty) = words.next() {
                types.insert(ty);
                if let (Some(hash), Some(name)) = (words.next(), words.next()) {
                    entries.entry((ty, name)).or_insert(hash);
                }
            }
        }
        Manifest(entries, types)
    }

    fn has(&self, algorithm: Algorithm) -> bool {
        self.1.contains(algorithm.name().as_bytes())
    }

    /// The first entry of this type and name decides.
    fn verify(&self, ty: &str, hash: &str, name: &str) -> Verdict {
        match self.0.get(&(ty.as_bytes(), name.as_bytes())) {
            None => Verdict::NotFound,
            Some(&h) if h == hash.as_bytes() => Verdict::Ok,
            Some(_) => Verdict::Mismatch,
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Verdict {
    NotFound,
    Mismatch,
    Ok,
}

pub fn run(args: Args) -> ExitCode {
    let mut algorithms: Vec<Algorithm> = [
        (Algorithm::Xxh64, args.xxh64 || args.all),
        (Algorithm::Sha1, args.sha1 || args.all),
        (Algorithm::Sha256, args.sha256 || args.all),
        (Algorithm::Uuid, args.uuid),
    ]
    .into_iter()
    .filter_map(|(a, on)| on.then_some(a))
    .collect();
    let mut out = BufWriter::new(io::stdout().lock());
    let manifest_text;
    let manifest = match &args.check {
        None => None,
        Some(path) => {
            let shown = terminal(path.to_string_lossy().as_bytes()).into_owned();
            manifest_text = match crate::input::read_whole(path) {
                Ok(text) => text,
                Err(e) => {
                    eprintln!("gguf: cannot open manifest {shown}: {e}");
                    return ExitCode::from(MANIFEST_ERROR);
                }
            };
            let manifest = Manifest::parse(&manifest_text);
            let known: Vec<Algorithm> = [
                Algorithm::Sha256,
                Algorithm::Sha1,
                Algorithm::Xxh64,
                Algorithm::Uuid,
            ]
            .into_iter()
            .filter(|&a| manifest.has(a))
            .collect();
            if known.is_empty() {
                eprintln!("gguf: manifest {shown} has no known hash type");
                return ExitCode::from(UNKNOWN_HASH);
            }
            let names: String = known.iter().map(|a| format!("  {}", a.name())).collect();
            let _ = writeln!(out, "manifest  {shown}{names}");
            if algorithms.is_empty() {
                algorithms.push(known[0]); // the strongest the manifest has
            }
            Some(manifest)
        }
    };
    if algorithms.is_empty() {
        algorithms.push(Algorithm::Xxh64);
    }
    let code = match hash(&args, &algorithms, manifest.as_ref(), &mut out) {
        Ok(code) => code,
        Err(failure) => {
            let _ = out.flush();
            return Failure::report(Err(failure));
        }
    };
    if let Some(path) = &args.check {
        let result = match code {
            0 => "Success",
            MISMATCH_OR_FAILURE => "Failure",
            _ => "Manifest Missing Entry",
        };
        let _ = writeln!(
            out,
            "\nVerification results for {} - {result}",
            terminal(path.to_string_lossy().as_bytes())
        );
    }
    match out.flush() {
        Ok(()) => ExitCode::from(code),
        Err(e) => {
            eprintln!("gguf: writing the output: {e}");
            ExitCode::from(2)
        }
    }
}

/// Hashes, prints, and returns the exit status.
fn hash(
    args: &Args,
    algorithms: &[Algorithm],
    manifest: Option<&Manifest<'_>>,
    out: &mut impl Write,
) -> Result<u8, Failure> {
    let fname = terminal(args.file.to_string_lossy().as_bytes()).into_owned();
    // The header in memory, the tensor data read with positioned reads: a file truncated by
    // another process meanwhile is an error, not a SIGBUS.
    let (file, header, file_len) = crate::input::with_data(&args.file)?;
    let gguf = header.gguf();
    // Every range checked before any line is printed; each is computed again as it is hashed
    // (nothing kept per tensor: a million tensors cost no more memory than their header).
    let range = |t: &gguf_grammar::Tensor<'_>| {
        t.data_range(file_len)
            .map_err(|e| Failure::Invalid(format!("{fname}: {e}")))
    };
    for t in &gguf.tensors {
        range(t)?;
    }
    let (mut layer_seen, mut layer_bad, mut model_seen, mut model_bad) =
        (false, false, false, false);
    let mut line = |ty: Algorithm, hash: &str, name: &str, is_layer: bool| -> io::Result<()> {
        let Some(m) = manifest else {
            return writeln!(out, "{:<8}  {hash}  {name}", ty.name());
        };
        // llama-gguf-hash looks a model's UUID up under the type "sha256".
        let looked_up = if ty == Algorithm::Uuid {
            Algorithm::Sha256
        } else {
            ty
        };
        let verdict = m.verify(looked_up.name(), hash, name);
        let (seen, bad) = if is_layer {
            (&mut layer_seen, &mut layer_bad)
        } else {
            (&mut model_seen, &mut model_bad)
        };
        *seen |= verdict != Verdict::NotFound;
        *bad |= verdict == Verdict::Mismatch;
        let shown = match verdict {
            Verdict::NotFound => "Not Found",
            Verdict::Mismatch => "Mismatch",
            Verdict::Ok => "Ok",
        };
        writeln!(out, "{:<8}  {hash}  {name}  -  {shown}", ty.name())
    };
    let io_error = |e: io::Error| Failure::Unreadable(format!("writing the output: {e}"));
    let ranges = gguf.tensors.iter().map(|t| range(t).unwrap_or(0..0));
    let each_tensor = |i: usize, digests: Vec<String>| -> io::Result<()> {
        let name = format!("{fname}:{}", terminal(gguf.tensors[i].info.name.as_bytes()));
        for (&a, digest) in layer_algorithms(algorithms).zip(&digests) {
            line(a, digest, &name, true)?;
        }
        Ok(())
    };
    let model_digests =
        hash_once(&file, ranges, algorithms, !args.no_layer, each_tensor).map_err(|e| match e {
            Hashing::Output(e) => io_error(e),
            Hashing::Read(e) => {
                let message = format!("{fname}: {e}");
                match e {
                    RangeError::Shrank { .. } => Failure::Invalid(message),
                    _ => Failure::Unreadable(message),
                }
            }
        })?;
    for (&a, digest) in algorithms.iter().zip(&model_digests) {
        line(a, digest, &fname, false).map_err(io_error)?;
    }
    if manifest.is_none() {
        return Ok(0);
    }
    Ok(if !model_seen {
        match (layer_seen, layer_bad) {
            (false, _) => MISSING_ENTRY,
            (true, true) => MISMATCH_OR_FAILURE,
            (true, false) => 0,
        }
    } else if layer_bad || model_bad {
        MISMATCH_OR_FAILURE
    } else {
        0
    })
}

/// The algorithms hashed per tensor: all but the UUID, which exists only for the model.
fn layer_algorithms(algorithms: &[Algorithm]) -> impl Iterator<Item = &Algorithm> {
    algorithms.iter().filter(|&&a| a != Algorithm::Uuid)
}

/// Below this many bytes, the hashers of a buffer are fed one after another: starting
/// threads would cost more than it gains.
const PARALLEL_FROM: usize = 64 << 10;

/// Why [`hash_once`] stopped: reading the data, or writing a tensor's lines.
enum Hashing {
    Read(RangeError),
    Output(io::Error),
}

/// The whole-model digest for each algorithm (in order); when `per_tensor`, each tensor's
/// digest for each of [`layer_algorithms`] is handed to `each_tensor` (with the tensor's
/// index) as soon as it is known, so that nothing is kept per tensor. The data is read once,
/// in file order through one buffer of at most [`COPY_BUFFER`] bytes, and each buffer is fed
/// to every hasher that needs it, the hashers in parallel.
fn hash_once(
    file: &File,
    ranges: impl Iterator<Item = Range<u64>>,
    algorithms: &[Algorithm],
    per_tensor: bool,
    mut each_tensor: impl FnMut(usize, Vec<String>) -> io::Result<()>,
) -> Result<Vec<String>, Hashing> {
    let hashers = |of: &mut dyn Iterator<Item = &Algorithm>| -> Vec<Mutex<Hasher>> {
        of.map(|&a| Mutex::new(Hasher::new(a))).collect()
    };
    let finish = |hashers: Vec<Mutex<Hasher>>| -> Vec<String> {
        hashers
            .into_iter()
            .map(|h| h.into_inner().unwrap_or_else(|e| e.into_inner()).finish())
            .collect()
    };
    let model = hashers(&mut algorithms.iter());
    let mut buf = Vec::new();
    for (i, range) in ranges.enumerate() {
        let layer = match per_tensor {
            true => hashers(&mut layer_algorithms(algorithms)),
            false => Vec::new(),
        };
        let mut at = range.start;
        while at < range.end {
            let n = (range.end - at).min(COPY_BUFFER as u64);
            buf.resize(n as usize, 0);
            read_exact_at(file, at, &mut buf).map_err(Hashing::Read)?;
            let fed: Vec<&Mutex<Hasher>> = model.iter().chain(&layer).collect();
            let feed = |h: &&Mutex<Hasher>| {
                h.lock().unwrap_or_else(|e| e.into_inner()).update(&buf);
            };
            if buf.len() < PARALLEL_FROM {
                fed.iter().for_each(feed);
            } else {
                run_parallel(&fed, feed);
            }
            at += n;
        }
        if per_tensor {
            each_tensor(i, finish(layer)).map_err(Hashing::Output)?;
        }
    }
    Ok(finish(model))
}

/// `f` of every job, computed on all cores, in job order (also used by `gguf stats`).
pub fn run_parallel<J: Sync, R: Send>(jobs: &[J], f: impl Fn(&J) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break mine };
                        mine.push((i, f(job)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    done.sort_by_key(|d| d.0);
    done.into_iter().map(|d| d.1).collect()
}
