//! Rendering a conversation the way transformers' `apply_chat_template(tokenize=False)` does,
//! in a sandboxed minijinja environment.
//!
//! What transformers binds (`transformers/utils/chat_template_utils.py`, 5.x): an
//! `ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)` with the
//! `loopcontrols` extension; the filter `tojson(x, ensure_ascii=False, indent=None,
//! separators=None, sort_keys=False)` (Python's `json.dumps`); the globals `raise_exception`,
//! `strftime_now`, `dict`, `namespace`; and the variables `messages` (each message with its
//! `None`-valued keys dropped and its reasoning aliased to `reasoning_content` and `thinking`),
//! `tools`, `documents`, `add_generation_prompt`, then the tokenizer's special tokens that are
//! set (`bos_token`, `eos_token`, `unk_token`, `sep_token`, `pad_token`, `cls_token`,
//! `mask_token`) and any extra keyword arguments, which override them.
//!
//! The sandbox: minijinja has no filesystem loader here and values are plain data (no Python
//! objects, so no attributes beyond keys and the Python-compatible string, list and mapping
//! methods); every render is bounded in nesting, instructions, work inside builtins, the size
//! of every value it makes, output and time (see [`crate::sandbox`] and [`crate::bounds`]).

use crate::bounds;
use crate::pyfmt::{json_dumps, py_str, JsonOptions};
use crate::read::SpecialTokens;
use crate::sandbox::{self, Meter};
use chrono::NaiveDateTime;
use minijinja::machinery::{CodeGenerator, Instructions, Vm};
use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{Environment, Error, ErrorKind, State};
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bounds on one render (the defaults are in [`crate::bounds`], with the bounds that are
/// not settable: value sizes and nesting).
#[derive(Clone, Debug)]
pub struct Limits {
    /// minijinja instructions (the `fuel` feature).
    pub fuel: u64,
    /// Work inside builtins (filters, methods, operators), about one unit per byte or item.
    pub work: u64,
    /// Nesting of loops, conditions and macro calls.
    pub recursion: usize,
    /// Bytes of output.
    pub max_output: usize,
    /// Wall-clock time, checked at every write and builtin call.
    pub max_time: Duration,
    /// An outer deadline (a whole file's renders), if earlier than `max_time` from the start.
    pub not_after: Option<Instant>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel: bounds::DEFAULT_FUEL,
            work: bounds::DEFAULT_WORK,
            recursion: bounds::DEFAULT_RECURSION,
            max_output: bounds::DEFAULT_MAX_OUTPUT,
            max_time: Duration::from_secs(bounds::DEFAULT_RENDER_SECONDS),
            not_after: None,
        }
    }
}

/// What a conversation render gets, besides the template.
#[derive(Clone, Debug, Default)]
pub struct Conversation {
    /// The messages: a JSON array of objects (`role`, `content`, `tool_calls`, …).
    pub messages: serde_json::Value,
    /// Tool schemas (a JSON array), or `None`: the template then sees `tools` as `none`.
    pub tools: Option<serde_json::Value>,
    /// Documents for retrieval templates, or `None`.
    pub documents: Option<serde_json::Value>,
    /// Whether to end with the header of an assistant turn.
    pub add_generation_prompt: bool,
    /// Further variables (transformers' `**kwargs`), bound after the special tokens.
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// The time `strftime_now` reports (local time); `None` is the clock's.
    pub now: Option<NaiveDateTime>,
}

/// Why a render failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RenderError {
    /// The template does not parse.
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column (in characters).
        column: usize,
        /// minijinja's description.
        message: String,
    },
    /// The template called `raise_exception(message)`.
    Raised(String),
    /// A limit was reached.
    Limit(&'static str),
    /// The input is not what a render takes (messages not a list of objects, …).
    Input(String),
    /// Any other error while rendering (an undefined attribute, a type error, …).
    Runtime {
        /// 1-based line, when known.
        line: Option<usize>,
        /// minijinja's description.
        message: String,
    },
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RenderError::Syntax {
                line,
                column,
                message,
            } => write!(f, "syntax error at line {line}, column {column}: {message}"),
            RenderError::Raised(m) => write!(f, "the template raised an exception: {m}"),
            RenderError::Limit(what) => write!(f, "render stopped: {what}"),
            RenderError::Input(m) => write!(f, "bad input: {m}"),
            RenderError::Runtime {
                line: Some(l),
                message,
            } => write!(f, "render error at line {l}: {message}"),
            RenderError::Runtime {
                line: None,
                message,
            } => write!(f, "render error: {message}"),
        }
    }
}

impl std::error::Error for RenderError {}

/// The error a template's `raise_exception` call carries (found again by downcasting).
#[derive(Debug)]
struct Raised(String);

impl fmt::Display for Raised {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Raised {}

/// The sandboxed environment with transformers' options, filters and globals.
fn environment<'s>(limits: &Limits, now: NaiveDateTime, meter: &Arc<Meter>) -> Environment<'s> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(false);
    env.set_fuel(Some(limits.fuel));
    env.set_recursion_limit(limits.recursion);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Lenient);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    let output = meter.clone();
    env.set_formatter(move |out, _state, value| {
        let mut text = String::new();
        py_str(value, &mut text)?;
        output.emit(text.len())?;
        out.write_str(&text)
            .map_err(|_| Error::new(ErrorKind::WriteFailure, "write failed"))
    });
    env.add_test("none", |value: &Value| crate::pyfmt::is_none(value));
    env.add_filter("tojson", tojson);
    add_generator_filters(&mut env);
    add_string_filters(&mut env);
    env.add_filter("string", |value: Value| -> Result<String, Error> {
        let mut text = String::new();
        py_str(&value, &mut text)?;
        Ok(text)
    });
    env.add_function(
        "raise_exception",
        |message: Option<Value>| -> Result<Value, Error> {
            let mut text = String::new();
            if let Some(m) = &message {
                py_str(m, &mut text)?;
            }
            Err(Error::new(ErrorKind::InvalidOperation, text.clone()).with_source(Raised(text)))
        },
    );
    let clock = meter.clone();
    env.add_function(
        "strftime_now",
        move |format: &str| -> Result<String, Error> {
            // No directive expands to more than 64 bytes (`%c` is 24).
            clock.produce(format.len().saturating_mul(32), 0)?;
            strftime(now, format)
        },
    );
    sandbox::add_metered(&mut env, meter);
    env
}

/// jinja2's `map`, `select`, `reject`, `selectattr`, `rejectattr`: `if value:` guards their
/// loop (so `none | map(...)` is empty) and they return a generator.
fn add_generator_filters(env: &mut Environment<'static>) {
    use minijinja::filters;
    use std::borrow::Cow;
    fn generator(
        value: &Value,
        items: impl FnOnce() -> Result<Vec<Value>, Error>,
    ) -> Result<Value, Error> {
        let items = if value.is_true() {
            items()?
        } else {
            Vec::new()
        };
        Ok(Value::from_object(crate::pyfmt::PyGenerator(items)))
    }
    env.add_filter("map", |state: &State, value: Value, args: Rest<Value>| {
        generator(&value, || filters::map(state, value.clone(), args))
    });
    env.add_filter(
        "select",
        |state: &State, value: Value, test: Option<Cow<'_, str>>, args: Rest<Value>| {
            generator(&value, || filters::select(state, value.clone(), test, args))
        },
    );
    env.add_filter(
        "reject",
        |state: &State, value: Value, test: Option<Cow<'_, str>>, args: Rest<Value>| {
            generator(&value, || filters::reject(state, value.clone(), test, args))
        },
    );
    env.add_filter(
        "selectattr",
        |state: &State,
         value: Value,
         attr: Cow<'_, str>,
         test: Option<Cow<'_, str>>,
         args: Rest<Value>| {
            generator(&value, || {
                filters::selectattr(state, value.clone(), attr, test, args)
            })
        },
    );
    env.add_filter(
        "rejectattr",
        |state: &State,
         value: Value,
         attr: Cow<'_, str>,
         test: Option<Cow<'_, str>>,
         args: Rest<Value>| {
            generator(&value, || {
                filters::rejectattr(state, value.clone(), attr, test, args)
            })
        },
    );
}

/// `str(value)` as jinja2's string filters take it (`soft_str`): a list prints as Python's repr.
fn soft_str(value: &Value) -> Result<String, Error> {
    let mut text = String::new();
    py_str(value, &mut text)?;
    Ok(text)
}

/// jinja2's `trim`, `upper`, `lower` and `join` turn a non-string into `str(value)` first (so
/// `[{'type': 'text'}] | trim` is Python's repr, not minijinja's).
fn add_string_filters(env: &mut Environment<'static>) {
    env.add_filter(
        "trim",
        |value: &Value, chars: Option<String>| -> Result<String, Error> {
            let text = soft_str(value)?;
            Ok(match chars {
                Some(chars) => {
                    let set: Vec<char> = chars.chars().collect();
                    text.trim_matches(&set[..]).to_owned()
                }
                None => text.trim().to_owned(),
            })
        },
    );
    env.add_filter("upper", |value: &Value| {
        Ok::<_, Error>(soft_str(value)?.to_uppercase())
    });
    env.add_filter("lower", |value: &Value| {
        Ok::<_, Error>(soft_str(value)?.to_lowercase())
    });
    env.add_filter(
        "join",
        |value: &Value, args: Rest<Value>| -> Result<String, Error> {
            let (positional, kwargs): (&[Value], Kwargs) = minijinja::value::from_args(&args)?;
            let text = |v: Option<&Value>| v.filter(|v| !v.is_none()).map(soft_str).transpose();
            let joiner = match kwargs.get::<Option<Value>>("d")? {
                Some(d) => soft_str(&d)?,
                None => text(positional.first())?.unwrap_or_default(),
            };
            let attribute = match kwargs.get::<Option<Value>>("attribute")? {
                Some(a) => text(Some(&a))?,
                None => text(positional.get(1))?,
            };
            kwargs.assert_all_used()?;
            if positional.len() > 2 {
                return Err(Error::new(
                    ErrorKind::TooManyArguments,
                    "join takes at most 2 arguments",
                ));
            }
            if let Some(s) = value.as_str() {
                return Ok(s
                    .chars()
                    .map(String::from)
                    .collect::<Vec<_>>()
                    .join(&joiner));
            }
            let mut out = String::new();
            for (i, item) in value.try_iter()?.enumerate() {
                if i > 0 {
                    out.push_str(&joiner);
                }
                let mut item = item;
                for part in attribute.iter().flat_map(|path| path.split('.')) {
                    item = match part.parse::<i64>() {
                        Ok(index) => item.get_item(&Value::from(index))?,
                        Err(_) => item.get_attr(part)?,
                    };
                }
                out.push_str(&soft_str(&item)?);
            }
            Ok(out)
        },
    );
}

/// Python's `datetime.strftime` for the directives chrono shares with it; an unknown
/// directive is an error rather than a panic.
fn strftime(now: NaiveDateTime, format: &str) -> Result<String, Error> {
    use chrono::format::{Item, StrftimeItems};
    let items: Vec<Item<'_>> = StrftimeItems::new(format).collect();
    if items.iter().any(|i| matches!(i, Item::Error)) {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("strftime_now: unsupported format {format:?}"),
        ));
    }
    Ok(now.format_with_items(items.into_iter()).to_string())
}

/// transformers' `tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`.
fn tojson(value: &Value, args: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    let names = ["ensure_ascii", "indent", "separators", "sort_keys"];
    if args.len() > names.len() {
        return Err(Error::new(
            ErrorKind::TooManyArguments,
            "tojson takes at most 4 arguments after the value",
        ));
    }
    let mut slots: [Option<Value>; 4] = Default::default();
    for (slot, arg) in slots.iter_mut().zip(args.iter()) {
        *slot = Some(arg.clone());
    }
    for (i, name) in names.iter().enumerate() {
        if let Some(v) = kwargs.get::<Option<Value>>(name)? {
            if slots[i].is_some() {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("tojson got multiple values for argument {name:?}"),
                ));
            }
            slots[i] = Some(v);
        }
    }
    kwargs.assert_all_used()?;
    let [ensure_ascii, indent, separators, sort_keys] = slots;
    let opts = JsonOptions {
        ensure_ascii: ensure_ascii.is_some_and(|v| v.is_true()),
        indent: match indent {
            None => None,
            Some(v) if v.is_none() => None,
            Some(v) if v.kind() == ValueKind::String => Some(
                v.as_str()
                    .unwrap_or("")
                    .chars()
                    .take(bounds::MAX_JSON_INDENT)
                    .collect(),
            ),
            Some(v) => {
                let n = i64::try_from(v).map_err(|_| {
                    Error::new(
                        ErrorKind::InvalidOperation,
                        "tojson: indent must be an int or a string",
                    )
                })?;
                Some(" ".repeat(n.clamp(0, bounds::MAX_JSON_INDENT as i64) as usize))
            }
        },
        separators: match separators {
            None => None,
            Some(v) if v.is_none() => None,
            Some(v) => {
                let parts: Vec<Value> = v.try_iter()?.collect();
                match parts.as_slice() {
                    [a, b] if a.as_str().is_some() && b.as_str().is_some() => Some((
                        a.as_str().unwrap_or("").to_owned(),
                        b.as_str().unwrap_or("").to_owned(),
                    )),
                    _ => {
                        return Err(Error::new(
                            ErrorKind::InvalidOperation,
                            "tojson: separators must be two strings",
                        ))
                    }
                }
            }
        },
        sort_keys: sort_keys.is_some_and(|v| v.is_true()),
    };
    let mut out = String::new();
    json_dumps(value, &opts, &mut out)?;
    Ok(Value::from(out))
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(source: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

fn syntax_error(source: &str, err: &Error) -> RenderError {
    let (line, column) = match err.range() {
        Some(range) => line_column(source, range.start),
        None => (err.line().unwrap_or(1), 1),
    };
    RenderError::Syntax {
        line,
        column,
        message: err.detail().unwrap_or("syntax error").to_owned(),
    }
}

/// Whether the template parses; a syntax error gives its line and column.
pub fn parse(source: &str) -> Result<(), RenderError> {
    let source = sandbox::rewrite_generation(source);
    compile(&source).map(|_| ())
}

/// A template's instructions, compiled with the sandbox's metered builtins (see
/// [`crate::sandbox`]).
fn compile(source: &str) -> Result<CompiledTemplate<'_>, RenderError> {
    if let Err(deep) = sandbox::check_nesting(source) {
        return Err(RenderError::Syntax {
            line: deep.span.start_line as usize,
            column: deep.span.start_col as usize + 1,
            message: deep.message,
        });
    }
    let tree = minijinja::machinery::parse(
        source,
        "<template>",
        SyntaxConfig::default(),
        sandbox::WHITESPACE,
    )
    .map_err(|e| syntax_error(source, &e))?;
    let mut code = CodeGenerator::new("<template>", source);
    code.compile_stmt(&sandbox::meter_stmt(&tree));
    let (instructions, blocks) = code.finish();
    Ok(CompiledTemplate {
        instructions,
        blocks,
    })
}

struct CompiledTemplate<'s> {
    instructions: Instructions<'s>,
    blocks: std::collections::BTreeMap<&'s str, Instructions<'s>>,
}

/// The messages as transformers passes them: each must be an object; keys whose value is
/// `null` are dropped; reasoning under `reasoning_content`, `thinking` or `reasoning` is
/// copied to `thinking` (unless set) and `reasoning_content`.
fn normalize_messages(messages: &serde_json::Value) -> Result<serde_json::Value, RenderError> {
    use serde_json::Value as J;
    let list = messages
        .as_array()
        .ok_or_else(|| RenderError::Input("messages must be a JSON array".into()))?;
    let mut out = Vec::with_capacity(list.len());
    for (i, message) in list.iter().enumerate() {
        let object = message
            .as_object()
            .ok_or_else(|| RenderError::Input(format!("message {i} is not a JSON object")))?;
        let kept: serde_json::Map<String, J> = object
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let reasoning = ["reasoning_content", "thinking", "reasoning"]
            .iter()
            .find_map(|k| kept.get(*k).cloned());
        let message = match reasoning {
            None => kept,
            Some(r) => {
                let mut aliased = serde_json::Map::new();
                aliased.insert("thinking".into(), r.clone());
                for (k, v) in kept {
                    aliased.insert(k, v);
                }
                aliased.insert("reasoning_content".into(), r);
                aliased
            }
        };
        out.push(J::Object(message));
    }
    Ok(J::Array(out))
}

/// Renders `conversation` with `source`, binding `special` as transformers binds a
/// tokenizer's special tokens.
pub fn render(
    source: &str,
    conversation: &Conversation,
    special: &SpecialTokens,
    limits: &Limits,
) -> Result<String, RenderError> {
    use serde_json::Value as J;
    let source = sandbox::rewrite_generation(source);
    let compiled = compile(&source)?;
    let none = || Value::from_object(crate::pyfmt::PyNone);
    let data = |v: &Option<J>| v.as_ref().map(Value::from_serialize).unwrap_or_else(none);
    let mut ctx: Vec<(String, Value)> = vec![
        (
            "messages".into(),
            Value::from_serialize(normalize_messages(&conversation.messages)?),
        ),
        ("tools".into(), data(&conversation.tools)),
        ("documents".into(), data(&conversation.documents)),
        (
            "add_generation_prompt".into(),
            Value::from(conversation.add_generation_prompt),
        ),
    ];
    for (name, text) in &special.tokens {
        ctx.push(((*name).into(), Value::from(text.as_str())));
    }
    for (k, v) in &conversation.extra {
        ctx.push((k.clone(), Value::from_serialize(v)));
    }
    let started = Instant::now();
    let deadline = match limits.not_after {
        Some(outer) => outer.min(started + limits.max_time),
        None => started + limits.max_time,
    };
    let meter = Arc::new(Meter {
        deadline,
        work_left: AtomicU64::new(limits.work),
        output_left: AtomicU64::new(limits.max_output as u64),
        tripped: AtomicU8::new(sandbox::TRIPPED_NONE),
    });
    let now = conversation
        .now
        .unwrap_or_else(|| chrono::Local::now().naive_local());
    let env = environment(limits, now, &meter);
    let mut text = String::new();
    let result = Vm::new(&env).eval(
        &compiled.instructions,
        Value::from_iter(ctx),
        &compiled.blocks,
        &mut minijinja::machinery::make_string_output(&mut text),
        minijinja::AutoEscape::None,
    );
    match result {
        Ok(_) => Ok(text),
        Err(e) => Err(runtime_error(&e, &meter)),
    }
}

const VALUE_LIMIT: &str = "a value larger than MAX_VALUE_BYTES or MAX_VALUE_ITEMS";

fn runtime_error(err: &Error, meter: &Meter) -> RenderError {
    match meter.tripped.load(Ordering::Relaxed) {
        sandbox::TRIPPED_OUTPUT => return RenderError::Limit("output size limit"),
        sandbox::TRIPPED_TIME => return RenderError::Limit("time limit"),
        sandbox::TRIPPED_WORK => {
            return RenderError::Limit("work budget exhausted (work inside builtins)")
        }
        sandbox::TRIPPED_SIZE => return RenderError::Limit(VALUE_LIMIT),
        _ => {}
    }
    if err.kind() == ErrorKind::OutOfFuel {
        return RenderError::Limit("instruction budget (fuel) exhausted");
    }
    // The raised message may sit under a chain of wrapping errors (macro calls, filters).
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = source {
        if let Some(raised) = e.downcast_ref::<Raised>() {
            return RenderError::Raised(raised.0.clone());
        }
        if e.downcast_ref::<crate::pyfmt::TooLarge>().is_some() {
            return RenderError::Limit(VALUE_LIMIT);
        }
        source = e.source();
    }
    let message = err
        .detail()
        .map(str::to_owned)
        .unwrap_or_else(|| err.kind().to_string());
    RenderError::Runtime {
        line: err.line(),
        message,
    }
}
