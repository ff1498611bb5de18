//! `Tokenizer`: crates/gguf-tokenizer over a file's vocabulary (llama.cpp 0.3.16's ids).

use gguf_tokenizer::{Kind, TokenId};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::PyBytes;

use crate::Document;

/// Text to token ids and back with a GGUF file's own vocabulary (`tokenizer.ggml.*`), giving
/// the ids llama.cpp 0.3.16 gives (`llama_tokenize`, `llama_detokenize`).
#[pyclass(frozen, module = "gguf_grammar._native")]
pub struct Tokenizer {
    inner: gguf_tokenizer::Tokenizer,
}

fn tokenizer_error(e: gguf_tokenizer::Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A text argument: `str` (as UTF-8) or `bytes`.
#[derive(FromPyObject)]
pub enum Text {
    Str(PyBackedStr),
    Bytes(PyBackedBytes),
}

impl Text {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Text::Str(s) => s.as_bytes(),
            Text::Bytes(b) => b,
        }
    }
}

impl Tokenizer {
    fn check_ids(&self, ids: &[TokenId]) -> PyResult<()> {
        match ids.iter().find(|&&id| id as usize >= self.inner.len()) {
            // llama.cpp's token_to_piece throws std::out_of_range (id_to_token.at).
            Some(id) => Err(PyValueError::new_err(format!(
                "token id {id} out of range: the vocabulary has {} tokens",
                self.inner.len()
            ))),
            None => Ok(()),
        }
    }
}

#[pymethods]
impl Tokenizer {
    /// The tokenizer of the GGUF file at `path` (memory-mapped; only the header is read), as
    /// llama.cpp `release` tokenizes ("0.3.16" or "0.3.36", the llama-cpp-python version that
    /// vendors it; default the newest).
    #[new]
    #[pyo3(signature = (path, release = None))]
    fn new(py: Python<'_>, path: std::path::PathBuf, release: Option<&str>) -> PyResult<Self> {
        Tokenizer::from_document(&Document::open(py, path)?, release)
    }

    /// The tokenizer of a parsed document (`release` as for the constructor).
    #[staticmethod]
    #[pyo3(signature = (doc, release = None))]
    fn from_document(doc: &Document, release: Option<&str>) -> PyResult<Self> {
        let release = crate::release(release)?;
        let gguf = doc.parsed()?;
        let inner = gguf_tokenizer::Tokenizer::from_gguf_release(&gguf, release)
            .map_err(tokenizer_error)?;
        Ok(Tokenizer { inner })
    }

    /// Token ids of `text` (str, or bytes taken as they are), as
    /// `llama_tokenize(vocab, text, add_special, parse_special)`.
    #[pyo3(signature = (text, add_special = true, parse_special = false))]
    fn encode(
        &self,
        py: Python<'_>,
        text: Text,
        add_special: bool,
        parse_special: bool,
    ) -> PyResult<Vec<TokenId>> {
        py.allow_threads(|| self.inner.encode(text.bytes(), add_special, parse_special))
            .map_err(tokenizer_error)
    }

    /// The text of token ids, as `llama_detokenize(vocab, ids, remove_special,
    /// unparse_special)` (the defaults are `common_detokenize`'s): bytes that are not UTF-8
    /// (a sequence cut between tokens) become U+FFFD; `decode_bytes` gives the bytes.
    #[pyo3(signature = (ids, remove_special = false, unparse_special = true))]
    fn decode(
        &self,
        ids: Vec<TokenId>,
        remove_special: bool,
        unparse_special: bool,
    ) -> PyResult<String> {
        self.check_ids(&ids)?;
        let text = self.inner.decode(&ids, remove_special, unparse_special);
        Ok(String::from_utf8_lossy(&text).into_owned())
    }

    /// The bytes of token ids, as `llama_detokenize(vocab, ids, remove_special,
    /// unparse_special)`.
    #[pyo3(signature = (ids, remove_special = false, unparse_special = true))]
    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: Vec<TokenId>,
        remove_special: bool,
        unparse_special: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.check_ids(&ids)?;
        let text = self.inner.decode(&ids, remove_special, unparse_special);
        Ok(PyBytes::new(py, &text))
    }

    /// One token's bytes, as `llama_token_to_piece(vocab, id, .., 0, special)`: empty for a
    /// control or unknown token unless `special`.
    #[pyo3(signature = (id, special = true))]
    fn token_to_piece<'py>(
        &self,
        py: Python<'py>,
        id: TokenId,
        special: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.check_ids(&[id])?;
        Ok(PyBytes::new(py, self.inner.token_to_piece(id, special)))
    }

    /// The id of the token whose text is exactly `text`, or None.
    fn token_to_id(&self, text: Text) -> Option<TokenId> {
        self.inner.text_to_token(text.bytes())
    }

    /// `tokenizer.ggml.model`'s kind: `"llama"` (SPM), `"gpt2"` (BPE), `"bert"` (WPM),
    /// `"t5"` (UGM), `"rwkv"` or `"plamo2"`.
    #[getter]
    fn model(&self) -> &'static str {
        match self.inner.kind() {
            Kind::Spm => "llama",
            Kind::Bpe => "gpt2",
            Kind::Wpm => "bert",
            Kind::Ugm => "t5",
            Kind::Rwkv => "rwkv",
            Kind::Plamo2 => "plamo2",
        }
    }

    /// `tokenizer.ggml.pre` as llama.cpp resolved it (BPE vocabularies).
    #[getter]
    fn pre(&self) -> &str {
        self.inner.pre()
    }

    /// The BOS token id, if the vocabulary has one.
    #[getter]
    fn bos_id(&self) -> Option<TokenId> {
        self.inner.bos()
    }

    /// The EOS token id, if the vocabulary has one.
    #[getter]
    fn eos_id(&self) -> Option<TokenId> {
        self.inner.eos()
    }

    /// Whether `encode(.., add_special=True)` adds a BOS token.
    #[getter]
    fn add_bos(&self) -> bool {
        self.inner.add_bos()
    }

    /// Number of tokens in the vocabulary.
    fn __len__(&self) -> usize {
        self.inner.len()
    }
}
