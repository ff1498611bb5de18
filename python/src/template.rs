//! Chat templates: crates/gguf-template's render (sandboxed, as transformers renders),
//! lint and screen.

use std::collections::HashSet;

use gguf_template::lint::{lint, Level};
use gguf_template::render::{render, Conversation, Limits, RenderError};
use gguf_template::screen::screen;
use gguf_template::SpecialTokens;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::Document;

create_exception!(
    gguf_grammar,
    TemplateError,
    PyValueError,
    "A chat template that does not parse or render, with `kind` (\"syntax\", \"raised\", \
     \"limit\", \"input\" or \"runtime\"), `line` and `column` (1-based, or None) and \
     `message` (for \"raised\", what the template's raise_exception was given)."
);

fn render_error(py: Python<'_>, e: &RenderError) -> PyErr {
    let (kind, line, column) = match e {
        RenderError::Syntax { line, column, .. } => ("syntax", Some(*line), Some(*column)),
        RenderError::Raised(_) => ("raised", None, None),
        RenderError::Limit(_) => ("limit", None, None),
        RenderError::Input(_) => ("input", None, None),
        RenderError::Runtime { line, .. } => ("runtime", *line, None),
    };
    let err = TemplateError::new_err(e.to_string());
    let value = err.value(py);
    let set = || -> PyResult<()> {
        value.setattr("kind", kind)?;
        value.setattr("line", line)?;
        value.setattr("column", column)?;
        // What `raise_exception` was given, as transformers' TemplateError carries it.
        let message = match e {
            RenderError::Raised(m) => m.clone(),
            e => e.to_string(),
        };
        value.setattr("message", message)?;
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(e) => e,
    }
}

fn json_arg(what: &str, text: Option<&str>) -> PyResult<Option<serde_json::Value>> {
    text.map(|t| serde_json::from_str(t).map_err(|e| PyValueError::new_err(format!("{what}: {e}"))))
        .transpose()
}

/// `(name, text)` pairs as the crate's special tokens (names of `SPECIAL_TOKEN_KEYS`).
fn special_tokens_arg(special: Vec<(String, String)>) -> PyResult<SpecialTokens> {
    let mut tokens = Vec::new();
    for (name, text) in special {
        let known = gguf_template::read::SPECIAL_TOKEN_KEYS
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| PyValueError::new_err(format!("not a special token name: {name:?}")))?;
        tokens.push((known.0, text));
    }
    Ok(SpecialTokens { tokens })
}

/// `source` rendered for a conversation (JSON texts of the messages, tools, documents and
/// further variables) with `special` tokens bound, as transformers' `apply_chat_template(
/// tokenize=False)` renders it; `now` (`YYYY-MM-DDTHH:MM:SS`) is what `strftime_now` sees.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (source, messages, add_generation_prompt, special = Vec::new(), tools = None, documents = None, variables = None, now = None))]
pub fn render_template(
    py: Python<'_>,
    source: &str,
    messages: &str,
    add_generation_prompt: bool,
    special: Vec<(String, String)>,
    tools: Option<&str>,
    documents: Option<&str>,
    variables: Option<&str>,
    now: Option<&str>,
) -> PyResult<String> {
    let extra = match json_arg("variables", variables)? {
        None => serde_json::Map::new(),
        Some(serde_json::Value::Object(map)) => map,
        Some(_) => return Err(PyValueError::new_err("variables must be a JSON object")),
    };
    let now = now
        .map(|t| {
            chrono::NaiveDateTime::parse_from_str(t, "%Y-%m-%dT%H:%M:%S%.f")
                .map_err(|e| PyValueError::new_err(format!("now {t:?}: {e}")))
        })
        .transpose()?;
    let conversation = Conversation {
        messages: json_arg("messages", Some(messages))?.unwrap_or_default(),
        tools: json_arg("tools", tools)?,
        documents: json_arg("documents", documents)?,
        add_generation_prompt,
        extra,
        now,
    };
    let special = special_tokens_arg(special)?;
    let source = source.to_owned();
    py.allow_threads(|| render(&source, &conversation, &special, &Limits::default()))
        .map_err(|e| render_error(py, &e))
}

/// The chat templates of the document, `(name, source)`: name None for
/// `tokenizer.chat_template`, else the NAME of `tokenizer.chat_template.NAME`.
#[pyfunction]
pub fn chat_templates(doc: &Document) -> PyResult<Vec<(Option<String>, String)>> {
    let (found, errors) = gguf_template::templates(&doc.parsed()?);
    if let Some(e) = errors.first() {
        return Err(PyValueError::new_err(format!("{}: {}", e.key, e.problem)));
    }
    Ok(found.into_iter().map(|t| (t.name, t.source)).collect())
}

/// The special tokens a template of the document sees, as transformers binds them:
/// `(name, text)` for `bos_token`, `eos_token`, … that the file sets.
#[pyfunction]
pub fn special_tokens(doc: &Document) -> PyResult<Vec<(&'static str, String)>> {
    Ok(SpecialTokens::from_gguf(&doc.parsed()?).tokens)
}

/// Every template of the document with its lint diagnostics and screen findings, as `gguf
/// template --json` would print them (`gguf_template::report`): a JSON text.
#[pyfunction]
pub fn template_report(doc: &Document) -> PyResult<String> {
    let gguf = doc.parsed()?;
    Ok(gguf_template::report::report(
        &gguf,
        true,
        Some(&gguf_template::lint::lint_gguf(&gguf)),
        true,
    )
    .to_string())
}

/// A lint diagnostic or screen finding as `(code, level, line, column, message)`.
type Row = (&'static str, String, Option<usize>, Option<usize>, String);

/// The lint diagnostics of `source`, given the special tokens it sees and the vocabulary's
/// token texts (None: the vocabulary checks are skipped).
#[pyfunction]
#[pyo3(signature = (source, special = Vec::new(), vocabulary = None))]
pub fn lint_template(
    source: &str,
    special: Vec<(String, String)>,
    vocabulary: Option<Vec<String>>,
) -> PyResult<Vec<Row>> {
    let special = special_tokens_arg(special)?;
    let vocab: Option<HashSet<&str>> = vocabulary
        .as_ref()
        .map(|v| v.iter().map(String::as_str).collect());
    Ok(lint(source, &special, vocab.as_ref())
        .into_iter()
        .map(|d| {
            let level = match d.level {
                Level::Warning => "warning",
                Level::Error => "error",
            };
            let (line, column) = d.location.unzip();
            (d.code, level.to_owned(), line, column, d.message)
        })
        .collect())
}

/// The screen's findings for `source`: what a chat template never needs and template
/// injections use.
#[pyfunction]
pub fn screen_template(source: &str) -> Vec<Row> {
    screen(source)
        .into_iter()
        .map(|f| {
            (
                f.code,
                f.severity.to_string(),
                Some(f.line),
                Some(f.column),
                f.message,
            )
        })
        .collect()
}
