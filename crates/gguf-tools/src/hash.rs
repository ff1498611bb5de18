//! Tensor-data hashes as llama.cpp's `llama-gguf-hash` computes them: xxh64 (seed 0), SHA-1
//! and SHA-256 of one tensor's bytes or of every tensor's bytes in file order, and a UUIDv5
//! of all the tensor data in llama.cpp's namespace. Metadata is never hashed, so an edited
//! header keeps the hashes.
//!
//! ```
//! use gguf_tools::hash::{digest, Algorithm};
//!
//! assert_eq!(digest(Algorithm::Xxh64, [&b""[..]]), "ef46db3751d8e999");
//! assert_eq!(digest(Algorithm::Sha1, [&b"ab"[..], b"c"]), "a9993e364706816aba3e25717850c26c9cd0d89d");
//! // Python's uuid.uuid5(UUID("ef001206-dadc-5f6d-a15f-3359e577d4e5"), "abc"):
//! assert_eq!(digest(Algorithm::Uuid, [&b"abc"[..]]), "9f2200fc-45e8-5a39-9535-c3ea5c0e0cef");
//! ```

use sha1::Sha1;
use sha2::{Digest, Sha256};
use xxhash_rust::xxh64::Xxh64;

/// llama.cpp's UUIDv5 namespace: `uuid5(NAMESPACE_URL, "en.wikipedia.org/wiki/Llama.cpp")`.
pub const LLAMA_CPP_NAMESPACE: [u8; 16] = [
    0xef, 0x00, 0x12, 0x06, 0xda, 0xdc, 0x5f, 0x6d, 0xa1, 0x5f, 0x33, 0x59, 0xe5, 0x77, 0xd4, 0xe5,
];

/// A hash `llama-gguf-hash` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// XXH64 with seed 0, printed as 16 hex digits of the 64-bit value.
    Xxh64,
    /// SHA-1, 40 hex digits.
    Sha1,
    /// SHA-256, 64 hex digits.
    Sha256,
    /// UUIDv5 (SHA-1 of the namespace followed by the data), in the 8-4-4-4-12 form.
    Uuid,
}

impl Algorithm {
    /// The name in `llama-gguf-hash` output and manifests.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Xxh64 => "xxh64",
            Algorithm::Sha1 => "sha1",
            Algorithm::Sha256 => "sha256",
            Algorithm::Uuid => "uuid",
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The hash of `parts` concatenated, as `llama-gguf-hash` prints it.
pub fn digest<'a>(algorithm: Algorithm, parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut hasher = Hasher::new(algorithm);
    parts.into_iter().for_each(|p| hasher.update(p));
    hasher.finish()
}

/// A hash fed piece by piece, for data read a buffer at a time: [`digest`] of the pieces
/// concatenated.
///
/// ```
/// use gguf_tools::hash::{digest, Algorithm, Hasher};
///
/// let mut h = Hasher::new(Algorithm::Uuid);
/// h.update(b"ab");
/// h.update(b"c");
/// assert_eq!(h.finish(), digest(Algorithm::Uuid, [&b"abc"[..]]));
/// ```
#[derive(Clone)]
pub struct Hasher {
    algorithm: Algorithm,
    state: State,
}

#[derive(Clone)]
enum State {
    Xxh64(Xxh64),
    Sha1(Sha1),
    Sha256(Sha256),
}

impl std::fmt::Debug for Hasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hasher")
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

impl Hasher {
    /// An empty hash of `algorithm` (a UUID starts from llama.cpp's namespace).
    pub fn new(algorithm: Algorithm) -> Self {
        let state = match algorithm {
            Algorithm::Xxh64 => State::Xxh64(Xxh64::new(0)),
            Algorithm::Sha1 => State::Sha1(Sha1::new()),
            Algorithm::Sha256 => State::Sha256(Sha256::new()),
            Algorithm::Uuid => State::Sha1(Sha1::new_with_prefix(LLAMA_CPP_NAMESPACE)),
        };
        Hasher { algorithm, state }
    }

    /// Adds `part` to the data hashed.
    pub fn update(&mut self, part: &[u8]) {
        match &mut self.state {
            State::Xxh64(h) => h.update(part),
            State::Sha1(h) => h.update(part),
            State::Sha256(h) => h.update(part),
        }
    }

    /// The hash, as `llama-gguf-hash` prints it.
    pub fn finish(self) -> String {
        match (self.algorithm, self.state) {
            (_, State::Xxh64(h)) => format!("{:016x}", h.digest()),
            (_, State::Sha256(h)) => hex(&h.finalize()),
            (Algorithm::Uuid, State::Sha1(h)) => {
                let mut u: [u8; 16] = h.finalize()[..16].try_into().unwrap_or_default();
                u[6] = (u[6] & 0x0f) | 0x50; // version 5
                u[8] = (u[8] & 0x3f) | 0x80; // variant 0b10
                let h = hex(&u);
                format!(
                    "{}-{}-{}-{}-{}",
                    &h[..8],
                    &h[8..12],
                    &h[12..16],
                    &h[16..20],
                    &h[20..]
                )
            }
            (_, State::Sha1(h)) => hex(&h.finalize()),
        }
    }
}
