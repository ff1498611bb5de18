//! `gguf check`: diagnostics under a reader's or the specification's rules.

use std::collections::HashSet;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::ValueEnum;
use gguf_grammar::escape::terminal;
use gguf_grammar::validate::{self, Diagnostic, Profile};
use gguf_grammar::Gguf;
use gguf_llama::loader::{self, Load};
use gguf_llama::Release;
use gguf_tools::set::{self, shard_name, GgufSet, ShardFile};
use gguf_tools::source::http::is_remote;

use crate::{remote, Failure};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  gguf check --profile ggml model.gguf
  gguf check model-00001-of-00003.gguf      every shard, and the set as a whole
  gguf check https://example.org/model.gguf      the header only, by range requests
  gguf check --releases model.gguf          which llama.cpp releases load it, and why not
  gguf check --profile llama.cpp --vocab-only ggml-vocab-qwen35.gguf")]
pub struct Args {
    /// Whose rules: ggml's reader (metadata only), ggml also loading the tensor data, the
    /// same two for the ggml of llama-cpp-python 0.3.16 and 0.3.36, gguf-py 0.19.0's
    /// GGUFReader, the GGUF specification, all of them, or llama.cpp's model loader:
    /// `llama.cpp` is the newest release we hold (vendored in llama-cpp-python 0.3.36:
    /// ggml-0.3.36-data and the model schema of that release, a vocabulary-only file rejected
    /// unless --vocab-only), `llama.cpp-0.3.16` the older one.
    #[arg(long, value_enum, default_value = "strict")]
    profile: CheckProfile,
    /// With a llama.cpp profile: judge the load llama.cpp makes with vocab_only (as
    /// llama-tokenize loads), which reads the hyperparameters and the vocabulary only; a file
    /// without tensors is then accepted.
    #[arg(long)]
    vocab_only: bool,
    /// One row per llama.cpp release we hold, newest first: whether its loader loads the file
    /// (the whole model; or, for a file without tensors, the vocabulary with vocab_only), and
    /// when not, the first diagnostic that says why. Exit 0 when some release loads every file,
    /// 1 when one loads in none. Only the header is read (also for URLs).
    #[arg(long, conflicts_with_all = ["profile", "schema", "vocab_only", "shard_only"])]
    releases: bool,
    /// Print the diagnostics as JSON: one object per file.
    #[arg(long)]
    json: bool,
    /// Also check the model against the LLaMA-family schema of its architecture (keys,
    /// tokenizer, hyperparameters, tensor names and shapes) and its vocabulary against
    /// llama.cpp's tokenizer (the tokenizer-* codes); a schema error rejects. Also lint its
    /// chat templates (the template-* codes, which never reject).
    #[arg(long)]
    schema: bool,
    /// For a shard (NAME-00001-of-0000N.gguf), check this file alone. Without it every
    /// shard of the set is checked, and the set as a whole: all shards present, split.no in
    /// order, split.count and split.tensors.count right, metadata in the first shard only,
    /// no tensor in two shards.
    #[arg(long)]
    shard_only: bool,
    /// For URLs, report the requests made and the bytes fetched on stderr.
    #[arg(long, short)]
    verbose: bool,
    /// The GGUF files (`-` reads standard input), or `http://`, `https://` or
    /// `hf://OWNER/REPO/PATH[@REVISION]` URLs (only the header is fetched, with range requests). A
    /// URL's read stops after 10 s to connect, 30 s to the first byte or 120 s in all (one retry at
    /// most).
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum CheckProfile {
    /// What ggml's C reader accepts reading metadata only (gguf_init_from_file, GGUF_VERSION 3,
    /// GGML_TYPE_COUNT 43, as recorded in tests/conformance/verdicts.json).
    Ggml,
    /// What ggml's C reader accepts when it also loads the tensor data (the same ggml).
    GgmlData,
    /// What the ggml of the llama.cpp vendored in llama-cpp-python 0.3.16 accepts reading
    /// metadata only (gguf_init_from_file, GGML_TYPE_COUNT 40, as recorded in
    /// tests/conformance/verdicts-llama.cpp-0.3.16.json).
    #[value(name = "ggml-0.3.16")]
    Ggml0316,
    /// What that ggml accepts when it also loads the tensor data.
    #[value(name = "ggml-0.3.16-data")]
    Ggml0316Data,
    /// What the ggml of the llama.cpp vendored in llama-cpp-python 0.3.36 accepts reading
    /// metadata only (gguf_init_from_file, GGML_TYPE_COUNT 43, as recorded in
    /// tests/conformance/verdicts-llama.cpp-0.3.36.json).
    #[value(name = "ggml-0.3.36")]
    Ggml0336,
    /// What that ggml accepts when it also loads the tensor data.
    #[value(name = "ggml-0.3.36-data")]
    Ggml0336Data,
    /// What gguf-py 0.19.0's GGUFReader accepts.
    GgufPy,
    /// The GGUF specification's rules (ggml's docs/gguf.md, GGUF v3).
    Spec,
    /// All of them.
    Strict,
    /// The model loader of the newest llama.cpp we hold, vendored in llama-cpp-python 0.3.36
    /// (llama_model_load_from_file, default parameters): ggml-0.3.36-data's container rules,
    /// the model schema of that release (--schema), and tensors required (unless --vocab-only).
    #[value(name = "llama.cpp")]
    LlamaCpp,
    /// The same for the llama.cpp vendored in llama-cpp-python 0.3.16 (ggml-0.3.16-data).
    #[value(name = "llama.cpp-0.3.16")]
    LlamaCpp0316,
}

impl CheckProfile {
    /// The llama.cpp release whose model loader the profile follows, if it is a loader's.
    fn release(self) -> Option<Release> {
        match self {
            CheckProfile::LlamaCpp => Some(Release::NEWEST),
            CheckProfile::LlamaCpp0316 => Some(Release::LlamaCppPython0316),
            _ => None,
        }
    }
}

pub fn run(args: Args) -> ExitCode {
    if args.releases {
        return crate::releases::run(&args.files, args.json, args.verbose);
    }
    let files = if args.shard_only {
        args.files
            .into_iter()
            .map(|path| Checked {
                path,
                set_findings: None,
                opened: None,
            })
            .collect()
    } else {
        with_shards(args.files)
    };
    let load = match args.vocab_only {
        true => Load::VocabOnly,
        false => Load::Model,
    };
    let schema = match args.profile.release() {
        Some(release) => Schema::LlamaCpp(release, load),
        None if args.schema => Schema::Model,
        None => Schema::Off,
    };
    check(&files, args.profile.into(), args.json, schema, args.verbose)
}

/// A file to check.
struct Checked {
    path: PathBuf,
    /// For a shard, the set's findings about it (possibly none).
    set_findings: Option<Vec<Diagnostic>>,
    /// A shard's header, already read for the set: not read again.
    opened: Option<ShardFile>,
}

/// Each file, or for a shard every shard of its set, with the set's findings about it.
fn with_shards(files: Vec<PathBuf>) -> Vec<Checked> {
    let mut expanded: Vec<Checked> = Vec::new();
    let mut listed: HashSet<PathBuf> = HashSet::new();
    for path in files {
        let set = match shard_name(&path).and_then(|_| GgufSet::open(&path).ok()) {
            Some(set) if set.is_sharded() => set,
            // A single file, or one that cannot be read (reported when checked).
            _ => {
                listed.insert(path.clone());
                expanded.push(Checked {
                    path,
                    set_findings: None,
                    opened: None,
                });
                continue;
            }
        };
        eprintln!(
            "note: {} is a shard of {} files: checking the whole set (--shard-only checks this file alone)",
            terminal(path.as_os_str().as_encoded_bytes()),
            set.shards.len()
        );
        let mut found: Vec<Vec<Diagnostic>> = vec![Vec::new(); set.shards.len()];
        for (shard, d) in set.diagnose() {
            found[shard].push(d);
        }
        for (shard, found) in set.shards.into_iter().zip(found) {
            // A missing shard past the set's cap on findings has nothing to say.
            let silent = shard.file.is_err() && found.is_empty();
            if !silent && listed.insert(shard.path.clone()) {
                expanded.push(Checked {
                    path: shard.path,
                    set_findings: Some(found),
                    opened: shard.file.ok(),
                });
            }
        }
    }
    expanded
}

impl From<CheckProfile> for Profile {
    fn from(profile: CheckProfile) -> Self {
        match profile {
            CheckProfile::Ggml => Profile::Ggml,
            CheckProfile::GgmlData => Profile::GgmlData,
            CheckProfile::Ggml0316 => Profile::Ggml0316,
            CheckProfile::Ggml0316Data => Profile::Ggml0316Data,
            CheckProfile::Ggml0336 => Profile::Ggml0336,
            CheckProfile::Ggml0336Data => Profile::Ggml0336Data,
            CheckProfile::GgufPy => Profile::GgufPy,
            CheckProfile::Spec => Profile::Spec,
            CheckProfile::Strict => Profile::Strict,
            CheckProfile::LlamaCpp | CheckProfile::LlamaCpp0316 => {
                loader::container(profile.release().unwrap_or(Release::NEWEST))
            }
        }
    }
}

/// Which model rules apply besides the profile's.
#[derive(Clone, Copy, PartialEq)]
enum Schema {
    Off,
    /// `--schema`.
    Model,
    /// `--profile llama.cpp` (or another release's): that release's schema, and a file
    /// without tensors is an error unless the load is vocabulary-only.
    LlamaCpp(Release, Load),
}

/// The profile's diagnostics, and the schema's when asked.
fn judge(gguf: &Gguf<'_>, file_len: u64, profile: Profile, schema: Schema) -> Vec<Diagnostic> {
    if let Schema::LlamaCpp(release, load) = schema {
        return gguf_tokenizer::check::llama_cpp_in(gguf, file_len, release, load);
    }
    let mut found = validate::check(gguf, file_len, profile);
    if schema != Schema::Off {
        found.extend(gguf_tokenizer::check::model(gguf));
    }
    found
}

/// [`judge`] and, with the model rules (`--schema`, `--profile llama.cpp`), the chat
/// templates' lint; with `json`, the `template` section of `--json` (always there).
fn judge_all(
    gguf: &Gguf<'_>,
    file_len: u64,
    profile: Profile,
    schema: Schema,
    json: bool,
) -> (Vec<Diagnostic>, Option<serde_json::Value>) {
    let mut found = judge(gguf, file_len, profile, schema);
    // Linting renders every template: once, for the model rules and the JSON alike.
    let model_rules = schema != Schema::Off;
    let lints = (model_rules || json).then(|| gguf_template::lint::lint_gguf(gguf));
    // A model rule, as the schema's: the container profiles do not read templates.
    if let Some(lints) = lints.as_deref().filter(|_| model_rules) {
        found.extend(gguf_template::lint::diagnostics(gguf, lints));
    }
    let template = json.then(|| gguf_template::report::report(gguf, false, lints.as_deref(), true));
    (found, template)
}

/// `gguf check`: exit 0 when every file is accepted, 1 when one is rejected, 2 when one
/// cannot be read.
fn check(
    files: &[Checked],
    profile: Profile,
    json: bool,
    schema: Schema,
    verbose: bool,
) -> ExitCode {
    let mut out = BufWriter::new(io::stdout().lock());
    // What the JSON names: `--profile llama.cpp` applies ggml-0.3.36-data's container rules.
    let label = match schema {
        Schema::LlamaCpp(release, _) => (loader::profile_name(release), loader::models(release)),
        _ => (profile.name(), profile.models()),
    };
    let (mut rejected, mut unreadable) = (false, false);
    let mut written = Ok(());
    let mut documents = Vec::new();
    for Checked {
        path,
        set_findings,
        opened,
    } in files
    {
        let shown = path.display().to_string();
        let missing_shard = set_findings
            .iter()
            .flatten()
            .any(|d| d.code == "set-missing-shard");
        let found = match path.to_str().filter(|p| is_remote(p)) {
            Some(url) => remote::with_header(url, verbose, |gguf, size| {
                Ok(judge_all(gguf, size, profile, schema, json))
            })
            .map(Some),
            None => match opened {
                Some(shard) => Ok(Some(match shard.parse() {
                    Ok(gguf) => judge_all(&gguf, shard.len(), profile, schema, json),
                    Err(e) => (vec![validate::parse_failure(&e)], None),
                })),
                // Refused outright: a FIFO at a sibling's name is not a missing shard.
                None => match sibling_check(path, set_findings.is_some()) {
                    Err(failure) => Err(failure),
                    Ok(()) => match crate::input::header_or_parse_error(path) {
                        Ok(Ok((header, file_len))) => Ok(Some(judge_all(
                            header.gguf(),
                            file_len,
                            profile,
                            schema,
                            json,
                        ))),
                        Ok(Err(e)) => Ok(Some((vec![validate::parse_failure(&e)], None))),
                        // A missing shard is a finding about the set, not an unreadable argument.
                        Err(_) if missing_shard => Ok(None),
                        Err(failure) => Err(failure),
                    },
                },
            },
        };
        let (mut diagnostics, template) = match found {
            Ok(found) => found.unwrap_or_default(),
            Err(failure) => {
                let message = failure.message();
                eprintln!("gguf: {message}");
                match failure {
                    Failure::Invalid(_) => rejected = true,
                    Failure::Unreadable(_) => unreadable = true,
                }
                if json {
                    documents.push(serde_json::json!({
                        "file": shown, "profile": label.0, "models": label.1, "accepted": false,
                        "error": message, "diagnostics": [],
                    }));
                }
                continue;
            }
        };
        diagnostics.extend(set_findings.iter().flatten().cloned());
        let accepted = validate::accepts(&diagnostics, profile)
            && gguf_llama::schema::accepts_model(&diagnostics)
            && set::accepts_set(&diagnostics);
        rejected |= !accepted;
        if json {
            let mut document = check_json(&shown, profile, label, accepted, &diagnostics);
            document["template"] = template.unwrap_or_default();
            documents.push(document);
        } else {
            let shown = crate::shown(path);
            written = written.and_then(|()| {
                diagnostics
                    .iter()
                    .try_for_each(|d| check_line(&shown, profile, d, &mut out))
            });
        }
    }
    if json {
        let documents = serde_json::Value::Array(documents);
        written = gguf_tools::render::json::write_value(&documents, true, &mut out)
            .and_then(|()| writeln!(out));
    }
    if let Err(e) = written.and_then(|()| out.flush()) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("gguf: writing output: {e}");
            return ExitCode::from(2);
        }
    }
    ExitCode::from(if unreadable {
        2
    } else if rejected {
        1
    } else {
        0
    })
}

/// What a diagnostic is under `profile`: an error when the profile rejects for it.
fn level(profile: Profile, d: &Diagnostic) -> &'static str {
    if profile.rejects(d.rejected_by) {
        "error"
    } else {
        d.severity.name()
    }
}

fn rejecters(d: &Diagnostic) -> String {
    let names: Vec<_> = d.rejected_by.iter().map(|r| r.name()).collect();
    names.join(", ")
}

/// `FILE:OFFSET: error[CODE] PATH: MESSAGE (rejected by: ...)`
fn check_line(
    file: &str,
    profile: Profile,
    d: &Diagnostic,
    out: &mut impl Write,
) -> io::Result<()> {
    let offset = d.span.as_ref().map_or(0, |span| span.start);
    write!(out, "{file}:{offset}: {}[{}] ", level(profile, d), d.code)?;
    if !d.path.0.is_empty() {
        write!(out, "{}: ", d.path)?;
    }
    // Names in a message are escaped already (a `GgufStr` displays escaped).
    write!(out, "{}", gguf_grammar::escape::controls(&d.message))?;
    if !d.rejected_by.is_empty() {
        write!(out, " (rejected by: {})", rejecters(d))?;
    }
    writeln!(out)
}

/// `{"file", "profile", "models", "accepted", "diagnostics": [{"level", "code", "severity",
/// "offset", "span", "path", "message", "rejected_by"}]}`; `models` names the implementation
/// and version the profile follows.
fn check_json(
    file: &str,
    profile: Profile,
    label: (&str, &str),
    accepted: bool,
    diagnostics: &[Diagnostic],
) -> serde_json::Value {
    let diagnostics: Vec<_> = diagnostics
        .iter()
        .map(|d| {
            let refs: Vec<_> = d.rejected_by.iter().map(|r| r.name()).collect();
            serde_json::json!({
                "level": level(profile, d),
                "code": d.code.name(),
                "severity": d.severity.name(),
                "offset": d.span.as_ref().map_or(0, |s| s.start),
                "span": d.span.as_ref().map(|s| [s.start, s.end]),
                "path": d.path.to_string(),
                "message": d.message,
                "rejected_by": refs,
            })
        })
        .collect();
    serde_json::json!({
        "file": file,
        "profile": label.0,
        "models": label.1,
        "accepted": accepted,
        "diagnostics": diagnostics,
    })
}

/// A shard found by name beside the one named must be a regular file (a FIFO there would
/// block the check).
fn sibling_check(path: &std::path::Path, sibling: bool) -> Result<(), Failure> {
    match sibling {
        true => crate::input::refuse_special(path),
        false => Ok(()),
    }
}
