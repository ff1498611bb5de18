//! One JSON document for a file's templates (what `gguf template --json` prints): each
//! template with its key, size and, on request, its lint diagnostics and screen findings.

use crate::lint::{Diagnostic, Level};
use crate::read::templates;
use crate::screen::screen;
use gguf_grammar::Gguf;
use serde_json::{json, Value};

/// `{"templates": [{"key", "name", "bytes", "family", "source"?, "lint"?, "screen"?}],
/// "errors": [...]}`: `family` as llama.cpp detects it ([`crate::family`]).
/// `lints` are [`crate::lint::lint_gguf`]'s findings, given by a caller that also reports them
/// elsewhere, so that every template is linted once; `None` leaves `lint` out.
pub fn report(
    gguf: &Gguf<'_>,
    with_source: bool,
    lints: Option<&[(String, Vec<Diagnostic>)]>,
    with_screen: bool,
) -> Value {
    let (found, errors) = templates(gguf);
    let items: Vec<Value> = found
        .iter()
        .map(|t| {
            let mut item = json!({
                "key": t.key,
                "name": t.name,
                "bytes": t.source.len(),
                "family": crate::family::family(&t.source),
            });
            if with_source {
                item["source"] = json!(t.source);
            }
            if let Some(lints) = lints {
                let diagnostics = lints
                    .iter()
                    .find(|(key, _)| *key == t.key)
                    .map(|(_, d)| d.as_slice())
                    .unwrap_or_default();
                item["lint"] = diagnostics
                    .iter()
                    .map(|d| {
                        json!({
                            "code": d.code,
                            "level": match d.level { Level::Warning => "warning", Level::Error => "error" },
                            "line": d.location.map(|l| l.0),
                            "column": d.location.map(|l| l.1),
                            "message": d.message,
                        })
                    })
                    .collect();
            }
            if with_screen {
                item["screen"] = screen(&t.source)
                    .iter()
                    .map(|f| {
                        json!({
                            "code": f.code,
                            "severity": f.severity.to_string(),
                            "line": f.line,
                            "column": f.column,
                            "message": f.message,
                        })
                    })
                    .collect();
            }
            item
        })
        .collect();
    let errors: Vec<Value> = errors
        .iter()
        .map(|e| json!({ "key": e.key, "problem": e.problem }))
        .collect();
    json!({ "templates": items, "errors": errors })
}
