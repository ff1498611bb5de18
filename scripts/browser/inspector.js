#!/usr/bin/env node
// Drives web/inspector.html in headless Chromium.
//
// Usage: node inspector.js GGUF_BIN OUTDIR VOCAB_FILE MODEL_FILE
//
//   (b) a 100 GB sparse file carrying VOCAB_FILE's header (made with truncate, checked sparse):
//       the page shows its token count and data start as `gguf map --json` gives them, and
//       reads (File.slice, counted by wrapping Blob.prototype.slice) less than header + 2 MiB;
//   (c) VOCAB_FILE cut at 1,500,000 bytes: the page shows the offset and path `gguf dump` names;
//   and for VOCAB_FILE and MODEL_FILE the rows the grammar's parser gives (spans, paths, kinds)
//   equal `gguf map --json`'s.
// Saves screenshots in OUTDIR and prints bytes read and times. Exits 1 on any failure.
"use strict";

const fs = require("fs");
const path = require("path");
const { execFileSync, spawnSync } = require("child_process");
const { launch, check, failures } = require("./common");

const page_url = "file://" + path.resolve(__dirname, "../../web/inspector.html");

function mapJson(gguf, file) {
  return execFileSync(gguf, ["map", "--json", file], { maxBuffer: 1 << 30 })
    .toString()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

async function open(browser, file, reuse) {
  if (reuse) return inspectIn(reuse, file, []);
  const page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.addInitScript(() => {
    // Count every byte the page asks of a Blob (a File is a Blob).
    window.sliced = 0;
    const slice = Blob.prototype.slice;
    Blob.prototype.slice = function (start, end, type) {
      const s = slice.call(this, start, end, type);
      window.sliced += s.size;
      return s;
    };
  });
  await page.goto(page_url);
  await page.waitForFunction(() => performance.getEntriesByName("first-contentful-paint").length);
  const paint = await page.evaluate(() => Math.round(performance.getEntriesByName("first-contentful-paint")[0].startTime));
  const result = await inspectIn(page, file, errors);
  result.state.paint = paint;
  return result;
}

// Chooses `file` in the page and waits for the inspector to finish with it.
async function inspectIn(page, file, errors) {
  await page.evaluate(() => { window.sliced = 0; window.gguf_map = undefined; });
  const started = Date.now();
  await page.setInputFiles("#file", file);
  await page.waitForFunction(() => window.gguf_inspector.done && (window.gguf_inspector.error || window.gguf_map), null, { timeout: 60000 }).catch((e) => errors.push(String(e)));
  const state = await page.evaluate(() => ({ ...window.gguf_inspector, sliced: window.sliced }));
  state.wall = Date.now() - started;
  state.errors = errors;
  return { page, state };
}

// The page's rows, string-array elements expanded, against gguf map --json's.
async function sameRows(page, rows, name) {
  const got = await page.evaluate(() => {
    const m = window.gguf_map;
    const out = [];
    for (let i = 0; i < m.nodes; i++) out.push([m.off[i], m.len[i], m.path[i]]);
    return out;
  });
  const want = rows.map((r) => [r.offset, r.length, r.path]);
  let diffs = 0;
  for (let i = 0; i < Math.max(got.length, want.length); i++) {
    if (JSON.stringify(got[i]) !== JSON.stringify(want[i])) {
      if (diffs++ < 5) console.log(`  ${name} row ${i}: page ${JSON.stringify(got[i])}, gguf map ${JSON.stringify(want[i])}`);
    }
  }
  check(diffs === 0, `${name}: ${diffs} rows differ from gguf map --json (${got.length} vs ${want.length} rows)`);
}

async function main() {
  const [gguf, outDir, vocab, model] = process.argv.slice(2);
  fs.mkdirSync(outDir, { recursive: true });
  const browser = await launch();
  try {
    // (b) a 100 GB sparse file with the vocabulary's header.
    const vocabRows = mapJson(gguf, vocab);
    const dataStart = vocabRows.find((r) => r.kind === "tensor_data").offset;
    const tokens = vocabRows.find((r) => r.path.endsWith('"tokenizer.ggml.tokens".len')).value;
    const sparse = path.join(outDir, "sparse-100G.gguf");
    fs.rmSync(sparse, { force: true });
    execFileSync("truncate", ["-s", "100G", sparse]);
    execFileSync("dd", [`if=${vocab}`, `of=${sparse}`, "conv=notrunc", "status=none"]);
    const used = Number(spawnSync("du", ["-k", sparse]).stdout.toString().split("\t")[0]) * 1024;
    check(used < 64 * 1024 * 1024, `${sparse} is not sparse (${used} bytes on disk)`);
    const { page, state } = await open(browser, sparse);
    const s = state.summary || {};
    if (state.errors.length) console.log(state.errors);
    console.log(
      `inspector, 100 GB sparse file: read ${state.sliced} bytes (header ${dataStart}), ` +
        `first contentful paint ${state.paint} ms, header parsed and shown in ${state.ms} ms`,
    );
    check(!state.error, `sparse: error ${JSON.stringify(state.error)}`);
    check(s.tokens === String(tokens), `sparse: tokens ${s.tokens}, want ${tokens}`);
    check(s.dataOffset === dataStart, `sparse: data start ${s.dataOffset}, want ${dataStart}`);
    check(s.fileSize === 100 * 2 ** 30, `sparse: file size ${s.fileSize}`);
    check(state.sliced === state.bytesRead, `sparse: sliced ${state.sliced} but the page counts ${state.bytesRead}`);
    check(state.sliced < dataStart + 2 * 2 ** 20, `sparse: read ${state.sliced} bytes, over header + 2 MiB`);
    const shown = await page.locator("#summaryTable tr[data-field=tokens] td").nth(1).textContent();
    check(shown === "128,256", `sparse: the summary shows ${shown} tokens`);
    await sameRows(page, vocabRows.map((r) => (r.kind === "tensor_data" ? { ...r, length: 100 * 2 ** 30 - r.offset } : r)), "sparse");
    check(state.errors.length === 0, `sparse: page errors ${state.errors}`);
    await page.screenshot({ path: path.join(outDir, "inspector-sparse.png") });
    await page.close();
    fs.rmSync(sparse);

    // The model, whose tensors fill the tensor table.
    {
      const { page, state } = await open(browser, model);
      check(!state.error, `model: error ${JSON.stringify(state.error)}`);
      await sameRows(page, mapJson(gguf, model), "model");
      const tensorRows = await page.locator("#tensors tr").count();
      const want = mapJson(gguf, model).filter((r) => r.kind === "tensor_info").length;
      check(tensorRows === want + 1, `model: tensor table has ${tensorRows - 1} rows, want ${want}`);
      // Name, type, dims, absolute offset and size, as gguf dump --json gives them.
      const shown = await page.evaluate(() => [...document.querySelectorAll("#tensors tr")].slice(1).map((tr) => [...tr.cells].map((c) => c.textContent)));
      const dumped = JSON.parse(execFileSync(gguf, ["dump", "--json", model], { maxBuffer: 1 << 30 })).tensors;
      const expected = dumped.map((t) => [t.name, t.type, "[" + t.dims.join(", ") + "]", String(t.data_offset), String(t.n_bytes)]);
      check(JSON.stringify(shown) === JSON.stringify(expected), `model: tensor table differs from gguf dump --json: ${JSON.stringify(shown[0])} vs ${JSON.stringify(expected[0])}`);
      await page.screenshot({ path: path.join(outDir, "inspector-model.png") });
      await page.close();
    }

    // Versions, byte orders and value shapes: the grammar's rows equal the crate's.
    // One page for all of them: each file replaces the previous one's view.
    let shared = null;
    for (const name of ["basic-v1-le", "basic-v2-be", "basic-v3-be", "scalars-all-be", "array-nested", "array-bool", "bool-value-2"]) {
      const file = path.resolve(__dirname, "../../tests/conformance/cases", name + ".gguf");
      const { page, state } = await open(browser, file, shared);
      shared = page;
      check(!state.error, `${name}: error ${JSON.stringify(state.error)}`);
      if (!state.error) await sameRows(page, mapJson(gguf, file), name);
      // The search finds only this file's keys.
      const rows = mapJson(gguf, file).filter((r) => r.kind === "kv");
      await page.fill("#search", rows[rows.length - 1].path);
      await page.locator("#results div").first().click();
      const selected = await page.evaluate(() => document.getElementById("details").dataset.path);
      check(selected === rows[rows.length - 1].path, `${name}: search selected ${selected}`);
    }
    await shared.close();

    // (c) a truncated file: the offset and path the crate's parser names.
    const cut = path.join(outDir, "truncated.gguf");
    fs.writeFileSync(cut, fs.readFileSync(vocab).subarray(0, 1500000));
    const dump = spawnSync(gguf, ["dump", cut]);
    const m = /offset 0x[0-9a-f]+ \((\d+)\): (.*?): /.exec(dump.stderr.toString());
    {
      const { page, state } = await open(browser, cut);
      const e = state.error || {};
      console.log(`inspector, truncated file: ${JSON.stringify(e)}; gguf dump: ${dump.stderr.toString().trim()}`);
      check(m && e.offset === Number(m[1]) && e.path === m[2], `truncated: page says ${JSON.stringify(e)}`);
      const text = await page.locator("#error").textContent();
      check(text.includes(`offset ${m && m[1]}`), `truncated: the page shows "${text}"`);
      await page.screenshot({ path: path.join(outDir, "inspector-truncated.png") });
      await page.close();
    }

    // A hostile string length in a 1 TB sparse file: an error at once, one page read.
    const hostile = path.join(outDir, "hostile-1T.gguf");
    fs.rmSync(hostile, { force: true });
    execFileSync("truncate", ["-s", "1T", hostile]);
    const head = Buffer.alloc(32);
    head.write("GGUF", 0);
    head.writeUInt32LE(3, 4);
    head.writeBigUInt64LE(0n, 8); // tensors
    head.writeBigUInt64LE(1n, 16); // key/values
    head.writeBigUInt64LE(1n << 60n, 24); // the key's length
    const fd = fs.openSync(hostile, "r+");
    fs.writeSync(fd, head, 0, 32, 0);
    fs.closeSync(fd);
    {
      const { page, state } = await open(browser, hostile);
      const e = state.error || {};
      console.log(`inspector, hostile 1 TB file: ${JSON.stringify(e)}, read ${state.sliced} bytes`);
      check(e.offset === 24 && e.path === "kv[0].key", `hostile: page says ${JSON.stringify(e)}`);
      check(state.sliced <= 2 ** 20, `hostile: read ${state.sliced} bytes`);
      await page.close();
    }
    fs.rmSync(hostile);
    // Lengths past 32 bits (the stock Kaitai runtime read 2^32+1 as 1 and showed a valid file)
    // and past 2^31 ("Invalid typed array length"): the error gguf dump gives, offset and path.
    const u64 = (n) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); return b; };
    const u32 = (n) => { const b = Buffer.alloc(4); b.writeUInt32LE(n); return b; };
    const str = (t) => Buffer.concat([u64(Buffer.byteLength(t)), Buffer.from(t)]);
    const header = (tensors, kvs) => Buffer.concat([Buffer.from("GGUF"), u32(3), u64(tensors), u64(kvs)]);
    const write = (name, parts) => { const f = path.join(outDir, name); fs.writeFileSync(f, Buffer.concat(parts)); return f; };
    const hostileLengths = [
      write("key-len-2p32.gguf", [header(0, 1), u64(2 ** 32 + 1), Buffer.from("k"), u32(0), Buffer.from([1])]),
      write("value-len-2p32.gguf", [header(0, 1), str("v"), u32(8), u64(2 ** 32 + 1), Buffer.from("x".repeat(8))]),
      write("key-len-3e9.gguf", [header(0, 1), u64(3e9), Buffer.from("k"), u32(0), Buffer.from([1])]),
    ];
    let reuse = null;
    for (const file of hostileLengths) {
      const { page, state } = await open(browser, file, reuse);
      reuse = page;
      const e = state.error || {};
      const d = /offset 0x[0-9a-f]+ \((\d+)\): (.*?): (.*)/.exec(spawnSync(gguf, ["dump", file]).stderr.toString().trim());
      console.log(`inspector, ${path.basename(file)}: ${JSON.stringify(e)}`);
      check(d && e.offset === Number(d[1]) && e.path === d[2] && e.message === d[3], `${path.basename(file)}: page says ${JSON.stringify(e)}, gguf dump ${d && d[0]}`);
      check(state.errors.length === 0, `${path.basename(file)}: page errors ${state.errors}`);
    }

    // tokenizer.ggml.tokens that is not an array: shown as what it is, no exception.
    for (const [name, value] of [["string", Buffer.concat([u32(8), str("a b c")])], ["u32", Buffer.concat([u32(4), u32(3)])]]) {
      const file = write(`tokens-${name}.gguf`, [header(0, 1), str("tokenizer.ggml.tokens"), value, Buffer.alloc(32)]);
      const { page, state } = await open(browser, file, reuse);
      check(!state.error && state.errors.length === 0, `tokens as ${name}: ${JSON.stringify(state.error)} ${state.errors}`);
      const shown = await page.locator("#summaryTable tr[data-field=tokens] td").nth(1).textContent().catch(() => null);
      check(shown === `not an array: ${name === "u32" ? "uint32" : "string"}`, `tokens as ${name}: the summary shows ${shown}`);
      if (!state.error) await sameRows(page, mapJson(gguf, file), `tokens as ${name}`);
    }
    await reuse.close();

    // Big headers: parsed once, with progress, within the page's limits.
    {
      // 200,000 tensor infos (8.6 MB of header): finishes, progress shown on the way.
      const n = 200000, parts = [header(n, 0)];
      for (let i = 0; i < n; i++) parts.push(str(`t${String(i).padStart(6, "0")}`), u32(1), u64(32), u32(0), u64(i * 128));
      const file = write("tensors-200k.gguf", parts);
      const { page, state } = await open(browser, file);
      console.log(`inspector, ${n} tensor infos (${fs.statSync(file).size} bytes): shown in ${state.ms} ms, ${state.progressShown} progress updates, last ${JSON.stringify(state.progress)}`);
      check(!state.error && state.errors.length === 0, `200k tensors: ${JSON.stringify(state.error)} ${state.errors}`);
      check(state.summary && state.summary.tensors === String(n), `200k tensors: summary ${JSON.stringify(state.summary)}`);
      check(state.progressShown > 0 && state.progress.items > 0, `200k tensors: no progress shown`);
      await page.close();
      fs.rmSync(file);
    }
    {
      // 2^30 u8 elements in a 1 GiB (and 1 MiB) sparse file: the page's 256 MiB header limit, at once.
      const file = path.join(outDir, "array-2p30.gguf");
      fs.rmSync(file, { force: true });
      execFileSync("truncate", ["-s", "1025M", file]);
      const h = Buffer.concat([header(0, 1), str("big"), u32(9), u32(0), u64(2 ** 30)]);
      const fd = fs.openSync(file, "r+");
      fs.writeSync(fd, h, 0, h.length, 0);
      fs.closeSync(fd);
      const { page, state } = await open(browser, file);
      const e = state.error || {};
      console.log(`inspector, 2^30-element array in a 1 GiB sparse file: ${JSON.stringify(e)} in ${state.ms} ms, read ${state.sliced} bytes`);
      check(e.offset === h.length - 8 && e.path === 'kv[0] "big".len' && /256 MiB limit/.test(e.message), `2^30 array: ${JSON.stringify(e)}`);
      check(state.sliced <= 2 ** 20, `2^30 array: read ${state.sliced} bytes`);
      await page.close();
      fs.rmSync(file);
    }
    {
      // 5,000,000 u8 elements (5 MB): past the page's item limit, said so.
      const file = write("array-5M.gguf", [header(0, 1), str("many"), u32(9), u32(0), u64(5e6), Buffer.alloc(5e6)]);
      const { page, state } = await open(browser, file);
      const e = state.error || {};
      console.log(`inspector, 5M-element array: ${JSON.stringify(e)} in ${state.ms} ms`);
      check(e.path === 'kv[0] "many".len' && /inspector's limit/.test(e.message), `5M array: ${JSON.stringify(e)}`);
      await page.close();
      fs.rmSync(file);
    }
  } finally {
    await browser.close();
  }
  console.log(failures() ? `inspector: ${failures()} failures` : "inspector: all checks passed");
  process.exit(failures() ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
