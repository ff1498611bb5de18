//! Property tests on stable: `arbitrary`-generated documents (tests/common/generate.rs) from
//! pseudo-random bytes, checked by the same functions the fuzz targets run
//! (tests/common/checks.rs). Set `GGUF_PROPERTY_CASES` to run more cases.

mod common;

use arbitrary::Unstructured;
use common::{checks, generate};

/// Pseudo-random bytes (xorshift64*), the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let len = self.next() as usize % (max + 1);
        (0..len).map(|_| self.next() as u8).collect()
    }
}

fn cases(default: usize) -> usize {
    std::env::var("GGUF_PROPERTY_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// Write, parse, compare; rewrite exactly; convert and back; every prefix truncates.
#[test]
fn generated_documents_round_trip_and_every_prefix_truncates() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut with_tensors, mut with_arrays) = (0, 0);
    for _ in 0..cases(1000) {
        let data = rng.bytes(2048);
        checks::built(&data);
        if let Ok(doc) = generate::document(&mut Unstructured::new(&data)) {
            with_tensors += usize::from(!doc.tensors.is_empty());
            with_arrays += usize::from(
                doc.kvs
                    .iter()
                    .any(|kv| kv.value.value_type() == gguf_grammar::ValueType::Array),
            );
        }
    }
    // The generator reaches what it claims to.
    assert!(
        with_tensors > 100 && with_arrays > 50,
        "{with_tensors} {with_arrays}"
    );
}

/// The streaming reader, fed in random chunks, agrees with the one-shot parse on generated
/// files, on their prefixes and on damaged copies.
#[test]
fn chunked_streaming_equals_one_shot_parse() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for _ in 0..cases(1000) {
        let data = rng.bytes(2048);
        let Ok(doc) = generate::document(&mut Unstructured::new(&data)) else {
            continue;
        };
        let Ok(bytes) = doc.build() else { continue };
        let seed = rng.next() as u8;
        let with_seed = |file: &[u8]| [&[seed][..], file].concat();
        checks::chunked(&with_seed(&bytes));
        let cut = rng.next() as usize % (bytes.len() + 1);
        checks::chunked(&with_seed(&bytes[..cut]));
        let mut damaged = bytes.clone();
        if !damaged.is_empty() {
            let at = rng.next() as usize % damaged.len();
            damaged[at] ^= 1 << (rng.next() % 8);
        }
        checks::chunked(&with_seed(&damaged));
    }
}

/// Random damage to generated files: parsing never panics, and whatever is still accepted
/// is written back byte for byte.
#[test]
fn damaged_files_never_panic_and_accepted_ones_round_trip() {
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    let mut accepted = 0;
    for _ in 0..cases(1000) {
        let data = rng.bytes(2048);
        let Ok(doc) = generate::document(&mut Unstructured::new(&data)) else {
            continue;
        };
        let Ok(mut bytes) = doc.build() else { continue };
        for _ in 0..1 + rng.next() % 4 {
            if bytes.is_empty() {
                break;
            }
            let at = rng.next() as usize % bytes.len();
            bytes[at] = rng.next() as u8;
        }
        checks::raw(&bytes);
        accepted += usize::from(gguf_grammar::Gguf::parse(&bytes).is_ok());
    }
    assert!(accepted > 50, "only {accepted} damaged files still parse");
}
