//! Shard sets: one model stored as `NAME-00001-of-0000N.gguf` … as llama.cpp's `gguf-split`
//! writes them.
//!
//! [`GgufSet::open`] takes any shard, finds its siblings by name and reads their headers
//! (tensor data is read later with positioned reads, through [`ShardFile::file`]: no memory
//! map, so a shard truncated meanwhile is an error rather than a SIGBUS);
//! [`GgufSet::diagnose`] checks the set against what `gguf-split` writes and llama.cpp's
//! loader expects, naming the shard of each finding; [`GgufSet::parse`] presents one model:
//! the first shard's metadata and every shard's tensors, each with its shard.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use gguf_tools::set::split::{split, SplitLimit, SplitOptions};
//! use gguf_tools::set::GgufSet;
//! use gguf_grammar::write::GgufBuilder;
//! use gguf_grammar::{Ctx, GgmlType};
//!
//! let dir = std::env::temp_dir().join(format!("gguf-set-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let w = [0u8; 64];
//! let model = GgufBuilder::new(Ctx::V3_LE)
//!     .kv("general.architecture", "llama")
//!     .tensor("a", &[16], GgmlType::F32, &w)
//!     .tensor("b", &[16], GgmlType::F32, &w)
//!     .build()?;
//! std::fs::write(dir.join("m.gguf"), &model)?;
//! let options = SplitOptions { limit: SplitLimit::Tensors(1), no_tensor_first_split: false };
//! let shards = split(&dir.join("m.gguf"), &dir.join("m"), &options)?;
//!
//! let set = GgufSet::open(&shards[1])?; // any shard
//! assert_eq!(set.shards.len(), 2);
//! assert!(set.diagnose().is_empty());
//! let model = set.parse()?;
//! assert_eq!(model.metadata().get("general.architecture").and_then(|v| v.as_str()), Some("llama"));
//! let located: Vec<_> = model.tensors().map(|(shard, t)| (shard, t.info.name.to_string())).collect();
//! assert_eq!(located, [(0, "a".to_string()), (1, "b".to_string())]);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok(()) }
//! ```

use crate::codes;
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use gguf_grammar::error::ReadError;
use gguf_grammar::summary;
use gguf_grammar::validate::{At, Diagnostic, Diagnostics, Severity, MAX_PER_KIND};
use gguf_grammar::{Gguf, OwnedGguf, Tensor, Value};

pub mod split;

/// The keys `gguf-split` writes in every shard.
const SPLIT_KEYS: [&str; 3] = ["split.no", "split.count", "split.tensors.count"];

/// The files of one model: a shard set found by name, or a single file.
#[derive(Debug)]
pub struct GgufSet {
    /// `PREFIX` of `PREFIX-00001-of-0000N.gguf`; `None` for a file not named as a shard.
    pub prefix: Option<PathBuf>,
    /// Every shard in order (one for a single file).
    pub shards: Vec<Shard>,
}

/// One file of a set.
#[derive(Debug)]
pub struct Shard {
    /// Where it is (or should be).
    pub path: PathBuf,
    /// Its header and file, or why it could not be opened (a missing shard).
    pub file: Result<ShardFile, io::Error>,
}

/// An opened shard: its header read into memory, its length, and the file itself for
/// positioned reads of tensor data ([`gguf_grammar::file_range::read_exact_at`]).
#[derive(Debug)]
pub struct ShardFile {
    file: File,
    len: u64,
    /// The header, or why it is not a GGUF header.
    header: Result<OwnedGguf, gguf_grammar::Error>,
}

impl ShardFile {
    /// Opens `path` and reads its header, parsed once (reading at most four times the
    /// header, never the whole of a larger file, as [`crate::source::Source::read_header`]).
    /// It must be a regular file (its tensor data is read at offsets): a pipe or device is
    /// refused before anything is read from it.
    pub fn open(path: &Path) -> io::Result<ShardFile> {
        let meta = std::fs::metadata(path)?;
        if !meta.is_file() {
            let what = match meta.is_dir() {
                true => "is a directory",
                false => "is not a regular file",
            };
            return Err(io::Error::new(io::ErrorKind::InvalidInput, what));
        }
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        let limit = crate::source::max_header();
        let header = match gguf_grammar::stream::read_file_header(
            io::Read::take(&file, limit),
            len.min(limit),
        ) {
            Ok(owned) => Ok(owned),
            Err(ReadError::Parse(e)) => Err(crate::source::limited(e, limit, Some(len), 0)?),
            Err(ReadError::Io(e)) => return Err(e),
        };
        Ok(ShardFile { file, len, header })
    }

    /// The shard's header (its tensors' data offsets are absolute in [`ShardFile::file`]),
    /// parsed when the file was opened.
    pub fn parse(&self) -> Result<Gguf<'_>, gguf_grammar::Error> {
        match &self.header {
            Ok(header) => Ok(header.gguf().clone()),
            Err(e) => Err(e.clone()),
        }
    }

    /// The file's length when it was opened.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file was empty when it was opened.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The file, for positioned reads of tensor data.
    pub fn file(&self) -> &File {
        &self.file
    }
}

/// Why a set could not be presented as one model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetError {
    /// A shard could not be opened.
    #[error("{}: {source}", path.display())]
    Open {
        /// The shard.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// A shard is not GGUF.
    #[error("{}: {source}", path.display())]
    Parse {
        /// The shard.
        path: PathBuf,
        /// Where and why.
        source: gguf_grammar::Error,
    },
}

/// Every shard parsed: one model.
#[derive(Debug)]
pub struct ParsedSet<'a> {
    /// Each shard's header, in order (its tensor data is read through [`ShardFile::file`]).
    pub shards: Vec<Gguf<'a>>,
}

impl GgufSet {
    /// Opens `path` and, when it is named `PREFIX-0000K-of-0000N.gguf`, its N-1 siblings (a
    /// missing sibling is recorded in [`Shard::file`], and reported by [`GgufSet::diagnose`]).
    /// A file named otherwise is a set of one. Fails only when `path` itself cannot be opened.
    pub fn open(path: impl AsRef<Path>) -> io::Result<GgufSet> {
        let path = path.as_ref();
        let file = ShardFile::open(path)?;
        let Some((prefix, no, count)) = shard_name(path) else {
            return Ok(GgufSet {
                prefix: None,
                shards: vec![Shard {
                    path: path.to_path_buf(),
                    file: Ok(file),
                }],
            });
        };
        let mut given = Some(file);
        // Grown shard by shard, never reserved by the count the name claims.
        let mut shards = Vec::new();
        for i in 0..count {
            let path = shard_path(&prefix, i, count);
            let given = if i == no { given.take() } else { None };
            let file = match given {
                Some(file) => Ok(file),
                None => ShardFile::open(&path),
            };
            shards.push(Shard { path, file });
        }
        Ok(GgufSet {
            prefix: Some(prefix),
            shards,
        })
    }

    /// Whether this is a set of more than one file, or one file named as a shard.
    pub fn is_sharded(&self) -> bool {
        self.prefix.is_some()
    }

    /// Parses every shard; fails on the first that is missing or not GGUF.
    pub fn parse(&self) -> Result<ParsedSet<'_>, SetError> {
        let shards = self
            .shards
            .iter()
            .map(|shard| {
                let file = shard.file.as_ref().map_err(|e| SetError::Open {
                    path: shard.path.clone(),
                    source: io::Error::new(e.kind(), e.to_string()),
                })?;
                file.parse().map_err(|source| SetError::Parse {
                    path: shard.path.clone(),
                    source,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(ParsedSet { shards })
    }

    /// Checks the set as `gguf-split` writes it and llama.cpp's loader reads it: every shard
    /// present and parsing; `split.no` 0..N-1 in order; the same `split.count`, equal to the
    /// number of shards; `split.tensors.count` equal to the tensors found; metadata other than
    /// the split keys only in the first shard (a warning); no tensor name in two shards.
    /// Each finding comes with the index of the shard it is about. A file not named as a
    /// shard gets no findings (its own checks are [`gguf_grammar::validate`]'s).
    pub fn diagnose(&self) -> Vec<(usize, Diagnostic)> {
        let mut found = Vec::new();
        if !self.is_sharded() {
            return found;
        }
        let count = self.shards.len() as u64;
        let parsed: Vec<Option<Gguf<'_>>> = self
            .shards
            .iter()
            .map(|s| s.file.as_ref().ok().and_then(|f| f.parse().ok()))
            .collect();
        let total: u64 = parsed
            .iter()
            .flatten()
            .map(|g| g.tensors.len() as u64)
            .sum();
        let any_missing = parsed.iter().any(Option::is_none);
        // Shards missing or not GGUF, counted over the whole set: the first
        // [`MAX_PER_KIND`] are reported each, the rest as one "and N more" on the first shard.
        let mut missing = 0u64;
        let mut first_seen: HashMap<&[u8], usize> = HashMap::new();
        for (i, (shard, gguf)) in self.shards.iter().zip(&parsed).enumerate() {
            let mut diagnostics = Diagnostics::default();
            let Some(gguf) = gguf else {
                missing += 1;
                if missing > MAX_PER_KIND {
                    continue;
                }
                let why = match &shard.file {
                    Err(e) => format!("shard {} of {count} cannot be read: {e}", i + 1),
                    Ok(_) => format!("shard {} of {count} is not GGUF", i + 1),
                };
                diagnostics.report(codes::SET_MISSING_SHARD, At::default(), why);
                found.extend(diagnostics.finish().into_iter().map(|d| (i, d)));
                continue;
            };
            let key = |name: &str| {
                gguf.kvs
                    .iter()
                    .position(|kv| kv.key.as_bytes() == name.as_bytes())
            };
            let expect = [
                (
                    "split.no",
                    i as u64,
                    codes::SET_SPLIT_NO,
                    "the shard's place by name",
                ),
                (
                    "split.count",
                    count,
                    codes::SET_SPLIT_COUNT,
                    "the number of shards by name",
                ),
                (
                    "split.tensors.count",
                    total,
                    codes::SET_TENSORS_COUNT,
                    "the tensors found in all shards",
                ),
            ];
            for (name, wanted, code, what) in expect {
                // With a shard missing, the tensors found say nothing about the count.
                if code == codes::SET_TENSORS_COUNT && any_missing {
                    continue;
                }
                match key(name) {
                    None => diagnostics.report(
                        code,
                        At::default(),
                        format!("no {name}; expected {wanted}, {what}"),
                    ),
                    Some(at) => {
                        let value = gguf.kvs[at].value;
                        if summary::count(value) != Some(wanted) {
                            diagnostics.report(
                                code,
                                At::kv(gguf, at),
                                format!("{name} is {}, expected {wanted}, {what}", shown(value)),
                            );
                        }
                    }
                }
            }
            if i > 0 {
                for (at, kv) in gguf.kvs.iter().enumerate() {
                    if !SPLIT_KEYS.iter().any(|k| kv.key.as_bytes() == k.as_bytes()) {
                        diagnostics.report(
                            codes::SET_METADATA_OUTSIDE_FIRST,
                            At::kv(gguf, at),
                            "metadata outside the first shard (gguf-split writes it in the first only; readers use the first shard's)".into(),
                        );
                    }
                }
            }
            for (t, tensor) in gguf.tensors.iter().enumerate() {
                let name = tensor.info.name.as_bytes();
                match first_seen.get(name) {
                    Some(&earlier) if earlier != i => diagnostics.report(
                        codes::SET_DUPLICATE_TENSOR,
                        At::tensor(gguf, t),
                        format!(
                            "also in shard {} ({})",
                            earlier + 1,
                            self.shards[earlier].path.display()
                        ),
                    ),
                    Some(_) => {}
                    None => {
                        first_seen.insert(name, i);
                    }
                }
            }
            found.extend(diagnostics.finish().into_iter().map(|d| (i, d)));
        }
        if missing > MAX_PER_KIND {
            let mut diagnostics = Diagnostics::default();
            diagnostics.report(
                codes::SET_MISSING_SHARD,
                At::default(),
                format!(
                    "and {} more shards of {count} missing or not GGUF",
                    missing - MAX_PER_KIND
                ),
            );
            found.extend(diagnostics.finish().into_iter().map(|d| (0, d)));
        }
        found
    }
}

/// Whether `diagnostics` hold no set error (the set findings are llama.cpp's loader's rules,
/// not a container reader's, so no [`gguf_grammar::validate::Profile`] covers them).
pub fn accepts_set(diagnostics: &[Diagnostic]) -> bool {
    !diagnostics
        .iter()
        .any(|d| d.code.name().starts_with("set-") && d.severity == Severity::Error)
}

fn shown(value: Value<'_>) -> String {
    match summary::count(value) {
        Some(n) => n.to_string(),
        None => crate::edit::a(&value.value_type()),
    }
}

impl<'a> ParsedSet<'a> {
    /// The model's metadata: the first shard's document (its key/values; its tensors are the
    /// first shard's only).
    pub fn metadata(&self) -> &Gguf<'a> {
        &self.shards[0]
    }

    /// Every tensor of every shard in order, with the index of its shard (its
    /// [`Tensor::data_offset`] is absolute in that shard's file).
    pub fn tensors(&self) -> impl Iterator<Item = (usize, &Tensor<'a>)> {
        self.shards
            .iter()
            .enumerate()
            .flat_map(|(i, g)| g.tensors.iter().map(move |t| (i, t)))
    }

    /// The model as one document: the first shard's header and key/values with every shard's
    /// tensors (for renderers that take a [`Gguf`]; offsets stay relative to each shard). A
    /// single file is borrowed, not copied.
    pub fn model(&self) -> std::borrow::Cow<'_, Gguf<'a>> {
        if let [only] = &self.shards[..] {
            return std::borrow::Cow::Borrowed(only);
        }
        let mut model = self.shards[0].clone();
        model.tensors = self.tensors().map(|(_, t)| t.clone()).collect();
        std::borrow::Cow::Owned(model)
    }
}

/// The path of shard `no` (from 0) of `count`: `PREFIX-0000{no+1}-of-0000{count}.gguf`, as
/// llama.cpp's `llama_split_path` names it.
///
/// ```
/// use gguf_tools::set::shard_path;
/// use std::path::Path;
///
/// assert_eq!(shard_path(Path::new("out/model"), 0, 3), Path::new("out/model-00001-of-00003.gguf"));
/// ```
pub fn shard_path(prefix: &Path, no: usize, count: usize) -> PathBuf {
    let mut path = OsString::from(prefix.as_os_str());
    path.push(shard_suffix(no, count));
    PathBuf::from(path)
}

/// The prefix of `path` when it is named as shard `no` of `count` (the inverse of
/// [`shard_path`], as llama.cpp's `llama_split_prefix`), else `None`.
///
/// ```
/// use gguf_tools::set::shard_prefix;
/// use std::path::Path;
///
/// let first = Path::new("out/model-00001-of-00003.gguf");
/// assert_eq!(shard_prefix(first, 0, 3).as_deref(), Some(Path::new("out/model")));
/// assert_eq!(shard_prefix(first, 0, 2), None);
/// ```
pub fn shard_prefix(path: &Path, no: usize, count: usize) -> Option<PathBuf> {
    strip_suffix(path.as_os_str(), &shard_suffix(no, count)).map(PathBuf::from)
}

/// `(prefix, no from 0, count)` when `path` is named `PREFIX-0000K-of-0000N.gguf` with
/// 1 <= K <= N <= 65535 (at least five digits each, as `gguf-split` writes them; N beyond
/// `split.count`'s u16 is no shard set, so a name never sets an unbounded count).
pub fn shard_name(path: &Path) -> Option<(PathBuf, usize, usize)> {
    // Only the ASCII tail is read here; a non-UTF-8 prefix is kept as is by `shard_prefix`.
    let name = path.file_name()?.to_string_lossy();
    let stem = name.strip_suffix(".gguf")?;
    let (rest, count) = stem.rsplit_once("-of-")?;
    let (_, no) = rest.rsplit_once('-')?;
    let digits = |s: &str| s.len() >= 5 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(no) || !digits(count) {
        return None;
    }
    let (no, count): (usize, usize) = (no.parse().ok()?, count.parse().ok()?);
    if no == 0 || no > count || count > usize::from(u16::MAX) {
        return None;
    }
    let prefix = shard_prefix(path, no - 1, count)?;
    Some((prefix, no - 1, count))
}

fn shard_suffix(no: usize, count: usize) -> String {
    format!("-{:05}-of-{count:05}.gguf", no + 1)
}

/// `name` without the ASCII `suffix`, when it ends with it and something precedes it.
fn strip_suffix(name: &OsStr, suffix: &str) -> Option<OsString> {
    let bytes = name.as_encoded_bytes();
    let kept = bytes.strip_suffix(suffix.as_bytes())?;
    if kept.is_empty() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Some(OsStr::from_bytes(kept).to_os_string())
    }
    #[cfg(not(unix))]
    {
        name.to_str()?.strip_suffix(suffix).map(OsString::from)
    }
}
