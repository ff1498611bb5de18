"""Document.check(profile="llama.cpp") against llama.cpp's own load verdicts
(tests/llama/verdicts-0.3.36.json, recorded by scripts/check-llama-loader.sh from the loader of
llama.cpp 0.3.36, the newest release we hold) and against `gguf check --profile llama.cpp --json` on the same files: every file
of that record, written again here as check-llama-loader.sh writes them (`gguf fixtures`,
`--all-archs`, `gguf mutate --all`, the llama4 variant, the kept inputs, the corpus, SmolLM2)."""

import json
import re
import subprocess

import pytest

import gguf_grammar
from conftest import REPO, gguf_bin, smollm2

RECORD = json.loads((REPO / "tests" / "llama" / "verdicts-0.3.36.json").read_text())
MODEL_RULES = re.compile(
    r"\.(block-count-0|tensor-missing|tensor-shape|key-missing|key-type|heads-not-dividing|"
    r"kv-heads-not-dividing|architecture-unknown|byte-tokens-missing|special-token-past-vocab|"
    r"tokenizer-pre-unknown)\.gguf$"
)


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """{recorded name: path}, as scripts/check-llama-loader.sh names and writes them."""
    gguf, work = gguf_bin(), tmp_path_factory.mktemp("llama")

    def run(*args):
        subprocess.run([gguf, *map(str, args)], check=True, capture_output=True)

    run("fixtures", work / "fixtures")
    run("fixtures", "--all-archs", work / "archs")
    found = {}
    for f in sorted((work / "fixtures").glob("*.gguf")) + sorted((work / "archs").glob("*.gguf")):
        found[f"fixtures/{f.name}"] = f
    for pattern in ["tests/llama/*.gguf", "tests/corpus/*.gguf"]:
        for f in sorted(REPO.glob(pattern)):
            found[str(f.relative_to(REPO))] = f
    case = REPO / "tests" / "conformance" / "cases" / "llama-8-tokens.gguf"
    found["tests/conformance/cases/llama-8-tokens.gguf"] = case
    smol = smollm2()
    found[smol.name] = smol
    for name in ["minimal-llama", "llama3-tiny"]:
        subprocess.run([gguf, "mutate", work / "fixtures" / f"{name}.gguf", "--all", work / "m" / name], capture_output=True)
        for m in sorted((work / "m" / name).glob("*.gguf")):
            found[f"mutations/{m.name}"] = m
    for f in sorted((work / "archs").glob("*.gguf")):
        out = work / "m" / f.stem
        subprocess.run([gguf, "mutate", f, "--all", out], capture_output=True)
        for m in sorted(out.glob("*.gguf")):
            if MODEL_RULES.search(m.name):
                found[f"mutations/{m.name}"] = m
    variant = work / "variants" / "llama4-moe-step-2.gguf"
    variant.parent.mkdir()
    run("edit", work / "archs" / "tiny-llama4.gguf", "--set", "llama4.interleave_moe_layer_step=2", "-o", variant)
    found["variants/llama4-moe-step-2.gguf"] = variant
    return found


def ours(path):
    """(accepted, diagnostics as gguf check --json's (code, severity, span, path, message,
    rejected_by)) from the Python package. A file that does not parse is rejected; its
    GGUFParseError gives (code, span start, path), which is all it has."""
    try:
        doc = gguf_grammar.open(path)
    except gguf_grammar.GGUFParseError as e:
        return False, [(e.code, e.offset, e.path)]
    found = [(d.code, d.severity, [d.offset, d.end] if d.offset is not None else None, d.path, d.message, list(d.rejected_by)) for d in doc.check("llama.cpp")]
    return doc.accepts("llama.cpp"), found


def test_record_is_the_same_file_set(cases):
    recorded = {c["file"] for c in RECORD["cases"]}
    assert recorded == set(cases), (sorted(recorded - set(cases))[:10], sorted(set(cases) - recorded)[:10])


def test_python_verdict_is_the_cli_s_and_llama_cpp_s(cases):
    names = sorted(cases)
    cli = subprocess.run(
        [gguf_bin(), "check", "--profile", "llama.cpp", "--json", *[str(cases[n]) for n in names]],
        capture_output=True,
    )
    assert cli.returncode in (0, 1), cli.stderr
    documents = json.loads(cli.stdout)
    assert len(documents) == len(names)
    llama = {c["file"]: c for c in RECORD["cases"]}
    agree, differ = 0, []
    for name, d in zip(names, documents):
        accepted, found = ours(cases[name])
        assert accepted == d["accepted"], name
        assert "error" not in d, (name, d["error"])
        cli_found = [(x["code"], x["severity"], x["span"], x["path"], x["message"], x["rejected_by"]) for x in d["diagnostics"]]
        if found and len(found[0]) == 3:  # a parse failure
            cli_found = [(x[0], x[2][0], x[3]) for x in cli_found]
        assert found == cli_found, name
        if accepted == (llama[name]["verdict"] == "ok"):
            agree += 1
        else:
            differ.append(f"{name}: llama.cpp {llama[name]['verdict']}, ours {'accepts' if accepted else 'rejects'}")
    print(f"\nllama.cpp agreement of check(profile='llama.cpp'): {agree} of {len(names)} files; the CLI's verdict on all")
    for line in differ:
        print("  differs:", line)
    assert agree / len(names) >= 0.99


def test_the_minimal_fixture_before_its_fix():
    """issue 21: the block_count and vocabulary errors that make llama.cpp abort."""
    accepted, found = ours(REPO / "tests" / "llama" / "minimal-llama-before-fix.gguf")
    assert not accepted
    codes = {c for c, s, *_ in found if s == "error"}
    assert {"schema-block-count", "schema-byte-tokens"} <= codes


def test_releases_are_the_cli_s_and_each_release_s(cases):
    """Document.releases() against `gguf check --releases --json` on every file of the record,
    and each release's row against that release's own loader (tests/llama/verdicts.json for
    0.3.16, verdicts-0.3.36.json for 0.3.36) on the files with tensors: a file without tensors
    is judged as llama.cpp loads it with vocab_only, which the recorded loader runs did not."""
    names = sorted(cases)
    cli = subprocess.run([gguf_bin(), "check", "--releases", "--json", *[str(cases[n]) for n in names]], capture_output=True)
    assert cli.returncode in (0, 1), cli.stderr
    documents = json.loads(cli.stdout)
    assert len(documents) == len(names)
    records = {
        "0.3.16": {c["file"]: c for c in json.loads((REPO / "tests" / "llama" / "verdicts.json").read_text())["cases"]},
        "0.3.36": {c["file"]: c for c in RECORD["cases"]},
    }
    agree = {release: [0, 0] for release in records}
    for name, d in zip(names, documents):
        try:
            rows = gguf_grammar.open(cases[name]).releases()
        except gguf_grammar.GGUFParseError:
            assert not any(r["loads"] for r in d["releases"]), name
            continue
        assert rows == d["releases"], name
        assert [r["release"] for r in rows] == ["0.3.36", "0.3.16"], name
        for row in rows:
            if not row["vocab_only"]:
                count = agree[row["release"]]
                count[0] += row["loads"] == (records[row["release"]][name]["verdict"] == "ok")
                count[1] += 1
    for release, (same, total) in agree.items():
        print(f"\n{release}: Document.releases() agrees with the release's loader on {same} of {total} files with tensors")
        assert same / total >= 0.99, release
