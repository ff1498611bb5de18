//! Commands given a URL read the header with range requests ([`gguf_tools::source::http`]).

use gguf_grammar::escape::terminal;
use gguf_grammar::Gguf;
use gguf_tools::source::http::Remote;

use crate::Failure;

/// Fetches the header at `url` and hands it, with the file's size, to `use_header`; with
/// `verbose`, reports the requests and bytes fetched on stderr. Exit 1 when the bytes are not
/// GGUF, 2 when the file cannot be fetched (the URL is in the message).
pub fn with_header<T>(
    url: &str,
    verbose: bool,
    use_header: impl FnOnce(&Gguf<'_>, u64) -> Result<T, Failure>,
) -> Result<T, Failure> {
    let (buf, size) = fetch_header(url, verbose)?;
    // The fetch parsed these bytes already.
    let gguf = Gguf::parse(&buf).map_err(|e| Failure::Invalid(format!("{url}: {e}")))?;
    use_header(&gguf, size)
}

/// The header bytes at `url` (they parse) and the file's size.
pub fn fetch_header(url: &str, verbose: bool) -> Result<(Vec<u8>, u64), Failure> {
    let failure = |e: gguf_tools::source::http::RemoteError| {
        let message = terminal(e.to_string().as_bytes()).into_owned();
        if e.is_invalid() {
            Failure::Invalid(message)
        } else {
            Failure::Unreadable(message)
        }
    };
    let mut remote = Remote::new(url).map_err(failure)?;
    let mut buf = Vec::new();
    let result = remote.read_header(&mut buf).map(|gguf| gguf.bytes.len());
    if verbose {
        eprintln!(
            "gguf: {}: {} requests, {} bytes fetched{}",
            terminal(remote.url.as_bytes()),
            remote.requests,
            remote.bytes,
            remote
                .size
                .map_or(String::new(), |s| format!(" (file: {s} bytes)"))
        );
    }
    let header_len = result.map_err(failure)?;
    let size = remote.size.unwrap_or(header_len as u64);
    Ok((buf, size))
}
