//! llama.cpp's `test-tokenizer-0`: every `models/ggml-vocab-*.gguf.inp` case tokenizes
//! (no special tokens added, none parsed) to exactly the ids of the `.out` line.
//!
//! With llama.cpp 0.3.16's source (`$GGUF_LLAMA_SRC` or the cache of
//! `scripts/build-llama-tools.sh`), all 13 of its vocabularies with vectors are checked, and
//! the copies recorded in `tests/data/test-tokenizer-0-0.3.16/` must equal its files. Without
//! it, the recorded vectors are checked against the vocabularies of the repository's
//! `tests/corpus/` that have them (9 of the 13; the corpus files are llama.cpp's own).

mod common;

use std::path::{Path, PathBuf};

const SEPARATOR: &[u8] = b"\n__ggml_vocab_test__\n";

fn recorded() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/test-tokenizer-0-0.3.16")
}

/// The cases of an `.inp` file.
fn split_cases(raw: &[u8]) -> Vec<&[u8]> {
    let mut cases = Vec::new();
    let mut rest = raw;
    while !rest.is_empty() {
        match rest.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
            Some(n) => {
                cases.push(&rest[..n]);
                rest = &rest[n + SEPARATOR.len()..];
            }
            None => {
                cases.push(rest);
                break;
            }
        }
    }
    cases
}

/// The differences of `vocabulary` from the vectors `inp`/`out`, one line each.
fn differences(vocabulary: &Path, inp: &Path, out: &Path) -> Vec<String> {
    let tok = common::load(vocabulary);
    let raw = std::fs::read(inp).unwrap();
    let cases = split_cases(&raw);
    let expected: Vec<Vec<u32>> = std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
        .collect();
    assert_eq!(cases.len(), expected.len(), "{}", inp.display());
    let mut failures = Vec::new();
    for (text, want) in cases.iter().zip(&expected) {
        let got = tok.encode(text, false, false).unwrap();
        if &got != want {
            failures.push(format!(
                "{}: {:?}\n  want {want:?}\n  got  {got:?}",
                common::name(vocabulary),
                String::from_utf8_lossy(text)
            ));
        }
    }
    eprintln!(
        "{:16} {:3} cases, {} differ",
        common::name(vocabulary),
        cases.len(),
        failures.len()
    );
    failures
}

#[test]
fn every_inp_line_gives_the_out_ids() {
    let mut failures = Vec::new();
    let recorded = recorded();
    if let Some(src) = common::llama_src() {
        let mut vocabularies = 0;
        for path in common::vocabularies(&src) {
            let inp = path.with_extension("gguf.inp");
            let out = path.with_extension("gguf.out");
            if !inp.exists() {
                continue;
            }
            vocabularies += 1;
            failures.extend(differences(&path, &inp, &out));
            assert_eq!(
                std::fs::read(&inp).unwrap(),
                std::fs::read(recorded.join("cases.inp")).unwrap()
            );
            let copy = recorded.join(out.file_name().unwrap());
            if copy.exists() {
                assert_eq!(
                    std::fs::read(&out).unwrap(),
                    std::fs::read(&copy).unwrap(),
                    "{}",
                    copy.display()
                );
            }
        }
        assert_eq!(
            vocabularies, 13,
            "llama.cpp 0.3.16 ships 13 .inp/.out pairs"
        );
    } else {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
        let mut vocabularies = 0;
        for path in common::vocabularies_in(&corpus) {
            let out = recorded.join(format!(
                "{}.out",
                path.file_name().unwrap().to_string_lossy()
            ));
            if out.exists() {
                vocabularies += 1;
                failures.extend(differences(&path, &recorded.join("cases.inp"), &out));
            }
        }
        assert_eq!(
            vocabularies, 9,
            "the corpus vocabularies with recorded vectors"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
