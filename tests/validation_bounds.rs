//! Validation is correct at the edges: overlaps found wherever the tensors sort, element
//! counts with a zero dim in any position, no arithmetic overflow on any file value (the
//! tests run with overflow checks on: `cargo test` builds the dev profile).

mod common;
use common::alloc;

use gguf_grammar::validate::{self, Profile};
use gguf_grammar::write::GgufBuilder;
use gguf_grammar::{Ctx, GgmlType, Gguf};

#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

fn codes(bytes: &[u8]) -> Vec<(&'static str, String)> {
    let gguf = Gguf::parse(bytes).unwrap();
    validate::diagnose(&gguf, bytes.len() as u64)
        .into_iter()
        .map(|d| (d.code.name(), d.path.to_string()))
        .collect()
}

// Item 14.
#[test]
fn an_overlap_with_a_non_adjacent_tensor_is_found_and_not_called_a_gap() {
    let data = [0u8; 4096];
    let bytes = GgufBuilder::new(Ctx::V3_LE)
        .tensor_at("long", &[1024], GgmlType::F32, 0, &data)
        .tensor_at("inside", &[16], GgmlType::F32, 64, &[])
        .tensor_at("later-inside", &[16], GgmlType::F32, 256, &[])
        .build()
        .unwrap();
    let found = codes(&bytes);
    let overlaps: Vec<_> = found
        .iter()
        .filter(|(code, _)| *code == "tensor-overlap")
        .map(|(_, path)| path.as_str())
        .collect();
    assert_eq!(
        overlaps,
        ["tensor[1] \"inside\"", "tensor[2] \"later-inside\""],
        "{found:?}"
    );
    assert!(
        !found.iter().any(|(code, _)| *code == "tensor-gap"),
        "{found:?}"
    );
}

// Item 15.
#[test]
fn a_zero_dim_makes_the_count_zero_in_any_position() {
    let huge = 1u64 << 62;
    let verdicts: Vec<Vec<bool>> = [[huge, huge, huge, 0], [0, huge, huge, huge]]
        .iter()
        .map(|dims| {
            let bytes = GgufBuilder::new(Ctx::V3_LE)
                .tensor_at("t", dims, GgmlType::F32, 0, &[])
                .build()
                .unwrap();
            let gguf = Gguf::parse(&bytes).unwrap();
            let summary = gguf_grammar::summary::Summary::of(&gguf);
            assert_eq!(summary.parameters, Some(0), "{dims:?}");
            [Profile::Spec, Profile::GgufPy, Profile::Ggml]
                .iter()
                .map(|&profile| {
                    let found = validate::check(&gguf, bytes.len() as u64, profile);
                    validate::accepts(&found, profile)
                })
                .collect()
        })
        .collect();
    assert_eq!(verdicts[0], verdicts[1]);
    assert_eq!(
        verdicts[0][..2],
        [true, true],
        "spec and gguf-py accept zero elements"
    );
}

// Item 15: the largest counts every check meets, without an overflow (a panic here).
#[test]
fn the_largest_dims_are_diagnosed_without_overflow() {
    let max = u64::MAX;
    for dims in [
        [1u64 << 62; 4],
        [max; 4],
        [max, max, max, 1],
        [1, 1, 1, max],
    ] {
        for ty in [GgmlType::F32, GgmlType::Q4_0, GgmlType(9999)] {
            let bytes = GgufBuilder::new(Ctx::V3_LE)
                .tensor_at("t", &dims, ty, max - 1, &[])
                .build()
                .unwrap();
            let found = codes(&bytes);
            assert!(!found.is_empty(), "{dims:?} {ty:?}");
        }
    }
}

// Item 12.
#[test]
fn diagnostics_of_one_kind_past_the_cap_are_counted_not_stored() {
    let n = 300_000u64;
    let mut builder = GgufBuilder::new(Ctx::V3_LE);
    for _ in 0..n {
        builder.kv("", true);
    }
    let bytes = builder.build().unwrap();
    let gguf = Gguf::parse(&bytes).unwrap();
    let (found, peak) = alloc::peak_during(|| validate::diagnose(&gguf, bytes.len() as u64));
    let empty: Vec<_> = found.iter().filter(|d| d.code == "empty-key").collect();
    assert_eq!(empty.len() as u64, validate::MAX_PER_KIND + 1, "{found:?}");
    let more = empty.last().unwrap();
    assert_eq!(
        more.message,
        format!("and {} more like the above", n - validate::MAX_PER_KIND)
    );
    assert_eq!(more.rejected_by, empty[0].rejected_by);
    assert!(peak < 4 << 20, "{peak} bytes to diagnose {n} keys");
    // The count keeps its kind: a profile rejects for it as for the ones kept.
    assert!(!validate::accepts(&found, Profile::Strict));
}

// Item 16: gguf-py reads an empty array without looking at its element type; ggml rejects the
// type. The bytes are the conformance case `array-elem-type-13` with its count set to 0 (checked
// by hand against gguf-py 0.19.0, which reads it, and llama.cpp's gguf_init_from_file, which
// says "key 'test.k' has invalid GGUF type 13"; `scripts/check-mutations.sh` runs gguf-py on
// the `gguf mutate` rule `empty-array-type-13` in CI).
fn kv_array(element_tag: u32, count: u64, elements: &[u8]) -> Vec<u8> {
    let mut bytes = b"GGUF\x03\0\0\0".to_vec();
    bytes.extend(0u64.to_le_bytes()); // tensors
    bytes.extend(1u64.to_le_bytes()); // kvs
    bytes.extend(6u64.to_le_bytes());
    bytes.extend(b"test.k");
    bytes.extend(9u32.to_le_bytes()); // array
    bytes.extend(element_tag.to_le_bytes());
    bytes.extend(count.to_le_bytes());
    bytes.extend(elements);
    bytes.resize(64, 0); // padding to the data start at 32-byte alignment
    bytes
}

#[test]
fn an_empty_array_of_an_unknown_element_type_parses_and_only_ggml_rejects_it() {
    use gguf_grammar::{ElementType, ErrorKind};
    let bytes = kv_array(13, 0, &[]);
    let gguf = Gguf::parse(&bytes).unwrap();
    let array = gguf.get("test.k").unwrap().as_array().unwrap();
    assert_eq!(array.element_type(), ElementType::Unknown(13));
    assert_eq!(
        (array.len(), array.iter().count(), array.get(0)),
        (0, 0, None)
    );
    // Lossless: the unknown tag is written back as it was.
    assert_eq!(gguf_grammar::write::write(&gguf).unwrap(), bytes);

    let accepted = |profile| validate::check(&gguf, bytes.len() as u64, profile).is_empty();
    assert!(accepted(Profile::GgufPy));
    for profile in [Profile::Ggml, Profile::Spec] {
        let found = validate::check(&gguf, bytes.len() as u64, profile);
        let codes: Vec<_> = found
            .iter()
            .map(|d| (d.code.name(), d.path.to_string()))
            .collect();
        assert_eq!(
            codes,
            [("array-type-unknown", r#"kv[0] "test.k".value"#.to_string())],
            "{profile:?}"
        );
    }

    // With one element the type must be decoded: still a parse error, at the element type.
    let e = Gguf::parse(&kv_array(13, 1, &[0; 8])).unwrap_err();
    assert_eq!(
        (e.kind, e.offset),
        (ErrorKind::UnknownValueType { tag: 13 }, 0x2a)
    );
}

// Item 12, second half: an edit keeps an unchanged array as its bytes, not as one owned value
// per element (32 bytes each: a 10 MB u8 array took 335 MB).
#[test]
fn rebuilding_a_file_with_a_10_mb_array_costs_its_bytes_not_a_value_per_byte() {
    use gguf_grammar::write::OwnedValue;
    use gguf_grammar::{Endian, Value, ValueType};
    let n = 10 << 20;
    let elements: Vec<u8> = (0..n).map(|i| i as u8).collect();
    let bytes = GgufBuilder::new(Ctx::V3_LE)
        .kv("big", OwnedValue::array(ValueType::U8, elements))
        .kv("general.name", "before")
        .build()
        .unwrap();
    let gguf = Gguf::parse(&bytes).unwrap();
    let (written, peak) = alloc::peak_during(|| {
        GgufBuilder::from_gguf(&gguf)
            .set("general.name", "after")
            .build()
            .unwrap()
    });
    // The copy of the array, the output and the output's growth: 42 MB measured (363 MB
    // when each byte became an owned value).
    assert!(peak < 5 * n, "{peak} bytes to rebuild a {n}-byte array");
    let edited = Gguf::parse(&written).unwrap();
    assert_eq!(
        edited.get("general.name").and_then(|v| v.as_str()),
        Some("after")
    );
    let big = edited.get_array("big").unwrap();
    assert_eq!(
        big.raw_elements(),
        gguf.get_array("big").unwrap().raw_elements()
    );

    // Another byte order re-encodes the elements (u16 here, so the bytes differ).
    let words = GgufBuilder::new(Ctx::V3_LE)
        .kv("w", OwnedValue::array(ValueType::U16, [1u16, 0x0203]))
        .build()
        .unwrap();
    let big_endian = GgufBuilder::from_gguf(&Gguf::parse(&words).unwrap())
        .endian(Endian::Big)
        .build()
        .unwrap();
    let w = Gguf::parse(&big_endian).unwrap().get_array("w").unwrap();
    assert_eq!(w.raw_elements(), [0, 1, 2, 3]);
    assert_eq!(
        w.iter().collect::<Vec<_>>(),
        [Value::U16(1), Value::U16(0x0203)]
    );
}
