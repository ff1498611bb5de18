//! `gguf map`: the annotated byte map of the header, as terminal rows, JSON lines or an HTML page.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use gguf_grammar::render::map::{self, Filter};
use gguf_grammar::GgufFile;

use crate::Failure;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  gguf map model.gguf | less                        every row of the header
  gguf map model.gguf --path tokenizer.ggml.tokens  one key's rows
  gguf map model.gguf --from 0x100 --to 0x200       the constructs overlapping a window
  gguf map model.gguf --json | jq -c 'select(.kind == \"kv\")'
  gguf map model.gguf --html map.html               a page to browse (tree + hex)")]
pub struct Args {
    /// Print the rows as JSON lines (exact spans and text) instead.
    #[arg(long)]
    json: bool,
    /// Write a self-contained HTML page (tree, hex pane, search) to this file instead.
    #[arg(long, value_name = "OUT.html", conflicts_with_all = ["json", "from", "to", "path"])]
    html: Option<PathBuf>,
    /// Only constructs ending after this offset (decimal or 0x hex).
    #[arg(long, value_name = "OFFSET", value_parser = offset)]
    from: Option<u64>,
    /// Only constructs starting before this offset (decimal or 0x hex).
    #[arg(long, value_name = "OFFSET", value_parser = offset)]
    to: Option<u64>,
    /// Only constructs whose path contains this text, e.g. `tokenizer.ggml.tokens` or `tensor[3]`.
    #[arg(long, value_name = "TEXT")]
    path: Option<String>,
    /// The GGUF file (only its header is read).
    file: PathBuf,
}

fn offset(text: &str) -> Result<u64, String> {
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|e| format!("{e} (expected a decimal or 0x-prefixed hex offset)"))
}

pub fn run(args: Args) -> Result<(), Failure> {
    let shown = args.file.display();
    // The map touches only the header's pages.
    let file =
        GgufFile::open(&args.file).map_err(|e| Failure::Unreadable(format!("{shown}: {e}")))?;
    let gguf = file
        .parse()
        .map_err(|e| Failure::Invalid(format!("{shown}: {e}")))?;
    let file_size = file.bytes().len() as u64;
    let filter = Filter {
        from: args.from,
        to: args.to,
        path: args.path,
    };
    if let Some(out_path) = &args.html {
        let title = args
            .file
            .file_name()
            .map_or_else(|| shown.to_string(), |n| n.to_string_lossy().into_owned());
        let mut page = Vec::new();
        map::write_html(&gguf, file_size, &title, &mut page)
            .map_err(|e| Failure::Unreadable(format!("rendering the page: {e}")))?;
        return write_page(&args.file, out_path, &page);
    }
    let stdout = io::stdout();
    // NO_COLOR counts when set to anything but the empty string (no-color.org).
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let colour = stdout.is_terminal() && !no_color;
    let mut out = BufWriter::new(stdout.lock());
    let written = if args.json {
        map::write_json(&gguf, file_size, &filter, &mut out)
    } else {
        map::write_text(&gguf, file_size, &filter, colour, &mut out)
    };
    match written.and_then(|()| out.flush()) {
        // A closed pipe (`gguf map f | head`) is the reader's choice, not a failure.
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Failure::Unreadable(format!("writing output: {e}")))
        }
        _ => Ok(()),
    }
}

/// Writes the page safely ([`crate::atomic::write`]: beside its destination, then renamed
/// into place, following a link to its target); refuses to overwrite the input.
fn write_page(input: &Path, out: &Path, page: &[u8]) -> Result<(), Failure> {
    let shown = crate::shown(out);
    let same = std::fs::canonicalize(input)
        .ok()
        .zip(std::fs::canonicalize(out).ok())
        .is_some_and(|(i, o)| i == o);
    if same {
        return Err(Failure::Unreadable(format!(
            "{shown}: is the input file; refusing to overwrite it"
        )));
    }
    crate::atomic::write(out, page).map_err(|e| Failure::Unreadable(format!("{shown}: {e}")))
}
