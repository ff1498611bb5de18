//! Runs the five `examples/` programs on real files (gguf-tools' `edit_key` is run by its
//! own tests). Expected figures were read with
//! gguf-py 0.19.0's `GGUFReader` (tokens, token types, tensor offsets and sizes, parameter
//! counts) and the recorded reference verdicts of `tests/conformance/verdicts.json`.

mod common;

#[allow(dead_code)]
#[path = "../examples/first_steps.rs"]
mod first_steps;
#[allow(dead_code)]
#[path = "../examples/summary.rs"]
mod summary;
#[allow(dead_code)]
#[path = "../examples/tensors.rs"]
mod tensors;
#[allow(dead_code)]
#[path = "../examples/validate.rs"]
mod validate;
#[allow(dead_code)]
#[path = "../examples/vocabulary.rs"]
mod vocabulary;

use gguf_grammar::validate::Profile;
use gguf_grammar::Gguf;

fn output(run: impl FnOnce(&mut Vec<u8>) -> Result<(), Box<dyn std::error::Error>>) -> String {
    let mut out = Vec::new();
    run(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn corpus(name: &str) -> std::path::PathBuf {
    common::root().join("tests/corpus").join(name)
}

#[test]
fn summary_of_a_vocabulary_file() {
    let text = output(|out| summary::run(&corpus("ggml-vocab-llama-spm.gguf"), out));
    assert_eq!(
        text,
        "architecture: llama\nname: llama-spm\nparameters: 0 (vocabulary only)\ntensors: 0\n\
         first tokens of 32000: <unk> <s> </s> <0x00> <0x01>\n"
    );
}

/// On SmolLM2's recorded header (the model's own first bytes, checked against it when it is
/// fetched): the summary reads only the header.
#[test]
fn summary_of_smollm2() {
    let path = common::smollm2_header();
    let text = output(|out| summary::run(&path, out));
    assert_eq!(
        text,
        "architecture: llama\nname: Smollm2 135M 8k Lc100K Mix1 Ep2\n\
         parameters: 134515008 (135M)\ntensors: 272\n\
         first tokens of 49152: <|endoftext|> <|im_start|> <|im_end|> <repo_name> <reponame>\n"
    );
}

/// On SmolLM2's recorded header, as [`summary_of_smollm2`].
#[test]
fn tensors_of_smollm2_with_offsets() {
    let path = common::smollm2_header();
    let text = output(|out| tensors::run(&path, out));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + 272);
    assert_eq!(
        lines[..4],
        [
            "name\ttype\tdims\toffset\tbytes",
            "token_embd.weight\tq8_0\t[576, 49152]\t1785664\t30081024",
            "blk.0.attn_norm.weight\tf32\t[576]\t31866688\t2304",
            "blk.0.ffn_down.weight\tq4_1\t[1536, 576]\t31868992\t552960",
        ]
    );
}

#[test]
fn vocabulary_with_scores_and_types() {
    let text = output(|out| vocabulary::run(&corpus("ggml-vocab-llama-spm.gguf"), 5, out));
    assert_eq!(
        text,
        "id\ttoken\tscore\ttype\n0\t<unk>\t0\t2\n1\t<s>\t0\t3\n2\t</s>\t0\t3\n\
         3\t<0x00>\t0\t6\n4\t<0x01>\t0\t6\n"
    );
}

#[test]
fn validate_follows_the_recorded_verdicts() {
    let case = common::root().join("tests/conformance/cases/tensor-offset-gap.gguf");
    // ggml rejects it ("tensor 'b' has offset 64, expected 32"), gguf-py accepts it.
    let mut out = Vec::new();
    assert!(!validate::run(&case, Profile::Ggml, &mut out).unwrap());
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("[tensor-offset-not-sequential] tensor[1] \"b\""),
        "{text}"
    );
    assert!(text.ends_with("ggml rejects the file\n"), "{text}");
    let mut out = Vec::new();
    assert!(validate::run(&case, Profile::GgufPy, &mut out).unwrap());
    assert!(String::from_utf8(out)
        .unwrap()
        .ends_with("gguf-py accepts the file\n"));
    // A file that does not parse is rejected, at the parse error's offset.
    let bad = common::root().join("tests/conformance/cases/bad-magic.gguf");
    let mut out = Vec::new();
    assert!(!validate::run(&bad, Profile::GgufPy, &mut out).unwrap());
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.starts_with("0x0: error[bad-magic] header.magic: "),
        "{text}"
    );
}

#[test]
fn first_steps_reads_lists_and_writes_a_checked_copy() {
    let source = common::root().join("tests/conformance/cases/llama-8-tokens.gguf");
    let dir = common::scratch("first-steps");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let dest = dir.join("edited.gguf");
    let text = output(|out| first_steps::run(&source, &dest, out));
    // Tokens, types, dims and offsets as gguf-py 0.19.0's GGUFReader reads this file.
    assert!(
        text.starts_with(
            "architecture: llama\nvocabulary: 8 tokens\n  token 0: \"<unk>\"\n  token 1: \"<s>\"\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("  tensor output_norm.weight: f32 [32] at byte 2464\n"),
        "{text}"
    );
    let edited = std::fs::read(&dest).unwrap();
    assert_eq!(Gguf::parse(&edited).unwrap().name(), Ok("first steps"));
    assert!(text.ends_with(&format!(
        "wrote {} bytes to {}\n",
        edited.len(),
        dest.display()
    )));
    // A second run refuses to write over the copy.
    let mut out = Vec::new();
    assert!(first_steps::run(&source, &dest, &mut out).is_err());
}
