"""Agreement of `gguf check --profile llama.cpp` with llama.cpp's loader.

Reads the loader's JSON lines (scripts/llama/loader.cpp) and the JSON array of
`gguf check --profile llama.cpp --json` over the same files. llama.cpp accepts a file when the
loader's verdict is "ok" (it loads, tokenizes and decodes); we accept it when gguf check does.
Prints the agreement and every difference with both sides' reasons; exits 1 below the
threshold (default 0.99).

Usage: python3 scripts/llama_agreement.py LOADER.jsonl CHECK.json [THRESHOLD]
"""

import json
import sys


def main(argv):
    loader = {}
    for line in open(argv[0], encoding="utf-8"):
        if line.strip():
            e = json.loads(line)
            loader[e["file"]] = e
    ours = {d["file"]: d for d in json.load(open(argv[1], encoding="utf-8"))}
    threshold = float(argv[2]) if len(argv) > 2 else 0.99
    agree, differ = 0, []
    for name, e in sorted(loader.items()):
        d = ours.get(name)
        if d is None:
            differ.append(f"{name}: not checked by gguf")
            continue
        theirs = e["verdict"] == "ok"
        if d["accepted"] == theirs:
            agree += 1
            continue
        errors = [f"{x['code']}: {x['message']}" for x in d.get("diagnostics", [])
                  if x["level"] == "error"] or [d.get("error") or "no error"]
        differ.append(f"{name}: llama.cpp {e['verdict']} ({e['error']}), "
                      f"gguf check {'accepts' if d['accepted'] else 'rejects'} ({errors[0]})")
    total = len(loader)
    share = agree / total if total else 0.0
    print(f"llama.cpp agreement: {agree} of {total} files ({100 * share:.1f}%), "
          f"{len(differ)} differences")
    for line in differ:
        print(f"  differs: {line}")
    return 0 if share >= threshold else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
