//! The names of `schema::llama_cpp` against the llama.cpp source of each release, read from
//! the cache `scripts/build-llama-tools.sh` fills (skipped without it, unless
//! `GGUF_REQUIRE_LLAMA=1`).

use std::collections::BTreeSet;
use std::path::PathBuf;

use gguf_llama::schema::{
    loads_architecture, pre_tokenizer, tokenizer_models, LLAMA_CPP_ARCHITECTURES,
    MMPROJ_ARCHITECTURE, PRE_TOKENIZERS,
};
use gguf_llama::Release;

fn source(release: Release) -> Option<PathBuf> {
    let home = std::env::var_os("HOME").unwrap_or_default();
    let dir = PathBuf::from(home).join(format!(
        ".cache/gguf-grammar/llama.cpp-{}/src/src",
        release.version()
    ));
    if dir.join("llama-arch.cpp").is_file() {
        return Some(dir);
    }
    if std::env::var("GGUF_REQUIRE_LLAMA").as_deref() == Ok("1") {
        panic!("llama.cpp source not found at {}", dir.display());
    }
    eprintln!(
        "\n!!! SKIPPED: llama.cpp source not found at {}; run scripts/build-llama-tools.sh !!!\n",
        dir.display()
    );
    None
}

/// The quoted names in `text` after each `marker`.
fn quoted_after(text: &str, marker: &str) -> BTreeSet<String> {
    text.match_indices(marker)
        .filter_map(|(at, _)| {
            let rest = &text[at + marker.len()..];
            let rest = rest.trim_start().strip_prefix('"')?;
            Some(rest[..rest.find('"')?].to_string())
        })
        .collect()
}

#[test]
fn names_are_those_of_each_release_s_source() {
    for &release in Release::ALL {
        let Some(dir) = source(release) else { return };
        let arch = std::fs::read_to_string(dir.join("llama-arch.cpp")).unwrap();
        let names = &arch[arch.find("LLM_ARCH_NAMES").unwrap()..];
        let names = &names[..names.find("};").unwrap()];
        let mut expected = quoted_after(names, ",");
        expected.remove("(unknown)");
        let (clip, clip_releases) = MMPROJ_ARCHITECTURE;
        assert_eq!(expected.remove(clip), clip_releases.contains(release));
        let ours: BTreeSet<String> = LLAMA_CPP_ARCHITECTURES
            .iter()
            .map(|(name, _)| name.to_string())
            .filter(|name| loads_architecture(release, name))
            .collect();
        assert_eq!(ours, expected, "architectures of {}", release.name());

        let vocab = std::fs::read_to_string(dir.join("llama-vocab.cpp")).unwrap();
        let load = &vocab[vocab.find("void llama_vocab::impl::load").unwrap()..];
        let pres = &load[..load.find("unknown pre-tokenizer type").unwrap()];
        let ours: BTreeSet<String> = PRE_TOKENIZERS
            .iter()
            .filter(|p| pre_tokenizer(release, p.name) == Some(p))
            .map(|p| p.name.to_string())
            .collect();
        assert_eq!(
            ours,
            quoted_after(pres, "tokenizer_pre =="),
            "pre-tokenizers of {}",
            release.name()
        );

        let models = &load[..load.find("unknown tokenizer:").unwrap()];
        let ours: BTreeSet<String> = tokenizer_models(release).map(String::from).collect();
        assert_eq!(
            ours,
            quoted_after(models, "tokenizer_model =="),
            "tokenizer models of {}",
            release.name()
        );
    }
}

/// Each entry of the architecture table describes only releases whose loader knows the name
/// (an entry for an architecture new in 0.3.36 names that release and the later ones), and
/// every architecture the table models has an entry in each release that loads it.
#[test]
fn table_entries_name_releases_that_load_them() {
    use gguf_llama::schema::{Architecture, ARCHITECTURES};
    for entry in ARCHITECTURES {
        let mut any = false;
        for &release in Release::ALL {
            let loads = loads_architecture(release, entry.name);
            if entry.releases.contains(release) {
                assert!(loads, "{} in {}", entry.name, release.name());
                any = true;
            }
            assert_eq!(
                Architecture::named_in(release, entry.name).is_some(),
                loads,
                "{} in {}",
                entry.name,
                release.name()
            );
        }
        assert!(any, "{}", entry.name);
    }
}
