"""``fit``: the memory llama.cpp allocates for a model, from the Rust crate ``gguf-fit``."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any, Union

from . import _native


def fit(
    path: Union[str, os.PathLike[str]],
    *,
    ctx_size: int = 4096,
    batch_size: int = 2048,
    ubatch_size: int = 512,
    parallel: int = 1,
    cache_type_k: str = "f16",
    cache_type_v: str = "f16",
    flash_attn: bool = False,
    n_gpu_layers: int = 0,
    gpus: int = 0,
    tensor_split: Sequence[float] = (),
    no_kv_offload: bool = False,
    mmap: bool = True,
    swa_full: bool = False,
    kv_unified: bool = False,
    embeddings: bool = False,
    repack: bool = True,
    release: str = "0.3.16",
) -> dict[str, Any]:
    """The buffers the llama.cpp of ``release`` allocates to run the model at ``path`` with these
    settings (``llama-cli``'s flags: ``--ctx-size`` (0: the training context), ``--batch-size``,
    ``--ubatch-size``, ``--parallel``, ``--cache-type-k/-v``, ``--flash-attn``,
    ``--n-gpu-layers``, ``--tensor-split``, ``--no-kv-offload``, ``--no-mmap``,
    ``--swa-full``, ``--kv-unified``, ``--embeddings``), read from the header alone: the same
    dict ``gguf fit --json`` prints, sizes in bytes — ``n_ctx``, ``weights`` (buffers:
    ``name``, ``device``, ``bytes``), ``caches`` (KV or recurrent, per layer), ``output``,
    ``compute`` (an estimate; ``None`` with ``gpus`` > 0, where it is not estimated, as
    ``compute_not_estimated`` says), ``devices`` (totals; their ``compute`` is ``None`` then). For the first shard of a set
    (``NAME-00001-of-0000N.gguf``) every shard is read. ``release`` is the llama-cpp-python
    version whose llama.cpp is modelled: ``"0.3.16"``, whose defaults the other arguments' are,
    or ``"0.3.36"`` (its defaults, as ``gguf fit --release 0.3.36``: ``ctx_size=0``,
    ``flash_attn=True``). Raises ``ValueError`` for a model
    llama.cpp would not load (a vocabulary-only file, an unknown architecture, …).

    >>> import gguf_grammar
    >>> gguf_grammar.fit("tests/corpus/ggml-vocab-llama-spm.gguf")
    Traceback (most recent call last):
    ...
    ValueError: no tensors: a vocabulary-only file, llama.cpp loads no model from it
    """
    documents = [_native.Document.open(os.fspath(p)) for p in _native.shard_paths(os.fspath(path))]
    return json.loads(
        _native.fit(
            documents,
            ctx_size=ctx_size,
            batch_size=batch_size,
            ubatch_size=ubatch_size,
            parallel=parallel,
            cache_type_k=cache_type_k,
            cache_type_v=cache_type_v,
            flash_attn=flash_attn,
            n_gpu_layers=n_gpu_layers,
            gpus=gpus,
            tensor_split=list(tensor_split),
            no_kv_offload=no_kv_offload,
            mmap=mmap,
            swa_full=swa_full,
            kv_unified=kv_unified,
            embeddings=embeddings,
            repack=repack,
            release=release,
        )
    )
