//! Renders every template x conversation of a cases file (scripts/template_reference.py cases)
//! with this crate, for scripts/check-templates.sh. A template that comes from a GGUF file is
//! read from that file by this crate and must equal what gguf-py read (source and special
//! tokens), and the screen must find nothing in any of them; otherwise the run fails. Each
//! template's family and whether our lint says llama.cpp's engine parses it are written too,
//! for the comparison with llama.cpp.
//!
//! Usage: render-cases CASES.json OUT.json

use gguf_template::{render, templates, Conversation, Limits, RenderError, SpecialTokens};
use serde_json::{json, Value};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let [_, cases, out] = args.as_slice() else {
        eprintln!("usage: render-cases CASES.json OUT.json");
        return ExitCode::from(2);
    };
    let cases: Value = serde_json::from_str(&std::fs::read_to_string(cases).unwrap()).unwrap();
    let now =
        chrono::NaiveDateTime::parse_from_str(cases["now"].as_str().unwrap(), "%Y-%m-%dT%H:%M:%S")
            .unwrap();
    let mut results = serde_json::Map::new();
    let mut families = serde_json::Map::new();
    let mut minja = serde_json::Map::new();
    let mut failed = false;
    let mut screened = 0;
    for t in cases["templates"].as_array().unwrap() {
        let (source, special) = match t["gguf"].as_str() {
            None => {
                let special = SpecialTokens {
                    tokens: t["special"]
                        .as_object()
                        .unwrap()
                        .iter()
                        .map(|(k, v)| {
                            let name = gguf_template::read::SPECIAL_TOKEN_KEYS
                                .iter()
                                .find(|(n, _)| n == k)
                                .unwrap()
                                .0;
                            (name, v.as_str().unwrap().to_owned())
                        })
                        .collect(),
                };
                (t["source"].as_str().unwrap().to_owned(), special)
            }
            Some(path) => {
                let model = gguf_grammar::OwnedGguf::open(path).unwrap();
                let gguf = model.gguf();
                let (found, errors) = templates(gguf);
                assert!(errors.is_empty(), "{errors:?}");
                let name = t["name"].as_str().map(str::to_owned);
                let template = found.into_iter().find(|x| x.name == name).unwrap();
                let special = SpecialTokens::from_gguf(gguf);
                if template.source != t["source"].as_str().unwrap() {
                    eprintln!("{}: template differs from gguf-py's", t["id"]);
                    failed = true;
                }
                let ours: serde_json::Map<String, Value> = special
                    .tokens
                    .iter()
                    .map(|(k, v)| (k.to_string(), json!(v)))
                    .collect();
                if Value::Object(ours) != t["special"] {
                    eprintln!("{}: special tokens differ from gguf-py's", t["id"]);
                    failed = true;
                }
                (template.source, special)
            }
        };
        // Real templates: the screen must find nothing (no false positive).
        for finding in gguf_template::screen::screen(&source) {
            eprintln!("{}: screen false positive: {finding}", t["id"]);
            failed = true;
        }
        screened += 1;
        let id = t["id"].as_str().unwrap().to_owned();
        families.insert(id.clone(), json!(gguf_template::family::family(&source)));
        // Whether our lint says llama.cpp's engine parses it.
        let parses = gguf_template::minja::llama_cpp_syntax(&source).is_none();
        minja.insert(id, json!(parses));
        if std::env::var_os("GGUF_TEMPLATE_LINT").is_some() {
            for d in gguf_template::lint::lint(&source, &special, None) {
                eprintln!("{}: lint: {d}", t["id"]);
            }
        }
        for c in cases["conversations"].as_array().unwrap() {
            let conversation = Conversation {
                messages: c["messages"].clone(),
                tools: c.get("tools").cloned().filter(|v| !v.is_null()),
                add_generation_prompt: c["add_generation_prompt"].as_bool().unwrap(),
                now: Some(now),
                ..Conversation::default()
            };
            let key = format!(
                "{}|{}",
                t["id"].as_str().unwrap(),
                c["id"].as_str().unwrap()
            );
            let result = match render(&source, &conversation, &special, &Limits::default()) {
                Ok(text) => json!({ "ok": text }),
                Err(RenderError::Raised(m)) => json!({ "error": format!("raised: {m}") }),
                Err(e) => json!({ "error": e.to_string() }),
            };
            results.insert(key, result);
        }
    }
    std::fs::write(
        out,
        serde_json::to_string_pretty(
            &json!({ "results": results, "families": families, "minja_parses": minja }),
        )
        .unwrap(),
    )
    .unwrap();
    eprintln!("screen: {screened} real templates, no findings expected");
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
