//! Schema checks: real files (the vocabulary-only corpus, the conformance case `llama-8-tokens`,
//! SmolLM2-135M) and a generator of mutated variants of a small valid LLaMA file, each of which
//! must give exactly its expected diagnostics.

mod common;

use gguf_grammar::summary::{size_label, Hparams};
use gguf_grammar::validate::{Diagnostic, Severity};
use gguf_grammar::write::{GgufBuilder, OwnedValue};
use gguf_grammar::{Ctx, GgmlType, Gguf, ValueType};
use gguf_llama::schema;
use gguf_tools::render::summary;

fn codes(found: &[Diagnostic]) -> Vec<&'static str> {
    found.iter().map(|d| d.code.name()).collect()
}

fn render(found: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in found {
        let span = d
            .span
            .as_ref()
            .map_or_else(|| "-".into(), |s| format!("{}..{}", s.start, s.end));
        out += &format!(
            "{}[{}] {} @{span}: {}\n",
            d.severity.name(),
            d.code,
            d.path,
            d.message
        );
    }
    out
}

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({snapshot_path => "../../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}

/// The llama-family files of the corpus: vocabulary-only, with consistent tokenizers.
#[test]
fn corpus_files_are_vocabulary_only_with_consistent_tokenizers() {
    let mut text = String::new();
    let mut llama = Vec::new();
    for path in common::corpus_files() {
        let bytes = std::fs::read(&path).unwrap();
        let gguf = Gguf::parse(&bytes).unwrap();
        let found = schema::check_model(&gguf);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let hp = Hparams::read(&gguf);
        let known = hp
            .architecture
            .and_then(schema::Architecture::named)
            .is_some();
        let want: &[&str] = if known {
            llama.push(name.clone());
            &["schema-vocab-only"]
        } else {
            &["schema-architecture-unknown", "schema-vocab-only"]
        };
        assert_eq!(codes(&found), want, "{name}:\n{}", render(&found));
        // Consistent tokenizer, checked here independently of the schema code.
        let array_len = |key: &str| gguf.get(key).and_then(|v| v.as_array()).map(|a| a.len());
        let n = array_len("tokenizer.ggml.tokens").unwrap();
        for key in ["tokenizer.ggml.scores", "tokenizer.ggml.token_type"] {
            assert!(array_len(key).is_none_or(|len| len == n), "{name}: {key}");
        }
        assert!(hp.vocab_size.is_none_or(|v| v == n as u64), "{name}");
        text += &format!("== {name}\n{}", render(&found));
    }
    assert_eq!(
        llama,
        [
            "ggml-vocab-aquila.gguf",
            "ggml-vocab-baichuan.gguf",
            "ggml-vocab-bert-bge.gguf",
            "ggml-vocab-deepseek-coder.gguf",
            "ggml-vocab-gpt-2.gguf",
            "ggml-vocab-gpt-neox.gguf",
            "ggml-vocab-llama-bpe.gguf",
            "ggml-vocab-llama-spm.gguf",
            "ggml-vocab-mpt.gguf",
            "ggml-vocab-phi-3.gguf",
            "ggml-vocab-refact.gguf",
            "ggml-vocab-starcoder.gguf",
        ]
    );
    snapshot("schema-corpus", &text);
}

/// The conformance case's 8-token SentencePiece vocabulary has no byte tokens: llama.cpp
/// loads it but throws out of llama_tokenize (tests/llama/verdicts.json: `crash: exception`,
/// `unordered_map::at`), and that is the schema's one finding.
#[test]
fn llama_8_tokens_conformance_case_lacks_only_byte_tokens() {
    let path = common::root().join("tests/conformance/cases/llama-8-tokens.gguf");
    let bytes = std::fs::read(path).unwrap();
    let found = schema::check_model(&Gguf::parse(&bytes).unwrap());
    assert_eq!(codes(&found), ["schema-byte-tokens"], "{}", render(&found));
}

/// SmolLM2-135M: no diagnostics, and a summary that matches its published facts and
/// gguf-py's reading of the file. Read from its recorded header (`common::smollm2_header`,
/// checked against the model when it is fetched): the model checks read only the header.
#[test]
fn smollm2_passes_and_its_summary_matches() {
    let path = common::smollm2_header();
    let file = gguf_grammar::GgufFile::open(path).unwrap();
    let gguf = file.parse().unwrap();
    let found = schema::check_model(&gguf);
    assert!(found.is_empty(), "{}", render(&found));

    let s = gguf.summary();
    let hp = &s.hparams;
    // Published facts (HuggingFaceTB/SmolLM2-135M config.json): 30 layers, 9 heads, 3 kv heads,
    // hidden 576, intermediate 1536, vocabulary 49152, about 135M parameters.
    assert_eq!(hp.architecture, Some("llama"));
    assert_eq!(hp.block_count, Some(30));
    assert_eq!((hp.head_count, hp.head_count_kv), (Some(9), Some(3)));
    assert_eq!(hp.embedding_length, Some(576));
    assert_eq!(hp.feed_forward_length, Some(1536));
    assert_eq!(hp.n_vocab(), Some(49152));
    assert_eq!(hp.context_length, Some(8192));
    // gguf-py 0.19.0 on this file: sum(t.n_elements) = 134515008, sum(t.n_bytes) = 96576768,
    // tensor types Q4_1 x 210, F32 x 61, Q8_0 x 1; general.file_type 3; size_label "135M".
    assert_eq!(s.parameters, Some(134_515_008));
    assert_eq!(size_label(134_515_008), "135M");
    assert_eq!(s.size_label, Some("135M"));
    assert_eq!(s.tensor_bytes, Some(96_576_768));
    assert_eq!(
        s.tensor_types,
        [
            (GgmlType::Q4_1, 210),
            (GgmlType::F32, 61),
            (GgmlType::Q8_0, 1)
        ]
    );
    assert_eq!(s.file_type, Some(3));
    let bpw = s.bits_per_weight().unwrap();
    assert!(
        (bpw - 96_576_768.0 * 8.0 / 134_515_008.0).abs() < 1e-9,
        "{bpw}"
    );

    let mut out = Vec::new();
    summary::write(&gguf, &mut out).unwrap();
    snapshot("schema-smollm2-summary", &String::from_utf8(out).unwrap());
}

/// SmolLM2 with one block fewer declared: the last block's nine tensors are past the end.
/// From its recorded header, the data filled with zeros to the model's size (the schema reads
/// no tensor data; the edit copies it).
#[test]
fn smollm2_with_a_block_count_too_small() {
    let mut whole = std::fs::read(common::smollm2_header()).unwrap();
    whole.resize(common::SMOLLM2_SIZE as usize, 0);
    let gguf = Gguf::parse(&whole).unwrap();
    let mut edit = GgufBuilder::from_gguf(&gguf);
    edit.set("llama.block_count", 29u32);
    let bytes = edit.build().unwrap();
    let found = schema::check_model(&Gguf::parse(&bytes).unwrap());
    assert_eq!(codes(&found), ["schema-tensor-block-index"; 9]);
    assert!(found
        .iter()
        .all(|d| d.path.to_string().contains("\"blk.29.")));
}

// ---- The generator: a small valid LLaMA file and its mutations ----

const N_EMBD: u64 = 32;
const N_FF: u64 = 64;
const N_HEAD: u32 = 4;
const N_HEAD_KV: u32 = 2;
const N_LAYER: u32 = 2;
const HEAD: u64 = N_EMBD / N_HEAD as u64;
const KV: u64 = HEAD * N_HEAD_KV as u64;
const TOKENS: [&str; 8] = ["<unk>", "<s>", "</s>", "a", "b", "c", "ab", "bc"];
/// The eight tokens, then the byte tokens <0x00>..<0xFF> llama.cpp's tokenizer falls back to.
const N_VOCAB: u64 = TOKENS.len() as u64 + 256;

/// Zero bytes for tensor data (the schema never reads it; the container wants it present).
static ZEROS: [u8; 32768] = [0; 32768];

/// Appends a tensor: f32 for vectors, f16 for matrices, with zeroed data.
fn tensor(b: &mut GgufBuilder<'static>, name: &str, dims: &[u64]) {
    let (ty, width) = match dims.len() {
        1 => (GgmlType::F32, 4),
        _ => (GgmlType::F16, 2),
    };
    let n = dims.iter().product::<u64>() * width;
    b.tensor(name, dims, ty, &ZEROS[..n as usize]);
}

/// A valid two-block LLaMA file with GQA (4 heads, 2 kv heads), a SentencePiece vocabulary
/// of eight tokens and the 256 byte tokens, and an untied output matrix.
fn base() -> GgufBuilder<'static> {
    let mut b = GgufBuilder::new(Ctx::V3_LE);
    b.kv("general.architecture", "llama")
        .kv("general.name", "schema-fixture")
        .kv("general.file_type", 1u32)
        .kv("general.quantization_version", 2u32)
        .kv("llama.vocab_size", N_VOCAB as u32)
        .kv("llama.context_length", 128u32)
        .kv("llama.embedding_length", N_EMBD as u32)
        .kv("llama.block_count", N_LAYER)
        .kv("llama.feed_forward_length", N_FF as u32)
        .kv("llama.attention.head_count", N_HEAD)
        .kv("llama.attention.head_count_kv", N_HEAD_KV)
        .kv("llama.rope.dimension_count", HEAD as u32)
        .kv("llama.rope.freq_base", 10000f32)
        .kv("llama.attention.layer_norm_rms_epsilon", 1e-5f32)
        .kv("tokenizer.ggml.model", "llama")
        .kv("tokenizer.ggml.pre", "default")
        .kv(
            "tokenizer.ggml.tokens",
            OwnedValue::array(
                ValueType::String,
                TOKENS
                    .map(String::from)
                    .into_iter()
                    .chain((0..=255u8).map(|b| format!("<0x{b:02X}>"))),
            ),
        )
        .kv(
            "tokenizer.ggml.scores",
            OwnedValue::array(ValueType::F32, (0..N_VOCAB).map(|i| -(i as f32))),
        )
        .kv(
            "tokenizer.ggml.token_type",
            OwnedValue::array(
                ValueType::I32,
                [2i32, 3, 3, 1, 1, 1, 1, 1].into_iter().chain([6; 256]),
            ),
        )
        .kv("tokenizer.ggml.bos_token_id", 1u32)
        .kv("tokenizer.ggml.eos_token_id", 2u32)
        .kv("tokenizer.ggml.unknown_token_id", 0u32)
        .kv("tokenizer.ggml.add_bos_token", true);
    tensor(&mut b, "token_embd.weight", &[N_EMBD, N_VOCAB]);
    tensor(&mut b, "output_norm.weight", &[N_EMBD]);
    tensor(&mut b, "output.weight", &[N_EMBD, N_VOCAB]);
    for i in 0..N_LAYER {
        block(&mut b, i);
    }
    b
}

/// The nine tensors of block `i` of a dense model.
fn block(b: &mut GgufBuilder<'static>, i: u32) {
    let name = |n: &str| format!("blk.{i}.{n}.weight");
    tensor(b, &name("attn_norm"), &[N_EMBD]);
    tensor(b, &name("attn_q"), &[N_EMBD, N_EMBD]);
    tensor(b, &name("attn_k"), &[N_EMBD, KV]);
    tensor(b, &name("attn_v"), &[N_EMBD, KV]);
    tensor(b, &name("attn_output"), &[N_EMBD, N_EMBD]);
    tensor(b, &name("ffn_norm"), &[N_EMBD]);
    tensor(b, &name("ffn_gate"), &[N_EMBD, N_FF]);
    tensor(b, &name("ffn_down"), &[N_FF, N_EMBD]);
    tensor(b, &name("ffn_up"), &[N_EMBD, N_FF]);
}

/// The base turned into a mixture of experts: 4 experts, 2 used per token.
fn moe(b: &mut GgufBuilder<'static>) {
    b.set("llama.expert_count", 4u32)
        .set("llama.expert_used_count", 2u32);
    for i in 0..N_LAYER {
        for n in ["ffn_gate", "ffn_down", "ffn_up"] {
            b.remove_tensor(format!("blk.{i}.{n}.weight"));
        }
        let name = |n: &str| format!("blk.{i}.{n}.weight");
        tensor(b, &name("ffn_gate_inp"), &[N_EMBD, 4]);
        tensor(b, &name("ffn_gate_exps"), &[N_EMBD, N_FF, 4]);
        tensor(b, &name("ffn_down_exps"), &[N_FF, N_EMBD, 4]);
        tensor(b, &name("ffn_up_exps"), &[N_EMBD, N_FF, 4]);
    }
}

fn set_dims(b: &mut GgufBuilder<'static>, name: &str, dims: &[u64]) {
    b.tensor_mut(name).unwrap().dims = dims.to_vec();
}

/// The base declared as architecture `arch`: `general.architecture` and every `llama.` key.
fn rename_arch(b: &mut GgufBuilder<'static>, arch: &str) {
    b.set("general.architecture", arch);
    for kv in &mut b.kvs {
        if let Some(rest) = kv.key.strip_prefix(b"llama.") {
            kv.key = [arch.as_bytes(), b".", rest].concat();
        }
    }
}

type Mutation = fn(&mut GgufBuilder<'static>);

/// Every mutation, with the diagnostics it must give (exactly these, in this order).
const CASES: &[(&str, Mutation, &[&str])] = &[
    // Variants that must stay clean.
    ("unchanged", |_| {}, &[]),
    (
        "tied embeddings (no output.weight)",
        |b| {
            b.remove_tensor("output.weight");
        },
        &[],
    ),
    (
        "counts as u64, i32 and u8 (llama.cpp reads u32)",
        |b| {
            b.set("llama.block_count", 2u64)
                .set("llama.context_length", 128i32)
                .set("tokenizer.ggml.bos_token_id", 1u8);
        },
        &["schema-key-type"; 3],
    ),
    (
        "float64 epsilon (llama.cpp reads f32)",
        |b| {
            b.set("llama.attention.layer_norm_rms_epsilon", 1e-5f64);
        },
        &["schema-key-type"],
    ),
    (
        "shape with a trailing 1",
        |b| {
            set_dims(b, "output_norm.weight", &[N_EMBD, 1]);
        },
        &[],
    ),
    ("mixture of experts", moe, &[]),
    (
        "optional biases and rope_freqs",
        |b| {
            tensor(b, "rope_freqs.weight", &[HEAD / 2]);
            tensor(b, "blk.0.attn_q.bias", &[N_EMBD]);
            tensor(b, "blk.0.attn_k.bias", &[KV]);
        },
        &[],
    ),
    (
        "qwen2 with its biases",
        |b| {
            rename_arch(b, "qwen2");
            for i in 0..N_LAYER {
                tensor(b, &format!("blk.{i}.attn_q.bias"), &[N_EMBD]);
                tensor(b, &format!("blk.{i}.attn_k.bias"), &[KV]);
                tensor(b, &format!("blk.{i}.attn_v.bias"), &[KV]);
            }
        },
        &[],
    ),
    // Keys.
    (
        "missing architecture",
        |b| {
            b.remove("general.architecture");
        },
        &["schema-key-missing"],
    ),
    (
        "unknown architecture",
        |b| {
            b.set("general.architecture", "llama9");
        },
        &["schema-architecture-unsupported"],
    ),
    (
        "an architecture llama.cpp knows, not in the table",
        |b| {
            b.set("general.architecture", "gptj");
        },
        &["schema-architecture-unknown"],
    ),
    (
        "missing feed_forward_length",
        |b| {
            b.remove("llama.feed_forward_length");
        },
        &["schema-key-missing"],
    ),
    (
        "missing tokenizer model",
        |b| {
            b.remove("tokenizer.ggml.model");
        },
        &["schema-key-missing"],
    ),
    (
        "context_length as a string",
        |b| {
            b.set("llama.context_length", "128");
        },
        &["schema-key-type"],
    ),
    (
        "negative block_count",
        |b| {
            b.set("llama.block_count", -2i32);
        },
        &["schema-key-type"],
    ),
    (
        "epsilon as an integer",
        |b| {
            b.set("llama.attention.layer_norm_rms_epsilon", 0u32);
        },
        &["schema-key-type"],
    ),
    (
        "scores as integers",
        |b| {
            b.set(
                "tokenizer.ggml.scores",
                OwnedValue::array(ValueType::I32, [0i32; 8]),
            );
        },
        &["schema-key-type"],
    ),
    (
        "bos id as a float",
        |b| {
            b.set("tokenizer.ggml.bos_token_id", 1f32);
        },
        &["schema-key-type"],
    ),
    // Tokenizer.
    (
        "one score fewer than tokens",
        |b| {
            b.set(
                "tokenizer.ggml.scores",
                OwnedValue::array(ValueType::F32, [0f32; 7]),
            );
        },
        &["schema-token-count"],
    ),
    (
        "one token type more than tokens",
        |b| {
            b.set(
                "tokenizer.ggml.token_type",
                OwnedValue::array(ValueType::I32, [1i32; 9]),
            );
        },
        &["schema-token-count"],
    ),
    (
        "vocab_size differs from the tokens",
        |b| {
            b.set("llama.vocab_size", 9u32);
        },
        &["schema-token-count"],
    ),
    (
        "eos id outside the vocabulary",
        |b| {
            b.set("tokenizer.ggml.eos_token_id", N_VOCAB as u32);
        },
        &["schema-special-token"],
    ),
    (
        "padding id far outside the vocabulary",
        |b| {
            b.set("tokenizer.ggml.padding_token_id", u32::MAX);
        },
        &["schema-special-token"],
    ),
    (
        "token type 7",
        |b| {
            b.set(
                "tokenizer.ggml.token_type",
                OwnedValue::array(
                    ValueType::I32,
                    [2i32, 3, 3, 1, 7, 1, -1, 1].into_iter().chain([6; 256]),
                ),
            );
        },
        &["schema-token-type"],
    ),
    (
        "unknown tokenizer model",
        |b| {
            b.set("tokenizer.ggml.model", "sentencepiece");
        },
        &["schema-tokenizer-model"],
    ),
    (
        "gpt2 tokenizer without merges",
        |b| {
            b.set("tokenizer.ggml.model", "gpt2");
        },
        &["schema-merges-missing"],
    ),
    // General values.
    (
        "removed file type",
        |b| {
            b.set("general.file_type", 5u32);
        },
        &["schema-file-type"],
    ),
    (
        "unknown quantization version",
        |b| {
            b.set("general.quantization_version", 3u32);
        },
        &["schema-quantization-version"],
    ),
    // Hyperparameters.
    (
        "head_count does not divide embedding_length",
        |b| {
            b.set("llama.attention.head_count", 6u32);
        },
        &["schema-head-count"],
    ),
    (
        "head_count 0",
        |b| {
            b.set("llama.attention.head_count", 0u32);
        },
        &["schema-head-count"],
    ),
    (
        "head_count_kv does not divide head_count",
        |b| {
            b.set("llama.attention.head_count_kv", 3u32);
        },
        &["schema-head-count-kv"],
    ),
    (
        "rope dimensions exceed the head size",
        |b| {
            b.set("llama.rope.dimension_count", HEAD as u32 + 2);
        },
        &["schema-rope-dimension"],
    ),
    (
        "more experts used than exist",
        |b| {
            moe(b);
            b.set("llama.expert_used_count", 5u32);
        },
        &["schema-expert-count"],
    ),
    // Tensor layout.
    (
        "no tensors at all",
        |b| {
            b.tensors.clear();
        },
        &["schema-vocab-only"],
    ),
    (
        "ffn_up of block 1 dropped",
        |b| {
            b.remove_tensor("blk.1.ffn_up.weight");
        },
        &["schema-tensor-missing"],
    ),
    (
        "output_norm dropped",
        |b| {
            b.remove_tensor("output_norm.weight");
        },
        &["schema-tensor-missing"],
    ),
    (
        "attn_q with the kv width",
        |b| {
            set_dims(b, "blk.0.attn_q.weight", &[N_EMBD, KV]);
        },
        &["schema-tensor-shape"],
    ),
    (
        "ffn_down transposed",
        |b| {
            set_dims(b, "blk.1.ffn_down.weight", &[N_EMBD, N_FF]);
        },
        &["schema-tensor-shape"],
    ),
    (
        "token_embd with one row fewer than tokens",
        |b| {
            set_dims(b, "token_embd.weight", &[N_EMBD, N_VOCAB - 1]);
        },
        &["schema-tensor-shape"],
    ),
    (
        "a third block beyond block_count",
        |b| {
            tensor(b, "blk.2.attn_norm.weight", &[N_EMBD]);
        },
        &["schema-tensor-block-index"],
    ),
    (
        "block_count one too high",
        |b| {
            b.set("llama.block_count", N_LAYER + 1);
        },
        &["schema-tensor-missing"; 9],
    ),
    (
        "an unexpected fused qkv tensor",
        |b| {
            tensor(b, "blk.0.attn_qkv.weight", &[N_EMBD, 3 * N_EMBD]);
        },
        &["schema-tensor-unexpected"],
    ),
    (
        "a dense ffn tensor in a mixture of experts",
        |b| {
            moe(b);
            tensor(b, "blk.0.ffn_up.weight", &[N_EMBD, N_FF]);
        },
        &["schema-tensor-unexpected"],
    ),
    (
        "qwen2 without its biases",
        |b| {
            rename_arch(b, "qwen2");
        },
        &["schema-tensor-missing"; 6],
    ),
    (
        "granite without its scales",
        |b| {
            rename_arch(b, "granite");
        },
        &["schema-key-missing"; 4],
    ),
    (
        "a hostile block_count",
        |b| {
            b.set("llama.block_count", u32::MAX);
        },
        &["schema-tensor-missing"; 17],
    ),
];

#[test]
fn mutations_give_exactly_their_diagnostics() {
    let mut text = String::new();
    let mut failures = Vec::new();
    for (name, mutate, want) in CASES {
        let mut b = base();
        mutate(&mut b);
        let bytes = b.build().unwrap();
        let gguf = Gguf::parse(&bytes).unwrap();
        let found = schema::check_model(&gguf);
        if codes(&found) != *want {
            failures.push(format!("{name}: want {want:?}, got\n{}", render(&found)));
        }
        // Every schema finding is an error, except the note and the two warnings: the
        // special token (llama.cpp warns "bad special token" and loads) and an architecture
        // the release loads whose schema is not modelled.
        for d in &found {
            let note = d.code == "schema-vocab-only";
            assert_eq!(d.severity == Severity::Note, note, "{name}: {}", d.code);
            let warning = matches!(
                d.code.name(),
                "schema-special-token" | "schema-architecture-unknown"
            );
            assert_eq!(
                d.severity == Severity::Warning,
                warning,
                "{name}: {}",
                d.code
            );
            assert!(d.rejected_by.is_empty());
        }
        text += &format!("== {name}\n{}", render(&found));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let mutated = CASES.iter().filter(|(_, _, want)| !want.is_empty()).count();
    assert!(mutated >= 20, "{mutated} mutations");
    snapshot("schema-mutations", &text);
}

/// The graph constraints of architecture group a, each broken in its tiny model (llama.cpp's
/// verdicts on these files were checked by hand with scripts/llama/loader.cpp: PLM with 2 kv
/// heads aborts in `ggml_reshape` building its graph; chameleon with 8192 tokens aborts in its
/// first decode, `ggml_compute_forward_set`).
#[test]
fn tiny_models_with_a_graph_constraint_broken() {
    let tiny = |arch: &str| gguf_testkit::fixtures::tiny_model(arch).unwrap();
    for arch in ["plm", "chameleon"] {
        let bytes = tiny(arch);
        let found = schema::check_model(&Gguf::parse(&bytes).unwrap());
        assert!(found.is_empty(), "{arch}:\n{}", render(&found));
    }
    let bytes = tiny("plm");
    let mut b = GgufBuilder::from_gguf(&Gguf::parse(&bytes).unwrap());
    b.set("plm.attention.head_count_kv", 2u32);
    let bytes = b.build().unwrap();
    let found = schema::check_model(&Gguf::parse(&bytes).unwrap());
    assert_eq!(
        codes(&found),
        ["schema-head-count-kv"],
        "{}",
        render(&found)
    );

    // Chameleon with its vocabulary cut to 8192 tokens (and its embeddings to match).
    let bytes = tiny("chameleon");
    let gguf = Gguf::parse(&bytes).unwrap();
    let tokens: Vec<String> = gguf
        .get_array("tokenizer.ggml.tokens")
        .unwrap()
        .iter()
        .take(8192)
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    let mut b = GgufBuilder::from_gguf(&gguf);
    b.set(
        "tokenizer.ggml.tokens",
        OwnedValue::array(ValueType::String, tokens.iter().map(String::as_str)),
    );
    b.set(
        "tokenizer.ggml.token_type",
        OwnedValue::array(ValueType::I32, [1i32; 8192]),
    );
    b.tensor_mut("token_embd.weight").unwrap().dims = vec![32, 8192];
    let bytes = b.build().unwrap();
    let found = schema::check_model(&Gguf::parse(&bytes).unwrap());
    assert_eq!(codes(&found), ["schema-token-count"], "{}", render(&found));
    // qwen2vl's M-RoPE sections, as llama.cpp 0.3.16 takes them (verdicts checked by hand with
    // scripts/llama/loader.cpp): one int32 or four int32/uint32, one of the first three
    // positive, adding up to at most the head size (8).
    let bytes = tiny("qwen2vl");
    let gguf = Gguf::parse(&bytes).unwrap();
    let key = "qwen2vl.rope.dimension_sections";
    let i32s = |v: &[i32]| OwnedValue::array(ValueType::I32, v.iter().copied());
    let cases: [(OwnedValue, &[&str]); 7] = [
        (1i32.into(), &[]),
        (OwnedValue::array(ValueType::U32, [2u32, 1, 1, 0]), &[]),
        (1u32.into(), &["schema-key-type"]),
        (i32s(&[2, 1, 1]), &["schema-key-type"]),
        (
            OwnedValue::array(ValueType::I64, [2i64, 1, 1, 0]),
            &["schema-key-type"],
        ),
        (i32s(&[0, 0, 0, 4]), &["schema-rope-dimension"]),
        (i32s(&[8, 8, 8, 0]), &["schema-rope-dimension"]),
    ];
    for (value, want) in cases {
        let mut b = GgufBuilder::from_gguf(&gguf);
        b.set(key, value.clone());
        let bytes = b.build().unwrap();
        let found = schema::check_model(&Gguf::parse(&bytes).unwrap());
        assert_eq!(codes(&found), want, "{value:?}: {}", render(&found));
    }
}

/// The schema and the summary take any parsed file, however broken, without panicking.
#[test]
fn every_conformance_case_is_checked_and_summarised() {
    let cases = common::root().join("tests/conformance/cases");
    let mut checked = 0;
    for entry in std::fs::read_dir(cases).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        if let Ok(gguf) = Gguf::parse(&bytes) {
            schema::check_model(&gguf);
            summary::write(&gguf, &mut Vec::new()).unwrap();
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked}");
}

/// The base file is valid for the container checks too, so the mutations test the schema
/// alone.
#[test]
fn base_passes_the_container_checks() {
    let bytes = base().build().unwrap();
    let gguf = Gguf::parse(&bytes).unwrap();
    let found = gguf_grammar::validate::diagnose(&gguf, bytes.len() as u64);
    let errors: Vec<_> = found
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

fn gguf(args: &[&std::ffi::OsStr]) -> (i32, String) {
    let (code, out, err) = common::outcome(common::gguf_in_root(args));
    assert!(err.is_empty(), "{err}");
    (code, out)
}

/// `gguf check --schema`: exit 0 on a clean file, 1 on a schema error (which the container
/// checks alone accept), one line per diagnostic.
#[test]
fn cli_check_schema() {
    let dir = std::env::temp_dir().join(format!("gguf-schema-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.gguf");
    let bad = dir.join("bad.gguf");
    std::fs::write(&good, base().build().unwrap()).unwrap();
    let mut b = base();
    b.set("llama.attention.head_count_kv", 3u32);
    std::fs::write(&bad, b.build().unwrap()).unwrap();
    let check = |file: &std::path::Path, schema: bool| {
        let mut args = vec!["check".as_ref(), file.as_os_str()];
        if schema {
            args.insert(1, "--schema".as_ref());
        }
        gguf(&args)
    };
    assert_eq!(check(&good, true), (0, String::new()));
    assert_eq!(check(&bad, false), (0, String::new()));
    let (code, out) = check(&bad, true);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        format!(
            "{}:414: error[schema-head-count-kv] kv[10] \"llama.attention.head_count_kv\": head_count_kv 3 does not divide head_count 4\n",
            bad.display()
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cli_dump_summary() {
    let path = common::root().join("tests/conformance/cases/llama-8-tokens.gguf");
    let (code, out) = gguf(&["dump".as_ref(), "--summary".as_ref(), path.as_os_str()]);
    assert_eq!(code, 0);
    snapshot("schema-llama-8-tokens-summary", &out);
}

/// Each profile's JSON names the implementation and version it models; `--profile llama.cpp`
/// is named so, not by the container profile it applies (before: `"profile": "ggml-data"`
/// and no `models`).
#[test]
fn json_names_the_profile_and_the_version_it_models() {
    let file = "tests/conformance/cases/llama-8-tokens.gguf";
    let expect = [
        ("llama.cpp", "llama.cpp", "llama-cpp-python 0.3.36"),
        ("llama.cpp-0.3.16", "llama.cpp-0.3.16", "llama-cpp-python 0.3.16"),
        ("ggml", "ggml", "GGML_TYPE_COUNT 43"),
        ("ggml-data", "ggml-data", "also loading the tensor data"),
        (
            "ggml-0.3.16",
            "ggml-0.3.16",
            "llama-cpp-python 0.3.16: gguf_init_from_file reading metadata only (GGUF_VERSION 3, GGML_TYPE_COUNT 40",
        ),
        (
            "ggml-0.3.16-data",
            "ggml-0.3.16-data",
            "llama-cpp-python 0.3.16: gguf_init_from_file also loading the tensor data",
        ),
        (
            "ggml-0.3.36",
            "ggml-0.3.36",
            "llama-cpp-python 0.3.36: gguf_init_from_file reading metadata only (GGUF_VERSION 3, GGML_TYPE_COUNT 43",
        ),
        (
            "ggml-0.3.36-data",
            "ggml-0.3.36-data",
            "llama-cpp-python 0.3.36: gguf_init_from_file also loading the tensor data",
        ),
        ("gguf-py", "gguf-py", "gguf-py 0.19.0"),
        ("spec", "spec", "GGUF v3"),
        (
            "strict",
            "strict",
            "all of ggml, ggml-data, ggml-0.3.16, ggml-0.3.16-data, ggml-0.3.36, ggml-0.3.36-data, gguf-py and spec",
        ),
    ];
    for (flag, name, models) in expect {
        let out = common::gguf_in_root(&["check", "--json", "--profile", flag, file]);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json[0]["profile"], name, "{flag}");
        let said = json[0]["models"].as_str().unwrap_or("");
        assert!(said.contains(models), "{flag}: {said}");
    }
}

/// Every tiny model of `gguf fixtures --all-archs` passes the schema: among them the encoders'
/// WordPiece and Unigram vocabularies, nomic-bert-moe's experts in block 1 only (a count of
/// required tensors that assumed every block alike found one missing) and T5's `enc.blk.N.` and
/// `dec.blk.N.` blocks with the relative attention bias in block 0 only.
#[test]
fn every_tiny_model_passes_the_schema() {
    let files = gguf_testkit::fixtures::all_archs();
    assert!(files.iter().any(|f| f.name == "tiny-nomic-bert-moe.gguf"));
    assert!(files.iter().any(|f| f.name == "tiny-t5.gguf"));
    for f in files {
        let found = schema::check_model(&Gguf::parse(&f.bytes).unwrap());
        assert!(found.is_empty(), "{}:\n{}", f.name, render(&found));
    }
}

/// llama.cpp keeps its default special ids (WordPiece: bos 101, unknown 100, separator 102,
/// mask 103) for an absent or out-of-range key and reads each with `vector::at` while loading:
/// in a 15-token WordPiece vocabulary that fails (tests/llama/verdicts.json,
/// `tiny-bert.special-token-past-vocab.gguf`: "vector::_M_range_check: __n (which is 101)").
#[test]
fn wordpiece_special_ids_llama_cpp_falls_back_to_must_exist() {
    let bytes = gguf_testkit::fixtures::tiny_model("bert").unwrap();
    let gguf = Gguf::parse(&bytes).unwrap();
    let mut past = GgufBuilder::from_gguf(&gguf);
    past.set("tokenizer.ggml.bos_token_id", 15u32);
    let past = past.build().unwrap();
    let found = schema::check_model(&Gguf::parse(&past).unwrap());
    assert_eq!(
        codes(&found),
        ["schema-special-token", "schema-special-token-default"],
        "{}",
        render(&found)
    );
    let mut absent = GgufBuilder::from_gguf(&gguf);
    absent.remove("tokenizer.ggml.mask_token_id");
    let absent = absent.build().unwrap();
    let found = schema::check_model(&Gguf::parse(&absent).unwrap());
    assert_eq!(
        codes(&found),
        ["schema-special-token-default"],
        "{}",
        render(&found)
    );
    assert!(
        found[0].message.contains("default id 103"),
        "{}",
        render(&found)
    );
    // A Unigram vocabulary has no default bos: the same id past the vocabulary only warns.
    let t5 = gguf_testkit::fixtures::tiny_model("t5").unwrap();
    let mut t5 = GgufBuilder::from_gguf(&Gguf::parse(&t5).unwrap());
    t5.set("tokenizer.ggml.bos_token_id", 14u32);
    let t5 = t5.build().unwrap();
    let found = schema::check_model(&Gguf::parse(&t5).unwrap());
    assert_eq!(
        codes(&found),
        ["schema-special-token"],
        "{}",
        render(&found)
    );
}
