//! Container rules: what each reference reader and the specification require of the header,
//! key/values, tensor infos and the layout of the tensor data.
//!
//! The rules follow two builds of ggml's `gguf_init_from_file` (`ggml/src/gguf.cpp`): the one
//! recorded in `tests/conformance/verdicts.json` (`GGML_TYPE_COUNT` 43: `ggml`, `ggml-data`)
//! and the one vendored in llama-cpp-python 0.3.16 (`GGML_TYPE_COUNT` 40: `ggml-0.3.16`,
//! `ggml-0.3.16-data`, recorded in `verdicts-llama.cpp-0.3.16.json`); gguf-py 0.19.0's
//! `GGUFReader.__init__`; and the GGUF specification (`docs/gguf.md`). Each diagnostic names
//! exactly the references that reject a file for it; a ggml's verdict when it also loads the
//! tensor data includes every metadata-only rejection.
//!
//! The 0.3.16 ggml differs by rules, not by files: it knows 40 types; it has no limit on
//! string and array lengths and no byte-size overflow check (its sizes wrap modulo 2^64, as
//! [`ggml_0316_n_bytes`] computes them); it divides by every dim after the first, so a zero
//! there crashes it (`dim-zero-crash`); it seeks past the end of the file to the data
//! without complaint; and it takes a `general.alignment` that is an array of one uint32.
//!
//! ggml reads the header as little endian, so on a little-endian host (where the conformance
//! verdicts were recorded) it rejects every big-endian file at the version field: that is the
//! `big-endian` diagnostic. Where ggml's own arithmetic overflows (`nelements-overflow`) the
//! rule is evaluated exactly and rejects, where ggml would accept by accident.
//!
//! One module per construct: [`header`], [`kv`] (keys and values), [`tensor`] (each tensor's
//! descriptor) and [`layout`] (the alignment and where the tensor data lie).

mod header;
mod kv;
mod layout;
mod tensor;

pub use tensor::{ggml_0316_n_bytes, gguf_py_n_bytes, gguf_py_type_size};

use std::collections::hash_map::{Entry, RandomState};
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher};
use std::ops::Range;

use super::diagnostics::{span_of, At, Diagnostics};
use super::reference::{ALL, GGML, GGML_0316, GGML_0336, GGML_43, GGML_DATA, PY, SPEC};
use super::Diagnostic;
use crate::Gguf;

/// ggml's `GGUF_MAX_STRING_LENGTH`.
const GGML_MAX_STRING: u64 = 1 << 30;

/// Checks one parsed file, whose file is `file_len` bytes long.
struct Checker<'g, 'a> {
    gguf: &'g Gguf<'a>,
    file_len: u64,
    out: Diagnostics,
}

/// Every container diagnostic for `gguf`, whose file is `file_len` bytes long.
pub(crate) fn diagnose(gguf: &Gguf<'_>, file_len: u64) -> Vec<Diagnostic> {
    let mut c = Checker {
        gguf,
        file_len,
        out: Diagnostics::default(),
    };
    c.header();
    c.kvs();
    c.alignment();
    c.tensors();
    c.ggml_layout();
    c.data_layout();
    c.out.finish()
}

impl Checker<'_, '_> {
    /// Where `part` (a slice of the parsed input) lies in the file.
    fn span(&self, part: &[u8]) -> Option<Range<u64>> {
        span_of(self.gguf, part)
    }

    fn kv_at(&self, index: usize) -> At {
        At::kv(self.gguf, index)
    }

    fn tensor_at(&self, index: usize) -> At {
        At::tensor(self.gguf, index)
    }
}

/// The bytes before the first NUL: what C's `strcmp` compares.
fn c_str(bytes: &[u8]) -> &[u8] {
    bytes.split(|&b| b == 0).next().unwrap_or(bytes)
}

/// Byte strings from the file (keys, tensor names) mapped to what was first seen with them.
///
/// Each string is hashed once, with std's randomly keyed SipHash (a hostile file cannot
/// choose colliding names), and the hash is kept in the map: growing the map then moves
/// stored hashes instead of hashing every string again. At a million names spread over the
/// file, that rehashing made `check` four times slower per name than at a thousand.
struct Seen<'a, V> {
    map: HashMap<Hashed<'a>, V, BuildHasherDefault<StoredHash>>,
    keys: RandomState,
}

impl<'a, V> Seen<'a, V> {
    fn new() -> Self {
        Seen {
            map: HashMap::default(),
            keys: RandomState::new(),
        }
    }

    fn entry(&mut self, bytes: &'a [u8]) -> Entry<'_, Hashed<'a>, V> {
        let hash = self.keys.hash_one(bytes);
        self.map.entry(Hashed { hash, bytes })
    }
}

impl<'a> Seen<'a, usize> {
    /// The index that first used `bytes`, or `None` after recording that `index` is the first.
    fn first_use(&mut self, bytes: &'a [u8], index: usize) -> Option<usize> {
        match self.entry(bytes) {
            Entry::Occupied(e) => Some(*e.get()),
            Entry::Vacant(e) => {
                e.insert(index);
                None
            }
        }
    }
}

/// A byte string with its hash.
#[derive(Clone, Copy, Debug)]
struct Hashed<'a> {
    hash: u64,
    bytes: &'a [u8],
}

impl PartialEq for Hashed<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.bytes == other.bytes
    }
}

impl Eq for Hashed<'_> {}

impl Hash for Hashed<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// The hasher of [`Seen`]'s map: the hash is the one [`Hashed`] carries.
#[derive(Default)]
struct StoredHash(u64);

impl Hasher for StoredHash {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, hash: u64) {
        self.0 = hash;
    }

    /// Not used by [`Hashed`]; mixes the bytes in, should anything else be hashed.
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::Reference;

    #[test]
    fn c_strings_stop_at_nul() {
        assert_eq!(c_str(b"general.alignment\0x"), b"general.alignment");
        assert_eq!(c_str(b"abc"), b"abc");
        assert_eq!(c_str(b""), b"");
    }

    #[test]
    fn ggml_rejects_in_both_modes() {
        assert_eq!(
            GGML.iter().collect::<Vec<_>>(),
            [
                Reference::Ggml,
                Reference::GgmlData,
                Reference::Ggml0316,
                Reference::Ggml0316Data,
                Reference::Ggml0336,
                Reference::Ggml0336Data
            ]
        );
        assert_eq!(GGML | GGML_DATA, GGML);
        assert_eq!(GGML_43 | GGML_0316, GGML);
        assert_eq!(
            (GGML_0316 & GGML_DATA).iter().collect::<Vec<_>>(),
            [Reference::Ggml0316Data]
        );
        assert_eq!(
            (GGML_0336 & GGML_DATA).iter().collect::<Vec<_>>(),
            [Reference::Ggml0336Data]
        );
        assert_eq!(GGML_0336 & GGML_43, GGML_0336);
        assert_eq!(GGML | PY | SPEC, ALL);
    }
}

/// The rules of the 0.3.16 and 0.3.36 ggml that the conformance corpus does not reach, each
/// on a file whose verdict that ggml gave (`scripts/llama/gguf-reader.cpp`, built by
/// `scripts/llama/build-program.sh --release RELEASE`).
#[cfg(test)]
mod ggml_0316 {
    use crate::validate::{self, Profile};
    use crate::Gguf;

    fn string(s: &[u8]) -> Vec<u8> {
        let mut out = (s.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(s);
        out
    }

    /// A v3 file: key/values (key, type tag and value bytes), tensors (name, dims, type,
    /// offset), padded to `align`, then `data`.
    fn file(
        kvs: &[(&[u8], Vec<u8>)],
        tensors: &[(&[u8], &[u64], u32, u64)],
        align: usize,
        data: usize,
    ) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend(3u32.to_le_bytes());
        out.extend((tensors.len() as u64).to_le_bytes());
        out.extend((kvs.len() as u64).to_le_bytes());
        for (key, value) in kvs {
            out.extend(string(key));
            out.extend(value);
        }
        for (name, dims, ty, offset) in tensors {
            out.extend(string(name));
            out.extend((dims.len() as u32).to_le_bytes());
            dims.iter().for_each(|d| out.extend(d.to_le_bytes()));
            out.extend(ty.to_le_bytes());
            out.extend(offset.to_le_bytes());
        }
        out.resize(out.len().div_ceil(align) * align + data, 0);
        out
    }

    fn accepts(bytes: &[u8], profile: Profile) -> bool {
        let gguf = Gguf::parse(bytes).unwrap();
        validate::accepts(
            &validate::check(&gguf, bytes.len() as u64, profile),
            profile,
        )
    }

    /// An array of u32 (tag 9, element type 4) of `values`.
    fn u32s(values: &[u32]) -> Vec<u8> {
        let mut out = [9u32.to_le_bytes(), 4u32.to_le_bytes()].concat();
        out.extend((values.len() as u64).to_le_bytes());
        values.iter().for_each(|v| out.extend(v.to_le_bytes()));
        out
    }

    #[test]
    fn verdicts_the_0316_ggml_gave() {
        let both = [Profile::Ggml0316, Profile::Ggml0316Data];
        // general.alignment [64]: it aligns to 64 ("align=64"); [64, 64] aborts
        // (GGML_ASSERT(get_ne() == 1)); the other ggml rejects both.
        let key = b"general.alignment";
        let t = [(&b"a"[..], &[8u64][..], 0, 0)];
        let one = file(&[(key, u32s(&[64]))], &t, 64, 64);
        let two = file(&[(key, u32s(&[64, 64]))], &t, 64, 64);
        for p in both {
            assert!(accepts(&one, p) && !accepts(&two, p), "{}", p.name());
        }
        assert!(!accepts(&one, Profile::Ggml));
        // ... and with the data misplaced for 64 (at 32), it rejects the offset.
        let misplaced = file(
            &[(key, u32s(&[64]))],
            &[(b"a", &[8], 0, 0), (b"b", &[8], 0, 32)],
            64,
            128,
        );
        assert!(!accepts(&misplaced, Profile::Ggml0316));
        // A zero ne0 alone passes its element-count check; after the first, it divides by it.
        for (dims, ok) in [
            (&[0u64, 8][..], true),
            (&[8, 0], false),
            (&[8, 1, 0], false),
        ] {
            let f = file(&[], &[(b"a", dims, 0, 0), (b"b", &[8], 0, 0)], 32, 32);
            assert_eq!(accepts(&f, Profile::Ggml0316Data), ok, "{dims:?}");
        }
        // An empty data section past the end of the file: its seek and zero-byte read succeed.
        let mut empty = file(&[], &[(b"a", &[0], 0, 0)], 32, 0);
        empty.truncate(empty.len() - 5);
        for p in both {
            assert!(accepts(&empty, p), "{}", p.name());
        }
        assert!(!accepts(&empty, Profile::Ggml));
        // q4_0 of 2^60 values: its ne0 * 18 wraps before the division by 32, so it expects
        // the next tensor at 2^56 ("expected 72057594037927936"), not at 18 * 2^55.
        let wrapped = |offset: u64| {
            file(
                &[],
                &[(b"a", &[1 << 60], 2, 0), (b"b", &[8], 0, offset)],
                32,
                32,
            )
        };
        assert!(accepts(&wrapped(1 << 56), Profile::Ggml0316));
        assert!(!accepts(&wrapped(0), Profile::Ggml0316));
        assert!(!accepts(&wrapped(18 << 55), Profile::Ggml0316));
    }

    #[test]
    fn verdicts_the_0336_ggml_gave() {
        let both = [Profile::Ggml0336, Profile::Ggml0336Data];
        // Its element count is checked by multiplying the dims in order: (2^62 - 1) * 2 fits
        // in int64, so i8 values of that shape pass (0.3.16: "total number of elements ...
        // is >= 9223372036854775807"); loading them is another matter.
        let edge = file(&[], &[(b"a", &[(1 << 62) - 1, 2], 24, 0)], 32, 32);
        assert!(accepts(&edge, Profile::Ggml0336));
        assert!(!accepts(&edge, Profile::Ggml0336Data));
        assert!(!accepts(&edge, Profile::Ggml0316));
        // ... up to the first zero dim: 2^62 * 4 overflows before the 0 ("may cause
        // overflow errors").
        let prefix = file(&[], &[(b"a", &[1 << 62, 4, 0], 0, 0)], 32, 32);
        for p in both {
            assert!(!accepts(&prefix, p), "{}", p.name());
        }
        // general.alignment [64]: "must be of type u32 but is arr" (0.3.16 aligns to 64).
        let key = b"general.alignment";
        let array = file(&[(key, u32s(&[64]))], &[(b"a", &[8], 0, 0)], 64, 64);
        for p in both {
            assert!(!accepts(&array, p), "{}", p.name());
        }
        // An empty data section past the end of the file: "failed to seek to beginning of
        // data section" (0.3.16 accepts).
        let mut empty = file(&[], &[(b"a", &[0], 0, 0)], 32, 0);
        empty.truncate(empty.len() - 5);
        for p in both {
            assert!(!accepts(&empty, p), "{}", p.name());
        }
    }
}
