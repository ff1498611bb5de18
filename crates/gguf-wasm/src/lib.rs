//! The inspector page's analysis of a dropped file's header, from the workspace's own crates:
//! its chat templates with their lint and screen ([`gguf_template::report`]), llama.cpp's
//! model-level verdict (the container rules of `ggml-0.3.16-data` and the model schema, as
//! `gguf check --profile llama.cpp`) and the memory llama.cpp allocates ([`gguf_fit`](mod@gguf_fit), as
//! `gguf fit --json`). `scripts/build-inspector.sh` compiles it for `wasm32-wasip1` and inlines
//! it in `web/inspector.html`; the browser tests compare what the page shows with the CLI.
//!
//! The WebAssembly interface needs no bindings generator: the page asks [`gguf_input`] for a
//! buffer of the header's length, writes the header's bytes at the pointer it returns, calls
//! [`gguf_analyze`] or [`gguf_fit`](fn@gguf_fit), which return the length of a JSON text that
//! [`gguf_output`] points at. Both buffers are owned here; the page only copies bytes in and
//! out of the module's memory, and the analysis reads and writes them as ordinary vectors.

use std::sync::{Mutex, MutexGuard};

use gguf_grammar::validate::Diagnostic;
use gguf_grammar::Gguf;
use serde_json::{json, Value};

static INPUT: Mutex<Vec<u8>> = Mutex::new(Vec::new());
static OUTPUT: Mutex<Vec<u8>> = Mutex::new(Vec::new());

fn lock(buffer: &'static Mutex<Vec<u8>>) -> MutexGuard<'static, Vec<u8>> {
    buffer
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The templates' lint findings ([`gguf_template::lint::lint_gguf`]), computed once per header
/// for the diagnostics and the template report alike.
type Lints = Vec<(String, Vec<gguf_template::lint::Diagnostic>)>;

/// The diagnostics of the newest llama.cpp's model loader that a header shows: the same as
/// `gguf check --profile llama.cpp` (the browser tests compare the two).
pub fn llama_cpp_diagnostics(gguf: &Gguf<'_>, file_len: u64) -> Vec<Diagnostic> {
    diagnostics_linted(gguf, file_len, &gguf_template::lint::lint_gguf(gguf))
}

fn diagnostics_linted(gguf: &Gguf<'_>, file_len: u64, lints: &Lints) -> Vec<Diagnostic> {
    let mut found = gguf_tokenizer::check::llama_cpp(gguf, file_len);
    found.extend(gguf_template::lint::diagnostics(gguf, lints));
    found
}

/// `{"profile", "accepted", "diagnostics": [...]}`: the document of
/// `gguf check --profile llama.cpp --json` for one file, without its `"file"`.
pub fn llama_cpp_verdict(gguf: &Gguf<'_>, file_len: u64) -> Value {
    verdict_linted(gguf, file_len, &gguf_template::lint::lint_gguf(gguf))
}

fn verdict_linted(gguf: &Gguf<'_>, file_len: u64, lints: &Lints) -> Value {
    let profile = gguf_llama::loader::CONTAINER;
    let diagnostics = diagnostics_linted(gguf, file_len, lints);
    let accepted = gguf_llama::loader::accepts(&diagnostics);
    let rows: Vec<Value> = diagnostics
        .iter()
        .map(|d| {
            let level = if profile.rejects(d.rejected_by) {
                "error"
            } else {
                d.severity.name()
            };
            let refs: Vec<_> = d.rejected_by.iter().map(|r| r.name()).collect();
            json!({
                "level": level,
                "code": d.code.name(),
                "severity": d.severity.name(),
                "offset": d.span.as_ref().map_or(0, |s| s.start),
                "span": d.span.as_ref().map(|s| [s.start, s.end]),
                "path": d.path.to_string(),
                "message": d.message,
                "rejected_by": refs,
            })
        })
        .collect();
    // The document of `gguf check --profile llama.cpp --json`, less its "file".
    json!({
        "profile": "llama.cpp",
        "models": gguf_llama::loader::MODELS,
        "accepted": accepted,
        "diagnostics": rows,
        "template": gguf_template::report::report(gguf, false, Some(lints), true),
    })
}

/// What the page shows for a header (`header` holds at least the whole header of a file
/// `file_len` bytes long): `{"templates": gguf_template::report (source, lint, screen),
/// "llama_cpp": llama_cpp_verdict, "releases": the rows of `gguf check --releases --json`}`,
/// or `{"error": MESSAGE}` when it does not parse.
pub fn analyze(header: &[u8], file_len: u64) -> Value {
    match Gguf::parse(header) {
        Ok(gguf) => {
            let lints = gguf_template::lint::lint_gguf(&gguf);
            let releases = gguf_tokenizer::check::releases(&gguf, file_len);
            json!({
                "templates": gguf_template::report::report(&gguf, true, Some(&lints), true),
                "llama_cpp": verdict_linted(&gguf, file_len, &lints),
                "releases": releases.iter().map(|r| r.json()).collect::<Vec<_>>(),
            })
        }
        Err(e) => json!({ "error": e.to_string() }),
    }
}

/// The memory estimate for a context of `n_ctx` tokens (0: the model's training context), with
/// `gguf fit`'s other defaults: the text of `gguf fit --json --ctx-size N`, or
/// `{"error": MESSAGE}`.
pub fn fit(header: &[u8], n_ctx: u32) -> String {
    let estimate = Gguf::parse(header)
        .map_err(|e| e.to_string())
        .and_then(|gguf| {
            let params = gguf_fit::Params {
                n_ctx,
                ..gguf_fit::Params::default()
            };
            gguf_fit::estimate(&gguf, &params).map_err(|e| e.to_string())
        });
    match estimate {
        Ok(e) => gguf_fit::render::json(&[e]),
        Err(message) => json!({ "error": message }).to_string(),
    }
}

fn respond(text: String) -> usize {
    let mut out = lock(&OUTPUT);
    *out = text.into_bytes();
    out.len()
}

/// A buffer of `len` bytes for the header (zeroed; the page writes the header there), replacing
/// the previous one. Returns where it starts in the module's memory.
// `#[no_mangle]` gives these functions the names the page calls; the `unsafe_code` lint counts
// the attribute, and there is no unsafe block.
#[allow(unsafe_code)]
#[no_mangle]
pub extern "C" fn gguf_input(len: usize) -> *mut u8 {
    let mut input = lock(&INPUT);
    input.clear();
    input.resize(len, 0);
    input.as_mut_ptr()
}

/// Where the last result's JSON text starts in the module's memory.
#[allow(unsafe_code)]
#[no_mangle]
pub extern "C" fn gguf_output() -> *const u8 {
    lock(&OUTPUT).as_ptr()
}

/// [`analyze`] of the input buffer for a file of `file_len` bytes (a double: exact for any
/// file below 2^53 bytes). Returns the length of the JSON text at [`gguf_output`].
#[allow(unsafe_code)]
#[no_mangle]
pub extern "C" fn gguf_analyze(file_len: f64) -> usize {
    let text = analyze(&lock(&INPUT), file_len as u64).to_string();
    respond(text)
}

/// [`fit`] of the input buffer. Returns the length of the JSON text at [`gguf_output`].
#[allow(unsafe_code)]
#[no_mangle]
pub extern "C" fn gguf_fit(n_ctx: u32) -> usize {
    let text = fit(&lock(&INPUT), n_ctx);
    respond(text)
}
