//! llama.cpp's `test-tokenizer-0`: every `models/ggml-vocab-*.gguf.inp` case tokenizes
//! (no special tokens added, none parsed) to exactly the ids of the `.out` line.

mod common;

#[test]
fn every_inp_line_gives_the_out_ids() {
    let Some(src) = common::llama_src() else {
        return;
    };
    let mut failures = Vec::new();
    let mut vocabularies = 0;
    for path in common::vocabularies(&src) {
        let inp = path.with_extension("gguf.inp");
        let out = path.with_extension("gguf.out");
        if !inp.exists() {
            continue;
        }
        vocabularies += 1;
        let tok = common::load(&path);
        let raw = std::fs::read(&inp).unwrap();
        let sep = b"\n__ggml_vocab_test__\n";
        let mut cases = Vec::new();
        let mut pos = 0;
        while pos < raw.len() {
            match raw[pos..].windows(sep.len()).position(|w| w == sep) {
                Some(n) => {
                    cases.push(&raw[pos..pos + n]);
                    pos += n + sep.len();
                }
                None => {
                    cases.push(&raw[pos..]);
                    break;
                }
            }
        }
        let expected: Vec<Vec<u32>> = std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
            .collect();
        assert_eq!(cases.len(), expected.len(), "{}", inp.display());
        let mut bad = 0;
        for (text, want) in cases.iter().zip(&expected) {
            let got = tok.encode(text, false, false).unwrap();
            if &got != want {
                bad += 1;
                failures.push(format!(
                    "{}: {:?}\n  want {want:?}\n  got  {got:?}",
                    common::name(&path),
                    String::from_utf8_lossy(text)
                ));
            }
        }
        eprintln!(
            "{:16} {:3} cases, {} differ",
            common::name(&path),
            cases.len(),
            bad
        );
    }
    assert_eq!(
        vocabularies, 13,
        "llama.cpp 0.3.16 ships 13 .inp/.out pairs"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
