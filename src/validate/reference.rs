//! The readers whose verdicts the diagnostics model, sets of them, and the profiles that judge
//! a file by them.

use std::fmt;
use std::ops::{BitAnd, BitOr};

/// A reference whose accept/reject verdict the diagnostics model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reference {
    /// ggml's C reader (`gguf_init_from_file`) reading metadata only (`no_alloc = true`).
    Ggml,
    /// ggml's C reader also loading the tensor data.
    GgmlData,
    /// The ggml of the llama.cpp vendored in llama-cpp-python 0.3.16 (`GGML_TYPE_COUNT` 40)
    /// reading metadata only.
    Ggml0316,
    /// That ggml also loading the tensor data.
    Ggml0316Data,
    /// The ggml of the llama.cpp vendored in llama-cpp-python 0.3.36 (`GGML_TYPE_COUNT` 43)
    /// reading metadata only.
    Ggml0336,
    /// That ggml also loading the tensor data.
    Ggml0336Data,
    /// gguf-py 0.19.0's `GGUFReader(path)`.
    GgufPy,
    /// The GGUF specification.
    Spec,
}

impl Reference {
    /// Every reference, in a fixed order.
    pub const ALL: [Reference; 8] = [
        Reference::Ggml,
        Reference::GgmlData,
        Reference::Ggml0316,
        Reference::Ggml0316Data,
        Reference::Ggml0336,
        Reference::Ggml0336Data,
        Reference::GgufPy,
        Reference::Spec,
    ];

    /// `ggml`, `ggml-data`, `ggml-0.3.16`, `ggml-0.3.16-data`, `ggml-0.3.36`,
    /// `ggml-0.3.36-data`, `gguf-py` or `spec`.
    pub fn name(self) -> &'static str {
        match self {
            Reference::Ggml => "ggml",
            Reference::GgmlData => "ggml-data",
            Reference::GgufPy => "gguf-py",
            Reference::Spec => "spec",
            Reference::Ggml0316 => "ggml-0.3.16",
            Reference::Ggml0316Data => "ggml-0.3.16-data",
            Reference::Ggml0336 => "ggml-0.3.36",
            Reference::Ggml0336Data => "ggml-0.3.36-data",
        }
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of references: those that reject a file for a diagnostic. Small and `Copy`; `|`
/// joins two sets, `&` keeps what they share, [`iter`](Self::iter) lists the members in
/// [`Reference::ALL`]'s order.
///
/// ```
/// use gguf_grammar::validate::{Reference, References};
///
/// let ggml = References::of(&[Reference::Ggml, Reference::GgmlData]);
/// let rejected_by = ggml | References::of(&[Reference::Spec]);
/// assert!(rejected_by.contains(Reference::Spec) && !rejected_by.contains(Reference::GgufPy));
/// assert_eq!(rejected_by.len(), 3);
/// assert_eq!(rejected_by.iter().map(|r| r.name()).collect::<Vec<_>>(), ["ggml", "ggml-data", "spec"]);
/// assert_eq!(rejected_by & References::of(&[Reference::GgufPy]), References::NONE);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct References(u8);

impl References {
    /// No reference.
    pub const NONE: References = References(0);
    /// Every reference.
    pub const ALL: References = References::of(&Reference::ALL);

    /// The set of `refs`.
    pub const fn of(refs: &[Reference]) -> References {
        let mut bits = 0;
        let mut i = 0;
        while i < refs.len() {
            bits |= refs[i].bit();
            i += 1;
        }
        References(bits)
    }

    /// The references in either set (as `|`, usable in constants).
    pub const fn union(self, other: References) -> References {
        References(self.0 | other.0)
    }

    /// The references of the set that are not in `other`.
    pub const fn difference(self, other: References) -> References {
        References(self.0 & !other.0)
    }

    /// Whether every reference of `other` is in the set.
    pub fn contains_all(self, other: References) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether `reference` is in the set.
    pub fn contains(self, reference: Reference) -> bool {
        self.0 & reference.bit() != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// How many references the set holds.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// The members, in [`Reference::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = Reference> {
        Reference::ALL
            .into_iter()
            .filter(move |&r| self.contains(r))
    }
}

impl From<Reference> for References {
    fn from(reference: Reference) -> Self {
        References(reference.bit())
    }
}

impl BitOr for References {
    type Output = References;
    fn bitor(self, other: References) -> References {
        References(self.0 | other.0)
    }
}

impl BitAnd for References {
    type Output = References;
    fn bitand(self, other: References) -> References {
        References(self.0 & other.0)
    }
}

impl fmt::Debug for References {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// Which rules a check applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Profile {
    /// What ggml's C reader accepts when reading metadata only.
    Ggml,
    /// What ggml's C reader accepts when it also loads tensor data.
    GgmlData,
    /// What the ggml of the llama.cpp vendored in llama-cpp-python 0.3.16 accepts when
    /// reading metadata only.
    Ggml0316,
    /// What that ggml accepts when it also loads tensor data.
    Ggml0316Data,
    /// What the ggml of the llama.cpp vendored in llama-cpp-python 0.3.36 accepts when
    /// reading metadata only.
    Ggml0336,
    /// What that ggml accepts when it also loads tensor data.
    Ggml0336Data,
    /// What gguf-py 0.19.0's `GGUFReader(path)` accepts.
    GgufPy,
    /// The GGUF specification's rules.
    Spec,
    /// All of them.
    Strict,
}

impl Profile {
    /// Every profile, in a fixed order.
    pub const ALL: [Profile; 9] = [
        Profile::Ggml,
        Profile::GgmlData,
        Profile::Ggml0316,
        Profile::Ggml0316Data,
        Profile::Ggml0336,
        Profile::Ggml0336Data,
        Profile::GgufPy,
        Profile::Spec,
        Profile::Strict,
    ];

    /// `ggml`, `ggml-data`, `ggml-0.3.16`, `ggml-0.3.16-data`, `ggml-0.3.36`,
    /// `ggml-0.3.36-data`, `gguf-py`, `spec` or `strict`.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Ggml => "ggml",
            Profile::GgmlData => "ggml-data",
            Profile::Ggml0316 => "ggml-0.3.16",
            Profile::Ggml0316Data => "ggml-0.3.16-data",
            Profile::Ggml0336 => "ggml-0.3.36",
            Profile::Ggml0336Data => "ggml-0.3.36-data",
            Profile::GgufPy => "gguf-py",
            Profile::Spec => "spec",
            Profile::Strict => "strict",
        }
    }

    /// The implementation and version whose rules the profile follows.
    ///
    /// ```
    /// use gguf_grammar::validate::Profile;
    /// assert_eq!(Profile::GgufPy.models(), "gguf-py 0.19.0's GGUFReader");
    /// ```
    pub fn models(self) -> &'static str {
        match self {
            Profile::Ggml => {
                "ggml's gguf_init_from_file reading metadata only (GGUF_VERSION 3, \
                 GGML_TYPE_COUNT 43, little-endian x86-64), as recorded in tests/conformance/verdicts.json"
            }
            Profile::GgmlData => {
                "ggml's gguf_init_from_file also loading the tensor data (GGUF_VERSION 3, \
                 GGML_TYPE_COUNT 43, little-endian x86-64), as recorded in tests/conformance/verdicts.json"
            }
            Profile::Ggml0316 => {
                "the ggml of the llama.cpp vendored in llama-cpp-python 0.3.16: gguf_init_from_file \
                 reading metadata only (GGUF_VERSION 3, GGML_TYPE_COUNT 40, little-endian x86-64), \
                 as recorded in tests/conformance/verdicts-llama.cpp-0.3.16.json"
            }
            Profile::Ggml0316Data => {
                "the ggml of the llama.cpp vendored in llama-cpp-python 0.3.16: gguf_init_from_file \
                 also loading the tensor data (GGUF_VERSION 3, GGML_TYPE_COUNT 40, little-endian \
                 x86-64), as recorded in tests/conformance/verdicts-llama.cpp-0.3.16.json"
            }
            Profile::Ggml0336 => {
                "the ggml of the llama.cpp vendored in llama-cpp-python 0.3.36: gguf_init_from_file \
                 reading metadata only (GGUF_VERSION 3, GGML_TYPE_COUNT 43, little-endian x86-64), \
                 as recorded in tests/conformance/verdicts-llama.cpp-0.3.36.json"
            }
            Profile::Ggml0336Data => {
                "the ggml of the llama.cpp vendored in llama-cpp-python 0.3.36: gguf_init_from_file \
                 also loading the tensor data (GGUF_VERSION 3, GGML_TYPE_COUNT 43, little-endian \
                 x86-64), as recorded in tests/conformance/verdicts-llama.cpp-0.3.36.json"
            }
            Profile::GgufPy => "gguf-py 0.19.0's GGUFReader",
            Profile::Spec => "the GGUF specification (ggml's docs/gguf.md, GGUF v3)",
            Profile::Strict => {
                "all of ggml, ggml-data, ggml-0.3.16, ggml-0.3.16-data, ggml-0.3.36, \
                 ggml-0.3.36-data, gguf-py and spec"
            }
        }
    }

    /// Whether a diagnostic rejected by `rejected_by` makes this profile reject the file.
    ///
    /// ```
    /// use gguf_grammar::validate::{Profile, Reference, References};
    ///
    /// let spec_only = References::of(&[Reference::Spec]);
    /// assert!(Profile::Spec.rejects(spec_only) && Profile::Strict.rejects(spec_only));
    /// assert!(!Profile::GgufPy.rejects(spec_only));
    /// assert!(!Profile::Strict.rejects(References::NONE));
    /// ```
    pub fn rejects(self, rejected_by: References) -> bool {
        match self {
            Profile::Ggml => rejected_by.contains(Reference::Ggml),
            Profile::GgmlData => rejected_by.contains(Reference::GgmlData),
            Profile::Ggml0316 => rejected_by.contains(Reference::Ggml0316),
            Profile::Ggml0316Data => rejected_by.contains(Reference::Ggml0316Data),
            Profile::Ggml0336 => rejected_by.contains(Reference::Ggml0336),
            Profile::Ggml0336Data => rejected_by.contains(Reference::Ggml0336Data),
            Profile::GgufPy => rejected_by.contains(Reference::GgufPy),
            Profile::Spec => rejected_by.contains(Reference::Spec),
            Profile::Strict => !rejected_by.is_empty(),
        }
    }
}

// The groups of references the container codes name.
/// Every ggml build rejects, whether or not it loads the data.
pub(crate) const GGML: References = GGML_43.union(GGML_0316);
/// Every ggml build rejects when it loads the data.
pub(crate) const GGML_DATA: References = References::of(&[
    Reference::GgmlData,
    Reference::Ggml0316Data,
    Reference::Ggml0336Data,
]);
/// The ggml builds with `GGML_TYPE_COUNT` 43 reject, whether or not they load the data: the
/// one of `tests/conformance/verdicts.json` and that of llama-cpp-python 0.3.36, which differ
/// only in their element-count check (`tensor-too-large`) and the wording of two errors.
pub(crate) const GGML_43: References = References::of(&[
    Reference::Ggml,
    Reference::GgmlData,
    Reference::Ggml0336,
    Reference::Ggml0336Data,
]);
/// The ggml of llama-cpp-python 0.3.16 (`GGML_TYPE_COUNT` 40) rejects, whether or not it
/// loads the data.
pub(crate) const GGML_0316: References =
    References::of(&[Reference::Ggml0316, Reference::Ggml0316Data]);
/// The ggml of llama-cpp-python 0.3.36 rejects, whether or not it loads the data.
pub(crate) const GGML_0336: References =
    References::of(&[Reference::Ggml0336, Reference::Ggml0336Data]);
/// gguf-py rejects.
pub(crate) const PY: References = References::of(&[Reference::GgufPy]);
/// The specification forbids.
pub(crate) const SPEC: References = References::of(&[Reference::Spec]);
/// Every reference rejects.
pub(crate) const ALL: References = References::ALL;
