//! The native half of the `gguf_grammar` Python package: the crate's parser over a file or
//! a buffer, seen from Python as offsets, type tags and decoded values. The Python half
//! (`python/gguf_grammar/`) builds `GGUFReader` and the native API on top of it; numpy views
//! are made there, over the same bytes, from the offsets given here.
#![deny(unsafe_code)]

use gguf_grammar::data::{dequant, DataError};
use gguf_grammar::grammar::{finish, value::value};
use gguf_grammar::summary::{size_label, Summary};
use gguf_grammar::validate::{self, Profile};
use gguf_grammar::{Ctx, Endian, Error, GgmlType, Gguf, GgufFile, Value, ValueType};
use pyo3::create_exception;
use pyo3::exceptions::{PyIndexError, PyNotImplementedError, PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyList, PySlice, PyString};
use pyo3::IntoPyObjectExt;

mod fit;
mod template;
mod tokenizer;

// Declared in module `gguf_grammar` (which re-exports them) so that pickle finds them there.
create_exception!(
    gguf_grammar,
    GGUFError,
    PyValueError,
    "A GGUF file that cannot be read, with `code`, `offset` (bytes from the start of the \
     file) and `path` (the construct, e.g. 'kv[3] \"general.name\"')."
);
create_exception!(
    gguf_grammar,
    GGUFParseError,
    GGUFError,
    "The bytes do not decode as GGUF (bad magic, unknown type, truncation, a length past the end)."
);
create_exception!(
    gguf_grammar,
    GGUFRejectedError,
    GGUFError,
    "The file decodes, but the reader it is opened as (gguf-py's GGUFReader) rejects it."
);

/// Builds a `GGUFError` subclass instance carrying code, offset and path.
fn located<E: pyo3::PyTypeInfo>(
    py: Python<'_>,
    code: &str,
    offset: Option<u64>,
    path: String,
    message: String,
) -> PyErr {
    let err = PyErr::new::<E, _>(message.clone());
    let value = err.value(py);
    let set = || -> PyResult<()> {
        value.setattr("code", code)?;
        value.setattr("offset", offset)?;
        value.setattr("path", path)?;
        value.setattr("message", message)?;
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(e) => e,
    }
}

fn parse_error(py: Python<'_>, err: &Error) -> PyErr {
    let d = validate::parse_failure(err);
    located::<GGUFParseError>(
        py,
        d.code.name(),
        Some(err.offset),
        err.path.to_string(),
        err.to_string(),
    )
}

enum Bytes {
    Map(GgufFile),
    Owned(Vec<u8>),
    /// The memory of a 1-D contiguous uint8 numpy array (`GGUFReader`'s `np.memmap`), so that
    /// what Python writes through its views (modes `r+` and `c`) is what is read here.
    Array {
        _owner: Py<PyAny>,
        ptr: usize,
        len: usize,
    },
}

impl Bytes {
    #[allow(unsafe_code)]
    fn get(&self) -> &[u8] {
        match self {
            Bytes::Map(file) => file.bytes(),
            Bytes::Owned(v) => v,
            Bytes::Array { len: 0, .. } => &[],
            // SAFETY: `_owner` is a C-contiguous uint8 numpy array of `len` bytes at `ptr`
            // (checked by `Document::from_array`), held as long as `self`; numpy never moves
            // or frees the memory of a live array. Python writes to it only while holding the
            // GIL, which every reader of these bytes holds (`dequantize` does not release it
            // for such a document), so no write happens while a slice is in use.
            Bytes::Array { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts(*ptr as *const u8, *len)
            },
        }
    }

    /// Whether Python may change the bytes (an array's memory).
    fn shared(&self) -> bool {
        matches!(self, Bytes::Array { .. })
    }
}

/// numpy type codes of the parts of gguf-py's fields, and their sizes; a part's code is an
/// index into these tables.
const CODES: [&str; 11] = [
    "u1", "i1", "u2", "i2", "u4", "i4", "f4", "?", "u8", "i8", "f8",
];
const SIZES: [u64; 11] = [1, 1, 2, 2, 4, 4, 4, 1, 8, 8, 8];
const U1: u8 = 0;
const U4: u8 = 4;
const U8: u8 = 8;

/// One numpy part of a gguf-py field: `count` items of type `CODES[code]` at `offset`.
#[derive(Clone, Copy)]
struct PartSpec {
    offset: u64,
    count: u64,
    code: u8,
}

/// gguf-py's `parts` (as specs) and `data` of a key/value, fixed when first built.
struct Layout {
    parts: Vec<PartSpec>,
    data: Vec<usize>,
}

/// What a parse found, kept as offsets so nothing borrows from the bytes.
struct KvEntry {
    key: Vec<u8>,
    offset: u64,
    value_offset: u64,
    ty: ValueType,
}

struct TensorEntry {
    name: Vec<u8>,
    offset: u64,
    dims: Vec<u64>,
    ggml_type: u32,
    relative_offset: u64,
    data_offset: Option<u64>,
    n_bytes: Option<u64>,
}

/// A parsed GGUF file or buffer. Values are decoded on request from their offsets.
#[pyclass(frozen, module = "gguf_grammar._native")]
struct Document {
    bytes: Bytes,
    ctx: Ctx,
    #[pyo3(get)]
    alignment: u64,
    #[pyo3(get)]
    tensor_infos_end: u64,
    #[pyo3(get)]
    tensor_data_offset: u64,
    #[pyo3(get)]
    kv_count: u64,
    #[pyo3(get)]
    tensor_count: u64,
    kvs: Vec<KvEntry>,
    tensors: Vec<TensorEntry>,
    /// Per key/value, its layout once built (on first use).
    layouts: Vec<std::sync::OnceLock<Layout>>,
    /// A copy of the header (up to the end of the tensor infos), taken by `freeze`.
    snapshot: std::sync::OnceLock<Vec<u8>>,
}

impl Document {
    fn new(py: Python<'_>, bytes: Bytes) -> PyResult<Self> {
        let gguf = Gguf::parse(bytes.get()).map_err(|e| parse_error(py, &e))?;
        let ctx = gguf.header.ctx;
        let at = |part: &[u8]| gguf.offset_of(part).unwrap_or(0);
        let kvs = gguf
            .kvs
            .iter()
            .map(|kv| {
                let offset = at(kv.raw);
                KvEntry {
                    key: kv.key.as_bytes().to_vec(),
                    offset,
                    // key length, key bytes, value type tag
                    value_offset: offset + ctx.count_width() + kv.key.len() as u64 + 4,
                    ty: kv.value.value_type(),
                }
            })
            .collect();
        let tensors = gguf
            .tensors
            .iter()
            .map(|t| TensorEntry {
                name: t.info.name.as_bytes().to_vec(),
                offset: at(t.info.raw),
                dims: t.info.dims.clone(),
                ggml_type: t.info.ggml_type.0,
                relative_offset: t.info.offset,
                data_offset: t.data_offset,
                n_bytes: t.n_bytes,
            })
            .collect();
        let (alignment, tensor_infos_end, tensor_data_offset) = (
            gguf.alignment,
            gguf.tensor_infos_end,
            gguf.tensor_data_offset,
        );
        let (kv_count, tensor_count) = (gguf.header.kv_count, gguf.header.tensor_count);
        let layouts = (0..gguf.kvs.len())
            .map(|_| std::sync::OnceLock::new())
            .collect();
        Ok(Document {
            layouts,
            snapshot: std::sync::OnceLock::new(),
            bytes,
            ctx,
            alignment,
            tensor_infos_end,
            tensor_data_offset,
            kv_count,
            tensor_count,
            kvs,
            tensors,
        })
    }

    fn bytes(&self) -> &[u8] {
        self.bytes.get()
    }

    /// The bytes the structure (values' offsets, lengths and types) is read from: the header
    /// as it was at `freeze`, else the bytes themselves.
    fn structure(&self) -> &[u8] {
        self.snapshot
            .get()
            .map(Vec::as_slice)
            .unwrap_or_else(|| self.bytes())
    }

    /// The value of type `ty` stored at `offset` (which a parse has already accepted).
    fn value_at(&self, offset: u64, ty: ValueType) -> PyResult<Value<'_>> {
        let bytes = self.structure();
        let start = usize::try_from(offset)
            .ok()
            .filter(|&s| s <= bytes.len())
            .ok_or_else(|| PyIndexError::new_err(format!("offset {offset} is past the end")))?;
        finish(value(self.ctx, ty), &bytes[start..])
            .map(|(_, v)| v)
            .map_err(|e| PyValueError::new_err(format!("no {ty} value at offset {offset}: {e}")))
    }

    fn offset_of(&self, part: &[u8]) -> u64 {
        (part.as_ptr() as usize - self.structure().as_ptr() as usize) as u64
    }

    fn entry(&self, index: usize) -> PyResult<&KvEntry> {
        self.kvs
            .get(index)
            .ok_or_else(|| PyIndexError::new_err("key/value index out of range"))
    }

    fn parsed(&self) -> PyResult<Gguf<'_>> {
        // The bytes parsed when the document was made; only an array's memory, changed by
        // Python since, can fail to parse again.
        Gguf::parse(self.bytes()).map_err(|e| {
            PyValueError::new_err(format!("the bytes changed since they were parsed: {e}"))
        })
    }

    /// Where an array's header (element type tag) starts, from its element bytes.
    fn array_offset(&self, elements: &[u8]) -> u64 {
        self.offset_of(elements) - 4 - self.ctx.count_width()
    }

    /// A value as the native API gives it: numbers, bools, `str` (or `bytes` when not
    /// UTF-8), and arrays as `(element_type, length, offset)` for the Python side to wrap.
    fn native<'py>(&self, py: Python<'py>, v: Value<'_>) -> PyResult<Bound<'py, PyAny>> {
        match v {
            Value::String(s) => match s.to_str() {
                Ok(text) => PyString::new(py, text).into_bound_py_any(py),
                Err(_) => PyBytes::new(py, s.as_bytes()).into_bound_py_any(py),
            },
            Value::Array(a) => (
                a.element_type().tag(),
                a.len(),
                self.array_offset(a.raw_elements()),
            )
                .into_bound_py_any(py),
            scalar => number(py, scalar),
        }
    }
}

/// A number or bool as gguf-py's `tolist()` gives it (float32 widened exactly to float).
fn number<'py>(py: Python<'py>, v: Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    match v {
        Value::U8(x) => x.into_bound_py_any(py),
        Value::I8(x) => x.into_bound_py_any(py),
        Value::U16(x) => x.into_bound_py_any(py),
        Value::I16(x) => x.into_bound_py_any(py),
        Value::U32(x) => x.into_bound_py_any(py),
        Value::I32(x) => x.into_bound_py_any(py),
        Value::U64(x) => x.into_bound_py_any(py),
        Value::I64(x) => x.into_bound_py_any(py),
        Value::F32(x) => f64::from(x).into_bound_py_any(py),
        Value::F64(x) => x.into_bound_py_any(py),
        Value::Bool(b) => PyBool::new(py, b != 0).to_owned().into_bound_py_any(py),
        Value::String(_) | Value::Array(_) => Err(PyTypeError::new_err("not a number")),
    }
}

/// gguf-py's `types` of a value: its type, then for an array the types of its first element.
fn gguf_py_types(v: Value<'_>, out: &mut Vec<u32>) {
    out.push(v.value_type().tag());
    if let Value::Array(a) = v {
        if let Some(first) = a.iter().next() {
            gguf_py_types(first, out);
        }
    }
}

fn utf8<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    match std::str::from_utf8(bytes) {
        Ok(text) => PyString::new(py, text).into_bound_py_any(py),
        // Python's own decoder raises the error, so its message is Python's.
        Err(_) => PyBytes::new(py, bytes).call_method1("decode", ("utf-8",)),
    }
}

/// The llama.cpp release named by its llama-cpp-python version ("0.3.16", "0.3.36"); `None`:
/// the newest.
fn release(version: Option<&str>) -> PyResult<gguf_llama::Release> {
    let Some(v) = version else {
        return Ok(gguf_llama::Release::NEWEST);
    };
    gguf_llama::Release::ALL
        .iter()
        .copied()
        .find(|r| r.version() == v)
        .ok_or_else(|| PyValueError::new_err(format!("release {v:?}: not 0.3.16 or 0.3.36")))
}

/// `Document.check`'s profiles: the library's, and `llama.cpp` (the newest release) or
/// `llama.cpp-0.3.16` (`gguf_llama::loader`, as `gguf check --profile llama.cpp`); for the
/// latter, the release whose loader it follows.
fn profile(name: &str) -> PyResult<(Profile, Option<gguf_llama::Release>)> {
    if let Some(release) = gguf_llama::loader::profile_release(name) {
        return Ok((gguf_llama::loader::container(release), Some(release)));
    }
    Profile::ALL
        .into_iter()
        .find(|p| p.name() == name)
        .map(|p| (p, None))
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown profile {name:?}: expected ggml, ggml-data, ggml-0.3.16, ggml-0.3.16-data, ggml-0.3.36, ggml-0.3.36-data, gguf-py, spec, strict, llama.cpp or llama.cpp-0.3.16"
            ))
        })
}

/// The diagnostics under `profile` (and the schema's with `schema`), as `gguf check`'s.
fn judge(
    gguf: &Gguf<'_>,
    file_len: u64,
    profile: &str,
    schema: bool,
) -> PyResult<(Profile, Vec<validate::Diagnostic>)> {
    let (profile, release) = self::profile(profile)?;
    let llama_cpp = release.is_some();
    // As `gguf check`'s judge: the model rules bring the templates' lint.
    let mut found = match release {
        Some(release) => gguf_tokenizer::check::llama_cpp_in(
            gguf,
            file_len,
            release,
            gguf_llama::loader::Load::Model,
        ),
        None => validate::check(gguf, file_len, profile),
    };
    if schema && !llama_cpp {
        found.extend(gguf_tokenizer::check::model(gguf));
    }
    if schema || llama_cpp {
        found.extend(gguf_template::lint::check(gguf));
    }
    Ok((profile, found))
}

#[pymethods]
impl Document {
    /// Memory-maps and parses the file at `path`.
    #[staticmethod]
    fn open(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let file = py.allow_threads(|| GgufFile::open(&path)).map_err(|e| {
            PyOSError::new_err((
                e.raw_os_error().unwrap_or(0),
                e.to_string(),
                path.display().to_string(),
            ))
        })?;
        Document::new(py, Bytes::Map(file))
    }

    /// Parses a GGUF file held in memory (the bytes are copied).
    #[staticmethod]
    fn parse(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        Document::new(py, Bytes::Owned(data.to_vec()))
    }

    /// GGUF version (1, 2 or 3).
    #[getter]
    fn version(&self) -> u32 {
        self.ctx.version.number()
    }

    /// `"little"` or `"big"`.
    #[getter]
    fn endian(&self) -> &'static str {
        self.ctx.endian.name()
    }

    /// Size of the file or buffer in bytes.
    #[getter]
    fn size(&self) -> usize {
        self.bytes().len()
    }

    /// Number of key/value pairs.
    fn __len__(&self) -> usize {
        self.kvs.len()
    }

    /// `(key bytes, offset, value offset, type tag, gguf-py types)` of key/value `index`.
    fn kv<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyAny>> {
        let kv = self.entry(index)?;
        let mut types = Vec::new();
        gguf_py_types(self.value_at(kv.value_offset, kv.ty)?, &mut types);
        (
            PyBytes::new(py, &kv.key),
            kv.offset,
            kv.value_offset,
            kv.ty.tag(),
            types,
        )
            .into_bound_py_any(py)
    }

    /// The value of key/value `index` (arrays as `(element_type, length, offset)`).
    fn value<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyAny>> {
        let kv = self.entry(index)?;
        let v = self.value_at(kv.value_offset, kv.ty)?;
        self.native(py, v)
    }

    /// Elements `range(start, stop, step)` of the array whose header is at `offset`.
    fn array_items<'py>(
        &self,
        py: Python<'py>,
        offset: u64,
        start: usize,
        stop: usize,
        step: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let Value::Array(a) = self.value_at(offset, ValueType::Array)? else {
            unreachable!("value_at(Array) returns an array")
        };
        let step = step.max(1);
        let items: Vec<Bound<'py, PyAny>> = match a.element_type().fixed_size() {
            Some(_) => (start..stop.min(a.len()))
                .step_by(step)
                .filter_map(|i| a.get(i))
                .map(|v| self.native(py, v))
                .collect::<PyResult<_>>()?,
            None => a
                .iter()
                .take(stop)
                .skip(start)
                .step_by(step)
                .map(|v| self.native(py, v))
                .collect::<PyResult<_>>()?,
        };
        PyList::new(py, items)
    }

    /// Parses the memory of `array`, a 1-D contiguous uint8 numpy array (the reader's
    /// `np.memmap`), and keeps it: values are read from that memory, as written by Python.
    #[staticmethod]
    fn from_array(py: Python<'_>, array: Bound<'_, PyAny>) -> PyResult<Self> {
        let iface = array.getattr("__array_interface__")?;
        let (ptr, _readonly): (usize, bool) = iface.get_item("data")?.extract()?;
        let typestr: String = iface.get_item("typestr")?.extract()?;
        let shape: Vec<usize> = iface.get_item("shape")?.extract()?;
        let contiguous = iface.get_item("strides").map_or(true, |s| s.is_none());
        if typestr != "|u1" || shape.len() != 1 || !contiguous {
            return Err(PyTypeError::new_err(
                "expected a 1-D contiguous uint8 array",
            ));
        }
        let bytes = Bytes::Array {
            _owner: array.unbind(),
            ptr,
            len: shape[0],
        };
        Document::new(py, bytes)
    }

    /// Keeps a copy of the header, which the layouts are built from from now on, so that
    /// later writes to the bytes (through the parts' views) do not change them: gguf-py fixes
    /// its parts when it opens a file. Values are still read from the bytes.
    fn freeze(&self) {
        let bytes = self.bytes();
        let end =
            usize::try_from(self.tensor_infos_end).map_or(bytes.len(), |e| e.min(bytes.len()));
        self.snapshot.get_or_init(|| bytes[..end].to_vec());
    }

    /// gguf-py's `ReaderField.parts` of key/value `index`: one numpy view per part, each a
    /// slice of `bases[BASE[code] + offset % size]`, the file's bytes viewed as that type
    /// from that shift (see `gguf_grammar._reader._Source`).
    fn field_parts<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        bases: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        const BASE: [u64; 11] = [0, 1, 2, 4, 6, 10, 14, 18, 19, 27, 35];
        let layout = self.kv_layout(index)?;
        let mut views = Vec::with_capacity(layout.parts.len());
        for p in &layout.parts {
            let size = SIZES[p.code as usize];
            let shift = p.offset % size;
            let base = bases
                .get((BASE[p.code as usize] + shift) as usize)
                .ok_or_else(|| PyValueError::new_err("too few base arrays"))?;
            let start = ((p.offset - shift) / size) as isize;
            let slice = PySlice::new(py, start, start + p.count as isize, 1);
            views.push(base.get_item(slice)?);
        }
        PyList::new(py, views)
    }

    /// gguf-py's `ReaderField.data` of key/value `index`.
    fn field_data(&self, index: usize) -> PyResult<Vec<usize>> {
        Ok(self.kv_layout(index)?.data.clone())
    }

    /// `len(field.data)` of key/value `index`, without building the list.
    fn field_len(&self, index: usize) -> PyResult<usize> {
        Ok(self.kv_layout(index)?.data.len())
    }

    /// gguf-py's `contents(i)` of array key/value `index` for an int `i`: the text of part
    /// `data[i]` (`strings`) or its first item.
    fn field_item<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        i: isize,
        strings: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let layout = self.kv_layout(index)?;
        let out_of_range = || PyIndexError::new_err("list index out of range");
        let at = if i < 0 {
            i + layout.data.len() as isize
        } else {
            i
        };
        let k = usize::try_from(at)
            .ok()
            .and_then(|at| layout.data.get(at))
            .ok_or_else(out_of_range)?;
        let part = layout.parts[*k];
        if strings {
            self.text(py, part)
        } else if part.count == 0 {
            Err(out_of_range())
        } else {
            self.item(py, part, 0)
        }
    }

    /// gguf-py's `contents(s)` of array key/value `index` for a slice `s` of its data.
    fn field_items<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        selection: &Bound<'py, PySlice>,
        strings: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let layout = self.kv_layout(index)?;
        let ix = selection.indices(layout.data.len() as isize)?;
        let mut out = Vec::with_capacity(ix.slicelength);
        for n in 0..ix.slicelength {
            let k = layout.data[(ix.start + n as isize * ix.step) as usize];
            self.extend_contents(py, layout.parts[k], strings, &mut out)?;
        }
        PyList::new(py, out)
    }

    /// gguf-py's `contents()` of a scalar or string key/value `index`: its last part, as
    /// text (`string`) or its first item.
    fn field_scalar<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        string: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let layout = self.kv_layout(index)?;
        let part = *layout.parts.last().expect("a key/value has parts");
        if string {
            self.text(py, part)
        } else if part.count == 0 {
            Err(PyIndexError::new_err("list index out of range"))
        } else {
            self.item(py, part, 0)
        }
    }

    /// `(name bytes, info offset, dims, ggml type id, relative offset, absolute data offset
    /// or None, ggml byte size or None)` of tensor `index`.
    #[allow(clippy::type_complexity)]
    fn tensor(
        &self,
        index: usize,
    ) -> PyResult<(Vec<u8>, u64, Vec<u64>, u32, u64, Option<u64>, Option<u64>)> {
        let t = self
            .tensors
            .get(index)
            .ok_or_else(|| PyIndexError::new_err("tensor index out of range"))?;
        Ok((
            t.name.clone(),
            t.offset,
            t.dims.clone(),
            t.ggml_type,
            t.relative_offset,
            t.data_offset,
            t.n_bytes,
        ))
    }

    /// The values of tensor `index` as float32 in this machine's byte order, in a
    /// `bytearray` (numpy views it without a copy), computed by the crate's
    /// `data::dequant` exactly as gguf-py's `gguf.quants.dequantize`: blocks are read as
    /// ggml stores them on a little-endian machine, whatever the file's byte order; `q1_0`
    /// and `q2_0`, which gguf-py does not dequantise, as llama.cpp 0.3.36's ggml.
    /// `NotImplementedError` for a type neither dequantises, `ValueError` when the data is
    /// not all in the file.
    fn dequantize<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyByteArray>> {
        let t = self
            .tensors
            .get(index)
            .ok_or_else(|| PyIndexError::new_err("tensor index out of range"))?;
        let ty = GgmlType(t.ggml_type);
        let name = escape(&t.name);
        if !dequant::supported(ty) {
            return Err(PyNotImplementedError::new_err(format!(
                "tensor \"{name}\": {}",
                DataError::Unsupported(ty)
            )));
        }
        let bytes = self.bytes();
        let data = match (t.data_offset, t.n_bytes) {
            (Some(start), Some(n)) if start <= bytes.len() as u64 && n <= bytes.len() as u64 - start => {
                &bytes[start as usize..(start + n) as usize]
            }
            _ => {
                return Err(PyValueError::new_err(format!(
                    "tensor \"{name}\": its {} bytes of data at offset {} are not all in the file ({} bytes)",
                    t.n_bytes.map_or("unknown".into(), |n| n.to_string()),
                    t.data_offset.map_or("unknown".into(), |o| o.to_string()),
                    bytes.len()
                )))
            }
        };
        // The value count comes from the bytes present, never from the dims alone; the
        // dims must agree with it (they gave ggml's byte size, so they do unless they overflow).
        let (block, size) = (
            ty.block_size().unwrap_or(1) as usize,
            ty.type_size().unwrap_or(1) as usize,
        );
        let values = data.len() / size * block;
        let dims = t.dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        if dims != Some(values as u64) {
            return Err(PyValueError::new_err(format!(
                "tensor \"{name}\": dims {:?} do not hold the {values} values of its {} bytes",
                t.dims,
                data.len()
            )));
        }
        PyByteArray::new_with(py, values * 4, |out| {
            let mut run = || dequantize_to_bytes(ty, data, out);
            // An array's memory may be written by Python: keep the GIL while reading it.
            let done = if self.bytes.shared() {
                run()
            } else {
                py.allow_threads(run)
            };
            done.map_err(|e| PyValueError::new_err(format!("tensor \"{name}\": {e}")))
        })
    }

    /// The diagnostics under `profile`, each `(code, severity, start, end, path, message,
    /// rejected_by)`; with `schema` (implied by `llama.cpp`), the model schema's too.
    #[pyo3(signature = (profile = "strict", schema = false))]
    fn check(&self, profile: &str, schema: bool) -> PyResult<Vec<DiagnosticRow>> {
        let gguf = self.parsed()?;
        let (_, found) = judge(&gguf, self.bytes().len() as u64, profile, schema)?;
        Ok(found.into_iter().map(diagnostic).collect())
    }

    /// The errors of `check("gguf-py")` that gguf-py rejects the file for, computed without
    /// looking inside arrays: none of gguf-py's rules does (they concern the header, keys,
    /// alignment and tensors), and walking the Llama 3 tokenizer's 400,000 strings is most of
    /// a full check's time.
    fn gguf_py_rejections(&self) -> PyResult<Vec<DiagnosticRow>> {
        static EMPTY: [u8; 12] = [0; 12];
        let mut gguf = self.parsed()?;
        for kv in &mut gguf.kvs {
            if let Value::Array(a) = kv.value {
                if let Ok((_, empty)) = gguf_grammar::grammar::value::array(a.ctx())(&EMPTY) {
                    kv.value = Value::Array(empty);
                }
            }
        }
        Ok(
            validate::check(&gguf, self.bytes().len() as u64, Profile::GgufPy)
                .into_iter()
                .filter(|d| Profile::GgufPy.rejects(d.rejected_by))
                .map(diagnostic)
                .collect(),
        )
    }

    /// `gguf check --releases --json`'s rows for the file, newest release first, as JSON.
    fn releases_json(&self) -> PyResult<String> {
        let gguf = self.parsed()?;
        let rows = gguf_tokenizer::check::releases(&gguf, self.bytes().len() as u64);
        Ok(serde_json::Value::Array(rows.iter().map(|r| r.json()).collect()).to_string())
    }

    /// Whether `profile` accepts the file (and, with `schema`, the schema too).
    #[pyo3(signature = (profile = "strict", schema = false))]
    fn accepts(&self, profile: &str, schema: bool) -> PyResult<bool> {
        let gguf = self.parsed()?;
        let (profile, found) = judge(&gguf, self.bytes().len() as u64, profile, schema)?;
        Ok(validate::accepts(&found, profile) && gguf_llama::schema::accepts_model(&found))
    }

    /// The figures of `gguf dump --summary` as a dict.
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let gguf = self.parsed()?;
        let s = Summary::of(&gguf);
        let out = PyDict::new(py);
        out.set_item("architecture", s.hparams.architecture)?;
        out.set_item("name", s.name)?;
        out.set_item("tensor_count", s.tensors)?;
        out.set_item("parameters", s.parameters)?;
        out.set_item("size_label", s.size_label)?;
        out.set_item(
            "parameters_label",
            s.parameters.filter(|_| s.tensors > 0).map(size_label),
        )?;
        out.set_item("file_type", s.file_type)?;
        out.set_item("tensor_bytes", s.tensor_bytes)?;
        out.set_item("bits_per_weight", s.bits_per_weight())?;
        let types: Vec<(String, usize)> = s
            .tensor_types
            .iter()
            .map(|(ty, n)| (ty.to_string(), *n))
            .collect();
        out.set_item("tensor_types", types)?;
        Ok(out)
    }

    /// The document as `gguf dump --json` prints it.
    fn to_json(&self) -> PyResult<String> {
        let gguf = self.parsed()?;
        let mut out = Vec::new();
        gguf_tools::render::json::write(&gguf, self.bytes().len() as u64, &mut out)
            .map_err(|e| PyOSError::new_err(e.to_string()))?;
        String::from_utf8(out).map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

impl Document {
    /// The layout of key/value `index`, built from the bytes the first time it is asked for.
    fn kv_layout(&self, index: usize) -> PyResult<&Layout> {
        let kv = self.entry(index)?;
        if let Some(layout) = self.layouts[index].get() {
            return Ok(layout);
        }
        // The key's length, bytes and the value's type tag, then the value's parts.
        let key_at = kv.value_offset - 4 - kv.key.len() as u64 - 8;
        let mut parts = vec![
            PartSpec {
                offset: key_at,
                count: 1,
                code: U8,
            },
            PartSpec {
                offset: key_at + 8,
                count: kv.key.len() as u64,
                code: U1,
            },
            PartSpec {
                offset: kv.value_offset - 4,
                count: 1,
                code: U4,
            },
        ];
        let mut data = Vec::new();
        let v = self.value_at(kv.value_offset, kv.ty)?;
        self.layout(v, kv.value_offset, &mut parts, &mut data);
        Ok(self.layouts[index].get_or_init(|| Layout { parts, data }))
    }

    /// Appends the parts of `v` (stored at `offset`) in gguf-py's order.
    fn layout(&self, v: Value<'_>, offset: u64, parts: &mut Vec<PartSpec>, data: &mut Vec<usize>) {
        let width = self.ctx.count_width();
        match v {
            Value::String(s) => {
                parts.push(PartSpec {
                    offset,
                    count: 1,
                    code: U8,
                });
                data.push(parts.len());
                parts.push(PartSpec {
                    offset: offset + width,
                    count: s.len() as u64,
                    code: U1,
                });
            }
            Value::Array(a) => {
                parts.push(PartSpec {
                    offset,
                    count: 1,
                    code: U4,
                });
                parts.push(PartSpec {
                    offset: offset + 4,
                    count: 1,
                    code: U8,
                });
                let mut at = offset + 4 + width;
                match a.element_type().fixed_size() {
                    Some(size) => {
                        let code = a.element_type().known().map_or(U1, part_code);
                        parts.reserve(a.len());
                        data.reserve(a.len());
                        for _ in 0..a.len() {
                            data.push(parts.len());
                            parts.push(PartSpec {
                                offset: at,
                                count: 1,
                                code,
                            });
                            at += size;
                        }
                    }
                    None => {
                        for e in a.iter() {
                            self.layout(e, at, parts, data);
                            at = match e {
                                Value::String(s) => at + width + s.len() as u64,
                                Value::Array(inner) => {
                                    let start = self.offset_of(inner.raw_elements());
                                    start + inner.raw_elements().len() as u64
                                }
                                scalar => at + scalar.value_type().fixed_size().unwrap_or(0),
                            };
                        }
                    }
                }
            }
            scalar => {
                data.push(parts.len());
                parts.push(PartSpec {
                    offset,
                    count: 1,
                    code: part_code(scalar.value_type()),
                });
            }
        }
    }

    /// Item `i` of a part, read from the bytes as the numpy view's `tolist()` gives it.
    fn item<'py>(&self, py: Python<'py>, part: PartSpec, i: u64) -> PyResult<Bound<'py, PyAny>> {
        let size = SIZES[part.code as usize];
        let at = part.offset + i * size;
        let bytes = self.bytes();
        let raw = usize::try_from(at)
            .ok()
            .and_then(|at| bytes.get(at..at + size as usize))
            .ok_or_else(|| PyIndexError::new_err(format!("offset {at} is past the end")))?;
        let mut b = [0u8; 8];
        b[..raw.len()].copy_from_slice(raw);
        if self.ctx.endian == Endian::Big {
            b[..raw.len()].reverse();
        }
        let v = match part.code {
            0 => Value::U8(b[0]),
            1 => Value::I8(b[0] as i8),
            2 => Value::U16(u16::from_le_bytes([b[0], b[1]])),
            3 => Value::I16(i16::from_le_bytes([b[0], b[1]])),
            4 => Value::U32(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            5 => Value::I32(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            6 => Value::F32(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            7 => Value::Bool(b[0]),
            8 => Value::U64(u64::from_le_bytes(b)),
            9 => Value::I64(i64::from_le_bytes(b)),
            _ => Value::F64(f64::from_le_bytes(b)),
        };
        number(py, v)
    }

    /// A part's bytes as text (gguf-py's `str(part.tobytes(), encoding='utf-8')`).
    fn text<'py>(&self, py: Python<'py>, part: PartSpec) -> PyResult<Bound<'py, PyAny>> {
        let bytes = self.bytes();
        let len = part.count * SIZES[part.code as usize];
        let raw = usize::try_from(part.offset)
            .ok()
            .zip(usize::try_from(len).ok())
            .and_then(|(at, n)| bytes.get(at..at.checked_add(n)?))
            .ok_or_else(|| {
                PyIndexError::new_err(format!("offset {} is past the end", part.offset))
            })?;
        utf8(py, raw)
    }

    /// The selected parts as gguf-py's `contents` gives them: decoded text (`strings`), or
    /// every item of each part in turn.
    fn extend_contents<'py>(
        &self,
        py: Python<'py>,
        part: PartSpec,
        strings: bool,
        out: &mut Vec<Bound<'py, PyAny>>,
    ) -> PyResult<()> {
        if strings {
            out.push(self.text(py, part)?);
        } else {
            for i in 0..part.count {
                out.push(self.item(py, part, i)?);
            }
        }
        Ok(())
    }
}

/// The index into `CODES` of a scalar type's numpy type.
fn part_code(ty: ValueType) -> u8 {
    match ty {
        ValueType::U8 => 0,
        ValueType::I8 => 1,
        ValueType::U16 => 2,
        ValueType::I16 => 3,
        ValueType::U32 => 4,
        ValueType::I32 => 5,
        ValueType::F32 => 6,
        ValueType::Bool => 7,
        ValueType::U64 => 8,
        ValueType::I64 => 9,
        ValueType::F64 => 10,
        ValueType::String | ValueType::Array => 0,
    }
}

/// A diagnostic as `(code, severity, start, end, path, message, rejected_by)`.
type DiagnosticRow = (
    &'static str,
    &'static str,
    Option<u64>,
    Option<u64>,
    String,
    String,
    Vec<&'static str>,
);

fn diagnostic(d: validate::Diagnostic) -> DiagnosticRow {
    (
        d.code.name(),
        d.severity.name(),
        d.span.as_ref().map(|s| s.start),
        d.span.as_ref().map(|s| s.end),
        d.path.to_string(),
        d.message,
        d.rejected_by.iter().map(|r| r.name()).collect(),
    )
}

/// Dequantises `data` (whole blocks of `ty`) into `out` as native-endian f32 bytes, a few
/// blocks at a time through a small buffer, so nothing is held twice.
fn dequantize_to_bytes(ty: GgmlType, data: &[u8], out: &mut [u8]) -> Result<(), DataError> {
    // 4096 values: a whole number of blocks of every type (1, 32, 64 or 256 values).
    const CHUNK: usize = 4096;
    let (block, size) = (
        ty.block_size().unwrap_or(1) as usize,
        ty.type_size().unwrap_or(1) as usize,
    );
    let mut buf = vec![0f32; CHUNK];
    for (bytes, out) in data
        .chunks(CHUNK / block * size)
        .zip(out.chunks_mut(CHUNK * 4))
    {
        let buf = &mut buf[..out.len() / 4];
        dequant::dequantize_into(ty, bytes, buf)?;
        for (o, v) in out.chunks_exact_mut(4).zip(buf.iter()) {
            o.copy_from_slice(&v.to_ne_bytes());
        }
    }
    Ok(())
}

/// `(name, block size, type size)` of a ggml type id from ggml's table, or `None` for an
/// unknown or removed id.
#[pyfunction]
fn ggml_type_info(id: u32) -> Option<(&'static str, u64, u64)> {
    let ty = GgmlType(id);
    Some((ty.name()?, ty.block_size()?, ty.type_size()?))
}

/// `text` made safe to print on a terminal (and in a tab-separated row): control and
/// bidirectional characters, backslashes and bytes that are not UTF-8 become escapes, as
/// every human-readable output of the `gguf` CLI prints text from a file.
#[pyfunction]
fn escape(text: &[u8]) -> String {
    gguf_grammar::escape::terminal(text).into_owned()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Document>()?;
    m.add_function(wrap_pyfunction!(ggml_type_info, m)?)?;
    m.add_function(wrap_pyfunction!(escape, m)?)?;
    m.add_class::<tokenizer::Tokenizer>()?;
    m.add_function(wrap_pyfunction!(fit::fit, m)?)?;
    m.add_function(wrap_pyfunction!(fit::shard_paths, m)?)?;
    m.add_function(wrap_pyfunction!(template::render_template, m)?)?;
    m.add_function(wrap_pyfunction!(template::special_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(template::chat_templates, m)?)?;
    m.add_function(wrap_pyfunction!(template::template_report, m)?)?;
    m.add_function(wrap_pyfunction!(template::lint_template, m)?)?;
    m.add_function(wrap_pyfunction!(template::screen_template, m)?)?;
    m.add("TemplateError", py.get_type::<template::TemplateError>())?;
    m.add("PART_CODES", CODES.to_vec())?;
    m.add("GGUFError", py.get_type::<GGUFError>())?;
    m.add("GGUFParseError", py.get_type::<GGUFParseError>())?;
    m.add("GGUFRejectedError", py.get_type::<GGUFRejectedError>())?;
    Ok(())
}
