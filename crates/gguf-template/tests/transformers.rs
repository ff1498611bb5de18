//! Every template of llama.cpp 0.3.36's and 0.3.16's `models/templates` and of the corpus,
//! times the conversations of tests/templates/conversations.json (tools, tool calls, tool
//! results, reasoning, system messages, multi-part content, non-ASCII), rendered here and
//! compared with transformers' renderings as recorded in tests/templates/transformers.json
//! (scripts/template_reference.py record; scripts/check-templates.sh runs transformers itself).
//! A rendering must be byte-equal (by SHA-256), or both must refuse (a raised exception with
//! the same message).

use gguf_template::read::SPECIAL_TOKEN_KEYS;
use gguf_template::{render, Conversation, Limits, RenderError, SpecialTokens};
use serde_json::Value;
use sha2::{Digest, Sha256};

#[test]
fn every_template_renders_as_transformers_does() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/templates/transformers.json"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let now =
        chrono::NaiveDateTime::parse_from_str(doc["now"].as_str().unwrap(), "%Y-%m-%dT%H:%M:%S")
            .unwrap();
    let (mut equal, mut both_refuse) = (0, 0);
    let mut wrong = Vec::new();
    for t in doc["templates"].as_array().unwrap() {
        let source = t["source"].as_str().unwrap();
        let special = SpecialTokens {
            tokens: t["special"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| {
                    let name = SPECIAL_TOKEN_KEYS.iter().find(|(n, _)| n == k).unwrap().0;
                    (name, v.as_str().unwrap().to_owned())
                })
                .collect(),
        };
        for c in doc["conversations"].as_array().unwrap() {
            let key = format!(
                "{}|{}",
                t["id"].as_str().unwrap(),
                c["id"].as_str().unwrap()
            );
            let conversation = Conversation {
                messages: c["messages"].clone(),
                tools: c.get("tools").cloned().filter(|v| !v.is_null()),
                add_generation_prompt: c["add_generation_prompt"].as_bool().unwrap(),
                now: Some(now),
                ..Conversation::default()
            };
            let want = &doc["results"][&key];
            let got = render(source, &conversation, &special, &Limits::default());
            let agrees = match (&got, want.get("sha256")) {
                (Ok(text), Some(sha)) => {
                    let ours = format!("{:x}", Sha256::digest(text.as_bytes()));
                    equal += usize::from(ours == sha.as_str().unwrap());
                    ours == sha.as_str().unwrap()
                }
                (Err(RenderError::Raised(m)), None) => {
                    both_refuse += 1;
                    want["error"] == "raised" && want["message"] == m.as_str()
                }
                (Err(_), None) => {
                    both_refuse += 1;
                    want["error"] != "raised"
                }
                _ => false,
            };
            if !agrees {
                wrong.push(format!("{key}: ours {:?}", got.map(|t| t.len())));
            }
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
    eprintln!("{equal} byte-equal, {both_refuse} refused by both");
    assert!(equal >= 600, "{equal}");
}
