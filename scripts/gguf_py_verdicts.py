#!/usr/bin/env python3
"""Run gguf-py's GGUFReader on every file of one or more manifests and compare its accept/reject
with the manifest's "gguf-py" verdict (the crate's validator's prediction).

Usage: gguf_py_verdicts.py [-v] MANIFEST.json...

A manifest is what `gguf fixtures` or `gguf mutate --all` writes: a JSON array of
{"file", "profiles": {"gguf-py": "accept" | "reject", ...}, ...}, files relative to the
manifest's folder. GGUFReader(path) (gguf 0.19.0, run as scripts/gguf_py_native.py runs it)
accepts when its constructor returns; any
exception rejects, and so does running longer than 20 s (a reader that never returns, as the
tests/conformance/README.md's parity section counts it). Prints each disagreement and "N files, M disagreements";
exit 1 when M > 0.
"""

import json
import signal
import sys
import time
import warnings
from pathlib import Path

from gguf_py_native import load_reader  # GGUFReader over a plain view of its memmap (fast)

LIMIT_SECONDS = 20


class TooLong(Exception):
    pass


def on_alarm(signum, frame):
    raise TooLong()


def gguf_py_accepts(path: Path) -> tuple[bool, str]:
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(LIMIT_SECONDS)
    try:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                load_reader(str(path), pure=False)
            verdict = True, ""
        except TooLong:
            raise
        except Exception as e:  # every failure of the reader is a rejection
            verdict = False, f"{type(e).__name__}: {str(e)[:200]}"
        signal.alarm(0)
        return verdict
    except TooLong:
        return False, f"no answer in {LIMIT_SECONDS} s"
    finally:
        signal.alarm(0)


def main() -> int:
    args = sys.argv[1:]
    verbose = "-v" in args
    manifests = [a for a in args if a != "-v"]
    total = disagreements = 0
    for manifest in manifests:
        folder = Path(manifest).parent
        for entry in json.loads(Path(manifest).read_text()):
            total += 1
            predicted = entry["profiles"]["gguf-py"] == "accept"
            started = time.monotonic()
            accepted, why = gguf_py_accepts(folder / entry["file"])
            why += f" ({time.monotonic() - started:.1f} s)"
            if accepted != predicted:
                disagreements += 1
                print(f"DISAGREE {folder / entry['file']}: manifest says gguf-py "
                      f"{'accepts' if predicted else 'rejects'} (codes {entry['codes']}), "
                      f"GGUFReader {'accepts' if accepted else 'rejects: ' + why}")
            elif verbose:
                print(f"ok {folder / entry['file']}: {'accept' if accepted else 'reject: ' + why}")
    print(f"gguf-py verdicts: {total} files, {disagreements} disagreements")
    return 1 if disagreements or not total else 0


if __name__ == "__main__":
    sys.exit(main())
