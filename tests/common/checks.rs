//! The properties the fuzz targets and the tests check; each panics when one fails.
//!
//! - [`raw`]: any bytes. Parsing never panics; an accepted file is written back byte for
//!   byte (with its detected byte order and forced to the other one), and the bulk element
//!   readers of its arrays agree with `Array::iter` ([`fast_paths_agree`]).
//! - [`chunked`]: the streaming reader fed in arbitrary chunks agrees with the one-shot parse.
//! - [`built`]: a document generated from the bytes is written, parsed back equal, rewritten
//!   byte for byte, converted to another version and byte order and back, and every prefix
//!   of its header is a truncation error at an offset inside the prefix.

use std::io::Read;

use arbitrary::Unstructured;
use gguf_grammar::write::{write, GgufBuilder, OwnedValue};
use gguf_grammar::{stream, Array, Endian, Gguf, Value, ValueType};

use super::generate;

/// Any bytes: no panic; accepted files round-trip exactly.
pub fn raw(data: &[u8]) {
    for endian in [None, Some(Endian::Little), Some(Endian::Big)] {
        let Ok(gguf) = Gguf::parse_with(data, endian) else {
            continue;
        };
        let out = write(&gguf).unwrap_or_else(|e| panic!("accepted file not written: {e}"));
        assert!(out == data, "{}", differs(&out, data));
        for kv in &gguf.kvs {
            if let Value::Array(array) = kv.value {
                fast_paths_agree(array);
            }
        }
    }
}

/// The bulk element readers (gguf_grammar::elements) see what `Array::iter` sees.
pub fn fast_paths_agree(array: Array<'_>) {
    let values: Vec<Value<'_>> = array.iter().collect();
    assert_eq!(values.len(), array.len());
    let Some(element_type) = array.element_type().known() else {
        assert!(
            array.is_empty(),
            "only an empty array has an unknown element type"
        );
        return;
    };
    match element_type {
        ValueType::String => {
            let strings: Vec<_> = values.iter().map(|v| v.as_gguf_str().unwrap()).collect();
            assert_eq!(array.strings().unwrap().collect::<Vec<_>>(), strings);
            let index = array.string_index().unwrap();
            assert_eq!(index.len(), strings.len());
            for (i, s) in strings.iter().enumerate() {
                assert_eq!(index.get(i), Some(*s));
            }
            let checked: Vec<_> = array.strs().unwrap().collect();
            let mut invalid = Vec::new();
            for (i, (c, s)) in checked.iter().zip(&strings).enumerate() {
                match (c, std::str::from_utf8(s.as_bytes())) {
                    (Ok(text), Ok(expected)) => assert_eq!(*text, expected),
                    (Err(e), Err(expected)) => {
                        assert_eq!(
                            (e.index, e.bytes(array), e.valid_up_to),
                            (i as u64, *s, expected.valid_up_to())
                        );
                        invalid.push(*e);
                    }
                    (got, _) => panic!("[{i}] {s:?}: strs gave {got:?}"),
                }
            }
            assert_eq!(checked.len(), strings.len());
            assert_eq!(array.strs().unwrap().invalid().collect::<Vec<_>>(), invalid);
        }
        ValueType::F32 => {
            let decoded = array.to_vec::<f32>().unwrap();
            let bits: Vec<u32> = decoded.iter().map(|v| v.to_bits()).collect();
            let expected: Vec<u32> = values
                .iter()
                .map(|v| match v {
                    Value::F32(f) => f.to_bits(),
                    other => panic!("{other:?} in an f32 array"),
                })
                .collect();
            assert_eq!(bits, expected);
        }
        ValueType::U32 => {
            let expected: Vec<Value<'_>> =
                array.numbers::<u32>().unwrap().map(Value::U32).collect();
            assert_eq!(expected, values);
        }
        ValueType::I32 => {
            let expected: Vec<Value<'_>> = array
                .to_vec::<i32>()
                .unwrap()
                .into_iter()
                .map(Value::I32)
                .collect();
            assert_eq!(expected, values);
        }
        ValueType::Array => values
            .iter()
            .for_each(|v| fast_paths_agree(v.as_array().unwrap())),
        _ => {}
    }
}

/// The first byte seeds the chunk sizes; the rest is the file.
pub fn chunked(data: &[u8]) {
    let Some((&seed, file)) = data.split_first() else {
        return;
    };
    let reader = Chunks {
        rest: file,
        seed: u32::from(seed) | 1,
    };
    let streamed = stream::read_header(reader, None);
    let streamed = streamed.as_ref().map(|owned| owned.gguf());
    match (Gguf::parse(file), streamed) {
        (Ok(one), Ok(streamed)) => {
            assert_eq!(one.header, streamed.header);
            // Compared by their bytes: a NaN value is not equal to itself.
            let raw = |g: &Gguf<'_>| g.kvs.iter().map(|kv| kv.raw.to_vec()).collect::<Vec<_>>();
            assert_eq!(raw(&one), raw(streamed));
            assert_eq!(one.tensors, streamed.tensors);
            assert_eq!(
                (one.alignment, one.tensor_infos_end, one.tensor_data_offset),
                (
                    streamed.alignment,
                    streamed.tensor_infos_end,
                    streamed.tensor_data_offset
                )
            );
        }
        (Err(one), Err(gguf_grammar::ReadError::Parse(streamed))) => assert_eq!(&one, streamed),
        (one, streamed) => panic!(
            "one-shot {:?}, streamed {:?}",
            one.map(|_| ()),
            streamed.map(|_| ())
        ),
    }
}

/// A reader that hands out its bytes in pseudo-random chunks of 1 to 300 bytes.
struct Chunks<'a> {
    rest: &'a [u8],
    seed: u32,
}

impl Read for Chunks<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // xorshift32: the chunk sizes vary with the seed byte.
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 17;
        self.seed ^= self.seed << 5;
        let n = (1 + self.seed as usize % 300)
            .min(buf.len())
            .min(self.rest.len());
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}

/// A generated document survives writing, parsing, rewriting and conversion.
pub fn built(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(builder) = generate::document(&mut u) else {
        return;
    };
    let bytes = builder
        .build()
        .unwrap_or_else(|e| panic!("generated document not written: {e}"));
    let gguf = Gguf::parse(&bytes).unwrap_or_else(|e| panic!("written file rejected: {e}"));
    same_document(&builder, &gguf, &bytes);
    let rewritten = write(&gguf).unwrap();
    assert!(
        rewritten == bytes,
        "rewrite {}",
        differs(&rewritten, &bytes)
    );

    // Another version and byte order, and back. A dim past u32 has no v1 encoding.
    if let Ok(ctx) = generate::ctx(&mut u) {
        let mut convert = GgufBuilder::from_gguf(&gguf);
        // A file that lacks tensor data converts as it is (what is missing stays missing).
        convert.ctx(ctx).allow_missing_data();
        if let Ok(converted) = convert.build() {
            let other = Gguf::parse(&converted).unwrap_or_else(|e| panic!("{ctx:?}: {e}"));
            assert_eq!(other.header.ctx, ctx);
            let back = GgufBuilder::from_gguf(&other)
                .ctx(builder.ctx)
                .allow_missing_data()
                .build()
                .unwrap();
            // The builder pads with zeros, so even a re-aligned data start comes back exact.
            assert!(back == bytes, "converted back {}", differs(&back, &bytes));
        }
    }

    prefixes(&bytes, gguf.tensor_infos_end);
}

/// Every prefix shorter than the header is a truncation error located inside the prefix
/// whose "bytes needed" does not overshoot the header; the header itself parses. Headers over
/// 256 bytes are cut at about 256 places spread over every residue of the stride.
pub fn prefixes(bytes: &[u8], header_len: u64) {
    let header = usize::try_from(header_len).unwrap().min(bytes.len());
    let step = header / 256 + 1;
    let cuts = (0..header.div_ceil(step)).map(|i| (i * step + i % step).min(header - 1));
    for len in cuts.chain([header]) {
        let result = Gguf::parse(&bytes[..len]);
        if len as u64 >= header_len {
            assert!(result.is_ok(), "prefix of {len} bytes: {:?}", result.err());
            continue;
        }
        let err = match result {
            Ok(_) => panic!("prefix of {len} bytes of a {header_len}-byte header parsed"),
            Err(err) => err,
        };
        let needed = err
            .kind
            .bytes_needed()
            .unwrap_or_else(|| panic!("prefix of {len} bytes: not a truncation error: {err}"));
        assert!(err.offset <= len as u64, "prefix of {len} bytes: {err}");
        assert!(
            needed >= 1 && len as u64 + needed <= header_len,
            "prefix of {len} bytes of a {header_len}-byte header: needs {needed}: {err}"
        );
    }
}

/// The parsed document holds what the builder put in.
fn same_document(builder: &GgufBuilder<'_>, gguf: &Gguf<'_>, bytes: &[u8]) {
    assert_eq!(gguf.header.ctx, builder.ctx);
    assert_eq!(gguf.alignment, builder.layout_alignment());
    assert_eq!(gguf.kvs.len(), builder.kvs.len());
    for (parsed, made) in gguf.kvs.iter().zip(&builder.kvs) {
        assert_eq!(parsed.key.as_bytes(), &made.key[..]);
        let parsed_value = OwnedValue::from(parsed.value);
        assert!(
            same_value(&parsed_value, &made.value),
            "{parsed_value:?} != {:?}",
            made.value
        );
    }
    assert_eq!(gguf.tensors.len(), builder.tensors.len());
    for (parsed, made) in gguf.tensors.iter().zip(&builder.tensors) {
        assert_eq!(parsed.info.name.as_bytes(), &made.name[..]);
        assert_eq!(parsed.info.dims, made.dims);
        assert_eq!(parsed.info.ggml_type, made.ggml_type);
        match made.offset {
            Some(offset) => assert_eq!(parsed.info.offset, offset),
            None => assert_eq!(parsed.info.offset % gguf.alignment, 0),
        }
        if !made.data.is_empty() {
            let start = parsed.data_offset.unwrap() as usize;
            assert!(bytes[start..start + made.data.len()] == made.data[..]);
        }
    }
}

/// Equality with floats compared by their bits (NaN payloads included).
pub fn same_value(a: &OwnedValue, b: &OwnedValue) -> bool {
    match (a, b) {
        (OwnedValue::F32(x), OwnedValue::F32(y)) => x.to_bits() == y.to_bits(),
        (OwnedValue::F64(x), OwnedValue::F64(y)) => x.to_bits() == y.to_bits(),
        (OwnedValue::Array(x), OwnedValue::Array(y)) => {
            x.element_type == y.element_type
                && x.elements.len() == y.elements.len()
                && x.elements
                    .iter()
                    .zip(&y.elements)
                    .all(|(x, y)| same_value(x, y))
        }
        _ => a == b,
    }
}

fn differs(a: &[u8], b: &[u8]) -> String {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(at) => format!("differs first at offset {at}"),
        None => format!("differs in length: {} and {}", a.len(), b.len()),
    }
}
