"""Chat templates from Python: render against transformers' own renders (recorded in
tests/data/transformers-renders.json by record_transformers.py, which runs
scripts/template_reference.py's transformers renderer), lint, and the screen against the
published proof-of-concept payloads and every real template."""

import datetime as dt
import hashlib
import json
import os
from pathlib import Path

import pytest

import gguf_grammar
from conftest import REPO, smollm2
from test_tokenizer import llama_src

RECORD = json.loads((Path(__file__).parent / "data" / "transformers-renders.json").read_text())
CONVERSATIONS = json.loads((REPO / "tests" / "templates" / "conversations.json").read_text())
# What a template from models/templates/ gets (scripts/template_reference.py's JINJA_SPECIAL).
JINJA_SPECIAL = {"bos_token": "<s>", "eos_token": "</s>"}


def templates():
    """(id, source, special tokens) as scripts/template_reference.py's `cases` names them."""
    out = []
    for path in sorted((llama_src() / "models" / "templates").glob("*.jinja")):
        out.append((path.name, path.read_text(encoding="utf-8"), JINJA_SPECIAL))
    for path in sorted((REPO / "tests" / "corpus").glob("*.gguf")) + [smollm2()]:
        doc = gguf_grammar.open(path)
        for name, source in doc.chat_templates().items():
            out.append((path.name if name is None else f"{path.name}:{name}", source, doc.special_tokens()))
    return out


def digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_renders_equal_transformers():
    now = dt.datetime.fromisoformat(RECORD["now"])
    results = RECORD["results"]
    cases = [(t, c) for t in templates() for c in CONVERSATIONS]
    assert {f"{t[0]}|{c['id']}" for t, c in cases} == set(results), "the recorded case set differs"
    same, errors, failures = 0, 0, []
    for (tid, source, special), c in cases:
        key = f"{tid}|{c['id']}"
        want = results[key]
        try:
            got = {
                "ok": digest(
                    gguf_grammar.render_template(
                        source,
                        c["messages"],
                        add_generation_prompt=c["add_generation_prompt"],
                        tools=c.get("tools"),
                        special_tokens=special,
                        now=now,
                    )
                )
            }
        except gguf_grammar.TemplateError as e:
            got = {"error": f"raised: {e.message}" if e.kind == "raised" else str(e)}
        if "ok" in want or "ok" in got:
            ok = want.get("ok") == got.get("ok")
        elif want["error"].startswith("raised: "):
            # an exception the template raises carries its message (raise_exception)
            ok = got["error"] == want["error"]
        else:
            ok = True  # both fail; the messages of two engines differ
        if ok:
            same += 1
            errors += "error" in want
        else:
            failures.append(f"{key}: transformers {want} ours {got}")
    print(f"\n{len(cases)} renders ({len(cases) // len(CONVERSATIONS)} templates x {len(CONVERSATIONS)} conversations): "
          f"{same} equal to transformers' ({errors} of them errors in both)")
    assert not failures, "\n".join(failures)


def test_render_binds_what_it_is_given():
    source = "{{ bos_token }}{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}" \
             "{% if add_generation_prompt %}>{% endif %}{{ strftime_now('%Y') }}{{ greeting }}"
    got = gguf_grammar.render_template(
        source, [{"role": "user", "content": "é"}], add_generation_prompt=True,
        special_tokens={"bos_token": "<s>"}, now=dt.datetime(2031, 1, 2), greeting="!")
    assert got == "<s>[user:é]>2031!"
    with pytest.raises(gguf_grammar.TemplateError) as e:
        gguf_grammar.render_template("{% if %}", [])
    assert (e.value.kind, e.value.line) == ("syntax", 1)
    with pytest.raises(gguf_grammar.TemplateError) as e:
        gguf_grammar.render_template("{{ raise_exception('no system role') }}", [])
    assert e.value.kind == "raised" and "no system role" in str(e.value)
    with pytest.raises(ValueError, match="not a special token name"):
        gguf_grammar.render_template("x", [], special_tokens={"bogus_token": "x"})


def test_document_templates():
    doc = gguf_grammar.open(smollm2())
    assert list(doc.chat_templates()) == [None]
    assert doc.special_tokens()["eos_token"] == "<|im_end|>"
    got = doc.render_template([{"role": "user", "content": "Hi"}], add_generation_prompt=True)
    assert got.endswith("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
    with pytest.raises(KeyError):
        doc.render_template([], name="tool_use")
    report = doc.template_report()
    assert json.dumps(report)  # a JSON document
    assert gguf_grammar.open(REPO / "tests" / "conformance" / "cases" / "basic-v3-le.gguf").chat_templates() == {}


# Published proof-of-concept payloads (crates/gguf-template/tests/screen.rs lists their
# sources), with the finding each must raise at least.
PAYLOADS = [
    # CVE-2024-34359 (llama-cpp-python, GHSA-56xg-wfcc-g829): the chat template of a GGUF file.
    (
        "{% for x in ().__class__.__base__.__subclasses__() %}{% if \"warning\" in x.__name__ %}"
        "{{x()._module.__builtins__['__import__']('os').popen(\"touch /tmp/retr0reg\")}}{%endif%}{% endfor %}",
        "template-dunder-attribute",
    ),
    ("{{ self.__init__.__globals__.__builtins__.__import__('os').popen('id').read() }}", "template-framework-global"),
    ("{{ config.__class__.__init__.__globals__['os'].popen('ls').read() }}", "template-framework-global"),
    ("{{ request.application.__globals__.__builtins__.__import__('os').popen('id').read() }}", "template-framework-global"),
    ("{{ cycler.__init__.__globals__.os.popen('id').read() }}", "template-gadget"),
    ("{{ joiner.__init__.__globals__.os.popen('id').read() }}", "template-gadget"),
    ("{{ lipsum.__globals__[\"os\"].popen('id').read() }}", "template-gadget"),
    ("{{ namespace.__init__.__globals__.os.popen('id').read() }}", "template-gadget"),
    ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "template-dunder-attribute"),
    ("{{ ()|attr('__class__')|attr('__base__')|attr('__subclasses__')() }}", "template-dunder-string"),
    ("{{ request|attr([\"_\"*2,\"class\",\"_\"*2]|join) }}", "template-attr-filter"),
    ("{{ ()|attr('\\x5f\\x5fclass\\x5f\\x5f') }}", "template-attr-filter"),
    ("{{ messages.__getattribute__('__class__') }}", "template-dunder-attribute"),
    ("{% include '/etc/passwd' %}", "template-loader-statement"),
    ("{% extends '../../secrets.txt' %}", "template-loader-statement"),
    ("{% import 'macros.j2' as m %}{% from 'x' import y %}", "template-loader-statement"),
    ("{{ x.os.popen('id') }}", "template-module-call"),
]


def test_a_self_doubling_value_is_stopped_by_the_size_bound_not_the_screen():
    # The sandbox bounds every value it makes, so the screen needs no pattern for this (which
    # wrongly flagged Liquid's LFM2 templates).
    payload = "{% set ns = namespace(s='aaaaaaaa') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"
    assert gguf_grammar.screen_template(payload) == []
    with pytest.raises(gguf_grammar.TemplateError) as e:
        gguf_grammar.render_template(payload, [{"role": "user", "content": "x"}])
    assert e.value.kind == "limit" and "MAX_VALUE_BYTES" in str(e.value)


@pytest.mark.parametrize("payload,code", PAYLOADS)
def test_screen_flags_every_payload(payload, code):
    found = gguf_grammar.screen_template(payload)
    assert code in {f.code for f in found}, found
    assert all(f.line == 1 and f.column >= 1 for f in found)
    # and the sandbox does not run it: an error, or (attr of an escaped name) nothing at all
    try:
        assert gguf_grammar.render_template(payload, [{"role": "user", "content": "x"}]) == ""
    except gguf_grammar.TemplateError as e:
        assert e.kind in ("runtime", "syntax", "limit"), e


def test_screen_and_lint_pass_every_real_template():
    found = {tid: gguf_grammar.screen_template(source) for tid, source, _ in templates()}
    assert len(found) >= 25
    assert {tid: f for tid, f in found.items() if f} == {}


def test_lint():
    assert gguf_grammar.lint_template("{% for m in messages %}{{ m.content }}{% endfor %}{% if add_generation_prompt %}>{% endif %}") == []
    broken = gguf_grammar.lint_template("{% for m in messages %}\n{{ m.content }")
    assert broken and broken[0].level == "error" and broken[0].line == 2
    # a special token the template writes but the vocabulary lacks
    codes = {f.code for f in gguf_grammar.lint_template(
        "{{ bos_token }}{% for m in messages %}<|im_start|>{{ m.content }}{% endfor %}{% if add_generation_prompt %}>{% endif %}",
        special_tokens={"bos_token": "<s>"}, vocabulary=["<s>", "a"])}
    assert codes, "expected a vocabulary finding"
