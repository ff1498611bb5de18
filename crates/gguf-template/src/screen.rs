//! A static screen of a template for what a chat template never needs and template-injection
//! payloads use: Python's dunder attributes, private attributes, jinja2's global functions used
//! as gadgets (`cycler.__init__.__globals__`), Flask's globals (`self`, `config`, `request`),
//! calls on module-like objects (`os.popen`), loader statements (`import`, `include`,
//! `extends`), and very long or deeply nested expressions.
//!
//! It walks minijinja's token stream (its lexer, through `unstable_machinery`), so it also
//! screens a payload that does not parse as a whole: the tokens up to a lexical error are
//! screened, and the error itself is reported.

use minijinja::machinery::{tokenize, Span, Token, WhitespaceConfig};
use minijinja::syntax::SyntaxConfig;
use std::fmt;

/// How much a finding matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Unusual, worth a look.
    Low,
    /// Never needed by a chat template; a building block of injections.
    Medium,
    /// The shape of a published sandbox-escape payload.
    High,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        })
    }
}

/// One thing the screen found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// A stable code, e.g. `template-dunder-attribute`.
    pub code: &'static str,
    /// How much it matters.
    pub severity: Severity,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What was found (the text from the template is Rust-escaped).
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {} [{}] {}",
            self.line, self.column, self.severity, self.code, self.message
        )
    }
}

/// Limits past which an expression is reported.
pub const MAX_BRACKET_DEPTH: usize = 24;
/// Tokens in one `{{ }}` or `{% %}` block.
pub const MAX_EXPRESSION_TOKENS: usize = 1500;
/// Nested `if`/`for`/`macro`/… blocks.
pub const MAX_BLOCK_DEPTH: usize = 32;

/// jinja2's global functions and classes, whose attributes lead to Python's globals.
const GADGETS: [&str; 6] = ["cycler", "joiner", "lipsum", "namespace", "range", "dict"];
/// Objects that web frameworks (Flask) put in a template's context; a chat template has none.
const FRAMEWORK_GLOBALS: [&str; 7] = [
    "self",
    "config",
    "request",
    "session",
    "url_for",
    "get_flashed_messages",
    "application",
];
/// Attribute names of modules and functions that run commands or read files.
const MODULE_CALLS: [&str; 18] = [
    "os",
    "popen",
    "system",
    "subprocess",
    "check_output",
    "spawn",
    "import_module",
    "load_module",
    "eval",
    "exec",
    "builtins",
    "globals",
    "getattr",
    "mro",
    "subclasses",
    "func_globals",
    "f_globals",
    "gi_frame",
];
/// Strings that name modules or command runners (`['os']` item access on `__globals__`);
/// not `system`, which is a chat role.
const MODULE_STRINGS: [&str; 8] = [
    "os",
    "subprocess",
    "popen",
    "builtins",
    "eval",
    "exec",
    "import_module",
    "check_output",
];
/// Statements that need a loader (files) and that no chat template uses.
const LOADER_STATEMENTS: [&str; 4] = ["import", "include", "extends", "from"];
const BLOCK_OPENERS: [&str; 8] = [
    "if",
    "for",
    "macro",
    "call",
    "filter",
    "set_block",
    "with",
    "generation",
];

fn is_dunder(name: &str) -> bool {
    name.len() > 4 && name.starts_with("__") && name.ends_with("__")
}

fn show(text: &str) -> String {
    let short: String = text.chars().take(60).collect();
    format!("{short:?}")
}

/// Screens `source`. Findings are in source order.
pub fn screen(source: &str) -> Vec<Finding> {
    let ws = WhitespaceConfig {
        keep_trailing_newline: false,
        lstrip_blocks: true,
        trim_blocks: true,
    };
    let mut tokens: Vec<(Token<'_>, Span)> = Vec::new();
    let mut findings = Vec::new();
    for item in tokenize(source, false, SyntaxConfig::default(), ws) {
        match item {
            Ok(t) => tokens.push(t),
            Err(e) => {
                findings.push(Finding {
                    code: "template-lex-error",
                    severity: Severity::Low,
                    line: e.line().unwrap_or(0),
                    column: 1,
                    message: format!(
                        "the lexer stopped here ({}); only the text before is screened",
                        e.detail().unwrap_or("error")
                    ),
                });
                break;
            }
        }
    }
    let mut push = |span: &Span, code, severity, message: String| {
        findings.push(Finding {
            code,
            severity,
            line: span.start_line as usize,
            column: span.start_col as usize + 1,
            message,
        })
    };
    let mut bracket_depth = 0usize;
    let mut block_depth = 0usize;
    let mut expr_tokens = 0usize;
    let mut expr_start: Option<Span> = None;
    let mut reported_depth = false;
    for i in 0..tokens.len() {
        let (token, span) = &tokens[i];
        let prev = i.checked_sub(1).map(|j| &tokens[j].0);
        let next = tokens.get(i + 1).map(|t| &t.0);
        match token {
            Token::VariableStart | Token::BlockStart => {
                expr_tokens = 0;
                bracket_depth = 0;
                reported_depth = false;
                expr_start = Some(*span);
                if let (Token::BlockStart, Some(Token::Ident(kw))) = (token, next) {
                    if LOADER_STATEMENTS.contains(kw) {
                        push(
                            span,
                            "template-loader-statement",
                            Severity::High,
                            format!("`{kw}` statement: loads other templates or files"),
                        );
                    }
                    if BLOCK_OPENERS.contains(kw) {
                        block_depth += 1;
                        if block_depth == MAX_BLOCK_DEPTH + 1 {
                            push(
                                span,
                                "template-deep-nesting",
                                Severity::Low,
                                format!("blocks nested more than {MAX_BLOCK_DEPTH} deep"),
                            );
                        }
                    } else if kw.starts_with("end") && BLOCK_OPENERS.contains(&&kw[3..]) {
                        block_depth = block_depth.saturating_sub(1);
                    }
                }
            }
            Token::VariableEnd | Token::BlockEnd => {
                if expr_tokens > MAX_EXPRESSION_TOKENS {
                    if let Some(start) = &expr_start {
                        push(
                            start,
                            "template-long-expression",
                            Severity::Low,
                            format!("one block of {expr_tokens} tokens"),
                        );
                    }
                }
                expr_start = None;
            }
            Token::ParenOpen | Token::BracketOpen | Token::BraceOpen => {
                bracket_depth += 1;
                if bracket_depth > MAX_BRACKET_DEPTH && !reported_depth {
                    reported_depth = true;
                    push(
                        span,
                        "template-deep-nesting",
                        Severity::Medium,
                        format!(
                            "brackets nested more than {MAX_BRACKET_DEPTH} deep in one expression"
                        ),
                    );
                }
            }
            Token::ParenClose | Token::BracketClose | Token::BraceClose => {
                bracket_depth = bracket_depth.saturating_sub(1);
            }
            Token::Ident(name) => {
                let after_dot = matches!(prev, Some(Token::Dot));
                let is_kwarg = matches!(next, Some(Token::Assign))
                    && matches!(prev, Some(Token::ParenOpen | Token::Comma));
                if after_dot {
                    if is_dunder(name) {
                        push(
                            span,
                            "template-dunder-attribute",
                            Severity::High,
                            format!("attribute `{name}`: Python internals, the start of a sandbox escape"),
                        );
                    } else if name.starts_with('_') {
                        push(
                            span,
                            "template-private-attribute",
                            Severity::Medium,
                            format!("private attribute `{name}`"),
                        );
                    } else if MODULE_CALLS.contains(name) {
                        push(
                            span,
                            "template-module-call",
                            Severity::High,
                            format!("attribute `{name}` of a module-like object"),
                        );
                    }
                } else if !is_kwarg {
                    let attribute_follows = matches!(next, Some(Token::Dot | Token::BracketOpen));
                    if GADGETS.contains(name) && attribute_follows {
                        push(
                            span,
                            "template-gadget",
                            Severity::High,
                            format!("attribute of the global `{name}`: a path to Python's globals"),
                        );
                    } else if FRAMEWORK_GLOBALS.contains(name) {
                        push(
                            span,
                            "template-framework-global",
                            Severity::Medium,
                            format!("`{name}`: a web framework's object, never given to a chat template"),
                        );
                    } else if *name == "attr" && matches!(prev, Some(Token::Pipe)) {
                        push(
                            span,
                            "template-attr-filter",
                            Severity::Medium,
                            "`attr` filter: attribute access by computed name".into(),
                        );
                    } else if is_dunder(name) {
                        push(
                            span,
                            "template-dunder-attribute",
                            Severity::High,
                            format!("name `{name}`: Python internals"),
                        );
                    }
                }
            }
            Token::Str(s) => string_finding(s, span, &mut push),
            Token::String(s) => string_finding(s, span, &mut push),
            _ => {}
        }
        if expr_start.is_some() {
            expr_tokens += 1;
        }
    }
    findings
}

fn string_finding(
    s: &str,
    span: &Span,
    push: &mut impl FnMut(&Span, &'static str, Severity, String),
) {
    let name = s.trim();
    if is_dunder(name) {
        push(
            span,
            "template-dunder-string",
            Severity::High,
            format!(
                "string {}: a dunder name, for `attr` or item access",
                show(name)
            ),
        );
    } else if MODULE_STRINGS.contains(&name) {
        push(
            span,
            "template-module-call",
            Severity::Medium,
            format!(
                "string {}: the name of a module or a command runner",
                show(name)
            ),
        );
    }
}
