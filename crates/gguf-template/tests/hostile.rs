//! Hostile templates (issue 37, items 7–10): each stops with a clean error, fast, in bounded
//! memory. Each failed before the sandbox's bounds (a stack overflow, or minutes and
//! gigabytes).

use gguf_template::{render, Conversation, Limits, RenderError, SpecialTokens};
use serde_json::json;
use std::time::{Duration, Instant};

fn conv() -> Conversation {
    Conversation {
        messages: json!([{"role": "user", "content": "hi"}]),
        ..Conversation::default()
    }
}

/// Renders `source`, which must fail within the render deadline (and a second for a debug
/// build's slower parse).
fn refused(source: &str) -> RenderError {
    let start = Instant::now();
    let got = render(
        source,
        &conv(),
        &SpecialTokens::default(),
        &Limits::default(),
    );
    let took = start.elapsed();
    let head: String = source.chars().take(80).collect();
    let deadline = Limits::default().max_time + Duration::from_secs(1);
    assert!(took < deadline, "{head}: took {took:?}");
    match got {
        Ok(text) => panic!("{head}: rendered {} bytes", text.len()),
        Err(e) => e,
    }
}

fn syntax(source: &str) {
    match refused(source) {
        RenderError::Syntax { message, .. } => assert!(message.contains("deep"), "{message}"),
        other => panic!("{other:?}"),
    }
}

fn limit(source: &str) {
    match refused(source) {
        RenderError::Limit(_) => {}
        other => panic!("{}: {other:?}", source.chars().take(80).collect::<String>()),
    }
}

#[test]
fn deep_expressions_are_syntax_errors() {
    syntax(&format!("{{{{ {}x }}}}", "not ".repeat(50_000)));
    syntax(&format!("{{{{ {}1 }}}}", "1+".repeat(50_000)));
    syntax(&format!("{{{{ x{} }}}}", ".a".repeat(50_000)));
    syntax(&format!("{{{{ x{} }}}}", "|string".repeat(50_000)));
    syntax(&format!(
        "{{{{ {}1{} }}}}",
        "(".repeat(50_000),
        ")".repeat(50_000)
    ));
    syntax(&format!(
        "{{{{ {}1{} }}}}",
        "[".repeat(50_000),
        "]".repeat(50_000)
    ));
    syntax(&format!(
        "{}{}",
        "{% if x %}".repeat(50_000),
        "{% endif %}".repeat(50_000)
    ));
    syntax(&format!(
        "{{% if x %}}{}{{% endif %}}",
        "{% elif x %}".repeat(50_000)
    ));
    // A long flat list is not deep.
    let list = vec!["1"; 5000].join(", ");
    assert!(render(
        &format!("{{{{ [{list}]|length }}}}"),
        &conv(),
        &SpecialTokens::default(),
        &Limits::default()
    )
    .is_ok());
}

#[test]
fn work_inside_builtins_is_charged() {
    limit("{% set l = range(100000)|list %}{% for i in range(100000) %}{% set s = l|sort %}{% endfor %}");
    limit("{% set a = 'a' * 9999999 %}{% set b = 'a' * 9999999 %}{% for i in range(100000) %}{% if a == b %}{% endif %}{% endfor %}");
    limit("{% set a = 'ab ' * 5000000 %}{% for i in range(100000) %}{% set t = a|title %}{% endfor %}");
    limit("{% set a = 'a' * 9999999 %}{% for i in range(100000) %}{% if 'b' in a %}{% endif %}{% endfor %}");
    limit("{% set a = 'a' * 9999999 %}{% for i in range(100000) %}{% set b = a[1:] %}{% endfor %}");
    limit("{% set a = 'a' * 9999999 %}{% for i in range(100000) %}{% set b = a[-1] %}{% endfor %}");
}

#[test]
fn value_sizes_are_bounded() {
    for source in [
        "{{ 'a' * 99999999 }}",
        "{{ '%1500000000s'|format('x') }}",
        "{{ '{:>1500000000}'.format('x') }}",
        "{{ 'x'|indent(1000000000) }}",
        "{{ [1]|slice(100000000) }}",
        "{{ [1]|batch(100000000, 0) }}",
        "{{ (('a' * 9999999) ~ ('a' * 9999999))|list|length }}",
        "{{ ('a' * 9999999).split('')|length }}",
        "{{ strftime_now('%c' * 50000000) }}",
        "{% set ns = namespace(s='a') %}{% for i in range(40) %}{% set ns.s = ns.s|replace('a', 'aa') %}{% endfor %}",
        "{% macro f(s, n) %}{% if n > 0 %}{{ f(s ~ s, n - 1) }}{% endif %}{% endmacro %}{{ f('a', 40) }}",
        "{% set ns = namespace(a='a', b='a') %}{% for i in range(40) %}{% set ns.a = ns.b ~ ns.b %}{% set ns.b = ns.a %}{% endfor %}",
        "{% set ns = namespace(a=[1]) %}{% for i in range(60) %}{% set ns.a = [ns.a, ns.a] %}{% endfor %}{{ ns.a }}",
        "{% set ns = namespace(a=[1]) %}{% for i in range(60) %}{% set ns.a = [ns.a, ns.a] %}{% endfor %}{{ ns.a|tojson }}",
        "{% set ns = namespace(a=[1]) %}{% for i in range(40) %}{% set ns.a = ns.a + ns.a %}{% endfor %}{{ ns.a|length }}",
    ] {
        limit(source);
    }
}

#[test]
fn a_file_of_many_exhausting_templates_has_one_deadline() {
    use gguf_grammar::{write::GgufBuilder, Ctx};
    // Each template runs to the work budget or the render deadline on its own.
    let hog = "{% set l = range(100000)|list %}{% for i in range(100000) %}{% set s = l|sort %}{% endfor %}";
    let names: Vec<String> = (0..20)
        .map(|i| format!("tokenizer.chat_template.t{i}"))
        .collect();
    let mut builder = GgufBuilder::new(Ctx::V3_LE);
    builder
        .set("general.architecture", "llama")
        .set("tokenizer.chat_template", hog);
    for name in &names {
        builder.set(name, hog);
    }
    let bytes = builder.build().unwrap();
    let gguf = gguf_grammar::Gguf::parse(&bytes).unwrap();
    let start = Instant::now();
    let found = gguf_template::lint::lint_gguf(&gguf);
    assert_eq!(found.len(), 21);
    let took = start.elapsed();
    assert!(
        took < Duration::from_secs(gguf_template::bounds::FILE_SECONDS + 3),
        "{took:?}"
    );
}
