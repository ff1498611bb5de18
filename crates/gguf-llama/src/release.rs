//! The llama.cpp releases whose knowledge the crate holds, and sets of them: each fact of the
//! tables names the releases it is true of, so a new release adds its differences (an entry
//! it loads, one it no longer loads) without a copy of the tables.

/// A llama.cpp release: the tree vendored in one llama-cpp-python release, which
/// `scripts/build-llama-tools.sh` builds and whose verdicts the repository records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Release {
    /// The llama.cpp vendored in llama-cpp-python 0.3.16 (August 2025).
    LlamaCppPython0316,
    /// The llama.cpp vendored in llama-cpp-python 0.3.36 (October 2026).
    LlamaCppPython0336,
}

impl Release {
    /// Every release the crate models, oldest first.
    pub const ALL: &'static [Release] = &[Release::LlamaCppPython0316, Release::LlamaCppPython0336];

    /// The last release of [`Release::ALL`].
    const LAST: Release = Release::LlamaCppPython0336;

    /// The newest release: what a verdict follows unless another is asked for.
    pub const NEWEST: Release = Release::LlamaCppPython0336;

    /// What the release is, as verdicts name it.
    ///
    /// ```
    /// use gguf_llama::Release;
    /// assert_eq!(Release::NEWEST.name(), "llama.cpp vendored in llama-cpp-python 0.3.36");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Release::LlamaCppPython0316 => "llama.cpp vendored in llama-cpp-python 0.3.16",
            Release::LlamaCppPython0336 => "llama.cpp vendored in llama-cpp-python 0.3.36",
        }
    }

    /// The llama-cpp-python version that vendors it (`0.3.16`).
    pub fn version(self) -> &'static str {
        match self {
            Release::LlamaCppPython0316 => "0.3.16",
            Release::LlamaCppPython0336 => "0.3.36",
        }
    }

    const fn bit(self) -> u32 {
        1 << self as u32
    }
}

/// A set of [`Release`]s: those a fact of the tables is true of.
///
/// ```
/// use gguf_llama::{Release, Releases};
/// assert!(Releases::ALL.contains(Release::NEWEST));
/// assert!(Releases::since(Release::LlamaCppPython0316).contains(Release::NEWEST));
/// let current = Releases::since(Release::LlamaCppPython0336);
/// assert!(current.contains(Release::LlamaCppPython0336));
/// assert!(!current.contains(Release::LlamaCppPython0316));
/// let old = Releases::until(Release::LlamaCppPython0316);
/// assert!(old.contains(Release::LlamaCppPython0316));
/// assert!(!old.contains(Release::LlamaCppPython0336));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Releases(u32);

impl Releases {
    /// Every release the crate models.
    pub const ALL: Releases = Releases::since(Release::LlamaCppPython0316);

    /// `first` and every later release.
    pub const fn since(first: Release) -> Releases {
        let last = Release::LAST.bit();
        Releases((last | (last - 1)) & !(first.bit() - 1))
    }

    /// `last` and every earlier release.
    pub const fn until(last: Release) -> Releases {
        Releases(last.bit() | (last.bit() - 1))
    }

    /// Whether `release` is in the set.
    pub const fn contains(self, release: Release) -> bool {
        self.0 & release.bit() != 0
    }
}
