"""Records transformers' renders of every reference template x conversation for
test_templates.py, as scripts/check-templates.sh renders them (scripts/template_reference.py:
the templates of llama.cpp's models/templates/, of tests/corpus/*.gguf and of SmolLM2, times
tests/templates/conversations.json), with a fixed `now`. A render is kept as the SHA-256 of
its text; an error as its message.

Usage (in a venv with gguf==0.19.0, transformers==5.24.0 and jinja2==3.1.6, as
scripts/check-templates.sh installs them into .venv):
    .venv/bin/python python/tests/record_transformers.py LLAMA_SRC SMOLLM2.gguf
"""

import glob
import hashlib
import importlib.metadata as md
import json
import os
import subprocess
import sys
import tempfile

NOW = "2026-01-15T10:30:00"


def main(llama_src, smollm2):
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    ref = os.path.join(repo, "scripts", "template_reference.py")
    with tempfile.TemporaryDirectory() as tmp:
        cases, out = os.path.join(tmp, "cases.json"), os.path.join(tmp, "transformers.json")
        corpus = sorted(glob.glob(os.path.join(repo, "tests", "corpus", "*.gguf")))
        subprocess.run(
            [sys.executable, ref, "cases", os.path.join(llama_src, "models", "templates"), *corpus, smollm2,
             "--conversations", os.path.join(repo, "tests", "templates", "conversations.json"), "-o", cases],
            check=True,
        )
        doc = json.load(open(cases, encoding="utf-8"))
        doc["now"] = NOW
        json.dump(doc, open(cases, "w", encoding="utf-8"), ensure_ascii=False)
        subprocess.run([sys.executable, ref, "transformers", cases, "-o", out], check=True, stderr=subprocess.DEVNULL)
        results = json.load(open(out, encoding="utf-8"))["results"]
    record = {
        "_comment": "transformers' renders (SHA-256 of the text) or errors of every template x conversation of "
        "scripts/check-templates.sh; written by python/tests/record_transformers.py",
        "transformers": md.version("transformers"),
        "jinja2": md.version("jinja2"),
        "now": NOW,
        "results": {
            k: {"ok": hashlib.sha256(v["ok"].encode("utf-8")).hexdigest()} if "ok" in v else v
            for k, v in sorted(results.items())
        },
    }
    path = os.path.join(os.path.dirname(__file__), "data", "transformers-renders.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(record, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{path}: {len(results)} renders")


if __name__ == "__main__":
    main(*sys.argv[1:])
