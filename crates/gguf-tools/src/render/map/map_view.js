// The map viewer shared by `gguf map --html` and web/inspector.html: a virtualised tree of the
// rows beside a virtualised hex pane, search over keys and tensor names, a details panel.
//
// showMap(D, bytes): D = {title, file_size, count_width, rows}, each row
// [offset, length, depth, kind, path, value, count, lens?] in preorder (lens: the byte length of
// each element of a string array, whose rows are not listed); bytes = the header's bytes.
// It fills #title, #summary, #search, #results, #tree, #hex and #details.
"use strict";

function showMap(D, bytes) {
  const cw = D.count_width;
  const utf8 = new TextDecoder("utf-8");

  // Nodes in preorder; string-array elements are expanded from their array's `lens`.
  const off = [], len = [], depth = [], kind = [], path = [], value = [], count = [], parent = [];
  const stack = [];
  function push(o, l, d, k, p, v, c) {
    while (stack.length && depth[stack[stack.length - 1]] >= d) stack.pop();
    const i = off.length;
    off.push(o); len.push(l); depth.push(d); kind.push(k); path.push(p); value.push(v); count.push(c);
    parent.push(stack.length ? stack[stack.length - 1] : -1);
    stack.push(i);
    return i;
  }
  let pending = null;
  for (const r of D.rows) {
    push(r[0], r[1], r[2], r[3], r[4], r[5], r[6]);
    if (r[7]) pending = { lens: r[7], at: r[0] + 4 + cw, depth: r[2] + 1, base: r[4].replace(/\.value$/, ""), left: 2 };
    else if (pending && --pending.left === 0) {
      let at = pending.at;
      pending.lens.forEach((l, j) => { push(at, l, pending.depth, "string", pending.base + "[" + j + "]", null, 1); at += l; });
      pending = null;
    }
  }
  const n = off.length;
  const end = new Int32Array(n); // one past the last node of each subtree
  for (let i = n - 1; i >= 0; i--) {
    let e = i + 1;
    while (e < n && depth[e] > depth[i]) e = end[e];
    end[i] = e;
  }
  function text(i) {
    if (value[i] !== null) return typeof value[i] === "string" ? value[i] : "bytes " + value[i].bytes_hex;
    return utf8.decode(bytes.subarray(off[i] + cw, off[i] + len[i]));
  }
  function label(i) {
    const p = parent[i];
    // A kv's array elements are named after the kv (`kv[15] "k"[7]`), not its `.value` row.
    const prefix = p >= 0 ? path[p].replace(/\.value$/, "") : "";
    return p >= 0 && path[i].startsWith(prefix) && path[i] !== prefix ? path[i].slice(prefix.length) : path[i];
  }
  const isText = i => kind[i] === "string" || (value[i] !== null && typeof value[i] === "object");

  document.getElementById("title").textContent = D.title;
  const headerLen = bytes.length;
  document.getElementById("summary").textContent =
    `${D.file_size.toLocaleString("en")} bytes; header ${headerLen.toLocaleString("en")} bytes; ${n.toLocaleString("en")} constructs`;

  // The tree: a virtual list over the visible nodes.
  const ROW = 20;
  const expanded = new Uint8Array(n);
  let visible = [];
  function rebuild() {
    visible = [];
    for (let i = 0; i < n; i = expanded[i] ? i + 1 : end[i]) visible.push(i);
    treeSpacer.style.height = visible.length * ROW + "px";
  }
  const tree = document.getElementById("tree"), treeSpacer = document.getElementById("treeSpacer");
  let selected = -1;
  function drawTree() {
    const first = Math.max(0, Math.floor(tree.scrollTop / ROW) - 5);
    const last = Math.min(visible.length, first + Math.ceil(tree.clientHeight / ROW) + 10);
    const frag = document.createDocumentFragment();
    for (let v = first; v < last; v++) {
      const i = visible[v];
      const row = document.createElement("div");
      row.className = "row" + (i === selected ? " sel" : "");
      row.style.top = v * ROW + "px";
      row.style.paddingLeft = 4 + depth[i] * 14 + "px";
      row.dataset.node = i;
      const tog = document.createElement("span");
      tog.className = "tog";
      tog.textContent = end[i] > i + 1 ? (expanded[i] ? "\u25be" : "\u25b8") : "";
      const o = document.createElement("span");
      o.className = "off";
      o.textContent = "0x" + off[i].toString(16) + " +" + len[i] + " ";
      const l = document.createElement("span");
      l.className = "label";
      l.textContent = label(i);
      const k = document.createElement("span");
      k.className = "kind";
      k.textContent = kind[i] + " ";
      const val = document.createElement("span");
      val.className = "val";
      const t = text(i);
      val.textContent = isText(i) ? JSON.stringify(t.length > 80 ? t.slice(0, 80) + "\u2026" : t) : t;
      row.append(tog, o, l, k, val);
      frag.append(row);
    }
    treeSpacer.replaceChildren(frag);
  }
  tree.addEventListener("scroll", drawTree);
  // Everything expanded, the tree is the flat offset map of `gguf map`: every row in file order.
  const expandAll = document.getElementById("expandAll");
  expandAll.textContent = "expand all";
  expandAll.addEventListener("click", () => {
    const open = expandAll.textContent === "expand all";
    expanded.fill(open ? 1 : 0);
    expandAll.textContent = open ? "collapse all" : "expand all";
    rebuild();
    drawTree();
  });
  treeSpacer.addEventListener("click", e => {
    const row = e.target.closest(".row");
    if (!row) return;
    const i = +row.dataset.node;
    if (e.target.classList.contains("tog")) { expanded[i] ^= 1; rebuild(); drawTree(); return; }
    select(i, false);
  });

  // The hex pane: 16 bytes a line, only the visible lines in the DOM.
  const LINE = 18;
  const hex = document.getElementById("hex"), hexSpacer = document.getElementById("hexSpacer");
  const lines = Math.ceil(headerLen / 16);
  hexSpacer.style.height = lines * LINE + "px";
  const h2 = b => (b < 16 ? "0" : "") + b.toString(16);
  function drawHex() {
    const first = Math.max(0, Math.floor(hex.scrollTop / LINE) - 5);
    const last = Math.min(lines, first + Math.ceil(hex.clientHeight / LINE) + 10);
    const a = selected >= 0 ? off[selected] : -1, b = selected >= 0 ? off[selected] + len[selected] : -1;
    const frag = document.createDocumentFragment();
    for (let line = first; line < last; line++) {
      const div = document.createElement("div");
      div.className = "line";
      div.style.top = line * LINE + "px";
      const start = line * 16;
      const o = document.createElement("span");
      o.className = "off";
      o.textContent = start.toString(16).padStart(8, "0") + "  ";
      div.append(o);
      const ascii = [];
      for (let x = start; x < start + 16; x++) {
        const s = document.createElement("span");
        const t = document.createElement("span");
        if (x < headerLen) {
          s.className = "b" + (x >= a && x < b ? " sel" : "");
          s.textContent = h2(bytes[x]);
          s.dataset.at = x;
          t.className = "a" + (x >= a && x < b ? " sel" : "");
          t.textContent = bytes[x] >= 32 && bytes[x] < 127 ? String.fromCharCode(bytes[x]) : ".";
          t.dataset.at = x;
        } else s.textContent = "  ";
        div.append(s, " ");
        ascii.push(t);
      }
      div.append(" ", ...ascii);
      frag.append(div);
    }
    hexSpacer.replaceChildren(frag);
  }
  hex.addEventListener("scroll", drawHex);
  hexSpacer.addEventListener("click", e => {
    const at = e.target.dataset && e.target.dataset.at;
    if (at !== undefined) select(innermost(+at), true);
  });

  // The innermost construct holding byte `b`: the last node starting at or before it (a
  // preorder list is sorted by start), or the nearest of its ancestors that contains it.
  function innermost(b) {
    let lo = 0, hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (off[mid] <= b) lo = mid; else hi = mid - 1;
    }
    for (let i = lo; i >= 0; i = parent[i]) if (b >= off[i] && b < off[i] + len[i]) return i;
    return lo;
  }

  const details = document.getElementById("details");
  function select(i, fromHex) {
    selected = i;
    for (let p = parent[i]; p >= 0; p = parent[p]) expanded[p] = 1;
    rebuild();
    const v = visible.indexOf(i);
    if (v * ROW < tree.scrollTop || (v + 1) * ROW > tree.scrollTop + tree.clientHeight) tree.scrollTop = v * ROW - tree.clientHeight / 3;
    const line = Math.floor(off[i] / 16);
    if (!fromHex || line * LINE < hex.scrollTop || line * LINE > hex.scrollTop + hex.clientHeight - LINE) hex.scrollTop = line * LINE - hex.clientHeight / 3;
    drawTree();
    drawHex();
    const fields = [["path", path[i]], ["offset", off[i] + " (0x" + off[i].toString(16) + ")"], ["length", len[i]], ["kind", kind[i]], ["value", text(i)]];
    if (count[i] > 1) fields.push(["elements", count[i]]);
    details.replaceChildren(...fields.flatMap(([k, v]) => {
      const dt = document.createElement("dt"), dd = document.createElement("dd");
      dt.textContent = k; dd.textContent = v; dd.dataset.field = k;
      return [dt, dd];
    }));
    Object.assign(details.dataset, { offset: off[i], length: len[i], path: path[i], value: text(i) });
  }

  // Search over keys and tensor names.
  const search = document.getElementById("search"), results = document.getElementById("results");
  const named = [];
  for (let i = 0; i < n; i++) if (kind[i] === "kv" || kind[i] === "tensor_info") named.push(i);
  search.addEventListener("input", () => {
    const q = search.value.toLowerCase();
    results.replaceChildren();
    results.style.display = q ? "block" : "none";
    if (!q) return;
    for (const i of named) {
      if (!path[i].toLowerCase().includes(q)) continue;
      const div = document.createElement("div");
      div.textContent = path[i];
      div.addEventListener("click", () => { results.style.display = "none"; select(i, false); });
      results.append(div);
      if (results.childElementCount >= 200) break;
    }
  });

  for (let i = 0; i < n; i++) if (depth[i] === 0 && kind[i] === "header") expanded[i] = 1;
  rebuild();
  drawTree();
  drawHex();
  // For tests and measurements: the API, and when the page became ready (ms since navigation).
  function reveal(at) {
    hex.scrollTop = Math.floor(at / 16) * LINE - hex.clientHeight / 3;
    drawHex();
  }
  window.gguf_map = { select, innermost, reveal, nodes: n, shown: () => visible.length, path, off, len, ready: performance.now() };
  return window.gguf_map;
}
