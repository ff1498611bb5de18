"""Whole-process timings of gguf-py 0.19.0's scripts with gguf-py's reader and with
gguf_grammar.GGUFReader swapped in (scripts/run_gguf_py_script.py), side by side, each run a
fresh process; prints a Markdown table: wall time and peak RSS (ru_maxrss of the process) of
each, and the speed-up. For scripts/bench-python.sh.

Usage: bench_gguf_py_scripts.py FILE...
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.path.join(HERE, "run_gguf_py_script.py")


def scalar_key(path):
    import gguf_grammar

    r = gguf_grammar.GGUFReader(path)
    for f in r.fields.values():
        if not f.name.startswith("GGUF.") and f.types and f.types[0] in r.gguf_scalar_to_np and f.types[0] != 7:
            return f.name, "7"
    return "GGUF.version", "3"


def cases(path):
    key, value = scalar_key(path)
    return [
        ("gguf_dump", ["gguf_dump", path], False, ""),
        ("gguf_dump --markdown", ["gguf_dump", "--markdown", path], False, ""),
        ("gguf_dump --json --json-array", ["gguf_dump", "--json", "--json-array", path], False, ""),
        ("gguf_hash", ["gguf_hash", path], False, ""),
        ("gguf_new_metadata", ["gguf_new_metadata", path, "out.gguf", "--general-name", "x"], False, ""),
        (f"gguf_set_metadata {key} {value}", ["gguf_set_metadata", "model.gguf", key, value, "--force"], True, ""),
        ("gguf_convert_endian big", ["gguf_convert_endian", "model.gguf", "big"], True, "YES\n"),
    ]


def measure(reader, argv, on_copy, stdin, path):
    with tempfile.TemporaryDirectory() as cwd:
        if on_copy:
            shutil.copyfile(path, os.path.join(cwd, "model.gguf"))
        env = dict(os.environ, TQDM_DISABLE="1")
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, RUN, reader, *argv], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        child.stdin.write(stdin.encode())
        child.stdin.close()
        err = child.stderr.read()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode not in (0, 1) or (child.returncode == 1 and b"Cannot handle type" not in err):
            sys.exit(f"{reader} {argv} exited {child.returncode}:\n{err.decode(errors='replace')}")
        return wall, usage.ru_maxrss


def main():
    print("| file | script | gguf-py's reader | gguf_grammar's | × faster | peak RSS gguf-py | peak RSS ours |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for path in sys.argv[1:]:
        path = os.path.abspath(path)
        for name, argv, on_copy, stdin in cases(path):
            theirs = measure("gguf", argv, on_copy, stdin, path)
            ours = measure("gguf_grammar", argv, on_copy, stdin, path)
            print(f"| {os.path.basename(path)} | `{name}` | {theirs[0]:.2f} s | {ours[0]:.2f} s | "
                  f"{theirs[0] / ours[0]:.1f} | {theirs[1] / 1024:,.0f} MiB | {ours[1] / 1024:,.0f} MiB |", flush=True)


if __name__ == "__main__":
    main()
