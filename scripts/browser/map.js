#!/usr/bin/env node
// Drives the `gguf map --html` page in headless Chromium and checks it against `gguf map --json`.
//
// Usage: node map.js GGUF_BIN OUTDIR FILE...
//
// For each FILE: writes OUTDIR/NAME.map.html, opens it, then
//   - clicks the search result for every key (and up to 3 tensor names) and requires the
//     selected range, path and value to equal the JSON row's;
//   - opens a key's row in the tree and clicks its `.key` child, and (when there are tensors)
//     a tensor's `.dims[0]` child, with the same requirement;
//   - clicks bytes in the hex pane and requires the selection to be the innermost JSON row
//     holding that byte.
// Saves OUTDIR/NAME.map.png and prints the page size and first paint time. Exits 1 on any
// difference.
"use strict";

const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");
const { launch, check, failures } = require("./common");

async function mapPage(browser, gguf, outDir, file) {
  const name = path.basename(file);
  const page_path = path.join(outDir, name + ".map.html");
  execFileSync(gguf, ["map", file, "--html", page_path]);
  const rows = execFileSync(gguf, ["map", "--json", file], { maxBuffer: 1 << 30 })
    .toString()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const byPath = new Map(rows.map((r) => [r.path, r]));
  const page = await browser.newPage({ viewport: { width: 1500, height: 800 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const started = Date.now();
  await page.goto("file://" + path.resolve(page_path));
  await page.waitForFunction(() => window.gguf_map, null, { timeout: 120000 });
  const loaded = Date.now() - started;
  const [paint, ready] = await page.evaluate(() => [
    Math.round(performance.getEntriesByName("first-contentful-paint")[0].startTime),
    Math.round(window.gguf_map.ready),
  ]);
  const size = fs.statSync(page_path).size;
  const header = rows.find((r) => r.kind === "tensor_data").offset;
  console.log(
    `${name}: page ${size} bytes (${(size / header).toFixed(2)}x the ${header}-byte header), ` +
      `first contentful paint ${paint} ms, tree and hex drawn ${ready} ms (${loaded} ms wall)`,
  );
  check(size <= 3 * header + 200000, `${name}: page ${size} bytes is over 3x the header`);

  const selection = () => page.evaluate(() => ({ ...document.getElementById("details").dataset }));
  const expectRow = async (what, row) => {
    const got = await selection();
    const want = { offset: String(row.offset), length: String(row.length), path: row.path, value: row.value };
    if (typeof row.value !== "string") want.value = "bytes " + row.value.bytes_hex;
    check(JSON.stringify(got) === JSON.stringify(want), `${name}: ${what}: page ${JSON.stringify(got)}, json ${JSON.stringify(want)}`);
  };

  // Search and click keys and tensor names.
  const named = rows.filter((r) => r.kind === "kv").concat(rows.filter((r) => r.kind === "tensor_info").slice(0, 3));
  for (const row of named) {
    await page.fill("#search", row.path);
    const hit = page.locator("#results div", { hasText: row.path }).first();
    await hit.click();
    await expectRow(`search ${row.path}`, row);
  }

  // Click a child row in the tree: the key of the last kv, the first dim of the first tensor.
  const clickChild = async (parent, suffix) => {
    const child = byPath.get(parent.path + suffix);
    await page.fill("#search", parent.path);
    await page.locator("#results div", { hasText: parent.path }).first().click();
    await page.locator(".row.sel .tog").click(); // expand the selected row
    await page.locator(`.row:has(.label:text-is("${suffix}"))`).first().click();
    await expectRow(`tree ${child.path}`, child);
  };
  const kvs = rows.filter((r) => r.kind === "kv");
  await clickChild(kvs[kvs.length - 1], ".key");
  const tensor = rows.find((r) => r.kind === "tensor_info");
  if (tensor) await clickChild(tensor, ".dims[0]");

  // Click bytes in the hex pane: the innermost row holding the byte is selected.
  const innermost = (at) =>
    rows
      .filter((r) => r.offset <= at && at < r.offset + r.length)
      .reduce((best, r) => (best === null || r.depth > best.depth ? r : best), null);
  const held = Math.min(header, fs.statSync(file).size);
  const picks = [0, 5, 24 + 9, Math.floor(held / 2), held - 1];
  for (const at of picks) {
    await page.evaluate((at) => window.gguf_map.reveal(at), at);
    await page.locator(`#hex span.b[data-at="${at}"]`).click();
    await expectRow(`hex byte ${at}`, innermost(at));
  }
  // "expand all" turns the tree into the flat offset map: the same rows as `gguf map --json`.
  await page.locator("#expandAll").click();
  const shown = await page.evaluate(() => {
    const tree = document.getElementById("tree");
    tree.scrollTop = 0;
    tree.dispatchEvent(new Event("scroll"));
    return {
      total: window.gguf_map.shown(),
      first: [...document.querySelectorAll("#treeSpacer .row .off")].slice(0, 30).map((o) => o.textContent.trim()),
    };
  });
  check(shown.total === rows.length, `${name}: expand all shows ${shown.total} rows, gguf map --json has ${rows.length}`);
  const want = rows.slice(0, shown.first.length).map((r) => "0x" + r.offset.toString(16) + " +" + r.length);
  check(JSON.stringify(shown.first) === JSON.stringify(want), `${name}: expanded rows ${shown.first} differ from ${want}`);
  await page.locator("#expandAll").click();
  await page.screenshot({ path: path.join(outDir, name + ".map.png") });
  check(errors.length === 0, `${name}: page errors: ${errors.join("; ")}`);
  await page.close();
}

async function main() {
  const [gguf, outDir, ...files] = process.argv.slice(2);
  fs.mkdirSync(outDir, { recursive: true });
  const browser = await launch();
  try {
    for (const file of files) await mapPage(browser, gguf, outDir, file);
  } finally {
    await browser.close();
  }
  console.log(failures() ? `map page: ${failures()} failures` : "map page: all checks passed");
  process.exit(failures() ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
