//! What llama.cpp 0.3.16's Jinja engine (minja, `vendor/minja/minja.hpp`) refuses to parse
//! although jinja2 parses it. llama.cpp then silently renders with chatml instead.
//!
//! The rules were found by running llama.cpp's own parser (`scripts/llama/chat-template-ref.cpp`)
//! and transformers' on the templates of `tests/templates/llama-cpp-syntax.json`, which records
//! both verdicts; `scripts/check-templates.sh` runs both references on it again, and this
//! crate's tests require [`llama_cpp_syntax`] to flag exactly the templates jinja2 parses and
//! minja does not. Each rule names the construct minja lacks:
//!
//! - a statement other than minja's (`raw`, `with`, `call`, `autoescape`, …: "Expected block
//!   keyword"), and `block` ("Unexpected block");
//! - the `{%+` modifier (minja's block opening takes `-` or `~` only);
//! - hexadecimal, octal, binary and `_`-grouped number literals;
//! - a trailing comma in a list, dict or tuple literal (a call's arguments may have one);
//! - a name that is not ASCII (minja's `[a-zA-Z_]\w*`);
//! - two adjacent string literals (jinja2 joins them);
//! - a test with an argument (`is divisibleby 3`, `is divisibleby(3)`: minja's `is` takes a
//!   bare name).
//!
//! Templates jinja2 also refuses are not this module's (see `template-syntax`): the Go-template
//! comment `{{- /* … */ }}` of some converted Granite templates is refused by both.

use minijinja::machinery::{tokenize, Span, Token, WhitespaceConfig};
use minijinja::syntax::SyntaxConfig;

/// minja's statement keywords (its `block_keyword_tok`), `block` aside.
const MINJA_STATEMENTS: [&str; 17] = [
    "if",
    "else",
    "elif",
    "endif",
    "for",
    "endfor",
    "generation",
    "endgeneration",
    "set",
    "endset",
    "macro",
    "endmacro",
    "filter",
    "endfilter",
    "break",
    "continue",
    "endblock",
];

/// Where minja stops on `source` and why: `(line, column, construct)`, 1-based, for the first
/// construct it lacks; `None` when none is found. Meant for templates that parse in jinja2.
pub fn llama_cpp_syntax(source: &str) -> Option<(usize, usize, String)> {
    let ws = WhitespaceConfig {
        keep_trailing_newline: false,
        lstrip_blocks: true,
        trim_blocks: true,
    };
    let mut tokens: Vec<(Token<'_>, Span)> = Vec::new();
    for item in tokenize(source, false, SyntaxConfig::default(), ws) {
        match item {
            Ok(t) => tokens.push(t),
            Err(_) => break,
        }
    }
    let text = |span: &Span| source.get(span.start_offset as usize..span.end_offset as usize);
    let at = |span: &Span, what: String| {
        Some((span.start_line as usize, span.start_col as usize + 1, what))
    };
    // The lexer turns `{% raw %}…{% endraw %}` into its content alone: the statement is in
    // the text between that token and the one before.
    let mut last_end = 0;
    for (token, span) in &tokens {
        let start = span.start_offset as usize;
        if let (Token::TemplateData(_), Some(gap)) = (token, source.get(last_end..start)) {
            if let Some(offset) = raw_statement(gap) {
                let before = &source[..last_end + offset];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
                return Some((line, column, "the `raw` statement".into()));
            }
        }
        last_end = span.end_offset as usize;
    }
    // For each open parenthesis, whether it is a call's.
    let mut parens: Vec<bool> = Vec::new();
    for (i, (token, span)) in tokens.iter().enumerate() {
        let next = tokens.get(i + 1).map(|t| &t.0);
        match token {
            Token::BlockStart => {
                if text(span).is_some_and(|t| t.starts_with("{%+")) {
                    return at(span, "the `{%+` modifier".into());
                }
                if let Some(Token::Ident(kw)) = next {
                    if !MINJA_STATEMENTS.contains(kw) {
                        return at(span, format!("the `{kw}` statement"));
                    }
                }
            }
            Token::Int(_) | Token::Float(_) => {
                let literal = text(span).unwrap_or("");
                let radix = ["0x", "0X", "0o", "0O", "0b", "0B"]
                    .iter()
                    .any(|p| literal.starts_with(p));
                if radix || literal.contains('_') {
                    return at(span, format!("the number literal `{literal}`"));
                }
            }
            Token::ParenOpen => {
                // A call's parenthesis follows what is called; a tuple's does not.
                let prev = i.checked_sub(1).map(|j| &tokens[j].0);
                let call = matches!(
                    prev,
                    Some(Token::Ident(_) | Token::ParenClose | Token::BracketClose | Token::Str(_))
                );
                parens.push(call);
            }
            Token::ParenClose => {
                parens.pop();
            }
            Token::Comma if matches!(next, Some(Token::BracketClose | Token::BraceClose)) => {
                return at(span, "a trailing comma in a list or dict literal".into());
            }
            Token::Comma
                if matches!(next, Some(Token::ParenClose)) && parens.last() == Some(&false) =>
            {
                return at(span, "a trailing comma in a tuple".into());
            }
            Token::Ident(name) if !name.is_ascii() => {
                return at(span, format!("the non-ASCII name `{name}`"));
            }
            Token::Str(_) | Token::String(_)
                if matches!(next, Some(Token::Str(_) | Token::String(_))) =>
            {
                return at(span, "adjacent string literals".into());
            }
            Token::Ident("is") => {
                let mut j = i + 1;
                if matches!(tokens.get(j), Some((Token::Ident("not"), _))) {
                    j += 1;
                }
                let Some((Token::Ident(test), _)) = tokens.get(j) else {
                    continue;
                };
                // minja's `is` takes a bare name: no argument, in parentheses or not.
                let operand = match tokens.get(j + 1).map(|t| &t.0) {
                    Some(
                        Token::Int(_)
                        | Token::Float(_)
                        | Token::Str(_)
                        | Token::String(_)
                        | Token::ParenOpen
                        | Token::BracketOpen
                        | Token::BraceOpen,
                    ) => true,
                    Some(Token::Ident(word)) => {
                        !["and", "or", "if", "else", "not", "in", "is", "recursive"].contains(word)
                    }
                    _ => false,
                };
                if operand {
                    return at(
                        span,
                        format!("the test `{test}` with an argument (minja's tests take none)"),
                    );
                }
            }
            _ => {}
        }
    }
    None
}

/// The offset of the `{% raw %}` (any whitespace control) that ends `gap`, if it is one.
fn raw_statement(gap: &str) -> Option<usize> {
    if !gap.trim_end().ends_with("%}") {
        return None;
    }
    let start = gap.rfind("{%")?;
    let rest = gap[start + 2..]
        .trim_start_matches(['-', '+', '~'])
        .trim_start();
    let word = rest.strip_prefix("raw")?;
    (!word.starts_with(|c: char| c.is_alphanumeric() || c == '_')).then_some(start)
}
