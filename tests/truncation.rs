//! Every prefix of a real file that ends inside its header is a located truncation error:
//! never a panic, never a success. Prefixes that hold the whole header parse (the grammar
//! does not read tensor data), and validation then rejects them: the data runs past the end.

mod common;

use gguf_grammar::validate::{self, Profile};
use gguf_grammar::{Gguf, GgufFile};

/// Cut points: every byte of the first 4 KiB, a few bytes around the start of every kv and
/// tensor info (where one construct hands over to the next), and a stride through the rest.
fn cut_points(gguf: &Gguf<'_>, limit: usize) -> Vec<usize> {
    let mut cuts: Vec<usize> = (0..4096.min(limit)).collect();
    let starts = gguf
        .kvs
        .iter()
        .map(|kv| kv.raw)
        .chain(gguf.tensors.iter().map(|t| t.info.raw));
    for raw in starts {
        let at = gguf.offset_of(raw).unwrap() as usize;
        for cut in at.saturating_sub(3)..at + 13 {
            cuts.push(cut);
        }
    }
    cuts.extend((4096..limit).step_by(4099.max(limit / 200)));
    for end in [
        gguf.tensor_infos_end as usize,
        gguf.tensor_data_offset as usize,
    ] {
        cuts.extend(end.saturating_sub(2)..end + 2);
    }
    cuts.retain(|&cut| cut < limit);
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

fn check_prefixes(bytes: &[u8], limit: usize) -> usize {
    let whole = Gguf::parse(bytes).unwrap();
    let header_end = whole.tensor_infos_end as usize;
    let cuts = cut_points(&whole, limit.min(bytes.len()));
    for &cut in &cuts {
        match Gguf::parse(&bytes[..cut]) {
            Err(e) => {
                assert!(cut < header_end, "cut {cut}: the header is whole, yet {e}");
                assert!(
                    e.kind.bytes_needed().is_some(),
                    "cut {cut}: not a truncation: {e}"
                );
                assert!(e.offset <= cut as u64, "cut {cut}: error past the end: {e}");
            }
            Ok(prefix) => {
                assert!(cut >= header_end, "cut {cut} inside the header parsed");
                let mut expected = whole.clone();
                expected.bytes = prefix.bytes;
                assert_eq!(prefix, expected);
                // The header is whole but the data is cut: validation must say so.
                for profile in [Profile::GgmlData, Profile::GgufPy, Profile::Spec] {
                    let found = validate::check(&prefix, cut as u64, profile);
                    assert!(
                        !validate::accepts(&found, profile),
                        "cut {cut}: {profile:?} accepts a truncated file"
                    );
                    assert!(
                        found.iter().any(|d| d.code.name().ends_with("past-eof")),
                        "cut {cut}: {profile:?}: {found:?}"
                    );
                }
            }
        }
    }
    cuts.len()
}

/// The model's first 2 MiB when it is fetched; else its recorded header (the first
/// 1,785,664 bytes, `common::smollm2_header`), every cut point of which is in the header.
#[test]
fn smollm2_first_2_mib() {
    let path = common::smollm2().unwrap_or_else(common::smollm2_header);
    let file = GgufFile::open(path).unwrap();
    let n = check_prefixes(file.bytes(), 2 << 20);
    eprintln!("{n} cut points checked");
}

#[test]
fn every_bundled_real_file() {
    for path in common::corpus_files() {
        let bytes = std::fs::read(&path).unwrap();
        check_prefixes(&bytes, bytes.len());
    }
}
