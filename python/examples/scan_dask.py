"""Scan a directory tree of GGUF files with Dask's distributed scheduler: one row per file
with its path, architecture, parameter count, tensor count and verdict.

    python scan_dask.py DIR [--profile strict] [--workers 2] [--scheduler tcp://HOST:8786]

Without --scheduler the scan runs on a LocalCluster of worker processes on this machine.
With --scheduler it runs, unchanged, on a real Dask cluster: start `dask scheduler` and
`dask worker tcp://HOST:8786` on the machines (each with `pip install ./python` done and the
files at the same path, e.g. a shared file system), then pass the scheduler's address. Only
headers are read: each worker memory-maps its file and parses the header in Rust, so a scan
costs about one page-in of each header, whatever the size of the tensor data.

Output: tab-separated rows on stdout, one per file, sorted by path; paths and text from the
files are printed through ``gguf_grammar.escape`` (a tab, newline or terminal escape in a file
name or an architecture cannot break a row or reach the terminal).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import gguf_grammar

COLUMNS = ("path", "architecture", "parameters", "tensors", "verdict")


def scan_one(path: str, profile: str = "strict") -> dict[str, Any]:
    """One file's row. The verdict is ``accepted``, ``rejected: CODE, ...`` (the profile's
    error codes) or ``unreadable: CODE at offset N`` (not GGUF); never an exception."""
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row["path"] = path
    try:
        doc = gguf_grammar.open(path)
    except gguf_grammar.GGUFError as e:
        row["verdict"] = f"unreadable: {e.code} at offset {e.offset}"
        return row
    except OSError as e:
        row["verdict"] = f"unreadable: {e.strerror or e}"
        return row
    summary = doc.summary()
    row["architecture"] = summary.architecture
    row["parameters"] = summary.parameters
    row["tensors"] = summary.tensor_count
    errors = [d.code for d in doc.check(profile) if d.severity == "error"]
    row["verdict"] = "accepted" if doc.accepts(profile) else "rejected: " + ", ".join(dict.fromkeys(errors))
    return row


def gguf_files(root: str | os.PathLike[str]) -> list[str]:
    """Every ``*.gguf`` file under ``root``, sorted."""
    return sorted(str(p) for p in Path(root).rglob("*.gguf") if p.is_file())


def scan(root: str | os.PathLike[str], client: Any, profile: str = "strict") -> list[dict[str, Any]]:
    """The rows of every GGUF file under ``root``, computed on ``client``'s workers."""
    futures = client.map(scan_one, gguf_files(root), profile=profile, pure=False)
    return client.gather(futures)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", help="directory to scan (recursively) for *.gguf")
    parser.add_argument("--profile", default="strict", choices=["ggml", "ggml-data", "ggml-0.3.16", "ggml-0.3.16-data", "gguf-py", "spec", "strict"])
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes")
    parser.add_argument("--scheduler", help="address of a running Dask scheduler instead of a LocalCluster")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.root):
        parser.error(f"{gguf_grammar.escape(args.root)} is not a directory")

    from dask.distributed import Client, LocalCluster

    if args.scheduler:
        client = Client(args.scheduler)
        cluster = None
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    try:
        rows = scan(args.root, client, args.profile)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    print("\t".join(COLUMNS))
    for row in rows:
        print("\t".join("" if row[c] is None else gguf_grammar.escape(str(row[c])) for c in COLUMNS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
