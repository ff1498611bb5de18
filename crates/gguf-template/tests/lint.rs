//! Lint diagnostics on small templates, on the corpus's phi-3 vocabulary and on SmolLM2.

use gguf_template::lint::{lint, lint_gguf, Level};
use gguf_template::SpecialTokens;
use std::collections::HashSet;

fn codes(source: &str, vocab: Option<&HashSet<&str>>) -> Vec<&'static str> {
    let special = SpecialTokens {
        tokens: vec![
            ("bos_token", "<s>".into()),
            ("eos_token", "<|endoftext|>".into()),
        ],
    };
    lint(source, &special, vocab)
        .iter()
        .map(|d| d.code)
        .collect()
}

const GOOD: &str = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}\
                    {% if add_generation_prompt %}<|assistant|>{% endif %}";

#[test]
fn a_good_template_is_clean() {
    assert_eq!(codes(GOOD, None), Vec::<&str>::new());
}

#[test]
fn syntax_errors_have_a_location() {
    let special = SpecialTokens::default();
    let d = lint("ok\n{% for m in messages %}{{ m.content }", &special, None);
    assert_eq!((d[0].code, d[0].level), ("template-syntax", Level::Error));
    assert_eq!(d[0].location.map(|l| l.0), Some(2));
}

#[test]
fn render_failures() {
    assert_eq!(
        codes("{{ raise_exception('always') }}", None),
        ["template-minimal-render", "template-ordinary-render"]
    );
    let no_system = "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}\
                     {% for m in messages %}{{ m.content }}{% endfor %}{% if add_generation_prompt %}>{% endif %}";
    assert_eq!(codes(no_system, None), ["template-ordinary-render"]);
    assert_eq!(
        codes("{{ messages[0].content.nope.deeper }}", None)[0],
        "template-minimal-render"
    );
}

#[test]
fn generation_prompt_never_emitted() {
    let src = "{% for m in messages %}{{ m.content }}{% endfor %}";
    assert_eq!(codes(src, None), ["template-no-generation-prompt"]);
}

fn phi3() -> gguf_grammar::OwnedGguf {
    gguf_grammar::OwnedGguf::open(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/corpus/ggml-vocab-phi-3.gguf"
    ))
    .unwrap()
}

#[test]
fn special_tokens_against_the_vocabulary() {
    let model = phi3();
    let tokens = model.gguf().get_array("tokenizer.ggml.tokens").unwrap();
    let vocab: HashSet<&str> = tokens.strs().unwrap().filter_map(|s| s.ok()).collect();
    // `<|{{ m.role }}|>` is not a literal; `<|end|>` and `<|assistant|>` are phi-3 tokens.
    assert_eq!(codes(GOOD, Some(&vocab)), Vec::<&str>::new());
    let chatml = "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>' }}{% endfor %}\
                  {% if add_generation_prompt %}{{ '<|im_start|>assistant' }}{% endif %}";
    let d = lint(
        chatml,
        &SpecialTokens::from_gguf(model.gguf()),
        Some(&vocab),
    );
    let msgs: Vec<String> = d.iter().map(|d| d.message.clone()).collect();
    assert_eq!(d.len(), 2, "{msgs:?}");
    assert!(msgs[0].contains("<|im_end|>") && msgs[1].contains("<|im_start|>"));
    let llama3 = "{{ '<|begin_of_text|>' }}{% for m in messages %}{{ m.content }}{% endfor %}\
                  {% if add_generation_prompt %}<|assistant|>{% endif %}";
    assert_eq!(
        codes(llama3, Some(&vocab)),
        ["template-token-not-in-vocab", "template-bos-mismatch"]
    );
}

#[test]
fn the_corpus_phi3_template() {
    // phi-3's template opens the assistant's turn after every user message, whatever
    // add_generation_prompt says; every `<|…|>` it writes is in its vocabulary.
    let model = phi3();
    let got = lint_gguf(model.gguf());
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, "tokenizer.chat_template");
    let codes: Vec<&str> = got[0].1.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["template-no-generation-prompt"]);
}

/// SmolLM2's template and vocabulary: from the model when `GGUF_SMOLLM2` names it
/// (scripts/test.sh), else from its header as recorded in `tests/models/` (its first bytes,
/// which the workspace's tests check against the model when it is fetched).
#[test]
fn smollm2_is_clean() {
    let path = std::env::var_os("GGUF_SMOLLM2").map_or_else(
        || {
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../tests/models/SmolLM2-135M-Instruct.Q4_1.header.gguf"
            )
            .into()
        },
        std::path::PathBuf::from,
    );
    let model = gguf_grammar::OwnedGguf::open(path).unwrap();
    let got = lint_gguf(model.gguf());
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, vec![], "{:?}", got[0].1);
}

#[test]
fn the_json_report() {
    let model = phi3();
    let doc = gguf_template::report::report(
        model.gguf(),
        false,
        Some(&gguf_template::lint::lint_gguf(model.gguf())),
        true,
    );
    let t = &doc["templates"][0];
    assert_eq!(t["key"], "tokenizer.chat_template");
    assert_eq!(t["name"], serde_json::Value::Null);
    assert_eq!(t["lint"][0]["code"], "template-no-generation-prompt");
    assert_eq!(t["screen"], serde_json::json!([]));
    assert!(t.get("source").is_none());
}

/// `tests/templates/llama-cpp-syntax.json` records, for each template, whether transformers'
/// jinja2 and llama.cpp's minja parse it (both run again by scripts/check-templates.sh): our
/// parse agrees with jinja2's but for the known differences below, and
/// `template-llama-cpp-syntax` is given exactly where jinja2 parses and minja does not.
#[test]
fn llama_cpp_syntax_as_recorded() {
    // Where minijinja's syntax is not transformers' jinja2's: it has `{% do %}` (an extension
    // transformers does not load). (`{% generation %}`, transformers' AssistantTracker
    // extension, is ours too.)
    const KNOWN: [&str; 1] = ["do"];
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/templates/llama-cpp-syntax.json"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let (mut flagged, mut differ, mut wrong) = (0, Vec::new(), Vec::new());
    for case in doc["cases"].as_array().unwrap() {
        let (id, source) = (
            case["id"].as_str().unwrap(),
            case["source"].as_str().unwrap(),
        );
        let jinja2 = case["jinja2"].as_bool().unwrap();
        let minja = case["llama.cpp"].as_bool().unwrap();
        if gguf_template::render::parse(source).is_ok() != jinja2 {
            differ.push(id);
            continue;
        }
        let ours = gguf_template::minja::llama_cpp_syntax(source);
        if jinja2 {
            let linted = codes(source, None).contains(&"template-llama-cpp-syntax");
            if ours.is_some() == minja || linted == minja {
                wrong.push(format!("{id}: {ours:?}"));
            }
            flagged += usize::from(linted);
        }
    }
    assert_eq!(differ, KNOWN, "our parse vs jinja2's");
    assert_eq!(
        wrong,
        Vec::<String>::new(),
        "template-llama-cpp-syntax vs llama.cpp"
    );
    assert!(flagged >= 20, "{flagged}");
}
