//! What the inspector page's WebAssembly module returns for a file, computed natively from
//! the same functions: the reference the browser tests compare the page with.
//!
//! Usage: analyze FILE            the JSON of `gguf_wasm::analyze` (templates, llama.cpp's verdict)
//!        analyze FILE --fit N    the JSON of `gguf_wasm::fit` for a context of N tokens

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, n_ctx) = match args.as_slice() {
        [path] => (path, None),
        [path, flag, n] if flag == "--fit" => match n.parse::<u32>() {
            Ok(n) => (path, Some(n)),
            Err(_) => return usage(),
        },
        _ => return usage(),
    };
    let read = std::fs::File::open(path).and_then(|file| {
        let len = file.metadata()?.len();
        Ok((gguf_grammar::stream::read_file_header(file, len), len))
    });
    let (header, len) = match read {
        Ok((Ok(header), len)) => (header, len),
        Ok((Err(e), _)) => {
            eprintln!("analyze: {path}: {e}");
            return ExitCode::from(1);
        }
        Err(e) => {
            eprintln!("analyze: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    match n_ctx {
        None => println!("{}", gguf_wasm::analyze(header.bytes(), len)),
        Some(n) => println!("{}", gguf_wasm::fit(header.bytes(), n)),
    }
    ExitCode::SUCCESS
}

fn usage() -> ExitCode {
    eprintln!("usage: analyze FILE [--fit N_CTX]");
    ExitCode::from(2)
}
