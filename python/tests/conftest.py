"""Shared inputs of the Python tests: the real corpus, SmolLM2 and the conformance cases."""

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = sorted((REPO / "tests" / "corpus").glob("*.gguf"))
CASES = REPO / "tests" / "conformance" / "cases"
VERDICTS = json.loads((REPO / "tests" / "conformance" / "verdicts.json").read_text())["cases"]

# gguf-py accepts a string that runs past the end of the file (it slices its map short); the
# crate rejects it as truncated (tests/conformance/README.md, "Deliberate differences").
GGUF_PY_ACCEPTS_BY_ACCIDENT = {"string-length-past-eof"}

ACCEPTED = [c["file"] for c in VERDICTS if c["gguf_py"]["ok"] and c["name"] not in GGUF_PY_ACCEPTS_BY_ACCIDENT]
REJECTED = [c["file"] for c in VERDICTS if not c["gguf_py"]["ok"]]


def smollm2():
    """SmolLM2's path from GGUF_SMOLLM2 (scripts/test.sh always sets it)."""
    path = os.environ.get("GGUF_SMOLLM2")
    if not path:
        pytest.skip("SKIPPED: GGUF_SMOLLM2 is not set (scripts/fetch-models.sh prints the path)")
    return Path(path)


GGUF_BIN = Path(os.environ.get("GGUF_BIN", REPO / "target" / "release" / "gguf"))


def gguf_bin():
    """The `gguf` CLI: GGUF_BIN, else target/release/gguf (scripts/test-python.sh builds it)."""
    if not GGUF_BIN.exists():
        pytest.skip(f"SKIPPED: no gguf CLI at {GGUF_BIN} (cargo build --release, or set GGUF_BIN)")
    return GGUF_BIN


@pytest.fixture(params=[p.name for p in CORPUS] + ["SmolLM2"] + [f"conformance/{f}" for f in ACCEPTED])
def accepted_file(request):
    """Every file gguf-py's GGUFReader opens: the corpus, SmolLM2, the accepted cases."""
    name = request.param
    if name == "SmolLM2":
        return smollm2()
    if name.startswith("conformance/"):
        return CASES / name.split("/", 1)[1]
    return REPO / "tests" / "corpus" / name
