#!/usr/bin/env python3
"""Check that gguf-py dequantises every tensor of the valid fixtures to the documented pattern.

Usage: check_fixture_data.py DIR   (a folder written by `gguf fixtures DIR`)

The pattern (crates/gguf-testkit/src/fixtures.rs): the tensor at index s, flat element i (ne0 fastest):
  f32, f16, q8_0: c = (7*i + 13*s) mod 255 - 127, value c / 64
  q4_K:           n = (5*i + 3*s) mod 16, j = (i mod 256) // 32, value ((j + 1)*n - 8) / 16
Values are computed here from that description, independently of the Rust code, and compared
exactly with gguf.quants.dequantize (gguf 0.19.0). Exit 1 on any difference.
"""

import json
import sys
from pathlib import Path

import numpy as np
from gguf import GGUFReader, GGMLQuantizationType as T
from gguf.quants import dequantize


def pattern(qtype: T, seed: int, n: int) -> np.ndarray:
    i = np.arange(n, dtype=np.int64)
    if qtype in (T.F32, T.F16, T.Q8_0):
        return (((7 * i + 13 * seed) % 255) - 127).astype(np.float32) / 64
    if qtype == T.Q4_K:
        nibble = (5 * i + 3 * seed) % 16
        j = (i % 256) // 32
        return ((j + 1) * nibble - 8).astype(np.float32) / 16
    raise ValueError(f"no pattern for {qtype.name}")


def main() -> int:
    folder = Path(sys.argv[1])
    manifest = json.loads((folder / "manifest.json").read_text())
    failed = checked = 0
    types = set()
    for entry in manifest:
        if entry["expect"] != "valid":
            continue
        reader = GGUFReader(folder / entry["file"])
        if not reader.tensors:
            print(f"{entry['file']}: no tensors", file=sys.stderr)
            failed += 1
        for seed, t in enumerate(reader.tensors):
            got = dequantize(t.data, t.tensor_type).reshape(-1)
            want = pattern(t.tensor_type, seed, int(t.n_elements))
            types.add(t.tensor_type.name)
            checked += 1
            if got.shape != want.shape or not np.array_equal(got, want):
                bad = np.flatnonzero(got != want)[:5] if got.shape == want.shape else "shape"
                print(f"{entry['file']}: {t.name} ({t.tensor_type.name}): differs at {bad}",
                      file=sys.stderr)
                failed += 1
    print(f"fixture data: {checked} tensors ({', '.join(sorted(types))}) checked, {failed} differ")
    return 1 if failed or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
