//! `gguf map` and `render::map`: spans that tile the header, the command's options, escaping,
//! colour and the HTML page's safety. (`scripts/check-map.py` compares the spans with gguf-py's
//! reader; `scripts/browser/` drives the page in Chromium.)

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gguf_grammar::write::GgufBuilder;
use gguf_grammar::{Ctx, Gguf, GgufFile};
use gguf_tools::render::map::{rows, Meaning};

struct Span {
    offset: u64,
    len: u64,
    depth: u32,
    path: String,
}

fn spans(gguf: &Gguf<'_>, file_size: u64) -> Vec<Span> {
    let mut all = Vec::new();
    rows(gguf, file_size, |row| {
        all.push(Span {
            offset: row.offset,
            len: row.len,
            depth: row.depth,
            path: row.path.to_string(),
        });
        Ok::<(), ()>(())
    })
    .unwrap();
    all
}

/// The top-level rows tile the file from 0 to its end, and the children of every group tile
/// the group: no byte of the header is left out or claimed twice.
fn assert_tiles(file: &Path) {
    let map = GgufFile::open(file).unwrap();
    let gguf = map.parse().unwrap();
    let size = map.bytes().len() as u64;
    let all = spans(&gguf, size);
    let shown = file.display();
    // (depth, expected next offset, end of the enclosing group)
    let mut open: Vec<(u64, u64)> = vec![(0, size.max(gguf.tensor_data_offset))];
    for (i, row) in all.iter().enumerate() {
        let depth = row.depth as usize;
        while open.len() > depth + 1 {
            let (next, end) = open.pop().unwrap();
            assert_eq!(next, end, "{shown}: children of a group end before it does");
        }
        assert_eq!(open.len(), depth + 1, "{shown}: {} skips a level", row.path);
        let (next, end) = open[depth];
        assert_eq!(
            row.offset, next,
            "{shown}: {} starts off the tiling",
            row.path
        );
        assert!(
            row.offset + row.len <= end,
            "{shown}: {} overruns",
            row.path
        );
        open[depth].0 = row.offset + row.len;
        let has_children = all.get(i + 1).is_some_and(|r| r.depth > row.depth);
        if has_children {
            open.push((row.offset, row.offset + row.len));
        }
    }
    while let Some((next, end)) = open.pop() {
        assert_eq!(next, end, "{shown}: the rows stop short");
    }
}

#[test]
fn rows_tile_every_corpus_and_conformance_file() {
    let mut files = common::corpus_files();
    files.extend(common::smollm2());
    for file in common::gguf_files_in("tests/conformance/cases") {
        let bytes = std::fs::read(&file).unwrap();
        if Gguf::parse(&bytes).is_ok() {
            files.push(file);
        }
    }
    assert!(files.len() > 60);
    for file in &files {
        assert_tiles(file);
    }
}

#[test]
fn nested_arrays_and_big_endian_v1_tile() {
    use gguf_grammar::write::OwnedValue;
    use gguf_grammar::{Endian, ValueType, Version};
    let dir = tempdir("nested");
    for ctx in [
        Ctx::V3_LE,
        Ctx {
            version: Version::V1,
            endian: Endian::Big,
        },
    ] {
        let inner = OwnedValue::array(ValueType::String, ["a", "bc"]);
        let nested = OwnedValue::array(ValueType::Array, [inner.clone(), inner]);
        let numbers = OwnedValue::array(ValueType::U16, [1u16, 1, 1, 2]);
        let bytes = GgufBuilder::new(ctx)
            .kv("nested", nested)
            .kv("numbers", numbers)
            .tensor("w", &[4], gguf_grammar::GgmlType::F32, &[0; 16])
            .build()
            .unwrap();
        let file = dir.join("nested.gguf");
        std::fs::write(&file, &bytes).unwrap();
        assert_tiles(&file);
        let gguf = Gguf::parse(&bytes).unwrap();
        let all = spans(&gguf, bytes.len() as u64);
        let paths: Vec<&str> = all.iter().map(|s| s.path.as_str()).collect();
        assert!(paths.contains(&r#"kv[0] "nested"[1][0]"#), "{paths:?}");
        assert!(paths.contains(&r#"kv[1] "numbers"[3]"#), "{paths:?}");
        let run = all
            .iter()
            .find(|s| s.path == r#"kv[1] "numbers"[0]"#)
            .unwrap();
        assert_eq!(run.len, 6, "three equal uint16 share a row");
    }
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gguf-map-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The error paths and the map's paths name a construct the same way.
#[test]
fn a_truncation_error_names_the_row_the_map_shows_there() {
    let bytes =
        std::fs::read(common::root().join("tests/corpus/ggml-vocab-llama-bpe.gguf")).unwrap();
    let err = Gguf::parse(&bytes[..1_500_000]).unwrap_err();
    let gguf = Gguf::parse(&bytes).unwrap();
    let all = spans(&gguf, bytes.len() as u64);
    let row = all
        .iter()
        .filter(|s| s.offset <= err.offset && err.offset < s.offset + s.len)
        .max_by_key(|s| s.depth)
        .unwrap();
    assert_eq!(row.path, err.path.to_string());
}

#[test]
fn text_rows_escape_hostile_names_and_never_colour_a_pipe() {
    let dir = tempdir("hostile");
    let bytes = GgufBuilder::new(Ctx::V3_LE)
        .kv("evil\x1b[31m.key\u{202e}", "\x1b]0;title\x07 \u{2066}x")
        .kv(
            "bad.utf8",
            gguf_grammar::write::OwnedValue::string(*b"\xff\xfe"),
        )
        .kv("quoted", "a\" b")
        .build()
        .unwrap();
    let file = dir.join("hostile.gguf");
    std::fs::write(&file, bytes).unwrap();
    let out = common::gguf_in_root(&["map", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", common::text(&out.stderr));
    let stdout = common::text(&out.stdout);
    assert!(!out.stdout.contains(&0x1b), "{stdout}");
    assert!(!stdout.contains('\u{202e}') && !stdout.contains('\u{2066}'));
    assert!(stdout.contains(r#""evil\e[31m.key\u{202e}""#), "{stdout}");
    assert!(
        stdout.contains(r#""\e]0;title\u{7} \u{2066}x""#),
        "{stdout}"
    );
    assert!(stdout.contains(r#""\xff\xfe""#), "{stdout}");
    assert!(
        stdout.contains(r#"kv[2] "quoted".value  "a\" b""#),
        "{stdout}"
    );

    // JSON keeps the text exact.
    let out = common::gguf_in_root(&["map", "--json", file.to_str().unwrap()]);
    let lines: Vec<serde_json::Value> = common::text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines
        .iter()
        .any(|l| l["value"] == "\x1b]0;title\x07 \u{2066}x" && l["kind"] == "string"));
    assert!(lines
        .iter()
        .any(|l| l["value"]["bytes_hex"] == "fffe" && l["kind"] == "string"));
}

/// Colour on a terminal (faked with util-linux `script`), none with NO_COLOR.
#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("note: util-linux `script` not found; skipping the terminal colour test");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_gguf");
    let run = |no_color: &str| {
        let cmd = format!("{bin} map --path header.magic tests/corpus/ggml-vocab-gpt-2.gguf");
        let out = Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .env("NO_COLOR", no_color)
            .current_dir(common::root())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", common::text(&out.stderr));
        common::text(&out.stdout)
    };
    let coloured = run("");
    assert!(
        coloured.contains("\x1b[36mheader.magic\x1b[0m"),
        "{coloured:?}"
    );
    let plain = run("1");
    assert!(
        plain.contains("header.magic") && !plain.contains('\x1b'),
        "{plain:?}"
    );
}

#[test]
fn window_and_path_select_the_overlapping_rows() {
    let file = "tests/corpus/ggml-vocab-llama-bpe.gguf";
    let out = common::gguf_in_root(&[
        "map", "--json", "--from", "0x16e354", "--to", "1499989", file,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", common::text(&out.stderr));
    let stdout = common::text(&out.stdout);
    let paths: Vec<String> = stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["path"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        paths,
        [
            r#"kv[15] "tokenizer.ggml.tokens""#,
            r#"kv[15] "tokenizer.ggml.tokens".value"#,
            r#"kv[15] "tokenizer.ggml.tokens"[99018]"#,
        ]
    );
    let out = common::gguf_in_root(&[
        "map",
        "--path",
        "tensor[1] ",
        "tests/conformance/cases/llama-8-tokens.gguf",
    ]);
    let stdout = common::text(&out.stdout);
    // group, name_len, name, n_dims, dims[0], type, offset
    assert_eq!(stdout.lines().count(), 7, "{stdout}");
    assert!(stdout.lines().all(|l| l.contains("tensor[1] ")), "{stdout}");
}

#[test]
fn errors_and_exit_codes() {
    let dir = tempdir("errors");
    let bytes = std::fs::read(common::root().join("tests/corpus/ggml-vocab-gpt-2.gguf")).unwrap();
    let cut = dir.join("cut.gguf");
    std::fs::write(&cut, &bytes[..1000]).unwrap();
    let out = common::gguf_in_root(&["map", cut.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        common::text(&out.stderr).contains("offset 0x"),
        "{}",
        common::text(&out.stderr)
    );
    assert!(out.stdout.is_empty());

    let out = common::gguf_in_root(&["map", "no/such/file.gguf"]);
    assert_eq!(out.status.code(), Some(2));
    let out = common::gguf_in_root(&["map", "--from", "12x", "tests/corpus/ggml-vocab-gpt-2.gguf"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        common::text(&out.stderr).contains("0x-prefixed hex"),
        "{}",
        common::text(&out.stderr)
    );
}

#[test]
fn html_page_is_written_through_links_and_never_over_the_input() {
    let dir = tempdir("html");
    let input = dir.join("in.gguf");
    std::fs::copy(
        common::root().join("tests/corpus/ggml-vocab-gpt-2.gguf"),
        &input,
    )
    .unwrap();
    let before = std::fs::read(&input).unwrap();
    let link = dir.join("link.gguf");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&input, &link).unwrap();
    let out = common::gguf_in_root(&[
        "map",
        input.to_str().unwrap(),
        "--html",
        link.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        common::text(&out.stderr).contains("refusing"),
        "{}",
        common::text(&out.stderr)
    );
    assert_eq!(std::fs::read(&input).unwrap(), before);

    let page = dir.join("page.html");
    std::fs::write(&page, "old").unwrap();
    let page_link = dir.join("page-link.html");
    let _ = std::fs::remove_file(&page_link);
    std::os::unix::fs::symlink(&page, &page_link).unwrap();
    let out = common::gguf_in_root(&[
        "map",
        input.to_str().unwrap(),
        "--html",
        page_link.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", common::text(&out.stderr));
    assert!(std::fs::symlink_metadata(&page_link).unwrap().is_symlink());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    // Self-contained: nothing is fetched.
    for external in ["src=", "href=", "http://", "https://", "@import", "url("] {
        assert!(!html.contains(external), "the page refers to {external}");
    }
}

#[test]
fn html_data_escapes_script_closers_from_the_file() {
    let bytes = GgufBuilder::new(Ctx::V3_LE)
        .kv("x</script><script>alert(1)</script>", "<!--")
        .build()
        .unwrap();
    let gguf = Gguf::parse(&bytes).unwrap();
    let mut page = Vec::new();
    gguf_tools::render::map::write_html(&gguf, bytes.len() as u64, "t", &mut page).unwrap();
    let page = common::text(&page);
    assert_eq!(page.matches("</script>").count(), 2);
    assert!(!page.contains("<!--"));
    let mut found = false;
    rows(&gguf, bytes.len() as u64, |row| {
        found |= matches!(row.meaning, Meaning::Text(s) if s.as_bytes() == b"<!--");
        Ok::<(), ()>(())
    })
    .unwrap();
    assert!(found);
}

/// A shard maps its whole set, shard after shard: in text under a heading naming each shard,
/// in JSON with the shard's path as every row's first field (the rest of the row as
/// `--shard-only` gives it); `--shard-only` maps the one file.
#[test]
fn a_shard_maps_its_whole_set_unless_shard_only() {
    let dir = tempdir("set");
    let shards = common::three_shards(&dir);
    let second = shards[1].to_str().unwrap();

    let alone: Vec<Output> = shards
        .iter()
        .map(|s| common::gguf_in_root(&["map", "--json", "--shard-only", s.to_str().unwrap()]))
        .collect();
    assert!(alone
        .iter()
        .all(|o| o.status.success() && o.stderr.is_empty()));
    let out = common::gguf_in_root(&["map", "--json", second]);
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    assert!(
        common::text(&out.stderr).contains("is a shard of 3 files: mapping the whole set"),
        "{}",
        common::text(&out.stderr)
    );
    let mut expected = String::new();
    for (shard, alone) in shards.iter().zip(&alone) {
        let file = format!("{{\"file\": \"{}\", ", shard.to_str().unwrap());
        for line in common::text(&alone.stdout).lines() {
            expected += &format!("{file}{}\n", &line[1..]);
        }
    }
    assert_eq!(common::text(&out.stdout), expected);

    let out = common::gguf_in_root(&["map", second]);
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    let mut expected = String::new();
    for (no, shard) in shards.iter().enumerate() {
        let alone = common::gguf_in_root(&["map", "--shard-only", shard.to_str().unwrap()]);
        let size = std::fs::metadata(shard).unwrap().len();
        expected += &format!(
            "== {} (shard {} of 3, {size} bytes) ==\n{}",
            shard.to_str().unwrap(),
            no + 1,
            common::text(&alone.stdout)
        );
    }
    assert_eq!(common::text(&out.stdout), expected);
    // The filters apply within each shard.
    let out = common::gguf_in_root(&["map", "--path", ".name_len", second]);
    assert_eq!(common::text(&out.stdout).matches(".name_len ").count(), 5);

    std::fs::remove_file(&shards[2]).unwrap();
    let out = common::gguf_in_root(&["map", second]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        common::text(&out.stderr).contains("m-00003-of-00003.gguf"),
        "{}",
        common::text(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
