//! The schema checks report into the same capped sink as the container's.

use gguf_grammar::validate;
use gguf_grammar::write::GgufBuilder;
use gguf_grammar::{GgmlType, Gguf};

#[test]
fn schema_diagnostics_of_one_kind_past_the_cap_are_counted_not_stored() {
    let n = 150u64;
    let llama = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/bundled/minimal-llama.gguf"
    ))
    .unwrap();
    let gguf = Gguf::parse(&llama).unwrap();
    let mut builder = GgufBuilder::from_gguf(&gguf);
    for i in 0..n {
        builder.tensor(format!("extra.{i}.weight"), &[4], GgmlType::F32, &[0; 16]);
    }
    let bytes = builder.build().unwrap();
    let found = gguf_llama::schema::check_model(&Gguf::parse(&bytes).unwrap());
    let unexpected: Vec<_> = found
        .iter()
        .filter(|d| d.code == "schema-tensor-unexpected")
        .collect();
    assert_eq!(
        unexpected.len() as u64,
        validate::MAX_PER_KIND + 1,
        "{found:?}"
    );
    let first = gguf.tensors.len();
    assert_eq!(
        unexpected[0].path.to_string(),
        format!("tensor[{first}] \"extra.0.weight\"")
    );
    assert_eq!(
        unexpected.last().unwrap().message,
        format!("and {} more like the above", n - validate::MAX_PER_KIND)
    );
    assert!(!gguf_llama::schema::accepts_model(&found));
}
