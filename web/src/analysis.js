// The inspector's analysis worker: runs the WebAssembly module of crates/gguf-wasm (the
// workspace's own Rust: gguf-template's lint and screen, llama.cpp's model-level verdict,
// gguf-fit) over a header the page has read. Messages in: {module: WebAssembly.Module, header:
// Uint8Array, size: file size} once, then {fit: N_CTX} for each context size asked. Messages
// out: {analysis: JSON text}, {fit: JSON text, nCtx}, or {failed: message, nCtx?} when the
// module stopped (a Rust panic is a trap here; the module is started again for the next
// request).
//
// The module is built for wasm32-wasip1 and asks for six WASI functions: the clock (the
// template renderer's time limit and strftime_now), random bytes (hash-table seeds), an
// empty environment, stderr (a panic's message) and exit. Nothing else is reachable from it:
// no files, no network.
"use strict";

let module = null, header = null, size = 0, instance = null, stderr = "";
const view = () => new DataView(instance.exports.memory.buffer);
const bytes = (ptr, len) => new Uint8Array(instance.exports.memory.buffer, ptr, len);

const wasi = {
  clock_time_get(id, precision, out) {
    // 0: the wall clock; any other: a monotonic one. Nanoseconds.
    const ms = id === 0 ? Date.now() : performance.timeOrigin + performance.now();
    view().setBigUint64(out, BigInt(Math.round(ms * 1e6)), true);
    return 0;
  },
  random_get(ptr, len) {
    for (let at = 0; at < len; at += 65536) crypto.getRandomValues(bytes(ptr + at, Math.min(65536, len - at)));
    return 0;
  },
  environ_sizes_get(count, size) {
    view().setUint32(count, 0, true);
    view().setUint32(size, 0, true);
    return 0;
  },
  environ_get: () => 0,
  fd_write(fd, iovs, n, written) {
    let total = 0;
    for (let i = 0; i < n; i++) {
      const ptr = view().getUint32(iovs + 8 * i, true), len = view().getUint32(iovs + 8 * i + 4, true);
      if (stderr.length < 4096) stderr += new TextDecoder().decode(bytes(ptr, len));
      total += len;
    }
    view().setUint32(written, total, true);
    return 0;
  },
  proc_exit(code) {
    throw new Error(`the module exited with status ${code}`);
  },
};

// A fresh instance holding the header in its input buffer.
async function start() {
  stderr = "";
  instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: wasi });
  bytes(instance.exports.gguf_input(header.length), header.length).set(header);
}

// Calls an export that leaves a JSON text in the module's output buffer, and returns the text.
async function call(name, ...args) {
  if (!instance) await start();
  try {
    const n = instance.exports[name](...args);
    return new TextDecoder().decode(bytes(instance.exports.gguf_output(), n));
  } catch (err) {
    instance = null;
    throw new Error(stderr.trim() || String(err && err.message));
  }
}

self.onmessage = async (e) => {
  const m = e.data;
  try {
    if (m.module) {
      ({ module, size } = m);
      header = new Uint8Array(m.header);
      self.postMessage({ analysis: await call("gguf_analyze", size) });
    } else if (m.fit !== undefined) {
      self.postMessage({ fit: await call("gguf_fit", m.fit), nCtx: m.fit });
    }
  } catch (err) {
    self.postMessage({ failed: String(err.message), nCtx: m.fit });
  }
};
