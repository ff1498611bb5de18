//! `gguf scan`: one row per model (a shard set is one row), figures equal to the parsed
//! headers', bad files as rows with their error, link loops searched once, no progress bar
//! when stderr is not a terminal.

mod common;

use common::{gguf, scratch};

use std::fs;
use std::process::Output;

use gguf_grammar::write::GgufBuilder;
use gguf_grammar::{Ctx, GgmlType, Gguf};
use gguf_tools::set::split::{split, SplitLimit, SplitOptions};

fn jsonl(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn corpus_rows_match_the_parsed_headers() {
    let root = common::root();
    let out = gguf(&["scan", "--jsonl", "tests/corpus"], &root);
    assert!(out.stderr.is_empty(), "no progress bar off a terminal");
    let rows = jsonl(&out);
    let files = common::corpus_files();
    assert_eq!(rows.len(), files.len());
    for (row, file) in rows.iter().zip(&files) {
        let bytes = fs::read(file).unwrap();
        let gguf = Gguf::parse(&bytes).unwrap();
        assert_eq!(
            row["path"],
            format!(
                "tests/corpus/{}",
                file.file_name().unwrap().to_str().unwrap()
            )
        );
        assert_eq!(row["bytes"], bytes.len() as u64);
        assert_eq!(row["version"], gguf.version().number());
        assert_eq!(row["tensors"], gguf.tensors.len());
        assert_eq!(
            row["architecture"].as_str(),
            gguf.get("general.architecture").and_then(|v| v.as_str())
        );
        assert_eq!(
            row["name"].as_str(),
            gguf.get("general.name").and_then(|v| v.as_str())
        );
    }
    let csv = gguf(&["scan", "--csv", "tests/corpus"], &root);
    assert_eq!(
        String::from_utf8_lossy(&csv.stdout).lines().count(),
        files.len() + 1
    );
}

#[test]
fn sets_are_one_row_and_bad_files_are_rows() {
    let dir = scratch("rows");
    let models = dir.join("models");
    fs::create_dir_all(models.join("sub")).unwrap();
    let w = [0u8; 64];
    let mut b = GgufBuilder::new(Ctx::V3_LE);
    b.kv("general.architecture", "llama")
        .kv("general.name", "split me");
    for i in 0..4 {
        b.tensor(format!("t{i}"), &[16], GgmlType::F32, &w);
    }
    fs::write(dir.join("whole.gguf"), b.build().unwrap()).unwrap();
    let options = SplitOptions {
        limit: SplitLimit::Tensors(2),
        no_tensor_first_split: false,
    };
    let shards = split(&dir.join("whole.gguf"), &models.join("sub/m"), &options).unwrap();
    fs::write(models.join("garbage.gguf"), b"GGUF\x03\0\0\0 not a header").unwrap();
    fs::write(models.join("notes.txt"), b"not a model").unwrap();
    std::os::unix::fs::symlink("..", models.join("sub/loop")).unwrap();

    let out = gguf(&["scan", "--jsonl", "models"], &dir);
    assert_eq!(out.status.code(), Some(1), "a rejected file");
    let rows = jsonl(&out);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["path"], "models/garbage.gguf");
    assert_eq!(rows[0]["verdict"], "rejected");
    assert!(
        rows[0]["error"].as_str().unwrap().contains("offset"),
        "{}",
        rows[0]["error"]
    );
    assert_eq!(rows[1]["path"], "models/sub/m-00001-of-00002.gguf");
    assert_eq!(rows[1]["shards"], 2);
    let total: u64 = shards.iter().map(|s| fs::metadata(s).unwrap().len()).sum();
    assert_eq!(rows[1]["bytes"], total);
    assert_eq!(rows[1]["tensors"], 4);
    assert_eq!(rows[1]["verdict"], "accepted");

    let out = gguf(
        &[
            "scan",
            "--jsonl",
            "models/sub/m-00002-of-00002.gguf",
            "missing.gguf",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(2), "an unreadable path");
    let rows = jsonl(&out);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["shards"], 2);
    assert_eq!(rows[1]["verdict"], "unreadable");
    fs::remove_dir_all(&dir).unwrap();
}
