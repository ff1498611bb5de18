//! llama.cpp's `test-tokenizer-0`: every `models/ggml-vocab-*.gguf.inp` case tokenizes
//! (no special tokens added, none parsed) to exactly the ids of the `.out` line, each
//! release's vectors under that release.
//!
//! With a release's source (`common::llama_src_of`), all its vocabularies with vectors are
//! checked (0.3.16: 13; 0.3.36: 15, gemma-4 and qwen35 added), and the copies recorded in
//! `tests/data/test-tokenizer-0-RELEASE/` must equal its files. Without it, the recorded
//! vectors are checked against the vocabularies of the repository's `tests/corpus/` that
//! have them (9 per release; the corpus files are llama.cpp's own). A recorded `NAME.inp`
//! holds the cases of a vocabulary whose `.inp` is not the common `cases.inp`.

mod common;

use std::path::{Path, PathBuf};

use gguf_tokenizer::Release;

const SEPARATOR: &[u8] = b"\n__ggml_vocab_test__\n";

fn recorded(release: Release) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/data/test-tokenizer-0-{}", release.version()))
}

/// The recorded cases of the vocabulary file `name`.
fn recorded_inp(release: Release, name: &str) -> PathBuf {
    let own = recorded(release).join(format!("{name}.inp"));
    if own.exists() {
        own
    } else {
        recorded(release).join("cases.inp")
    }
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

/// The differences of `vocabulary` under `release` from the vectors `inp`/`out`, one line
/// each.
fn differences(release: Release, vocabulary: &Path, inp: &Path, out: &Path) -> Vec<String> {
    let tok = common::load_as(vocabulary, release);
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
                "{} ({}): {:?}\n  want {want:?}\n  got  {got:?}",
                common::name(vocabulary),
                release.version(),
                String::from_utf8_lossy(text)
            ));
        }
    }
    eprintln!(
        "{} {:16} {:3} cases, {} differ",
        release.version(),
        common::name(vocabulary),
        cases.len(),
        failures.len()
    );
    failures
}

fn check(release: Release, with_source: usize, in_corpus: usize) {
    let mut failures = Vec::new();
    let recorded = recorded(release);
    if let Some(src) = common::llama_src_of(release) {
        let mut vocabularies = 0;
        for path in common::vocabularies(&src) {
            let inp = path.with_extension("gguf.inp");
            let out = path.with_extension("gguf.out");
            if !inp.exists() {
                continue;
            }
            vocabularies += 1;
            failures.extend(differences(release, &path, &inp, &out));
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert_eq!(
                std::fs::read(&inp).unwrap(),
                std::fs::read(recorded_inp(release, &name)).unwrap(),
                "{}",
                inp.display()
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
            vocabularies,
            with_source,
            "the .inp/.out pairs of {}",
            release.name()
        );
    } else {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
        let mut vocabularies = 0;
        for path in common::vocabularies_in(&corpus) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let out = recorded.join(format!("{name}.out"));
            if out.exists() {
                vocabularies += 1;
                let inp = recorded_inp(release, &name);
                failures.extend(differences(release, &path, &inp, &out));
            }
        }
        assert_eq!(
            vocabularies, in_corpus,
            "the corpus vocabularies with recorded vectors"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_inp_line_gives_the_out_ids_0316() {
    check(Release::LlamaCppPython0316, 13, 9);
}

#[test]
fn every_inp_line_gives_the_out_ids_0336() {
    check(Release::LlamaCppPython0336, 15, 9);
}
