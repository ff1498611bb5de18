"""Chat-template references for scripts/check-templates.sh.

  cases DIR GGUF... --conversations FILE [--now TIME] -o CASES   the templates (every *.jinja in DIR, every
        template in each GGUF file as gguf-py reads it, with the special tokens transformers
        would bind) and the fixed conversations, as one JSON document
  transformers CASES -o OUT [--cli-expected FILE]   every template x conversation rendered by transformers' own
        renderer (the two calls apply_chat_template makes: _normalize_chat_messages, then
        render_jinja_template with the special tokens as keyword arguments)
  compare CASES OURS TRANSFORMERS LLAMA --differences FILE   the table; exit 1 when ours differs
        from transformers anywhere, or when the differences between transformers and llama.cpp
        are not exactly the ones FILE lists
  cli-expected FILE [--write]   the renders crates/gguf-cli/tests/cli_template.rs expects from `gguf template
        --render` (tests/templates/cli-expected.json), each rendered again by transformers from the
        GGUF file's template (or the template file the test embeds) with the file's special tokens;
        exit 1 when one differs (--write records them instead)
  syntax-cases FILE -o CASES   the templates of tests/templates/llama-cpp-syntax.json as a cases
        document (one conversation) for llama.cpp's reference
  transformers ... --syntax FILE --syntax-llama RESULTS   also require the parse verdicts FILE
        records to be transformers' (its compiled jinja2 environment) and llama.cpp's (RESULTS:
        the reference run on syntax-cases; an error starting "syntax:" is a refusal to parse)
  record CASES TRANSFORMERS -o FILE   the cases and transformers' results as one file that
        `cargo test -p gguf-template` replays without Python (tests/templates/transformers.json):
        each template's source, each conversation, and per rendering the SHA-256 of transformers'
        text or its error kind (a raised message kept)
  categorize TRANSFORMERS LLAMA --differences FILE   rewrite FILE's list of differences from a
        run, each with its cause (by template family; review the result by hand)

A result is {"ok": text} or {"error": message}; two errors are equal whatever their messages,
except that an exception the template raises (raise_exception) must carry the same message.
"""

import argparse
import datetime as dt
import json
import os
import sys

SPECIAL_KEYS = [
    ("bos_token", "tokenizer.ggml.bos_token_id"),
    ("eos_token", "tokenizer.ggml.eos_token_id"),
    ("unk_token", "tokenizer.ggml.unknown_token_id"),
    ("sep_token", "tokenizer.ggml.seperator_token_id"),
    ("pad_token", "tokenizer.ggml.padding_token_id"),
    ("cls_token", "tokenizer.ggml.cls_token_id"),
    ("mask_token", "tokenizer.ggml.mask_token_id"),
]
# What a template from models/templates/ gets (no vocabulary comes with it); llama.cpp is given
# the same two as its bos/eos overrides.
JINJA_SPECIAL = {"bos_token": "<s>", "eos_token": "</s>"}


def gguf_templates(path):
    from gguf import GGUFReader

    reader = GGUFReader(path)

    def field_str(field):
        return bytes(field.parts[field.data[0]]).decode("utf-8")

    def field_int(field):
        return int(field.parts[field.data[0]][0])

    tokens = reader.fields.get("tokenizer.ggml.tokens")
    special = {}
    for name, key in SPECIAL_KEYS:
        field = reader.fields.get(key)
        if field is None or tokens is None:
            continue
        idx = field_int(field)
        if 0 <= idx < len(tokens.data):
            special[name] = bytes(tokens.parts[tokens.data[idx]]).decode("utf-8")
    out = []
    for key, field in reader.fields.items():
        if key == "tokenizer.chat_template" or key.startswith("tokenizer.chat_template."):
            name = None if key == "tokenizer.chat_template" else key[len("tokenizer.chat_template.") :]
            base = os.path.basename(path)
            out.append(
                {
                    "id": base if name is None else f"{base}:{name}",
                    "source": field_str(field),
                    "special": special,
                    "gguf": os.path.abspath(path),
                    "name": name,
                }
            )
    return out


def cmd_cases(args):
    templates = []
    for fname in sorted(os.listdir(args.dir)):
        if fname.endswith(".jinja"):
            with open(os.path.join(args.dir, fname), encoding="utf-8") as f:
                source = f.read()
            templates.append(
                {"id": fname, "source": source, "special": JINJA_SPECIAL, "gguf": None, "name": None}
            )
    for path in args.gguf:
        templates.extend(gguf_templates(path))
    with open(args.conversations, encoding="utf-8") as f:
        conversations = json.load(f)
    now = dt.datetime.fromisoformat(args.now) if args.now else dt.datetime.now().replace(microsecond=0)
    doc = {
        "now": now.isoformat(),
        "now_epoch": int(now.timestamp()),
        "templates": templates,
        "conversations": conversations,
    }
    with open(args.o, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)


def cmd_transformers(args):
    import jinja2
    from transformers.utils import chat_template_utils as ctu

    with open(args.cases, encoding="utf-8") as f:
        cases = json.load(f)
    fixed = dt.datetime.fromisoformat(cases["now"])

    class FixedDatetime(dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return fixed

    # strftime_now reads the module's `datetime` when called.
    ctu.datetime = FixedDatetime
    results = {}
    for t in cases["templates"]:
        for c in cases["conversations"]:
            key = f"{t['id']}|{c['id']}"
            try:
                messages = ctu._normalize_chat_messages(c["messages"])
                rendered, _ = ctu.render_jinja_template(
                    conversations=[messages],
                    tools=c.get("tools"),
                    documents=None,
                    chat_template=t["source"],
                    add_generation_prompt=c["add_generation_prompt"],
                    **t["special"],
                )
                results[key] = {"ok": rendered[0]}
            except jinja2.exceptions.TemplateSyntaxError as e:
                results[key] = {"error": f"syntax: {e}"}
            except jinja2.exceptions.TemplateError as e:
                # raise_exception raises a bare TemplateError; jinja2's own errors are subclasses.
                kind = "raised" if type(e) is jinja2.exceptions.TemplateError else "runtime"
                results[key] = {"error": f"{kind}: {e}"}
            except Exception as e:  # noqa: BLE001 - a render error of any Python type is a result
                results[key] = {"error": f"runtime: {type(e).__name__}: {e}"}
    with open(args.o, "w", encoding="utf-8") as f:
        json.dump({"results": results}, f, ensure_ascii=False, indent=1)
    # In the same process: importing transformers is the cost of a run.
    if args.syntax and check_syntax(args.syntax, args.syntax_llama, ctu):
        return 1
    if args.cli_expected:
        args.file, args.write = args.cli_expected, False
        return cmd_cli_expected(args, cases)


def cmd_syntax_cases(args):
    with open(args.file, encoding="utf-8") as f:
        doc = json.load(f)
    cases = {
        "now": "2026-01-01T00:00:00",
        "now_epoch": 1767225600,
        "templates": [
            {"id": c["id"], "source": c["source"], "special": JINJA_SPECIAL, "gguf": None, "name": None}
            for c in doc["cases"]
        ],
        "conversations": [{"id": "user", "add_generation_prompt": True,
                           "messages": [{"role": "user", "content": "Hello"}]}],
    }
    with open(args.o, "w", encoding="utf-8") as f:
        json.dump(cases, f, ensure_ascii=False, indent=1)


def check_syntax(path, llama_path, ctu):
    """The number of recorded parse verdicts that a reference no longer gives."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    with open(llama_path, encoding="utf-8") as f:
        llama = json.load(f)["results"]
    wrong = 0
    for c in doc["cases"]:
        try:
            ctu._compile_jinja_template(c["source"])
            jinja2_parses = True
        except Exception:  # noqa: BLE001 - any refusal to compile is a verdict
            jinja2_parses = False
        r = llama[c["id"] + "|user"]
        llama_parses = not r.get("error", "").startswith("syntax:")
        for who, got in (("jinja2", jinja2_parses), ("llama.cpp", llama_parses)):
            if got != c[who]:
                print(f"FAIL syntax case {c['id']}: {who} parses: {got}, recorded {c[who]}")
                wrong += 1
    print(f"{len(doc['cases'])} parse verdicts of jinja2 and llama.cpp as recorded" if not wrong else "")
    return wrong


def cmd_cli_expected(args, cases=None):
    from transformers.utils import chat_template_utils as ctu

    read = {}

    with open(args.file, encoding="utf-8") as f:
        doc = json.load(f)
    with open(doc["conversations"], encoding="utf-8") as f:
        conversations = {c["id"]: c for c in json.load(f)}
    failures = 0
    for r in doc["renders"]:
        # The test embeds template_file under the name, or renders the file's own template.
        path = os.path.abspath(r["gguf"])
        if path not in read:
            # The file as the cases document read it, when there is one (gguf-py is slow).
            known = [t for t in (cases or {}).get("templates", []) if t["gguf"] == path]
            read[path] = known or gguf_templates(path)
        found = read[path]
        special = found[0]["special"]
        if r.get("template_file"):
            with open(r["template_file"], encoding="utf-8") as f:
                source = f.read()
        else:
            source = next(t["source"] for t in found if t["name"] == r["name"])
        c = conversations[r["conversation"]]
        rendered, _ = ctu.render_jinja_template(
            conversations=[ctu._normalize_chat_messages(c["messages"])],
            tools=c.get("tools"),
            documents=None,
            chat_template=source,
            add_generation_prompt=c["add_generation_prompt"],
            **special,
        )
        if args.write:
            r["text"] = rendered[0]
        elif rendered[0] != r["text"]:
            print(f"FAIL {r['gguf']} {r['name']} {r['conversation']}: transformers renders "
                  f"{rendered[0]!r}, the test expects {r['text']!r}")
            failures += 1
    if args.write:
        with open(args.file, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, ensure_ascii=False)
            f.write("\n")
    else:
        print(f"{len(doc['renders'])} expected CLI renders equal to transformers'")
    return 1 if failures else 0


def same(a, b):
    if "ok" in a or "ok" in b:
        return a.get("ok") == b.get("ok")
    # An exception the template raises carries its message (llama.cpp's minja does not say it
    # was raised, so only two raised errors are compared).
    if a["error"].startswith("raised: ") and b["error"].startswith("raised: "):
        return a["error"] == b["error"]
    return True


def short(r):
    text = r.get("ok")
    if text is None:
        return "error: " + r["error"][:120]
    return f"{len(text.encode())} bytes"


def first_difference(a, b):
    if "ok" not in a or "ok" not in b:
        return f"{short(a)} vs {short(b)}"
    x, y = a["ok"], b["ok"]
    i = next((i for i in range(min(len(x), len(y))) if x[i] != y[i]), min(len(x), len(y)))
    return f"at char {i}: {x[max(0, i - 30):i + 40]!r} vs {y[max(0, i - 30):i + 40]!r}"


def cmd_compare(args):
    def load(p):
        with open(p, encoding="utf-8") as f:
            return json.load(f)

    cases = load(args.cases)
    ours, hf, llama = (load(p)["results"] for p in (args.ours, args.transformers, args.llama))
    with open(args.differences, encoding="utf-8") as f:
        listed = json.load(f)
    listed_keys = {d["case"]: d for d in listed["differences"]}
    failures = []
    counts = {"ours=transformers": 0, "ours!=transformers": 0, "ours=llama.cpp": 0, "ours!=llama.cpp": 0,
              "transformers=llama.cpp": 0, "transformers!=llama.cpp": 0}
    hf_llama_diffs = {}
    n = 0
    for t in cases["templates"]:
        for c in cases["conversations"]:
            key = f"{t['id']}|{c['id']}"
            n += 1
            o, h, l = ours[key], hf[key], llama[key]
            if same(o, h):
                counts["ours=transformers"] += 1
            else:
                counts["ours!=transformers"] += 1
                failures.append(f"ours != transformers: {key}: {first_difference(o, h)}")
            counts["ours=llama.cpp" if same(o, l) else "ours!=llama.cpp"] += 1
            if same(h, l):
                counts["transformers=llama.cpp"] += 1
            else:
                counts["transformers!=llama.cpp"] += 1
                hf_llama_diffs[key] = first_difference(h, l)
    # The family llama.cpp detects, and whether its engine parses the template, as ours say.
    with open(args.ours, encoding="utf-8") as f:
        ours_doc = json.load(f)
    with open(args.llama, encoding="utf-8") as f:
        llama_doc = json.load(f)
    for t in cases["templates"]:
        fam_ours, fam_llama = ours_doc["families"][t["id"]], llama_doc["families"][t["id"]]
        if fam_ours != fam_llama:
            failures.append(f"family of {t['id']}: ours {fam_ours}, llama.cpp {fam_llama}")
        first = llama[f"{t['id']}|{cases['conversations'][0]['id']}"]
        llama_parses = not first.get("error", "").startswith("syntax:")
        if ours_doc["minja_parses"][t["id"]] != llama_parses:
            failures.append(f"llama.cpp parses {t['id']}: {llama_parses}, our lint says the opposite")
    families = sorted(set(llama_doc["families"].values()))
    print(f"  families as llama.cpp detects them: {len(cases['templates'])} equal ({', '.join(families)})")
    for key, what in sorted(hf_llama_diffs.items()):
        if key not in listed_keys:
            failures.append(f"unlisted transformers/llama.cpp difference: {key}: {what}")
    for key in sorted(listed_keys):
        if key not in hf_llama_diffs:
            failures.append(f"listed difference no longer seen: {key}")
    print(f"{len(cases['templates'])} templates x {len(cases['conversations'])} conversations = {n} renders")
    for k, v in counts.items():
        print(f"  {k}: {v}")
    if args.verbose:
        for key, what in sorted(hf_llama_diffs.items()):
            print(f"  transformers vs llama.cpp: {key}: {what}")
    for f in failures:
        print("FAIL " + f, file=sys.stderr)
    return 1 if failures else 0


# Why transformers and llama.cpp differ, by template family (the causes are read off the
# renders and llama.cpp's common/chat.cpp; `categorize` applies them to a run's differences).
def category(key):
    t, c = key.split("|")
    tool = c in ("tool-call", "parallel-tool-calls")
    if t.startswith("NousResearch") or t.startswith("CohereForAI-c4ai-command-r-plus"):
        if tool:
            return "minja-undefined"
        if not (c == "typed-content" and t.startswith("CohereForAI")):
            return "tools-undefined"
    if t.startswith(("google-gemma", "ggml-vocab-phi-3")) and not tool and c != "typed-content":
        return "system-polyfill"
    if t.startswith("google-gemma"):
        return "system-polyfill"
    if t.startswith("fireworks"):
        return "handler-context"
    if c == "typed-content":
        return "typed-content-flattened"
    if t.startswith(("meta-llama", "ibm-granite", "deepseek-ai")):
        return "handler-context"
    if t.startswith(("Qwen", "unsloth")):
        return "tool-call-null-content"
    if t.startswith("meetkai"):
        return "tool-call-arguments-string"
    if t.startswith("llama-cpp-deepseek"):
        return "minja-map-list"
    return "generic-tools-prompt"


def cmd_categorize(args):
    with open(args.transformers, encoding="utf-8") as f:
        hf = json.load(f)["results"]
    with open(args.llama, encoding="utf-8") as f:
        llama = json.load(f)["results"]
    with open(args.differences, encoding="utf-8") as f:
        doc = json.load(f)
    doc["differences"] = [
        {"case": k, "category": category(k)} for k in sorted(hf) if not same(hf[k], llama[k])
    ]
    unknown = {d["category"] for d in doc["differences"]} - set(doc["categories"])
    if unknown:
        sys.exit(f"categories without a description: {sorted(unknown)}")
    with open(args.differences, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")


def cmd_record(args):
    import hashlib
    import importlib.metadata as m

    with open(args.cases, encoding="utf-8") as f:
        cases = json.load(f)
    with open(args.transformers, encoding="utf-8") as f:
        results = json.load(f)["results"]
    recorded = {}
    for key, r in sorted(results.items()):
        if "ok" in r:
            recorded[key] = {"sha256": hashlib.sha256(r["ok"].encode("utf-8")).hexdigest()}
        else:
            kind, _, message = r["error"].partition(": ")
            recorded[key] = {"error": kind, **({"message": message} if kind == "raised" else {})}
    doc = {
        "transformers": m.version("transformers"),
        "jinja2": m.version("jinja2"),
        "now": cases["now"],
        "templates": [{"id": t["id"], "source": t["source"], "special": t["special"]} for t in cases["templates"]],
        "conversations": cases["conversations"],
        "results": recorded,
    }
    with open(args.o, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=0)
        f.write("\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cases")
    c.add_argument("dir")
    c.add_argument("gguf", nargs="*")
    c.add_argument("--conversations", required=True)
    c.add_argument("--now", help="the time strftime_now reports (ISO 8601); default: now")
    c.add_argument("-o", required=True)
    t = sub.add_parser("transformers")
    t.add_argument("cases")
    t.add_argument("-o", required=True)
    t.add_argument("--cli-expected", help="also check this file as the cli-expected command does")
    t.add_argument("--syntax", help="also check the parse verdicts this file records")
    t.add_argument("--syntax-llama", help="llama.cpp's results on the syntax cases")
    y = sub.add_parser("syntax-cases")
    y.add_argument("file")
    y.add_argument("-o", required=True)
    m = sub.add_parser("compare")
    for a in ("cases", "ours", "transformers", "llama"):
        m.add_argument(a)
    m.add_argument("--differences", required=True)
    m.add_argument("-v", "--verbose", action="store_true")
    x = sub.add_parser("cli-expected")
    x.add_argument("file")
    x.add_argument("--write", action="store_true")
    r = sub.add_parser("record")
    r.add_argument("cases")
    r.add_argument("transformers")
    r.add_argument("-o", required=True)
    k = sub.add_parser("categorize")
    k.add_argument("transformers")
    k.add_argument("llama")
    k.add_argument("--differences", required=True)
    args = p.parse_args()
    cmds = {"cases": cmd_cases, "transformers": cmd_transformers, "compare": cmd_compare, "cli-expected": cmd_cli_expected, "syntax-cases": cmd_syntax_cases, "categorize": cmd_categorize, "record": cmd_record}
    return cmds[args.cmd](args) or 0


if __name__ == "__main__":
    sys.exit(main())
