"""Bad files: GGUFError (a ValueError) with the offset and path the CLI prints, for both APIs;
hostile cases neither hang nor allocate; where gguf-py is wrong, ggml is followed."""

import json
import subprocess
import sys
import textwrap

import pytest
from conftest import CASES, REJECTED, REPO, gguf_bin

import gguf_grammar
from gguf_grammar import GGMLQuantizationType, GGUFError, GGUFParseError, GGUFRejectedError


def first_error(path, profile):
    """The first error `gguf check --json --profile PROFILE` reports: code, offset, path."""
    run = subprocess.run([gguf_bin(), "check", "--json", "--profile", profile, path], capture_output=True, text=True)
    report = json.loads(run.stdout)[0]
    assert not report["accepted"]
    d = next(d for d in report["diagnostics"] if d["level"] == "error")
    return d["code"], d["span"][0] if d["span"] else None, d["path"]


def parse_errors():
    errors = set()
    for f in REJECTED:
        try:
            gguf_grammar.open(CASES / f)
        except GGUFParseError:
            errors.add(f)
    return errors


PARSE_ERRORS = parse_errors()

# gguf-py rejects type 42 only because 0.19.0 lacks it; ggml reads it.
READER_REJECTS = [f for f in REJECTED if f != "ggml-type-42.gguf"] + ["string-length-past-eof.gguf"]


@pytest.mark.parametrize("case", READER_REJECTS)
def test_reader_raises_what_gguf_check_reports(case):
    path = CASES / case
    with pytest.raises(GGUFError) as caught:
        gguf_grammar.GGUFReader(path)
    e = caught.value
    assert isinstance(e, ValueError)
    assert (e.code, e.offset, e.path) == first_error(path, "gguf-py")
    assert f"offset {e.offset:#x} ({e.offset})" in str(e)


@pytest.mark.parametrize("case", READER_REJECTS)
def test_native_api_raises_parse_errors_only(case):
    path = CASES / case
    try:
        doc = gguf_grammar.open(path)
    except GGUFParseError as e:
        cli = subprocess.run([gguf_bin(), "dump", "--json", path], capture_output=True, text=True)
        assert cli.returncode == 1
        assert cli.stderr.strip().endswith(str(e))  # "gguf: FILE: offset 0x.. (N): PATH: what"
        assert (e.code, e.offset, e.path) == first_error(path, "strict")
        with pytest.raises(GGUFParseError) as again:
            gguf_grammar.parse(path.read_bytes())
        assert (again.value.offset, again.value.path) == (e.offset, e.path)
    else:  # decodable: the judgement is check()'s
        assert not doc.accepts("gguf-py")


def test_rejection_is_a_subclass_per_kind():
    with pytest.raises(GGUFRejectedError):
        gguf_grammar.GGUFReader(CASES / "duplicate-key.gguf")
    with pytest.raises(GGUFParseError):
        gguf_grammar.GGUFReader(CASES / "bad-magic.gguf")
    assert issubclass(GGUFRejectedError, GGUFError) and issubclass(GGUFParseError, GGUFError)


def test_missing_file_is_an_os_error():
    with pytest.raises(FileNotFoundError):
        gguf_grammar.GGUFReader(REPO / "no-such-file.gguf")
    with pytest.raises(FileNotFoundError):
        gguf_grammar.open(REPO / "no-such-file.gguf")


def test_type_42_is_read_as_ggml_does():
    # gguf-py 0.19.0 raises "42 is not a valid GGMLQuantizationType"; ggml's q2_0 is
    # 64 values in an 18-byte block.
    reader = gguf_grammar.GGUFReader(CASES / "ggml-type-42.gguf")
    (t,) = reader.tensors
    assert t.tensor_type == GGMLQuantizationType.Q2_0 == 42
    assert t.n_bytes == t.n_elements // 64 * 18
    assert t.data.shape[-1] == t.shape[0] // 64 * 18


def test_hostile_cases_neither_hang_nor_allocate():
    """Every rejected case, opened by both APIs in one process: done within 60 s, and peak RSS
    grows by less than 64 MiB (gguf-py walks 2^62 elements of array-count-huge for ever)."""
    script = textwrap.dedent(
        """
        import resource, sys
        import gguf_grammar
        files = sys.argv[1:]
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for f in files * 3:
            for api in (gguf_grammar.GGUFReader, gguf_grammar.open):
                try:
                    api(f)
                except gguf_grammar.GGUFError:
                    pass
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        print(grown)
        """
    )
    files = [str(CASES / f) for f in REJECTED]
    run = subprocess.run([sys.executable, "-c", script, *files], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert int(run.stdout) < 64 * 1024, f"peak RSS grew by {run.stdout.strip()} KiB"


def test_q8_1_is_sized_as_ggml_does(tmp_path):
    # ggml's block_q8_1 is 36 bytes (f16 d, f16 s, 32 int8); gguf-py 0.19.0 says 40. A file
    # ending right after the last q8_1 block is whole for ggml and truncated for gguf-py.
    import gguf

    (t,) = gguf_grammar.GGUFReader(CASES / "tensor-q8-1.gguf").tensors
    assert t.n_bytes == t.n_elements // 32 * 36
    cut = tmp_path / "q8_1-ggml-size.gguf"
    cut.write_bytes((CASES / "tensor-q8-1.gguf").read_bytes()[: t.data_offset + t.n_bytes])
    with pytest.raises(ValueError):
        gguf.GGUFReader(cut)
    (ours,) = gguf_grammar.GGUFReader(cut).tensors
    assert ours.data.tobytes() == t.data.tobytes()
    cut.write_bytes(cut.read_bytes()[:-1])
    with pytest.raises(GGUFRejectedError) as caught:
        gguf_grammar.GGUFReader(cut)
    assert caught.value.code == "tensor-data-past-eof"


def gguf_py_errors_both_ways(path):
    doc = gguf_grammar._native.Document.open(str(path))
    full = [d for d in doc.check("gguf-py") if "gguf-py" in d[6]]
    return doc.gguf_py_rejections(), full


def test_fast_gguf_py_rejections_equal_the_full_check(accepted_file):
    """GGUFReader checks gguf-py's rules without walking arrays; that must change nothing."""
    fast, full = gguf_py_errors_both_ways(accepted_file)
    assert fast == full == []


@pytest.mark.parametrize("case", [f for f in REJECTED if f not in PARSE_ERRORS])
def test_fast_gguf_py_rejections_equal_the_full_check_on_rejected_cases(case):
    fast, full = gguf_py_errors_both_ways(CASES / case)
    assert fast == full and (full or case == "ggml-type-42.gguf")
