//! The screen against published template-injection payloads, and against the real templates
//! in the repository's corpus (scripts/check-templates.sh screens the llama.cpp ones too).

use gguf_template::screen::{screen, Severity};

/// Published proof-of-concept payloads, with the finding each must raise at least.
const PAYLOADS: &[(&str, &str)] = &[
    // CVE-2024-34359 (llama-cpp-python, GHSA-56xg-wfcc-g829): the chat template of a GGUF file.
    (
        r#"{% for x in ().__class__.__base__.__subclasses__() %}{% if "warning" in x.__name__ %}{{x()._module.__builtins__['__import__']('os').popen("touch /tmp/retr0reg")}}{%endif%}{% endfor %}"#,
        "template-dunder-attribute",
    ),
    // The classic jinja2/Flask SSTI chains.
    (
        "{{ self.__init__.__globals__.__builtins__.__import__('os').popen('id').read() }}",
        "template-framework-global",
    ),
    (
        "{{ config.__class__.__init__.__globals__['os'].popen('ls').read() }}",
        "template-framework-global",
    ),
    (
        "{{ request.application.__globals__.__builtins__.__import__('os').popen('id').read() }}",
        "template-framework-global",
    ),
    (
        "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
        "template-gadget",
    ),
    (
        "{{ joiner.__init__.__globals__.os.popen('id').read() }}",
        "template-gadget",
    ),
    (
        "{{ lipsum.__globals__[\"os\"].popen('id').read() }}",
        "template-gadget",
    ),
    (
        "{{ namespace.__init__.__globals__.os.popen('id').read() }}",
        "template-gadget",
    ),
    (
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "template-dunder-attribute",
    ),
    (
        "{{ ()|attr('__class__')|attr('__base__')|attr('__subclasses__')() }}",
        "template-dunder-string",
    ),
    (
        "{{ request|attr([\"_\"*2,\"class\",\"_\"*2]|join) }}",
        "template-attr-filter",
    ),
    (
        "{{ ()|attr('\\x5f\\x5fclass\\x5f\\x5f') }}",
        "template-attr-filter",
    ),
    (
        "{{ messages.__getattribute__('__class__') }}",
        "template-dunder-attribute",
    ),
    ("{% include '/etc/passwd' %}", "template-loader-statement"),
    (
        "{% extends '../../secrets.txt' %}",
        "template-loader-statement",
    ),
    (
        "{% import 'macros.j2' as m %}{% from 'x' import y %}",
        "template-loader-statement",
    ),
    ("{{ x.os.popen('id') }}", "template-module-call"),
];

#[test]
fn every_payload_is_flagged() {
    for (payload, code) in PAYLOADS {
        let findings = screen(payload);
        assert!(
            findings
                .iter()
                .any(|f| f.code == *code && f.severity >= Severity::Medium),
            "{payload}: want {code}, got {findings:#?}"
        );
    }
}

#[test]
fn findings_have_locations() {
    let f = screen("line one\n{{ messages[0].__class__ }}");
    assert_eq!(
        (f[0].code, f[0].line, f[0].column),
        ("template-dunder-attribute", 2, 16)
    );
}

#[test]
fn deep_and_long_expressions() {
    let deep = format!("{{{{ {}1{} }}}}", "(".repeat(40), ")".repeat(40));
    assert!(screen(&deep)
        .iter()
        .any(|f| f.code == "template-deep-nesting"));
    let long = format!("{{{{ {} }}}}", vec!["1"; 2000].join(" + "));
    assert!(screen(&long)
        .iter()
        .any(|f| f.code == "template-long-expression"));
}

#[test]
fn benign_uses_are_not_flagged() {
    let src = "{% set ns = namespace(found=false, self=1) %}{% for m in messages %}{{ m.content.strip() }}\
               {{ m['role'] | upper }}{% endfor %}{{ range(3) | list }}{{ dict(a=1) | tojson }}";
    assert_eq!(screen(src), vec![]);
}

#[test]
fn corpus_templates_have_no_findings() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/corpus");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "gguf") {
            let model = gguf_grammar::OwnedGguf::open(&path).unwrap();
            for t in gguf_template::templates(model.gguf()).0 {
                assert_eq!(screen(&t.source), vec![], "{}", path.display());
                n += 1;
            }
        }
    }
    assert!(n >= 1);
}
