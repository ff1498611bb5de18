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
//! methods); every render has a fuel budget (instructions), a recursion limit, an output size
//! limit and a deadline checked as output is written and methods are called. Memory is not
//! bounded by minijinja: a template that doubles a namespace attribute in a loop is refused
//! before it runs (see [`crate::screen`]), but a recursive macro that doubles its argument is
//! not caught.

use crate::pyfmt::{json_dumps, py_str, JsonOptions};
use crate::read::SpecialTokens;
use chrono::NaiveDateTime;
use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{Environment, Error, ErrorKind, State};
use std::fmt;
use std::io;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bounds on one render.
#[derive(Clone, Debug)]
pub struct Limits {
    /// minijinja instructions (the `fuel` feature).
    pub fuel: u64,
    /// Nesting of loops, conditions and macro calls.
    pub recursion: usize,
    /// Bytes of output.
    pub max_output: usize,
    /// Wall-clock time, checked at every write and method call.
    pub max_time: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel: 20_000_000,
            recursion: 200,
            max_output: 16 << 20,
            max_time: Duration::from_secs(5),
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

const TRIPPED_NONE: u8 = 0;
const TRIPPED_OUTPUT: u8 = 1;
const TRIPPED_TIME: u8 = 2;

/// Which limit stopped a render, shared by the writer and the callbacks.
#[derive(Debug)]
struct Guard {
    deadline: Instant,
    tripped: AtomicU8,
}

impl Guard {
    fn check_time(&self) -> Result<(), Error> {
        if Instant::now() > self.deadline {
            self.tripped.store(TRIPPED_TIME, Ordering::Relaxed);
            return Err(Error::new(ErrorKind::InvalidOperation, "time limit"));
        }
        Ok(())
    }
}

struct LimitedWriter<'g> {
    buf: Vec<u8>,
    max: usize,
    guard: &'g Guard,
}

impl io::Write for LimitedWriter<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buf.len().saturating_add(data.len()) > self.max {
            self.guard.tripped.store(TRIPPED_OUTPUT, Ordering::Relaxed);
            return Err(io::Error::other("output limit"));
        }
        if self.guard.check_time().is_err() {
            return Err(io::Error::other("time limit"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The sandboxed environment with transformers' options, filters and globals.
fn environment(limits: &Limits, now: NaiveDateTime, guard: Arc<Guard>) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(false);
    env.set_fuel(Some(limits.fuel));
    env.set_recursion_limit(limits.recursion);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Lenient);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.set_formatter(|out, _state, value| {
        let mut text = String::new();
        py_str(value, &mut text)?;
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
    env.add_function(
        "strftime_now",
        move |format: &str| -> Result<String, Error> { strftime(now, format) },
    );
    let methods_guard = guard;
    env.set_unknown_method_callback(
        move |state: &State, value: &Value, method: &str, args: &[Value]| {
            methods_guard.check_time()?;
            minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
        },
    );
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
            Some(v) if v.kind() == ValueKind::String => Some(v.as_str().unwrap_or("").to_owned()),
            Some(v) => {
                let n = i64::try_from(v).map_err(|_| {
                    Error::new(
                        ErrorKind::InvalidOperation,
                        "tojson: indent must be an int or a string",
                    )
                })?;
                Some(" ".repeat(n.clamp(0, 64) as usize))
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
    let env = environment(
        &Limits::default(),
        NaiveDateTime::default(),
        Arc::new(Guard {
            deadline: Instant::now() + Duration::from_secs(60),
            tripped: AtomicU8::new(TRIPPED_NONE),
        }),
    );
    env.template_from_str(source)
        .map(|_| ())
        .map_err(|e| syntax_error(source, &e))
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
    // minijinja bounds instructions, not memory: refuse the one growth pattern the screen sees.
    if crate::screen::screen(source)
        .iter()
        .any(|f| f.code == "template-self-growth")
    {
        return Err(RenderError::Limit(
            "a namespace attribute is set from two copies of itself (unbounded memory)",
        ));
    }
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
    let guard = Arc::new(Guard {
        deadline: Instant::now() + limits.max_time,
        tripped: AtomicU8::new(TRIPPED_NONE),
    });
    let now = conversation
        .now
        .unwrap_or_else(|| chrono::Local::now().naive_local());
    let env = environment(limits, now, guard.clone());
    let template = env
        .template_from_str(source)
        .map_err(|e| syntax_error(source, &e))?;
    let mut writer = LimitedWriter {
        buf: Vec::new(),
        max: limits.max_output,
        guard: &guard,
    };
    let result = template
        .render_captured_to(Value::from_iter(ctx), &mut writer)
        .map(|_| ());
    match result {
        Ok(_) => String::from_utf8(writer.buf).map_err(|_| RenderError::Runtime {
            line: None,
            message: "output is not UTF-8".into(),
        }),
        Err(e) => Err(runtime_error(&e, &guard)),
    }
}

fn runtime_error(err: &Error, guard: &Guard) -> RenderError {
    match guard.tripped.load(Ordering::Relaxed) {
        TRIPPED_OUTPUT => return RenderError::Limit("output size limit"),
        TRIPPED_TIME => return RenderError::Limit("time limit"),
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
