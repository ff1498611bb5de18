"""gguf_grammar.fit against the sizes llama.cpp 0.3.16 itself reported, as recorded by
scripts/check-fit.sh in crates/gguf-fit/RESULTS.md (its 0.3.16 section) (its probe, scripts/llama/fit_probe.cpp,
loads the model on the CPU and reports the buffers llama.cpp allocates): every row whose
model is at hand here (SmolLM2, SmolLM2 split by llama-gguf-split as check-fit.sh splits it,
the corpus; the rows of the tiny models the Rust test writes and of `gguf fixtures
--all-archs` are left to it). Weights, KV cache, output buffer and n_ctx must equal
llama.cpp's; the compute buffer too where RESULTS.md records it byte-equal (the graphs fit
replays through ggml-alloc), else within COMPUTE_BOUND, the Rust test's bound."""

import re
import subprocess

import pytest

import gguf_grammar
from conftest import REPO, smollm2
from test_tokenizer import llama_tokenize

COMPUTE_BOUND = 0.10
# RESULTS.md has a section per release: gguf_grammar.fit follows 0.3.16's (the package's
# release, gguf-llama's Release::NEWEST here).
SECTION = (REPO / "crates" / "gguf-fit" / "RESULTS.md").read_text().split("\n## ")
RELEASE_0316 = next(s for s in SECTION if s.startswith("llama.cpp vendored in llama-cpp-python 0.3.16"))
ROWS = [
    [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
    for line in RELEASE_0316.splitlines()
    if line.startswith("| ") and not line.startswith("| model") and not line.startswith("|---")
]
TYPES = {"k": "cache_type_k", "v": "cache_type_v"}


def settings(params):
    """fit's keywords from a RESULTS.md params cell ("ctx 2048, k q8_0 v q8_0, fa"; "defaults":
    the release's, which are fit's own)."""
    kw = {}
    if params == "defaults":
        return kw
    for part in params.split(", "):
        words = part.split()
        flags = {"fa": "flash_attn", "swa-full": "swa_full", "kvu": "kv_unified", "embd": "embeddings"}
        if words[0] == "ctx":
            kw["ctx_size"] = int(words[1])
        elif words[0] == "b":
            kw["batch_size"], kw["ubatch_size"] = int(words[1]), int(words[3])
        elif words[0] == "np":
            kw["parallel"] = int(words[1])
        elif words[0] == "k":
            kw["cache_type_k"], kw["cache_type_v"] = words[1], words[3]
        elif part == "no-mmap":
            kw["mmap"] = False
        else:
            kw[flags[part]] = True
    return kw


def llama(cell):
    """llama.cpp's side of a cell ("A" when both agree, else "ours vs llama.cpp")."""
    return cell.replace("*", "").split(" vs ")[-1]


def buffers(cell):
    return [(name, int(n)) for name, n in (b.split("=") for b in llama(cell).split())]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    smol = smollm2()
    split = tmp_path_factory.mktemp("split") / "SmolLM2-split"
    tools = llama_tokenize().parent
    subprocess.run([tools / "llama-gguf-split", "--split", "--split-max-tensors", "120", smol, split],
                   check=True, capture_output=True)
    found = {smol.name: smol, "SmolLM2-split-00001-of-00003.gguf": split.parent / "SmolLM2-split-00001-of-00003.gguf"}
    for path in (REPO / "tests" / "corpus").glob("*.gguf"):
        found[path.name] = path
    return found


def test_fit_equals_llama_cpp(models):
    rows = [r for r in ROWS if r[0] in models]
    assert len(rows) == 34, "RESULTS.md: 11 settings x (SmolLM2, its split), 12 corpus files"
    compared = refused = estimated = 0
    worst = 0.0
    for row in rows:
        name, params = row[0], row[1]
        if len(row) == 3:  # "no model — llama.cpp: ...; ours: ..."
            assert row[2].startswith("no model"), row
            with pytest.raises(ValueError, match="no tensors"):
                gguf_grammar.fit(models[name], **settings(params))
            refused += 1
            continue
        weights, kv, _, output, n_ctx, compute = row[2:8]
        got = gguf_grammar.fit(models[name], **settings(params))
        where = f"{name} {params}"
        # in any order, as crates/gguf-fit/tests/llama.rs compares them (RESULTS.md lists them sorted)
        assert sorted((b["name"], b["bytes"]) for b in got["weights"]) == sorted(buffers(weights)), where
        assert [(f"{c['kind']}:{b['name']}", b["bytes"]) for c in got["caches"] for b in c["buffers"]] == buffers(kv), where
        assert [(got["output"]["name"], got["output"]["bytes"])] == buffers(output), where
        assert got["n_ctx"] == int(llama(n_ctx)), where
        ours = sum(b["bytes"] for b in got["compute"])
        exact = re.fullmatch(r"[\d.]+ MiB, byte-equal \((\d+) bytes\)", compute)
        if exact:
            assert ours == int(exact.group(1)), where
        else:
            theirs = float(re.fullmatch(r"[\d.]+ vs ([\d.]+) MiB \([-+][\d.]+%\)", compute).group(1)) * 2**20
            worst = max(worst, abs(ours - theirs) / theirs)
            assert abs(ours - theirs) <= COMPUTE_BOUND * theirs, where
            estimated += 1
        compared += 1
    print(f"\nfit vs llama.cpp: {compared} cases equal (weights, KV, output, n_ctx), compute byte-equal in "
          f"{compared - estimated}, within {100 * worst:.1f}% in {estimated} (bound {100 * COMPUTE_BOUND:.0f}%); "
          f"{refused} vocabulary-only files refused as llama.cpp refuses them")


def test_fit_arguments():
    with pytest.raises(ValueError, match="cache_type_k \"q2_k\""):
        gguf_grammar.fit(smollm2(), cache_type_k="q2_k")
    with pytest.raises(OSError):
        gguf_grammar.fit(REPO / "no-such.gguf")
