//! The sandbox's bounds and the transformers bindings that the reference comparison
//! (scripts/check-templates.sh) does not reach.

use gguf_template::{render, Conversation, Limits, RenderError, SpecialTokens};
use serde_json::json;
use std::time::Duration;

fn conv() -> Conversation {
    Conversation {
        messages: json!([{"role": "user", "content": "hi"}]),
        ..Conversation::default()
    }
}

fn run(source: &str) -> Result<String, RenderError> {
    render(
        source,
        &conv(),
        &SpecialTokens::default(),
        &Limits::default(),
    )
}

#[test]
fn fuel_bounds_a_long_loop() {
    let limits = Limits {
        fuel: 100_000,
        ..Limits::default()
    };
    let src = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}";
    let got = render(src, &conv(), &SpecialTokens::default(), &limits);
    assert_eq!(
        got,
        Err(RenderError::Limit("instruction budget (fuel) exhausted"))
    );
}

#[test]
fn output_size_is_bounded() {
    let limits = Limits {
        max_output: 1000,
        ..Limits::default()
    };
    let src = "{% for a in range(10000) %}xxxxxxxxxx{% endfor %}";
    let got = render(src, &conv(), &SpecialTokens::default(), &limits);
    assert_eq!(got, Err(RenderError::Limit("output size limit")));
}

#[test]
fn time_is_bounded() {
    let limits = Limits {
        max_time: Duration::ZERO,
        ..Limits::default()
    };
    let got = render(
        "{% for a in range(10) %}x{% endfor %}",
        &conv(),
        &SpecialTokens::default(),
        &limits,
    );
    assert_eq!(got, Err(RenderError::Limit("time limit")));
}

#[test]
fn recursion_is_bounded() {
    let src = "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}";
    assert!(
        matches!(run(src), Err(RenderError::Runtime { .. })),
        "{:?}",
        run(src)
    );
}

#[test]
fn no_filesystem_and_no_python_objects() {
    for src in [
        "{% include '/etc/passwd' %}",
        "{% import 'x.j2' as x %}",
        "{% extends 'base.html' %}",
    ] {
        assert!(run(src).is_err(), "{src}");
    }
    // Attribute chains of SSTI payloads find nothing: values are plain data.
    // Expected string from transformers' renderer (jinja2's sandbox also answers Undefined).
    let got = run("{{ ''.__class__ }}|{{ messages.__class__ }}|{{ range.__init__ }}");
    assert_eq!(got, Ok("||".to_string()));
    assert!(run("{{ ''.__class__.__mro__[1].__subclasses__() }}").is_err());
    assert!(run("{{ lipsum.__globals__['os'].popen('id').read() }}").is_err());
}

#[test]
fn raise_exception_and_syntax_errors_are_located() {
    assert_eq!(
        run("{{ raise_exception('no system role') }}"),
        Err(RenderError::Raised("no system role".into()))
    );
    match run("line one\n  {% if x %}oops") {
        Err(RenderError::Syntax { line, column, .. }) => assert_eq!((line, column), (2, 13)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn transformers_bindings() {
    let special = SpecialTokens {
        tokens: vec![("bos_token", "<s>".into()), ("eos_token", "</s>".into())],
    };
    let c = Conversation {
        messages: json!([{"role": "user", "content": "é", "tool_calls": null}]),
        now: chrono::NaiveDate::from_ymd_opt(2024, 7, 26)
            .unwrap()
            .and_hms_opt(0, 0, 0),
        ..Conversation::default()
    };
    let src = "{{ bos_token }}{{ messages | tojson }}|{{ messages[0] | tojson(indent=2, ensure_ascii=True) }}|\
               {{ tools }}|{{ tools is none }}|{{ [1.0, none, true, \"it's\"] }}|{{ strftime_now('%d %b %Y') }}\
               |{{ eos_token }}{{ unk_token is defined }}";
    // Expected string from Python: the same template through transformers' render_jinja_template.
    assert_eq!(
        render(src, &c, &special, &Limits::default()).unwrap(),
        "<s>[{\"role\": \"user\", \"content\": \"é\"}]|{\n  \"role\": \"user\",\n  \"content\": \"\\u00e9\"\n}|None|True|\
         [1.0, None, True, \"it's\"]|26 Jul 2024|</s>False"
    );
}

#[test]
fn namespace_doubling_is_refused() {
    let src = "{% set ns = namespace(s='aaaaaaaa') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}";
    assert!(matches!(run(src), Err(RenderError::Limit(_))));
}

#[test]
fn markup_generation_and_concat_as_transformers() {
    // Expected strings from transformers 5.25's render_jinja_template on the same templates.
    // `Markup + str` escapes the str, `Markup + Markup` stays Markup, `~` makes a plain str.
    assert_eq!(
        run("{{ \"it's \"|safe + \"<a href='x'>\" + \" & \"|safe + '\"q\"' }}|{{ ('a'|safe + 'b') ~ '<' }}")
            .unwrap(),
        "it's &lt;a href=&#39;x&#39;&gt; & &#34;q&#34;|ab<"
    );
    // `{% generation %}` renders its body in its own scope (a call block).
    assert_eq!(
        run("{% for m in messages %}{% set x = 'outer' %}{% generation %}{% set x = 'inner' %}[{{ m.content }}]{% endgeneration %}{{ x }}{% endfor %}")
            .unwrap(),
        "[hi]outer"
    );
    // `~` is Python's str() of each side.
    assert_eq!(
        run("{{ none ~ true ~ 1.5 ~ [1, 'a'] }}").unwrap(),
        "NoneTrue1.5[1, 'a']"
    );
}
