//! `gguf split` and `gguf merge` against llama.cpp 0.3.16's `llama-gguf-split`: every shard
//! and every merged file must be byte-identical, on SmolLM2 and on a generated model, for
//! each combination of options.
//!
//! With the reference built (`$GGUF_LLAMA_TOOLS`, set by `scripts/test.sh` and `.ci/run`, or
//! the cache `scripts/build-llama-tools.sh` builds into) each split and merge is run by both
//! tools and compared byte for byte. Without it, our shards and merged files are compared with
//! the sha256 of llama-gguf-split's, recorded in `tests/split_merge/` (one file per model,
//! a line per shard and per merged file). A live run also checks the recording against what
//! the reference wrote, so a stale recording fails; `GGUF_RECORD=1` rewrites it instead.
//! SmolLM2 is compared when it is fetched (`$GGUF_SMOLLM2` or the cache of
//! `scripts/fetch-models.sh`); `tests/dequant/smollm2-excerpt.gguf` (three of its tensors)
//! always is. The refusals are tested without any reference.

mod common;

use common::{gguf, scratch};

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_grammar::{Ctx, GgmlType, Gguf, ValueType, Version};
use sha2::{Digest, Sha256};

/// The folder holding `llama-gguf-split`, or `None` when it has not been built.
fn llama_tools() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("GGUF_LLAMA_TOOLS") {
        let dir = PathBuf::from(dir);
        assert!(
            dir.join("llama-gguf-split").is_file(),
            "GGUF_LLAMA_TOOLS={} has no llama-gguf-split: set it to the folder \
             scripts/build-llama-tools.sh prints, or unset it to compare with the recording",
            dir.display()
        );
        return Some(dir);
    }
    let cached = std::env::var_os("HOME")
        .map(|home| PathBuf::from(home).join(".cache/gguf-grammar/llama.cpp-0.3.16/bin"))
        .filter(|dir| dir.join("llama-gguf-split").is_file());
    if cached.is_none() {
        eprintln!("note: llama-gguf-split not built (scripts/build-llama-tools.sh); comparing with its recorded output");
    }
    cached
}

/// llama-gguf-split's output as recorded for one model: `NAME FILE SHA256` lines, `FILE`
/// a shard's name without the prefix (`-00001-of-00003.gguf`) or `merged`.
struct Recording {
    path: PathBuf,
    lines: Vec<String>,
    /// The lines a live run produced, written back under `GGUF_RECORD=1`.
    live: Vec<String>,
}

impl Recording {
    fn open(model: &str) -> Self {
        let path = common::root().join(format!("tests/split_merge/{model}.txt"));
        let text = fs::read_to_string(&path).unwrap_or_default();
        Recording {
            path,
            lines: text.lines().map(str::to_string).collect(),
            live: Vec::new(),
        }
    }

    /// The recorded sha256 of `file` of the run `name`.
    fn sha256(&self, name: &str, file: &str) -> &str {
        self.lines
            .iter()
            .find_map(|line| line.strip_prefix(&format!("{name} {file} ")))
            .unwrap_or_else(|| {
                panic!(
                    "{}: no line for {name} {file}; run with llama-gguf-split built and \
                     GGUF_RECORD=1 to record it",
                    self.path.display()
                )
            })
    }

    /// Checks `ours` (a shard, or the merged file) against the recording, and keeps the
    /// line a live run records.
    fn check(&mut self, name: &str, file: &str, ours: &Path) {
        let digest = sha256_hex(&fs::read(ours).unwrap());
        self.live.push(format!("{name} {file} {digest}"));
        if !recording() {
            assert_eq!(
                digest,
                self.sha256(name, file),
                "{}: differs from llama-gguf-split's recorded {name} {file}",
                ours.display()
            );
        }
    }

    /// Under `GGUF_RECORD=1`, writes what the live runs gave.
    fn finish(self) {
        if recording() {
            fs::create_dir_all(self.path.parent().unwrap()).unwrap();
            let text: String = self.live.iter().map(|line| format!("{line}\n")).collect();
            fs::write(&self.path, text).unwrap();
        }
    }
}

fn recording() -> bool {
    std::env::var_os("GGUF_RECORD").is_some_and(|v| v == "1")
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn run(program: &Path, args: &[&str], cwd: &Path) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()))
}

/// The files in `dir` whose names start with `prefix`, sorted.
fn files_starting(dir: &Path, prefix: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.starts_with(prefix))
        .collect();
    names.sort();
    names
}

fn assert_same_file(ours: &Path, reference: &Path) {
    let (a, b) = (fs::read(ours).unwrap(), fs::read(reference).unwrap());
    if a != b {
        let at = a.iter().zip(&b).position(|(x, y)| x != y);
        panic!(
            "{} differs from llama-gguf-split's {} (lengths {} and {}, first difference at {at:?})",
            ours.display(),
            reference.display(),
            a.len(),
            b.len()
        );
    }
}

/// Splits `model` with `options` and merges the shards; checks every shard and the merged
/// file against the recording, and, with the reference built (`tools`), against its output
/// byte for byte: both tools split, and each merges the other's shards.
fn compare(
    tools: Option<&Path>,
    recorded: &mut Recording,
    model: &Path,
    options: &[&str],
    name: &str,
) -> usize {
    assert!(
        tools.is_some() || !recording(),
        "GGUF_RECORD=1 records llama-gguf-split's output: build it first (scripts/build-llama-tools.sh)"
    );
    let dir = scratch(name);
    let model = model.to_str().unwrap();

    let mut ours = vec!["split"];
    ours.extend(options);
    ours.extend([model, "ours"]);
    let out = gguf(&ours, &dir);
    assert!(
        out.status.success(),
        "gguf {ours:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let our_shards = files_starting(&dir, "ours-");
    assert!(!our_shards.is_empty());
    let printed = String::from_utf8(gguf(&ours, &dir).stdout).unwrap();
    assert_eq!(
        printed.lines().count(),
        our_shards.len(),
        "split prints one path per shard"
    );
    let out = gguf(&["merge", &our_shards[0], "ours-merged.gguf"], &dir);
    assert!(
        out.status.success(),
        "gguf merge: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for shard in &our_shards {
        recorded.check(name, &shard["ours".len()..], &dir.join(shard));
    }
    recorded.check(name, "merged", &dir.join("ours-merged.gguf"));
    if !recording() {
        // As many shards as llama-gguf-split wrote, not only the same first ones.
        let recorded_shards = recorded
            .lines
            .iter()
            .filter(|line| line.starts_with(&format!("{name} -")))
            .count();
        assert_eq!(recorded_shards, our_shards.len(), "{name}: shard count");
    }

    if let Some(tools) = tools {
        let split_tool = tools.join("llama-gguf-split");
        let mut theirs = options.to_vec();
        theirs.extend([model, "ref"]);
        let out = run(&split_tool, &theirs, &dir);
        assert!(
            out.status.success(),
            "llama-gguf-split {theirs:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ref_shards = files_starting(&dir, "ref-");
        assert_eq!(
            our_shards
                .iter()
                .map(|n| &n["ours".len()..])
                .collect::<Vec<_>>(),
            ref_shards
                .iter()
                .map(|n| &n["ref".len()..])
                .collect::<Vec<_>>(),
            "{options:?}: different shard names"
        );
        for (a, b) in our_shards.iter().zip(&ref_shards) {
            assert_same_file(&dir.join(a), &dir.join(b));
        }
        let out = gguf(&["merge", &ref_shards[0], "ours-merged-ref.gguf"], &dir);
        assert!(
            out.status.success(),
            "gguf merge: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = run(
            &split_tool,
            &["--merge", &our_shards[0], "ref-merged.gguf"],
            &dir,
        );
        assert!(
            out.status.success(),
            "llama-gguf-split --merge: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_same_file(&dir.join("ours-merged.gguf"), &dir.join("ref-merged.gguf"));
        assert_same_file(
            &dir.join("ours-merged-ref.gguf"),
            &dir.join("ref-merged.gguf"),
        );
    }
    fs::remove_dir_all(&dir).unwrap();
    our_shards.len()
}

/// A model with what a split must carry faithfully: odd tensor sizes, trailing unit dims,
/// a quantised type, bool bytes other than 0/1, bool and string arrays, v2 widths, and a
/// `split.count` already present (as a merged file has).
fn generated_model(dir: &Path) -> PathBuf {
    let data: Vec<u8> = (0..=255u8).cycle().take(500_000).collect();
    let mut b = GgufBuilder::new(Ctx {
        version: Version::V2,
        ..Ctx::V3_LE
    });
    b.kv("general.architecture", "llama")
        .kv("split.count", 0u16)
        .kv("general.name", "generated")
        .kv("odd.bool", OwnedValue::Bool(7))
        .kv(
            "bools",
            OwnedValue::array(ValueType::Bool, [OwnedValue::Bool(0), OwnedValue::Bool(2)]),
        )
        .kv(
            "strings",
            OwnedValue::array(ValueType::String, ["a", "", "c"]),
        )
        .kv("f64", 1.5f64)
        .kv("i64", -3i64);
    for i in 0..9 {
        let name = format!("blk.{i}.w");
        match i % 3 {
            0 => b.tensor(&name, &[5, 1, 1], GgmlType::F32, &data[..20]),
            1 => b.tensor(&name, &[32, 3], GgmlType::Q8_0, &data[i..i + 3 * 34]),
            _ => b.tensor(
                &name,
                &[400_000 + i as u64],
                GgmlType::I8,
                &data[..400_000 + i],
            ),
        };
    }
    let path = dir.join("generated.gguf");
    fs::write(&path, b.build().unwrap()).unwrap();
    path
}

const OPTION_SETS: &[&[&str]] = &[
    &[],
    &["--split-max-tensors", "3"],
    &["--split-max-tensors", "4", "--no-tensor-first-split"],
    &["--split-max-size", "1M"],
    &["--split-max-size", "1M", "--no-tensor-first-split"],
    &["--no-tensor-first-split"],
];

#[test]
fn generated_model_splits_and_merges_as_llama_gguf_split() {
    let tools = llama_tools();
    let mut recorded = Recording::open("generated");
    let dir = scratch("generated");
    let model = generated_model(&dir);
    let mut shard_counts = Vec::new();
    for (i, options) in OPTION_SETS.iter().enumerate() {
        let name = format!("generated-{i}");
        shard_counts.push(compare(
            tools.as_deref(),
            &mut recorded,
            &model,
            options,
            &name,
        ));
    }
    // The option sets cut the model differently (else they would test one thing).
    assert_eq!(shard_counts, [1, 3, 4, 2, 3, 2]);
    recorded.finish();
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn smollm2_splits_and_merges_as_llama_gguf_split() {
    let tools = llama_tools();
    let mut recorded = Recording::open("smollm2");
    let excerpt = common::root().join("tests/dequant/smollm2-excerpt.gguf");
    for (i, options) in [
        &["--split-max-tensors", "1"][..],
        &["--split-max-tensors", "2"],
    ]
    .iter()
    .enumerate()
    {
        compare(
            tools.as_deref(),
            &mut recorded,
            &excerpt,
            options,
            &format!("excerpt-{i}"),
        );
    }
    // The whole model when it is fetched (a recording needs it, to stay whole).
    let model = common::smollm2();
    assert!(
        model.is_some() || !recording(),
        "GGUF_RECORD=1 needs SmolLM2: run scripts/fetch-models.sh"
    );
    if let Some(model) = model {
        for (i, options) in [
            &["--split-max-tensors", "100"][..],
            &["--split-max-size", "50M"],
            &["--split-max-size", "40M", "--no-tensor-first-split"],
        ]
        .iter()
        .enumerate()
        {
            let name = format!("smollm2-{i}");
            compare(tools.as_deref(), &mut recorded, &model, options, &name);
        }
    }
    recorded.finish();
}

#[test]
fn refusals_name_the_file_and_the_reason() {
    let dir = scratch("refusals");
    let model = generated_model(&dir);
    let model = model.to_str().unwrap();

    // A limit that leaves a shard empty (llama-gguf-split: "one of splits have 0 tensors").
    let out = gguf(
        &[
            "split",
            "--split-max-size",
            "1M",
            "--no-tensor-first-split",
            "--split-max-tensors",
            "2",
            model,
            "x",
        ],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "conflicting limits are a usage error"
    );
    let big = GgufBuilder::new(Ctx::V3_LE)
        .tensor("big", &[600_000], GgmlType::F32, &vec![0u8; 2_400_000])
        .build()
        .unwrap();
    fs::write(dir.join("big.gguf"), big).unwrap();
    let out = gguf(&["split", "--split-max-size", "1M", "big.gguf", "x"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("shard 1 would hold no tensors"));
    assert!(files_starting(&dir, "x-").is_empty(), "nothing written");

    // A merge never overwrites.
    assert!(
        gguf(&["split", "--split-max-tensors", "5", model, "m"], &dir)
            .status
            .success()
    );
    fs::write(dir.join("taken.gguf"), b"keep").unwrap();
    let out = gguf(&["merge", "m-00001-of-00002.gguf", "taken.gguf"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("taken.gguf: already exists"));
    assert_eq!(fs::read(dir.join("taken.gguf")).unwrap(), b"keep");

    // A shard from another split (split.no out of place) is refused, naming it.
    let second = dir.join("m-00002-of-00002.gguf");
    let bytes = fs::read(&second).unwrap();
    let mut edited = GgufBuilder::from_gguf(&Gguf::parse(&bytes).unwrap());
    edited.set("split.no", 0u16);
    fs::write(&second, edited.build().unwrap()).unwrap();
    let out = gguf(&["merge", "m-00001-of-00002.gguf", "out.gguf"], &dir);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("m-00002-of-00002.gguf: offset")
            && stderr.contains("split.no is 0, expected 1"),
        "{stderr}"
    );
    assert!(!dir.join("out.gguf").exists());

    // A missing shard names the file.
    fs::remove_file(dir.join("m-00002-of-00002.gguf")).unwrap();
    let out = gguf(&["merge", "m-00001-of-00002.gguf", "out.gguf"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("m-00002-of-00002.gguf"));
    assert!(!dir.join("out.gguf").exists());

    // Not a first shard by name, or not a shard at all.
    fs::rename(dir.join("m-00001-of-00002.gguf"), dir.join("renamed.gguf")).unwrap();
    let out = gguf(&["merge", "renamed.gguf", "out.gguf"], &dir);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("PREFIX-00001-of-00002.gguf"));

    // An alignment llama-gguf-split would break.
    let aligned = GgufBuilder::new(Ctx::V3_LE)
        .alignment(64)
        .tensor("t", &[16], GgmlType::F32, &[0u8; 64])
        .build()
        .unwrap();
    fs::write(dir.join("a64.gguf"), aligned).unwrap();
    let out = gguf(&["split", "a64.gguf", "y"], &dir);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("general.alignment 64"));
    assert!(files_starting(&dir, "y-").is_empty());

    // Sizes are whole numbers of M or G.
    for bad in ["1.5G", "100", "0M", "-1G"] {
        let out = gguf(&["split", "--split-max-size", bad, model, "z"], &dir);
        assert_eq!(out.status.code(), Some(2), "{bad}");
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn split_refuses_a_planted_link_at_a_shard_name() {
    use std::os::unix::fs::symlink;
    let dir = scratch("link");
    let model = generated_model(&dir);
    fs::create_dir(dir.join("real")).unwrap();
    fs::write(dir.join("real/target.gguf"), b"old").unwrap();
    symlink("real/target.gguf", dir.join("s-00001-of-00001.gguf")).unwrap();
    let out = gguf(
        &[
            "split",
            "--split-max-tensors",
            "100",
            model.to_str().unwrap(),
            "s",
        ],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is a symbolic link"), "{stderr}");
    assert_eq!(fs::read(dir.join("real/target.gguf")).unwrap(), b"old");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn split_into_a_folder_that_does_not_exist_names_the_folder() {
    let dir = scratch("no-such-folder");
    let _cleanup = common::RemoveOnDrop(dir.clone());
    let model = generated_model(&dir);
    let out = gguf(&["split", model.to_str().unwrap(), "missing/part"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        common::text(&out.stderr),
        "gguf: missing: No such file or directory (os error 2)\n"
    );
    assert_eq!(files_starting(&dir, ""), ["generated.gguf"]);
}
