//! Validate a file against a reference reader's rules: does llama.cpp's ggml take it, does
//! gguf-py, does the specification? Prints each diagnostic and the verdict; exits 1 when the
//! profile rejects the file.
//!
//! ```sh
//! cargo run --example validate -- model.gguf ggml   # ggml, ggml-data, gguf-py, spec, strict
//! ```

use std::error::Error;
use std::io::Write;
use std::path::Path;

use gguf_grammar::escape::terminal;
use gguf_grammar::validate::{self, Profile};
use gguf_grammar::GgufFile;

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let profile = match &args[..] {
        [_] => Some(Profile::Strict),
        [_, name] => Profile::ALL
            .into_iter()
            .find(|p| name.to_str() == Some(p.name())),
        _ => None,
    };
    let (Some(path), Some(profile)) = (args.first(), profile) else {
        eprintln!("usage: validate MODEL.gguf [ggml|ggml-data|gguf-py|spec|strict]");
        std::process::exit(2);
    };
    if !run(Path::new(&path), profile, &mut std::io::stdout().lock())? {
        std::process::exit(1);
    }
    Ok(())
}

/// Prints the diagnostics `profile` reports for the file at `path`; true when it accepts.
pub fn run(path: &Path, profile: Profile, out: &mut dyn Write) -> Result<bool, Box<dyn Error>> {
    let file = GgufFile::open(path)?;
    let diagnostics = match file.parse() {
        Ok(gguf) => validate::check(&gguf, file.bytes().len() as u64, profile),
        // A file that does not parse is rejected by every reference, at the error's offset.
        Err(err) => vec![validate::parse_failure(&err)],
    };
    for d in &diagnostics {
        let offset = d
            .span
            .as_ref()
            .map_or(String::new(), |s| format!("{:#x}: ", s.start));
        let path = terminal(d.path.to_string().as_bytes()).into_owned();
        let message = terminal(d.message.as_bytes()).into_owned();
        writeln!(
            out,
            "{offset}{}[{}] {path}: {message}",
            d.severity.name(),
            d.code
        )?;
    }
    let accepted = validate::accepts(&diagnostics, profile);
    let verdict = if accepted { "accepts" } else { "rejects" };
    writeln!(out, "{} {verdict} the file", profile.name())?;
    Ok(accepted)
}
