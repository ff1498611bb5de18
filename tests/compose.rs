//! The construct parsers are nom parsers: a parser for an invented container is built here
//! from them and nom's own combinators, and its errors are located by `grammar::finish`.

use gguf_grammar::error::GrammarError;
use gguf_grammar::grammar::file::File;
use gguf_grammar::grammar::{
    file::file, finish, header::header, kv::kv, string::string, tensor_info::tensor_info,
    value::array, Ctx, ParseResult,
};
use gguf_grammar::{Array, Gguf, GgufStr, Value};
use nom::bytes::complete::tag;
use nom::combinator::map;
use nom::error::context;
use nom::multi::{count, length_count, many0, many_m_n};
use nom::number::complete::le_u8;
use nom::sequence::{preceded, tuple};

/// `pack = "PACK" names:(u8 count, v3 strings) model:gguf_header ("T" array)*`, where
/// `gguf_header` is a GGUF file's header, key/values and tensor infos.
#[derive(Debug)]
struct Pack<'a> {
    names: Vec<GgufStr<'a>>,
    model: File<'a>,
    arrays: Vec<Array<'a>>,
}

/// A GGUF header from the crate's three construct parsers: the header's counts decide how
/// many key/values (`count`) and tensor infos (`many_m_n`) follow.
fn gguf_header(input: &[u8]) -> ParseResult<'_, File<'_>> {
    let (rest, header) = header(None)(input)?;
    let (kv_count, tensor_count) = (header.kv_count as usize, header.tensor_count as usize);
    let (rest, kvs) = count(kv(header.ctx), kv_count)(rest)?;
    let (rest, tensor_infos) = many_m_n(tensor_count, tensor_count, tensor_info(header.ctx))(rest)?;
    Ok((
        rest,
        File {
            header,
            kvs,
            tensor_infos,
        },
    ))
}

fn pack(input: &[u8]) -> ParseResult<'_, Pack<'_>> {
    let names = context("names", length_count(le_u8, string(Ctx::V3_LE)));
    let model = context("model", gguf_header);
    let arrays = context("arrays", many0(preceded(tag("T"), array(Ctx::V3_LE))));
    map(
        preceded(tag("PACK"), tuple((names, model, arrays))),
        |(names, model, arrays)| Pack {
            names,
            model,
            arrays,
        },
    )(input)
}

/// The header, key/values and tensor infos of a real file (a 22 KB LLaMA model).
fn model() -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/conformance/cases/llama-8-tokens.gguf"
    );
    let bytes = std::fs::read(path).unwrap();
    let end = Gguf::parse(&bytes).unwrap().tensor_infos_end as usize;
    bytes[..end].to_vec()
}

fn v3_string(s: &[u8]) -> Vec<u8> {
    [&(s.len() as u64).to_le_bytes()[..], s].concat()
}

fn pack_bytes(model: &[u8]) -> Vec<u8> {
    let mut bytes = b"PACK\x02".to_vec();
    bytes.extend(v3_string(b"first"));
    bytes.extend(v3_string(b"second"));
    bytes.extend(model);
    // Two arrays: uint16 [7, 9] and string ["x"].
    bytes.extend(b"T\x02\0\0\0\x02\0\0\0\0\0\0\0\x07\0\x09\0");
    bytes.extend(b"T\x08\0\0\0\x01\0\0\0\0\0\0\0");
    bytes.extend(v3_string(b"x"));
    bytes
}

#[test]
fn a_container_built_from_the_construct_parsers_and_nom_combinators() {
    let model = model();
    let bytes = pack_bytes(&model);
    let (rest, pack) = finish(pack, &bytes).unwrap();
    assert!(rest.is_empty());
    assert_eq!(
        pack.names.iter().map(|s| s.as_bytes()).collect::<Vec<_>>(),
        [&b"first"[..], b"second"]
    );
    // The embedded header, parsed from the parts, is what the crate's file parser reads.
    let (_, whole) = finish(file(None), &model).unwrap();
    assert_eq!(pack.model, whole);
    assert_eq!(pack.model.tensor_infos.len(), 12);
    assert_eq!(
        pack.arrays[0].iter().collect::<Vec<_>>(),
        [Value::U16(7), Value::U16(9)]
    );
    assert_eq!(pack.arrays[1].get(0).and_then(|v| v.as_str()), Some("x"));
}

#[test]
fn its_errors_are_located_from_the_start_of_the_container() {
    let bytes = pack_bytes(&model());
    // Cut inside the second name: "PACK", the count, "first" (8 + 5 bytes), then the second
    // name's length at 18 declares 6 bytes where 3 are left.
    let err = finish(pack, &bytes[..18 + 8 + 3]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "offset 0x12 (18): .names: string length 6 exceeds the 3 bytes left"
    );
    // A bad magic in the embedded GGUF header: at 18 + 8 + 6 = 32.
    let mut bad = bytes.clone();
    bad[32..36].copy_from_slice(b"GGML");
    let err = finish(pack, &bad).unwrap_err();
    assert_eq!(
        err.to_string(),
        "offset 0x20 (32): .model header.magic: expected \"GGUF\", found \"GGML\""
    );
    // Not a pack at all: nom's `tag` fails at the start.
    let err = finish(pack, b"PICK").unwrap_err();
    assert_eq!(err.to_string(), "offset 0x0 (0): Tag");
}

#[test]
fn every_cut_of_the_embedded_header_fails_where_the_file_parser_does() {
    let model = model();
    let bytes = pack_bytes(&model);
    // "PACK", the count and the two names (8 + 5 and 8 + 6 bytes).
    let start = 32;
    assert_eq!(&bytes[start..start + 4], b"GGUF");
    for cut in 0..model.len() {
        let expected = Gguf::parse(&model[..cut]).unwrap_err();
        let err = finish(pack, &bytes[..start + cut]).unwrap_err();
        assert_eq!(err.offset, start as u64 + expected.offset, "cut {cut}");
        assert_eq!(
            std::mem::discriminant(&err.kind),
            std::mem::discriminant(&expected.kind),
            "cut {cut}: {err} / {expected}"
        );
    }
}

#[test]
fn the_error_type_is_nom_s() {
    // Combinators that build errors of their own need `ParseError`; `context` needs
    // `ContextError`: both are implemented by the crate's error type.
    fn is_nom_error<E>()
    where
        E: for<'a> nom::error::ParseError<&'a [u8]> + for<'a> nom::error::ContextError<&'a [u8]>,
    {
    }
    is_nom_error::<GrammarError>();
    // many0 stops at the first element that does not parse, as with any nom parser.
    let (rest, strings) = many0(string(Ctx::V3_LE))(&b"\x01\0\0\0\0\0\0\0a\x05\0"[..]).unwrap();
    assert_eq!((strings.len(), rest.len()), (1, 2));
}
