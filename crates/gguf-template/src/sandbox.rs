//! The sandbox's bounds, by construction rather than by pattern.
//!
//! minijinja bounds instructions (fuel) but not the work inside one instruction, nor the size
//! of what one produces, nor the depth of the parser's tree. So a template is compiled here,
//! not by `Environment::template_from_str`:
//!
//! 1. its tokens are measured first (`check_nesting`): an expression or a statement nested
//!    deeper than [`MAX_EXPRESSION_DEPTH`] / [`MAX_STATEMENT_DEPTH`] is a syntax error, so no
//!    recursive walk (parser, code generator, drop) can overflow the stack;
//! 2. transformers' `{% generation %}…{% endgeneration %}` becomes a call block (its body is
//!    rendered, in its own scope, as jinja2's `CallBlock` renders it);
//! 3. the parsed tree is rebuilt with every operator, comparison, subscript, slice and filter
//!    turned into a call of one of the metered builtins below, and literal text into an
//!    expression that goes through the output formatter. Each metered builtin checks the
//!    deadline, refuses before allocating a value larger than [`MAX_VALUE_BYTES`] or
//!    [`MAX_VALUE_ITEMS`], and charges work in proportion to what it touches.

use crate::bounds::{MAX_EXPRESSION_DEPTH, MAX_STATEMENT_DEPTH, MAX_VALUE_BYTES, MAX_VALUE_ITEMS};
use minijinja::machinery::ast::{self, CallArg, Expr, Spanned, Stmt};
use minijinja::machinery::{tokenize, Span, Token, WhitespaceConfig};
use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Rest, Value, ValueKind};
use minijinja::{Environment, Error, ErrorKind, State};
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// The whitespace options transformers sets (`trim_blocks`, `lstrip_blocks`).
pub(crate) const WHITESPACE: WhitespaceConfig = WhitespaceConfig {
    keep_trailing_newline: false,
    lstrip_blocks: true,
    trim_blocks: true,
};

const OP: &str = "__gguf_op";
const COMPARE: &str = "__gguf_compare";
const ITEM: &str = "__gguf_item";
const SLICE: &str = "__gguf_slice";
const FILTER: &str = "__gguf_filter";
const GENERATION: &str = "__gguf_generation";

/// A template that nests too deeply: 1-based line, 0-based column, message.
pub(crate) struct TooDeep {
    pub span: Span,
    pub message: String,
}

/// Measures the nesting of every expression and statement from the token stream (a lexical
/// error is left for the parser to report).
pub(crate) fn check_nesting(source: &str) -> Result<(), TooDeep> {
    // One entry per open bracket: the tokens since the last comma or colon at that level.
    let mut runs: Vec<usize> = vec![0];
    // One entry per open statement: 1 + its `elif`s.
    let mut statements: Vec<usize> = Vec::new();
    let tokens: Vec<(Token<'_>, Span)> =
        tokenize(source, false, SyntaxConfig::default(), WHITESPACE)
            .map_while(Result::ok)
            .collect();
    let mut block_start = false;
    for (i, (token, span)) in tokens.iter().enumerate() {
        let span = *span;
        let after_block_start = std::mem::replace(&mut block_start, false);
        match token {
            Token::VariableStart | Token::BlockStart => {
                runs.clear();
                runs.push(0);
                block_start = matches!(token, Token::BlockStart);
                continue;
            }
            Token::VariableEnd | Token::BlockEnd | Token::TemplateData(_) => continue,
            Token::Ident(keyword) if after_block_start => {
                let keyword: &str = keyword;
                let opens = matches!(
                    keyword,
                    "if" | "for"
                        | "macro"
                        | "call"
                        | "filter"
                        | "with"
                        | "autoescape"
                        | "generation"
                        | "block"
                        | "raw"
                ) || (keyword == "set" && is_set_block(&tokens[i..]));
                if opens {
                    statements.push(1);
                } else if keyword == "elif" {
                    if let Some(top) = statements.last_mut() {
                        *top += 1;
                    }
                } else if keyword.starts_with("end") {
                    statements.pop();
                }
                if statements.iter().sum::<usize>() > MAX_STATEMENT_DEPTH {
                    return Err(TooDeep {
                        span,
                        message: format!(
                            "statements nested more than {MAX_STATEMENT_DEPTH} deep (MAX_STATEMENT_DEPTH)"
                        ),
                    });
                }
            }
            Token::ParenOpen | Token::BracketOpen | Token::BraceOpen => {
                if let Some(top) = runs.last_mut() {
                    *top += 1;
                }
                runs.push(0);
            }
            Token::ParenClose | Token::BracketClose | Token::BraceClose => {
                if runs.len() > 1 {
                    runs.pop();
                }
            }
            Token::Comma | Token::Colon => {
                if let Some(top) = runs.last_mut() {
                    *top = 0;
                }
            }
            _ => {
                if let Some(top) = runs.last_mut() {
                    *top += 1;
                }
            }
        }
        if runs.iter().sum::<usize>() + runs.len() > MAX_EXPRESSION_DEPTH {
            return Err(TooDeep {
                span,
                message: format!(
                    "expression nested more than {MAX_EXPRESSION_DEPTH} deep (MAX_EXPRESSION_DEPTH)"
                ),
            });
        }
    }
    Ok(())
}

/// `{% set x %}` (a block) rather than `{% set x = … %}`.
fn is_set_block(tokens: &[(Token<'_>, Span)]) -> bool {
    for (token, _) in tokens {
        match token {
            Token::Assign => return false,
            Token::BlockEnd => return true,
            _ => {}
        }
    }
    true
}

/// transformers' `{% generation %}` and `{% endgeneration %}` as a call block of the
/// [`GENERATION`] builtin (only the tag name is replaced, so lines stay where they were).
pub(crate) fn rewrite_generation(source: &str) -> Cow<'_, str> {
    let mut edits: Vec<(usize, usize, &str)> = Vec::new();
    let mut previous: Option<Token<'_>> = None;
    for item in tokenize(source, false, SyntaxConfig::default(), WHITESPACE) {
        let Ok((token, span)) = item else { break };
        if matches!(previous, Some(Token::BlockStart)) {
            let range = (span.start_offset as usize, span.end_offset as usize);
            match token {
                Token::Ident("generation") => {
                    edits.push((range.0, range.1, "call __gguf_generation()"))
                }
                Token::Ident("endgeneration") => edits.push((range.0, range.1, "endcall")),
                _ => {}
            }
        }
        previous = Some(token);
    }
    if edits.is_empty() {
        return Cow::Borrowed(source);
    }
    let mut out = String::with_capacity(source.len() + edits.len() * 16);
    let mut at = 0;
    for (start, end, text) in edits {
        out.push_str(&source[at..start]);
        out.push_str(text);
        at = end;
    }
    out.push_str(&source[at..]);
    Cow::Owned(out)
}

/// The parsed tree rebuilt with metered builtins (see the module's documentation).
pub(crate) fn meter_stmt<'a>(stmt: &Stmt<'a>) -> Stmt<'a> {
    let body = |b: &[Stmt<'a>]| b.iter().map(meter_stmt).collect::<Vec<_>>();
    match stmt {
        Stmt::Template(t) => Stmt::Template(Spanned::new(
            ast::Template {
                children: body(&t.children),
            },
            t.span(),
        )),
        Stmt::EmitExpr(e) => Stmt::EmitExpr(Spanned::new(
            ast::EmitExpr {
                expr: meter(&e.expr),
            },
            e.span(),
        )),
        Stmt::EmitRaw(r) => Stmt::EmitExpr(Spanned::new(
            ast::EmitExpr {
                expr: constant(Value::from(r.raw), r.span()),
            },
            r.span(),
        )),
        Stmt::ForLoop(f) => Stmt::ForLoop(Spanned::new(
            ast::ForLoop {
                target: copy(&f.target),
                iter: meter(&f.iter),
                filter_expr: f.filter_expr.as_ref().map(meter),
                recursive: f.recursive,
                body: body(&f.body),
                else_body: body(&f.else_body),
            },
            f.span(),
        )),
        Stmt::IfCond(i) => Stmt::IfCond(Spanned::new(
            ast::IfCond {
                expr: meter(&i.expr),
                true_body: body(&i.true_body),
                false_body: body(&i.false_body),
            },
            i.span(),
        )),
        Stmt::WithBlock(w) => Stmt::WithBlock(Spanned::new(
            ast::WithBlock {
                assignments: w
                    .assignments
                    .iter()
                    .map(|(t, e)| (copy(t), meter(e)))
                    .collect(),
                body: body(&w.body),
            },
            w.span(),
        )),
        Stmt::Set(s) => Stmt::Set(Spanned::new(
            ast::Set {
                target: copy(&s.target),
                expr: meter(&s.expr),
            },
            s.span(),
        )),
        Stmt::SetBlock(s) => Stmt::SetBlock(Spanned::new(
            ast::SetBlock {
                target: copy(&s.target),
                filter: s.filter.as_ref().map(copy),
                body: body(&s.body),
            },
            s.span(),
        )),
        Stmt::AutoEscape(a) => Stmt::AutoEscape(Spanned::new(
            ast::AutoEscape {
                enabled: meter(&a.enabled),
                body: body(&a.body),
            },
            a.span(),
        )),
        Stmt::FilterBlock(f) => Stmt::FilterBlock(Spanned::new(
            ast::FilterBlock {
                filter: copy(&f.filter),
                body: body(&f.body),
            },
            f.span(),
        )),
        Stmt::Block(b) => Stmt::Block(Spanned::new(
            ast::Block {
                name: b.name,
                required: b.required,
                body: body(&b.body),
            },
            b.span(),
        )),
        Stmt::Import(i) => Stmt::Import(Spanned::new(
            ast::Import {
                expr: copy(&i.expr),
                name: copy(&i.name),
            },
            i.span(),
        )),
        Stmt::FromImport(i) => Stmt::FromImport(Spanned::new(
            ast::FromImport {
                expr: copy(&i.expr),
                names: i
                    .names
                    .iter()
                    .map(|(a, b)| (copy(a), b.as_ref().map(copy)))
                    .collect(),
            },
            i.span(),
        )),
        Stmt::Extends(e) => Stmt::Extends(Spanned::new(
            ast::Extends {
                name: copy(&e.name),
            },
            e.span(),
        )),
        Stmt::Include(i) => Stmt::Include(Spanned::new(
            ast::Include {
                name: copy(&i.name),
                ignore_missing: i.ignore_missing,
            },
            i.span(),
        )),
        Stmt::Macro(m) => Stmt::Macro(Spanned::new(macro_decl(m), m.span())),
        Stmt::CallBlock(c) => Stmt::CallBlock(Spanned::new(
            ast::CallBlock {
                call: Spanned::new(call(&c.call, meter), c.call.span()),
                macro_decl: Spanned::new(macro_decl(&c.macro_decl), c.macro_decl.span()),
            },
            c.span(),
        )),
        Stmt::Continue(c) => Stmt::Continue(Spanned::new(ast::Continue, c.span())),
        Stmt::Break(b) => Stmt::Break(Spanned::new(ast::Break, b.span())),
        Stmt::Do(d) => Stmt::Do(Spanned::new(
            ast::Do {
                call: Spanned::new(call(&d.call, meter), d.call.span()),
            },
            d.span(),
        )),
    }
}

fn macro_decl<'a>(m: &ast::Macro<'a>) -> ast::Macro<'a> {
    ast::Macro {
        name: m.name,
        args: m.args.iter().map(copy).collect(),
        defaults: m.defaults.iter().map(meter).collect(),
        body: m.body.iter().map(meter_stmt).collect(),
    }
}

fn constant<'a>(value: Value, span: Span) -> Expr<'a> {
    Expr::Const(Spanned::new(ast::Const { value }, span))
}

fn builtin<'a>(name: &'static str, args: Vec<Expr<'a>>, span: Span) -> Expr<'a> {
    builtin_args(name, args.into_iter().map(CallArg::Pos).collect(), span)
}

fn builtin_args<'a>(name: &'static str, args: Vec<CallArg<'a>>, span: Span) -> Expr<'a> {
    Expr::Call(Spanned::new(
        ast::Call {
            expr: Expr::Var(Spanned::new(ast::Var { id: name }, span)),
            args,
        },
        span,
    ))
}

fn call<'a>(c: &ast::Call<'a>, f: fn(&Expr<'a>) -> Expr<'a>) -> ast::Call<'a> {
    // The callee keeps its shape (`loop.cycle`, `caller`, `super` are recognised by it).
    let callee = match &c.expr {
        Expr::GetAttr(g) => Expr::GetAttr(Spanned::new(
            ast::GetAttr {
                expr: f(&g.expr),
                name: g.name,
            },
            g.span(),
        )),
        other => f(other),
    };
    ast::Call {
        expr: callee,
        args: call_args(&c.args, f),
    }
}

fn call_args<'a>(args: &[CallArg<'a>], f: fn(&Expr<'a>) -> Expr<'a>) -> Vec<CallArg<'a>> {
    args.iter()
        .map(|a| match a {
            CallArg::Pos(e) => CallArg::Pos(f(e)),
            CallArg::Kwarg(name, e) => CallArg::Kwarg(name, f(e)),
            CallArg::PosSplat(e) => CallArg::PosSplat(f(e)),
            CallArg::KwargSplat(e) => CallArg::KwargSplat(f(e)),
        })
        .collect()
}

fn op_name(op: ast::BinOpKind) -> Option<&'static str> {
    use ast::BinOpKind as B;
    Some(match op {
        B::Add => "+",
        B::Sub => "-",
        B::Mul => "*",
        B::Div => "/",
        B::FloorDiv => "//",
        B::Rem => "%",
        B::Pow => "**",
        B::Concat => "~",
        B::In => "in",
        B::Eq => "==",
        B::Ne => "!=",
        B::Lt => "<",
        B::Lte => "<=",
        B::Gt => ">",
        B::Gte => ">=",
        B::ScAnd | B::ScOr => return None,
    })
}

fn compare_name(op: &ast::CompareOpKind) -> &'static str {
    use ast::CompareOpKind as C;
    match op {
        C::Eq => "==",
        C::Ne => "!=",
        C::Lt => "<",
        C::Lte => "<=",
        C::Gt => ">",
        C::Gte => ">=",
        C::In => "in",
        C::NotIn => "not in",
    }
}

/// An expression rebuilt with metered builtins.
fn meter<'a>(expr: &Expr<'a>) -> Expr<'a> {
    match expr {
        Expr::BinOp(b) => match op_name(b.op) {
            Some(name) => builtin(
                OP,
                vec![
                    constant(Value::from(name), b.span()),
                    meter(&b.left),
                    meter(&b.right),
                ],
                b.span(),
            ),
            None => Expr::BinOp(Spanned::new(
                ast::BinOp {
                    op: b.op,
                    left: meter(&b.left),
                    right: meter(&b.right),
                },
                b.span(),
            )),
        },
        Expr::Compare(c) => {
            let mut args = vec![meter(&c.expr)];
            for op in &c.ops {
                args.push(constant(Value::from(compare_name(&op.op)), c.span()));
                args.push(meter(&op.expr));
            }
            builtin(COMPARE, args, c.span())
        }
        Expr::GetItem(g) => builtin(
            ITEM,
            vec![meter(&g.expr), meter(&g.subscript_expr)],
            g.span(),
        ),
        Expr::Slice(s) => {
            let part = |p: &Option<Expr<'a>>| {
                p.as_ref()
                    .map(meter)
                    .unwrap_or_else(|| constant(Value::from(()), s.span()))
            };
            builtin(
                SLICE,
                vec![meter(&s.expr), part(&s.start), part(&s.stop), part(&s.step)],
                s.span(),
            )
        }
        Expr::Filter(f) => match &f.expr {
            Some(input) => {
                let mut args = vec![
                    CallArg::Pos(constant(Value::from(f.name), f.span())),
                    CallArg::Pos(meter(input)),
                ];
                args.extend(call_args(&f.args, meter));
                builtin_args(FILTER, args, f.span())
            }
            None => copy(expr),
        },
        Expr::UnaryOp(u) => Expr::UnaryOp(Spanned::new(
            ast::UnaryOp {
                op: match u.op {
                    ast::UnaryOpKind::Not => ast::UnaryOpKind::Not,
                    ast::UnaryOpKind::Neg => ast::UnaryOpKind::Neg,
                },
                expr: meter(&u.expr),
            },
            u.span(),
        )),
        Expr::IfExpr(i) => Expr::IfExpr(Spanned::new(
            ast::IfExpr {
                test_expr: meter(&i.test_expr),
                true_expr: meter(&i.true_expr),
                false_expr: i.false_expr.as_ref().map(meter),
            },
            i.span(),
        )),
        Expr::Test(t) => Expr::Test(Spanned::new(
            ast::Test {
                name: t.name,
                expr: meter(&t.expr),
                args: call_args(&t.args, meter),
            },
            t.span(),
        )),
        Expr::GetAttr(g) => Expr::GetAttr(Spanned::new(
            ast::GetAttr {
                expr: meter(&g.expr),
                name: g.name,
            },
            g.span(),
        )),
        Expr::Call(c) => Expr::Call(Spanned::new(call(c, meter), c.span())),
        Expr::List(l) => Expr::List(Spanned::new(
            ast::List {
                items: l.items.iter().map(meter).collect(),
            },
            l.span(),
        )),
        Expr::Map(m) => Expr::Map(Spanned::new(
            ast::Map {
                keys: m.keys.iter().map(meter).collect(),
                values: m.values.iter().map(meter).collect(),
            },
            m.span(),
        )),
        Expr::Var(_) | Expr::Const(_) => copy(expr),
    }
}

/// An expression copied as it is (assignment targets, `{% filter %}` chains).
fn copy<'a>(expr: &Expr<'a>) -> Expr<'a> {
    match expr {
        Expr::Var(v) => Expr::Var(Spanned::new(ast::Var { id: v.id }, v.span())),
        Expr::Const(c) => constant(c.value.clone(), c.span()),
        Expr::Slice(s) => Expr::Slice(Spanned::new(
            ast::Slice {
                expr: copy(&s.expr),
                start: s.start.as_ref().map(copy),
                stop: s.stop.as_ref().map(copy),
                step: s.step.as_ref().map(copy),
            },
            s.span(),
        )),
        Expr::UnaryOp(u) => Expr::UnaryOp(Spanned::new(
            ast::UnaryOp {
                op: match u.op {
                    ast::UnaryOpKind::Not => ast::UnaryOpKind::Not,
                    ast::UnaryOpKind::Neg => ast::UnaryOpKind::Neg,
                },
                expr: copy(&u.expr),
            },
            u.span(),
        )),
        Expr::BinOp(b) => Expr::BinOp(Spanned::new(
            ast::BinOp {
                op: b.op,
                left: copy(&b.left),
                right: copy(&b.right),
            },
            b.span(),
        )),
        Expr::Compare(c) => Expr::Compare(Spanned::new(
            ast::Compare {
                expr: copy(&c.expr),
                ops: c
                    .ops
                    .iter()
                    .map(|o| ast::CompareOp {
                        op: compare_kind(&o.op),
                        expr: copy(&o.expr),
                    })
                    .collect(),
            },
            c.span(),
        )),
        Expr::IfExpr(i) => Expr::IfExpr(Spanned::new(
            ast::IfExpr {
                test_expr: copy(&i.test_expr),
                true_expr: copy(&i.true_expr),
                false_expr: i.false_expr.as_ref().map(copy),
            },
            i.span(),
        )),
        Expr::Filter(f) => Expr::Filter(Spanned::new(
            ast::Filter {
                name: f.name,
                expr: f.expr.as_ref().map(copy),
                args: call_args(&f.args, copy),
            },
            f.span(),
        )),
        Expr::Test(t) => Expr::Test(Spanned::new(
            ast::Test {
                name: t.name,
                expr: copy(&t.expr),
                args: call_args(&t.args, copy),
            },
            t.span(),
        )),
        Expr::GetAttr(g) => Expr::GetAttr(Spanned::new(
            ast::GetAttr {
                expr: copy(&g.expr),
                name: g.name,
            },
            g.span(),
        )),
        Expr::GetItem(g) => Expr::GetItem(Spanned::new(
            ast::GetItem {
                expr: copy(&g.expr),
                subscript_expr: copy(&g.subscript_expr),
            },
            g.span(),
        )),
        Expr::Call(c) => Expr::Call(Spanned::new(call(c, copy), c.span())),
        Expr::List(l) => Expr::List(Spanned::new(
            ast::List {
                items: l.items.iter().map(copy).collect(),
            },
            l.span(),
        )),
        Expr::Map(m) => Expr::Map(Spanned::new(
            ast::Map {
                keys: m.keys.iter().map(copy).collect(),
                values: m.values.iter().map(copy).collect(),
            },
            m.span(),
        )),
    }
}

fn compare_kind(op: &ast::CompareOpKind) -> ast::CompareOpKind {
    use ast::CompareOpKind as C;
    match op {
        C::Eq => C::Eq,
        C::Ne => C::Ne,
        C::Lt => C::Lt,
        C::Lte => C::Lte,
        C::Gt => C::Gt,
        C::Gte => C::Gte,
        C::In => C::In,
        C::NotIn => C::NotIn,
    }
}

pub(crate) const TRIPPED_NONE: u8 = 0;
pub(crate) const TRIPPED_OUTPUT: u8 = 1;
pub(crate) const TRIPPED_TIME: u8 = 2;
pub(crate) const TRIPPED_WORK: u8 = 3;
pub(crate) const TRIPPED_SIZE: u8 = 4;

/// The budget of one render, shared by the output formatter and every metered builtin.
#[derive(Debug)]
pub(crate) struct Meter {
    pub deadline: Instant,
    pub work_left: AtomicU64,
    pub output_left: AtomicU64,
    pub tripped: AtomicU8,
}

impl Meter {
    fn trip(&self, why: u8, message: &'static str) -> Error {
        self.tripped.store(why, Ordering::Relaxed);
        Error::new(ErrorKind::InvalidOperation, message)
    }

    /// Checks the deadline and takes `units` of work.
    pub fn charge(&self, units: u64) -> Result<(), Error> {
        if Instant::now() > self.deadline {
            return Err(self.trip(TRIPPED_TIME, "time limit"));
        }
        let left = self.work_left.load(Ordering::Relaxed);
        if units > left {
            return Err(self.trip(TRIPPED_WORK, "work budget"));
        }
        self.work_left.store(left - units, Ordering::Relaxed);
        Ok(())
    }

    /// Takes `bytes` of output.
    pub fn emit(&self, bytes: usize) -> Result<(), Error> {
        self.charge(bytes as u64)?;
        let left = self.output_left.load(Ordering::Relaxed);
        if bytes as u64 > left {
            return Err(self.trip(TRIPPED_OUTPUT, "output limit"));
        }
        self.output_left
            .store(left - bytes as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Refuses a value of `bytes` bytes or `items` items past the bounds.
    pub fn produce(&self, bytes: usize, items: usize) -> Result<(), Error> {
        if bytes > MAX_VALUE_BYTES || items > MAX_VALUE_ITEMS {
            return Err(self.trip(TRIPPED_SIZE, "value size limit"));
        }
        self.charge((bytes + items) as u64)
    }

    /// Checks a value already made (the result of a builtin).
    fn produced(&self, value: &Value) -> Result<(), Error> {
        let (bytes, items) = shallow_size(value);
        self.produce(bytes, items)
    }
}

/// A value's bytes (a string's) or items (a list's or map's), without walking it.
fn shallow_size(value: &Value) -> (usize, usize) {
    match value.as_str() {
        Some(s) => (s.len(), 0),
        None => (0, value.len().unwrap_or(0)),
    }
}

fn as_count(value: &Value) -> usize {
    i64::try_from(value.clone())
        .ok()
        .map_or(0, |n| n.unsigned_abs().min(usize::MAX as u64) as usize)
}

/// The largest number written in a printf or `str.format` specification (`%1500000000s`,
/// `{:>1500000000}`), which is at least how wide the result is.
fn widest_field(spec: &str) -> usize {
    spec.split(|c: char| !c.is_ascii_digit())
        .filter(|d| !d.is_empty())
        .map(|d| d.parse::<usize>().unwrap_or(usize::MAX))
        .max()
        .unwrap_or(0)
}

/// The bytes and items a string operation can make, from its name, input and arguments,
/// before it runs. Operations not listed make at most a constant times their input.
fn estimate(name: &str, input: &Value, args: &[Value]) -> (usize, usize) {
    let text = input.as_str().unwrap_or("");
    let len = text.len().max(shallow_size(input).1);
    let arg = |i: usize| args.get(i).map(as_count).unwrap_or(0);
    let arg_str = |i: usize| args.get(i).and_then(Value::as_str).unwrap_or("");
    let fill_widths: usize = args.iter().map(|a| shallow_size(a).0).sum();
    match name {
        "indent" => {
            let width = args
                .first()
                .map_or(4, |w| w.as_str().map_or(as_count(w), str::len));
            let lines = text.matches('\n').count() + 1;
            (len.saturating_add(lines.saturating_mul(width)), 0)
        }
        "center" | "ljust" | "rjust" | "zfill" | "truncate" | "wordwrap" => (len.max(arg(0)), 0),
        "format" => (
            len.saturating_add(widest_field(text))
                .saturating_add(fill_widths),
            0,
        ),
        "replace" => {
            let (old, new) = (arg_str(0), arg_str(1));
            let matches = if old.is_empty() {
                text.chars().count() + 1
            } else {
                text.matches(old).count()
            };
            (len.saturating_add(matches.saturating_mul(new.len())), 0)
        }
        "batch" | "slice" => (0, len.saturating_add(arg(0))),
        "list" | "split" | "rsplit" | "splitlines" => (0, text.chars().count().max(len)),
        "join" => (
            len.saturating_mul(arg_str(0).len().max(1))
                .saturating_add(len),
            0,
        ),
        "expandtabs" => (len.saturating_mul(arg(0).max(8)), 0),
        _ => (len, 0),
    }
}

/// The work of a filter or method beyond the size of what it makes.
fn work(name: &str, input: &Value) -> u64 {
    let n = shallow_size(input);
    let n = (n.0 + n.1) as u64;
    match name {
        "sort" | "dictsort" | "unique" | "groupby" | "min" | "max" => {
            // A comparison of two values costs a few byte operations.
            n.saturating_mul(4 * u64::from(64 - n.leading_zeros()).max(1))
        }
        _ => n,
    }
}

/// The environment used to evaluate one operator on two values with minijinja's semantics.
fn operators() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_fuel(None);
        env
    })
}

fn evaluate(expression: &'static str, ctx: &[(&str, Value)]) -> Result<Value, Error> {
    let ctx: Value = ctx.iter().map(|(k, v)| (*k, v.clone())).collect();
    operators().compile_expression(expression)?.eval(ctx)
}

fn binary_expression(op: &str) -> Option<&'static str> {
    Some(match op {
        "+" => "a + b",
        "-" => "a - b",
        "*" => "a * b",
        "/" => "a / b",
        "//" => "a // b",
        "%" => "a % b",
        "**" => "a ** b",
        "in" => "a in b",
        "not in" => "a not in b",
        "==" => "a == b",
        "!=" => "a != b",
        "<" => "a < b",
        "<=" => "a <= b",
        ">" => "a > b",
        ">=" => "a >= b",
        _ => return None,
    })
}

/// markupsafe's `escape`: what `Markup + str` does to the plain string.
fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn binary(meter: &Meter, op: &str, a: &Value, b: &Value) -> Result<Value, Error> {
    let (sa, sb) = (shallow_size(a), shallow_size(b));
    match op {
        "~" => {
            let mut text = String::new();
            crate::pyfmt::py_str(a, &mut text)?;
            crate::pyfmt::py_str(b, &mut text)?;
            meter.produce(text.len(), 0)?;
            return Ok(Value::from(text));
        }
        "+" => {
            meter.produce(sa.0 + sb.0, sa.1 + sb.1)?;
            // jinja2's `Markup + str` (and `str + Markup`) escapes the plain string; the sum
            // of two Markups is Markup.
            if let (Some(x), Some(y)) = (a.as_str(), b.as_str()) {
                let (x, y) = match (a.is_safe(), b.is_safe()) {
                    (true, false) => (Cow::Borrowed(x), Cow::Owned(html_escape(y))),
                    (false, true) => (Cow::Owned(html_escape(x)), Cow::Borrowed(y)),
                    _ => (Cow::Borrowed(x), Cow::Borrowed(y)),
                };
                meter.produce(x.len() + y.len(), 0)?;
                let sum = format!("{x}{y}");
                return Ok(if a.is_safe() || b.is_safe() {
                    Value::from_safe_string(sum)
                } else {
                    Value::from(sum)
                });
            }
        }
        "*" => {
            let (value, times) = if a.kind() == ValueKind::Number {
                (sb, a)
            } else {
                (sa, b)
            };
            let times = as_count(times);
            meter.produce(value.0.saturating_mul(times), value.1.saturating_mul(times))?;
        }
        "%" => {
            let fill = shallow_size(b).0;
            meter.produce(
                sa.0.saturating_add(widest_field(a.as_str().unwrap_or("")))
                    .saturating_add(fill),
                0,
            )?;
        }
        _ => meter.charge((sa.0 + sa.1).min(sb.0 + sb.1) as u64 + 1)?,
    }
    if matches!(op, "in" | "not in") {
        meter.charge((sb.0 + sb.1) as u64)?;
    }
    let expression = binary_expression(op)
        .ok_or_else(|| Error::new(ErrorKind::InvalidOperation, "unknown operator"))?;
    let result = evaluate(expression, &[("a", a.clone()), ("b", b.clone())])?;
    meter.produced(&result)?;
    Ok(result)
}

/// Adds the metered builtins to `env`.
pub(crate) fn add_metered(env: &mut Environment<'_>, meter: &Arc<Meter>) {
    let m = meter.clone();
    env.add_function(OP, move |op: &str, a: Value, b: Value| {
        binary(&m, op, &a, &b)
    });
    let m = meter.clone();
    env.add_function(COMPARE, move |args: Rest<Value>| -> Result<Value, Error> {
        // `a < b < c`: each pair in turn, stopping at the first false.
        let mut left = args.first().cloned().unwrap_or_default();
        let mut result = Value::from(true);
        for pair in args.get(1..).unwrap_or_default().chunks(2) {
            let [op, right] = pair else { break };
            result = binary(&m, op.as_str().unwrap_or(""), &left, right)?;
            if !result.is_true() {
                break;
            }
            left = right.clone();
        }
        Ok(result)
    });
    let m = meter.clone();
    env.add_function(ITEM, move |value: Value, key: Value| {
        // Indexing a string walks its characters.
        m.charge(shallow_size(&value).0 as u64 + 1)?;
        evaluate("a[b]", &[("a", value), ("b", key)])
    });
    let m = meter.clone();
    env.add_function(
        SLICE,
        move |value: Value, start: Value, stop: Value, step: Value| {
            let (bytes, items) = shallow_size(&value);
            m.charge((bytes + items) as u64 + 1)?;
            let result = evaluate(
                "a[start:stop:step]",
                &[
                    ("a", value),
                    ("start", start),
                    ("stop", stop),
                    ("step", step),
                ],
            )?;
            m.produced(&result)?;
            Ok(result)
        },
    );
    let m = meter.clone();
    env.add_function(
        FILTER,
        move |state: &State, name: &str, args: Rest<Value>| -> Result<Value, Error> {
            let input = args.first().cloned().unwrap_or_default();
            let rest = args.get(1..).unwrap_or_default();
            let (bytes, items) = estimate(name, &input, rest);
            m.produce(bytes, items)?;
            m.charge(work(name, &input))?;
            let result = state.apply_filter(name, &args)?;
            m.produced(&result)?;
            Ok(result)
        },
    );
    env.add_function(
        GENERATION,
        |state: &State, kwargs: minijinja::value::Kwargs| -> Result<Value, Error> {
            let caller: Value = kwargs.get("caller")?;
            kwargs.assert_all_used()?;
            caller.call(state, &[])
        },
    );
    let m = meter.clone();
    env.set_unknown_method_callback(
        move |state: &State, value: &Value, method: &str, args: &[Value]| {
            let (bytes, items) = estimate(method, value, args);
            m.produce(bytes, items)?;
            m.charge(work(method, value))?;
            let result =
                minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)?;
            m.produced(&result)?;
            Ok(result)
        },
    );
}
