"""gguf_grammar.Tokenizer against llama.cpp's own vectors: every line of every
models/ggml-vocab-*.gguf.inp of the cached llama.cpp 0.3.16 source tokenizes (nothing added,
nothing parsed, as test-tokenizer-0 calls it) to exactly the ids of the .out line."""

import functools
import os
import re
import subprocess
from pathlib import Path

import pytest

import gguf_grammar
from conftest import REPO


def llama_src():
    """$GGUF_LLAMA_SRC, else the cache scripts/build-llama-tools.sh fills."""
    src = Path(os.environ.get("GGUF_LLAMA_SRC", Path.home() / ".cache/gguf-grammar/llama.cpp-0.3.16/src"))
    if not (src / "models").is_dir():
        if os.environ.get("GGUF_REQUIRE_LLAMA") == "1":
            pytest.fail(f"llama.cpp source not found at {src} (GGUF_REQUIRE_LLAMA=1)")
        pytest.skip(f"SKIPPED: llama.cpp source not found at {src}; run scripts/build-llama-tools.sh")
    return src


@functools.lru_cache(maxsize=None)
def tokenizer(path: Path) -> gguf_grammar.Tokenizer:
    """One tokenizer per vocabulary for the whole module (building one takes a while), as
    llama.cpp 0.3.16 (the release of the vectors and binaries compared) tokenizes."""
    return gguf_grammar.Tokenizer(path, release="0.3.16")


SEP = b"\n__ggml_vocab_test__\n"


def vectors(inp: Path, out: Path):
    """(text, ids) pairs, split as test-tokenizer-0's read_tests splits them."""
    raw = inp.read_bytes()
    texts, pos = [], 0
    while pos < len(raw):
        n = raw.find(SEP, pos)
        if n < 0:
            texts.append(raw[pos:])
            break
        texts.append(raw[pos:n])
        pos = n + len(SEP)
    ids = [[int(t) for t in line.split()] for line in out.read_text().splitlines()]
    assert len(texts) == len(ids), inp
    return list(zip(texts, ids))


def test_every_inp_line_gives_the_out_ids():
    models = llama_src() / "models"
    pairs = sorted(p for p in models.glob("ggml-vocab-*.gguf") if p.with_suffix(".gguf.inp").exists())
    assert len(pairs) == 13, "llama.cpp 0.3.16 ships 13 .inp/.out pairs"
    counts, failures = [], []
    for path in pairs:
        tok = tokenizer(path)
        cases = vectors(path.with_suffix(".gguf.inp"), path.with_suffix(".gguf.out"))
        bad = 0
        for text, want in cases:
            got = tok.encode(text, add_special=False, parse_special=False)
            if got != want:
                bad += 1
                failures.append(f"{path.name}: {text!r}\n  want {want}\n  got  {got}")
            # str in, the same ids as its UTF-8 bytes (every .inp text but one is UTF-8).
            try:
                as_str = text.decode("utf-8")
            except UnicodeDecodeError:
                continue
            assert tok.encode(as_str, add_special=False) == got
        counts.append(f"{path.name[len('ggml-vocab-'):-len('.gguf')]:16} {len(cases):3} cases, {bad} differ")
    print("\n" + "\n".join(counts))
    assert not failures, "\n".join(failures)


def test_corpus_vocabularies_are_the_llama_cpp_ones():
    """tests/corpus holds copies of models/ vocabularies: the pytest above covers them."""
    models = llama_src() / "models"
    for path in sorted((REPO / "tests" / "corpus").glob("ggml-vocab-*.gguf")):
        assert path.read_bytes() == (models / path.name).read_bytes(), path.name


def llama_tokenize():
    """llama.cpp's llama-tokenize: $GGUF_LLAMA_TOOLS (scripts/test.sh exports it)."""
    tools = os.environ.get("GGUF_LLAMA_TOOLS")
    if not tools:
        if os.environ.get("GGUF_REQUIRE_LLAMA") == "1":
            pytest.fail("GGUF_LLAMA_TOOLS unset (GGUF_REQUIRE_LLAMA=1)")
        pytest.skip("SKIPPED: GGUF_LLAMA_TOOLS unset (scripts/build-llama-tools.sh prints it)")
    return Path(tools) / "llama-tokenize"


PIECE = re.compile(rb"^ *(\d+) -> '", re.M)


def test_ids_and_pieces_equal_llama_tokenize():
    """Each vocabulary's whole .inp file through llama-tokenize (its defaults: BOS as the
    vocabulary says, special tokens parsed): the same ids, and token_to_piece equal to the
    piece it prints (common_token_to_piece, special=true) for every one."""
    binary = llama_tokenize()
    models = llama_src() / "models"
    compared = 0
    for path in sorted(models.glob("ggml-vocab-*.gguf")):
        inp = path.with_suffix(".gguf.inp")
        if not inp.exists():
            continue
        out = subprocess.run(
            [binary, "-m", path, "-f", inp, "--no-escape", "--log-disable"], capture_output=True, check=True
        ).stdout
        starts = list(PIECE.finditer(out))
        want_ids = [int(m.group(1)) for m in starts]
        # a piece runs from its "-> '" to the "'\n" before the next line's id
        ends = [m.start() for m in starts[1:]] + [len(out)]
        want_pieces = [out[m.end() : end - 2] for m, end in zip(starts, ends)]
        assert all(out[end - 2 : end] == b"'\n" for end in ends), path.name
        tok = tokenizer(path)
        ids = tok.encode(inp.read_bytes(), add_special=tok.add_bos, parse_special=True)
        assert ids == want_ids, path.name
        # llama-tokenize prints the piece as a C string: it ends at a NUL byte
        got = [tok.token_to_piece(i).split(b"\0")[0] for i in ids]
        assert got == want_pieces, path.name
        compared += len(ids)
    assert compared > 10000


def spm():
    return gguf_grammar.Tokenizer(REPO / "tests" / "corpus" / "ggml-vocab-llama-spm.gguf")


def test_defaults_are_llama_tokenize_s():
    """encode's defaults are llama_tokenize(add_special=true, parse_special=false)'s: the SPM
    vocabulary adds BOS (1) and reads "<s>" as text; parse_special reads it as the token."""
    tok = spm()
    assert (tok.model, tok.bos_id, tok.eos_id, tok.add_bos, len(tok)) == ("llama", 1, 2, True, 32000)
    text = "<s>Hello world"
    plain = tok.encode(text)
    assert plain[0] == 1 and plain.count(1) == 1
    assert tok.encode(text, parse_special=True) == [1, 1] + tok.encode("Hello world", add_special=False)
    assert tok.encode("") == [1]
    assert tok.encode("", add_special=False) == []


def test_decode_and_pieces():
    tok = spm()
    ids = tok.encode("Hello world, ünïcödé 🦙")
    # As llama_detokenize (llama-vocab.cpp) does: the space prefix is removed from the first
    # piece only when no BOS was removed before it; unparse_special=False drops the "<s>".
    assert tok.decode(ids) == "<s> Hello world, ünïcödé 🦙"
    assert tok.decode(ids, remove_special=True) == " Hello world, ünïcödé 🦙"
    assert tok.decode(ids[1:]) == "Hello world, ünïcödé 🦙"
    assert tok.decode(ids, unparse_special=False) == " Hello world, ünïcödé 🦙"
    assert tok.decode_bytes(ids[1:]) == "Hello world, ünïcödé 🦙".encode()
    assert tok.token_to_piece(1) == b"<s>"
    assert tok.token_to_piece(1, special=False) == b""
    # a byte-fallback token: one byte, not UTF-8 on its own
    byte = tok.token_to_id("<0xF0>")
    assert byte is not None and tok.token_to_piece(byte) == b"\xf0"
    assert tok.decode([byte]) == "\ufffd"
    assert tok.token_to_piece(tok.token_to_id("▁Hello")) == b" Hello"


def test_errors():
    tok = spm()
    with pytest.raises(ValueError, match="token id 32000 out of range"):
        tok.decode([5, 32000])
    with pytest.raises(ValueError, match="out of range"):
        tok.token_to_piece(1 << 31)
    with pytest.raises(OverflowError):
        tok.decode([-1])
    # a file without a vocabulary
    with pytest.raises(ValueError, match="tokenizer"):
        gguf_grammar.Tokenizer(REPO / "tests" / "conformance" / "cases" / "basic-v3-le.gguf")
    with pytest.raises(OSError):
        gguf_grammar.Tokenizer(REPO / "no-such-file.gguf")


def test_from_document():
    doc = gguf_grammar.open(REPO / "tests" / "corpus" / "ggml-vocab-gpt-2.gguf")
    tok = doc.tokenizer()
    assert (tok.model, tok.add_bos) == ("gpt2", False)
    assert tok.encode("Hello world") == [15496, 995]
