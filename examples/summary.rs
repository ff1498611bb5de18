//! A newcomer's first program: what model is this? Architecture, name, parameter count,
//! tensor count and the first five tokens of its vocabulary.
//!
//! ```sh
//! cargo run --example summary -- model.gguf
//! ```

use std::error::Error;
use std::io::Write;
use std::path::Path;

use gguf_grammar::escape::Terminal;
use gguf_grammar::summary::size_label;
use gguf_grammar::OwnedGguf;

fn main() -> Result<(), Box<dyn Error>> {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: summary MODEL.gguf");
        std::process::exit(2);
    };
    run(Path::new(&path), &mut std::io::stdout().lock())
}

/// Prints the summary of the file at `path` to `out`.
pub fn run(path: &Path, out: &mut dyn Write) -> Result<(), Box<dyn Error>> {
    // An owned document can be returned from a loading function or kept in a struct.
    let model = OwnedGguf::open(path)?;
    let gguf = model.gguf();

    // Text from a file is data: escape it before it reaches a terminal.
    let text = |s: &str| Terminal(s.as_bytes()).to_string();
    writeln!(out, "architecture: {}", text(gguf.architecture()?))?;
    // Not every file has a name: tell "missing" apart instead of failing.
    writeln!(out, "name: {}", gguf.name().map_or("-".into(), text))?;

    let summary = gguf.summary();
    match summary.parameters {
        Some(0) => writeln!(out, "parameters: 0 (vocabulary only)")?,
        Some(n) => writeln!(out, "parameters: {n} ({})", size_label(n))?,
        None => writeln!(out, "parameters: too many to count")?,
    }
    writeln!(out, "tensors: {}", gguf.tensors.len())?;

    let tokens = gguf.get_array("tokenizer.ggml.tokens")?;
    let first: Vec<String> = tokens
        .iter()
        .take(5)
        .map(|token| {
            token
                .as_gguf_str()
                .map_or("?".into(), |s| Terminal(s.as_bytes()).to_string())
        })
        .collect();
    writeln!(out, "first tokens of {}: {}", tokens.len(), first.join(" "))?;
    Ok(())
}
