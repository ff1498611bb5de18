"""Reference dequantisation by gguf-py (gguf==0.19.0) for tests/dequant.rs.

Usage: dequant_reference.py OUT_DIR MODEL...
       dequant_reference.py --excerpt MODEL OUT_FILE

Writes OUT_DIR/random.gguf: one tensor per type gguf-py dequantises, 64 rows of random
blocks, whose first blocks get the scales +-Inf, quiet and signalling NaN, subnormals and
+-0 (and the E8M0 / UE4M3 edge bytes for mxfp4 / nvfp4). Then, for random.gguf and each
MODEL, writes OUT_DIR/<file name>.jsonl: per tensor its name, type, value count and the
sha256 of gguf.quants.dequantize's float32 values (little-endian, C order); and for
random.gguf also OUT_DIR/random.f32, all its values, so a mismatch can be shown value by value.

--excerpt copies MODEL's tensors named in EXCERPT, byte for byte, into OUT_FILE (a small file
the test checks against MODEL's recorded output when the model itself is not fetched).

--ggml OUT_DIR writes OUT_DIR/random-ggml.gguf the same way for the types checked against
llama.cpp 0.3.36's ggml (scripts/llama/dequant-ref.cpp): mxfp4, nvfp4, q1_0, q2_0. gguf-py
0.19.0 cannot write it (it has no q2_0), so the GGUF is written here. --ggml-digests OUT_DIR
then turns dequant-ref's output (OUT_DIR/random-ggml.f32 and its stdout, saved as
OUT_DIR/random-ggml.tsv) into OUT_DIR/random-ggml.gguf.jsonl, lines as above.
"""
import hashlib
import json
import struct
import sys
from pathlib import Path

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf.constants import GGML_QUANT_SIZES

# Byte offsets of the f16 scales inside one block, per type (ggml-common.h).
F16_SCALES = {
    T.Q4_0: [0], T.Q4_1: [0, 2], T.Q5_0: [0], T.Q5_1: [0, 2], T.Q8_0: [0],
    T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208],
    T.TQ1_0: [52], T.TQ2_0: [64], T.IQ4_NL: [0], T.IQ4_XS: [0],
    T.IQ2_XXS: [0], T.IQ2_XS: [0], T.IQ2_S: [0], T.IQ3_XXS: [0], T.IQ3_S: [0], T.IQ1_S: [0],
    T.IQ1_M: [],  # its f16 scale is spread over the top nibbles of 4 u16 (random covers it)
}
F16_EDGES = [0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE55, 0x0001, 0x83FF, 0x0000, 0x8000, 0x7BFF]
TYPES = [T.F32, T.F16, T.BF16, *F16_SCALES, T.MXFP4, T.NVFP4]
# The types of random-ggml.gguf: id, name, values and bytes per block as ggml-common.h
# (0.3.36) has them; and the offsets of their f16 scales.
GGML_TYPES = [(39, "mxfp4", 32, 17), (40, "nvfp4", 64, 36), (41, "q1_0", 128, 18), (42, "q2_0", 64, 18)]
GGML_F16_SCALES = {41: [0], 42: [0]}
ROWS = 64
# SmolLM2-135M's tensors in tests/dequant/smollm2-excerpt.gguf: one of each type but q8_0
# (its only q8_0 tensor, token_embd, is 30 MB; random.gguf covers q8_0).
EXCERPT = ["blk.0.attn_norm.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight"]


def random_blocks(rng, qtype: int, size: int, scales: list[int]) -> np.ndarray:
    """ROWS rows of 2 random blocks of `size` bytes, the first with the edge scales."""
    blocks_per_row = 2
    raw = rng.integers(0, 256, size=(ROWS * blocks_per_row, size), dtype=np.uint8)
    edges = np.array(F16_EDGES, dtype="<u2").view(np.uint8).reshape(-1, 2)
    for i, pair in enumerate(edges):
        for off in scales:
            raw[i, off:off + 2] = pair
    if qtype in (T.F16, T.BF16):
        raw.reshape(-1)[: edges.size] = edges.reshape(-1)
    if qtype == T.F32:
        specials = np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0x00000001, 0x80000000], dtype="<u4")
        raw.reshape(-1)[: specials.nbytes] = specials.view(np.uint8)
    if qtype == T.MXFP4:
        raw[:6, 0] = [0, 1, 2, 127, 254, 255]
    if qtype == T.NVFP4:
        raw[0, :4] = [0x00, 0x7F, 0x01, 0x7E]
        raw[1, :4] = [0x08, 0x80, 0xFF, 0x07]
    return raw.reshape(ROWS, blocks_per_row * size)


def random_file(path: Path) -> None:
    rng = np.random.default_rng(14)
    writer = gguf.GGUFWriter(str(path), "random")
    for qtype in TYPES:
        _, size = GGML_QUANT_SIZES[qtype]
        data = random_blocks(rng, qtype, size, F16_SCALES.get(qtype, []))
        writer.add_tensor(f"type_{qtype.name}", data, raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def ggml_file(path: Path) -> None:
    """random-ggml.gguf: GGUF v3, no metadata, one 2-D tensor per GGML_TYPES entry, 32-byte
    alignment (ggml's default)."""
    rng = np.random.default_rng(15)
    infos, data = b"", b""
    for qtype, name, values, size in GGML_TYPES:
        raw = random_blocks(rng, qtype, size, GGML_F16_SCALES.get(qtype, [])).tobytes()
        name = f"type_{name}".encode()
        dims = (2 * values, ROWS)
        infos += struct.pack("<Q", len(name)) + name + struct.pack("<IQQIQ", 2, *dims, qtype, len(data))
        data += raw + bytes(-len(raw) % 32)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(GGML_TYPES), 0) + infos
    path.write_bytes(head + bytes(-len(head) % 32) + data)


def ggml_digests(out: Path) -> None:
    values = (out / "random-ggml.f32").read_bytes()
    at = 0
    with open(out / "random-ggml.gguf.jsonl", "w") as manifest:
        for line in (out / "random-ggml.tsv").read_text().splitlines():
            name, qtype, n = line.split("\t")
            raw = values[at:at + 4 * int(n)]
            at += 4 * int(n)
            manifest.write(json.dumps({
                "name": name, "type": int(qtype), "n": int(n),
                "sha256": hashlib.sha256(raw).hexdigest(),
            }) + "\n")
    assert at == len(values), (at, len(values))


def excerpt(model: Path, out: Path) -> None:
    tensors = {t.name: t for t in gguf.GGUFReader(str(model)).tensors}
    writer = gguf.GGUFWriter(str(out), "llama")
    for name in EXCERPT:
        t = tensors[name]
        writer.add_tensor(name, t.data, raw_dtype=t.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main() -> None:
    if sys.argv[1] == "--excerpt":
        excerpt(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    if sys.argv[1] in ("--ggml", "--ggml-digests"):
        out = Path(sys.argv[2])
        out.mkdir(parents=True, exist_ok=True)
        if sys.argv[1] == "--ggml":
            ggml_file(out / "random-ggml.gguf")
        else:
            ggml_digests(out)
        return
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    random_file(out / "random.gguf")
    for path in [out / "random.gguf", *map(Path, sys.argv[2:])]:
        reader = gguf.GGUFReader(str(path))
        full = open(out / "random.f32", "wb") if path.name == "random.gguf" else None
        with open(out / f"{path.name}.jsonl", "w") as manifest:
            for t in reader.tensors:
                with np.errstate(all="ignore"):  # NaN and Inf scales are the point
                    values = gguf.quants.dequantize(t.data, t.tensor_type)
                raw = np.ascontiguousarray(values, dtype="<f4").tobytes()
                manifest.write(json.dumps({
                    "name": t.name, "type": int(t.tensor_type), "n": int(values.size),
                    "sha256": hashlib.sha256(raw).hexdigest(),
                }) + "\n")
                if full:
                    full.write(raw)
        if full:
            full.close()


if __name__ == "__main__":
    main()
