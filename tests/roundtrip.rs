//! `write(parse(bytes)) == bytes` for every file the parser accepts: the real corpus,
//! SmolLM2, and every conformance case that parses; each also written in the other byte
//! order, parsed again and written back in its own.

mod common;

use gguf_grammar::write::{write, GgufBuilder};
use gguf_grammar::{Ctx, Endian, Gguf};

/// The other byte order.
fn flip(endian: Endian) -> Endian {
    match endian {
        Endian::Little => Endian::Big,
        Endian::Big => Endian::Little,
    }
}

/// Checks one accepted file; returns a description of each mismatch.
fn check(bytes: &[u8], gguf: &Gguf<'_>) -> Vec<String> {
    let mut mismatches = Vec::new();
    match write(gguf) {
        Ok(out) if out == bytes => {}
        Ok(out) => mismatches.push(format!(
            "rewrite differs: {}",
            first_difference(&out, bytes)
        )),
        Err(e) => mismatches.push(format!("rewrite failed: {e}")),
    }
    let own = gguf.header.ctx;
    let other = Ctx {
        endian: flip(own.endian),
        ..own
    };
    // Files that lack some tensor data (truncated conformance cases) convert as they are.
    let swapped = match GgufBuilder::from_gguf(gguf)
        .ctx(other)
        .allow_missing_data()
        .build()
    {
        Ok(swapped) => swapped,
        Err(e) => {
            mismatches.push(format!("writing as {other:?} failed: {e}"));
            return mismatches;
        }
    };
    match Gguf::parse(&swapped) {
        Ok(parsed) => {
            if parsed.header.ctx != other || parsed.tensor_data_offset != gguf.tensor_data_offset {
                mismatches.push(format!(
                    "swapped file reads as {:?} with data at {}",
                    parsed.header.ctx, parsed.tensor_data_offset
                ));
            }
            match GgufBuilder::from_gguf(&parsed)
                .ctx(own)
                .allow_missing_data()
                .build()
            {
                Ok(back) if back == bytes => {}
                Ok(back) => mismatches.push(format!(
                    "swapped and back differs: {}",
                    first_difference(&back, bytes)
                )),
                Err(e) => mismatches.push(format!("swapping back failed: {e}")),
            }
        }
        Err(e) => mismatches.push(format!("swapped file does not parse: {e}")),
    }
    mismatches
}

fn first_difference(a: &[u8], b: &[u8]) -> String {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(at) => format!("first at offset {at}"),
        None => format!("lengths {} and {}", a.len(), b.len()),
    }
}

#[test]
fn every_accepted_file_round_trips_in_both_byte_orders() {
    let mut files = common::corpus_files();
    let real = files.len();
    files.extend(common::gguf_files_in("tests/conformance/cases"));
    files.extend(common::smollm2());
    let (mut accepted, mut rejected, mut failures) = (0, 0, Vec::new());
    for (i, path) in files.iter().enumerate() {
        let bytes = std::fs::read(path).unwrap();
        let gguf = match Gguf::parse(&bytes) {
            Ok(gguf) => gguf,
            Err(e) => {
                assert!(i >= real, "real file {} must parse: {e}", path.display());
                rejected += 1;
                continue;
            }
        };
        accepted += 1;
        for mismatch in check(&bytes, &gguf) {
            failures.push(format!("{}: {mismatch}", path.display()));
        }
    }
    eprintln!(
        "round trip: {accepted} accepted files checked in both byte orders, {} mismatches \
         ({rejected} conformance cases rejected by the parser)",
        failures.len()
    );
    assert!(accepted >= real + 60, "only {accepted} files accepted");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// On SmolLM2 when it is fetched; else on `tests/dequant/smollm2-excerpt.gguf` (three of its
/// tensors, byte for byte), which has no template: there the template is added.
#[test]
fn a_changed_header_re_aligns_the_data_and_keeps_every_tensor_byte() {
    let path = common::smollm2()
        .unwrap_or_else(|| common::root().join("tests/dequant/smollm2-excerpt.gguf"));
    let bytes = std::fs::read(path).unwrap();
    let gguf = Gguf::parse(&bytes).unwrap();
    let template = gguf
        .get("tokenizer.chat_template")
        .map_or(Some(""), |v| v.as_str())
        .unwrap();
    let longer = format!("{template}{{# edited #}}");
    let edited = GgufBuilder::from_gguf(&gguf)
        .set("tokenizer.chat_template", longer.as_str())
        .build()
        .unwrap();
    let back = Gguf::parse(&edited).unwrap();
    assert_eq!(back.tensor_data_offset % back.alignment, 0);
    assert_ne!(back.tensor_data_offset, gguf.tensor_data_offset);
    assert_eq!(
        back.get("tokenizer.chat_template").unwrap().as_str(),
        Some(longer.as_str())
    );
    assert_eq!(back.tensors.len(), gguf.tensors.len());
    for (old, new) in gguf.tensors.iter().zip(&back.tensors) {
        assert_eq!(old.info.offset, new.info.offset);
        let span = |t: &gguf_grammar::Tensor<'_>| {
            let start = t.data_offset.unwrap() as usize;
            start..start + t.n_bytes.unwrap() as usize
        };
        assert!(bytes[span(old)] == edited[span(new)], "{:?}", old.info.name);
    }
    assert_eq!(
        &bytes[gguf.tensor_data_offset as usize..],
        &edited[back.tensor_data_offset as usize..]
    );
}
