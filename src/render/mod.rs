//! Renderings of a parsed [`crate::Gguf`]: a human-readable dump, a one-screen model summary,
//! the native JSON and gguf-py's JSON.

pub mod diff;
pub mod escape;
pub mod gguf_py;
pub mod json;
pub mod summary;
pub mod text;

/// Displays a figure that may be missing (an overflowing offset, a size ggml does not
/// define) as the figure or as a placeholder.
struct OrElse(Option<u64>, &'static str);

impl std::fmt::Display for OrElse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(n) => write!(f, "{n}"),
            None => f.write_str(self.1),
        }
    }
}
