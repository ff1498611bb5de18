// The inspector's Web Worker: parses the pages the page has read with the parser generated from
// grammar/gguf.ksy (KaitaiStream and GgufFile are defined by the code inlined before this), and
// turns the parse into the map viewer's rows, with spans from the generated parser's debug
// records. Messages in: {page: ArrayBuffer, size: file size}, pages in file order. Messages out:
// {need: END, progress} (read on to END), {result}, or {error}.
//
// The pages are first walked by `scan`, a resumable skim that only follows lengths and counts
// (a generator: it pauses where the bytes run out and goes on from there with the next page),
// so the grammar's parser runs once, over the whole header, and only when the header is within
// the inspector's limits.
"use strict";

// The runtime reads u64/s64 into a double, exact only below 2^53: read a BigInt instead when a
// double would round.
for (const [name, signed, little] of [["readU8le", false, true], ["readU8be", false, false], ["readS8le", true, true], ["readS8be", true, false]]) {
  const original = KaitaiStream.prototype[name];
  KaitaiStream.prototype[name] = function () {
    const v = original.call(this);
    if (Number.isSafeInteger(v)) return v;
    this.seek(this.pos - 8);
    const b = this.readBytes(8);
    let x = 0n;
    for (let i = 0; i < 8; i++) x = (x << 8n) | BigInt(b[little ? 7 - i : i]);
    return signed ? BigInt.asIntN(64, x) : x;
  };
}

const TYPES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"];
// The generated parser's field prefix for each type: uint8Value, ..., stringElements, ...
const FIELD = TYPES;
const GGML = {};
for (const [k, v] of Object.entries(GgufFile.GgufFile.GgmlType)) if (typeof v === "number") GGML[v] = k.toLowerCase().replace(/_k$/, "_K");
const utf8 = new TextDecoder("utf-8", { fatal: true });
const lossy = new TextDecoder("utf-8");

// The most the inspector reads: a hostile count (a billion one-byte elements) is only known to
// be one when the bytes run out, so the reading stops here.
const LIMIT = 256 * 2 ** 20;
// The most keys, tensor infos and array elements shown: the parser records a span per element
// and the map a row per item, so a header of millions of them would exhaust the page first.
const MAX_ITEMS = 4 * 2 ** 20;
let buf = new Uint8Array(1 << 20);
let held = 0;

function text(s) {
  try {
    return utf8.decode(s.data);
  } catch (e) {
    return lossy.decode(s.data);
  }
}
// A name in a path, quoted as the crate's error paths quote it.
const quoted = (s) => '"' + s.replace(/"/g, '\\"') + '"';
const scalar = (v) => String(v);

function rowsOf(g, size) {
  const rows = [];
  const body = g.body, d = body._debug, cw = body.version === 1 ? 4 : 8;
  const row = (o, l, depth, kind, path, value, count) => rows.push([o, l, depth, kind, path, value, count || 1]);
  const span = (dbg) => [dbg.start, dbg.end - dbg.start];
  const dataOffset = Number(body.tensorDataOffset);
  row(0, d.metadataKvCount.end, 0, "header", "header", `GGUF v${body.version}, ${g._root.isBigEndian ? "big" : "little"} endian, ${body.tensorCount} tensors, ${body.metadataKvCount} key/values`);
  row(0, 4, 1, "magic", "header.magic", '"GGUF"');
  row(...span(d.version), 1, "version", "header.version", `${body.version} (${g._root.isBigEndian ? "big" : "little"} endian)`);
  row(...span(d.tensorCount), 1, "count", "header.tensor_count", String(body.tensorCount));
  row(...span(d.metadataKvCount), 1, "count", "header.kv_count", String(body.metadataKvCount));
  const string = (base, name, s, depth) => {
    row(...span(s._debug.len), depth, "string_len", base + name + "_len", String(s.len));
    row(...span(s._debug.data), depth, "string", base + name, text(s));
  };
  const array = (base, a, depth) => {
    const ad = a._debug, ty = a.elementType;
    row(...span(ad.elementType), depth, "value_type", base + ".element_type", `${TYPES[ty]} (${ty})`);
    row(...span(ad.len), depth, "count", base + ".len", String(a.len));
    const field = FIELD[ty] + "Elements", elements = a[field], spans = ad[field].arr;
    if (ty === 8) {
      rows[rows.length - 3].push(spans.map((s) => s.end - s.start));
    } else if (ty === 9) {
      elements.forEach((e, j) => {
        const p = `${base}[${j}]`;
        row(...span(spans[j]), depth, "array", p, `array[${TYPES[e.elementType]}; ${e.len}]`);
        array(p, e, depth + 1);
      });
    } else {
      for (let j = 0; j < elements.length; ) {
        let n = 1;
        while (j + n < elements.length && Object.is(elements[j + n], elements[j])) n++;
        const v = ty === 7 ? (elements[j] === 0 ? "false" : elements[j] === 1 ? "true" : `true (byte ${elements[j]})`) : scalar(elements[j]);
        row(spans[j].start, spans[j + n - 1].end - spans[j].start, depth, "value", `${base}[${j}]`, n > 1 ? `${v} (\u00d7${n}, through [${j + n - 1}])` : v, n);
        j += n;
      }
    }
  };
  body.metadataKv.forEach((kv, i) => {
    const kd = kv._debug, ty = kv.valueType;
    const base = `kv[${i}] ${quoted(text(kv.key))}`;
    const typeName = ty === 9 ? `array[${TYPES[kv.arrayValue.elementType]}; ${kv.arrayValue.len}]` : TYPES[ty];
    row(...span(d.metadataKv.arr[i]), 0, "kv", base, typeName);
    string(base, ".key", kv.key, 1);
    row(...span(kd.valueType), 1, "value_type", base + ".type", `${TYPES[ty]} (${ty})`);
    const field = FIELD[ty] + "Value", v = kv[field];
    if (ty === 8) string(base, ".value", v, 1);
    else if (ty === 9) {
      row(...span(kd[field]), 1, "array", base + ".value", typeName);
      array(base, v, 2);
    } else row(...span(kd[field]), 1, "value", base + ".value", ty === 7 ? (v === 0 ? "false" : v === 1 ? "true" : `true (byte ${v})`) : scalar(v));
  });
  const tensors = [];
  body.tensorInfos.forEach((t, i) => {
    const td = t._debug, name = text(t.name);
    const base = `tensor[${i}] ${quoted(name)}`;
    const type = GGML[t.ggmlType] || `type ${t.ggmlType}`;
    const dims = t.dims.map(String);
    const absolute = BigInt(dataOffset) + BigInt(t.offset);
    let bytes = null;
    try {
      bytes = t.hasSize ? String(t.nBytes) : null;
    } catch (e) {}
    tensors.push({ name, type, dims, offset: String(absolute), bytes });
    row(...span(d.tensorInfos.arr[i]), 0, "tensor_info", base, `${type} [${dims.join(", ")}]`);
    string(base, ".name", t.name, 1);
    row(...span(td.nDims), 1, "n_dims", base + ".n_dims", String(t.nDims));
    td.dims.arr.forEach((s, k) => row(...span(s), 1, "dim", `${base}.dims[${k}]`, dims[k]));
    row(...span(td.ggmlType), 1, "ggml_type", base + ".type", `${type} (${t.ggmlType})`);
    row(...span(td.offset), 1, "offset", base + ".offset", `${t.offset} (relative; data at ${absolute})`);
  });
  const infosEnd = body.endOfTensorInfos.offset;
  if (dataOffset > infosEnd) row(infosEnd, dataOffset - infosEnd, 0, "padding", "padding", `${dataOffset - infosEnd} bytes to align the data to ${body.alignment}`);
  row(dataOffset, Math.max(0, size - dataOffset), 0, "tensor_data", "tensor_data", `${tensors.length} tensors, ${Math.max(0, size - dataOffset)} bytes (not read)`);
  return { rows, tensors, cw, dataOffset, infosEnd, alignment: body.alignment };
}

// The construct a failed parse was in, named as the crate's errors name it, and where it starts.
function where(g) {
  let path = "header.magic", at = 0;
  const open = (dbg) => dbg && dbg.end === undefined;
  const body = g.body;
  if (!body || open(g._debug.magic)) return { path, at };
  const d = body._debug;
  for (const [f, name] of [["version", "version"], ["tensorCount", "tensor_count"], ["metadataKvCount", "kv_count"]]) {
    if (!d[f] || open(d[f])) return { path: "header." + name, at: d[f] ? d[f].start : 4 };
  }
  const inArray = (a, base, start) => {
    const ad = a._debug;
    for (const [f, name] of [["elementType", ".element_type"], ["len", ".len"]]) if (open(ad[f])) return { path: base + name, at: ad[f].start };
    for (const [f, dbg] of Object.entries(ad)) {
      if (!f.endsWith("Elements") || !open(dbg)) continue;
      const j = dbg.arr.length - 1, e = a[f][j];
      if (f === "arrayElements" && e && e._debug) return inArray(e, `${base}[${j}]`, dbg.arr[j].start);
      return { path: `${base}[${j}]`, at: dbg.arr[j].start };
    }
    return { path: base, at: start };
  };
  if (open(d.metadataKv)) {
    const i = d.metadataKv.arr.length - 1, kv = body.metadataKv[i], kd = kv._debug;
    let base = `kv[${i}]`;
    if (open(kd.key)) return { path: base + ".key", at: kd.key.start };
    base += " " + quoted(text(kv.key));
    if (open(kd.valueType) || kd.valueType.validationError) return { path: base + ".type", at: kd.valueType.start };
    if (kv.arrayValue && open(kd.arrayValue)) return inArray(kv.arrayValue, base, kd.arrayValue.start);
    for (const [f, dbg] of Object.entries(kd)) if (open(dbg)) return { path: base, at: dbg.start };
    return { path: base, at: d.metadataKv.arr[i].start };
  }
  if (open(d.tensorInfos)) {
    const i = d.tensorInfos.arr.length - 1, t = body.tensorInfos[i], td = t._debug;
    let base = `tensor[${i}]`;
    if (open(td.name)) return { path: base + ".name", at: td.name.start };
    base += " " + quoted(text(t.name));
    if (open(td.dims)) {
      const k = td.dims.arr.length - 1;
      return { path: `${base}.dims[${k}]`, at: td.dims.arr[k].start };
    }
    for (const [f, name] of [["nDims", ".n_dims"], ["ggmlType", ".type"], ["offset", ".offset"]]) if (open(td[f])) return { path: base + name, at: td[f].start };
    return { path: base, at: d.tensorInfos.arr[i].start };
  }
  return { path: "header", at: 0 };
}

const SIZES = [1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8]; // bytes per value type (0: not fixed)

// Walks the header the way the grammar reads it, without building anything. Yields the end
// offset it needs next whenever the held bytes run out; returns null when it reached the end of
// the tensor infos or something the parser must judge (bad magic, version, type, nesting, a
// string past the end), or {error} for what the inspector refuses itself (its limits, an array
// past the end of the file: the parser would build it element by element first).
function* scan(size, progress) {
  let pos = 0, items = 0, big = false, cw = 8;
  const at = function* (n) {
    while (pos + n > held) yield pos + n;
  };
  const u32 = () => new DataView(buf.buffer, pos, 4).getUint32(0, !big);
  const count = () => {
    const d = new DataView(buf.buffer, pos, cw);
    if (cw === 4) return d.getUint32(0, !big);
    const hi = d.getUint32(big ? 0 : 4, !big), lo = d.getUint32(big ? 4 : 0, !big);
    return hi * 2 ** 32 + lo; // rounded past 2^53, where it is past any file anyway
  };
  const fail = (offset, path, message) => ({ error: { offset, path, message } });
  const tooMany = (offset, path) => fail(offset, path, `more than ${MAX_ITEMS.toLocaleString("en")} keys, tensor infos and array elements: the inspector's limit`);
  const string = function* () {
    yield* at(cw);
    const n = count();
    pos += cw;
    if (n > size - pos) return false;
    yield* at(n);
    pos += n;
    return true;
  };
  const keyText = (start) => text({ data: buf.subarray(start + cw, pos) });
  const value = function* (ty, path, depth) {
    if (SIZES[ty]) {
      yield* at(SIZES[ty]);
      pos += SIZES[ty];
      return null;
    }
    if (ty === 8) return (yield* string()) ? null : "stop";
    if (ty !== 9 || depth >= 256) return "stop";
    yield* at(4 + cw);
    const et = u32();
    pos += 4;
    if (et > 12) return "stop";
    const lenAt = pos, n = count();
    pos += cw;
    if (SIZES[et]) {
      if (n * SIZES[et] > size - pos) return fail(lenAt, path, `array length ${n} exceeds the ${size - pos} bytes left`);
      if (pos + n * SIZES[et] > LIMIT) return fail(lenAt, path + ".len", `${n.toLocaleString("en")} ${TYPES[et]} elements take the header past the inspector's ${LIMIT / 2 ** 20} MiB limit`);
      if ((items += n) > MAX_ITEMS) return tooMany(lenAt, path + ".len");
      yield* at(n * SIZES[et]);
      pos += n * SIZES[et];
      return null;
    }
    for (let j = 0; j < n; j++) {
      if (++items > MAX_ITEMS) return tooMany(lenAt, path + ".len");
      const r = yield* value(et, `${path}[${j}]`, depth + 1);
      if (r) return r;
      if ((j & 4095) === 4095) progress(pos, items);
    }
    return null;
  };
  yield* at(8);
  if (text({ data: buf.subarray(0, 4) }) !== "GGUF") return null;
  big = buf[4] === 0 && buf[5] === 0;
  pos = 4;
  const version = u32();
  pos = 8;
  if (version < 1 || version > 3) return null;
  cw = version === 1 ? 4 : 8;
  yield* at(2 * cw);
  const nTensors = count();
  pos += cw;
  const nKvs = count();
  pos += cw;
  for (let i = 0; i < nKvs; i++) {
    if (++items > MAX_ITEMS) return tooMany(pos, `kv[${i}]`);
    const start = pos;
    if (!(yield* string())) return null;
    const base = `kv[${i}] ${quoted(keyText(start))}`;
    yield* at(4);
    const ty = u32();
    pos += 4;
    if (ty > 12) return null;
    const r = yield* value(ty, base, 0);
    if (r) return r === "stop" ? null : r;
    if ((i & 1023) === 1023) progress(pos, items);
  }
  for (let i = 0; i < nTensors; i++) {
    if (++items > MAX_ITEMS) return tooMany(pos, `tensor[${i}]`);
    if (!(yield* string())) return null;
    yield* at(4);
    const nDims = u32();
    pos += 4;
    yield* at(nDims * cw + 12);
    pos += nDims * cw + 12;
    if ((i & 1023) === 1023) progress(pos, items);
  }
  return null;
}

let scanner = null;
let last = [0, 0]; // where the scan was and how many items it had seen, for the progress
const progress = (at, items) => (last = [at, items]);

// The parse, once the scan says the header is all here (or that the parser must say why not).
function parse(size) {
  const g = new GgufFile.GgufFile(new KaitaiStream(new DataView(buf.buffer, 0, held)));
  try {
    g._read();
    const result = rowsOf(g, size);
    const header = buf.slice(0, Math.min(held, result.dataOffset));
    self.postMessage({ result, header, version: g.body.version, bigEndian: g._root.isBigEndian, counts: [String(g.body.tensorCount), String(g.body.metadataKvCount)] }, [header.buffer]);
  } catch (err) {
    const eof = err instanceof KaitaiStream.EOFError;
    // A string longer than the bytes held (the grammar checks it before reading the bytes).
    const long = err instanceof KaitaiStream.ValidationGreaterThanError;
    const { path, at } = where(g);
    let what = String(err.message || err);
    if (long) {
      const left = size - g._io.pos;
      what = err.actual > left ? `string length ${err.actual} exceeds the ${left} bytes left` : `the header is larger than the inspector's ${LIMIT / 2 ** 20} MiB limit`;
    } else if (eof && g._io.pos + err.bytesReq > size) what = `needs ${err.bytesReq} bytes, but the file has ${size - g._io.pos} left`;
    // Only a u64 past 2^53 is a BigInt, and no file has that many bytes.
    else if (err instanceof TypeError && /BigInt/.test(err.message)) what = "a length or count larger than any file (past 2^53)";
    else if (eof && held >= LIMIT) what = `the header is larger than the inspector's ${LIMIT / 2 ** 20} MiB limit`;
    else if (eof) what = `the file ends inside it (${err.bytesReq} bytes needed, ${err.bytesAvail} left)`;
    self.postMessage({ error: { offset: at, path, message: what } });
  }
}

// Runs the scan on until it needs bytes not held yet (then asks for them) or ends.
function advance(size) {
  if (!scanner) scanner = scan(size, progress);
  for (;;) {
    const r = scanner.next();
    if (r.done) {
      scanner = null;
      if (r.value && r.value.error) return self.postMessage(r.value);
      return parse(size);
    }
    const need = r.value;
    if (need > size || need > LIMIT) {
      scanner = null;
      return parse(size);
    }
    return self.postMessage({ need, progress: { at: Math.max(last[0], held), items: last[1] } });
  }
}

self.onmessage = (e) => {
  const { page, size } = e.data;
  const bytes = new Uint8Array(page);
  if (held + bytes.length > buf.length) {
    const grown = new Uint8Array(Math.max(buf.length * 2, held + bytes.length));
    grown.set(buf.subarray(0, held));
    buf = grown;
  }
  buf.set(bytes, held);
  held += bytes.length;
  advance(size);
};
