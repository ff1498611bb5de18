//! Reading just the header of a remote GGUF file with HTTP range requests.
//!
//! The first request asks for 1 MiB; while the parse runs out of bytes, the next asks for
//! what the parser says it still needs ([`gguf_grammar::ErrorKind::bytes_needed`]) or, when that is
//! less, as much as has been fetched so far, rounded up to a 4 KiB page: a header of H bytes
//! takes about log2(H / 1 MiB) + 1 requests and at most max(1 MiB, 2H + 4 KiB) bytes (the Llama 3
//! vocabulary's 7.8 MB header: 4 requests, 8 MiB). A server that answers a range request with the whole file (status 200)
//! is refused before its body is read: the file is never downloaded unasked. A header larger
//! than [`Remote::max_header`] (256 MiB unless changed) is refused too, so a hostile length
//! cannot make the reader fetch a huge file.
//!
//! Time is bounded as bytes are ([`Deadlines`]): each request must connect within 10 s and
//! start its answer within 30 s, the whole read (every request and retry) ends within
//! 120 s, and a request that fails on the way (a reset, a timeout, 502/503/504) is retried
//! once at most, if time is left. A server that accepts and never answers, or sends a byte
//! a second, is an error after those limits, not a wait without end.
//!
//! `hf://OWNER/REPO/PATH[@REVISION]` is the Hugging Face hub's resolve URL
//! `{HF_ENDPOINT}/OWNER/REPO/resolve/{REVISION}/PATH` (endpoint `https://huggingface.co` and
//! revision `main` by default), sent with `Authorization: Bearer $HF_TOKEN` when that is set.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use gguf_tools::source::http::Remote;
//!
//! let mut remote = Remote::new("hf://bartowski/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct-Q4_K_M.gguf")?;
//! let mut buf = Vec::new();
//! let gguf = remote.read_header(&mut buf)?;
//! println!("{} tensors; {} requests, {} bytes", gguf.tensors.len(), remote.requests, remote.bytes);
//! # Ok(()) }
//! ```

use std::io::Read;
use std::time::{Duration, Instant};

use gguf_grammar::error::Error;
use gguf_grammar::Gguf;

/// The first request's size.
pub const FIRST_REQUEST: u64 = 1 << 20;
/// Later requests are rounded up to a multiple of this.
pub const PAGE: u64 = 4096;
/// Attempts per request when the failure is transient (a timeout, a reset, 502/503/504):
/// one retry at most.
const ATTEMPTS: u32 = 2;

/// The time limits of a remote read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadlines {
    /// Each request's connection (DNS, TCP, TLS).
    pub connect: Duration,
    /// From a request's start to the end of its answer's status line and headers.
    pub first_byte: Duration,
    /// The whole read: every request, retry and body, from the first request on.
    pub total: Duration,
}

/// What [`Remote::new`] sets: 10 s to connect, 30 s to the first byte, 120 s in all.
pub const DEADLINES: Deadlines = Deadlines {
    connect: Duration::from_secs(10),
    first_byte: Duration::from_secs(30),
    total: Duration::from_secs(120),
};

/// Why a remote header could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// The URL is neither `http://`, `https://` nor `hf://OWNER/REPO/PATH[@REVISION]`.
    #[error("{url}: not an http://, https:// or hf://OWNER/REPO/PATH[@REVISION] URL")]
    BadUrl {
        /// The URL as given.
        url: String,
    },
    /// The request failed (connection refused, DNS, TLS, timeout, an error status).
    #[error("{url}: {message}")]
    Http {
        /// The URL requested.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The server does not honour `Range`: it answered with the whole file.
    #[error(
        "{url}: the server ignores range requests (answered {status} to bytes={start}-{end}); \
         refusing to download the whole file"
    )]
    NoRanges {
        /// The URL requested.
        url: String,
        /// The status it answered.
        status: u16,
        /// First byte asked for.
        start: u64,
        /// Last byte asked for.
        end: u64,
    },
    /// The header would be larger than [`Remote::max_header`].
    #[error("{url}: the header needs more than {limit} bytes; refusing to fetch them")]
    HeaderTooLarge {
        /// The URL requested.
        url: String,
        /// The limit.
        limit: u64,
    },
    /// The bytes are not a GGUF header.
    #[error("{url}: {source}")]
    Parse {
        /// The URL requested.
        url: String,
        /// Where and why.
        source: Error,
    },
}

impl RemoteError {
    /// Whether the failure is about the file's content (not GGUF) rather than reaching it.
    pub fn is_invalid(&self) -> bool {
        matches!(self, RemoteError::Parse { .. })
    }
}

/// A remote file read by range requests, counting what it fetched.
#[derive(Debug)]
pub struct Remote {
    agent: ureq::Agent,
    /// The URL requested (an `hf://` URL resolved).
    pub url: String,
    token: Option<String>,
    /// The file's size, once a response has said it (`Content-Range: bytes a-b/SIZE`).
    pub size: Option<u64>,
    /// Requests made.
    pub requests: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// The largest header fetched (default [`super::max_header`], 256 MiB unless set).
    pub max_header: u64,
    /// The time limits of [`Remote::read_header`] (default [`DEADLINES`]).
    pub deadlines: Deadlines,
    /// When the current read must end (`None`: a limit past what `Instant` can hold).
    deadline: Option<Instant>,
}

impl Remote {
    /// A reader for `url` (`http://`, `https://` or `hf://`, resolved with `HF_ENDPOINT` and
    /// authorised with `HF_TOKEN` when set). Nothing is fetched yet.
    pub fn new(url: &str) -> Result<Remote, RemoteError> {
        let endpoint = std::env::var("HF_ENDPOINT").ok();
        let resolved = resolve(url, endpoint.as_deref()).ok_or_else(|| RemoteError::BadUrl {
            url: url.to_string(),
        })?;
        let token = url
            .starts_with("hf://")
            .then(|| std::env::var("HF_TOKEN").ok())
            .flatten()
            .filter(|t| !t.is_empty());
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build();
        Ok(Remote {
            agent: config.into(),
            url: resolved,
            token,
            size: None,
            requests: 0,
            bytes: 0,
            max_header: super::max_header(),
            deadlines: DEADLINES,
            deadline: None,
        })
    }

    /// Fetches the header into `buf` (cleared first; it keeps the header only, up to the data
    /// start) and parses it.
    pub fn read_header<'b>(&mut self, buf: &'b mut Vec<u8>) -> Result<Gguf<'b>, RemoteError> {
        buf.clear();
        self.deadline = Instant::now().checked_add(self.deadlines.total);
        let mut at_eof = self.fetch(0, FIRST_REQUEST, buf)?;
        let data_start = loop {
            let needed = match Gguf::parse(buf) {
                Ok(gguf) => break gguf.tensor_data_offset,
                Err(e) => match e.kind.bytes_needed() {
                    Some(needed) if !at_eof => needed,
                    _ => return Err(self.parse_error(e)),
                },
            };
            // The parser's figure is a lower bound (the rest of the current string, say), so
            // asking for just that costs a request per token of a large vocabulary; at least
            // doubling what is held bounds the requests by log2(header / 1 MiB) + 1.
            let want = needed
                .max(buf.len() as u64)
                .div_ceil(PAGE)
                .saturating_mul(PAGE);
            if (buf.len() as u64).saturating_add(want) > self.max_header {
                return Err(RemoteError::HeaderTooLarge {
                    url: self.url.clone(),
                    limit: self.max_header,
                });
            }
            at_eof = self.fetch(buf.len() as u64, want, buf)?;
        };
        // Keep the header only, as `stream::read_header` does: the bytes fetched past the data
        // start are an arbitrary slice of the tensor data, not the whole of it.
        buf.truncate(usize::try_from(data_start).unwrap_or(usize::MAX));
        Gguf::parse(buf).map_err(|e| self.parse_error(e))
    }

    fn parse_error(&self, source: Error) -> RemoteError {
        RemoteError::Parse {
            url: self.url.clone(),
            source,
        }
    }

    /// Appends bytes `start..start + len` to `buf`; true when the file ends before.
    fn fetch(&mut self, start: u64, len: u64, buf: &mut Vec<u8>) -> Result<bool, RemoteError> {
        let end = start + len - 1;
        let http = |message: String| RemoteError::Http {
            url: self.url.clone(),
            message,
        };
        let limits = self.deadlines;
        let timed_out = |e: &dyn std::fmt::Display| {
            format!(
                "{e} (limits: {} s to connect, {} s to the first byte, {} s for the whole read)",
                limits.connect.as_secs_f64(),
                limits.first_byte.as_secs_f64(),
                limits.total.as_secs_f64()
            )
        };
        let deadline = self.deadline;
        let mut attempt = 0;
        let response = loop {
            attempt += 1;
            let left = deadline.map_or(limits.total, |d| {
                d.saturating_duration_since(Instant::now())
            });
            if left.is_zero() {
                return Err(http(timed_out(&"timeout: the whole read")));
            }
            self.requests += 1;
            let mut request = self
                .agent
                .get(&self.url)
                .header("Range", format!("bytes={start}-{end}"));
            if let Some(token) = &self.token {
                request = request.header("Authorization", format!("Bearer {token}"));
            }
            let request = request
                .config()
                .timeout_connect(Some(limits.connect.min(left)))
                .timeout_recv_response(Some(limits.first_byte.min(left)))
                .timeout_global(Some(left))
                .build();
            let transient = match request.call() {
                Ok(r) if matches!(r.status().as_u16(), 502..=504) => {
                    format!("HTTP status {}", r.status())
                }
                Ok(r) => break r,
                Err(ureq::Error::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    return Err(http(e.to_string()))
                }
                Err(e @ ureq::Error::Timeout(_)) => timed_out(&e),
                Err(e @ ureq::Error::Io(_)) => e.to_string(),
                Err(e) => return Err(http(e.to_string())),
            };
            if attempt == ATTEMPTS {
                return Err(http(format!("{transient} (after {ATTEMPTS} attempts)")));
            }
            std::thread::sleep(Duration::from_millis(250));
        };
        match response.status().as_u16() {
            206 => {}
            // Asking from past the end: the file ends at `start`.
            416 => return Ok(true),
            200 => {
                return Err(RemoteError::NoRanges {
                    url: self.url.clone(),
                    status: 200,
                    start,
                    end,
                })
            }
            status => return Err(http(format!("HTTP status {status}"))),
        }
        let range = response
            .headers()
            .get("content-range")
            .and_then(|v| v.to_str().ok())
            .and_then(content_range)
            .ok_or_else(|| http("a 206 answer without a valid Content-Range".into()))?;
        if range.0 != start || range.1 > end {
            return Err(http(format!(
                "asked for bytes {start}-{end}, got {}-{}",
                range.0, range.1
            )));
        }
        match (range.2, self.size) {
            (Some(total), _) if total <= range.1 => {
                return Err(http(format!(
                    "Content-Range bytes {}-{}/{total}: a total smaller than the bytes sent",
                    range.0, range.1
                )))
            }
            (Some(total), Some(size)) if total != size => {
                return Err(http(format!(
                    "the file's size changed from {size} to {total} bytes between requests"
                )))
            }
            // Fewer bytes than asked of a file said to hold more: a transfer cut short, not
            // the end of the file.
            (Some(total), _) if range.1 < end && range.1 + 1 < total => {
                return Err(http(format!(
                    "asked for bytes {start}-{end} of a {total}-byte file, the server sent \
                     {}-{} only",
                    range.0, range.1
                )))
            }
            _ => {}
        }
        self.size = range.2.or(self.size);
        let expected = range.1 - range.0 + 1;
        let before = buf.len();
        response
            .into_body()
            .into_reader()
            .take(expected)
            .read_to_end(buf)
            .map_err(|e| {
                let inner = e.get_ref().and_then(|e| e.downcast_ref::<ureq::Error>());
                match inner {
                    Some(ureq::Error::Timeout(_)) => http(timed_out(&e)),
                    _ => http(e.to_string()),
                }
            })?;
        let got = (buf.len() - before) as u64;
        self.bytes += got;
        if got != expected {
            return Err(http(format!(
                "the answer ended after {got} of {expected} bytes"
            )));
        }
        Ok(got < len)
    }
}

/// `(first, last, total)` from `bytes FIRST-LAST/TOTAL` (`TOTAL` may be `*`).
fn content_range(value: &str) -> Option<(u64, u64, Option<u64>)> {
    let (range, total) = value.strip_prefix("bytes ")?.split_once('/')?;
    let (first, last) = range.split_once('-')?;
    let (first, last) = (first.trim().parse().ok()?, last.trim().parse().ok()?);
    (first <= last).then_some((first, last, total.trim().parse().ok()))
}

/// The URL to request for `url`: `http(s)://` as is; `hf://OWNER/REPO/PATH[@REVISION]` as the
/// hub's resolve URL under `endpoint` (default `https://huggingface.co`). `None` otherwise.
///
/// ```
/// use gguf_tools::source::http::resolve;
///
/// assert_eq!(
///     resolve("hf://owner/repo/dir/model.gguf@v2", None).as_deref(),
///     Some("https://huggingface.co/owner/repo/resolve/v2/dir/model.gguf")
/// );
/// assert_eq!(
///     resolve("hf://owner/repo/model.gguf", Some("http://127.0.0.1:8080/")).as_deref(),
///     Some("http://127.0.0.1:8080/owner/repo/resolve/main/model.gguf")
/// );
/// assert_eq!(resolve("hf://owner/model.gguf", None), None);
/// ```
pub fn resolve(url: &str, endpoint: Option<&str>) -> Option<String> {
    if url.starts_with("http://") || url.starts_with("https://") {
        return Some(url.to_string());
    }
    let rest = url.strip_prefix("hf://")?;
    let (rest, revision) = match rest.rsplit_once('@') {
        Some((rest, revision)) if !revision.is_empty() && !revision.contains('/') => {
            (rest, revision)
        }
        _ => (rest, "main"),
    };
    let mut parts = rest.splitn(3, '/');
    let (owner, repo, path) = (parts.next()?, parts.next()?, parts.next()?);
    if owner.is_empty() || repo.is_empty() || path.is_empty() {
        return None;
    }
    let endpoint = endpoint
        .filter(|e| !e.is_empty())
        .unwrap_or("https://huggingface.co")
        .trim_end_matches('/');
    Some(format!(
        "{endpoint}/{owner}/{repo}/resolve/{revision}/{path}"
    ))
}

/// Whether `arg` names a remote file (`http://`, `https://` or `hf://`).
pub fn is_remote(arg: &str) -> bool {
    ["http://", "https://", "hf://"]
        .iter()
        .any(|scheme| arg.starts_with(scheme))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ranges() {
        assert_eq!(
            content_range("bytes 0-1023/4096"),
            Some((0, 1023, Some(4096)))
        );
        assert_eq!(content_range("bytes 5-9/*"), Some((5, 9, None)));
        assert_eq!(content_range("bytes 9-5/10"), None);
        assert_eq!(content_range("items 0-1/2"), None);
    }

    /// A server on 127.0.0.1 that accepts every connection and hands it to `serve` (on its
    /// own thread); it stops by itself after `for_secs`.
    fn server(for_secs: u64, serve: fn(std::net::TcpStream)) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/model.gguf", listener.local_addr().unwrap());
        listener.set_nonblocking(true).unwrap();
        std::thread::spawn(move || {
            let stop = Instant::now() + Duration::from_secs(for_secs);
            while Instant::now() < stop {
                match listener.accept() {
                    Ok((stream, _)) => {
                        stream.set_nonblocking(false).unwrap();
                        std::thread::spawn(move || serve(stream));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        url
    }

    /// Reads `url` with short limits; the error and how long the read took.
    fn read_with_short_limits(url: &str) -> (RemoteError, Duration) {
        let mut remote = Remote::new(url).unwrap();
        remote.deadlines = Deadlines {
            connect: Duration::from_secs(1),
            first_byte: Duration::from_secs(2),
            total: Duration::from_secs(4),
        };
        let started = Instant::now();
        let err = remote.read_header(&mut Vec::new()).unwrap_err();
        (err, started.elapsed())
    }

    /// Before the deadlines, a server that accepts and never answers kept the read waiting
    /// 60 s per attempt, three attempts.
    #[test]
    fn a_server_that_never_answers_is_an_error_by_the_deadline() {
        let url = server(20, |stream| {
            std::thread::sleep(Duration::from_secs(20));
            drop(stream);
        });
        let (err, took) = read_with_short_limits(&url);
        let message = err.to_string();
        assert!(message.contains("timeout"), "{message}");
        assert!(message.contains("2 s to the first byte"), "{message}");
        // Two attempts of 2 s each, and the pause between them.
        assert!(took < Duration::from_secs(6), "{took:?}: {message}");
    }

    /// An answer whose body trickles in, a byte every 200 ms, ends at the whole read's
    /// deadline (the first byte came at once).
    #[test]
    fn a_server_that_trickles_is_an_error_by_the_deadline() {
        let url = server(20, |mut stream| {
            use std::io::Write;
            let mut request = [0; 1024];
            let _ = stream.read(&mut request);
            let head =
                b"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-1048575/2000000\r\n\
                Content-Length: 1048576\r\n\r\nGGUF";
            if stream.write_all(head).is_err() {
                return;
            }
            for _ in 0..100 {
                std::thread::sleep(Duration::from_millis(200));
                if stream.write_all(&[0]).is_err() {
                    return;
                }
            }
        });
        let (err, took) = read_with_short_limits(&url);
        let message = err.to_string();
        assert!(message.contains("timeout: global"), "{message}");
        assert!(message.contains("4 s for the whole read"), "{message}");
        assert!(took < Duration::from_secs(6), "{took:?}: {message}");
    }
}
