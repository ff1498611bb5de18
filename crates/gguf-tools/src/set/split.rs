//! Splitting a model into a shard set and merging a set back into one file, byte for byte as
//! llama.cpp's `llama-gguf-split` (with `--split` and `--merge`) writes them.
//!
//! What `llama-gguf-split` writes, and so what these functions write:
//!
//! - every shard is GGUF v3, little-endian, alignment 32, with tensor data padded to 32;
//! - the first shard holds the source's key/values (booleans written as 0 or 1), then
//!   `split.no` (u16, from 0), `split.tensors.count` (i32, the whole model's tensor count) and
//!   `split.count` (u16); the other shards hold only those three keys;
//! - a tensor descriptor's dims drop trailing 1s (ggml's `ggml_n_dims`);
//! - a shard is cut before the tensor that would take it past `--split-max-size` (tensor sizes
//!   rounded up to 32, metadata not counted), or before every N-th tensor with
//!   `--split-max-tensors N`; `--no-tensor-first-split` gives the first shard no tensors;
//! - a merge keeps the first shard's key/values with `split.count` moved last and set to 0,
//!   then every shard's tensors in order.
//!
//! A merge also refuses a set that does not hold together ([`super::GgufSet::diagnose`]
//! errors: a shard missing, `split.no` out of order, counts that disagree, a tensor in two
//! shards), which `llama-gguf-split` would merge into a wrong model.
//!
//! Inputs are refused, with the reason, where `llama-gguf-split` would refuse them or would
//! write a broken file (ggml's reader rejects it, big-endian, `general.alignment` other than 32,
//! nested arrays, unknown tensor types, zero dims). Every output is written beside its
//! destination, checked (header and every tensor's bytes) and renamed into place; tensor data
//! is copied with positioned reads through a 1 MiB buffer, never held in memory or mapped (an
//! input truncated meanwhile is an error, not a SIGBUS).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use gguf_tools::set::split::{merge, split, SplitLimit, SplitOptions};
//! use gguf_grammar::write::GgufBuilder;
//! use gguf_grammar::{Ctx, GgmlType};
//!
//! let dir = std::env::temp_dir().join(format!("gguf-split-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let weights = [0u8; 64];
//! let model = GgufBuilder::new(Ctx::V3_LE)
//!     .kv("general.architecture", "llama")
//!     .tensor("a", &[16], GgmlType::F32, &weights)
//!     .tensor("b", &[16], GgmlType::F32, &weights)
//!     .tensor("c", &[16], GgmlType::F32, &weights)
//!     .build()?;
//! std::fs::write(dir.join("model.gguf"), &model)?;
//!
//! let options = SplitOptions { limit: SplitLimit::Tensors(2), no_tensor_first_split: false };
//! let shards = split(&dir.join("model.gguf"), &dir.join("model"), &options)?;
//! assert_eq!(shards, [dir.join("model-00001-of-00002.gguf"), dir.join("model-00002-of-00002.gguf")]);
//!
//! merge(&shards[0], &dir.join("merged.gguf"))?;
//! let merged = std::fs::read(dir.join("merged.gguf"))?;
//! let gguf = gguf_grammar::Gguf::parse(&merged)?;
//! assert_eq!(gguf.tensors.len(), 3);
//! assert_eq!(gguf.get("split.count").and_then(|v| v.as_u64()), Some(0));
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok(()) }
//! ```

use std::collections::HashSet;
use std::fs::{self, File};
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::{shard_path, shard_prefix, SetError};
use crate::edit::{replace_atomically, CheckError, EditError, Replace};
use crate::source::{Source, SourceError};
use gguf_grammar::file_range::{copy_range, holds_copy, RangeError};
use gguf_grammar::grammar::align_up;
use gguf_grammar::validate::{self, Profile, Severity};
use gguf_grammar::write::{GgufBuilder, OwnedKv, OwnedValue};
use gguf_grammar::{Ctx, Endian, GgmlType, Gguf, OwnedGguf, Value, ValueType};

/// The alignment `llama-gguf-split` lays its outputs out with, whatever the input's.
const ALIGNMENT: u64 = 32;
/// ggml's `GGML_MAX_DIMS`.
const MAX_DIMS: usize = 4;

/// Where `split` cuts the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitLimit {
    /// At most this many tensors per shard (`--split-max-tensors`, default 128).
    Tensors(u64),
    /// At most this many bytes of tensor data per shard, each tensor's size rounded up to
    /// 32 (`--split-max-size`; `llama-gguf-split` reads `100M` as 100,000,000 bytes).
    Bytes(u64),
}

/// How `split` cuts the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitOptions {
    /// The limit per shard.
    pub limit: SplitLimit,
    /// Give the first shard only the metadata (`--no-tensor-first-split`).
    pub no_tensor_first_split: bool,
}

impl Default for SplitOptions {
    /// `llama-gguf-split`'s defaults: 128 tensors per shard, tensors in the first shard.
    fn default() -> Self {
        SplitOptions {
            limit: SplitLimit::Tensors(128),
            no_tensor_first_split: false,
        }
    }
}

/// Why a split or merge failed. Nothing is left half-written: outputs already completed stay,
/// the one being written is removed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SplitError {
    /// An input could not be opened or mapped, or is not GGUF.
    #[error(transparent)]
    Input(#[from] SetError),
    /// An input `llama-gguf-split` refuses, or would turn into a broken file.
    #[error("{}: {reason}", path.display())]
    Refused {
        /// The file.
        path: PathBuf,
        /// Why, with the offset or name of what is wrong.
        reason: String,
    },
    /// A limit that leaves a shard without tensors, or a zero limit.
    #[error("shard {shard} would hold no tensors: the size or tensor limit is too small")]
    EmptyShard {
        /// The shard, counted from 1.
        shard: usize,
    },
    /// More shards than `split.count` (a u16) can count.
    #[error("{count} shards: split.count holds at most 65535")]
    TooManyShards {
        /// The shards the limit would make.
        count: usize,
    },
    /// An output would be written over the input (the same file, by identity).
    #[error("{}: is the input file; refusing to overwrite it", path.display())]
    OntoInput {
        /// The output.
        path: PathBuf,
    },
    /// The merge output exists (a merge never overwrites, as `llama-gguf-split`).
    #[error("{}: already exists", path.display())]
    OutputExists {
        /// The output.
        path: PathBuf,
    },
    /// An output could not be written or did not check out.
    #[error(transparent)]
    Write(#[from] EditError),
}

/// Splits the model at `input` into `PREFIX-00001-of-0000N.gguf` … and returns their paths.
/// Existing shards of those names are replaced (each atomically, by a new file); a symbolic
/// link or special file at a shard's name is refused before any shard is written.
pub fn split(
    input: &Path,
    prefix: &Path,
    options: &SplitOptions,
) -> Result<Vec<PathBuf>, SplitError> {
    let file = open(input)?;
    let gguf = parse(input, &file)?;
    let kvs = llama_kvs(input, &gguf)?;
    let parts = llama_tensors(input, &gguf, &file)?;
    let plan = plan(&parts, options)?;
    let count = plan.len();
    let count_u16 = u16::try_from(count).map_err(|_| SplitError::TooManyShards { count })?;
    let n_tensors = i32::try_from(parts.len()).map_err(|_| SplitError::Refused {
        path: input.to_path_buf(),
        reason: format!("{} tensors: split.tensors.count is an i32", parts.len()),
    })?;

    // Refused before any shard is written: a shard's name may be the input's own.
    if let Some(path) = (0..count)
        .map(|no| shard_path(prefix, no, count))
        .find(|dest| crate::same_file::same_file(input, dest))
    {
        return Err(SplitError::OntoInput { path });
    }
    // The shard names are chosen here: a link or special file at one is refused (it could
    // lead out of the output folder), before any shard is written.
    for dest in (0..count).map(|no| shard_path(prefix, no, count)) {
        match fs::symlink_metadata(&dest) {
            Ok(meta) if meta.file_type().is_symlink() => return Err(EditError::Linked(dest).into()),
            Ok(meta) if !meta.is_file() => return Err(EditError::NotRegular(dest).into()),
            _ => {}
        }
    }
    let mut written = Vec::with_capacity(count);
    for (no, range) in plan.into_iter().enumerate() {
        let mut shard_kvs = if no == 0 { kvs.clone() } else { Vec::new() };
        // The order llama-gguf-split's calls leave them in: a set removes, then appends.
        set(&mut shard_kvs, "split.no", OwnedValue::U16(no as u16));
        set(&mut shard_kvs, "split.count", OwnedValue::U16(0));
        set(
            &mut shard_kvs,
            "split.tensors.count",
            OwnedValue::I32(n_tensors),
        );
        set(&mut shard_kvs, "split.count", OwnedValue::U16(count_u16));
        let dest = shard_path(prefix, no, count);
        write_model(&shard_kvs, &parts[range], &dest, true)?;
        written.push(dest);
    }
    Ok(written)
}

/// Merges the shard set whose first shard is `first` (named `PREFIX-00001-of-0000N.gguf`,
/// with `split.count` N) into `output`, which must not exist. Returns the bytes written.
pub fn merge(first: &Path, output: &Path) -> Result<u64, SplitError> {
    if fs::symlink_metadata(output).is_ok() {
        return Err(SplitError::OutputExists {
            path: output.to_path_buf(),
        });
    }
    let refused = |path: &Path, reason: String| SplitError::Refused {
        path: path.to_path_buf(),
        reason,
    };
    let head = open(first)?;
    let count = match parse(first, &head)?.get("split.count") {
        Some(Value::U16(n)) if n > 0 => usize::from(n),
        Some(Value::U16(_)) => return Err(refused(first, "split.count is 0".into())),
        Some(other) => {
            return Err(refused(
                first,
                format!("split.count is a {}, not a u16", other.value_type()),
            ))
        }
        None => return Err(refused(first, "no split.count: not a shard".into())),
    };
    let prefix = shard_prefix(first, 0, count).ok_or_else(|| {
        refused(
            first,
            format!("the first shard of {count} must be named PREFIX-00001-of-{count:05}.gguf"),
        )
    })?;
    // A set that does not hold together (a shard from another split, a count that disagrees)
    // would merge into a wrong model: refuse rather than guess.
    let shards = super::GgufSet::open(first).map_err(|source| SetError::Open {
        path: first.to_path_buf(),
        source,
    })?;
    if let Some((shard, d)) = shards
        .diagnose()
        .into_iter()
        // A missing shard is reported below as the file that cannot be opened.
        .find(|(_, d)| d.severity == Severity::Error && d.code != "set-missing-shard")
    {
        let at = d.span.as_ref().map_or(0, |span| span.start);
        return Err(refused(
            &shards.shards[shard].path,
            format!("offset {at:#x}: {} {}", d.path, d.message),
        ));
    }
    let mut files = vec![(first.to_path_buf(), head)];
    for no in 1..count {
        let path = shard_path(&prefix, no, count);
        // Found by name, so a FIFO or device planted there is refused before it is opened
        // (opening a FIFO blocks until a writer comes).
        if std::fs::metadata(&path).is_ok_and(|meta| !meta.is_file()) {
            let special = io::Error::new(io::ErrorKind::InvalidInput, "is not a regular file");
            return Err(SetError::Open {
                path,
                source: special,
            }
            .into());
        }
        let file = open(&path)?;
        files.push((path, file));
    }

    let mut kvs = Vec::new();
    let mut parts = Vec::new();
    for (no, (path, file)) in files.iter().enumerate() {
        let gguf = parse(path, file)?;
        if no == 0 {
            kvs = llama_kvs(path, &gguf)?;
            set(&mut kvs, "split.count", OwnedValue::U16(0));
        }
        parts.extend(llama_tensors(path, &gguf, file)?);
    }
    let mut seen = HashSet::new();
    if let Some(dup) = parts.iter().find(|p| !seen.insert(p.name)) {
        return Err(refused(
            &dup.path,
            format!(
                "tensor \"{}\" is also in an earlier shard",
                gguf_grammar::escape::terminal(dup.name)
            ),
        ));
    }
    write_model(&kvs, &parts, output, false)
}

/// A tensor as `llama-gguf-split` copies it.
struct Part<'a> {
    /// The file it comes from.
    path: PathBuf,
    name: &'a [u8],
    /// Dims as ggml writes them: trailing 1s dropped, at least one.
    dims: Vec<u64>,
    ggml_type: GgmlType,
    /// Where its bytes are, read with positioned reads (no memory map: a file truncated by
    /// another process meanwhile is an error, not a SIGBUS).
    file: &'a File,
    data: Range<u64>,
}

impl Part<'_> {
    fn len(&self) -> u64 {
        self.data.end - self.data.start
    }
}

/// An input: its header in memory, its file open for the tensor data, and its length.
struct Input {
    file: File,
    header: OwnedGguf,
    len: u64,
}

fn open(path: &Path) -> Result<Input, SplitError> {
    let open_error = |source| SetError::Open {
        path: path.to_path_buf(),
        source,
    };
    if path.is_dir() {
        let is_a_dir = io::Error::new(io::ErrorKind::InvalidInput, "is a directory");
        return Err(open_error(is_a_dir).into());
    }
    let file = File::open(path).map_err(open_error)?;
    let (header, len) = match Source::open(path).and_then(|mut s| s.read_header()) {
        Ok(read) => read,
        Err(SourceError::Invalid(source)) => {
            return Err(SetError::Parse {
                path: path.to_path_buf(),
                source,
            }
            .into())
        }
        Err(e) => return Err(open_error(io::Error::other(e.to_string())).into()),
    };
    Ok(Input { file, header, len })
}

/// Parses `input`'s header and refuses what `llama-gguf-split` cannot copy faithfully.
fn parse<'a>(path: &Path, input: &'a Input) -> Result<Gguf<'a>, SplitError> {
    let refused = |reason: String| SplitError::Refused {
        path: path.to_path_buf(),
        reason,
    };
    let gguf = input.header.gguf().clone();
    if gguf.endian() != Endian::Little {
        return Err(refused(
            "big-endian: llama-gguf-split reads little-endian files only".into(),
        ));
    }
    let diagnostics = validate::check(&gguf, input.len, Profile::GgmlData);
    if let Some(d) = diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error && Profile::GgmlData.rejects(d.rejected_by))
    {
        let at = d.span.as_ref().map_or(0, |span| span.start);
        return Err(refused(format!(
            "offset {at:#x}: {} {}: ggml's reader rejects it",
            d.path, d.message
        )));
    }
    if gguf.alignment != ALIGNMENT {
        return Err(refused(format!(
            "general.alignment {}: llama-gguf-split would lay the output out at 32 and keep \
             the key, a broken file",
            gguf.alignment
        )));
    }
    Ok(gguf)
}

/// The key/values as `llama-gguf-split` writes them back.
fn llama_kvs(path: &Path, gguf: &Gguf<'_>) -> Result<Vec<OwnedKv>, SplitError> {
    gguf.kvs
        .iter()
        .map(|pair| {
            let value = llama_value(pair.value).ok_or_else(|| SplitError::Refused {
                path: path.to_path_buf(),
                reason: format!(
                    "key \"{}\": arrays of arrays are not supported by llama-gguf-split",
                    gguf_grammar::escape::terminal(pair.key.as_bytes())
                ),
            })?;
            Ok(OwnedKv {
                key: pair.key.as_bytes().to_vec(),
                value,
            })
        })
        .collect()
}

/// A value as ggml stores it: booleans become 0 or 1; `None` for nested arrays.
fn llama_value(value: Value<'_>) -> Option<OwnedValue> {
    let bool_byte = |b: u8| OwnedValue::Bool(u8::from(b != 0));
    Some(match value {
        Value::Bool(b) => bool_byte(b),
        Value::Array(a) if a.element_type() == ValueType::Array => return None,
        Value::Array(a) if a.element_type() == ValueType::Bool => OwnedValue::array(
            ValueType::Bool,
            a.iter().map(|v| match v {
                Value::Bool(b) => bool_byte(b),
                other => other.into(),
            }),
        ),
        other => other.into(),
    })
}

/// Every tensor with its bytes, in file order.
fn llama_tensors<'a>(
    path: &Path,
    gguf: &Gguf<'a>,
    input: &'a Input,
) -> Result<Vec<Part<'a>>, SplitError> {
    gguf.tensors
        .iter()
        .map(|t| {
            let name = t.info.name.as_bytes();
            let refused = |why: &str| SplitError::Refused {
                path: path.to_path_buf(),
                reason: format!("tensor \"{}\": {why}", gguf_grammar::escape::terminal(name)),
            };
            if t.info.dims.len() > MAX_DIMS {
                return Err(refused("more than 4 dims"));
            }
            if t.info.dims.contains(&0) {
                return Err(refused("a zero dim, which ggml would drop from the shape"));
            }
            let data = t.data_range(input.len).map_err(|_| {
                refused("its data has no known size or lies past the end of the file")
            })?;
            let mut dims = t.info.dims.clone();
            dims.resize(MAX_DIMS, 1);
            let n_dims = dims.iter().rposition(|&d| d > 1).map_or(1, |i| i + 1);
            dims.truncate(n_dims);
            Ok(Part {
                path: path.to_path_buf(),
                name,
                dims,
                ggml_type: t.info.ggml_type,
                file: &input.file,
                data,
            })
        })
        .collect()
}

/// Which tensors each shard holds, cut as `llama-gguf-split` cuts.
fn plan(
    parts: &[Part<'_>],
    options: &SplitOptions,
) -> Result<Vec<std::ops::Range<usize>>, SplitError> {
    if matches!(options.limit, SplitLimit::Tensors(0) | SplitLimit::Bytes(0)) {
        return Err(SplitError::EmptyShard { shard: 1 });
    }
    // Each shard's tensors; the first shard exists even without tensors.
    let first_shards = if options.no_tensor_first_split { 2 } else { 1 };
    let mut shards: Vec<std::ops::Range<usize>> = (0..first_shards).map(|_| 0..0).collect();
    let mut size = 0u64;
    for (i, part) in parts.iter().enumerate() {
        let padded = padded(part.len());
        let next = size.saturating_add(padded);
        let cut = match options.limit {
            SplitLimit::Bytes(max) => next > max,
            SplitLimit::Tensors(n) => i > 0 && i as u64 % n == 0,
        };
        let current = shards.len() - 1;
        if cut {
            if shards[current].is_empty() {
                return Err(SplitError::EmptyShard { shard: current + 1 });
            }
            shards.push(i..i);
            size = padded;
        } else {
            size = next;
        }
        let last = shards.len() - 1;
        shards[last].end = i + 1;
    }
    Ok(shards)
}

fn padded(len: u64) -> u64 {
    align_up(len, ALIGNMENT).unwrap_or(u64::MAX)
}

fn set(kvs: &mut Vec<OwnedKv>, key: &str, value: OwnedValue) {
    kvs.retain(|pair| pair.key != key.as_bytes());
    kvs.push(OwnedKv {
        key: key.as_bytes().to_vec(),
        value,
    });
}

/// Writes one GGUF v3 file holding `kvs` and `parts` to `dest`, atomically, and checks the
/// result: it parses, and every tensor's name and bytes are the source's. A `generated`
/// name (a shard's) is never followed ([`Replace::generated`]).
fn write_model(
    kvs: &[OwnedKv],
    parts: &[Part<'_>],
    dest: &Path,
    generated: bool,
) -> Result<u64, SplitError> {
    let mut builder = GgufBuilder::new(Ctx::V3_LE);
    builder.kvs = kvs.to_vec();
    let mut offset = 0u64;
    for part in parts {
        builder.tensor_at(part.name, &part.dims, part.ggml_type, offset, &[]);
        offset = offset.saturating_add(padded(part.len()));
    }
    let mut head = builder.build().map_err(EditError::from)?;
    head.resize(padded(head.len() as u64) as usize, 0);

    let zeros = [0u8; ALIGNMENT as usize];
    let write = |out: &mut dyn io::Write| {
        let io_err = |source| EditError::Io {
            path: dest.to_path_buf(),
            source,
        };
        out.write_all(&head).map_err(io_err)?;
        let mut written = head.len() as u64;
        for part in parts {
            let len = part.len();
            copy_range(part.file, part.data.start, len, out).map_err(|e| match e {
                RangeError::Write(e) => io_err(e),
                source => CheckError::Read {
                    path: part.path.to_path_buf(),
                    source,
                }
                .into(),
            })?;
            // Below the alignment: a tensor's length padded differs by less than it.
            out.write_all(&zeros[..(padded(len) - len) as usize])
                .map_err(io_err)?;
            written += padded(len);
        }
        Ok(written)
    };
    let check = |temp: &Path| {
        let bad = |what: String| {
            EditError::from(CheckError::Differs {
                path: dest.to_path_buf(),
                what,
            })
        };
        let io_err = |source| EditError::Io {
            path: temp.to_path_buf(),
            source,
        };
        let file = File::open(temp).map_err(io_err)?;
        let (head, len) = match Source::open(temp).and_then(|mut s| s.read_header()) {
            Ok(read) => read,
            Err(SourceError::Io { source, .. }) => return Err(io_err(source)),
            Err(source) => {
                return Err(CheckError::NotGguf {
                    path: dest.to_path_buf(),
                    source,
                }
                .into())
            }
        };
        let gguf = head.gguf();
        if gguf.kvs.len() != kvs.len() || gguf.tensors.len() != parts.len() {
            return Err(bad(
                "key or tensor count differs from what was written".into()
            ));
        }
        for (t, part) in gguf.tensors.iter().zip(parts) {
            let same = match t.data_range(len) {
                Ok(range) if range.end - range.start == part.len() => {
                    holds_copy(&file, range.start, part.file, part.data.start, part.len()).map_err(
                        |source| CheckError::Read {
                            path: part.path.to_path_buf(),
                            source,
                        },
                    )?
                }
                _ => false,
            };
            if t.info.name.as_bytes() != part.name || !same {
                return Err(bad(format!(
                    "tensor \"{}\" does not read back as written",
                    gguf_grammar::escape::terminal(part.name)
                )));
            }
        }
        Ok(())
    };
    let replace = Replace {
        generated,
        ..Replace::default()
    };
    Ok(replace_atomically(dest, &replace, None, write, check)?)
}
