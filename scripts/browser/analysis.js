#!/usr/bin/env node
// Drives the analysis panels of web/inspector.html (chat templates with lint and screen,
// llama.cpp's model loader, memory) in headless Chromium, and compares what the page's
// WebAssembly module returns with the native build of the same code and with the CLI.
//
// Usage: node analysis.js GGUF_BIN ANALYZE_BIN OUTDIR TEMPLATES_DIR MODEL_FILE
//
//   ANALYZE_BIN is crates/gguf-wasm's example `analyze` (the native reference);
//   TEMPLATES_DIR holds llama.cpp's models/templates/*.jinja (the real vendor templates).
// For MODEL_FILE, the fixtures of tests/llama/ and tests/conformance/, a vocabulary-only file,
// a file carrying every real template as a named variant, and hostile files (template-injection
// payloads, template text that is HTML, a template that is not text, a runaway loop):
//   - the page's analysis is byte-equal to `analyze FILE`'s;
//   - its llama.cpp verdict equals `gguf check --profile llama.cpp --json`'s (less "file");
//   - its memory estimate is byte-equal to `gguf fit --json --ctx-size N` for N = 4096 (the
//     default), then 512 and 0 typed into the context box (or the same error);
//   - each panel shows it: every template's key, its screen findings and lint, its source as
//     text (never run: no element, no script from it); the verdict; the device rows.
// Saves screenshots in OUTDIR and prints the times. Exits 1 on any failure.
"use strict";

const fs = require("fs");
const path = require("path");
const { execFileSync, spawnSync } = require("child_process");
const { launch, check, failures } = require("./common");

const pageUrl = "file://" + path.resolve(__dirname, "../../web/inspector.html");
const [gguf, analyzeBin, outDir, templatesDir, model] = process.argv.slice(2);

// Tiny GGUF files: string key/values only (and a u32 where a template must not be text).
const u32 = (n) => { const b = Buffer.alloc(4); b.writeUInt32LE(n); return b; };
const u64 = (n) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); return b; };
const str = (t) => Buffer.concat([u64(Buffer.byteLength(t)), Buffer.from(t)]);
function ggufWith(name, kvs) {
  const parts = [Buffer.from("GGUF"), u32(3), u64(0), u64(kvs.length)];
  for (const [k, v] of kvs) parts.push(str(k), typeof v === "number" ? Buffer.concat([u32(4), u32(v)]) : Buffer.concat([u32(8), str(v)]));
  const file = path.join(outDir, name);
  fs.writeFileSync(file, Buffer.concat(parts));
  return file;
}

// Keys sorted, so documents built by different code compare by content.
const canonical = (v) => JSON.stringify(v, (k, x) => (x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x));

function cliFit(file, nCtx) {
  const r = spawnSync(gguf, ["fit", "--json", "--ctx-size", String(nCtx), file], { maxBuffer: 1 << 30 });
  return { status: r.status, stdout: r.stdout.toString().trim(), stderr: r.stderr.toString().trim() };
}

async function inspect(page, file) {
  const started = Date.now();
  await page.setInputFiles("#file", file);
  await page
    .waitForFunction(() => {
      const s = window.gguf_inspector;
      return s.done && (s.error || (s.analysed && (s.fit || s.analysisFailed)));
    }, null, { timeout: 120000 })
    .catch((e) => check(false, `${path.basename(file)}: ${e}`));
  const state = await page.evaluate(() => window.gguf_inspector);
  state.wall = Date.now() - started;
  return state;
}

// The memory panel for the context size typed in, against gguf fit.
async function fitFor(page, file, name, nCtx, typed) {
  if (typed) {
    await page.fill("#ctx", String(nCtx));
    await page.dispatchEvent("#ctx", "change");
    await page.waitForFunction((n) => window.gguf_inspector.fit && window.gguf_inspector.fit.nCtx === n, nCtx, { timeout: 60000 }).catch((e) => check(false, `${name}: ctx ${nCtx}: ${e}`));
  }
  const fit = await page.evaluate(() => window.gguf_inspector.fit);
  const cli = cliFit(file, nCtx);
  if (cli.status === 0) {
    check(fit.text === cli.stdout, `${name}: ctx ${nCtx}: the page's estimate differs from gguf fit --json:\n  page ${fit.text && fit.text.slice(0, 300)}\n  cli  ${cli.stdout.slice(0, 300)}`);
    const want = JSON.parse(cli.stdout)[0].devices.map((d) => [d.device, d.total]);
    const shown = await page.evaluate(() => [...document.querySelectorAll("#fit tr[data-device]")].map((tr) => [tr.dataset.device, tr.cells[5].textContent]));
    check(JSON.stringify(shown.map(([d, t]) => [d, Number(t.split(" ")[0].replace(/,/g, ""))])) === JSON.stringify(want), `${name}: ctx ${nCtx}: the table shows ${JSON.stringify(shown)}, gguf fit ${JSON.stringify(want)}`);
    return JSON.parse(cli.stdout)[0].devices[0].total;
  }
  // gguf fit refuses (exit 1, "FILE: MESSAGE"): the page shows the same message.
  const message = fit.text && JSON.parse(fit.text).error;
  check(cli.status === 1 && message && cli.stderr.endsWith(message), `${name}: ctx ${nCtx}: page ${fit.text}, gguf fit exit ${cli.status} ${cli.stderr}`);
  const shown = await page.locator("#fit .body").textContent();
  check(message && shown.includes(message), `${name}: the memory panel shows "${shown}"`);
  return null;
}

async function compare(page, file, name, fits) {
  const state = await inspect(page, file);
  check(!state.error && !state.analysisFailed, `${name}: ${JSON.stringify(state.error || state.analysisFailed)}`);
  if (state.error || state.analysisFailed) return { state };
  const native = execFileSync(analyzeBin, [file], { maxBuffer: 1 << 30 }).toString().trim();
  check(state.analysisText === native, `${name}: the page's analysis differs from the native build's:\n  page   ${state.analysisText.slice(0, 300)}\n  native ${native.slice(0, 300)}`);
  const a = JSON.parse(state.analysisText);
  // llama.cpp's verdict, as gguf check gives it.
  const checked = JSON.parse(spawnSync(gguf, ["check", "--profile", "llama.cpp", "--json", file], { maxBuffer: 1 << 30 }).stdout.toString())[0];
  delete checked.file;
  check(canonical(a.llama_cpp) === canonical(checked), `${name}: verdict differs from gguf check --profile llama.cpp --json:\n  page ${canonical(a.llama_cpp).slice(0, 300)}\n  cli  ${canonical(checked).slice(0, 300)}`);
  const accepted = await page.locator("#loader .verdict").getAttribute("data-accepted");
  check(accepted === String(checked.accepted), `${name}: the loader panel says accepted=${accepted}`);
  const said = await page.locator('#advice li[data-item="loader"]').textContent();
  check(said.includes(checked.accepted ? "loader accepts it" : "loader rejects it"), `${name}: the advisory says "${said}"`);
  // Each release's row, as gguf check --releases --json gives them.
  const releases = JSON.parse(spawnSync(gguf, ["check", "--releases", "--json", file], { maxBuffer: 1 << 30 }).stdout.toString())[0].releases;
  check(canonical(a.releases) === canonical(releases), `${name}: release rows differ from gguf check --releases --json:\n  page ${canonical(a.releases).slice(0, 300)}\n  cli  ${canonical(releases).slice(0, 300)}`);
  const loads = await page.evaluate(() => [...document.querySelectorAll("#loader tr[data-release]")].map((tr) => [tr.dataset.release, tr.dataset.loads]));
  check(JSON.stringify(loads) === JSON.stringify(releases.map((r) => [r.release, String(r.loads)])), `${name}: the release table shows ${JSON.stringify(loads)}`);
  const rows = await page.locator("#loader li").count();
  check(rows === checked.diagnostics.length, `${name}: the loader panel lists ${rows} diagnostics, gguf check ${checked.diagnostics.length}`);
  // Every template, its findings and its source as text.
  const shown = await page.evaluate(() =>
    [...document.querySelectorAll("#templates .template")].map((d) => ({ key: d.dataset.key, source: d.querySelector("pre.source").textContent, items: d.querySelectorAll("li").length })),
  );
  const want = a.templates.templates.map((t) => ({ key: t.key, source: t.source, items: t.screen.length + t.lint.length }));
  check(JSON.stringify(shown) === JSON.stringify(want), `${name}: the templates panel shows ${JSON.stringify(shown).slice(0, 300)}`);
  const advice = await page.locator('#advice li[data-item="template"]').textContent();
  // A template key whose value is not text still names a template (runtimes fail on it).
  check(a.templates.templates.length + a.templates.errors.length ? /^Code: \d+ chat template/.test(advice) && !/nothing in this header is code/.test(advice) : /^No chat template/.test(advice), `${name}: the advisory says "${advice}"`);
  const totals = [];
  for (const [i, nCtx] of fits.entries()) totals.push(await fitFor(page, file, name, nCtx, i > 0));
  if (fits.length > 1) await fitFor(page, file, name, 4096, true); // back to the default for the next file
  const findings = a.templates.templates.reduce((n, t) => n + t.screen.length, 0);
  console.log(`analysis, ${name}: shown in ${state.wall} ms; ${a.templates.templates.length} templates, ${findings} screen findings; llama.cpp ${checked.accepted ? "accepts" : "rejects"} (${checked.diagnostics.length} diagnostics); CPU total ${totals.map((t, i) => `${t === null ? "refused" : t} at ctx ${fits[i]}`).join(", ")}`);
  return { state, a };
}

async function main() {
  fs.mkdirSync(outDir, { recursive: true });
  const browser = await launch();
  const page = await browser.newPage({ viewport: { width: 1500, height: 1100 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("dialog", (d) => { errors.push(`a dialog opened: ${d.message()}`); d.dismiss(); });
  await page.goto(pageUrl);
  try {
    // A real model, with its template: every panel, three context sizes.
    await compare(page, model, "SmolLM2", [4096, 512, 0]);
    await page.screenshot({ path: path.join(outDir, "analysis-model.png") });
    // Fixtures llama.cpp's loader accepts and rejects (tests/llama/verdicts.json), and a
    // vocabulary-only file (fit refuses it, the loader rejects it).
    const root = path.resolve(__dirname, "../..");
    await compare(page, path.join(root, "tests/llama/minimal-llama-before-fix.gguf"), "minimal-llama-before-fix", [4096, 0]);
    await compare(page, path.join(root, "tests/conformance/cases/llama-8-tokens.gguf"), "llama-8-tokens", [4096]);
    await compare(page, path.join(root, "tests/corpus/ggml-vocab-phi-3.gguf"), "ggml-vocab-phi-3", [4096]);

    // Every real template (llama.cpp's models/templates/) as a named variant of one file.
    const jinja = fs.readdirSync(templatesDir).filter((f) => f.endsWith(".jinja")).sort();
    check(jinja.length >= 25, `${templatesDir}: ${jinja.length} templates`);
    const real = ggufWith("real-templates.gguf", jinja.map((f) => [`tokenizer.chat_template.${f.replace(/\.jinja$/, "")}`, fs.readFileSync(path.join(templatesDir, f), "utf8")]));
    const { a: realA } = await compare(page, real, `${jinja.length} real templates`, [4096]);
    if (realA) {
      const flagged = realA.templates.templates.filter((t) => t.screen.length).map((t) => t.key);
      check(flagged.length === 0, `real templates flagged by the screen: ${flagged}`);
    }

    // Published template-injection payloads (CVE-2024-34359 and the jinja2 SSTI chains), each a
    // named variant: every one flagged, the advisory says so.
    const payloads = [
      `{% for x in ().__class__.__base__.__subclasses__() %}{% if "warning" in x.__name__ %}{{x()._module.__builtins__['__import__']('os').popen("touch /tmp/retr0reg")}}{%endif%}{% endfor %}`,
      "{{ self.__init__.__globals__.__builtins__.__import__('os').popen('id').read() }}",
      "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
      "{{ ()|attr('__class__')|attr('__base__')|attr('__subclasses__')() }}",
      "{% include '/etc/passwd' %}",
    ];
    const hostile = ggufWith("template-payloads.gguf", [["general.architecture", "llama"], ...payloads.map((p, i) => [`tokenizer.chat_template.poc${i}`, p])]);
    const { a: pocA } = await compare(page, hostile, "injection payloads", [4096]);
    if (pocA) {
      const missed = pocA.templates.templates.filter((t) => !t.screen.length).map((t) => t.key);
      check(pocA.templates.templates.length === payloads.length && missed.length === 0, `payloads not flagged: ${missed}`);
      const advice = await page.locator('#advice li[data-item="template"]');
      check((await advice.getAttribute("class")) === "bad" && /treat this file as hostile/.test(await advice.textContent()), "payloads: the advisory does not call the file hostile");
    }
    await page.screenshot({ path: path.join(outDir, "analysis-payloads.png") });

    // Template text and a key that are HTML: shown as text, never parsed or run.
    const html = `{{ '</pre></details></div><script>window.pwned = 1</script>' }}<img src=x onerror="window.pwned = 2"><iframe srcdoc="<script>parent.pwned = 3</script>">`;
    const htmlFile = ggufWith("template-html.gguf", [["tokenizer.chat_template", html], ['tokenizer.chat_template.<img src=x onerror="window.pwned=4">', "{{ '<b>bold</b>' }}"]]);
    await compare(page, htmlFile, "HTML in templates", [4096]);
    await page.locator("#templates details").first().evaluate((d) => (d.open = true));
    await page.waitForTimeout(300);
    const injected = await page.evaluate(() => ({ pwned: window.pwned, elements: document.querySelectorAll("#analysis img, #analysis script, #analysis iframe, #analysis b:not(#analysis > div > b)").length }));
    check(injected.pwned === undefined && injected.elements === 0, `HTML in templates: ${JSON.stringify(injected)}`);
    await page.screenshot({ path: path.join(outDir, "analysis-html.png") });

    // A template that is not text, and a runaway loop (the renderer's limits end it).
    await compare(page, ggufWith("template-not-text.gguf", [["tokenizer.chat_template", 7]]), "template not text", [4096]);
    const errorsShown = await page.locator("#templates .body .bad").count();
    check(errorsShown === 1, `template not text: ${errorsShown} errors shown`);
    const loop = await compare(page, ggufWith("template-loop.gguf", [["tokenizer.chat_template", "{% for i in range(1000000000) %}{{ i }}{% endfor %}"]]), "runaway loop", [4096]);
    if (loop.a) check(loop.a.templates.templates[0].lint.length > 0, "runaway loop: no lint diagnostic");
    check(errors.length === 0, `page errors: ${errors}`);
  } finally {
    await browser.close();
  }
  console.log(failures() ? `analysis: ${failures()} failures` : "analysis: all checks passed");
  process.exit(failures() ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
