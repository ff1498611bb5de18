//! `gguf check --releases` and the per-release loader profiles (`llama.cpp`: the newest
//! release we hold, 0.3.36; `llama.cpp-0.3.16`), against what each llama.cpp release did on the
//! same files. Measured with llama-tokenize (which loads with vocab_only) of each release:
//!
//! - llama.cpp's own `models/ggml-vocab-gemma-4.gguf` and `ggml-vocab-qwen35.gguf` (0.3.36's
//!   source tree): 0.3.36 tokenizes "Hello world" ([2, 9259, 1902] and [9707, 1879]); 0.3.16
//!   fails with "unknown model architecture: 'gemma4'" and "unknown pre-tokenizer type:
//!   'qwen35'". The default load (scripts/llama/loader.cpp) of both fails in 0.3.36 too:
//!   "check_tensor_dims: tensor 'token_embd.weight' not found".
//! - tests/corpus/ggml-vocab-gpt-2.gguf with `tokenizer.ggml.pre` = `qwen35`: 0.3.36 tokenizes
//!   "Hello world" ([15496, 995]); 0.3.16 fails with "unknown pre-tokenizer type: 'qwen35'".

mod common;

use std::path::{Path, PathBuf};

use common::{gguf_in_root, outcome, scratch};

/// llama.cpp 0.3.36's own vocabulary files, from the cached source (skipped without it,
/// unless `GGUF_REQUIRE_LLAMA=1`).
fn llama_cpp_0336_models() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").unwrap_or_default();
    let dir = PathBuf::from(home).join(".cache/gguf-grammar/llama.cpp-0.3.36/src/models");
    if dir.join("ggml-vocab-qwen35.gguf").is_file() {
        return Some(dir);
    }
    if std::env::var("GGUF_REQUIRE_LLAMA").as_deref() == Ok("1") {
        panic!("llama.cpp 0.3.36 source not found at {}", dir.display());
    }
    eprintln!(
        "\n!!! SKIPPED: llama.cpp 0.3.36 source not found at {}; run scripts/build-llama-tools.sh --release 0.3.36 !!!\n",
        dir.display()
    );
    None
}

/// One row of `--releases --json`: the release's version, whether it loads the file, whether
/// the file is vocabulary-only, and the code of the first reason it does not load.
type Row = (String, bool, bool, Option<String>);

/// `gguf check --releases --json FILE`: the exit status and the rows, newest release first.
fn releases(file: &Path) -> (i32, Vec<Row>) {
    let (code, out, err) = outcome(gguf_in_root(&[
        "check".as_ref(),
        "--releases".as_ref(),
        "--json".as_ref(),
        file.as_os_str(),
    ]));
    let json: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    let rows = json[0]["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["release"].as_str().unwrap().to_string(),
                r["loads"].as_bool().unwrap(),
                r["vocab_only"].as_bool().unwrap(),
                r["reason"]["code"].as_str().map(String::from),
            )
        })
        .collect();
    (code, rows)
}

/// `gguf tokenize --release RELEASE --ids FILE TEXT`: exit code, output, error.
fn tokenize(release: &str, file: &Path, text: &str) -> (i32, String, String) {
    outcome(gguf_in_root(&[
        "tokenize".as_ref(),
        "--release".as_ref(),
        release.as_ref(),
        "--ids".as_ref(),
        file.as_os_str(),
        text.as_ref(),
    ]))
}

fn check(profile: &str, file: &Path) -> (i32, String) {
    let (code, out, _) = outcome(gguf_in_root(&[
        "check".as_ref(),
        "--profile".as_ref(),
        profile.as_ref(),
        "--vocab-only".as_ref(),
        file.as_os_str(),
    ]));
    (code, out)
}

#[test]
fn llama_cpp_s_own_gemma4_and_qwen35_vocabularies_load_in_0_3_36_only() {
    let Some(models) = llama_cpp_0336_models() else {
        return;
    };
    for (name, refusal, ids, unknown) in [
        (
            "ggml-vocab-gemma-4.gguf",
            "schema-architecture-unsupported",
            "[2, 9259, 1902]",
            "unknown tokenizer: 'gemma4'",
        ),
        (
            "ggml-vocab-qwen35.gguf",
            "schema-tokenizer-pre",
            "[9707, 1879]",
            "unknown pre-tokenizer type: 'qwen35'",
        ),
    ] {
        let file = models.join(name);
        // llama-tokenize's ids in 0.3.36 (the default release); 0.3.16's refusal.
        for release in ["0.3.36", "0.3.16"] {
            let (code, out, err) = tokenize(release, &file, "Hello world");
            if release == "0.3.36" {
                assert_eq!((code, out.trim()), (0, ids), "{name}: {err}");
            } else {
                assert_eq!(code, 1, "{name}: {out}");
                assert!(err.contains(unknown), "{name}: {err}");
            }
        }
        let (code, out) = check("llama.cpp", &file);
        assert_eq!(code, 0, "{name}: {out}");
        assert!(!out.contains("error["), "{name}: {out}");
        let (code, out) = check("llama.cpp-0.3.16", &file);
        assert_eq!(code, 1, "{name}: {out}");
        assert!(out.contains(&format!("error[{refusal}]")), "{name}: {out}");
        assert!(
            out.contains("llama-cpp-python 0.3.16 fails to load it"),
            "{out}"
        );
        // The default load needs tensors, in every release.
        let (code, _, _) = outcome(gguf_in_root(&[
            "check".as_ref(),
            "--profile".as_ref(),
            "llama.cpp".as_ref(),
            file.as_os_str(),
        ]));
        assert_eq!(code, 1, "{name}");
        let (code, rows) = releases(&file);
        assert_eq!(code, 0, "{name}: one release loads it");
        assert_eq!(
            rows,
            [
                ("0.3.36".to_string(), true, true, None),
                ("0.3.16".to_string(), false, true, Some(refusal.to_string())),
            ],
            "{name}"
        );
    }
}

/// Always run: a pre-tokenizer 0.3.36 added, in a vocabulary of the corpus.
#[test]
fn a_pre_tokenizer_new_in_0_3_36_is_refused_by_0_3_16_only() {
    let dir = scratch("releases-qwen35-pre");
    let file = dir.join("gpt2-qwen35.gguf");
    let (code, _, err) = outcome(gguf_in_root(&[
        "edit".as_ref(),
        "tests/corpus/ggml-vocab-gpt-2.gguf".as_ref(),
        "--set".as_ref(),
        "tokenizer.ggml.pre=qwen35".as_ref(),
        "-o".as_ref(),
        file.as_os_str(),
    ]));
    assert_eq!(code, 0, "{err}");
    // llama-tokenize's ids in 0.3.36; 0.3.16's refusal.
    let (code, out, err) = tokenize("0.3.36", &file, "Hello world");
    assert_eq!((code, out.trim()), (0, "[15496, 995]"), "{err}");
    let (code, _, err) = tokenize("0.3.16", &file, "Hello world");
    assert_eq!(code, 1);
    assert!(
        err.contains("unknown pre-tokenizer type: 'qwen35' (llama.cpp vendored in llama-cpp-python 0.3.16); known to llama-cpp-python 0.3.36"),
        "{err}"
    );
    let (code, rows) = releases(&file);
    assert_eq!(code, 0);
    assert_eq!(
        rows,
        [
            ("0.3.36".to_string(), true, true, None),
            (
                "0.3.16".to_string(),
                false,
                true,
                Some("schema-tokenizer-pre".to_string())
            ),
        ]
    );
    // The rows as text: one line per release, the reason after the verdict.
    let (code, out, _) = outcome(gguf_in_root(&[
        "check".as_ref(),
        "--releases".as_ref(),
        file.as_os_str(),
    ]));
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].ends_with(
        "gpt2-qwen35.gguf: llama.cpp (llama-cpp-python 0.3.36): loads the vocabulary (vocab_only; no tensors)"
    ), "{out}");
    assert!(lines[1].contains("llama.cpp-0.3.16 (llama-cpp-python 0.3.16): does not load: error[schema-tokenizer-pre] kv[10] \"tokenizer.ggml.pre\": the llama.cpp vendored in llama-cpp-python 0.3.16 fails to load it: \"unknown pre-tokenizer type: 'qwen35'\""), "{out}");
    // The corpus file itself loads in both.
    let (code, rows) = releases(Path::new("tests/corpus/ggml-vocab-gpt-2.gguf"));
    assert_eq!(code, 0);
    assert!(rows.iter().all(|r| r.1 && r.3.is_none()), "{rows:?}");
}

/// A model with tensors: loads (the whole model) in both; a file that is no GGUF loads in none.
#[test]
fn a_model_loads_in_both_releases_and_garbage_in_none() {
    let (code, rows) = releases(Path::new("tests/bundled/minimal-llama.gguf"));
    assert_eq!(code, 0);
    assert_eq!(
        rows,
        [
            ("0.3.36".to_string(), true, false, None),
            ("0.3.16".to_string(), true, false, None),
        ]
    );
    let dir = scratch("releases-garbage");
    let file = dir.join("not.gguf");
    std::fs::write(&file, b"GGUF\x03\0\0\0").unwrap();
    let (code, rows) = releases(&file);
    assert_eq!(code, 1);
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| !r.1 && r.3.is_some()), "{rows:?}");
}
