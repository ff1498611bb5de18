//! Tokenizes a text file with a vocabulary REPS times (add_special, parse_special) and
//! prints the token count and the fastest repetition, as scripts/llama/tokenizer-ref.cpp's
//! bench mode does for llama.cpp. Used by scripts/bench-tokenizer.sh.
//!
//! cargo run --release --example bench -- MODEL TEXT REPS
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, model, text, reps] = &args[..] else {
        return Err("usage: bench MODEL TEXT REPS".into());
    };
    let model = gguf_tokenizer::gguf_grammar::OwnedGguf::open(model)?;
    let tok = gguf_tokenizer::Tokenizer::from_gguf(model.gguf())?;
    let text = std::fs::read(text)?;
    let (mut best, mut n) = (f64::MAX, 0);
    for _ in 0..reps.parse::<usize>()? {
        let t = Instant::now();
        n = tok.encode(&text, true, true)?.len();
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("tokens {n} best_seconds {best:.6}");
    Ok(())
}
