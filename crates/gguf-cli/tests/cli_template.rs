//! `gguf template` as a user meets it. The renders it must print are transformers' own
//! (`tests/templates/cli-expected.json`, which `scripts/check-templates.sh` renders again with
//! transformers from the same file and template).

mod common;

use std::path::{Path, PathBuf};

use gguf_grammar::write::GgufBuilder;
use gguf_grammar::OwnedGguf;
use serde_json::Value;

const PHI3: &str = "tests/corpus/ggml-vocab-phi-3.gguf";

fn gguf(args: &[&str]) -> (i32, String, String) {
    common::outcome(common::gguf_in_root(args))
}

fn json_file(path: &str) -> Value {
    let text = std::fs::read_to_string(common::root().join(path)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// phi-3's vocabulary and template with more keys set, written to `dir/name`.
fn phi3_with(dir: &Path, name: &str, keys: &[(&str, &str)]) -> PathBuf {
    let model = OwnedGguf::open(common::root().join(PHI3)).unwrap();
    let mut b = GgufBuilder::from_gguf(model.gguf());
    for (k, v) in keys {
        b.set(k, *v);
    }
    let path = dir.join(name);
    std::fs::write(&path, b.build().unwrap()).unwrap();
    path
}

#[test]
fn renders_equal_transformers() {
    let dir = common::scratch("template-render");
    let _clean = common::RemoveOnDrop(dir.clone());
    let expected = json_file("tests/templates/cli-expected.json");
    let conversations = json_file(expected["conversations"].as_str().unwrap());
    let renders = expected["renders"].as_array().unwrap();
    assert!(renders.len() >= 5);
    for (i, r) in renders.iter().enumerate() {
        let mut file = r["gguf"].as_str().unwrap().to_owned();
        let name = r["name"].as_str();
        if let Some(template) = r["template_file"].as_str() {
            let source = std::fs::read_to_string(common::root().join(template)).unwrap();
            let key = format!("tokenizer.chat_template.{}", name.unwrap());
            file = phi3_with(&dir, &format!("{i}.gguf"), &[(&key, &source)])
                .to_string_lossy()
                .into_owned();
        }
        let c = conversations
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == r["conversation"])
            .unwrap();
        let messages = dir.join(format!("{i}.messages.json"));
        std::fs::write(&messages, c["messages"].to_string()).unwrap();
        let messages = messages.to_string_lossy().into_owned();
        let mut args = vec!["template", &file, "--render", "--messages", &messages];
        let tools = dir.join(format!("{i}.tools.json"));
        let tools = tools.to_string_lossy().into_owned();
        if !c["tools"].is_null() {
            std::fs::write(&tools, c["tools"].to_string()).unwrap();
            args.extend(["--tools", &tools]);
        }
        if c["add_generation_prompt"] == true {
            args.push("--add-generation-prompt");
        }
        if let Some(name) = name {
            args.extend(["--name", name]);
        }
        let (code, out, err) = gguf(&args);
        assert_eq!((code, err.as_str()), (0, ""), "{args:?}");
        assert_eq!(out, r["text"].as_str().unwrap(), "{args:?}");
        // --json carries the same text.
        args.push("--json");
        let (code, out, _) = gguf(&args);
        let doc: Value = serde_json::from_str(&out).unwrap();
        assert_eq!((code, &doc["text"]), (0, &r["text"]));
    }
}

#[test]
fn lists_prints_and_escapes() {
    let dir = common::scratch("template-list");
    let _clean = common::RemoveOnDrop(dir.clone());
    let hostile = "{{ '<|im_start|>' }}\x1b[31mred\u{202e}\n{{ messages[0].__class__ }}";
    let file = phi3_with(
        &dir,
        "two.gguf",
        &[("tokenizer.chat_template.hostile\x1b]0;t\x07", hostile)],
    );
    let file = file.to_str().unwrap();
    let (code, out, err) = gguf(&["template", file]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(
        !out.contains('\x1b') && !out.contains('\x07') && !out.contains('\u{202e}'),
        "{out:?}"
    );
    assert!(
        out.starts_with("tokenizer.chat_template (default): "),
        "{out}"
    );
    assert!(
        out.contains(", family phi3, screen: no findings\n"),
        "{out}"
    );
    assert!(
        out.contains("tokenizer.chat_template.hostile\\e]0;t\\u{7} (hostile\\e]0;t\\u{7}): "),
        "{out}"
    );
    assert!(
        out.contains("family chatml, screen: 1 finding(s), worst high"),
        "{out}"
    );
    assert!(
        out.contains("    {{ '<|im_start|>' }}\\e[31mred\\u{202e}\n"),
        "{out}"
    );

    // --name prints the stored bytes (standard output is not a terminal here).
    let named = ["template", file, "--name", "hostile\x1b]0;t\x07"];
    assert_eq!(gguf(&named), (0, hostile.to_owned(), String::new()));
    let phi3 = OwnedGguf::open(common::root().join(PHI3)).unwrap();
    let stored = phi3
        .gguf()
        .get_str("tokenizer.chat_template")
        .unwrap()
        .to_owned();
    assert_eq!(
        gguf(&["template", PHI3, "--name", "default"]),
        (0, stored.clone(), String::new())
    );

    // --json: every template with its exact source, screen and lint.
    let (code, out, _) = gguf(&["template", file, "--json"]);
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let list = doc["templates"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["source"], stored.as_str());
    assert_eq!(list[1]["source"], hostile);
    assert_eq!(list[1]["name"], "hostile\x1b]0;t\x07");
    assert_eq!(list[1]["screen"][0]["code"], "template-dunder-attribute");
    assert!(list[0]["lint"].is_array());
}

#[test]
fn exit_codes() {
    let dir = common::scratch("template-exit");
    let _clean = common::RemoveOnDrop(dir.clone());
    let messages = dir.join("m.json");
    std::fs::write(&messages, r#"[{"role": "user", "content": "Hi"}]"#).unwrap();
    let messages = messages.to_str().unwrap();
    let not_json = dir.join("bad.json");
    std::fs::write(&not_json, "[{").unwrap();
    let raises = phi3_with(
        &dir,
        "raises.gguf",
        &[(
            "tokenizer.chat_template",
            "{{ raise_exception('no system role') }}",
        )],
    );
    let raises = raises.to_str().unwrap();
    let render = |file: &str, m: &str| gguf(&["template", file, "--render", "--messages", m]);

    // The template raises, does not parse, or the file is not GGUF: 1.
    let (code, _, err) = render(raises, messages);
    assert_eq!(code, 1);
    assert!(
        err.contains("the template raised an exception: no system role"),
        "{err}"
    );
    let syntax = phi3_with(
        &dir,
        "syntax.gguf",
        &[("tokenizer.chat_template", "{% if %}")],
    );
    assert_eq!(render(syntax.to_str().unwrap(), messages).0, 1);
    let junk = dir.join("junk.gguf");
    std::fs::write(&junk, b"not a gguf file").unwrap();
    assert_eq!(gguf(&["template", junk.to_str().unwrap()]).0, 1);
    // A template key that is not a string: listed as an error, 1.
    let phi3 = OwnedGguf::open(common::root().join(PHI3)).unwrap();
    let mut b = GgufBuilder::from_gguf(phi3.gguf());
    b.set("tokenizer.chat_template.n", 7u32);
    let number = dir.join("number.gguf");
    std::fs::write(&number, b.build().unwrap()).unwrap();
    let (code, out, err) = gguf(&["template", number.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("tokenizer.chat_template (default)"),
        "{out}"
    );
    assert!(
        err.contains("\"tokenizer.chat_template.n\": value is not a string"),
        "{err}"
    );

    // No such template, messages that are not JSON, no file, usage: 2.
    let (code, _, err) = gguf(&["template", PHI3, "--name", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("no chat template named \"nope\""), "{err}");
    let bare = dir.join("bare.gguf");
    std::fs::write(
        &bare,
        GgufBuilder::new(gguf_grammar::Ctx::V3_LE).build().unwrap(),
    )
    .unwrap();
    let bare = bare.to_str().unwrap();
    let (code, out, err) = gguf(&["template", bare]);
    assert_eq!((code, out.as_str()), (0, ""));
    assert!(err.contains("no chat template"), "{err}");
    assert_eq!(render(bare, messages).0, 2);
    let (code, _, err) = render(PHI3, not_json.to_str().unwrap());
    assert_eq!(code, 2);
    assert!(err.contains("not JSON"), "{err}");
    assert_eq!(
        render(dir.join("absent.gguf").to_str().unwrap(), messages).0,
        2
    );
    assert_eq!(gguf(&["template", PHI3, "--messages", messages]).0, 2);
    assert_eq!(gguf(&["template", PHI3, "--render"]).0, 2);
    // Messages that are not a list of objects are bad input, not a template failure.
    let object = dir.join("object.json");
    std::fs::write(&object, r#"{"role": "user"}"#).unwrap();
    assert_eq!(render(PHI3, object.to_str().unwrap()).0, 2);
}

#[test]
fn a_shard_reads_the_first_shards_templates() {
    use gguf_grammar::{Ctx, GgmlType};
    use gguf_tools::set::split::{split, SplitLimit, SplitOptions};
    let dir = common::scratch("template-shards");
    let _clean = common::RemoveOnDrop(dir.clone());
    let w = [1u8; 64];
    let mut b = GgufBuilder::new(Ctx::V3_LE);
    b.kv("general.architecture", "llama")
        .kv("tokenizer.chat_template", "{{ 'sharded' }}");
    for i in 0..4 {
        b.tensor(format!("t{i}"), &[16], GgmlType::F32, &w);
    }
    std::fs::write(dir.join("m.gguf"), b.build().unwrap()).unwrap();
    let options = SplitOptions {
        limit: SplitLimit::Tensors(2),
        no_tensor_first_split: false,
    };
    let shards = split(&dir.join("m.gguf"), &dir.join("m"), &options).unwrap();
    let second = shards[1].to_str().unwrap();
    let (code, out, err) = gguf(&["template", second, "--name", "default"]);
    assert_eq!((code, out.as_str()), (0, "{{ 'sharded' }}"));
    assert!(err.contains("reading the templates of the first"), "{err}");
    assert_eq!(
        gguf(&["template", second, "--name", "default", "--shard-only"]).0,
        2
    );
}

/// `gguf check --schema` (and `--profile llama.cpp`) reports each template's lint on its key
/// (the verdict unchanged: no reader refuses a file for its template); `--json` always has a
/// `template` section.
#[test]
fn check_lints_the_templates() {
    let dir = common::scratch("template-check");
    let _clean = common::RemoveOnDrop(dir.clone());
    assert_eq!(gguf(&["check", PHI3]), (0, String::new(), String::new()));
    let (code, out, _) = gguf(&["check", "--profile", "llama.cpp", PHI3]);
    assert_eq!(code, 1, "a vocabulary-only file");
    assert!(
        out.contains("warning[template-no-generation-prompt]"),
        "{out}"
    );
    let (code, out, _) = gguf(&["check", "--schema", PHI3]);
    assert_eq!(code, 0);
    assert!(
        out.contains(": warning[template-no-generation-prompt] kv[24] \"tokenizer.chat_template\": chat template: "),
        "{out}"
    );
    let cases = [
        (
            "{% if %}",
            "error[template-syntax]",
            "line 1, column 7: does not parse",
        ),
        (
            "{% with a = 1 %}{{ a }}{% endwith %}",
            "error[template-llama-cpp-syntax]",
            "minja) does not parse the `with` statement",
        ),
        (
            "{{ messages[5].content.x }}",
            "error[template-minimal-render]",
            "does not render a one-message conversation",
        ),
        (
            "{{ '<|nope|>' }}{{ add_generation_prompt }}",
            "warning[template-token-not-in-vocab]",
            "\"<|nope|>\" is written by the template",
        ),
    ];
    let mut template_json = Vec::new();
    for (i, (source, label, message)) in cases.iter().enumerate() {
        let file = phi3_with(
            &dir,
            &format!("{i}.gguf"),
            &[("tokenizer.chat_template", source)],
        );
        let (code, out, err) = gguf(&["check", "--schema", file.to_str().unwrap()]);
        assert_eq!((code, err.as_str()), (0, ""), "{source}");
        let line = out
            .lines()
            .find(|l| l.contains(label))
            .unwrap_or_else(|| panic!("{source}: no {label} in {out}"));
        assert!(line.contains(message), "{line}");
        let (_, json, _) = gguf(&["check", "--schema", "--json", file.to_str().unwrap()]);
        template_json.push(serde_json::from_str::<Value>(&json).unwrap());
    }
    let doc = &template_json[1][0];
    assert_eq!(doc["accepted"], true);
    assert_eq!(doc["template"]["templates"][0]["family"], "unknown");
    assert_eq!(
        doc["template"]["templates"][0]["lint"][0]["code"],
        "template-llama-cpp-syntax"
    );
    let d = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "template-llama-cpp-syntax")
        .unwrap();
    assert_eq!(
        (&d["level"], &d["path"]),
        (
            &"error".into(),
            &"kv[24] \"tokenizer.chat_template\"".into()
        )
    );
    // A template key that is not a string.
    let phi3 = OwnedGguf::open(common::root().join(PHI3)).unwrap();
    let mut b = GgufBuilder::from_gguf(phi3.gguf());
    b.set("tokenizer.chat_template.n", 7u32);
    let number = dir.join("number.gguf");
    std::fs::write(&number, b.build().unwrap()).unwrap();
    let (code, out, _) = gguf(&["check", "--schema", number.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("error[template-not-text]"), "{out}");
}

/// `gguf edit --chat-template` and `--chat-template-config` write what gguf-py's
/// gguf_new_metadata writes (scripts/check-templates.sh compares the two on the same config):
/// old template keys removed, the new ones at the end; a template that does not parse is
/// refused and nothing written.
#[test]
fn edit_sets_templates() {
    let dir = common::scratch("template-edit");
    let _clean = common::RemoveOnDrop(dir.clone());
    let start = phi3_with(
        &dir,
        "start.gguf",
        &[("tokenizer.chat_template.old", "{{ 'old' }}")],
    );
    let start = start.to_str().unwrap();
    let keys = |path: &Path| -> Vec<(String, String)> {
        let model = OwnedGguf::open(path).unwrap();
        let gguf = model.gguf();
        gguf.kvs
            .iter()
            .map(|kv| {
                let key = kv.key.to_str().unwrap().to_owned();
                let value = match kv.value.as_str() {
                    Some(s) => s.to_owned(),
                    None => format!("{:?}", kv.value.as_array().map(|a| a.len())),
                };
                (key, value)
            })
            .collect()
    };
    let before = keys(Path::new(start));
    let untouched: Vec<_> = before
        .iter()
        .filter(|(k, _)| !k.starts_with("tokenizer.chat_template"))
        .cloned()
        .collect();

    // A Jinja file: the one template, last.
    let jinja = dir.join("t.jinja");
    std::fs::write(&jinja, "{% for m in messages %}{{ m.content }}{% endfor %}").unwrap();
    let out = dir.join("jinja.gguf");
    let args = [
        "edit",
        start,
        "--chat-template",
        jinja.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    assert_eq!(gguf(&args), (0, String::new(), String::new()));
    let after = keys(&out);
    assert_eq!(after[..after.len() - 1], untouched[..]);
    assert_eq!(
        after.last().unwrap(),
        &(
            "tokenizer.chat_template".into(),
            "{% for m in messages %}{{ m.content }}{% endfor %}".into()
        )
    );

    // A config with a list: named ones (names made [A-Za-z0-9_]), their names, then the default.
    let config = dir.join("tokenizer_config.json");
    std::fs::write(
        &config,
        r#"{"chat_template": [{"name": "tool use", "template": "{{ 'b' }}"},
            {"name": "default", "template": "{{ 'a' }}"}, {"name": "rag", "template": "{{ 'c' }}"},
            {"name": "skipped"}], "model_max_length": 4096}"#,
    )
    .unwrap();
    let out = dir.join("config.gguf");
    let config = config.to_str().unwrap();
    let args = [
        "edit",
        start,
        "--chat-template-config",
        config,
        "-o",
        out.to_str().unwrap(),
    ];
    assert_eq!(gguf(&args), (0, String::new(), String::new()));
    let after = keys(&out);
    let n = untouched.len();
    assert_eq!(after[..n], untouched[..]);
    let tail: Vec<(&str, &str)> = after[n..]
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        tail,
        [
            ("tokenizer.chat_template.tool_use", "{{ 'b' }}"),
            ("tokenizer.chat_template.rag", "{{ 'c' }}"),
            ("tokenizer.chat_templates", "Some(2)"),
            ("tokenizer.chat_template", "{{ 'a' }}"),
        ]
    );
    let (_, list, _) = gguf(&["template", out.to_str().unwrap(), "--name", "tool_use"]);
    assert_eq!(list, "{{ 'b' }}");

    // An empty chat_template changes nothing (gguf_new_metadata skips it).
    std::fs::write(dir.join("empty.json"), r#"{"chat_template": ""}"#).unwrap();
    let out = dir.join("empty.gguf");
    let empty = dir.join("empty.json");
    let args = [
        "edit",
        start,
        "--chat-template-config",
        empty.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    assert_eq!(gguf(&args).0, 0);
    assert_eq!(keys(&out), before);

    // Refused: a template that does not parse, a config that is not one. Nothing written.
    std::fs::write(&jinja, "{% for m in messages %}").unwrap();
    let out = dir.join("refused.gguf");
    let args = [
        "edit",
        start,
        "--chat-template",
        jinja.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    let (code, _, err) = gguf(&args);
    assert_eq!(code, 2);
    assert!(err.contains("the chat template does not parse"), "{err}");
    assert!(!out.exists());
    std::fs::write(dir.join("bad.json"), r#"{"chat_template": [3]}"#).unwrap();
    let bad = dir.join("bad.json");
    let args = [
        "edit",
        start,
        "--chat-template-config",
        bad.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    assert_eq!(gguf(&args).0, 2);
    assert!(!out.exists());

    // One llama.cpp's engine would not parse: written, with a warning.
    std::fs::write(&jinja, "{{ [1, 2,][0] }}").unwrap();
    let args = [
        "edit",
        start,
        "--chat-template",
        jinja.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    let (code, _, err) = gguf(&args);
    assert_eq!(code, 0);
    assert!(
        err.contains("llama.cpp 0.3.16's engine does not parse a trailing comma"),
        "{err}"
    );
    assert!(out.exists());
}

/// `gguf dump --summary` shows each template's family and screen result; `gguf scan` has a
/// template column, its text escaped in the text and CSV rows and exact in JSON.
#[test]
fn summary_and_scan_show_templates() {
    let dir = common::scratch("template-summary");
    let _clean = common::RemoveOnDrop(dir.clone());
    let (code, out, _) = gguf(&["dump", "--summary", PHI3]);
    assert_eq!(code, 0);
    assert!(
        out.contains("\nchat template  phi3, 269 bytes, screen: no findings\n"),
        "{out}"
    );
    let (_, out, _) = gguf(&[
        "dump",
        "--summary",
        "tests/conformance/cases/llama-8-tokens.gguf",
    ]);
    assert!(!out.contains("chat template"), "{out}");

    let hostile = "{{ messages[0].__class__ }}<|im_start|>";
    let file = phi3_with(
        &dir,
        "h.gguf",
        &[("tokenizer.chat_template.x\x1b[2J", hostile)],
    );
    let (_, out, _) = gguf(&["dump", "--summary", file.to_str().unwrap()]);
    assert!(
        out.contains(
            "\nchat template  x\\e[2J: chatml, 39 bytes, screen: 1 finding(s), worst high\n"
        ),
        "{out}"
    );
    let path = file.to_str().unwrap();
    let (_, text, _) = gguf(&["scan", path]);
    assert!(
        text.contains("  template phi3 x\\e[2J=chatml; screen: high  "),
        "{text}"
    );
    let (_, csv, _) = gguf(&["scan", "--csv", path]);
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .contains(",context_length,template,verdict,"),
        "{csv}"
    );
    assert!(csv.contains(",phi3 x\\e[2J=chatml; screen: high,"), "{csv}");
    assert!(!csv.contains('\x1b') && !text.contains('\x1b'));
    let (_, jsonl, _) = gguf(&[
        "scan",
        "--jsonl",
        path,
        PHI3,
        "tests/conformance/cases/llama-8-tokens.gguf",
    ]);
    let rows: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows[0]["template"], "phi3 x\x1b[2J=chatml; screen: high");
    assert_eq!(rows[1]["template"], "phi3");
    assert_eq!(rows[2]["template"], Value::Null);
}
