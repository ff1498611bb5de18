"""Runs one of gguf-py's scripts as `python -m gguf.scripts.NAME ARGS` would, with the reader
READER: `gguf` (gguf-py 0.19.0's own) or `gguf_grammar` (patched in as gguf.GGUFReader and
gguf.gguf_reader.GGUFReader first). For scripts/bench-python.sh.

Usage: run_gguf_py_script.py READER NAME [ARGS...]
"""

import runpy
import sys

import gguf
import gguf.gguf_reader

reader, name, *args = sys.argv[1:]
if reader == "gguf_grammar":
    import gguf_grammar

    gguf.GGUFReader = gguf.gguf_reader.GGUFReader = gguf_grammar.GGUFReader
elif reader != "gguf":
    sys.exit(f"run_gguf_py_script.py: unknown reader {reader!r}")
module = f"gguf.scripts.{name}"
sys.argv = [module, *args]
runpy.run_module(module, run_name="__main__", alter_sys=True)
