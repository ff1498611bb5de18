//! `gguf map`: the annotated byte map of the header, as terminal rows, JSON lines or an HTML page.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use gguf_grammar::OwnedGguf;
use gguf_tools::render::map::{self, Filter};
use gguf_tools::set::{shard_name, shard_path};
use gguf_tools::source::http::is_remote;

use crate::{remote, Failure};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  gguf map model.gguf | less                        every row of the header
  gguf map model.gguf --path tokenizer.ggml.tokens  one key's rows
  gguf map model.gguf --from 0x100 --to 0x200       the constructs overlapping a window
  gguf map model.gguf --json | jq -c 'select(.kind == \"kv\")'
  gguf map model.gguf --html map.html               a page to browse (tree + hex)
  gguf map model-00002-of-00003.gguf                every shard's header, one after the other
  gguf map --verbose https://example.org/model.gguf the header only, by range requests")]
pub struct Args {
    /// Print the rows as JSON lines (exact spans and text) instead. For a shard set every
    /// row starts with `"file": PATH`, the shard it belongs to.
    #[arg(long)]
    json: bool,
    /// Write a self-contained HTML page (tree, hex pane, search) to this file instead (`-`:
    /// standard output). For a shard the page maps that file alone.
    #[arg(long, value_name = "OUT.html", conflicts_with_all = ["json", "from", "to", "path"])]
    html: Option<PathBuf>,
    /// The largest page --html writes (default 134217728, 128 MiB; at most 536870888, the
    /// longest text a browser parses): a larger one is refused, exit 2, nothing written.
    #[arg(long, value_name = "BYTES", requires = "html", default_value_t = map::MAX_PAGE)]
    max_page: u64,
    /// Only constructs ending after this offset (decimal or 0x hex; in a set, within each
    /// shard).
    #[arg(long, value_name = "OFFSET", value_parser = offset)]
    from: Option<u64>,
    /// Only constructs starting before this offset (decimal or 0x hex; in a set, within each
    /// shard).
    #[arg(long, value_name = "OFFSET", value_parser = offset)]
    to: Option<u64>,
    /// Only constructs whose path contains this text, e.g. `tokenizer.ggml.tokens` or `tensor[3]`.
    #[arg(long, value_name = "TEXT")]
    path: Option<String>,
    /// For a shard (NAME-00001-of-0000N.gguf), map this file alone. Without it every shard's
    /// header is mapped, one after the other, each under a heading naming it (text) or with
    /// its path in every row (JSON).
    #[arg(long)]
    shard_only: bool,
    /// For a URL, report the requests made and the bytes fetched on stderr.
    #[arg(long, short)]
    verbose: bool,
    /// The GGUF file (`-` reads standard input), or an `http://`, `https://` or
    /// `hf://OWNER/REPO/PATH[@REVISION]` URL. Only the header is read (from a URL, with range
    /// requests). A URL's read stops after 10 s to connect, 30 s to the first byte or 120 s in all
    /// (one retry at most).
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
    let url = args.file.to_str().filter(|f| is_remote(f));
    let set = shard_name(&args.file).filter(|_| !args.shard_only);
    if let Some(out_path) = &args.html {
        if set.is_some() {
            eprintln!(
                "note: {} is a shard: the page maps this file alone",
                crate::shown(&args.file)
            );
        }
        let (head, file_size) = header(&args.file, url.is_some(), args.verbose)?;
        let gguf = head.gguf();
        let title = match url {
            Some(url) => url.rsplit('/').next().unwrap_or(url).to_string(),
            None => args.file.file_name().map_or_else(
                || args.file.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
        };
        let mut page = Vec::new();
        map::write_html_within(gguf, file_size, &title, args.max_page, &mut page)
            .map_err(|e| Failure::Unreadable(format!("rendering the page: {e}")))?;
        return write_page(&args.file, out_path, &page);
    }
    let filter = Filter {
        from: args.from,
        to: args.to,
        path: args.path,
    };
    let stdout = io::stdout();
    // NO_COLOR counts when set to anything but the empty string (no-color.org).
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let colour = stdout.is_terminal() && !no_color;
    let mut out = BufWriter::new(stdout.lock());
    let Some((prefix, _, count)) = set else {
        let (head, file_size) = header(&args.file, url.is_some(), args.verbose)?;
        let gguf = head.gguf();
        let written = if args.json {
            map::write_json(gguf, file_size, &filter, &mut out)
        } else {
            map::write_text(gguf, file_size, &filter, colour, &mut out)
        };
        return finish(written.and_then(|()| out.flush()));
    };
    eprintln!(
        "note: {} is a shard of {} files: mapping the whole set (--shard-only maps this file alone)",
        crate::shown(&args.file),
        count
    );
    // One shard's header in memory at a time; paths made as they are read.
    for no in 0..count {
        let shard = &shard_path(&prefix, no, count);
        if url.is_none() {
            crate::input::refuse_special(shard)?;
        }
        let (head, file_size) = header(shard, url.is_some(), args.verbose)?;
        let gguf = head.gguf();
        let written = if args.json {
            let file = shard.as_os_str().as_encoded_bytes();
            map::write_json_of_file(gguf, file_size, file, &filter, &mut out)
        } else {
            writeln!(
                out,
                "== {} (shard {} of {}, {file_size} bytes) ==",
                crate::shown(shard),
                no + 1,
                count
            )
            .and_then(|()| map::write_text(gguf, file_size, &filter, colour, &mut out))
        };
        if let Err(e) = written {
            return finish(Err(e));
        }
    }
    finish(out.flush())
}

/// The header, parsed, and the file's size, from a file or by range requests.
fn header(file: &Path, remote: bool, verbose: bool) -> Result<(OwnedGguf, u64), Failure> {
    if !remote {
        return crate::input::header(file);
    }
    let (buf, size) = remote::fetch_header(&file.to_string_lossy(), verbose)?;
    let header = OwnedGguf::from_vec(buf)
        .map_err(|e| Failure::Invalid(format!("{}: {e}", crate::shown(file))))?;
    Ok((header, size))
}

/// A closed pipe (`gguf map f | head`) is the reader's choice, not a failure.
fn finish(written: io::Result<()>) -> Result<(), Failure> {
    match written {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Failure::Unreadable(format!("writing output: {e}")))
        }
        _ => Ok(()),
    }
}

/// Writes the page safely ([`crate::atomic::write`]: beside its destination, then renamed
/// into place, following a link to its target), or to standard output for `-`; refuses to
/// overwrite the input.
fn write_page(input: &Path, out: &Path, page: &[u8]) -> Result<(), Failure> {
    if crate::input::is_stdout(out) {
        let mut stdout = io::stdout().lock();
        return finish(stdout.write_all(page).and_then(|()| stdout.flush()));
    }
    if gguf_tools::same_file::same_file(input, out) {
        return Err(crate::onto_input(out));
    }
    crate::atomic::write(out, page, crate::atomic::Name::Given).map_err(Failure::Unreadable)
}
