#!/usr/bin/env node
// Compile a .ksy file with the JavaScript build of the Kaitai Struct compiler.
//
// Usage: node compile.js KSY OUTDIR LANG...
//
// Writes the generated sources for each LANG (e.g. python, javascript) into OUTDIR/LANG/.
// Exits non-zero, with the compiler's message on stderr, when the grammar does not compile.
"use strict";

const fs = require("fs");
const path = require("path");
const yaml = require("js-yaml");
const compiler = require("kaitai-struct-compiler");

async function main() {
  const [ksyPath, outDir, ...langs] = process.argv.slice(2);
  if (!ksyPath || !outDir || langs.length === 0) {
    process.stderr.write("usage: node compile.js KSY OUTDIR LANG...\n");
    process.exit(2);
  }
  const ksy = yaml.load(fs.readFileSync(ksyPath, "utf8"));
  // The grammar has no imports; refuse any rather than reading files behind the caller's back.
  const importer = {
    importYaml(name) {
      return Promise.reject(new Error(`unexpected import of ${name}`));
    },
  };
  for (const lang of langs) {
    const files = await compiler.compile(lang, ksy, importer, false);
    const dir = path.join(outDir, lang);
    fs.mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(files)) {
      fs.writeFileSync(path.join(dir, name), text);
    }
    process.stderr.write(
      `compile.js: ${lang}: ${Object.keys(files).join(", ")} (kaitai-struct-compiler ${compiler.version})\n`,
    );
  }
}

main().catch((err) => {
  // The compiler rejects with Scala exceptions whose useful text is in toString().
  process.stderr.write(`compile.js: ${err && err.toString ? err.toString() : err}\n`);
  if (err && err.stack && process.env.KSC_DEBUG) process.stderr.write(err.stack + "\n");
  process.exit(1);
});
