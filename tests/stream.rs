//! The streaming reader: same document as the one-shot parse, and it reads no more than the
//! header plus 64 KiB, however large the file.

mod common;

use std::io::{Read, Seek, SeekFrom, Write};

use gguf_grammar::stream::{read_header, CHUNK};
use gguf_grammar::ReadError;
use gguf_grammar::{Gguf, GgufFile};

/// A reader that counts the bytes it hands out.
struct Counting<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

#[test]
fn same_document_as_the_one_shot_parse() {
    let mut files = common::corpus_files();
    files.extend(common::smollm2());
    for path in files {
        let file = GgufFile::open(&path).unwrap();
        let whole = file.parse().unwrap();
        let mut reader = Counting {
            inner: std::fs::File::open(&path).unwrap(),
            read: 0,
        };
        let owned = read_header(&mut reader, None).unwrap();
        let streamed = owned.gguf();
        let mut expected = whole.clone();
        expected.bytes = streamed.bytes;
        assert_eq!(*streamed, expected, "{}", path.display());
        assert!(
            reader.read <= whole.tensor_infos_end + CHUNK,
            "{}: read {}",
            path.display(),
            reader.read
        );
    }
}

#[test]
fn header_of_a_100_gb_sparse_file() {
    let source =
        std::fs::read(common::root().join("tests/corpus/ggml-vocab-llama-bpe.gguf")).unwrap();
    let header_len = Gguf::parse(&source).unwrap().tensor_infos_end;
    let mut sparse = tempfile();
    sparse.write_all(&source).unwrap();
    sparse.set_len(100 << 30).unwrap();
    sparse.seek(SeekFrom::Start(0)).unwrap();

    let mut reader = Counting {
        inner: sparse,
        read: 0,
    };
    let owned = read_header(&mut reader, None).unwrap();
    let gguf = owned.gguf();
    assert_eq!(gguf.tensor_infos_end, header_len);
    assert!(
        reader.read <= header_len + CHUNK,
        "read {} for a {header_len}-byte header",
        reader.read
    );
    eprintln!("header {header_len} bytes, read {}", reader.read);
}

#[test]
fn truncated_streams_are_located_errors() {
    let source =
        std::fs::read(common::root().join("tests/corpus/ggml-vocab-llama-spm.gguf")).unwrap();
    for cut in [0, 3, 20, 100, 70_000, 500_000, source.len() - 1] {
        match read_header(&source[..cut], None) {
            Err(ReadError::Parse(e)) => {
                assert!(e.kind.bytes_needed().is_some(), "cut {cut}: {e}");
                assert_eq!(Err(e), Gguf::parse(&source[..cut]), "cut {cut}");
            }
            other => panic!("cut {cut}: {other:?}"),
        }
    }
}

/// An anonymous temporary file in the target directory (removed when dropped on Unix).
fn tempfile() -> std::fs::File {
    let dir = common::root().join("target/test-tmp");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("sparse-{}.gguf", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    file
}

#[test]
fn a_hostile_count_reads_no_further_than_the_reader_allows() {
    // kv_count 2^62: the header can never be complete; `take` bounds what is read.
    let mut bytes = b"GGUF\x03\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x40".to_vec();
    bytes.resize(1 << 20, 0);
    let mut reader = Counting {
        inner: &bytes[..],
        read: 0,
    };
    match read_header((&mut reader).take(256 * 1024), None) {
        Err(ReadError::Parse(e)) => assert!(e.kind.bytes_needed().is_some(), "{e}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(reader.read, 256 * 1024);
}
