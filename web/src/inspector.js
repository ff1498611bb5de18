// The inspector page: reads the chosen file's header in File.slice() pages (1 MiB first, then on
// as far as the parser asks, never the whole file), hands them to the worker, and shows the
// summary, tensor table, upload advice and the map viewer. Nothing leaves the page.
"use strict";

const MiB = 1 << 20;
const LIMIT = 256 * MiB; // as in the worker
const $ = (id) => document.getElementById(id);
const workerUrl = URL.createObjectURL(new Blob([$("worker-src").textContent], { type: "text/javascript" }));
const fmt = (n) => Number(n).toLocaleString("en");
window.gguf_inspector = { bytesRead: 0, done: false };

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
  for (const id of ["panels", "mapHeader", "mapMain"]) $(id).classList.add("hidden");
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
  for (const id of ["panels", "mapHeader", "mapMain"]) $(id).classList.remove("hidden");
  // A fresh copy of the viewer's elements for each file: the previous file's listeners go.
  for (const id of ["mapHeader", "mapMain"]) $(id).replaceWith($(id).cloneNode(true));
  showMap({ title: file.name, file_size: file.size, count_width: r.cw, rows: r.rows }, new Uint8Array(m.header));
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
  const ul = document.createElement("ul");
  for (const [ok, text] of items) {
    const li = document.createElement("li");
    li.textContent = text;
    if (!ok) li.className = "bad";
    ul.append(li);
  }
  const title = document.createElement("b");
  title.textContent = "Upload validation";
  $("advice").replaceChildren(title, ul);
}

$("file").addEventListener("change", (e) => e.target.files[0] && inspect(e.target.files[0]));
const drop = $("drop");
document.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
document.addEventListener("dragleave", () => drop.classList.remove("over"));
document.addEventListener("drop", (e) => {
  e.preventDefault();
  drop.classList.remove("over");
  if (e.dataTransfer.files[0]) inspect(e.dataTransfer.files[0]);
});
