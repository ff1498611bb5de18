"""One measurement for scripts/bench-python.sh: open a GGUF file with one reader, read every
field's contents and every tensor's shape; print a Markdown table row with the times and the
peak RSS (of the whole process, and its growth past the imports).

Usage: bench_python.py READER FILE [RUNS]    READER: gguf (gguf-py 0.19.0) or gguf_grammar
       bench_python.py --make-synthetic PATH  write the 300-key/2,000-tensor file (gguf-py's writer)
"""

import os
import resource
import sys
import time


def make_synthetic(path):
    import numpy as np
    from gguf import GGUFWriter

    w = GGUFWriter(path, "llama")
    for i in range(299):  # + general.architecture = 300 keys
        kind = i % 4
        if kind == 0:
            w.add_uint32(f"bench.u32.{i}", i)
        elif kind == 1:
            w.add_float32(f"bench.f32.{i}", i / 7)
        elif kind == 2:
            w.add_string(f"bench.str.{i}", f"value {i}" * 4)
        else:
            w.add_array(f"bench.arr.{i}", list(range(64)))
    for i in range(2000):
        w.add_tensor(f"blk.{i // 10}.t{i % 10}.weight", np.full((4, 16), i, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def rss_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main():
    if sys.argv[1] == "--make-synthetic":
        make_synthetic(sys.argv[2])
        return
    reader_name, path = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    import numpy  # noqa: F401 - both readers import it: not part of what is measured

    module = __import__(reader_name)
    baseline = rss_kib()
    best = None
    for _ in range(runs):
        t0 = time.perf_counter()
        reader = module.GGUFReader(path)
        t1 = time.perf_counter()
        for field in reader.fields.values():
            field.contents()
        t2 = time.perf_counter()
        for tensor in reader.tensors:
            tensor.shape
        t3 = time.perf_counter()
        times = (t1 - t0, t2 - t1, t3 - t2)
        best = times if best is None or sum(times) < sum(best) else best
        del reader
    peak, growth = rss_kib(), rss_kib() - baseline
    name = {"gguf": "gguf-py 0.19.0", "gguf_grammar": "gguf_grammar"}[reader_name]
    cells = [os.path.basename(path), name, *map(ms, best), mib(peak), mib(growth)]
    print("| " + " | ".join(cells) + " |")


def ms(seconds):
    return f"{seconds * 1000:.3f} ms" if seconds < 0.01 else f"{seconds * 1000:,.0f} ms"


def mib(kib):
    return f"{kib / 1024:,.1f} MiB"


if __name__ == "__main__":
    main()
