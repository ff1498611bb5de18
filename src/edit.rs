//! Metadata editing from text, as `gguf edit` does it, and safe file replacement.
//!
//! An edit is a [`GgufBuilder`] made from the parsed file, changed by [`Edit`]s, and written
//! with [`write_atomically`]: to a temporary file in the destination's folder, checked by
//! parsing it again, synced, then renamed over the destination. A failure at any point (a bad
//! value, a full disk, an interrupted run) leaves the destination as it was.
//!
//! Every tensor's bytes are kept: the data region of the source is copied verbatim after the
//! new header, at the re-aligned data start, so relative offsets stay valid (see
//! [`crate::write`]).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use gguf_grammar::edit::Edit;
//! use gguf_grammar::write::GgufBuilder;
//! use gguf_grammar::Gguf;
//!
//! let bytes = std::fs::read("tests/corpus/ggml-vocab-gpt-2.gguf")?;
//! let gguf = Gguf::parse(&bytes)?;
//! let mut builder = GgufBuilder::from_gguf(&gguf);
//! for arg in ["general.name=GPT-2 edited", "my.count=u16:7"] {
//!     Edit::parse_set(arg)?.apply(&mut builder)?;
//! }
//! Edit::Remove("tokenizer.ggml.merges".into()).apply(&mut builder)?;
//!
//! let out = builder.build()?;
//! let edited = Gguf::parse(&out)?;
//! assert_eq!(edited.get("general.name").and_then(|v| v.as_str()), Some("GPT-2 edited"));
//! assert_eq!(edited.get("my.count").and_then(|v| v.as_u64()), Some(7));
//! assert!(edited.get("tokenizer.ggml.merges").is_none());
//!
//! // Values are checked against the existing key's type.
//! let err = Edit::parse_set("tokenizer.ggml.bos_token_id=-1")?.apply(&mut builder).unwrap_err();
//! assert_eq!(err.to_string(), "tokenizer.ggml.bos_token_id: \"-1\" is not a valid uint32");
//! # Ok(()) }
//! ```

use std::fs::{self, File};
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use crate::write::{GgufBuilder, OwnedValue, WriteError};
use crate::ValueType;

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
        ty: ValueType,
        /// The value's text.
        text: String,
    },
    /// A new key given without a type.
    #[error("{0}: new key needs a type (KEY=TYPE:VALUE, TYPE one of {TYPES})")]
    NewKeyNeedsType(String),
    /// An existing array key set without a scalar type.
    #[error("{0}: the key holds an array, which cannot be set from text (give a scalar TYPE to replace it)")]
    ArrayValue(String),
    /// A key to remove or rename that the file does not have.
    #[error("{0}: no such key")]
    MissingKey(String),
    /// The edited document cannot be written.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The written file does not parse back (a bug in the writer; the destination is kept).
    #[error("the written file does not parse back: {0}")]
    Reparse(String),
    /// A file operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
}

/// The type names accepted in `KEY=TYPE:VALUE`.
pub const TYPES: &str = "u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool string";

/// One change to a document's key/values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Sets the first pair with `key` (keeping its position), or appends a new pair. Without
    /// `ty`, the value is parsed as the existing key's type.
    Set {
        /// The key.
        key: String,
        /// The type to write, if given.
        ty: Option<ValueType>,
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
    /// Reads `KEY=VALUE` or `KEY=TYPE:VALUE` (TYPE one of [`TYPES`]). A value that starts
    /// with something else before a colon is untyped: `k=a:b` sets `k` to `a:b`; write
    /// `k=string:u8:x` to set the string `u8:x`.
    ///
    /// ```
    /// use gguf_grammar::edit::Edit;
    /// use gguf_grammar::ValueType;
    ///
    /// assert_eq!(
    ///     Edit::parse_set("a.b=u32:7").unwrap(),
    ///     Edit::Set { key: "a.b".into(), ty: Some(ValueType::U32), text: "7".into() }
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
        let (ty, text) = match rest.split_once(':') {
            Some((name, text)) => match type_named(name) {
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

    /// Applies the edit, checking the value against the existing key's type when no type
    /// is given.
    pub fn apply(&self, builder: &mut GgufBuilder<'_>) -> Result<(), EditError> {
        match self {
            Edit::Set { key, ty, text } => {
                let ty = match (ty, builder.get(key)) {
                    (Some(ty), _) => *ty,
                    (None, Some(OwnedValue::Array(_))) => {
                        return Err(EditError::ArrayValue(key.clone()))
                    }
                    (None, Some(existing)) => existing.value_type(),
                    (None, None) => return Err(EditError::NewKeyNeedsType(key.clone())),
                };
                let value = parse_value(ty, text).ok_or_else(|| EditError::BadValue {
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
                if !builder.rename(from, to) {
                    return Err(EditError::MissingKey(from.clone()));
                }
            }
        }
        Ok(())
    }
}

/// The value type a `TYPE:` prefix names.
fn type_named(name: &str) -> Option<ValueType> {
    Some(match name {
        "u8" => ValueType::U8,
        "i8" => ValueType::I8,
        "u16" => ValueType::U16,
        "i16" => ValueType::I16,
        "u32" => ValueType::U32,
        "i32" => ValueType::I32,
        "u64" => ValueType::U64,
        "i64" => ValueType::I64,
        "f32" => ValueType::F32,
        "f64" => ValueType::F64,
        "bool" => ValueType::Bool,
        "string" => ValueType::String,
        _ => return None,
    })
}

/// Parses `text` as a scalar of type `ty`: decimal integers, Rust float syntax, `true` /
/// `false` for bools, any text for strings; `None` if it does not fit (arrays never do).
///
/// ```
/// use gguf_grammar::edit::parse_value;
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
        ValueType::F32 => OwnedValue::F32(text.parse().ok()?),
        ValueType::F64 => OwnedValue::F64(text.parse().ok()?),
        ValueType::Bool => OwnedValue::from(text.parse::<bool>().ok()?),
        ValueType::String => OwnedValue::from(text),
        ValueType::Array => return None,
    })
}

/// Writes `builder` to `dest` safely: into a new temporary file in `dest`'s folder, which is
/// parsed back, synced and renamed over `dest`. On any failure the temporary file is removed
/// and `dest` is untouched. An existing `dest` keeps its permissions. Returns the bytes
/// written.
pub fn write_atomically(builder: &GgufBuilder<'_>, dest: &Path) -> Result<u64, EditError> {
    replace_file(
        dest,
        |out| Ok(builder.write_to(out)?),
        |temp| {
            let mut buf = Vec::new();
            let reread = File::open(temp).map_err(|source| EditError::Io {
                path: temp.to_path_buf(),
                source,
            })?;
            crate::stream::read_header(reread, &mut buf, Some(builder.ctx.endian))
                .map_err(|e| EditError::Reparse(e.to_string()))?;
            Ok(())
        },
    )
}

/// Replaces `dest` safely with what `write` writes: into a new temporary file in `dest`'s
/// folder, which is synced, given `dest`'s permissions (when it exists), handed to `check`
/// and only then renamed over `dest`. On any failure the temporary file is removed and `dest`
/// is untouched. Returns what `write` returns (the bytes written).
pub fn replace_file(
    dest: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> Result<u64, EditError>,
    check: impl FnOnce(&Path) -> Result<(), EditError>,
) -> Result<u64, EditError> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| EditError::Io { path, source }
    };
    let dir = match dest.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = dest
        .file_name()
        .unwrap_or(dest.as_os_str())
        .to_string_lossy();
    let (temp, file) = (0..100)
        .map(|n| dir.join(format!(".{name}.{}-{n}.tmp", std::process::id())))
        .find_map(
            |temp| match File::options().write(true).create_new(true).open(&temp) {
                Ok(file) => Some(Ok((temp, file))),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => None,
                Err(e) => Some(Err(io_err(&temp)(e))),
            },
        )
        .unwrap_or_else(|| {
            Err(io_err(dir)(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "no free temporary file name",
            )))
        })?;

    let result = (|| {
        let mut out = BufWriter::new(file);
        let written = write(&mut out)?;
        let file = out
            .into_inner()
            .map_err(|e| io_err(&temp)(e.into_error()))?;
        file.sync_all().map_err(io_err(&temp))?;
        if let Ok(meta) = fs::metadata(dest) {
            fs::set_permissions(&temp, meta.permissions()).map_err(io_err(&temp))?;
        }
        check(&temp)?;
        fs::rename(&temp, dest).map_err(io_err(dest))?;
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
    use crate::{Ctx, Gguf};

    #[test]
    fn set_keeps_the_existing_type_unless_one_is_given() {
        let mut b = GgufBuilder::new(Ctx::V3_LE);
        b.kv("n", 5u16)
            .kv("s", "x")
            .kv("a", OwnedValue::array(ValueType::U8, [1u8]));
        Edit::parse_set("n=9").unwrap().apply(&mut b).unwrap();
        assert_eq!(b.get("n"), Some(&OwnedValue::U16(9)));
        Edit::parse_set("n=f64:1.5").unwrap().apply(&mut b).unwrap();
        assert_eq!(b.get("n"), Some(&OwnedValue::F64(1.5)));
        Edit::parse_set("s=u8:3").unwrap().apply(&mut b).unwrap();
        assert_eq!(b.get("s"), Some(&OwnedValue::U8(3)));
        assert!(matches!(
            Edit::parse_set("a=1").unwrap().apply(&mut b),
            Err(EditError::ArrayValue(_))
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
            .tensor("t", &[16], crate::GgmlType::F32, &data)
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
        let written = write_atomically(&b, &dest).unwrap();
        let bytes = fs::read(&dest).unwrap();
        assert_eq!(written, bytes.len() as u64);
        assert_eq!(
            Gguf::parse(&bytes).unwrap().get("k").unwrap().as_u64(),
            Some(1)
        );

        // A document that cannot be written (a v1 string past 4 GiB is too costly to build;
        // nesting past the limit fails the same way) leaves the destination as it was.
        let mut deep = OwnedValue::U8(0);
        for _ in 0..=crate::grammar::value::MAX_NESTING {
            deep = OwnedValue::array(ValueType::U8, [deep]);
        }
        let mut bad = GgufBuilder::new(Ctx::V3_LE);
        bad.kv("deep", deep);
        assert!(matches!(
            write_atomically(&bad, &dest),
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
