"""Agreement of `gguf check --profile llama.cpp` (or `llama.cpp-0.3.16`) with one llama.cpp
release's loader.

Reads the loader's JSON lines (scripts/llama/loader.cpp) and the JSON array of
`gguf check --profile PROFILE --json` over the same files. llama.cpp accepts a file when the
loader's verdict is "ok" (it loads, tokenizes and decodes); we accept it when gguf check does.
Prints the agreement and every difference with both sides' reasons; exits 1 below the
threshold (default 0.99). With --reviewed FILE and --release R, every difference must be listed
in FILE as `R CASE differs: REASON` (CASE: the NAME of a NAME=PATH argument), and every listed
one must still differ; likewise every fixture (a case under fixtures/) that llama.cpp does not
load, tokenize and decode must be listed as `R CASE not-run: REASON`, and every listed one must
still fail.

Usage: python3 scripts/llama_agreement.py LOADER.jsonl CHECK.json [THRESHOLD]
           [--reviewed FILE --release R] [NAME=PATH...]
"""

import json
import sys


def reviewed_entries(path, release):
    """{(case, kind): reason} of RELEASE's lines in the reviewed file."""
    entries = {}
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        head, _, reason = line.partition(": ")
        rel, case, kind = head.split()
        if rel == release:
            entries[(case, kind)] = reason
    return entries


def main(argv):
    args = list(argv)
    reviewed, release = None, None
    if "--reviewed" in args:
        at = args.index("--reviewed")
        reviewed = args[at + 1]
        del args[at:at + 2]
    if "--release" in args:
        at = args.index("--release")
        release = args[at + 1]
        del args[at:at + 2]
    pairs = [a for a in args[2:] if "=" in a]
    rest = [a for a in args[2:] if "=" not in a]
    name_of = {}
    for pair in pairs:
        name, _, path = pair.partition("=")
        name_of[path] = name
    loader = {}
    for line in open(args[0], encoding="utf-8"):
        if line.strip():
            e = json.loads(line)
            loader[e["file"]] = e
    ours = {d["file"]: d for d in json.load(open(args[1], encoding="utf-8"))}
    threshold = float(rest[0]) if rest else 0.99
    agree, differ, differing, not_run = 0, [], set(), set()
    for path, e in sorted(loader.items()):
        name = name_of.get(path, path)
        if name.startswith("fixtures/") and name != "fixtures/truncated-metadata.gguf":
            if e["verdict"] != "ok" or e["roundtrip"] is not True:
                not_run.add(name)
        d = ours.get(path)
        if d is None:
            differ.append(f"{name}: not checked by gguf")
            differing.add(name)
            continue
        theirs = e["verdict"] == "ok"
        if d["accepted"] == theirs:
            agree += 1
            continue
        errors = [f"{x['code']}: {x['message']}" for x in d.get("diagnostics", [])
                  if x["level"] == "error"] or [d.get("error") or "no error"]
        differ.append(f"{name}: llama.cpp {e['verdict']} ({e['error']}), "
                      f"gguf check {'accepts' if d['accepted'] else 'rejects'} ({errors[0]})")
        differing.add(name)
    total = len(loader)
    share = agree / total if total else 0.0
    label = f"llama.cpp {release}" if release else "llama.cpp"
    print(f"{label} agreement: {agree} of {total} files ({100 * share:.1f}%), "
          f"{len(differ)} differences")
    for line in differ:
        print(f"  differs: {line}")
    failed = share < threshold
    if reviewed:
        listed = reviewed_entries(reviewed, release)
        for kind, found in (("differs", differing), ("not-run", not_run)):
            expected = {case for (case, k) in listed if k == kind}
            for case in sorted(found - expected):
                print(f"{label}: {case} {kind}, not listed in {reviewed}", file=sys.stderr)
                failed = True
            for case in sorted(expected - found):
                print(f"{label}: {case} is listed in {reviewed} as {kind} but no longer is",
                      file=sys.stderr)
                failed = True
        for (case, kind), reason in sorted(listed.items()):
            print(f"  {kind} (reviewed): {case}: {reason}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
