//! Renders one template file with a one-message conversation and prints what happened and how
//! long it took: the probe of scripts' hostile-template runs (`/usr/bin/time -v` around it).
//!
//! Usage: render-file TEMPLATE

use gguf_template::{render, Conversation, Limits, SpecialTokens};
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: render-file TEMPLATE");
        return ExitCode::from(2);
    };
    let source = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(2);
        }
    };
    let conversation = Conversation {
        messages: serde_json::json!([{"role": "user", "content": "hi"}]),
        ..Conversation::default()
    };
    let start = Instant::now();
    let got = render(
        &source,
        &conversation,
        &SpecialTokens::default(),
        &Limits::default(),
    );
    let took = start.elapsed();
    match got {
        Ok(text) => println!("rendered {} bytes in {took:.2?}", text.len()),
        Err(e) => {
            let message: String = e.to_string().chars().take(200).collect();
            println!("refused in {took:.2?}: {message}");
        }
    }
    ExitCode::SUCCESS
}
