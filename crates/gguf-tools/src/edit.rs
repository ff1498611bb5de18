//! Metadata editing from text, as `gguf edit` does it, and safe file replacement.
//!
//! An edit is a [`GgufBuilder`] made from the parsed file, changed by [`Edit`]s, and written
//! with [`write_atomically`]: to a temporary file in the destination's folder, checked by
//! parsing it again, synced, then renamed over the destination. A failure at any point (a bad
//! value, a full disk, an interrupted run) leaves the destination as it was.
//!
//! Every tensor's bytes are kept: the data region of the source is copied verbatim after the
//! new header, at the re-aligned data start, so relative offsets stay valid (see
//! [`gguf_grammar::write`]).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use gguf_tools::edit::Edit;
//! use gguf_grammar::write::GgufBuilder;
//! use gguf_grammar::Gguf;
//!
//! let bytes = std::fs::read("../../tests/conformance/cases/llama-8-tokens.gguf")?;
//! let gguf = Gguf::parse(&bytes)?;
//! let mut builder = GgufBuilder::from_gguf(&gguf);
//! for arg in ["general.name=minimal edited", "my.count=u16:7"] {
//!     Edit::parse_set(arg)?.apply(&mut builder)?;
//! }
//! Edit::Remove("tokenizer.ggml.scores".into()).apply(&mut builder)?;
//!
//! let out = builder.build()?;
//! let edited = Gguf::parse(&out)?;
//! assert_eq!(edited.get("general.name").and_then(|v| v.as_str()), Some("minimal edited"));
//! assert_eq!(edited.get("my.count").and_then(|v| v.as_u64()), Some(7));
//! assert!(edited.get("tokenizer.ggml.scores").is_none());
//!
//! // Values are checked against the existing key's type.
//! let err = Edit::parse_set("tokenizer.ggml.bos_token_id=-1")?.apply(&mut builder).unwrap_err();
//! assert_eq!(err.to_string(), "tokenizer.ggml.bos_token_id: \"-1\" is not a valid uint32");
//! # Ok(()) }
//! ```

use std::fs::{self, File};
use std::io::{self, BufWriter};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use gguf_grammar::write::{GgufBuilder, OwnedValue, WriteError};
use gguf_grammar::ValueType;

/// Why an edit could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// A `--set` argument without `=`.
    #[error("{0:?}: expected KEY=VALUE or KEY=TYPE:VALUE")]
    BadAssignment(String),
    /// A value that does not parse as its type.
    #[error("{key}: {text:?} is not a valid {ty}")]
    BadValue {
        /// The key being set.
        key: String,
        /// The type the value was parsed as.
        ty: SetType,
        /// The value's text.
        text: String,
    },
    /// A new key given without a type.
    #[error("{0}: new key needs a type (KEY=TYPE:VALUE, TYPE one of {TYPES})")]
    NewKeyNeedsType(String),
    /// An existing key holding arrays of arrays, which text cannot give.
    #[error("{0}: the key holds nested arrays, which cannot be set from text")]
    ArrayValue(String),
    /// A set or rename to the empty key.
    #[error("the empty key is not allowed")]
    EmptyKey,
    /// A rename onto a key the file already has (it would write a duplicate).
    #[error("{0}: the key exists already")]
    KeyExists(String),
    /// A set whose type differs from the existing key's.
    #[error(
        "{key}: holds {}; setting {} changes its type (allow with --force-type)",
        a(from),
        a(to)
    )]
    TypeChange {
        /// The key.
        key: String,
        /// Its current type.
        from: SetType,
        /// The type given.
        to: SetType,
    },
    /// A key to remove or rename that the file does not have.
    #[error("{0}: no such key")]
    MissingKey(String),
    /// The edited document cannot be written.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The written file is not what was meant (a bug or a failing disk; the destination is
    /// kept).
    #[error(transparent)]
    Verify(#[from] gguf_grammar::write::VerifyError),
    /// The destination exists and is not a regular file (a device, FIFO, folder...).
    #[error("{}: not a regular file; refusing to replace it", .0.display())]
    NotRegular(PathBuf),
    /// A generated destination ([`Replace::generated`]) is a symbolic link.
    #[error("{}: is a symbolic link; refusing to write a generated file through it", .0.display())]
    Linked(PathBuf),
    /// The destination has other hard links, which would keep the old content.
    #[error("{}: has {links} hard links; replacing it leaves the other names with the old file (allow with --break-links)", path.display())]
    HardLinked {
        /// The file.
        path: PathBuf,
        /// Its link count.
        links: u64,
    },
    /// The destination has no write permission.
    #[error("{}: is read-only; refusing to replace it (allow with --force)", .0.display())]
    ReadOnly(PathBuf),
    /// The destination changed since it was read: another writer got there first.
    #[error("{}: changed while being edited (another writer?); nothing replaced", .0.display())]
    Changed(PathBuf),
    /// The write was cancelled ([`Replace::cancel`]); the temporary file was removed.
    #[error("interrupted; nothing written")]
    Cancelled,
    /// The written file did not read back as intended; nothing was replaced.
    #[error("the written file failed its check: {0}")]
    Check(#[from] CheckError),
    /// The destination is a symbolic link to nothing (writing through it would create a file
    /// wherever it points).
    #[error("{}: dangling symbolic link to {}; nothing written", link.display(), target.display())]
    Dangling {
        /// The link.
        link: PathBuf,
        /// Where it points.
        target: PathBuf,
    },
    /// A file operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
}

/// Why a written file failed its check (see [`EditError::Check`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// A file being copied or compared could not be read to the end: it shrank meanwhile, or
    /// reading it failed.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: gguf_grammar::file_range::RangeError,
    },
    /// The written file does not read back as GGUF.
    #[error("{}: {source}", path.display())]
    NotGguf {
        /// The file.
        path: PathBuf,
        /// Why.
        source: crate::source::SourceError,
    },
    /// The written file reads back, but not as it was written.
    #[error("{}: {what}", path.display())]
    Differs {
        /// The file.
        path: PathBuf,
        /// What differs, and where.
        what: String,
    },
}

/// The type names accepted in `KEY=TYPE:VALUE`; `[TYPE]` is an array of them.
pub const TYPES: &str = "u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool string";

/// `thing` after its indefinite article: "a uint32", "an int32", "an array of string".
pub(crate) fn a(thing: &impl std::fmt::Display) -> String {
    let thing = thing.to_string();
    match thing.starts_with(['a', 'e', 'i', 'o']) {
        true => format!("an {thing}"),
        false => format!("a {thing}"),
    }
}

/// The type a `--set` writes: a scalar, or an array of scalars (given as a JSON array).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetType {
    /// One value of this type.
    Scalar(ValueType),
    /// An array with this element type.
    ArrayOf(ValueType),
}

impl SetType {
    /// The type of an existing value (`None` for arrays of arrays, which text cannot give,
    /// and for arrays of an unknown element type).
    pub fn of(value: &OwnedValue) -> Option<SetType> {
        match value {
            OwnedValue::RawArray(a) => a
                .array()
                .element_type()
                .known()
                .filter(|&ty| ty != ValueType::Array)
                .map(SetType::ArrayOf),
            OwnedValue::Array(a) => a
                .element_type
                .known()
                .filter(|&ty| ty != ValueType::Array)
                .map(SetType::ArrayOf),
            v => Some(SetType::Scalar(v.value_type())),
        }
    }
}

impl std::fmt::Display for SetType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetType::Scalar(ty) => write!(f, "{ty}"),
            SetType::ArrayOf(ty) => write!(f, "array of {ty}"),
        }
    }
}

/// One change to a document's key/values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Sets the first pair with `key` (keeping its position), or appends a new pair. Without
    /// `ty`, the value is parsed as the existing key's type.
    Set {
        /// The key.
        key: String,
        /// The type to write, if given.
        ty: Option<SetType>,
        /// The value's text.
        text: String,
    },
    /// Removes every pair with this key.
    Remove(String),
    /// Renames the first pair with `from` to `to`.
    Rename {
        /// The current key.
        from: String,
        /// The new key.
        to: String,
    },
}

impl Edit {
    /// Reads `KEY=VALUE` or `KEY=TYPE:VALUE` (TYPE one of [`TYPES`], or `[TYPE]` for an
    /// array written as a JSON array). A value that starts with something else before a
    /// colon is untyped: `k=a:b` sets `k` to `a:b`; write `k=string:u8:x` to set the string
    /// `u8:x`.
    ///
    /// ```
    /// use gguf_tools::edit::{Edit, SetType};
    /// use gguf_grammar::ValueType;
    ///
    /// assert_eq!(
    ///     Edit::parse_set("a.b=u32:7").unwrap(),
    ///     Edit::Set { key: "a.b".into(), ty: Some(SetType::Scalar(ValueType::U32)), text: "7".into() }
    /// );
    /// assert_eq!(
    ///     Edit::parse_set("ids=[u32]:[1, 2, 3]").unwrap(),
    ///     Edit::Set { key: "ids".into(), ty: Some(SetType::ArrayOf(ValueType::U32)), text: "[1, 2, 3]".into() }
    /// );
    /// assert_eq!(
    ///     Edit::parse_set("t={{ x }}: y").unwrap(),
    ///     Edit::Set { key: "t".into(), ty: None, text: "{{ x }}: y".into() }
    /// );
    /// ```
    pub fn parse_set(arg: &str) -> Result<Edit, EditError> {
        let (key, rest) = arg
            .split_once('=')
            .ok_or_else(|| EditError::BadAssignment(arg.to_owned()))?;
        let named = |name: &str| match name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
            Some(element) => type_named(element).map(SetType::ArrayOf),
            None => type_named(name).map(SetType::Scalar),
        };
        let (ty, text) = match rest.split_once(':') {
            Some((name, text)) => match named(name) {
                Some(ty) => (Some(ty), text),
                None => (None, rest),
            },
            None => (None, rest),
        };
        Ok(Edit::Set {
            key: key.to_owned(),
            ty,
            text: text.to_owned(),
        })
    }

    /// Reads `OLD=NEW`.
    pub fn parse_rename(arg: &str) -> Result<Edit, EditError> {
        let (from, to) = arg
            .split_once('=')
            .ok_or_else(|| EditError::BadAssignment(arg.to_owned()))?;
        Ok(Edit::Rename {
            from: from.to_owned(),
            to: to.to_owned(),
        })
    }

    /// Applies the edit. A set without a type parses the value as the existing key's type;
    /// a set whose type differs from the existing key's is refused
    /// ([`EditError::TypeChange`]; see [`apply_changing_type`](Edit::apply_changing_type)).
    /// Empty keys, renames onto an existing key and removing or renaming a missing key are
    /// refused too.
    pub fn apply(&self, builder: &mut GgufBuilder<'_>) -> Result<(), EditError> {
        self.apply_with(builder, false)
    }

    /// [`apply`](Edit::apply), allowing a set to change the type of an existing key.
    pub fn apply_changing_type(&self, builder: &mut GgufBuilder<'_>) -> Result<(), EditError> {
        self.apply_with(builder, true)
    }

    fn apply_with(
        &self,
        builder: &mut GgufBuilder<'_>,
        change_type: bool,
    ) -> Result<(), EditError> {
        match self {
            Edit::Set { key, ty, text } => {
                if key.is_empty() {
                    return Err(EditError::EmptyKey);
                }
                let existing = builder
                    .get(key)
                    .map(|v| SetType::of(v).ok_or_else(|| EditError::ArrayValue(key.clone())));
                let existing = existing.transpose()?;
                let ty = match (ty, existing) {
                    (Some(ty), Some(old)) if *ty != old && !change_type => {
                        return Err(EditError::TypeChange {
                            key: key.clone(),
                            from: old,
                            to: *ty,
                        })
                    }
                    (Some(ty), _) => *ty,
                    (None, Some(old)) => old,
                    (None, None) => return Err(EditError::NewKeyNeedsType(key.clone())),
                };
                let value = parse_typed(ty, text).ok_or_else(|| EditError::BadValue {
                    key: key.clone(),
                    ty,
                    text: text.clone(),
                })?;
                builder.set(key, value);
            }
            Edit::Remove(key) => {
                if builder.get(key).is_none() {
                    return Err(EditError::MissingKey(key.clone()));
                }
                builder.remove(key);
            }
            Edit::Rename { from, to } => {
                if to.is_empty() {
                    return Err(EditError::EmptyKey);
                }
                if from != to && builder.get(to).is_some() {
                    return Err(EditError::KeyExists(to.clone()));
                }
                if !builder.rename(from, to) {
                    return Err(EditError::MissingKey(from.clone()));
                }
            }
        }
        Ok(())
    }
}

/// Parses `text` as a value of `ty`: a scalar as [`parse_value`] does, an array from a JSON
/// array whose elements are each such a scalar (strings as JSON strings).
fn parse_typed(ty: SetType, text: &str) -> Option<OwnedValue> {
    let element = match ty {
        SetType::Scalar(ty) => return parse_value(ty, text),
        SetType::ArrayOf(element) => element,
    };
    let items: Vec<serde_json::Value> = serde_json::from_str(text).ok()?;
    let elements = items
        .iter()
        .map(|item| match (element, item) {
            (ValueType::String, serde_json::Value::String(s)) => Some(OwnedValue::from(&s[..])),
            (ValueType::String, _) => None,
            (_, serde_json::Value::Number(n)) => parse_value(element, &n.to_string()),
            (_, serde_json::Value::Bool(b)) => parse_value(element, &b.to_string()),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(OwnedValue::array(element, elements))
}

/// The value type a `TYPE:` prefix names.
fn type_named(name: &str) -> Option<ValueType> {
    ValueType::ALL
        .into_iter()
        .find(|ty| *ty != ValueType::Array && ty.short_name() == name)
}

/// Parses `text` as a scalar of type `ty`: decimal integers, Rust float syntax, `true` /
/// `false` for bools, any text for strings; `None` if it does not fit (arrays never do).
///
/// ```
/// use gguf_tools::edit::parse_value;
/// use gguf_grammar::write::OwnedValue;
/// use gguf_grammar::ValueType;
///
/// assert_eq!(parse_value(ValueType::I8, "-3"), Some(OwnedValue::I8(-3)));
/// assert_eq!(parse_value(ValueType::U8, "256"), None);
/// assert_eq!(parse_value(ValueType::Bool, "true"), Some(OwnedValue::Bool(1)));
/// ```
pub fn parse_value(ty: ValueType, text: &str) -> Option<OwnedValue> {
    Some(match ty {
        ValueType::U8 => OwnedValue::U8(text.parse().ok()?),
        ValueType::I8 => OwnedValue::I8(text.parse().ok()?),
        ValueType::U16 => OwnedValue::U16(text.parse().ok()?),
        ValueType::I16 => OwnedValue::I16(text.parse().ok()?),
        ValueType::U32 => OwnedValue::U32(text.parse().ok()?),
        ValueType::I32 => OwnedValue::I32(text.parse().ok()?),
        ValueType::U64 => OwnedValue::U64(text.parse().ok()?),
        ValueType::I64 => OwnedValue::I64(text.parse().ok()?),
        ValueType::F32 => OwnedValue::F32(finite_unless_said(text.parse().ok()?, text)?),
        ValueType::F64 => OwnedValue::F64(finite_unless_said(text.parse().ok()?, text)?),
        ValueType::Bool => OwnedValue::from(text.parse::<bool>().ok()?),
        ValueType::String => OwnedValue::from(text),
        ValueType::Array => return None,
    })
}

/// How [`write_atomically`] may treat an existing destination, and when to give up.
#[derive(Clone, Debug, Default)]
pub struct Replace {
    /// Replace a file that has other hard links: they keep the old content.
    pub break_links: bool,
    /// Replace a file without write permission.
    pub read_only: bool,
    /// The destination is a name the tool chose inside an output folder (a fixture, a
    /// shard, a snapshot), not a path the user named: it is never followed. A symbolic
    /// link ([`EditError::Linked`]) or anything else that is not a regular file
    /// ([`EditError::NotRegular`]) there is refused; a regular file is replaced by a new
    /// file (its other hard links, owner and mode are not the output's concern).
    pub generated: bool,
    /// Stop writing, remove the temporary file and fail with [`EditError::Cancelled`] once
    /// this is set (the CLI sets it from SIGINT and SIGTERM handlers).
    pub cancel: Option<Arc<AtomicBool>>,
}

/// What a file was when it was read: a change before the rename means another writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
}

impl Identity {
    fn of(meta: &fs::Metadata) -> Identity {
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
        }
    }
}

/// A file opened for a read-modify-replace: links resolved, checked to be a regular file,
/// and held under an exclusive advisory lock (`flock`) so that a second editor waits.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use gguf_tools::edit::{write_atomically, Locked, Replace};
/// use gguf_grammar::write::GgufBuilder;
/// use gguf_grammar::{Ctx, Gguf};
///
/// let path = std::env::temp_dir().join(format!("gguf-locked-doc-{}", std::process::id()));
/// std::fs::write(&path, GgufBuilder::new(Ctx::V3_LE).kv("n", 1u8).build()?)?;
/// let locked = Locked::open(&path)?;
/// let bytes = std::fs::read(&locked.path)?;
/// let mut builder = GgufBuilder::from_gguf(&Gguf::parse(&bytes)?);
/// builder.set("n", 2u8);
/// write_atomically(&builder, &locked.path, &Replace::default(), Some(locked.identity))?;
/// assert_eq!(Gguf::parse(&std::fs::read(&path)?)?.get("n").unwrap().as_u64(), Some(2));
/// # std::fs::remove_file(&path)?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Locked {
    /// The file's real path (symbolic links resolved).
    pub path: PathBuf,
    /// The file as it was when locked.
    pub identity: Identity,
    /// The open, locked file; the lock ends when it is dropped.
    pub file: File,
}

impl Locked {
    /// Resolves `path`, refuses anything but a regular file, and locks it exclusively,
    /// waiting for another holder. If the path was replaced while waiting (another editor
    /// renamed its result over it), the new file is opened and locked instead.
    pub fn open(path: &Path) -> Result<Locked, EditError> {
        loop {
            let real = resolve(path)?;
            let io_err = |source| EditError::Io {
                path: real.clone(),
                source,
            };
            let meta = fs::metadata(&real).map_err(io_err)?;
            if !meta.is_file() {
                return Err(EditError::NotRegular(real));
            }
            let file = File::open(&real).map_err(io_err)?;
            rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
                .map_err(|e| io_err(e.into()))?;
            let locked = Identity::of(&file.metadata().map_err(io_err)?);
            let now = fs::metadata(&real).map(|m| Identity::of(&m));
            if now.is_ok_and(|now| (now.dev, now.ino) == (locked.dev, locked.ino)) {
                return Ok(Locked {
                    path: real,
                    identity: locked,
                    file,
                });
            }
        }
    }
}

/// `path` with symbolic links resolved; a path that does not exist yet is kept (its folder
/// resolved), a dangling link is an error.
fn resolve(path: &Path) -> Result<PathBuf, EditError> {
    match fs::canonicalize(path) {
        Ok(real) => Ok(real),
        Err(_) if fs::symlink_metadata(path).is_ok() => Err(EditError::Dangling {
            link: path.to_path_buf(),
            target: fs::read_link(path).unwrap_or_default(),
        }),
        Err(_) => Ok(path.to_path_buf()),
    }
}

/// The temporary file names of [`write_atomically`]: `.NAME.gguf-edit.PID.tmp`.
fn temp_name(name: &str, pid: u32) -> String {
    format!(".{name}.gguf-edit.{pid}.tmp")
}

/// Removes temporary files left in `dir` for `name` by runs that no longer exist (killed
/// before they could clean up).
fn remove_stale_temps(dir: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.gguf-edit.");
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix)?.strip_suffix(".tmp"))
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let alive = rustix::process::Pid::from_raw(pid).is_some_and(|pid| {
            !matches!(
                rustix::process::test_kill_process(pid),
                Err(rustix::io::Errno::SRCH)
            )
        });
        if !alive {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// A writer that fails once `cancel` is set, writing in bounded pieces so that the failure
/// comes soon.
struct Cancellable<'c, W> {
    out: W,
    cancel: Option<&'c AtomicBool>,
}

impl<W: io::Write> Cancellable<'_, W> {
    fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

impl<W: io::Write> io::Write for Cancellable<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.cancelled() {
            return Err(io::Error::other("cancelled"));
        }
        self.out.write(&buf[..buf.len().min(1 << 20)])
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// `x`, unless it is infinite while `text` does not say so (a finite number too large for
/// the type).
fn finite_unless_said<F: Into<f64> + Copy>(x: F, text: &str) -> Option<F> {
    let said = text.to_ascii_lowercase().contains("inf");
    (!x.into().is_infinite() || said).then_some(x)
}

/// Writes `builder` to `dest` safely ([`replace_atomically`]), checking the result before
/// the rename: the header parses and every byte of tensor data is where it belongs
/// ([`GgufBuilder::verify`]). Returns the bytes written.
pub fn write_atomically(
    builder: &GgufBuilder<'_>,
    dest: &Path,
    replace: &Replace,
    expect: Option<Identity>,
) -> Result<u64, EditError> {
    replace_atomically(
        dest,
        replace,
        expect,
        |out| Ok(builder.write_to(out)?),
        |temp| {
            let reread = File::open(temp).map_err(|source| EditError::Io {
                path: temp.to_path_buf(),
                source,
            })?;
            Ok(builder.verify_file(&reread)?)
        },
    )
}

/// Replaces `dest` with what `write` writes, safely, as design.md's "Nothing lost" says;
/// every command that writes a user's file goes through here:
///
/// - `dest` is resolved through symbolic links (the link's target is replaced, the link
///   stays); anything that exists and is not a regular file is refused, as are a file with
///   other hard links (unless [`Replace::break_links`]) and a read-only file (unless
///   [`Replace::read_only`]).
/// - The output goes to a temporary file `.NAME.gguf-edit.PID.tmp` beside the target,
///   created with mode 0600; stale ones from killed runs are removed first. Setting
///   [`Replace::cancel`] during the write removes it ([`EditError::Cancelled`]).
/// - It is synced, then handed to `verify` (given its path), which reads it back.
/// - It takes the target's owner, group and mode (setuid/setgid dropped when the owner or
///   group cannot be kept); a new file gets 0666 less the umask.
/// - When `expect` is given, the target must still be that file (device, inode, size,
///   modification time) just before the rename; otherwise another writer changed it and
///   nothing is replaced.
/// - It is renamed over the target and the folder synced.
///
/// On any failure the temporary file is removed and the target is untouched. Returns what
/// `write` returns (the bytes written).
pub fn replace_atomically(
    dest: &Path,
    replace: &Replace,
    expect: Option<Identity>,
    write: impl FnOnce(&mut dyn io::Write) -> Result<u64, EditError>,
    verify: impl FnOnce(&Path) -> Result<(), EditError>,
) -> Result<u64, EditError> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| EditError::Io { path, source }
    };
    let (target, existing) = match replace.generated {
        true => (dest.to_path_buf(), fs::symlink_metadata(dest)),
        false => {
            let target = resolve(dest)?;
            let meta = fs::metadata(&target);
            (target, meta)
        }
    };
    let existing = match existing {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_err(&target)(e)),
    };
    if let Some(meta) = &existing {
        if meta.file_type().is_symlink() {
            return Err(EditError::Linked(target));
        }
        if !meta.is_file() {
            return Err(EditError::NotRegular(target));
        }
    }
    // A generated name gets a new file: nothing of what was there is kept.
    let existing = existing.filter(|_| !replace.generated);
    if let Some(meta) = &existing {
        if !meta.is_file() {
            return Err(EditError::NotRegular(target));
        }
        if meta.nlink() > 1 && !replace.break_links {
            return Err(EditError::HardLinked {
                path: target,
                links: meta.nlink(),
            });
        }
        if meta.mode() & 0o222 == 0 && !replace.read_only {
            return Err(EditError::ReadOnly(target));
        }
    }
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .unwrap_or(target.as_os_str())
        .to_string_lossy()
        .into_owned();
    remove_stale_temps(dir, &name);
    let temp = dir.join(temp_name(&name, std::process::id()));
    let file = File::options()
        .write(true)
        .create_new(true)
        .mode(if existing.is_some() { 0o600 } else { 0o666 })
        .open(&temp)
        // Not creatable: the folder is missing or closed to us; the temp name would mislead.
        .map_err(io_err(dir))?;

    let result = (|| {
        let cancel = replace.cancel.as_deref();
        // A failure once the cancel flag is set is the cancellation, wherever it surfaced.
        let cancelled = |e| match cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            true => EditError::Cancelled,
            false => e,
        };
        let mut out = BufWriter::new(Cancellable { out: file, cancel });
        let written = write(&mut out).map_err(cancelled)?;
        let file = out
            .into_inner()
            .map_err(|e| cancelled(io_err(&temp)(e.into_error())))?
            .out;
        if let Some(meta) = &existing {
            keep_owner_and_mode(&file, meta).map_err(io_err(&temp))?;
        }
        file.sync_all().map_err(io_err(&temp))?;
        verify(&temp)?;
        if let Some(expect) = expect {
            let now = fs::metadata(&target).map(|m| Identity::of(&m)).ok();
            if now != Some(expect) {
                return Err(EditError::Changed(target.clone()));
            }
        }
        fs::rename(&temp, &target).map_err(io_err(&target))?;
        // Make the rename durable; not every platform can sync a directory.
        if let Ok(dir) = File::open(dir) {
            let _ = dir.sync_all();
        }
        Ok(written)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Gives `file` the owner, group and mode of `like`, dropping setuid (setgid) when the
/// owner (group) cannot be kept.
fn keep_owner_and_mode(file: &File, like: &fs::Metadata) -> io::Result<()> {
    let mut mode = like.mode() & 0o7777;
    if std::os::unix::fs::fchown(file, Some(like.uid()), Some(like.gid())).is_err() {
        mode &= !0o4000;
        if std::os::unix::fs::fchown(file, None, Some(like.gid())).is_err() {
            mode &= !0o2000;
        }
    }
    file.set_permissions(fs::Permissions::from_mode(mode))
}

/// Overwrites the start of `path` (the file `builder` was made from) with the edited header
/// when the edit leaves the data start where it was ([`GgufBuilder::in_place_patch`]):
/// nothing else is read or written, however large the file. Returns false, touching
/// nothing, when the header's size changed; use [`write_atomically`] then.
///
/// This is fast but **not atomic**: a crash during the write can leave a mixed header.
/// `gguf edit` always uses [`write_atomically`].
pub fn patch_in_place(builder: &GgufBuilder<'_>, path: &Path) -> Result<bool, EditError> {
    let Some(head) = builder.in_place_patch()? else {
        return Ok(false);
    };
    let io_err = |source| EditError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::options().write(true).open(path).map_err(io_err)?;
    io::Write::write_all(&mut file, &head).map_err(io_err)?;
    file.sync_all().map_err(io_err)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gguf_grammar::{Ctx, Gguf};

    #[test]
    fn set_keeps_the_existing_type_unless_one_is_given() {
        let mut b = GgufBuilder::new(Ctx::V3_LE);
        b.kv("n", 5u16)
            .kv("s", "x")
            .kv("a", OwnedValue::array(ValueType::U8, [1u8]));
        Edit::parse_set("n=9").unwrap().apply(&mut b).unwrap();
        assert_eq!(b.get("n"), Some(&OwnedValue::U16(9)));
        assert!(matches!(
            Edit::parse_set("n=f64:1.5").unwrap().apply(&mut b),
            Err(EditError::TypeChange { .. })
        ));
        Edit::parse_set("n=f64:1.5")
            .unwrap()
            .apply_changing_type(&mut b)
            .unwrap();
        assert_eq!(b.get("n"), Some(&OwnedValue::F64(1.5)));
        Edit::parse_set("a=[2, 3]").unwrap().apply(&mut b).unwrap();
        assert_eq!(
            b.get("a"),
            Some(&OwnedValue::array(ValueType::U8, [2u8, 3]))
        );
        assert!(matches!(
            Edit::parse_set("a=1").unwrap().apply(&mut b),
            Err(EditError::BadValue { .. })
        ));
        assert!(matches!(
            Edit::parse_set("new=1").unwrap().apply(&mut b),
            Err(EditError::NewKeyNeedsType(_))
        ));
        assert!(matches!(
            Edit::Remove("nope".into()).apply(&mut b),
            Err(EditError::MissingKey(_))
        ));
        assert!(matches!(
            Edit::parse_set("novalue"),
            Err(EditError::BadAssignment(_))
        ));
        assert!(parse_value(ValueType::Bool, "yes").is_none());
    }

    #[test]
    fn same_size_edits_patch_the_header_in_place() {
        let path = std::env::temp_dir().join(format!("gguf-patch-test-{}", std::process::id()));
        let data = [7u8; 64];
        let bytes = GgufBuilder::new(Ctx::V3_LE)
            .kv("general.name", "abc")
            .tensor("t", &[16], gguf_grammar::GgmlType::F32, &data)
            .build()
            .unwrap();
        fs::write(&path, &bytes).unwrap();
        let gguf = Gguf::parse(&bytes).unwrap();

        let mut same = GgufBuilder::from_gguf(&gguf);
        Edit::parse_set("general.name=xyz")
            .unwrap()
            .apply(&mut same)
            .unwrap();
        assert!(patch_in_place(&same, &path).unwrap());
        assert_eq!(fs::read(&path).unwrap(), same.build().unwrap());

        let mut longer = GgufBuilder::from_gguf(&gguf);
        Edit::parse_set("general.name=a much longer name")
            .unwrap()
            .apply(&mut longer)
            .unwrap();
        assert!(!patch_in_place(&longer, &path).unwrap());
        assert_eq!(fs::read(&path).unwrap(), same.build().unwrap());
        fs::remove_file(&path).unwrap();
    }

    #[test]
    fn atomic_write_replaces_or_leaves_untouched() {
        let dir = std::env::temp_dir().join(format!("gguf-edit-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let dest = dir.join("out.gguf");
        fs::write(&dest, b"original").unwrap();

        let mut b = GgufBuilder::new(Ctx::V3_LE);
        b.kv("k", 1u8);
        let written = write_atomically(&b, &dest, &Replace::default(), None).unwrap();
        let bytes = fs::read(&dest).unwrap();
        assert_eq!(written, bytes.len() as u64);
        assert_eq!(
            Gguf::parse(&bytes).unwrap().get("k").unwrap().as_u64(),
            Some(1)
        );

        // A document that cannot be written (a v1 string past 4 GiB is too costly to build;
        // nesting past the limit fails the same way) leaves the destination as it was.
        let mut deep = OwnedValue::U8(0);
        for _ in 0..=gguf_grammar::grammar::value::MAX_NESTING {
            deep = OwnedValue::array(ValueType::U8, [deep]);
        }
        let mut bad = GgufBuilder::new(Ctx::V3_LE);
        bad.kv("deep", deep);
        assert!(matches!(
            write_atomically(&bad, &dest, &Replace::default(), None),
            Err(EditError::Write(WriteError::NestingTooDeep { .. }))
        ));
        assert_eq!(fs::read(&dest).unwrap(), bytes);
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            1,
            "temporary file left"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
