//! Every bound the template sandbox enforces, in one place. A template that reaches one stops
//! with [`crate::RenderError::Limit`] naming it; none of them is reached by a template that
//! transformers renders in under a second (scripts/check-templates.sh checks every template
//! of llama.cpp's `models/templates` and of the corpus).

/// Depth of one expression as the parser nests it, estimated from its tokens: the tokens of
/// each comma-separated run, summed over the open brackets. `'not ' * 50000`, `'1+' * 50000`,
/// `'.a' * 50000` and `'|string' * 50000` are refused here instead of overflowing the stack.
pub const MAX_EXPRESSION_DEPTH: usize = 256;

/// Nesting of statements (`if`, `for`, `macro`, `call`, `filter`, `set` blocks, …), each
/// `elif` counting as one more level (the parser nests it).
pub const MAX_STATEMENT_DEPTH: usize = 100;

/// Bytes of any one string a template produces (by an operator, a filter, a method or a
/// function), and of the text a value prints as. Input values (messages, tools) may be larger;
/// what a template builds from them may not.
pub const MAX_VALUE_BYTES: usize = 16 << 20;

/// Items of any one list a template produces (`|list`, `.split()`, `|batch`, `|slice`, `*`).
pub const MAX_VALUE_ITEMS: usize = 1 << 20;

/// The widest `tojson(indent=…)` kept; a wider one is cut to it (64 levels of it stay within
/// [`MAX_VALUE_BYTES`]).
pub const MAX_JSON_INDENT: usize = 4096;

/// minijinja instructions per render (its `fuel`).
pub const DEFAULT_FUEL: u64 = 20_000_000;

/// Work per render done inside builtins (filters, methods, operators, comparisons, indexing),
/// in units of about one byte or one item touched: `|sort` of n items costs 4·n·log2(n), a string
/// operation its length. With [`DEFAULT_FUEL`] this bounds a render's time by construction;
/// the deadline below is the backstop.
pub const DEFAULT_WORK: u64 = 100_000_000;

/// Nesting of macro calls, loops and conditions at run time (minijinja's recursion limit).
pub const DEFAULT_RECURSION: usize = 200;

/// Bytes of output per render.
pub const DEFAULT_MAX_OUTPUT: usize = 16 << 20;

/// Wall-clock time per render, checked at every output write and every builtin call.
pub const DEFAULT_RENDER_SECONDS: u64 = 5;

/// Wall-clock time for all the renders of one file (its templates, each rendered three
/// times by the lint), so that many templates that each run to the per-render bound do not
/// multiply it.
pub const FILE_SECONDS: u64 = 10;
