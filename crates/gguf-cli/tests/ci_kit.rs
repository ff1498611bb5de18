//! The kit for other projects' CI: `gguf fixtures`, `gguf mutate` and `gguf snapshot`.
//! Their cross-checks with gguf-py run from scripts/check-fixtures.sh and
//! scripts/check-mutations.sh.

use std::fs;
use std::path::{Path, PathBuf};

use gguf_grammar::validate::{self, Profile};
use gguf_grammar::Gguf;
use gguf_testkit::fixtures::{self, Verdict};

mod common;

use common::{gguf_in_root as gguf, text};

/// A fresh empty folder under the target directory.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn fixtures_are_deterministic() {
    assert_eq!(fixtures::all(), fixtures::all());
    let names: Vec<_> = fixtures::all().iter().map(|f| f.name).collect();
    assert_eq!(
        names,
        [
            "minimal-llama.gguf",
            "llama3-tiny.gguf",
            "truncated-metadata.gguf"
        ]
    );
}

#[test]
fn valid_fixtures_pass_every_profile_and_the_schema() {
    for bytes in [fixtures::minimal_llama(), fixtures::llama3_tiny()] {
        let gguf = Gguf::parse(&bytes).unwrap();
        for profile in Profile::ALL {
            let found = validate::check(&gguf, bytes.len() as u64, profile);
            assert!(validate::accepts(&found, profile), "{profile:?}: {found:?}");
            assert!(found.is_empty(), "{found:?}");
        }
        let schema = gguf_llama::schema::check_model(&gguf);
        assert!(schema.is_empty(), "{schema:?}");
        assert_eq!(Verdict::of(&bytes).expect(), "valid");
    }
}

#[test]
fn minimal_llama_is_small_with_one_block_and_byte_tokens() {
    let bytes = fixtures::minimal_llama();
    let gguf = Gguf::parse(&bytes).unwrap();
    assert_eq!(gguf.version().number(), 3);
    assert_eq!(
        gguf.get("llama.block_count").and_then(|v| v.as_u64()),
        Some(1)
    );
    let tokens = gguf
        .get("tokenizer.ggml.tokens")
        .unwrap()
        .as_array()
        .unwrap();
    let tokens: Vec<_> = tokens
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    assert_eq!(tokens.len(), 265);
    // llama.cpp's SentencePiece tokenizer falls back to these for any byte.
    for b in 0..=255u8 {
        assert_eq!(tokens[3 + b as usize], format!("<0x{b:02X}>"));
    }
    let mut types: Vec<_> = gguf
        .tensors
        .iter()
        .map(|t| t.info.ggml_type.to_string())
        .collect();
    types.sort();
    types.dedup();
    assert_eq!(types, ["f16", "f32", "q8_0"]);
    assert!(gguf
        .tensors
        .iter()
        .all(|t| t.data_offset.unwrap() % 32 == 0));
    assert!(bytes.len() < 32 * 1024, "{}", bytes.len());
}

#[test]
fn llama3_tiny_has_gqa_rope_and_four_tensor_types() {
    let bytes = fixtures::llama3_tiny();
    let gguf = Gguf::parse(&bytes).unwrap();
    let get = |key: &str| gguf.get(key).and_then(|v| v.as_u64());
    assert_eq!(
        (
            get("llama.attention.head_count"),
            get("llama.attention.head_count_kv")
        ),
        (Some(4), Some(2))
    );
    assert_eq!(
        gguf.get("llama.rope.freq_base").and_then(|v| v.as_f64()),
        Some(500000.0)
    );
    let tokens = gguf
        .get("tokenizer.ggml.tokens")
        .unwrap()
        .as_array()
        .unwrap();
    let tokens: Vec<_> = tokens
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    assert!(tokens.iter().any(|t| t == "你好") && tokens.iter().any(|t| t == "😀"));
    // GPT-2's byte-level alphabet, which llama.cpp's BPE tokenizer falls back to: "Ġ" is the
    // space, "Ċ" the newline, "Ā" byte 0.
    assert_eq!(tokens.len(), 269);
    for c in ["Ġ", "Ċ", "Ā", "H", "é", "ÿ"] {
        assert_eq!(tokens.iter().filter(|t| *t == c).count(), 1, "{c}");
    }
    let mut types: Vec<_> = gguf
        .tensors
        .iter()
        .map(|t| t.info.ggml_type.to_string())
        .collect();
    types.sort();
    types.dedup();
    assert_eq!(types, ["f16", "f32", "q4_K", "q8_0"]);
}

#[test]
fn truncated_metadata_claims_6_tensors_and_14_kvs_and_is_cut_at_112() {
    let bytes = fixtures::truncated_metadata();
    assert_eq!(bytes.len(), 112);
    assert_eq!(u64::from_le_bytes(bytes[8..16].try_into().unwrap()), 6);
    assert_eq!(u64::from_le_bytes(bytes[16..24].try_into().unwrap()), 14);
    let err = Gguf::parse(&bytes).unwrap_err();
    assert!(err.path.to_string().starts_with("kv[2]"), "{err}");
    let verdict = Verdict::of(&bytes);
    assert_eq!(
        (verdict.expect(), verdict.accepts),
        ("parser_error", [false; 9])
    );
}

#[test]
fn readme_lists_the_fixtures_sha256s() {
    let readme = fs::read_to_string(common::root().join("crates/gguf-cli/README.md")).unwrap();
    for f in fixtures::all() {
        let row = format!(
            "| `{}` | {} | `{}` |",
            f.name,
            f.bytes.len(),
            fixtures::sha256_hex(&f.bytes)
        );
        assert!(
            readme.contains(&row),
            "crates/gguf-cli/README.md lacks the row {row}"
        );
    }
}

#[test]
fn fixtures_command_writes_files_sums_and_manifest() {
    let dir = scratch("fixtures-cli");
    let out = gguf(&["fixtures", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let files = fixtures::all();
    for f in &files {
        assert_eq!(fs::read(dir.join(f.name)).unwrap(), f.bytes, "{}", f.name);
    }
    assert_eq!(
        fs::read_to_string(dir.join("SHA256SUMS")).unwrap(),
        fixtures::sha256sums(&files)
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest[0]["expect"], "valid");
    assert_eq!(manifest[1]["profiles"]["gguf-py"], "accept");
    assert_eq!(manifest[2]["expect"], "parser_error");
    assert_eq!(manifest[2]["error"]["offset"], 107);
}

#[cfg(unix)]
#[test]
fn fixtures_command_refuses_a_planted_link_and_writes_nothing() {
    let dir = scratch("fixtures-link");
    let target = dir.join("elsewhere.gguf");
    fs::write(&target, b"old").unwrap();
    let out_dir = dir.join("out");
    fs::create_dir(&out_dir).unwrap();
    std::os::unix::fs::symlink("../elsewhere.gguf", out_dir.join("minimal-llama.gguf")).unwrap();
    let out = gguf(&["fixtures", out_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("is a symbolic link"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(fs::read(&target).unwrap(), b"old");
    assert!(!out_dir.join("manifest.json").exists());
}

#[test]
fn fixtures_command_without_outdir_is_a_usage_error() {
    let out = gguf(&["fixtures"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

#[test]
fn snapshot_prints_the_library_rendering() {
    let path = "tests/corpus/ggml-vocab-gpt-2.gguf";
    let out = gguf(&["snapshot", path]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bytes = fs::read(common::root().join(path)).unwrap();
    let want = gguf_testkit::snapshot::render(&Gguf::parse(&bytes).unwrap());
    assert_eq!(text(&out.stdout), want);
}

#[test]
fn snapshot_check_passes_on_the_crates_own_snapshots() {
    let mut args = vec!["snapshot".to_string(), "--check".into(), "snapshots".into()];
    for entry in fs::read_dir(common::root().join("tests/corpus")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "gguf") {
            args.push(path.to_str().unwrap().to_string());
        }
    }
    assert!(args.len() > 10);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = gguf(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn snapshot_check_fails_with_a_diff_naming_the_edited_key() {
    let dir = scratch("snapshot-edit");
    let edited = dir.join("ggml-vocab-gpt-2.gguf");
    let out = gguf(&[
        "edit",
        "tests/corpus/ggml-vocab-gpt-2.gguf",
        "--set",
        "gpt2.context_length=2048",
        "-o",
        edited.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = gguf(&["snapshot", "--check", "snapshots", edited.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let diff = text(&out.stdout);
    assert!(
        diff.starts_with("--- snapshots/ggml-vocab-gpt-2.snap\n+++ "),
        "{diff}"
    );
    assert!(
        diff.contains("\n-  @137 gpt2.context_length uint32 = 1024\n"),
        "{diff}"
    );
    assert!(
        diff.contains("\n+  @137 gpt2.context_length uint32 = 2048\n"),
        "{diff}"
    );
    assert_eq!(
        diff.lines().filter(|l| l.starts_with(['-', '+'])).count(),
        4,
        "{diff}"
    );
}

#[test]
fn snapshot_update_writes_missing_snapshots_that_then_pass() {
    let dir = scratch("snapshot-update");
    let snaps = dir.join("snaps");
    let file = dir.join("minimal-llama.gguf");
    fs::write(&file, fixtures::minimal_llama()).unwrap();
    let (file, snaps_arg) = (file.to_str().unwrap(), snaps.to_str().unwrap());
    let out = gguf(&["snapshot", "--check", snaps_arg, file]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no snapshot"),
        "{}",
        text(&out.stderr)
    );
    let out = gguf(&["snapshot", "--check", snaps_arg, "--update", file]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stored = fs::read_to_string(snaps.join("minimal-llama.snap")).unwrap();
    assert!(
        stored.starts_with("---\nsource: gguf snapshot\n"),
        "{stored}"
    );
    let out = gguf(&["snapshot", "--check", snaps_arg, file]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn snapshot_exit_status_for_bad_input() {
    let out = gguf(&["snapshot", "no-such-file.gguf"]);
    assert_eq!(out.status.code(), Some(2));
    let dir = scratch("snapshot-bad");
    let truncated = dir.join("t.gguf");
    fs::write(&truncated, fixtures::truncated_metadata()).unwrap();
    let out = gguf(&["snapshot", truncated.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("offset 0x6b (107): kv[2].key"),
        "{}",
        text(&out.stderr)
    );
    let out = gguf(&["snapshot", "--update", truncated.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "--update needs --check");
    // Two files would share one snapshot name.
    let a = dir.join("a");
    fs::create_dir(&a).unwrap();
    fs::write(a.join("t.gguf"), fixtures::minimal_llama()).unwrap();
    let out = gguf(&[
        "snapshot",
        "--check",
        dir.to_str().unwrap(),
        truncated.to_str().unwrap(),
        a.join("t.gguf").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn snapshot_escapes_hostile_names() {
    let dir = scratch("snapshot-hostile");
    let bytes = gguf_grammar::write::GgufBuilder::new(gguf_grammar::Ctx::V3_LE)
        .kv("evil\x1b]0;owned\x07.key", "red\x1b[31m")
        .build()
        .unwrap();
    let file = dir.join("evil\x1b[31m.gguf");
    fs::write(&file, bytes).unwrap();
    let out = gguf(&[
        "snapshot",
        "--check",
        dir.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!out.stderr.contains(&0x1b), "{:?}", text(&out.stderr));
    let out = gguf(&["snapshot", file.to_str().unwrap()]);
    assert!(!out.stdout.contains(&0x1b), "{:?}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("evil\\e]0;owned\\u{7}.key string = \"red\\u{1b}[31m\""),
        "{}",
        text(&out.stdout)
    );
}

/// Every applicable mutation of the fixtures (and the tiny model of every architecture), of
/// every real file and of every valid
/// conformance case provokes the diagnostic its rule names (the validator and the rule
/// agree); mutations of the invalid conformance cases are made without a panic.
#[test]
fn every_mutation_provokes_its_rules_diagnostic() {
    let root = &common::root();
    let mut sources: Vec<(String, Vec<u8>)> = fixtures::all()
        .into_iter()
        .chain(fixtures::all_archs())
        .map(|f| (f.name.to_string(), f.bytes))
        .collect();
    for dir in ["tests/corpus", "tests/conformance/cases"] {
        for entry in fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "gguf") {
                sources.push((path.display().to_string(), fs::read(&path).unwrap()));
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    for (name, bytes) in &sources {
        for m in gguf_testkit::mutate::applicable(bytes) {
            let judged = m.source_valid || name.ends_with("truncated-metadata.gguf");
            assert!(
                !judged || m.provokes_expected(),
                "{name}: {}: expected {:?}, got {} {:?}",
                m.rule.name,
                m.rule.expects,
                m.verdict.expect(),
                m.verdict.codes
            );
            seen.insert(m.rule.name);
        }
    }
    // Every rule applies to some file.
    let unused: Vec<_> = gguf_testkit::mutate::RULES
        .iter()
        .map(|r| r.name)
        .filter(|n| !seen.contains(n))
        .collect();
    assert!(unused.is_empty(), "never applied: {unused:?}");
}

#[test]
fn mutations_of_a_file_that_does_not_parse_are_header_patches_only() {
    let names: Vec<_> = gguf_testkit::mutate::applicable(&fixtures::truncated_metadata())
        .iter()
        .map(|m| m.rule.name)
        .collect();
    assert_eq!(names, ["bad-magic", "version-4"]);
    assert!(gguf_testkit::mutate::applicable(b"GGU").is_empty());
    // version-4 needs the magic: on a file with another magic it would only repeat bad-magic.
    let names: Vec<_> = gguf_testkit::mutate::applicable(b"GGML\x03\0\0\0\0\0\0\0")
        .iter()
        .map(|m| m.rule.name)
        .collect();
    assert_eq!(names, ["bad-magic"]);
}

#[test]
fn mutate_rule_writes_the_file_and_all_writes_a_manifest() {
    let dir = scratch("mutate-cli");
    let base = dir.join("minimal-llama.gguf");
    fs::write(&base, fixtures::minimal_llama()).unwrap();
    let out_file = dir.join("dup.gguf");
    let out = gguf(&[
        "mutate",
        base.to_str().unwrap(),
        "--rule",
        "duplicate-key",
        "-o",
        out_file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = fs::read(&out_file).unwrap();
    assert_eq!(
        written,
        gguf_testkit::mutate::apply("duplicate-key", &fixtures::minimal_llama())
            .unwrap()
            .bytes
    );
    let check = gguf(&["check", "--profile", "ggml", out_file.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(1));
    assert!(
        text(&check.stdout).contains("error[duplicate-key]"),
        "{}",
        text(&check.stdout)
    );

    let all = dir.join("all");
    let out = gguf(&[
        "mutate",
        base.to_str().unwrap(),
        "--all",
        all.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(all.join("manifest.json")).unwrap()).unwrap();
    let entries = manifest.as_array().unwrap();
    assert_eq!(
        entries.len(),
        gguf_testkit::mutate::applicable(&fixtures::minimal_llama()).len()
    );
    for e in entries {
        let file = all.join(e["file"].as_str().unwrap());
        let bytes = fs::read(&file).unwrap();
        assert_eq!(e["sha256"], fixtures::sha256_hex(&bytes));
        assert!(e["file"].as_str().unwrap().starts_with("minimal-llama."));
    }
    let gap = entries.iter().find(|e| e["rule"] == "offset-gap").unwrap();
    assert_eq!(
        (
            gap["profiles"]["ggml"].as_str(),
            gap["profiles"]["gguf-py"].as_str()
        ),
        (Some("reject"), Some("accept"))
    );
}

#[test]
fn mutate_usage_errors() {
    let out = gguf(&[
        "mutate",
        "tests/corpus/ggml-vocab-gpt-2.gguf",
        "--rule",
        "no-such-rule",
        "-o",
        "x",
    ]);
    assert_eq!(out.status.code(), Some(2));
    // gpt-2's vocabulary has no tensors: a tensor rule does not apply.
    let out = gguf(&[
        "mutate",
        "tests/corpus/ggml-vocab-gpt-2.gguf",
        "--rule",
        "n-dims-5",
        "-o",
        "/nonexistent/x",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("does not apply"),
        "{}",
        text(&out.stderr)
    );
    let out = gguf(&["mutate", "tests/corpus/ggml-vocab-gpt-2.gguf"]);
    assert_eq!(out.status.code(), Some(2));
    let out = gguf(&["mutate", "no-such-file.gguf", "--list"]);
    assert_eq!(out.status.code(), Some(2));
    let out = gguf(&["mutate", "--list"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout).lines().count(),
        gguf_testkit::mutate::RULES.len()
    );
}

/// Issue 25 item 4: a set that cannot be written whole is not written at all.
#[test]
fn fixtures_that_cannot_be_written_whole_write_nothing() {
    let dir = scratch("fixtures-partial");
    fs::create_dir(dir.join("manifest.json")).unwrap();
    let out = gguf(&["fixtures", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let mut left: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["manifest.json"], "{}", text(&out.stderr));
}

/// Issue 25 item 2: names `mutate --all` and `snapshot --update` choose in their folder
/// never write through a planted link.
#[cfg(unix)]
#[test]
fn generated_names_refuse_planted_links() {
    let dir = scratch("generated-links");
    let target = dir.join("bashrc");
    fs::write(&target, b"old").unwrap();
    let base = dir.join("minimal-llama.gguf");
    fs::write(&base, fixtures::minimal_llama()).unwrap();

    let all = dir.join("all");
    fs::create_dir(&all).unwrap();
    std::os::unix::fs::symlink("../bashrc", all.join("manifest.json")).unwrap();
    let out = gguf(&[
        "mutate",
        base.to_str().unwrap(),
        "--all",
        all.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("symbolic link"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(fs::read(&target).unwrap(), b"old");

    let snaps = dir.join("snaps");
    fs::create_dir(&snaps).unwrap();
    std::os::unix::fs::symlink("../bashrc", snaps.join("minimal-llama.snap")).unwrap();
    let out = gguf(&[
        "snapshot",
        "--check",
        snaps.to_str().unwrap(),
        "--update",
        base.to_str().unwrap(),
    ]);
    assert_ne!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(fs::read(&target).unwrap(), b"old");
}
