"""python/examples/scan_dask.py on a LocalCluster over the corpus and the conformance cases:
one row per file, each equal to what `gguf check --json` and `gguf dump --json` say."""

import json
import subprocess
import sys

from conftest import CASES, CORPUS, REPO, gguf_bin

import gguf_grammar

EXAMPLE = REPO / "python" / "examples" / "scan_dask.py"


def expected_row(path):
    check = json.loads(subprocess.run([gguf_bin(), "check", "--json", path], capture_output=True, text=True).stdout)[0]
    errors = [d for d in check["diagnostics"] if d["level"] == "error"]
    dump = subprocess.run([gguf_bin(), "dump", "--json", path], capture_output=True, text=True)
    if dump.returncode != 0:
        (e,) = errors
        return [str(path), "", "", "", f"unreadable: {e['code']} at offset {e['span'][0]}"]
    doc = json.loads(dump.stdout)
    arch = next((kv["value"] for kv in doc["metadata"] if kv["key"] == "general.architecture"), None)
    params = 0
    for t in doc["tensors"]:
        n = 1
        for d in t["dims"]:
            n *= d
        params += n
    verdict = "accepted" if check["accepted"] else "rejected: " + ", ".join(dict.fromkeys(d["code"] for d in errors))
    return [str(path), arch or "", str(params), str(len(doc["tensors"])), verdict]


def test_scan_of_corpus_and_conformance_cases(tmp_path):
    # A copy of the tree with one hostile name: a tab, a newline and a terminal escape.
    root = tmp_path / "models"
    (root / "cases").mkdir(parents=True)
    for p in CORPUS:
        (root / p.name).symlink_to(p)
    for p in CASES.glob("*.gguf"):
        (root / "cases" / p.name).symlink_to(p)
    hostile = root / "evil\t\n\x1b[31mname.gguf"
    hostile.symlink_to(CORPUS[0])

    run = subprocess.run([sys.executable, EXAMPLE, root, "--workers", "2"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].split("\t") == ["path", "architecture", "parameters", "tensors", "verdict"]
    rows = [line.split("\t") for line in lines[1:]]
    files = sorted(str(p) for p in root.rglob("*.gguf"))
    assert len(rows) == len(files) == len(CORPUS) + len(list(CASES.glob("*.gguf"))) + 1
    for row, path in zip(rows, files):
        want = expected_row(path)
        want[:2] = map(gguf_grammar.escape, want[:2])
        assert row == want, path
    assert gguf_grammar.escape(str(hostile)) in run.stdout and "\x1b" not in run.stdout


def test_usage_errors_exit_2_before_starting_a_cluster(tmp_path):
    for args in ([tmp_path / "missing"], [tmp_path, "--profile", "nonsense"]):
        run = subprocess.run([sys.executable, EXAMPLE, *args], capture_output=True, text=True, timeout=60)
        assert run.returncode == 2 and run.stdout == "", run.stderr
