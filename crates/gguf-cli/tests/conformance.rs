//! The conformance corpus (`tests/conformance/`): for every case and every profile with a
//! recorded verdict, our accept/reject must equal the reference's (ggml reading metadata only,
//! ggml loading the data, gguf-py 0.19.0, the specification, in `verdicts.json`; the ggml of
//! llama-cpp-python 0.3.16 without and with the data, in `verdicts-llama.cpp-0.3.16.json`, and
//! that of 0.3.36, in `verdicts-llama.cpp-0.3.36.json`),
//! and must be for the reason the reference gives. Where a reference accepts, the figures it
//! reported (version, alignment, data start, tensor offsets, sizes and data hashes, keys and
//! types) must equal ours.
//!
//! A disagreement is allowed only if it is listed in [`DEVIATIONS`] and explained in the
//! "Parity with ggml and gguf-py" section of `tests/conformance/README.md`; a listed deviation
//! that no longer occurs fails the test too. The agreement table is printed (`cargo test --test conformance --
//! --nocapture`).

mod common;

use std::collections::BTreeMap;

use gguf_grammar::validate::{self, gguf_py_n_bytes, Diagnostic, Profile};
use gguf_grammar::{Array, Gguf, Value, ValueType};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

/// Deliberate differences (case, profile), each explained in `tests/conformance/README.md`.
const DEVIATIONS: [(&str, Profile); 3] = [
    // ggml's int64 element count wraps to 0, so its overflow check is skipped and it accepts.
    ("nelements-overflow", Profile::Ggml),
    ("nelements-overflow", Profile::GgmlData),
    // numpy slicing past the end of the map silently returns the 3 bytes that are there.
    ("string-length-past-eof", Profile::GgufPy),
];

/// A reference's first error, by a fragment of its text, and the diagnostic codes of ours that
/// say the same thing (the first matching fragment wins).
type Reasons = &'static [(&'static str, &'static [&'static str])];

/// Where the ggml of llama-cpp-python 0.3.16 words its error otherwise, or crashes instead.
const GGML_0316_REASONS: Reasons = &[
    // No GGUF_MAX_ARRAY_ELEMENTS: it sizes a vector by the declared count, which throws.
    (
        "encountered length_error",
        &["length-past-end", "truncated"],
    ),
    ("encountered bad_alloc", &["length-past-end", "truncated"]),
    ("GGML_ASSERT(!key.empty())", &["empty-key"]),
    (
        "GGML_ASSERT(type_to_gguf_type<T>::value == type)",
        &["alignment-type"],
    ),
    // INT64_MAX divided by a zero dim in its element-count check.
    ("killed by SIGFPE", &["dim-zero-crash"]),
];

const GGML_REASONS: Reasons = &[
    ("failed to read magic", &["truncated"]),
    ("invalid magic characters", &["bad-magic"]),
    ("failed to read header", &["truncated"]),
    // a byte-swapped version: the whole file big endian, or (version-byteswapped) just the
    // version, after which our big-endian reading of the counts runs past the end.
    (
        "is extremely large",
        &["big-endian", "truncated", "length-past-end"],
    ),
    ("GGUFv1 is no longer supported", &["version-1"]),
    ("bad GGUF version", &["unsupported-version"]),
    ("only supports up to version", &["unsupported-version"]),
    (
        "exceeds remaining file size",
        &["length-past-end", "truncated"],
    ),
    (
        "number of key value pairs",
        &["length-past-end", "truncated"],
    ),
    ("number of tensors", &["length-past-end", "truncated"]),
    ("duplicate key", &["duplicate-key"]),
    ("is empty", &["empty-key"]),
    ("invalid GGUF type 9", &["array-nested"]),
    ("invalid GGUF type", &["unknown-value-type"]),
    (
        "failed to read key-value pairs",
        &["truncated", "length-past-end"],
    ),
    ("must be of type u32", &["alignment-type"]),
    (
        "is not a power of 2",
        &["alignment-zero", "alignment-not-power-of-two"],
    ),
    ("is too long", &["tensor-name-too-long"]),
    ("duplicate tensor name", &["duplicate-tensor-name"]),
    ("invalid number of dimensions", &["too-many-dims"]),
    ("invalid number of elements", &["dim-too-large"]),
    ("total number of elements", &["tensor-too-large"]),
    // 0.3.36's wording of the element-count check
    ("may cause overflow errors", &["tensor-too-large"]),
    ("has a size in bytes", &["tensor-too-large"]),
    ("DEPRECATED", &["tensor-type-removed"]),
    ("REMOVED", &["tensor-type-removed"]),
    (
        "not a multiple of block size",
        &["tensor-row-not-block-multiple"],
    ),
    ("invalid ggml type", &["tensor-type-unknown"]),
    (
        "failed to read tensor info",
        &["truncated", "length-past-end"],
    ),
    (
        "failed to seek to beginning of data section",
        &["data-start-past-eof"],
    ),
    ("has offset", &["tensor-offset-not-sequential"]),
    (
        "failed to read tensor data binary blob",
        &["data-section-past-eof"],
    ),
];

const GGUF_PY_REASONS: Reasons = &[
    ("cannot mmap an empty file", &["truncated"]),
    ("GGUF magic invalid", &["bad-magic"]),
    ("version 1 which we cannot handle", &["version-1"]),
    ("which we cannot handle", &["unsupported-version"]),
    ("IndexError", &["truncated", "length-past-end"]),
    (
        "KeyError: 'Duplicate",
        &["duplicate-key", "key-reserved-by-gguf-py"],
    ),
    (
        "UnicodeDecodeError",
        &["key-invalid-utf8", "tensor-name-invalid-utf8"],
    ),
    ("is not a valid GGUFValueType", &["unknown-value-type"]),
    // gguf-py walks a 2^62-element array one element at a time
    ("Timeout", &["length-past-end"]),
    ("Bad type for general.alignment", &["alignment-type"]),
    (
        "Invalid alignment",
        &["alignment-zero", "alignment-not-power-of-two"],
    ),
    ("Found duplicated tensor", &["duplicate-tensor-name"]),
    ("Maximum allowed dimension", &["dim-too-large"]),
    (
        "is not a valid GGMLQuantizationType",
        &[
            "tensor-type-unknown",
            "tensor-type-removed",
            "tensor-type-not-in-gguf-py",
        ],
    ),
    (
        "Quantized tensor row size",
        &["tensor-row-not-block-multiple"],
    ),
    (
        "cannot reshape array",
        &["tensor-data-past-eof", "tensor-too-large"],
    ),
    (
        "When changing to a larger dtype",
        &["truncated", "length-past-end", "tensor-data-past-eof"],
    ),
];

/// A profile, the verdict field it is compared with, and the reasons tables (searched in
/// order).
type References = &'static [(Profile, &'static str, &'static [Reasons])];

/// The references of `verdicts.json`.
const REFERENCES: References = &[
    (Profile::Ggml, "ggml_meta", &[GGML_REASONS]),
    (Profile::GgmlData, "ggml_data", &[GGML_REASONS]),
    (Profile::GgufPy, "gguf_py", &[GGUF_PY_REASONS]),
];

/// The references of `verdicts-llama.cpp-0.3.16.json`.
const REFERENCES_0316: References = &[
    (
        Profile::Ggml0316,
        "ggml_meta",
        &[GGML_0316_REASONS, GGML_REASONS],
    ),
    (
        Profile::Ggml0316Data,
        "ggml_data",
        &[GGML_0316_REASONS, GGML_REASONS],
    ),
];

/// The references of `verdicts-llama.cpp-0.3.36.json`: its ggml words its errors as the ggml
/// of `verdicts.json` does.
const REFERENCES_0336: References = &[
    (Profile::Ggml0336, "ggml_meta", &[GGML_REASONS]),
    (Profile::Ggml0336Data, "ggml_data", &[GGML_REASONS]),
];

/// Our verdict on one case: the diagnostics of a parsed file, or the parse failure.
struct Ours<'a> {
    gguf: Option<Gguf<'a>>,
    diagnostics: Vec<Diagnostic>,
}

impl Ours<'_> {
    fn accepts(&self, profile: Profile) -> bool {
        self.gguf.is_some() && validate::accepts(&self.diagnostics, profile)
    }

    /// The codes of the diagnostics `profile` rejects for.
    fn rejecting_codes(&self, profile: Profile) -> Vec<&'static str> {
        self.diagnostics
            .iter()
            .filter(|d| profile.rejects(d.rejected_by))
            .map(|d| d.code.name())
            .collect()
    }
}

#[derive(Default)]
struct Tally {
    cases: usize,
    equal: usize,
    documented: usize,
}

#[test]
fn verdicts_agree_with_both_references_and_the_spec() {
    agree("verdicts.json", REFERENCES, true);
}

#[test]
fn verdicts_agree_with_the_ggml_of_llama_cpp_python_0_3_16() {
    agree("verdicts-llama.cpp-0.3.16.json", REFERENCES_0316, false);
}

#[test]
fn verdicts_agree_with_the_ggml_of_llama_cpp_python_0_3_36() {
    agree("verdicts-llama.cpp-0.3.36.json", REFERENCES_0336, false);
}

/// Our verdicts against those recorded in `tests/conformance/FILE` by `references` (and the
/// case's spec verdict, with `spec`).
fn agree(file: &str, references: References, spec: bool) {
    let dir = common::root().join("tests/conformance");
    let verdicts: Json = serde_json::from_slice(&std::fs::read(dir.join(file)).unwrap()).unwrap();
    let cases = verdicts["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 108);
    let deviations: Vec<(&str, Profile)> = DEVIATIONS
        .into_iter()
        .filter(|(_, p)| references.iter().any(|r| r.0 == *p) || (spec && *p == Profile::Spec))
        .collect();

    let mut tally: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut seen_deviations = Vec::new();
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let bytes = std::fs::read(dir.join("cases").join(case["file"].as_str().unwrap())).unwrap();
        assert_eq!(bytes.len() as u64, case["size"].as_u64().unwrap(), "{name}");
        assert_eq!(
            hex(&Sha256::digest(&bytes)),
            case["sha256"].as_str().unwrap(),
            "{name}"
        );
        let ours = match Gguf::parse(&bytes) {
            Ok(gguf) => Ours {
                diagnostics: validate::diagnose(&gguf, bytes.len() as u64),
                gguf: Some(gguf),
            },
            Err(err) => Ours {
                gguf: None,
                diagnostics: vec![validate::parse_failure(&err)],
            },
        };
        let show = || {
            ours.diagnostics
                .iter()
                .map(|d| format!("{} [{}]", d.code, names(d.rejected_by)))
                .collect::<Vec<_>>()
                .join(", ")
        };

        let mut compare = |profile: Profile,
                           theirs: bool,
                           reason: Option<&str>,
                           reasons: &[Reasons]| {
            let row = tally.entry(profile.name()).or_default();
            row.cases += 1;
            let mine = ours.accepts(profile);
            let deviation = deviations.contains(&(name, profile));
            if mine == theirs && deviation {
                failures.push(format!(
                    "{name}: listed as a {} deviation but agrees",
                    profile.name()
                ));
            } else if mine != theirs && deviation {
                row.documented += 1;
                seen_deviations.push((name, profile));
            } else if mine != theirs {
                failures.push(format!(
                    "{name}: {} {} it, we {} it ({}); diagnostics: {}",
                    profile.name(),
                    verb(theirs),
                    verb(mine),
                    reason.unwrap_or(""),
                    show()
                ));
            } else {
                row.equal += 1;
                if let (false, Some(reason)) = (theirs, reason) {
                    // Rejected by both: for the same reason.
                    let codes = ours.rejecting_codes(profile);
                    let known = reasons.iter().flat_map(|r| r.iter());
                    match known.clone().find(|(fragment, _)| reason.contains(fragment)) {
                        Some((_, expected)) if codes.iter().any(|c| expected.contains(c)) => {}
                        Some((_, expected)) => failures.push(format!(
                            "{name}: {} rejects with \"{reason}\" (our {expected:?}), we with {codes:?}",
                            profile.name()
                        )),
                        None => failures.push(format!("{name}: no code known for \"{reason}\"")),
                    }
                }
            }
        };

        for &(profile, field, reasons) in references {
            let verdict = &case[field];
            if verdict.is_null() {
                continue;
            }
            let theirs = verdict["ok"].as_bool().unwrap();
            let reason = verdict["reason"].as_str().or(verdict["error"].as_str());
            compare(profile, theirs, reason, reasons);
        }
        match case["spec"].as_str().unwrap() {
            "valid" if spec => compare(Profile::Spec, true, None, &[]),
            "invalid" if spec => compare(Profile::Spec, false, None, &[]),
            _ => {}
        }

        // Where a reference accepts (and we do), its figures are ours.
        if let Some(gguf) = &ours.gguf {
            for &(profile, field, _) in references {
                let figures = match profile {
                    Profile::Ggml
                    | Profile::GgmlData
                    | Profile::Ggml0336
                    | Profile::Ggml0336Data => ggml_figures(gguf),
                    Profile::Ggml0316 | Profile::Ggml0316Data => ggml_0316_figures(gguf),
                    _ => continue,
                };
                if case[field]["ok"] == Json::Bool(true) && ours.accepts(profile) {
                    compare_figures(&mut failures, name, field, &case[field], &figures);
                }
            }
            if case["gguf_py"]["ok"] == Json::Bool(true) {
                let mine = gguf_py_figures(gguf, &bytes);
                compare_figures(&mut failures, name, "gguf_py", &case["gguf_py"], &mine);
            }
        }
    }

    println!("\nprofile           cases  agree  documented  agreement");
    for (profile, row) in &tally {
        let agreement = 100.0 * (row.equal + row.documented) as f64 / row.cases as f64;
        println!(
            "{profile:<16} {:>5}  {:>5}  {:>10}  {agreement:>8.1}%",
            row.cases, row.equal, row.documented
        );
    }
    assert_eq!(seen_deviations.len(), deviations.len(), "{failures:#?}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Every deliberate difference is explained in the parity section of the corpus's README.
#[test]
fn deviations_are_documented_in_the_readme() {
    let readme =
        std::fs::read_to_string(common::root().join("tests/conformance/README.md")).unwrap();
    let section = readme
        .split("## Parity with ggml and gguf-py")
        .nth(1)
        .expect("tests/conformance/README.md has a \"Parity with ggml and gguf-py\" section");
    let section = section.split("\n## ").next().unwrap();
    for (case, _) in DEVIATIONS {
        assert!(
            section.contains(&format!("`{case}`")),
            "tests/conformance/README.md's parity section does not explain {case}"
        );
    }
}

fn verb(accepts: bool) -> &'static str {
    if accepts {
        "accepts"
    } else {
        "rejects"
    }
}

fn names(refs: validate::References) -> String {
    refs.iter().map(|r| r.name()).collect::<Vec<_>>().join(", ")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What ggml reports: with zero tensors its data offset is the end of the key/values,
/// unpadded; with tensors, padded to the alignment.
fn ggml_figures(gguf: &Gguf<'_>) -> Json {
    let data_offset = if gguf.tensors.is_empty() {
        gguf.tensor_infos_end
    } else {
        gguf.tensor_data_offset
    };
    let tensors: Vec<Json> = gguf
        .tensors
        .iter()
        .map(|t| {
            serde_json::json!({
                // the recorder decodes names with Python's "backslashreplace", as `lossy` does
                "name": t.info.name.lossy(),
                "offset": t.info.offset,
                "size": t.n_bytes,
            })
        })
        .collect();
    serde_json::json!({
        "version": gguf.version().number(),
        "alignment": gguf.alignment,
        "data_offset": data_offset,
        "n_kv": gguf.kvs.len(),
        "tensors": tensors,
    })
}

/// What the ggml of llama-cpp-python 0.3.16 reports: the data offset padded even with zero
/// tensors (it seeks there whatever the file's length), and its sizes, which wrap modulo 2^64.
fn ggml_0316_figures(gguf: &Gguf<'_>) -> Json {
    let mut figures = ggml_figures(gguf);
    figures["data_offset"] = gguf.tensor_data_offset.into();
    for (t, figure) in gguf
        .tensors
        .iter()
        .zip(figures["tensors"].as_array_mut().unwrap())
    {
        figure["size"] = validate::ggml_0316_n_bytes(t.info.ggml_type, &t.info.dims).into();
    }
    figures
}

/// What gguf-py reports: the data offset padded even with zero tensors, its own q8_1 size,
/// and the sha256 of each tensor's data as it slices it.
fn gguf_py_figures(gguf: &Gguf<'_>, bytes: &[u8]) -> Json {
    let tensors: Vec<Json> = gguf
        .tensors
        .iter()
        .map(|t| {
            let n_bytes = gguf_py_n_bytes(t.info.ggml_type, &t.info.dims).unwrap();
            let start = t.data_offset.unwrap() as usize;
            let data = &bytes[start..start + n_bytes as usize];
            serde_json::json!({
                "name": t.info.name.to_str().unwrap(),
                "type": t.info.ggml_type.0,
                "shape": t.info.dims,
                "n_elements": gguf_grammar::GgmlType::n_elements(&t.info.dims),
                "offset": t.info.offset,
                "data_offset": t.data_offset,
                "n_bytes": n_bytes,
                "data_sha256": hex(&Sha256::digest(data)),
            })
        })
        .collect();
    let kv: Vec<Json> = gguf
        .kvs
        .iter()
        .map(|kv| serde_json::json!({"key": kv.key.to_str().unwrap(), "type": py_type(kv.value)}))
        .collect();
    serde_json::json!({
        "version": gguf.version().number(),
        "endian": gguf.endian().name(),
        "alignment": gguf.alignment,
        "data_offset": gguf.tensor_data_offset,
        "n_kv": gguf.kvs.len(),
        "tensors": tensors,
        "kv": kv,
    })
}

/// The recorder's type label (`u32`, `arr[str]`, `arr[arr[u32]]`): gguf-py's type chain,
/// which follows the first element of each array.
fn py_type(value: Value<'_>) -> String {
    fn short(t: ValueType) -> &'static str {
        match t {
            ValueType::String => "str",
            ValueType::Array => "arr",
            t => t.short_name(),
        }
    }
    fn array(a: Array<'_>) -> String {
        match a.iter().next() {
            Some(first) => format!("arr[{}]", py_type(first)),
            // An unknown element type is recorded as its number.
            None => match a.element_type().known() {
                Some(ty) => format!("arr[{}]", short(ty)),
                None => format!("arr[{}]", a.element_type().tag()),
            },
        }
    }
    match value {
        Value::Array(a) => array(a),
        scalar => short(scalar.value_type()).to_string(),
    }
}

/// Every field of `mine` must equal the verdict's field of the same name; list fields
/// element by element (the verdict's `kv` entries are compared on the fields we produce).
fn compare_figures(
    failures: &mut Vec<String>,
    case: &str,
    reference: &str,
    theirs: &Json,
    mine: &Json,
) {
    for (field, value) in mine.as_object().unwrap() {
        let expected = &theirs[field];
        let equal = match (value, expected) {
            (Json::Array(a), Json::Array(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(x, y)| x.as_object().unwrap().iter().all(|(k, v)| &y[k] == v))
            }
            _ => value == expected,
        };
        if !equal {
            failures.push(format!(
                "{case}: {reference} {field}: theirs {expected}, ours {value}"
            ));
        }
    }
}

/// ggml, ggml loading the data and gguf-py accept every real file (the profiles are not
/// stricter than the readers on what llama.cpp writes).
#[test]
fn real_files_are_accepted_by_the_reader_profiles() {
    let mut files = common::corpus_files();
    files.extend(common::smollm2());
    for path in files {
        let file = gguf_grammar::GgufFile::open(&path).unwrap();
        let gguf = file.parse().unwrap();
        let found = validate::diagnose(&gguf, file.bytes().len() as u64);
        for profile in [Profile::Ggml, Profile::GgmlData, Profile::GgufPy] {
            let rejecting: Vec<_> = found
                .iter()
                .filter(|d| profile.rejects(d.rejected_by))
                .collect();
            assert!(
                rejecting.is_empty(),
                "{} under {}: {rejecting:#?}",
                path.display(),
                profile.name()
            );
        }
    }
}

/// Runs the `gguf` binary; returns (exit code, stdout).
fn gguf(args: &[&str]) -> (i32, String) {
    let (code, out, _) = common::outcome(common::gguf_in_root(args));
    (code, out)
}

#[test]
fn check_cli_accepts_real_files_and_rejects_with_ggml_s_reasons() {
    let mut files: Vec<String> = common::corpus_files()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    files.extend(common::smollm2().map(|p| p.display().to_string()));
    let mut args = vec!["check", "--profile", "ggml"];
    args.extend(files.iter().map(String::as_str));
    assert_eq!(gguf(&args), (0, String::new()));

    // ggml: "GGUFv1 is no longer supported", "duplicate key", "tensor 'b' has offset 64, expected 32"
    for (case, offset, code) in [
        ("basic-v1-le", 4, "version-1"),
        ("duplicate-key", 48, "duplicate-key"),
        ("tensor-offset-gap", 57, "tensor-offset-not-sequential"),
    ] {
        let path = format!("tests/conformance/cases/{case}.gguf");
        let (status, out) = gguf(&["check", "--profile", "ggml", &path]);
        assert_eq!(status, 1, "{case}: {out}");
        assert!(
            out.starts_with(&format!("{path}:{offset}: error[{code}] ")),
            "{out}"
        );
        assert!(out.contains("(rejected by: ggml, ggml-data"), "{out}");
    }
    // gguf-py takes the gap; a parse failure is a rejection at the error's offset and path.
    assert_eq!(
        gguf(&[
            "check",
            "--profile",
            "gguf-py",
            "tests/conformance/cases/tensor-offset-gap.gguf"
        ])
        .0,
        0
    );
    let (status, out) = gguf(&["check", "tests/conformance/cases/truncated-in-key.gguf"]);
    assert_eq!(status, 1);
    assert!(
        out.contains(":24: error[length-past-end] kv[0].key: "),
        "{out}"
    );
    assert_eq!(gguf(&["check", "tests/conformance/no-such-file.gguf"]).0, 2);
}

#[test]
fn check_cli_json_lists_each_file_with_its_verdict() {
    let (status, out) = gguf(&[
        "check",
        "--profile",
        "spec",
        "--json",
        "tests/conformance/cases/key-non-ascii.gguf",
        "tests/conformance/cases/kv-only.gguf",
    ]);
    assert_eq!(status, 1);
    let doc: Json = serde_json::from_str(&out).unwrap();
    assert_eq!(doc[0]["accepted"], Json::Bool(false));
    assert_eq!(doc[0]["diagnostics"][0]["code"], "key-not-ascii");
    assert_eq!(doc[0]["diagnostics"][0]["path"], "kv[0] \"test.clé\"");
    assert_eq!(
        doc[0]["diagnostics"][0]["rejected_by"],
        serde_json::json!(["spec"])
    );
    assert_eq!(doc[1]["accepted"], Json::Bool(true));
    assert_eq!(doc[1]["diagnostics"], serde_json::json!([]));
}
