//! Container rules: what each reference reader and the specification require of the header,
//! key/values, tensor infos and the layout of the tensor data.
//!
//! The rules follow ggml's `gguf_init_from_reader` (`ggml/src/gguf.cpp`, `GGML_TYPE_COUNT` 43),
//! gguf-py 0.19.0's `GGUFReader.__init__` and the GGUF specification (`docs/gguf.md`). Each
//! diagnostic names exactly the references that reject a file for it; ggml's verdict when it
//! also loads the tensor data (`ggml-data`) includes every metadata-only (`ggml`) rejection.
//!
//! ggml reads the header as little endian, so on a little-endian host (where the conformance
//! verdicts were recorded) it rejects every big-endian file at the version field: that is the
//! `big-endian` diagnostic. Where ggml's own arithmetic overflows (`nelements-overflow`) the
//! rule is evaluated exactly and rejects, where ggml would accept by accident.

use std::collections::HashMap;
use std::ops::Range;

use super::{Diagnostic, Reference, Severity};
use crate::error::{ConstructPath as Path, Segment};
use crate::grammar::align_up;
use crate::grammar::value::{Array, ElementType, Value, ValueType};
use crate::{Endian, GgmlType, Gguf, GgufStr, TypeStatus, Version};

/// Rejecter sets as bit masks: ggml (metadata only), ggml loading data, gguf-py, the spec.
const G: u8 = 1;
const D: u8 = 2;
const P: u8 = 4;
const S: u8 = 8;
/// ggml rejects whether or not it loads the data.
const GGML: u8 = G | D;
const ALL: u8 = G | D | P | S;

/// Every subset of the references, indexed by mask.
static REJECTERS: [&[Reference]; 16] = {
    use Reference::{Ggml as RG, GgmlData as RD, GgufPy as RP, Spec as RS};
    [
        &[],
        &[RG],
        &[RD],
        &[RG, RD],
        &[RP],
        &[RG, RP],
        &[RD, RP],
        &[RG, RD, RP],
        &[RS],
        &[RG, RS],
        &[RD, RS],
        &[RG, RD, RS],
        &[RP, RS],
        &[RG, RP, RS],
        &[RD, RP, RS],
        &[RG, RD, RP, RS],
    ]
};

/// ggml's `GGUF_MAX_STRING_LENGTH` and `GGUF_MAX_ARRAY_ELEMENTS`.
const GGML_MAX_STRING: u64 = 1 << 30;
const GGML_MAX_ARRAY: u64 = 1 << 30;
/// ggml's `GGML_MAX_NAME`: a tensor name must be shorter.
const GGML_MAX_NAME: usize = 64;
/// The specification's limits: tensor names of at most 64 bytes, keys of at most 65535.
const SPEC_MAX_NAME: usize = 64;
const SPEC_MAX_KEY: usize = 65535;
/// ggml's `GGML_MAX_DIMS` and the specification's "currently at most 4".
const MAX_DIMS: usize = 4;
/// The key that sets the alignment.
const ALIGNMENT_KEY: &[u8] = crate::ALIGNMENT_KEY.as_bytes();
/// Field names gguf-py's reader puts before the file's own key/values.
const GGUF_PY_SYNTHETIC: [&[u8]; 3] = [b"GGUF.version", b"GGUF.tensor_count", b"GGUF.kv_count"];

/// gguf-py 0.19.0's `GGML_QUANT_SIZES` entry for `ggml_type`: (values per block, bytes per
/// block). It equals ggml's table except that q8_1 blocks are 40 bytes (ggml: 36) and q2_0
/// (id 42) is missing.
///
/// ```
/// use gguf_grammar::{validate::gguf_py_type_size, GgmlType};
/// assert_eq!(gguf_py_type_size(GgmlType::Q8_1), Some((32, 40)));
/// assert_eq!(gguf_py_type_size(GgmlType::Q4_K), Some((256, 144)));
/// assert_eq!(gguf_py_type_size(GgmlType::Q2_0), None);
/// ```
pub fn gguf_py_type_size(ggml_type: GgmlType) -> Option<(u64, u64)> {
    match ggml_type {
        GgmlType::Q8_1 => Some((32, 40)),
        GgmlType::Q2_0 => None,
        t => Some((t.block_size()?, t.type_size()?)),
    }
}

/// The byte size gguf-py 0.19.0 gives a tensor (`n_elements * type_size // block_size`, with
/// its own table), or `None` for a type it does not know or a size past `u64`.
///
/// ```
/// use gguf_grammar::{validate::gguf_py_n_bytes, GgmlType};
/// assert_eq!(gguf_py_n_bytes(GgmlType::Q8_1, &[32, 2]), Some(80)); // ggml: 72
/// assert_eq!(gguf_py_n_bytes(GgmlType::F32, &[]), Some(4));
/// ```
pub fn gguf_py_n_bytes(ggml_type: GgmlType, dims: &[u64]) -> Option<u64> {
    u64::try_from(gguf_py_n_bytes_exact(ggml_type, dims)?).ok()
}

/// gguf-py's byte size in 128 bits (saturated), `None` for a type it does not know.
fn gguf_py_n_bytes_exact(ggml_type: GgmlType, dims: &[u64]) -> Option<u128> {
    let (block, size) = gguf_py_type_size(ggml_type)?;
    let bytes = exact_elements(dims).saturating_mul(u128::from(size));
    Some(bytes / u128::from(block))
}

/// The product of the dims in 128 bits, saturated (dims are at most 2^64, so a saturated
/// product is far past every limit checked against it).
fn exact_elements(dims: &[u64]) -> u128 {
    // A zero dim makes the count zero in any order, before any product can overflow.
    if dims.contains(&0) {
        return 0;
    }
    dims.iter()
        .try_fold(1u128, |acc, &d| acc.checked_mul(u128::from(d)))
        .unwrap_or(u128::MAX)
}

/// The alignment ggml uses: it finds `general.alignment` with `strcmp`, so a key that is
/// `general.alignment` followed by a NUL byte and more counts; a u32 power of two, else 32
/// (any other value makes ggml reject the file).
pub(crate) fn ggml_alignment(gguf: &Gguf<'_>) -> u64 {
    crate::alignment(
        ggml_alignment_kv(gguf).and_then(|i| match gguf.kvs[i].value {
            Value::U32(n) if n.is_power_of_two() => Some(n),
            _ => None,
        }),
    )
}

fn ggml_alignment_kv(gguf: &Gguf<'_>) -> Option<usize> {
    gguf.kvs
        .iter()
        .position(|kv| c_str(kv.key.as_bytes()) == ALIGNMENT_KEY)
}

/// The bytes before the first NUL: what C's `strcmp` compares.
fn c_str(bytes: &[u8]) -> &[u8] {
    bytes.split(|&b| b == 0).next().unwrap_or(bytes)
}

/// Diagnostics of one kind (code, rejecting references, severity) kept per file; the rest
/// are counted and reported as one "and N more" diagnostic of the same kind, so that memory
/// stays bounded (300,000 empty keys give 100 diagnostics, not 300,000) and the verdict of
/// every profile is unchanged.
pub const MAX_PER_KIND: u64 = 100;

/// Collects diagnostics for one file.
struct Checker<'g, 'a> {
    gguf: &'g Gguf<'a>,
    file_len: u64,
    out: Vec<Diagnostic>,
    /// How many diagnostics of each kind were found (kept or not).
    per_kind: HashMap<(&'static str, u8, Severity), u64>,
}

/// Every container diagnostic for `gguf`, whose file is `file_len` bytes long.
pub(crate) fn diagnose(gguf: &Gguf<'_>, file_len: u64) -> Vec<Diagnostic> {
    let mut c = Checker {
        gguf,
        file_len,
        out: Vec::new(),
        per_kind: Default::default(),
    };
    c.header();
    c.kvs();
    c.alignment();
    c.tensors();
    c.ggml_layout();
    c.data_layout();
    let mut more: Vec<_> = c
        .per_kind
        .into_iter()
        .filter(|&(_, n)| n > MAX_PER_KIND)
        .collect();
    more.sort_unstable();
    for ((code, mask, severity), n) in more {
        c.out.push(Diagnostic {
            code,
            severity,
            span: None,
            path: Path::default(),
            message: format!("and {} more like the above", n - MAX_PER_KIND),
            rejected_by: REJECTERS[usize::from(mask)],
        });
    }
    c.out
}

impl<'a> Checker<'_, 'a> {
    /// Records a diagnostic rejected by the references in `mask` (an error unless `mask` is 0,
    /// then `severity`).
    fn push(
        &mut self,
        code: &'static str,
        mask: u8,
        severity: Severity,
        span: Option<Range<u64>>,
        path: Path,
        message: String,
    ) {
        let severity = if mask == 0 { severity } else { Severity::Error };
        let seen = self
            .per_kind
            .entry((code, mask & ALL, severity))
            .or_default();
        *seen += 1;
        if *seen > MAX_PER_KIND {
            return;
        }
        self.out.push(Diagnostic {
            code,
            severity,
            span,
            path,
            message,
            rejected_by: REJECTERS[usize::from(mask & ALL)],
        });
    }

    fn error(
        &mut self,
        code: &'static str,
        mask: u8,
        span: Option<Range<u64>>,
        path: Path,
        message: String,
    ) {
        self.push(code, mask, Severity::Error, span, path, message);
    }

    /// Where `part` (a slice of the parsed input) lies in the file.
    fn span(&self, part: &[u8]) -> Option<Range<u64>> {
        let start = self.gguf.offset_of(part)?;
        Some(start..start + part.len() as u64)
    }

    fn header(&mut self) {
        let at = Some(4..8);
        let path = || Path(vec![Segment::Header("version")]);
        if self.gguf.header.ctx.version == Version::V1 {
            self.error(
                "version-1",
                GGML | P,
                at.clone(),
                path(),
                "GGUF v1 (32-bit counts and lengths): ggml no longer reads it, gguf-py reads only v2 and v3".into(),
            );
        }
        if self.gguf.endian() == Endian::Big {
            self.error(
                "big-endian",
                GGML,
                at,
                path(),
                format!(
                    "big-endian file: ggml on a little-endian host reads the version as {:#x} and rejects it",
                    self.gguf.version().number().swap_bytes()
                ),
            );
        }
    }

    fn kvs(&mut self) {
        let gguf = self.gguf;
        let mut seen: HashMap<&[u8], usize> = HashMap::new();
        for (i, kv) in gguf.kvs.iter().enumerate() {
            let key = kv.key.as_bytes();
            let path = Path(vec![
                Segment::Kv(i as u64),
                Segment::Name(kv.key.to_string()),
            ]);
            let span = self.span(kv.raw);
            if key.is_empty() {
                self.error(
                    "empty-key",
                    GGML | S,
                    span.clone(),
                    path.clone(),
                    "empty key".into(),
                );
            }
            if let Some(&first) = seen.get(key) {
                self.error(
                    "duplicate-key",
                    GGML | P,
                    span.clone(),
                    path.clone(),
                    format!("key \"{}\" already appears at kv[{first}]", kv.key),
                );
            } else {
                seen.insert(key, i);
            }
            if GGUF_PY_SYNTHETIC.contains(&key) {
                self.error(
                    "key-reserved-by-gguf-py",
                    P,
                    span.clone(),
                    path.clone(),
                    format!(
                        "gguf-py names its own header field \"{}\", so it sees a duplicate",
                        kv.key
                    ),
                );
            }
            self.key_syntax(kv.key, span.clone(), &path);
            let mut value_path = path;
            value_path.0.push(Segment::Field("value"));
            self.value(kv.value, &value_path, span, true);
        }
    }

    fn key_syntax(&mut self, key: GgufStr<'a>, span: Option<Range<u64>>, path: &Path) {
        let bytes = key.as_bytes();
        if bytes.len() as u64 > GGML_MAX_STRING {
            self.error(
                "string-too-long",
                GGML,
                span.clone(),
                path.clone(),
                format!(
                    "key of {} bytes: ggml reads strings of at most 2^30 bytes",
                    bytes.len()
                ),
            );
        }
        if bytes.len() > SPEC_MAX_KEY {
            self.error(
                "key-too-long",
                S,
                span.clone(),
                path.clone(),
                format!(
                    "key of {} bytes: the spec allows at most {SPEC_MAX_KEY}",
                    bytes.len()
                ),
            );
        }
        match simdutf8::compat::from_utf8(key.as_bytes()) {
            Err(e) => self.error(
                "key-invalid-utf8",
                P | S,
                span,
                path.clone(),
                format!(
                    "key is not UTF-8 (at byte {}): gguf-py cannot decode it",
                    e.valid_up_to()
                ),
            ),
            Ok(text) if !text.is_ascii() => self.error(
                "key-not-ascii",
                S,
                span,
                path.clone(),
                "key is not ASCII: the spec requires ASCII keys".into(),
            ),
            Ok(text) if !text.is_empty() && !is_snake_case_path(text) => self.error(
                "key-syntax",
                S,
                span,
                path.clone(),
                "key is not dot-separated lower_snake_case segments, as the spec requires".into(),
            ),
            Ok(_) => {}
        }
    }

    /// Rules on a value (`top`: the kv's own value, not an array element).
    fn value(&mut self, value: Value<'a>, path: &Path, span: Option<Range<u64>>, top: bool) {
        match value {
            Value::String(s) => {
                let invalid = simdutf8::basic::from_utf8(s.as_bytes()).is_err();
                let long = s.len() as u64 > GGML_MAX_STRING;
                let one = |bad: bool| (bad.then_some((0, s)), u64::from(bad));
                self.strings(one(invalid), one(long), 1, path)
            }
            Value::Bool(b) if b > 1 => self.error(
                "bool-invalid",
                S,
                span,
                path.clone(),
                format!("bool byte {b}: only 0 and 1 are defined"),
            ),
            Value::Array(array) => self.array(array, path, top),
            _ => {}
        }
    }

    fn array(&mut self, array: Array<'a>, path: &Path, top: bool) {
        let span = self.span(array.raw_elements());
        if array.len() as u64 > GGML_MAX_ARRAY {
            self.error(
                "array-too-long",
                GGML,
                span.clone(),
                path.clone(),
                format!("array of {} elements: ggml reads at most 2^30", array.len()),
            );
        }
        let element_type = match array.element_type() {
            ElementType::Known(ty) => ty,
            ElementType::Unknown(tag) => {
                return self.error(
                    "array-type-unknown",
                    GGML | S,
                    span,
                    path.clone(),
                    format!(
                        "empty array of element type {tag}: ggml rejects a type outside 0..=12 \
                         (gguf-py reads no element, so never sees it)"
                    ),
                );
            }
        };
        match element_type {
            ValueType::String => {
                // One walk and one SIMD pass over runs of strings (crate::elements::Strs);
                // no string can be too long in fewer bytes than the limit.
                let invalid = array
                    .strs()
                    .map(|strs| strs.invalid().map(|e| (e.index, e.bytes)));
                let long = array
                    .strings()
                    .filter(|_| array.raw_elements().len() as u64 > GGML_MAX_STRING)
                    .map(|strings| {
                        (0..)
                            .zip(strings)
                            .filter(|(_, s)| s.len() as u64 > GGML_MAX_STRING)
                    });
                self.strings(
                    first_and_count(invalid.into_iter().flatten()),
                    first_and_count(long.into_iter().flatten()),
                    array.len() as u64,
                    path,
                );
            }
            ValueType::Bool => {
                let bad = array.raw_elements().iter().filter(|&&b| b > 1).count();
                if bad > 0 {
                    let first = array
                        .raw_elements()
                        .iter()
                        .position(|&b| b > 1)
                        .unwrap_or(0);
                    self.error(
                        "bool-invalid",
                        S,
                        span,
                        path.clone(),
                        format!(
                            "{bad} of {} bool bytes are neither 0 nor 1 (first at [{first}])",
                            array.len()
                        ),
                    );
                }
            }
            ValueType::Array => {
                if top {
                    self.error(
                        "array-nested",
                        GGML,
                        span.clone(),
                        path.clone(),
                        "array of arrays: ggml reads only arrays of scalars and strings".into(),
                    );
                }
                for (i, element) in array.iter().enumerate() {
                    let mut inner = path.clone();
                    inner.0.push(Segment::Element(i as u64));
                    self.value(element, &inner, span.clone(), false);
                }
            }
            _ => {}
        }
    }

    /// UTF-8 and length rules over `count` strings, given the first string (with its index)
    /// that is not UTF-8 and the first that is too long, each with how many there are (one
    /// diagnostic per rule, naming the first).
    fn strings(
        &mut self,
        (invalid, n_invalid): (Option<(u64, GgufStr<'a>)>, u64),
        (long, n_long): (Option<(u64, GgufStr<'a>)>, u64),
        count: u64,
        path: &Path,
    ) {
        let in_array = count != 1 || path.0.last() != Some(&Segment::Field("value"));
        let at = |i: u64| {
            let mut p = path.clone();
            if in_array {
                p.0.push(Segment::Element(i));
            }
            p
        };
        if let Some((i, s)) = invalid {
            let many = if in_array {
                format!(" ({n_invalid} of {count} strings)")
            } else {
                String::new()
            };
            self.error(
                "string-invalid-utf8",
                S,
                self.span(s.as_bytes()),
                at(i),
                format!("string is not UTF-8{many}: the spec requires UTF-8"),
            );
        }
        if let Some((i, s)) = long {
            let many = if in_array {
                format!(" ({n_long} of {count} strings)")
            } else {
                String::new()
            };
            self.error(
                "string-too-long",
                GGML,
                self.span(s.as_bytes()),
                at(i),
                format!(
                    "string of {} bytes{many}: ggml reads strings of at most 2^30 bytes",
                    s.len()
                ),
            );
        }
    }

    fn alignment(&mut self) {
        let gguf = self.gguf;
        // ggml finds the key with strcmp, gguf-py and the spec by exact bytes: almost always
        // the same kv, which then answers to all of them.
        let ggml_kv = ggml_alignment_kv(gguf);
        let exact_kv = gguf
            .kvs
            .iter()
            .position(|kv| kv.key.as_bytes() == ALIGNMENT_KEY);
        let targets = match (ggml_kv, exact_kv) {
            (Some(g), Some(e)) if g == e => vec![(g, GGML | P | S)],
            (g, e) => g
                .map(|g| (g, GGML))
                .into_iter()
                .chain(e.map(|e| (e, P | S)))
                .collect(),
        };
        for (index, who) in targets {
            let kv = &gguf.kvs[index];
            let path = Path(vec![
                Segment::Kv(index as u64),
                Segment::Name(kv.key.to_string()),
            ]);
            let span = self.span(kv.raw);
            match kv.value {
                Value::U32(0) => self.error(
                    "alignment-zero",
                    who,
                    span,
                    path,
                    "general.alignment is 0".into(),
                ),
                Value::U32(n) => {
                    if !n.is_power_of_two() {
                        self.error(
                            "alignment-not-power-of-two",
                            who & (GGML | P),
                            span.clone(),
                            path.clone(),
                            format!("general.alignment {n} is not a power of two, as ggml and gguf-py require"),
                        );
                    }
                    if n % 8 != 0 && who & S != 0 {
                        self.error(
                            "alignment-not-multiple-of-8",
                            S,
                            span,
                            path,
                            format!("general.alignment {n} is not a multiple of 8, as the spec requires"),
                        );
                    }
                }
                other => self.error(
                    "alignment-type",
                    who,
                    span,
                    path,
                    format!("general.alignment is {}, not uint32", type_label(other)),
                ),
            }
        }
    }

    fn tensors(&mut self) {
        let gguf = self.gguf;
        let mut exact: HashMap<&[u8], usize> = HashMap::new();
        let mut c_names: HashMap<&[u8], usize> = HashMap::new();
        for (i, tensor) in gguf.tensors.iter().enumerate() {
            let info = &tensor.info;
            let name = info.name.as_bytes();
            let path = Path(vec![
                Segment::Tensor(i as u64),
                Segment::Name(info.name.to_string()),
            ]);
            let span = self.span(info.raw);
            let error = |c: &mut Self, code, mask, message: String| {
                c.error(code, mask, span.clone(), path.clone(), message)
            };

            if name.len() >= GGML_MAX_NAME {
                let spec = if name.len() > SPEC_MAX_NAME { S } else { 0 };
                error(
                    self,
                    "tensor-name-too-long",
                    GGML | spec,
                    format!(
                        "tensor name of {} bytes: ggml takes at most {}, the spec at most {SPEC_MAX_NAME}",
                        name.len(),
                        GGML_MAX_NAME - 1
                    ),
                );
            }
            if info.name.to_str().is_err() {
                error(
                    self,
                    "tensor-name-invalid-utf8",
                    P | S,
                    "tensor name is not UTF-8: gguf-py cannot decode it".into(),
                );
            }
            let dup_exact = exact.get(name).copied();
            let dup_c = c_names.get(c_str(name)).copied();
            exact.entry(name).or_insert(i);
            c_names.entry(c_str(name)).or_insert(i);
            if let Some(first) = dup_exact.or(dup_c) {
                let mask = if dup_exact.is_some() { GGML | P } else { GGML };
                error(
                    self,
                    "duplicate-tensor-name",
                    mask,
                    format!("tensor name already used by tensor[{first}]"),
                );
            }

            let dims = &info.dims;
            if dims.len() > MAX_DIMS {
                error(
                    self,
                    "too-many-dims",
                    GGML | S,
                    format!(
                        "{} dims: ggml and the spec allow at most {MAX_DIMS}",
                        dims.len()
                    ),
                );
            }
            if let Some(d) = dims.iter().position(|&d| d > i64::MAX as u64) {
                let mut at = path.clone();
                at.0.push(Segment::Dim(d as u64));
                self.error(
                    "dim-too-large",
                    ALL,
                    span.clone(),
                    at,
                    format!(
                        "dim {} does not fit in an int64 (ggml reads it as negative)",
                        dims[d]
                    ),
                );
            }

            let ty = info.ggml_type;
            match ty.status() {
                TypeStatus::Unknown => error(
                    self,
                    "tensor-type-unknown",
                    ALL,
                    format!(
                        "ggml type {} is not defined (ggml knows 0..{})",
                        ty.0,
                        GgmlType::COUNT
                    ),
                ),
                TypeStatus::Removed => error(
                    self,
                    "tensor-type-removed",
                    ALL,
                    format!("ggml type {} ({ty}) has been removed", ty.0),
                ),
                TypeStatus::Known => {
                    if gguf_py_type_size(ty).is_none() {
                        error(
                            self,
                            "tensor-type-not-in-gguf-py",
                            P,
                            format!("ggml type {} ({ty}) is newer than gguf-py 0.19.0", ty.0),
                        );
                    }
                }
            }
            let ne0 = dims.first().copied().unwrap_or(1);
            let divisible = match ty.block_size() {
                Some(block) if ne0 % block != 0 => {
                    error(
                        self,
                        "tensor-row-not-block-multiple",
                        ALL,
                        format!(
                            "rows of {ne0} values are not a whole number of {ty} blocks of {block}"
                        ),
                    );
                    false
                }
                Some(_) => true,
                None => false,
            };
            let mask = size_rejecters(ty, dims, divisible);
            if mask != 0 {
                error(
                    self,
                    "tensor-too-large",
                    mask,
                    format!(
                        "{} values of {ty}: the element count or byte size overflows 64 bits",
                        exact_elements(dims)
                    ),
                );
            }
            if info.offset % gguf.alignment != 0 {
                error(
                    self,
                    "tensor-offset-unaligned",
                    S,
                    format!(
                        "data offset {} is not a multiple of the alignment {}",
                        info.offset, gguf.alignment
                    ),
                );
            }
        }
    }

    /// ggml's layout: each tensor exactly where the previous one ends, padded to the
    /// alignment, in tensor-info order; the padded data start inside the file.
    fn ggml_layout(&mut self) {
        let gguf = self.gguf;
        if gguf.tensors.is_empty() {
            return;
        }
        let alignment = ggml_alignment(gguf);
        let start = align_up(gguf.tensor_infos_end, alignment).unwrap_or(u64::MAX);
        if start > self.file_len {
            self.error(
                "data-start-past-eof",
                GGML,
                Some(gguf.tensor_infos_end..start),
                Path::default(),
                format!(
                    "the tensor data starts at {start} (padded to {alignment}), past the end of the file at {}",
                    self.file_len
                ),
            );
        }
        let mut expected = 0u64;
        for (i, tensor) in gguf.tensors.iter().enumerate() {
            let path = Path(vec![
                Segment::Tensor(i as u64),
                Segment::Name(tensor.info.name.to_string()),
                Segment::Field("offset"),
            ]);
            let span = self.span(tensor.info.raw);
            if tensor.info.offset != expected {
                self.error(
                    "tensor-offset-not-sequential",
                    GGML,
                    span,
                    path,
                    format!(
                        "data offset {}: ggml expects {expected}, where the previous tensor ends padded to {alignment}",
                        tensor.info.offset
                    ),
                );
                return;
            }
            // A tensor without a size has been rejected for its type or shape already.
            let Some(n_bytes) = tensor.n_bytes else {
                return;
            };
            match align_up(n_bytes, alignment).and_then(|padded| expected.checked_add(padded)) {
                Some(next) => expected = next,
                None => {
                    self.error(
                        "data-size-overflow",
                        GGML,
                        span,
                        path,
                        "the padded tensor sizes add up past 2^64 bytes".into(),
                    );
                    return;
                }
            }
        }
        // ggml loading the data reads the whole padded section.
        if let Some(end) = start
            .checked_add(expected)
            .filter(|&end| end > self.file_len)
        {
            self.error(
                "data-section-past-eof",
                D,
                Some(start..end),
                Path::default(),
                format!(
                    "the padded tensor data ends at {end}, past the end of the file at {}",
                    self.file_len
                ),
            );
        }
    }

    /// Where the tensors' data lie: inside the file, overlapping, with gaps, trailing bytes.
    fn data_layout(&mut self) {
        let gguf = self.gguf;
        let mut ranges = Vec::with_capacity(gguf.tensors.len());
        for (i, tensor) in gguf.tensors.iter().enumerate() {
            let path = || {
                Path(vec![
                    Segment::Tensor(i as u64),
                    Segment::Name(tensor.info.name.to_string()),
                ])
            };
            let Some(start) = tensor.data_offset else {
                self.error(
                    "tensor-data-past-eof",
                    D | P | S,
                    self.span(tensor.info.raw),
                    path(),
                    "the data offset overflows 64 bits".into(),
                );
                continue;
            };
            let past =
                |n: u128| n > 0 && u128::from(start).saturating_add(n) > u128::from(self.file_len);
            let spec = match tensor.n_bytes {
                Some(n) if past(n.into()) => S,
                _ => 0,
            };
            let py_n_bytes = gguf_py_n_bytes_exact(tensor.info.ggml_type, &tensor.info.dims);
            let py = match py_n_bytes {
                Some(n) if past(n) => P,
                _ => 0,
            };
            if spec | py != 0 {
                let n = tensor.n_bytes.map(u128::from).or(py_n_bytes).unwrap_or(0);
                self.error(
                    "tensor-data-past-eof",
                    spec | py,
                    Some(start..start.saturating_add(n.try_into().unwrap_or(u64::MAX))),
                    path(),
                    format!(
                        "{n} bytes of data at {start} run past the end of the file at {}",
                        self.file_len
                    ),
                );
            }
            if let Some(n) = tensor.n_bytes {
                ranges.push((start, start.saturating_add(n), i));
            }
        }
        // Sweep by start, against the furthest end seen so far (not only the previous
        // tensor's): a tensor inside a long earlier one overlaps it, wherever it sorts.
        ranges.sort_unstable();
        let mut furthest: Option<(u64, usize)> = None;
        for &(b_start, b_end, b) in &ranges {
            let Some((a_end, a)) = furthest else {
                furthest = Some((b_end, b));
                continue;
            };
            let path = Path(vec![
                Segment::Tensor(b as u64),
                Segment::Name(gguf.tensors[b].info.name.to_string()),
            ]);
            if b_start < a_end {
                self.push(
                    "tensor-overlap",
                    0,
                    Severity::Warning,
                    Some(b_start..a_end.min(b_end)),
                    path,
                    format!("data overlaps tensor[{a}]'s"),
                );
            } else if b_start > align_up(a_end, gguf.alignment).unwrap_or(u64::MAX) {
                self.push(
                    "tensor-gap",
                    0,
                    Severity::Note,
                    Some(a_end..b_start),
                    path,
                    format!("{} unused bytes after tensor[{a}]'s data", b_start - a_end),
                );
            }
            if b_end > a_end {
                furthest = Some((b_end, b));
            }
        }
        let end = match ranges.iter().map(|r| r.1).max() {
            Some(end) => align_up(end, gguf.alignment).unwrap_or(u64::MAX),
            None if gguf.tensors.is_empty() => gguf.tensor_data_offset,
            None => return,
        };
        if self.file_len > end {
            self.push(
                "trailing-bytes",
                0,
                Severity::Note,
                Some(end..self.file_len),
                Path::default(),
                format!(
                    "{} bytes after the padded end of the tensor data",
                    self.file_len - end
                ),
            );
        }
    }
}

/// Which references reject a tensor as too large to represent.
fn size_rejecters(ty: GgmlType, dims: &[u64], divisible: bool) -> u8 {
    if dims.iter().any(|&d| d > i64::MAX as u64) {
        return 0; // `dim-too-large` already says so
    }
    let elements = exact_elements(dims);
    let mut mask = 0;
    // ggml, evaluated exactly: INT64_MAX/ne1 <= ne0 || INT64_MAX/ne2 <= ne0*ne1 || ...
    // (ggml computes the products in int64 and misses overflows that wrap to <= 0), then
    // nelements/blck > SIZE_MAX/type_size.
    if dims.len() <= MAX_DIMS && elements > 0 {
        let ne = |i: usize| i128::from(dims.get(i).map_or(1, |&d| d as i64));
        let max = i128::from(i64::MAX);
        // Each ne is below 2^63, so ne0*ne1 fits in i128; the triple product may not, and
        // saturating keeps the comparison exact (it is then far above the bound).
        let elements_overflow = max / ne(1) <= ne(0)
            || max / ne(2) <= ne(0) * ne(1)
            || max / ne(3) <= (ne(0) * ne(1)).saturating_mul(ne(2));
        let bytes_overflow = divisible
            && match (ty.block_size(), ty.type_size()) {
                (Some(block), Some(size)) => {
                    elements / u128::from(block) > u128::from(u64::MAX / size)
                }
                _ => false,
            };
        if elements_overflow || bytes_overflow {
            mask |= GGML;
        }
    }
    // gguf-py: numpy cannot shape an array of more than 2^63 - 1 values.
    if elements > i64::MAX as u128 {
        mask |= P;
    }
    // The spec: the element count and byte size must be representable.
    if elements > u128::from(u64::MAX) || (divisible && ty.n_bytes(dims).is_none()) {
        mask |= S;
    }
    mask
}

/// `a.b_c.d0`: dot-separated, non-empty segments of lowercase ASCII letters, digits and `_`.
/// The first item and how many there are.
fn first_and_count<T>(mut items: impl Iterator<Item = T>) -> (Option<T>, u64) {
    let first = items.next();
    let rest = items.count() as u64;
    let count = if first.is_some() { rest + 1 } else { 0 };
    (first, count)
}

fn is_snake_case_path(key: &str) -> bool {
    key.split('.').all(|segment| {
        !segment.is_empty()
            && segment
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    })
}

/// `uint64`, `array of uint32`, ...
fn type_label(value: Value<'_>) -> String {
    match value {
        Value::Array(a) => format!("array of {}", a.element_type()),
        other => other.value_type().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_syntax() {
        assert!(is_snake_case_path("general.base_model.0.name"));
        assert!(is_snake_case_path("tokenizer.ggml.bos_token_id"));
        for bad in ["", "a..b", ".a", "a.", "General.name", "a-b", "a b"] {
            assert!(!is_snake_case_path(bad), "{bad}");
        }
    }

    #[test]
    fn c_strings_stop_at_nul() {
        assert_eq!(c_str(b"general.alignment\0x"), b"general.alignment");
        assert_eq!(c_str(b"abc"), b"abc");
        assert_eq!(c_str(b""), b"");
    }

    #[test]
    fn every_rejecter_subset_is_in_bit_order() {
        for (mask, refs) in REJECTERS.iter().enumerate() {
            let bits: usize = refs
                .iter()
                .map(|r| match r {
                    Reference::Ggml => 1,
                    Reference::GgmlData => 2,
                    Reference::GgufPy => 4,
                    Reference::Spec => 8,
                })
                .sum();
            assert_eq!(bits, mask);
        }
    }

    #[test]
    fn size_rules_follow_each_reference() {
        // nelements-overflow: ggml's int64 product wraps to 0 and it accepts; exactly, all reject.
        assert_eq!(
            size_rejecters(GgmlType::F32, &[1 << 32, 1 << 32], true),
            ALL
        );
        // nbytes-overflow: 2^62 values fit, 2^64 bytes do not (gguf-py fails on the missing data).
        assert_eq!(
            size_rejecters(GgmlType::F32, &[1 << 31, 1 << 31], true),
            GGML | S
        );
        assert_eq!(size_rejecters(GgmlType::F32, &[4096, 4096], true), 0);
        assert_eq!(size_rejecters(GgmlType::F32, &[0, u64::MAX >> 1], true), 0);
    }
}
