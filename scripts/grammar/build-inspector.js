#!/usr/bin/env node
// Assemble web/inspector.html: the page template (web/src/inspector.html) with, inlined, the
// map viewer's CSS and JS (crates/gguf-tools/src/render/map/map.html, crates/gguf-tools/src/render/map/map_view.js), the page script
// (web/src/inspector.js) and, as the worker's source, the Kaitai Struct runtime, the
// JavaScript parser compiled from grammar/gguf.ksy (debug mode: every field records its span)
// and web/src/worker.js; and, as the analysis worker's source, web/src/analysis.js, with the
// WebAssembly module of crates/gguf-wasm gzipped (level 9) and base64-encoded beside it.
//
// Usage: node build-inspector.js OUT.html GGUF_WASM.wasm   (run by scripts/build-inspector.sh)
"use strict";

const fs = require("fs");
const path = require("path");
const yaml = require("js-yaml");
const zlib = require("zlib");
const compiler = require("kaitai-struct-compiler");

const root = path.resolve(__dirname, "../..");
const read = (p) => fs.readFileSync(path.join(root, p), "utf8");

async function main() {
  const [out, wasm] = process.argv.slice(2);
  if (!out || !wasm) {
    process.stderr.write("usage: node build-inspector.js OUT.html GGUF_WASM.wasm\n");
    process.exit(2);
  }
  const ksy = yaml.load(read("grammar/gguf.ksy"));
  const importer = { importYaml: (name) => Promise.reject(new Error(`unexpected import of ${name}`)) };
  const files = await compiler.compile("javascript", ksy, importer, true);
  const parser = files["GgufFile.js"];
  // The runtime narrows every byte count to 32 bits (`length |= 0`): a length of 2^32+5 would
  // read 5 bytes. The grammar already rejects a length past the bytes left; this makes the
  // runtime itself refuse a count it cannot map instead of wrapping it.
  const narrowing = "length |= 0;";
  const stock = fs.readFileSync(require.resolve("kaitai-struct/KaitaiStream.js"), "utf8");
  if (stock.split(narrowing).length !== 2) throw new Error(`the runtime no longer has one "${narrowing}": check mapUint8Array`);
  const runtime = stock.replace(narrowing, "if (!(length >= 0 && length <= 0x7fffffff)) throw new RangeError(\"byte count \" + length + \" out of range\");");
  const css = read("crates/gguf-tools/src/render/map/map.html").match(/<style>\n([\s\S]*?)<\/style>/)[1];
  const parts = {
    "/*MAP_CSS*/": css.replace(/\n$/, ""),
    "/*RUNTIME*/": `// kaitai-struct ${require("kaitai-struct/package.json").version} runtime (MIT), mapUint8Array's 32-bit narrowing replaced by a range check\n` + runtime,
    "/*PARSER*/": `// grammar/gguf.ksy compiled by kaitai-struct-compiler ${compiler.version}\n` + parser,
    "/*WORKER*/": read("web/src/worker.js"),
    "/*VIEW*/": read("crates/gguf-tools/src/render/map/map_view.js"),
    "/*INSPECTOR*/": read("web/src/inspector.js"),
    "/*ANALYSIS*/": read("web/src/analysis.js"),
    "/*WASM*/": zlib.gzipSync(fs.readFileSync(wasm), { level: 9 }).toString("base64"),
  };
  let page = read("web/src/inspector.html");
  for (const [marker, text] of Object.entries(parts)) {
    // Inlined code must not end its <script> early.
    if (/<\/script|<!--/i.test(text)) throw new Error(`${marker} contains </script or <!--`);
    if (!page.includes(marker)) throw new Error(`the template has no ${marker}`);
    page = page.replace(marker, () => text);
  }
  fs.writeFileSync(out, page);
}

main().catch((err) => {
  process.stderr.write(`build-inspector.js: ${err && err.toString ? err.toString() : err}\n`);
  process.exit(1);
});
