// The inspector page: reads the chosen file's header in File.slice() pages (1 MiB first, then on
// as far as the parser asks, never the whole file), hands them to the worker, and shows the
// summary, tensor table, upload advice and the map viewer; then hands the header to the
// analysis worker (web/src/analysis.js, the Rust of crates/gguf-wasm) for the chat templates,
// llama.cpp's verdict and the memory estimate. Nothing leaves the page.
"use strict";

const MiB = 1 << 20;
const LIMIT = 256 * MiB; // as in the worker
const $ = (id) => document.getElementById(id);
const workerUrl = URL.createObjectURL(new Blob([$("worker-src").textContent], { type: "text/javascript" }));
const analysisUrl = URL.createObjectURL(new Blob([$("analysis-src").textContent], { type: "text/javascript" }));
const fmt = (n) => Number(n).toLocaleString("en");
window.gguf_inspector = { bytesRead: 0, done: false };
let analyst = null; // the current file's analysis worker

// The module of crates/gguf-wasm, compiled once: gzipped and base64-encoded in the page.
let wasmModule = null;
function compiled() {
  if (!wasmModule) {
    const gz = Uint8Array.from(atob($("wasm-gz").textContent), (c) => c.charCodeAt(0));
    const stream = new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"));
    wasmModule = new Response(stream).arrayBuffer().then((b) => WebAssembly.compile(b));
  }
  return wasmModule;
}

function cell(tr, text, tag) {
  const td = document.createElement(tag || "td");
  td.textContent = text;
  tr.append(td);
}
function table(el, rows, head) {
  el.replaceChildren();
  if (head) {
    const tr = document.createElement("tr");
    head.forEach((h) => cell(tr, h, "th"));
    el.append(tr);
  }
  for (const r of rows) {
    const tr = document.createElement("tr");
    r.forEach((v) => cell(tr, v));
    el.append(tr);
  }
}

function inspect(file) {
  const worker = new Worker(workerUrl);
  const started = performance.now();
  let end = 0;
  const state = (window.gguf_inspector = { bytesRead: 0, done: false, name: file.name });
  $("error").textContent = $("progress").textContent = "";
  for (const id of ["panels", "analysis", "mapHeader", "mapMain"]) $(id).classList.add("hidden");
  if (analyst) analyst.terminate();
  analyst = null;
  const readTo = async (target) => {
    const next = Math.min(file.size, target);
    const page = await file.slice(end, next).arrayBuffer();
    state.bytesRead += page.byteLength;
    end = next;
    worker.postMessage({ page, size: file.size }, [page]);
  };
  worker.onmessage = (e) => {
    const m = e.data;
    // Read on in 1 MiB steps, or further when the parser names a larger need.
    if (m.need !== undefined) {
      state.progress = m.progress;
      state.progressShown = (state.progressShown || 0) + 1;
      $("progress").textContent = `reading the header: ${fmt(m.progress.at)} bytes, ${fmt(m.progress.items)} keys, tensor infos and array elements so far`;
      return readTo(Math.min(LIMIT, Math.max(end + MiB, Math.ceil(m.need / 65536) * 65536)));
    }
    $("progress").textContent = "";
    worker.terminate();
    state.done = true;
    state.ms = Math.round(performance.now() - started);
    if (m.error) {
      state.error = m.error;
      $("error").textContent = `${file.name}: offset ${m.error.offset} (0x${m.error.offset.toString(16)}): ${m.error.path}: ${m.error.message}`;
      return;
    }
    show(file, m, state);
  };
  readTo(MiB);
}

function show(file, m, state) {
  const r = m.result;
  const tokens = r.rows.find((row) => row[3] === "kv" && row[4].endsWith(' "tokenizer.ggml.tokens"'));
  state.summary = {
    version: m.version,
    endian: m.bigEndian ? "big" : "little",
    tensors: m.counts[0],
    kvs: m.counts[1],
    alignment: r.alignment,
    dataOffset: r.dataOffset,
    fileSize: file.size,
    // A count only when it is an array; any other type is shown as what it is.
    tokens: !tokens ? null : /^array\[/.test(tokens[5]) ? tokens[5].match(/; (\d+)\]$/)[1] : `not an array: ${tokens[5]}`,
  };
  table($("summaryTable"), [
    ["file", file.name],
    ["version", `GGUF v${m.version}`],
    ["byte order", state.summary.endian + " endian"],
    ["tensors", fmt(m.counts[0])],
    ["key/values", fmt(m.counts[1])],
    ["tokens", state.summary.tokens === null ? "—" : /^\d+$/.test(state.summary.tokens) ? fmt(state.summary.tokens) : state.summary.tokens],
    ["alignment", r.alignment],
    ["tensor data at", `${fmt(r.dataOffset)} (0x${r.dataOffset.toString(16)})`],
    ["file size", `${fmt(file.size)} bytes`],
    ["bytes read", `${fmt(state.bytesRead)} (${(state.bytesRead / file.size * 100).toPrecision(3)}% of the file) in ${state.ms} ms`],
  ]);
  $("summaryTable").querySelectorAll("tr").forEach((tr, i) => (tr.dataset.field = ["file", "version", "endian", "tensors", "kvs", "tokens", "alignment", "data", "size", "read"][i]));
  table($("tensors"), r.tensors.map((t) => [t.name, t.type, "[" + t.dims.join(", ") + "]", t.offset, t.bytes === null ? "?" : t.bytes]), ["name", "type", "dims", "offset", "bytes"]);
  advise(file, m, r);
  for (const id of ["panels", "analysis", "mapHeader", "mapMain"]) $(id).classList.remove("hidden");
  // A fresh copy of the viewer's elements for each file: the previous file's listeners go.
  for (const id of ["mapHeader", "mapMain"]) $(id).replaceWith($(id).cloneNode(true));
  showMap({ title: file.name, file_size: file.size, count_width: r.cw, rows: r.rows }, new Uint8Array(m.header));
  // After the map, so that compiling and running the module never delays it.
  analyse(m.header.slice(0), file.size, state);
}

// What a server accepting uploads of files like this one should check, with this file's figures.
function advise(file, m, r) {
  let longest = 0, biggest = 0, maxDims = 0, outside = 0;
  for (const row of r.rows) {
    if (row[3] === "string_len") longest = Math.max(longest, Number(row[5]));
    if (row[7]) for (const l of row[7]) longest = Math.max(longest, l - r.cw);
    if (row[3] === "count" && row[4].endsWith(".len")) biggest = Math.max(biggest, Number(row[5]));
    if (row[3] === "n_dims") maxDims = Math.max(maxDims, Number(row[5]));
  }
  for (const t of r.tensors) if (t.bytes === null || BigInt(t.offset) + BigInt(t.bytes) > BigInt(file.size)) outside++;
  const items = [
    [true, `Magic: the first 4 bytes are "GGUF"; reject anything else.`],
    [m.version >= 2, `Version ${m.version}: accept 2 and 3 (v1 is obsolete, 4+ unknown).`],
    [!m.bigEndian, `Byte order: ${m.bigEndian ? "big" : "little"} endian; llama.cpp's loaders expect little endian.`],
    [true, `Header: ${fmt(r.dataOffset)} bytes here; read it in pages and cap it (reject a header past your limit).`],
    [true, `Strings: longest ${fmt(longest)} bytes here; reject a length larger than the bytes left, and set a cap.`],
    [true, `Arrays: largest ${fmt(biggest)} elements here; reject a count whose minimum size exceeds the bytes left.`],
    [maxDims <= 4, `Tensors: at most ${maxDims} dims here; reject n_dims > 4 and unknown ggml types.`],
    [outside === 0, outside ? `${outside} tensor(s) have no size or lie past the end of the file: reject.` : "Every tensor's data lies inside the file."],
  ];
  // A chat template is a program (Jinja) that runtimes execute on every request: the one part
  // of a GGUF file that is code. Its screen result comes with the analysis.
  const templates = r.rows.filter((row) => row[3] === "kv" && /^kv\[\d+\] "tokenizer\.chat_template(\..*)?"$/.test(row[4])).length;
  items.push(templates
    ? ["warn", `Code: ${templates} chat template${templates > 1 ? "s" : ""} (Jinja programs that runtimes execute on every request, not inert data): render only in a sandboxed engine, never with an unsandboxed jinja2 (CVE-2024-34359), and screen ${templates > 1 ? "them" : "it"} (below).`, "template"]
    : [true, "No chat template: nothing in this header is code; the rest is data, safe to parse under the limits above.", "template"]);
  items.push([true, "llama.cpp's model loader: analysing the header…", "loader"]);
  const ul = document.createElement("ul");
  for (const [ok, text, name] of items) {
    const li = document.createElement("li");
    li.textContent = text;
    if (ok !== true) li.className = ok === "warn" ? "warn" : "bad";
    if (name) li.dataset.item = name;
    ul.append(li);
  }
  const title = document.createElement("b");
  title.textContent = "Upload validation";
  $("advice").replaceChildren(title, ul);
}

// The analysis of the header by the module of crates/gguf-wasm, in its own worker.
function analyse(header, size, state) {
  const worker = (analyst = new Worker(analysisUrl));
  for (const id of ["templates", "loader", "fit"]) status(id, "analysing…");
  state.analysed = false;
  state.fit = null;
  worker.onmessage = (e) => {
    const m = e.data;
    if (worker !== analyst) return;
    if (m.analysis !== undefined) {
      state.analysisText = m.analysis;
      const a = (state.analysis = JSON.parse(m.analysis));
      if (a.error) {
        for (const id of ["templates", "loader"]) status(id, `the crate's parser refuses this header: ${a.error}`, "bad");
      } else {
        showTemplates(a.templates);
        showLoader(a.llama_cpp, a.releases);
      }
      state.analysed = true;
      askFit();
    } else if (m.fit !== undefined) {
      if (m.nCtx !== state.asked) return;
      state.fit = { nCtx: m.nCtx, text: m.fit };
      showFit(JSON.parse(m.fit), m.nCtx);
    } else if (m.failed !== undefined) {
      const message = `the analysis stopped: ${m.failed}`;
      if (m.nCtx === undefined) {
        state.analysisFailed = m.failed;
        for (const id of ["templates", "loader", "fit"]) status(id, message, "bad");
        state.analysed = true;
      } else {
        state.fit = { nCtx: m.nCtx, failed: m.failed };
        status("fit", message, "bad");
      }
    }
  };
  compiled()
    .then((module) => worker.postMessage({ module, header, size }, [header.buffer]))
    .catch((err) => {
      state.analysisFailed = String(err);
      for (const id of ["templates", "loader", "fit"]) status(id, `the analysis could not start: ${err}`, "bad");
      state.analysed = true;
    });
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}
// Replaces what a panel shows below its title (and, for the memory panel, its input).
function panel(id, ...nodes) {
  const box = $(id);
  box.querySelectorAll(":scope > .body").forEach((n) => n.remove());
  const body = el("div", undefined, "body");
  body.append(...nodes);
  box.append(body);
}
const status = (id, text, cls) => panel(id, el("div", text, "status" + (cls ? " " + cls : "")));
function list(lines) {
  const ul = el("ul");
  for (const [text, cls] of lines) ul.append(el("li", text, cls));
  return ul;
}
const where = (line, column) => (line == null ? "" : `${line}:${column == null ? 1 : column}: `);

// Every template with its screen findings, its lint and its source (as text, never run).
function showTemplates(report) {
  const nodes = [];
  if (!report.templates.length && !report.errors.length) nodes.push(el("div", "None: this file carries no chat template.", "status"));
  for (const t of report.templates) {
    const div = el("div", undefined, "template");
    div.dataset.key = t.key;
    div.append(el("div", `${t.key} (${fmt(t.bytes)} bytes)`, "key"));
    const high = t.screen.some((f) => f.severity !== "low");
    div.append(el("div", t.screen.length ? `Screen: ${t.screen.length} finding${t.screen.length > 1 ? "s" : ""}` : "Screen: nothing a chat template should not need.", t.screen.length ? (high ? "bad" : "warn") : "ok"));
    if (t.screen.length) div.append(list(t.screen.map((f) => [`${where(f.line, f.column)}${f.severity} [${f.code}] ${f.message}`, f.severity === "low" ? "warn" : "bad"])));
    div.append(el("div", t.lint.length ? `Lint: ${t.lint.length} diagnostic${t.lint.length > 1 ? "s" : ""}` : "Lint: renders a one-message and an ordinary conversation, opens the assistant's turn.", t.lint.length ? (t.lint.some((d) => d.level === "error") ? "bad" : "warn") : "ok"));
    if (t.lint.length) div.append(list(t.lint.map((d) => [`${d.level} [${d.code}] ${where(d.line, d.column)}${d.message}`, d.level === "error" ? "bad" : "warn"])));
    const details = el("details");
    details.append(el("summary", "source"), el("pre", t.source, "source"));
    div.append(details);
    nodes.push(div);
  }
  for (const e of report.errors) nodes.push(el("div", `${e.key}: ${e.problem}`, "bad"));
  panel("templates", ...nodes);
  // The advisory's template item, with the screen's result.
  const item = document.querySelector('#advice li[data-item="template"]');
  const findings = report.templates.reduce((n, t) => n + t.screen.length, 0);
  if (item && report.templates.length) {
    item.textContent += findings ? ` The screen found ${findings} thing${findings > 1 ? "s" : ""} a chat template never needs: treat this file as hostile.` : " The screen found nothing a chat template never needs.";
    if (findings) item.className = "bad";
  }
}

// The newest llama.cpp's verdict from the header, as `gguf check --profile llama.cpp`, and
// each release's, as `gguf check --releases` (newest first).
function showLoader(v, releases) {
  const newest = `llama.cpp (llama-cpp-python ${releases[0].release})`;
  const verdict = v.accepted
    ? el("div", `${newest} accepts this file, as far as the header shows (the container rules of its ggml and the model schema of its architecture; the tensor data is not read).`, "ok verdict")
    : el("div", `${newest} rejects this file: its loader fails or aborts on it.`, "bad verdict");
  verdict.dataset.accepted = v.accepted;
  const table = el("table", undefined, "releases");
  for (const r of releases) {
    const tr = el("tr");
    tr.dataset.release = r.release;
    tr.dataset.loads = r.loads;
    const why = r.reason ? `: [${r.reason.code}] ${r.reason.path ? r.reason.path + ": " : ""}${r.reason.message}` : "";
    const said = r.loads ? (r.vocab_only ? "loads the vocabulary (vocab_only; no tensors)" : "loads") : "does not load";
    tr.append(el("td", `llama-cpp-python ${r.release}`), el("td", said + why, r.loads ? "" : "bad"));
    table.append(tr);
  }
  const rows = v.diagnostics.map((d) => [`${d.level} [${d.code}] ${d.path ? d.path + ": " : ""}${d.message}`, d.level === "error" ? "bad" : d.level === "warning" ? "warn" : ""]);
  panel("loader", verdict, table, ...(rows.length ? [list(rows)] : []));
  const item = document.querySelector('#advice li[data-item="loader"]');
  const errors = v.diagnostics.filter((d) => d.level === "error").length;
  item.textContent = v.accepted
    ? `${newest}'s model loader accepts it, as far as the header shows (the rules below).`
    : `${newest}'s model loader rejects it (${errors} error${errors === 1 ? "" : "s"} below): reject it too, or tell the uploader why.`;
  item.className = v.accepted ? "" : "bad";
}

function askFit() {
  const state = window.gguf_inspector;
  const text = $("ctx").value.trim();
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(n <= 4294967295)) return status("fit", "The context size is a whole number from 0 to 4,294,967,295.", "bad");
  state.asked = n;
  status("fit", "estimating…");
  analyst.postMessage({ fit: n });
}

const bytes = (n) => `${fmt(n)} (${(n / 2 ** 20).toFixed(1)} MiB)`;
// The estimate per device, as `gguf fit`'s table: weights, KV cache, output, compute, total.
function showFit(estimates, nCtx) {
  if (estimates.error) return status("fit", estimates.error, "bad");
  const e = estimates[0];
  const t = el("table");
  const head = el("tr");
  for (const h of ["device", "weights", "KV cache", "output", "compute*", "total"]) head.append(el("th", h));
  t.append(head);
  for (const d of e.devices) {
    const tr = el("tr");
    tr.dataset.device = d.device;
    tr.append(el("td", d.device));
    // compute null: not estimated (an architecture whose graph gguf-fit does not model; GPUs never on this page)
    for (const k of ["weights", "cache", "output", "compute", "total"]) tr.append(el("td", d[k] === null ? "not estimated" : bytes(d[k]), "n"));
    t.append(tr);
  }
  const caches = e.caches.map((c) => [`${c.kind}${c.swa ? " (sliding window)" : ""}: ${fmt(c.cells)} cells, K ${c.type_k || "-"} ${bytes(c.k_bytes)}, V ${c.type_v || "-"} ${bytes(c.v_bytes)}`]);
  panel("fit", el("div", `${e.architecture}, context ${fmt(e.n_ctx)}${nCtx === 0 ? " (the training context)" : ""}, batch ${fmt(e.n_batch)}, micro-batch ${fmt(e.n_ubatch)}:`), t, list(caches), el("div", `* the compute buffer is an estimate; the other figures are the sizes llama.cpp allocates (the llama.cpp vendored in llama-cpp-python ${e.release}, with its defaults). More knobs: gguf fit --help.`));
}

$("ctx").addEventListener("change", () => analyst && window.gguf_inspector.analysed && askFit());

$("file").addEventListener("change", (e) => e.target.files[0] && inspect(e.target.files[0]));
const drop = $("drop");
document.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
document.addEventListener("dragleave", () => drop.classList.remove("over"));
document.addEventListener("drop", (e) => {
  e.preventDefault();
  drop.classList.remove("over");
  if (e.dataTransfer.files[0]) inspect(e.dataTransfer.files[0]);
});
