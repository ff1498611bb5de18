//! Validation is correct at the edges: overlaps found wherever the tensors sort, element
//! counts with a zero dim in any position, no arithmetic overflow on any file value (the
//! tests run with overflow checks on: `cargo test` builds the dev profile).

#[path = "support/alloc.rs"]
#[allow(dead_code)]
mod alloc;

use gguf_grammar::validate::{self, Profile};
use gguf_grammar::write::GgufBuilder;
use gguf_grammar::{Ctx, GgmlType, Gguf};

#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

fn codes(bytes: &[u8]) -> Vec<(&'static str, String)> {
    let gguf = Gguf::parse(bytes).unwrap();
    validate::diagnose(&gguf, bytes.len() as u64)
        .into_iter()
        .map(|d| (d.code, d.path.to_string()))
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
