//! `gguf tokenize` and `gguf detokenize`: text to token ids and back with the file's own
//! vocabulary, as a release of llama.cpp (`--release`, default the newest) does (crate
//! `gguf-tokenizer`).

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use gguf_grammar::escape::terminal;
use gguf_tokenizer::{Release, TokenId, Tokenizer};

use crate::Failure;

#[derive(clap::Args)]
#[command(after_help = "\
The defaults and flags are llama-tokenize's: escapes (\\n, \\t, \\xHH...) in the text are
processed, special tokens' texts are parsed, and a BOS token is added when the vocabulary asks
for one (add_special is passed only then, as llama-tokenize does). By default each token is
shown as `ID -> 'PIECE'` (the piece escaped for the terminal); --ids prints exactly what
`llama-tokenize --ids` prints.

Examples:
  gguf tokenize model.gguf 'Hello world'
  gguf tokenize model.gguf --ids --no-bos 'Hello\\nworld'
  gguf tokenize model.gguf --json -f prompt.txt")]
pub struct Args {
    /// The GGUF file (its `tokenizer.ggml.*` keys).
    model: PathBuf,
    /// The text (or use --file or --stdin).
    text: Option<String>,
    /// The llama.cpp release whose tokenizer is followed: that of llama-cpp-python 0.3.16 or
    /// 0.3.36 (they differ on some vocabularies).
    #[arg(long, value_parser = crate::fit::release, default_value = Release::NEWEST.version())]
    release: Release,
    /// Read the text from a file.
    #[arg(short = 'f', long, conflicts_with_all = ["text", "stdin"])]
    file: Option<PathBuf>,
    /// Read the text from standard input.
    #[arg(long, conflicts_with = "text")]
    stdin: bool,
    /// Print only the ids, as `[1, 2, 3]`.
    #[arg(long, conflicts_with = "json")]
    ids: bool,
    /// Print `[{"id": 1, "piece": "..."}, ...]` (a piece that is not UTF-8 also gets `"bytes"`).
    #[arg(long)]
    json: bool,
    /// Never add a BOS token.
    #[arg(long)]
    no_bos: bool,
    /// Do not process escapes in the text.
    #[arg(long)]
    no_escape: bool,
    /// Do not parse control tokens' texts (user-defined tokens still are).
    #[arg(long)]
    no_parse_special: bool,
    /// Also print the number of tokens.
    #[arg(long)]
    show_count: bool,
    /// The work allowed per byte of text (trie and table steps, special-token matches;
    /// default 256, plus 4194304 for any text): a vocabulary that makes tokenizing grow
    /// faster than the text is refused past it (exit 2).
    #[arg(long, value_name = "STEPS")]
    work_per_byte: Option<u64>,
}

#[derive(clap::Args)]
#[command(after_help = "\
Writes the text of the token ids (as llama_detokenize: control tokens rendered unless
--no-special). On a terminal, bytes that are not printable UTF-8 are escaped; elsewhere the
bytes are written as they are.

Examples:
  gguf detokenize model.gguf 1 15043 3186
  gguf detokenize model.gguf '[1, 15043, 3186]'")]
pub struct DetokenizeArgs {
    /// The GGUF file (its `tokenizer.ggml.*` keys).
    model: PathBuf,
    /// Token ids, separated by spaces or commas (brackets allowed, as --ids prints them).
    #[arg(required = true)]
    ids: Vec<String>,
    /// The llama.cpp release whose detokenizer is followed (0.3.16 or 0.3.36).
    #[arg(long, value_parser = crate::fit::release, default_value = Release::NEWEST.version())]
    release: Release,
    /// Drop a leading BOS and trailing EOS that the vocabulary adds.
    #[arg(long)]
    remove_special: bool,
    /// Leave control tokens out.
    #[arg(long)]
    no_special: bool,
}

fn load(path: &Path, release: Release) -> Result<Tokenizer, Failure> {
    let (model, _) = crate::input::header(path)?;
    Tokenizer::from_gguf_release(model.gguf(), release)
        .map_err(|e| Failure::Invalid(format!("{}: {e}", crate::shown(path))))
}

/// common's `string_process_escapes`.
fn process_escapes(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        if input[i] == b'\\' && i + 1 < input.len() {
            i += 1;
            match input[i] {
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b't' => out.push(b'\t'),
                c @ (b'\'' | b'"' | b'\\') => out.push(c),
                b'x' if i + 2 < input.len() && strtol2(&input[i + 1..i + 3]).is_some() => {
                    out.push(strtol2(&input[i + 1..i + 3]).unwrap_or(0));
                    i += 2;
                }
                c => out.extend_from_slice(&[b'\\', c]),
            }
        } else {
            out.push(input[i]);
        }
        i += 1;
    }
    out
}

/// `strtol(two bytes, &end, 16)` when it consumes both (leading space and sign allowed).
fn strtol2(x: &[u8]) -> Option<u8> {
    let hex = |c: u8| (c as char).to_digit(16);
    match x {
        [a, b] if hex(*a).is_some() && hex(*b).is_some() => Some((hex(*a)? * 16 + hex(*b)?) as u8),
        [s, b]
            if (*s == b' ' || (b'\t'..=b'\r').contains(s) || *s == b'+') && hex(*b).is_some() =>
        {
            Some(hex(*b)? as u8)
        }
        [b'-', b] => hex(*b).map(|d| (d as u8).wrapping_neg()),
        _ => None,
    }
}

pub fn run(args: Args) -> Result<(), Failure> {
    let mut tok = load(&args.model, args.release)?;
    if let Some(steps) = args.work_per_byte {
        tok.set_work_per_byte(steps);
    }
    let raw = if let Some(path) = &args.file {
        crate::input::read_whole(path)
            .map_err(|e| Failure::Unreadable(format!("{}: {e}", crate::shown(path))))?
    } else if args.stdin {
        crate::input::read_whole(Path::new("-"))
            .map_err(|e| Failure::Unreadable(format!("standard input: {e}")))?
    } else {
        match &args.text {
            Some(t) => t.as_bytes().to_vec(),
            None => {
                return Err(Failure::Unreadable(
                    "must specify one of: TEXT, --stdin or --file".into(),
                ))
            }
        }
    };
    let text = if args.no_escape {
        raw
    } else {
        process_escapes(&raw)
    };
    let add_special = tok.add_bos() && !args.no_bos;
    let ids = tok
        .encode(&text, add_special, !args.no_parse_special)
        .map_err(|e| Failure::Invalid(format!("{}: {e}", crate::shown(&args.model))))?;

    let mut out = io::BufWriter::new(io::stdout().lock());
    let written = (|| -> io::Result<()> {
        if args.ids {
            write!(out, "[")?;
            for (i, id) in ids.iter().enumerate() {
                write!(out, "{}{id}", if i == 0 { "" } else { ", " })?;
            }
            writeln!(out, "]")?;
        } else if args.json {
            // One item at a time: a text of millions of tokens is never held as JSON values.
            write!(out, "[")?;
            for (i, &id) in ids.iter().enumerate() {
                let piece = tok.token_to_piece(id, true);
                let mut item = serde_json::json!({
                    "id": id,
                    "piece": String::from_utf8_lossy(piece),
                });
                if std::str::from_utf8(piece).is_err() {
                    item["bytes"] = serde_json::json!(piece);
                }
                if i > 0 {
                    write!(out, ",")?;
                }
                gguf_tools::render::json::write_value(&item, false, &mut out)?;
            }
            write!(out, "]")?;
            writeln!(out)?;
        } else {
            for &id in &ids {
                writeln!(
                    out,
                    "{id:6} -> '{}'",
                    terminal(tok.token_to_piece(id, true))
                )?;
            }
        }
        if args.show_count {
            writeln!(out, "Total number of tokens: {}", ids.len())?;
        }
        out.flush()
    })();
    written.map_err(|e| Failure::Unreadable(format!("standard output: {e}")))
}

pub fn run_detokenize(args: DetokenizeArgs) -> Result<(), Failure> {
    let tok = load(&args.model, args.release)?;
    let mut ids = Vec::new();
    for word in args
        .ids
        .iter()
        .flat_map(|a| a.split(|c: char| c == ',' || c.is_whitespace()))
    {
        let word = word.trim_matches(|c| c == '[' || c == ']');
        if word.is_empty() {
            continue;
        }
        let id: TokenId = word.parse().map_err(|_| {
            Failure::Unreadable(format!("not a token id: '{}'", word.escape_debug()))
        })?;
        if id as usize >= tok.len() {
            return Err(Failure::Invalid(format!(
                "token id {id} out of range: the vocabulary has {} tokens",
                tok.len()
            )));
        }
        ids.push(id);
    }
    let text = tok.decode(&ids, args.remove_special, !args.no_special);
    let mut out = io::stdout().lock();
    let written = if out.is_terminal() {
        writeln!(out, "{}", terminal(&text))
    } else {
        out.write_all(&text).and_then(|()| out.flush())
    };
    written.map_err(|e| Failure::Unreadable(format!("standard output: {e}")))
}
