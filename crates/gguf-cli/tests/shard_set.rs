//! Shard sets: `GgufSet` finds, validates and presents a set written by `gguf split` (whose
//! shards `tests/split_merge.rs` of this crate proves byte-identical to llama-gguf-split's), and `gguf dump`
//! and `gguf check` treat a shard as its whole set unless given `--shard-only`.

mod common;

use common::{gguf, scratch};

use std::fs;
use std::path::Path;

use gguf_grammar::file_range::read_exact_at;
use gguf_grammar::write::GgufBuilder;
use gguf_grammar::Gguf;
use gguf_tools::set::{shard_name, GgufSet};

fn codes(set: &GgufSet) -> Vec<(usize, &'static str)> {
    set.diagnose()
        .into_iter()
        .map(|(shard, d)| (shard, d.code.name()))
        .collect()
}

/// Rewrites shard `path` with `change` applied to its builder.
fn rewrite(path: &Path, change: impl FnOnce(&mut GgufBuilder<'_>)) {
    let bytes = fs::read(path).unwrap();
    let gguf = Gguf::parse(&bytes).unwrap();
    let mut b = GgufBuilder::from_gguf(&gguf);
    change(&mut b);
    let out = b.build().unwrap();
    fs::write(path, out).unwrap();
}

#[test]
fn any_shard_opens_the_whole_set_as_one_model() {
    let dir = scratch("open");
    let shards = common::three_shards(&dir);
    assert_eq!(shard_name(&shards[2]), Some((dir.join("m"), 2, 3)));
    assert_eq!(shard_name(&dir.join("m.gguf")), None);
    assert_eq!(shard_name(&dir.join("m-00004-of-00003.gguf")), None);

    for shard in &shards {
        let set = GgufSet::open(shard).unwrap();
        assert_eq!(
            set.shards.iter().map(|s| &s.path).collect::<Vec<_>>(),
            shards.iter().collect::<Vec<_>>()
        );
        assert_eq!(codes(&set), []);
        let model = set.parse().unwrap();
        let located: Vec<(usize, String)> = model
            .tensors()
            .map(|(i, t)| (i, t.info.name.to_string()))
            .collect();
        assert_eq!(
            located,
            [(0, "t0"), (0, "t1"), (1, "t2"), (1, "t3"), (2, "t4")]
                .map(|(i, n)| (i, n.to_string()))
        );
        assert_eq!(
            model
                .metadata()
                .get("general.name")
                .and_then(|v| v.as_str()),
            Some("five")
        );
        // Every tensor's offset is absolute in its own shard: its bytes are the original's.
        for (i, t) in model.tensors() {
            let shard = set.shards[i].file.as_ref().unwrap();
            let mut data = [0u8; 64];
            read_exact_at(shard.file(), t.data_offset.unwrap(), &mut data).unwrap();
            assert_eq!(data, [1u8; 64]);
        }
    }
    let single = GgufSet::open(dir.join("m.gguf")).unwrap();
    assert!(!single.is_sharded());
    assert_eq!(single.shards.len(), 1);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn diagnostics_name_the_shard() {
    let dir = scratch("diagnose");
    let shards = common::three_shards(&dir);

    rewrite(&shards[1], |b| {
        b.set("split.no", 0u16);
    });
    rewrite(&shards[2], |b| {
        b.kv("general.name", "stray");
        b.set("split.count", 4u16);
    });
    let set = GgufSet::open(&shards[0]).unwrap();
    assert_eq!(
        codes(&set),
        [
            (1, "set-split-no"),
            (2, "set-split-count"),
            (2, "set-metadata-outside-first")
        ]
    );
    let messages: Vec<String> = set
        .diagnose()
        .into_iter()
        .map(|(_, d)| format!("{}: {}", d.path, d.message))
        .collect();
    assert_eq!(
        messages[0],
        "kv[0] \"split.no\": split.no is 0, expected 1, the shard's place by name"
    );

    // A tensor in two shards, and a wrong tensor count.
    let shards = common::three_shards(&dir);
    rewrite(&shards[2], |b| {
        b.tensor_mut("t4").unwrap().name = b"t0".to_vec();
        b.set("split.tensors.count", 6i32);
    });
    let set = GgufSet::open(&shards[1]).unwrap();
    assert_eq!(
        codes(&set),
        [(2, "set-tensors-count"), (2, "set-duplicate-tensor")]
    );

    // A missing shard.
    let shards = common::three_shards(&dir);
    fs::remove_file(&shards[1]).unwrap();
    let set = GgufSet::open(&shards[2]).unwrap();
    assert_eq!(codes(&set), [(1, "set-missing-shard")]);
    assert!(set
        .parse()
        .unwrap_err()
        .to_string()
        .contains("m-00002-of-00003.gguf"));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn dump_and_check_show_the_whole_set_unless_shard_only() {
    let dir = scratch("cli");
    let shards = common::three_shards(&dir);
    let second = shards[1].to_str().unwrap();

    // The summary of the set is the summary of the model it was split from.
    let whole = gguf(&["dump", "--summary", "m.gguf"], &dir);
    let set = gguf(&["dump", "--summary", second], &dir);
    assert!(set.status.success());
    assert_eq!(
        String::from_utf8_lossy(&set.stdout),
        String::from_utf8_lossy(&whole.stdout)
    );
    assert!(String::from_utf8_lossy(&set.stderr).contains("showing the whole set"));
    let alone = gguf(&["dump", "--shard-only", second], &dir);
    let alone = String::from_utf8(alone.stdout).unwrap();
    assert!(
        alone.contains("2 tensors:") && !alone.contains("shard set"),
        "{alone}"
    );

    let text = String::from_utf8(gguf(&["dump", second], &dir).stdout).unwrap();
    assert!(text.contains("5 tensors:"), "{text}");
    assert!(text.contains("m-00003-of-00003.gguf: "), "{text}");
    assert!(text.contains("tensors 5..=5"), "{text}");

    assert_eq!(gguf(&["check", second], &dir).status.code(), Some(0));
    fs::remove_file(&shards[2]).unwrap();
    let out = gguf(&["check", second], &dir);
    assert_eq!(out.status.code(), Some(1));
    let lines = String::from_utf8(out.stdout).unwrap();
    assert!(
        lines.contains(
            "m-00003-of-00003.gguf:0: error[set-missing-shard] shard 3 of 3 cannot be read"
        ),
        "{lines}"
    );
    assert_eq!(
        gguf(&["check", "--shard-only", second], &dir).status.code(),
        Some(0)
    );
    assert_eq!(gguf(&["dump", second], &dir).status.code(), Some(2));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn metadata_outside_the_first_shard_is_capped_like_every_diagnostic() {
    let dir = scratch("cap");
    let shards = common::three_shards(&dir);
    let extra = gguf_grammar::validate::MAX_PER_KIND + 20;
    rewrite(&shards[1], |b| {
        for k in 0..extra {
            b.kv(format!("stray.{k}"), 1u32);
        }
    });
    let found = GgufSet::open(&shards[0]).unwrap().diagnose();
    let warnings = found
        .iter()
        .filter(|(shard, d)| *shard == 1 && d.code == "set-metadata-outside-first")
        .count() as u64;
    assert_eq!(warnings, gguf_grammar::validate::MAX_PER_KIND + 1);
    assert_eq!(
        found.last().unwrap().1.message,
        format!(
            "and {} more like the above",
            extra - gguf_grammar::validate::MAX_PER_KIND
        )
    );
    fs::remove_dir_all(&dir).unwrap();
}
