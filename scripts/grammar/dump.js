#!/usr/bin/env node
// Run the JavaScript parser generated from grammar/gguf.ksy over GGUF files and write, for each,
// the crate's native JSON (the shape of `gguf dump --json`) as the grammar reads the file.
//
// Usage: node dump.js GENERATED_JS_DIR OUT_DIR FILE...
//
// For FILE number i (0-based) it writes OUT_DIR/i.json: either the native document or
// {"error": "..."} when the generated parser rejects the file. Exits 0 unless it cannot run.
//
// Precision: the Kaitai Struct JavaScript runtime reads u64/s64 into a double, which is exact
// only up to 2^53. This driver wraps those two reads so that a value that does not fit a double
// exactly comes back as a BigInt read from the same 8 bytes; everything else is the generated
// parser unchanged. The JSON is written by hand so that BigInts, -0 and non-finite floats
// survive: integers as plain digits, NaN and infinities as "nan", "inf", "-inf".
"use strict";

const fs = require("fs");
const path = require("path");
const KaitaiStream = require("kaitai-struct/KaitaiStream");

// ---- exact 64-bit integers -------------------------------------------------------------------

function exact64(name, signed, littleEndian) {
  const original = KaitaiStream.prototype[name];
  KaitaiStream.prototype[name] = function () {
    const v = original.call(this);
    if (Number.isSafeInteger(v)) return v;
    this.seek(this.pos - 8);
    const b = this.readBytes(8);
    let x = 0n;
    for (let i = 0; i < 8; i++) {
      x = (x << 8n) | BigInt(b[littleEndian ? 7 - i : i]);
    }
    return signed ? BigInt.asIntN(64, x) : x;
  };
}
exact64("readU8le", false, true);
exact64("readU8be", false, false);
exact64("readS8le", true, true);
exact64("readS8be", true, false);

// ---- native JSON -----------------------------------------------------------------------------

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function hex(bytes) {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

// A GGUF string as the native JSON writes it: its text, or {"bytes_hex"} when not UTF-8.
function str(s) {
  try {
    return JSON.stringify(utf8.decode(s.data));
  } catch (e) {
    return `{"bytes_hex":${JSON.stringify(hex(s.data))}}`;
  }
}

function int(v) {
  // Numbers here are integers read by the parser, BigInts the ones past 2^53.
  return typeof v === "bigint" ? v.toString() : String(v);
}

function float(v) {
  if (Number.isNaN(v)) return '"nan"';
  if (v === Infinity) return '"inf"';
  if (v === -Infinity) return '"-inf"';
  if (Object.is(v, -0)) return "-0.0";
  return String(v); // shortest text that reads back as the same double
}

let TYPE_NAME; // value type id -> spec name, from the generated enum
let GGML_NAME; // ggml type id -> ggml's type_name, from the generated enum

function enumNames(e) {
  const names = {};
  for (const [k, v] of Object.entries(e)) {
    if (typeof v === "number") names[v] = k.toLowerCase();
  }
  return names;
}

function value(type, v, out) {
  switch (type) {
    case 6: // float32
    case 12: // float64
      out.push(float(v));
      break;
    case 7: // bool: one byte; 0 is false, anything else true
      out.push(v !== 0 ? "true" : "false");
      break;
    case 8:
      out.push(str(v));
      break;
    case 9:
      array(v, out, false);
      break;
    default:
      out.push(int(v));
  }
}

// An array: at the top of a KV its fields join the KV's object; nested, it is its own object.
function array(a, out, inKv) {
  const et = a.elementType;
  if (!inKv) out.push("{");
  out.push(`"element_type":${JSON.stringify(TYPE_NAME[et])},"len":${int(a.len)},"value":[`);
  const els = a[TYPE_NAME[et] + "Elements"]; // the one list the element type names
  for (let i = 0; i < els.length; i++) {
    if (i) out.push(",");
    value(et, els[i], out);
  }
  out.push("]");
  if (!inKv) out.push("}");
}

function native(g, fileSize) {
  const b = g.body;
  const out = [];
  out.push(`{"version":${b.version},"endian":"${g.isBigEndian ? "big" : "little"}"`);
  out.push(`,"alignment":${int(b.alignment)}`);
  out.push(`,"tensor_data_offset":${int(b.tensorDataOffset)}`);
  out.push(`,"file_size":${fileSize}`);
  out.push(`,"metadata":[`);
  b.metadataKv.forEach((kv, i) => {
    if (i) out.push(",");
    const t = kv.valueType;
    out.push(`{"key":${str(kv.key)},"type":${JSON.stringify(TYPE_NAME[t])},`);
    const v = kv[TYPE_NAME[t] + "Value"]; // the one field the value type names
    if (t === 9) {
      array(v, out, true);
    } else {
      out.push(`"value":`);
      value(t, v, out);
    }
    out.push("}");
  });
  out.push(`],"tensors":[`);
  b.tensorInfos.forEach((ti, i) => {
    if (i) out.push(",");
    const typeId = ti.ggmlType;
    // The grammar's data_offset instance adds two doubles; past 2^53 (or with a BigInt offset)
    // redo the same sum exactly.
    let dataOffset;
    try {
      dataOffset = ti.dataOffset;
    } catch (e) {
      dataOffset = undefined;
    }
    if (!Number.isSafeInteger(dataOffset)) {
      dataOffset = BigInt(b.tensorDataOffset) + BigInt(ti.offset);
      if (dataOffset >= 1n << 64n) dataOffset = null; // past u64 the native JSON says null
    }
    // n_bytes: defined by the grammar for at most 4 dims; compared only when exact here.
    let nBytes;
    if (ti.nDims <= 4) {
      try {
        nBytes = ti.nBytes;
        if (nBytes === undefined) nBytes = null; // the grammar gives this tensor no size
        else if (!Number.isSafeInteger(nBytes)) nBytes = undefined;
      } catch (e) {
        nBytes = undefined; // a BigInt dim: the expression cannot mix it with Numbers
      }
    }
    out.push(`{"name":${str(ti.name)},"dims":[${ti.dims.map(int).join(",")}]`);
    if (GGML_NAME[typeId] !== undefined) out.push(`,"type":${JSON.stringify(GGML_NAME[typeId])}`);
    out.push(`,"type_id":${int(typeId)},"offset":${int(ti.offset)}`);
    out.push(`,"data_offset":${dataOffset === null ? "null" : int(dataOffset)}`);
    if (nBytes !== undefined) out.push(`,"n_bytes":${nBytes === null ? "null" : int(nBytes)}`);
    out.push("}");
  });
  out.push("]}");
  return out.join("");
}

function main() {
  const [genDir, outDir, ...files] = process.argv.slice(2);
  if (!genDir || !outDir) {
    process.stderr.write("usage: node dump.js GENERATED_JS_DIR OUT_DIR FILE...\n");
    process.exit(2);
  }
  const GgufFile = require(path.resolve(genDir, "GgufFile.js")).GgufFile;
  TYPE_NAME = enumNames(GgufFile.ValueType);
  // Kaitai identifiers are lower case; ggml spells the k-quants q2_K ... q8_K.
  GGML_NAME = enumNames(GgufFile.GgmlType);
  for (const k of Object.keys(GGML_NAME)) GGML_NAME[k] = GGML_NAME[k].replace(/_k$/, "_K");
  fs.mkdirSync(outDir, { recursive: true });
  files.forEach((file, i) => {
    const t0 = process.hrtime.bigint();
    let text;
    try {
      const buf = fs.readFileSync(file);
      const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
      const g = new GgufFile(new KaitaiStream(ab));
      text = native(g, buf.byteLength);
    } catch (e) {
      text = JSON.stringify({ error: `${e && e.name ? e.name : "Error"}: ${e && e.message}` });
    }
    fs.writeFileSync(path.join(outDir, `${i}.json`), text);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (process.env.GRAMMAR_CHECK_VERBOSE) process.stderr.write(`dump.js: ${file}: ${ms.toFixed(0)} ms\n`);
  });
}

main();
