#!/usr/bin/env python3
"""Prints the match arms of regex_exprs() in crates/gguf-tokenizer/src/pre.rs from llama.cpp's
src/llama-vocab.cpp (the `regex_exprs = {...}` lists of llm_tokenizer_bpe, in source order),
non-ASCII characters escaped. scripts/check-tokenizer.sh diffs them with pre.rs. The lists
are named as crates/gguf-llama's PreSettings::expressions names them; a name means the same
list in every release (a list that changed would need a new name).
Usage: gen-tokenizer-pre.py LLAMA_SRC RELEASE (0.3.16 or 0.3.36)
"""
import re
import sys

KEYS = {
    "0.3.16": ["llama3", "dbrx", "deepseek-llm", "deepseek3-llm", "deepseek-coder", "falcon",
               "starcoder", "gpt2", "qwen2", "poro", "chatglm4", "viking", "tekken",
               "chameleon", "gpt4o", "kimi-k2", "superbpe", "bailingmoe", "seed-coder",
               "default"],
    "0.3.36": ["llama3", "jais2", "dbrx", "deepseek-llm", "deepseek3-llm", "spark2-5", "youtu",
               "deepseek-coder", "falcon", "starcoder", "gpt2", "qwen2", "qwen35", "poro",
               "chatglm4", "viking", "tekken", "chameleon", "gpt4o", "granite-emb-multi",
               "tiny-aya", "kimi-k2", "superbpe", "bailingmoe", "seed-coder", "ufakzeka",
               "grok-2", "afmoe", "laguna", "exaone-moe", "gemma4", "sarvam-moe", "minicpm5",
               "whitespace", "default"],
}[sys.argv[2]]
C_ESC = {"\\": "\\", '"': '"', "r": "\r", "n": "\n", "t": "\t"}
RUST_ESC = {"\\": "\\\\", '"': '\\"', "\r": "\\r", "\n": "\\n", "\t": "\\t"}

s = open(f"{sys.argv[1]}/src/llama-vocab.cpp", encoding="utf-8").read()
a = s.index("struct llm_tokenizer_bpe : llm_tokenizer")
seg = s[a : s.index("std::vector<std::string> regex_exprs;", a)]
blocks = re.findall(r"regex_exprs = \{(.*?)\};", seg, re.S)
assert len(blocks) == len(KEYS), f"{len(blocks)} lists, expected {len(KEYS)}"
for key, body in zip(KEYS, blocks):
    lits = []
    for line in body.split("\n"):
        t = line.strip()
        if not t.startswith('"'):
            continue
        lit, out, i = t[1 : t.rindex('"')], "", 0
        while i < len(lit):
            if lit[i] == "\\":
                out += C_ESC[lit[i + 1]]
                i += 2
            else:
                out += lit[i]
                i += 1
        rust = "".join(RUST_ESC.get(c, c if ord(c) < 128 else "\\u{%X}" % ord(c)) for c in out)
        lits.append(f'"{rust}"')
    print(f'        "{key}" => &[{", ".join(lits)}],')
