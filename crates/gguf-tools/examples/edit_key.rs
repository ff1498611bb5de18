//! Edit a metadata key and write the result to a new file. Every tensor's bytes are kept;
//! the file is written beside the destination, checked (the header and every tensor's bytes),
//! synced and only then renamed into place, keeping the owner and mode of a file it replaces.
//!
//! ```sh
//! cargo run --example edit_key -- model.gguf edited.gguf general.name "My model"
//! ```

use std::error::Error;
use std::path::Path;

use gguf_grammar::write::GgufBuilder;
use gguf_grammar::GgufFile;
use gguf_tools::edit::{write_atomically, Replace};

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let [source, dest, key, value] = &args[..] else {
        eprintln!("usage: edit_key SOURCE.gguf DEST.gguf KEY STRING-VALUE");
        std::process::exit(2);
    };
    let (key, value) = (
        key.to_str().ok_or("KEY must be UTF-8")?,
        value.to_str().ok_or("VALUE must be UTF-8")?,
    );
    let written = run(Path::new(source), Path::new(dest), key, value)?;
    eprintln!("wrote {written} bytes");
    Ok(())
}

/// Copies `source` to `dest` with the string `key` set to `value`; returns the bytes written.
pub fn run(source: &Path, dest: &Path, key: &str, value: &str) -> Result<u64, Box<dyn Error>> {
    let file = GgufFile::open(source)?;
    let gguf = file.parse()?;
    // The builder starts as an exact copy: writing it unchanged gives the same bytes.
    let mut builder = GgufBuilder::from_gguf(&gguf);
    builder.set(key, value);
    Ok(write_atomically(&builder, dest, &Replace::default(), None)?)
}
