//! `gguf tensor` as a user meets it. Its values are compared with gguf-py's dequantisation
//! (through numpy.load of `--format npy`) by `scripts/check-dequant.sh`.

mod common;

use gguf_grammar::{write::GgufBuilder, Ctx, GgmlType};

/// Runs the binary under test: (exit code, stdout, stderr).
fn gguf(args: &[&str]) -> (i32, String, String) {
    common::outcome(common::gguf_in_root(args))
}

#[test]
fn rows_formats_and_errors() {
    let values: Vec<u8> = [1.0f32, 2.5, -3.0, 4.0, f32::NAN, f32::NEG_INFINITY]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let ints = [0u8; 8];
    let bytes = GgufBuilder::new(Ctx::V3_LE)
        .tensor("w", &[3, 2], GgmlType::F32, &values)
        .tensor("i\x1b]0;x\x07", &[2], GgmlType::I32, &ints)
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("gguf-tensor-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.gguf");
    std::fs::write(&path, &bytes).unwrap();
    let file = path.to_str().unwrap();

    assert_eq!(
        gguf(&["tensor", file, "w"]),
        (0, "1 2.5 -3\n4 NaN -inf\n".into(), String::new())
    );
    assert_eq!(
        gguf(&["tensor", file, "w", "--rows", "1..2"]).1,
        "4 NaN -inf\n"
    );
    let (_, json, _) = gguf(&["tensor", file, "w", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["shape"], serde_json::json!([2, 3]));
    assert_eq!(
        json["values"],
        serde_json::json!([1.0, 2.5, -3.0, 4.0, "NaN", "-inf"])
    );
    let out = dir.join("row.f32");
    let out_str = out.to_str().unwrap();
    assert_eq!(
        gguf(&["tensor", file, "w", "--rows", "0..1", "--format", "raw", "-o", out_str]).0,
        0
    );
    assert_eq!(std::fs::read(&out).unwrap(), values[..12]);

    // Usage errors: 2; a type that cannot be dequantised: 1, with the name escaped.
    let (code, _, err) = gguf(&["tensor", file, "w", "--rows", "0..3"]);
    assert_eq!(code, 2);
    assert!(err.contains("the tensor has 2 rows"), "{err}");
    assert_eq!(gguf(&["tensor", file, "nope"]).0, 2);
    let (code, _, err) = gguf(&["tensor", file, "i\x1b]0;x\x07"]);
    assert_eq!(code, 1);
    assert!(err.contains("\"i\\e]0;x\\u{7}\" has type i32"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A tensor with no values whose other dims multiply past 2^64: nothing to print, no
/// overflow, no endless loop of empty rows.
#[test]
fn empty_tensor_with_huge_dims() {
    let bytes = GgufBuilder::new(Ctx::V3_LE)
        .tensor("z", &[4, u64::MAX, u64::MAX, 0], GgmlType::F32, &[])
        .build()
        .unwrap();
    let path = std::env::temp_dir().join(format!("gguf-tensor-empty-{}.gguf", std::process::id()));
    let file = path.to_str().unwrap();
    // As built, the file ends before the aligned data start: refused, saying where.
    std::fs::write(&path, &bytes).unwrap();
    let (code, _, err) = gguf(&["tensor", file, "z"]);
    assert_eq!(code, 1);
    let start = gguf_grammar::Gguf::parse(&bytes).unwrap().tensors[0]
        .data_offset
        .unwrap();
    let expected = format!(
        "0 bytes of data at offset {start:#x} ({start}) run past the end of the file ({} bytes)",
        bytes.len()
    );
    assert!(err.contains(&expected), "{err}");
    // Padded to the data start, it is a valid empty tensor.
    let mut padded = bytes.clone();
    padded.resize(start as usize, 0);
    std::fs::write(&path, &padded).unwrap();
    assert_eq!(
        gguf(&["tensor", file, "z"]),
        (0, String::new(), String::new())
    );
    let (code, out, _) = gguf(&["stats", file]);
    assert_eq!(code, 0);
    assert!(out.ends_with("\nz\tf32\t0\t-\t-\t-\t-\t0\t0\n"), "{out}");
    let _ = std::fs::remove_file(path);
}
