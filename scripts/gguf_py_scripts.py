"""gguf-py 0.19.0's own scripts, run with gguf-py's GGUFReader and with gguf_grammar's swapped in.

Usage: gguf_py_scripts.py [--list-only] FILE...

For each FILE, every case below runs twice in this process, as `python -m gguf.scripts.NAME`
would run it (runpy, as `__main__`): once with gguf-py's reader, once with
`gguf_grammar.GGUFReader` patched in as `gguf.GGUFReader` and `gguf.gguf_reader.GGUFReader`.
Each run gets its own empty directory (scripts that modify the file get a copy of it there,
`model.gguf`); stdout, stderr, the exit status and every file left in the directory must be
identical. Differences listed in KNOWN (each a place where gguf-py is wrong) must occur,
any other fails. Prints one line per file and the differences; exits 1 on a failure.

To keep the run short, gguf-py's reader is opened once per file for all the runs that open
FILE itself in mode 'r' (the scripts never change a reader, and opening is most of gguf-py's
time); progress bars are off (TQDM_DISABLE=1: they print timings). An exception escaping a
script is recorded as its type, message and the script's own frames (the reader's frames
differ by nature).
"""

from __future__ import annotations

import contextlib
import gc
import io
import logging
import os
import runpy
import shutil
import sys
import tempfile
import traceback

os.environ["TQDM_DISABLE"] = "1"

import gguf  # noqa: E402
import gguf.gguf_reader  # noqa: E402

import gguf_grammar  # noqa: E402

GGUF_PY_READER = gguf.gguf_reader.GGUFReader

# (file name, case) → why the outputs differ. Each is a place where gguf-py is wrong.
# gguf-py 0.19.0 sizes a q8_1 block as 40 bytes (GGML_QUANT_SIZES); ggml's block_q8_1 is 36
# (two f16 and 32 int8), and this reader follows ggml: the tensor's data is 36 bytes a block.
_Q8_1 = "gguf-py sizes q8_1 blocks as 40 bytes, ggml as 36: "
KNOWN: dict[tuple[str, str], str] = {
    ("tensor-q8-1.gguf", "gguf_dump --markdown"): _Q8_1 + "the data size column (0x50 vs 0x48) and bits per weight",
    ("tensor-q8-1.gguf", "gguf_hash"): _Q8_1 + "gguf-py hashes 8 bytes past the tensor's data",
    ("tensor-q8-1.gguf", "gguf_hash --no-layer"): _Q8_1 + "gguf-py hashes 8 bytes past the tensor's data",
    ("tensor-q8-1.gguf", "gguf_new_metadata --general-name"):
        _Q8_1 + "gguf-py's writer refuses the 36-byte rows (ValueError), and with gguf-py's reader writes 40-byte blocks",
    ("tensor-q8-1.gguf", "gguf_new_metadata --remove-metadata"):
        _Q8_1 + "gguf-py's writer refuses the 36-byte rows (ValueError), and with gguf-py's reader writes 40-byte blocks",
}


def cases(path: str) -> list[tuple[str, str, list[str], bool, str]]:
    """(case name, script module, argv, works on a copy, stdin) for FILE."""
    reader = gguf_grammar.GGUFReader(path)  # only to choose a key
    scalar = next(
        (f.name for f in reader.fields.values()
         if not f.name.startswith("GGUF.") and f.types and f.types[0] in reader.gguf_scalar_to_np
         and f.types[0] != gguf.GGUFValueType.BOOL),
        None,
    )
    del reader
    dump = "gguf.scripts.gguf_dump"
    out = [
        (f"gguf_dump {' '.join(args)}".strip(), dump, [path, *args], False, "")
        for args in ([], ["--no-tensors"], ["--json"], ["--json", "--json-array"], ["--json", "--no-tensors"],
                     ["--markdown"], ["--markdown", "--no-tensors"], ["--data-offset"], ["--data-alignment"])
    ]
    out += [
        ("gguf_hash", "gguf.scripts.gguf_hash", [path], False, ""),
        ("gguf_hash --no-layer", "gguf.scripts.gguf_hash", [path, "--no-layer"], False, ""),
        ("gguf_new_metadata --general-name", "gguf.scripts.gguf_new_metadata",
         [path, "out.gguf", "--general-name", "renamed", "--verbose"], False, ""),
        ("gguf_new_metadata --remove-metadata", "gguf.scripts.gguf_new_metadata",
         [path, "out.gguf", "--remove-metadata", "general.name", "--force"], False, ""),
        ("gguf_set_metadata missing key", "gguf.scripts.gguf_set_metadata",
         ["model.gguf", "no.such.key", "1", "--force"], True, ""),
        ("gguf_set_metadata general.name (a string)", "gguf.scripts.gguf_set_metadata",
         ["model.gguf", "general.name", "x", "--force"], True, ""),
    ]
    if scalar is not None:
        out += [
            (f"gguf_set_metadata {scalar} --dry-run", "gguf.scripts.gguf_set_metadata",
             ["model.gguf", scalar, "7", "--dry-run"], True, ""),
            (f"gguf_set_metadata {scalar}", "gguf.scripts.gguf_set_metadata",
             ["model.gguf", scalar, "7"], True, "YES\n"),
        ]
    for order in ("big", "little"):
        out.append((f"gguf_convert_endian {order}", "gguf.scripts.gguf_convert_endian",
                    ["model.gguf", order], True, "YES\n"))
    out.append(("gguf_convert_endian native --dry-run", "gguf.scripts.gguf_convert_endian",
                ["model.gguf", "native", "--dry-run"], True, ""))
    return out


def run(module: str, argv: list[str], stdin: str, cwd: str) -> dict[str, object]:
    """One run of a script as `__main__` in `cwd`: stdout, stderr, status, files left."""
    out, err = io.StringIO(), io.StringIO()
    logging.root.handlers.clear()  # basicConfig binds a handler to the current sys.stderr
    old_argv, old_stdin, old_cwd = sys.argv, sys.stdin, os.getcwd()
    spec_file = __import__("importlib").util.find_spec(module).origin
    sys.argv, sys.stdin = [spec_file, *argv], io.StringIO(stdin)
    os.chdir(cwd)
    status: object = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                runpy.run_module(module, run_name="__main__", alter_sys=False)
            except SystemExit as e:
                if e.code is None or isinstance(e.code, int):
                    status = e.code or 0
                else:
                    print(e.code, file=sys.stderr)
                    status = 1
            except Exception as e:  # noqa: BLE001 - the script's crash is what is compared
                frames = [f"  {os.path.basename(f.filename)}:{f.lineno} in {f.name}"
                          for f in traceback.extract_tb(e.__traceback__) if f.filename == spec_file]
                print("Traceback (script frames):", *frames, *traceback.format_exception_only(e),
                      sep="\n", end="", file=sys.stderr)
                status = 1
    finally:
        sys.argv, sys.stdin = old_argv, old_stdin
        os.chdir(old_cwd)
        logging.root.handlers.clear()
        gc.collect()  # releases the maps of readers the script dropped
    files = {}
    for name in sorted(os.listdir(cwd)):
        with open(os.path.join(cwd, name), "rb") as f:
            files[name] = f.read()
    return {"stdout": out.getvalue(), "stderr": err.getvalue(), "status": status, "files": files}


def use(reader: object) -> None:
    gguf.GGUFReader = reader  # type: ignore[misc]
    gguf.gguf_reader.GGUFReader = reader  # type: ignore[misc]


def first_difference(a: object, b: object) -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return f"files {sorted(a)} vs {sorted(b)}"
        for k in a:
            if a[k] != b[k]:
                x, y = a[k], b[k]
                at = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
                return f"file {k}: {len(x)} vs {len(y)} bytes, first difference at byte {at}"
        return ""
    if isinstance(a, str) and isinstance(b, str):
        la, lb = a.splitlines(), b.splitlines()
        at = next((i for i, (p, q) in enumerate(zip(la, lb)) if p != q), min(len(la), len(lb)))
        show = lambda lines: repr(lines[at][:300]) if at < len(lines) else "<end>"  # noqa: E731
        return f"line {at + 1}: gguf-py {show(la)}\n      ours    {show(lb)}"
    return f"{a!r} vs {b!r}"


def check_file(path: str, work: str) -> tuple[int, list[str]]:
    name = os.path.basename(path)
    cache: dict[str, object] = {}

    def reference(p: object, mode: str = "r") -> object:
        if mode == "r" and os.path.abspath(os.fspath(p)) == os.path.abspath(path):  # type: ignore[arg-type]
            if path not in cache:
                cache[path] = GGUF_PY_READER(p, mode)
            return cache[path]
        return GGUF_PY_READER(p, mode)

    problems, count = [], 0
    for case, module, argv, on_copy, stdin in cases(path):
        results = []
        for label, reader in (("gguf-py", reference), ("ours", gguf_grammar.GGUFReader)):
            cwd = tempfile.mkdtemp(dir=work)
            if on_copy:
                shutil.copyfile(path, os.path.join(cwd, "model.gguf"))
            use(reader)
            try:
                results.append(run(module, argv, stdin, cwd))
            finally:
                use(GGUF_PY_READER)
                shutil.rmtree(cwd)
        count += 1
        theirs, ours = results
        if argv[-1] == "--data-offset" and theirs["status"] != 0:
            problems.append(f"  {name}: {case}: gguf-py's run failed, the file is not one it reads:\n{theirs['stderr']}")
        diffs = [f"    {k}: {first_difference(theirs[k], ours[k])}" for k in theirs if theirs[k] != ours[k]]
        known = KNOWN.get((name, case))
        if diffs and known is None:
            problems.append(f"  {name}: {case}: differs\n" + "\n".join(diffs))
        elif known is not None and not diffs:
            problems.append(f"  {name}: {case}: listed as differing ({known}) but identical")
        elif known is not None:
            print(f"  {name}: {case}: differs as listed: {known}")
    cache.clear()
    gc.collect()
    return count, problems


def main() -> int:
    files = sys.argv[1:]
    work = tempfile.mkdtemp(prefix="gguf-py-scripts.")
    total, failed = 0, []
    try:
        for path in files:
            n, problems = check_file(os.path.abspath(path), work)
            total += n
            failed += problems
            print(f"{os.path.basename(path)}: {n} cases, {'identical' if not problems else f'{len(problems)} differ'}",
                  flush=True)
            for p in problems:
                print(p, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"gguf_py_scripts: {total} cases over {len(files)} files, {len(failed)} unexplained differences")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
