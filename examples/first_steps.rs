//! What a newcomer does first, with the library alone (`default-features = false,
//! features = ["write"]`): open a model, read its metadata, iterate its tokens, list its
//! tensors, and write an edited copy to a new file.
//!
//! ```sh
//! cargo run --example first_steps -- model.gguf edited.gguf
//! ```

use std::error::Error;
use std::io::Write;
use std::path::Path;

use gguf_grammar::write::GgufBuilder;
use gguf_grammar::OwnedGguf;

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let [model, edited] = &args[..] else {
        eprintln!("usage: first_steps MODEL.gguf EDITED.gguf");
        std::process::exit(2);
    };
    run(Path::new(model), Path::new(edited), &mut std::io::stdout().lock())
}

/// Prints what the model at `path` is and writes a copy named "first steps" to `edited`.
pub fn run(path: &Path, edited: &Path, out: &mut dyn Write) -> Result<(), Box<dyn Error>> {
    // Parsed once; the model owns its bytes and can be returned or stored.
    let model = OwnedGguf::open(path)?;
    let gguf = model.gguf();

    // Typed getters: a missing key and a key of another type are different errors.
    writeln!(out, "architecture: {}", gguf.architecture()?)?;
    writeln!(out, "vocabulary: {} tokens", gguf.n_vocab().unwrap_or(0))?;

    // Tokens are read lazily from the file's bytes, each checked as UTF-8; `{:?}` quotes
    // and escapes them, so a control character in a token cannot reach the terminal raw.
    for (id, token) in gguf.tokens()?.enumerate().take(5) {
        writeln!(out, "  token {id}: {:?}", token.map_err(|e| e.to_string())?)?;
    }

    // `Display` of a name escapes it for a terminal.
    for tensor in &gguf.tensors {
        writeln!(
            out,
            "  tensor {}: {} {:?} at byte {}",
            tensor.name(),
            tensor.ggml_type(),
            tensor.dims(),
            tensor.offset().map_or("?".into(), |at| at.to_string()),
        )?;
    }

    // An edited copy: a new file (never over an existing one), checked after writing.
    let mut builder = GgufBuilder::from_gguf(gguf);
    builder.set("general.name", "first steps");
    let written = builder.write_file(edited)?;
    writeln!(out, "wrote {written} bytes to {}", edited.display())?;
    Ok(())
}
