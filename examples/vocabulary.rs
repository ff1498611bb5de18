//! Read the vocabulary: each token with its score and token type, as llama.cpp's tokenizer
//! sees them. Arrays are decoded lazily from the mapped file: nothing is copied up front.
//!
//! ```sh
//! cargo run --example vocabulary -- model.gguf 10   # the first 10 tokens (all without a count)
//! ```

use std::error::Error;
use std::io::Write;
use std::path::Path;

use gguf_grammar::escape::Terminal;
use gguf_grammar::GgufFile;

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let limit = match &args[..] {
        [_] => Some(usize::MAX),
        [_, count] => count.to_str().and_then(|n| n.parse().ok()),
        _ => None,
    };
    let (Some(path), Some(limit)) = (args.first(), limit) else {
        eprintln!("usage: vocabulary MODEL.gguf [COUNT]");
        std::process::exit(2);
    };
    run(Path::new(&path), limit, &mut std::io::stdout().lock())
}

/// Prints `id\ttoken\tscore\ttype` for the first `limit` tokens of the file at `path`.
pub fn run(path: &Path, limit: usize, out: &mut dyn Write) -> Result<(), Box<dyn Error>> {
    let file = GgufFile::open(path)?;
    let gguf = file.parse()?;
    let tokens = gguf.get_array("tokenizer.ggml.tokens")?;
    // Scores and token types are optional (BPE vocabularies often have no scores).
    let scores = gguf.get_array("tokenizer.ggml.scores").ok();
    let types = gguf.get_array("tokenizer.ggml.token_type").ok();
    writeln!(out, "id\ttoken\tscore\ttype")?;
    for (id, token) in tokens.iter().enumerate().take(limit) {
        let score = scores.and_then(|a| a.get(id)?.as_f64());
        let kind = types.and_then(|a| a.get(id)?.as_i64());
        writeln!(
            out,
            "{id}\t{}\t{}\t{}",
            Terminal(token.as_gguf_str().map_or(&b"?"[..], |s| s.as_bytes())),
            score.map_or("-".into(), |s| s.to_string()),
            kind.map_or("-".into(), |k| k.to_string()),
        )?;
    }
    Ok(())
}
