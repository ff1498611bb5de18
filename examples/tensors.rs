//! List every tensor: name, ggml type, shape, where its data starts in the file and how many
//! bytes it takes.
//!
//! ```sh
//! cargo run --example tensors -- model.gguf
//! ```

use std::error::Error;
use std::io::Write;
use std::path::Path;

use gguf_grammar::escape::Terminal;
use gguf_grammar::GgufFile;

fn main() -> Result<(), Box<dyn Error>> {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: tensors MODEL.gguf");
        std::process::exit(2);
    };
    run(Path::new(&path), &mut std::io::stdout().lock())
}

/// Prints one line per tensor of the file at `path`: name, type, dims, offset, bytes.
pub fn run(path: &Path, out: &mut dyn Write) -> Result<(), Box<dyn Error>> {
    // Memory-mapped: only the header's pages are read, however large the model.
    let file = GgufFile::open(path)?;
    let gguf = file.parse()?;
    writeln!(out, "name\ttype\tdims\toffset\tbytes")?;
    for tensor in &gguf.tensors {
        let info = &tensor.info;
        // Offsets and sizes are None when the file's numbers overflow or the type is unknown.
        let or_unknown = |n: Option<u64>| n.map_or("?".into(), |n| n.to_string());
        writeln!(
            out,
            "{}\t{}\t{:?}\t{}\t{}",
            Terminal(info.name.as_bytes()),
            info.ggml_type,
            info.dims,
            or_unknown(tensor.data_offset),
            or_unknown(tensor.n_bytes),
        )?;
    }
    Ok(())
}
