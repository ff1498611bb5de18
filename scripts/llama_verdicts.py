"""Compare (or record) llama.cpp's verdicts on model files with tests/llama/verdicts.json.

Reads the JSON lines of scripts/llama/loader.cpp (one per file) on stdin, each line's "file"
replaced by its case name (NAME=PATH on the command line), and either checks them against the
recorded verdicts (verdict, stage, error, roundtrip, prompt and generated tokens, and for an
encoder-only model the number of embedding values, recorded only when there is one: any
difference fails, as does a recorded case that was not run) or, with --update, rewrites the
record.

Usage: python3 scripts/llama_verdicts.py [--update] [--release 0.3.16|0.3.36] RECORD NAME=PATH... < loader-output
"""

import json
import sys

REFERENCE = (
    "llama.cpp vendored in llama-cpp-python {release} (scripts/build-llama-tools.sh), "
    "as scripts/llama/loader.cpp runs it: llama_model_load_from_file with default model "
    "parameters on the CPU, then llama_tokenize and a 4-token greedy decode (an encoder-only "
    "model: its embeddings, with embeddings on and its pooling), each file in a child process"
)
PROMPT = "Hello world, the model said: 42!\n"
COMPARED = ["verdict", "stage", "error", "roundtrip", "prompt", "generated"]
# Compared too, but recorded only when not null (an encoder-only model's embedding count).
OPTIONAL = ["embd"]


def main(argv):
    update = "--update" in argv
    args = [a for a in argv if a != "--update"]
    release = "0.3.16"
    if "--release" in args:
        at = args.index("--release")
        release = args[at + 1]
        del args[at:at + 2]
    record_path, pairs = args[0], args[1:]
    name_of = {}
    for pair in pairs:
        name, _, path = pair.partition("=")
        name_of[path] = name
    got = {}
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        entry = json.loads(line)
        name = name_of.get(entry["file"], entry["file"])
        entry["file"] = name
        got[name] = entry
    if update:
        cases = [{k: got[n][k] for k in ["file", "arch", "n_vocab"] + COMPARED} for n in sorted(got)]
        for case in cases:
            case.update({k: got[case["file"]][k] for k in OPTIONAL
                         if got[case["file"]].get(k) is not None})
        with open(record_path, "w", encoding="utf-8") as f:
            json.dump({"reference": REFERENCE.format(release=release), "prompt": PROMPT, "cases": cases}, f, indent=1,
                      ensure_ascii=False)
            f.write("\n")
        print(f"llama verdicts: recorded {len(cases)} files in {record_path}")
        return 0
    with open(record_path, encoding="utf-8") as f:
        record = json.load(f)
    differences = 0
    seen = set()
    for case in record["cases"]:
        name = case["file"]
        if name not in got:
            # A file the run could not provide (SmolLM2 without its download) is said, not hidden.
            print(f"llama verdicts: {name}: not run")
            continue
        seen.add(name)
        for key in COMPARED + OPTIONAL:
            if case.get(key) != got[name].get(key):
                differences += 1
                print(f"llama verdicts: {name}: {key} was {json.dumps(case[key])}, "
                      f"now {json.dumps(got[name][key])}")
    for name in sorted(set(got) - seen):
        differences += 1
        print(f"llama verdicts: {name}: not in {record_path} (run with --update)")
    ok = sum(1 for n in seen if got[n]["verdict"] == "ok")
    print(f"llama verdicts: {len(seen)} files ({ok} load, tokenize and run), "
          f"{differences} differences from {record_path}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
