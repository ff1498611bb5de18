//! `gguf mutate`: broken variants of a file, one per rule of the validation table, with the
//! verdicts the validator gives them.

use std::fs;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::builder::PossibleValuesParser;
use gguf_grammar::escape::terminal;
use gguf_grammar::validate::Code;
use gguf_testkit::mutate::{self, Mutation, RULES};

use crate::atomic;

#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 when the files were written, 1 when a mutation of a valid \
file does not provoke the diagnostic its rule names (the validator and the rule disagree), 2 on usage errors, \
a rule that does not apply, or a file that cannot be read or written.

Examples:
  gguf mutate --list                                   # every rule
  gguf mutate --list model.gguf                        # the rules that apply, with verdicts
  gguf mutate model.gguf --rule duplicate-key -o dup.gguf
  gguf mutate model.gguf --all broken/                 # broken/model.RULE.gguf + manifest.json"
)]
pub struct Args {
    /// The GGUF file to mutate (with --list: show only the rules that apply to it).
    #[arg(required_unless_present = "list")]
    file: Option<PathBuf>,
    /// Apply this rule; the result goes to OUT (or to stdout when it is not a terminal).
    #[arg(long, value_name = "RULE", value_parser = PossibleValuesParser::new(RULES.iter().map(|r| r.name)))]
    rule: Option<String>,
    /// Where --rule writes the mutated file (`-`: standard output).
    #[arg(short, long, value_name = "OUT", requires = "rule")]
    output: Option<PathBuf>,
    /// Write one file per applicable rule into OUTDIR (FILE's name with `.RULE.gguf`) and
    /// manifest.json (replaced) with each one's verdict per profile.
    #[arg(long, value_name = "OUTDIR", conflicts_with_all = ["rule", "list"])]
    all: Option<PathBuf>,
    /// List the rules (those that apply to FILE, with their verdicts, when FILE is given).
    #[arg(long, conflicts_with = "rule")]
    list: bool,
}

fn shown(path: &Path) -> String {
    terminal(path.as_os_str().as_encoded_bytes()).into_owned()
}

pub fn run(args: Args) -> ExitCode {
    if let (Some(file), Some(output)) = (&args.file, &args.output) {
        let input = crate::input::data_path(file).unwrap_or_default();
        if !crate::input::is_stdout(output) && gguf_tools::same_file::same_file(&input, output) {
            eprintln!("gguf: {}", crate::onto_input(output).message());
            return ExitCode::from(2);
        }
    }
    let bytes = match &args.file {
        Some(path) => match crate::input::read_whole(path) {
            Ok(bytes) => Some(bytes),
            Err(e) => {
                eprintln!("gguf: {}: {e}", shown(path));
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    let result = match (&bytes, &args.rule, &args.all) {
        (None, _, _) => list_rules(),
        (Some(bytes), _, _) if args.list => list_applicable(bytes),
        (Some(bytes), Some(rule), _) => {
            // `-o -` is standard output.
            let output = args
                .output
                .as_deref()
                .filter(|o| !crate::input::is_stdout(o));
            one(bytes, rule, output)
        }
        (Some(bytes), None, Some(dir)) => {
            all(bytes, args.file.as_deref().unwrap_or(Path::new("")), dir)
        }
        (Some(_), None, None) => Err("give --rule RULE, --all OUTDIR or --list".to_string()),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(message) => {
            eprintln!("gguf: {message}");
            ExitCode::from(2)
        }
    }
}

fn list_rules() -> Result<bool, String> {
    let mut out = io::stdout().lock();
    for r in RULES {
        let _ = writeln!(out, "{:<26} {}", r.name, r.description);
    }
    Ok(true)
}

/// One line per mutation: rule, verdict, each profile's verdict, codes.
fn describe(m: &Mutation) -> String {
    let profiles: Vec<String> = gguf_grammar::validate::Profile::ALL
        .iter()
        .zip(m.verdict.accepts)
        .map(|(p, ok)| format!("{}={}", p.name(), if ok { "accept" } else { "reject" }))
        .collect();
    format!(
        "{:<26} {:<12} {} [{}]",
        m.rule.name,
        m.verdict.expect(),
        profiles.join(" "),
        names(&m.verdict.codes).join(", ")
    )
}

/// Each rule that applies, one at a time: memory holds the file and one mutation.
fn each_mutation(bytes: &[u8]) -> impl Iterator<Item = Mutation> + '_ {
    RULES.iter().filter_map(move |r| r.apply(bytes))
}

fn list_applicable(bytes: &[u8]) -> Result<bool, String> {
    let mut out = io::stdout().lock();
    for m in each_mutation(bytes) {
        let _ = writeln!(out, "{}", describe(&m));
    }
    Ok(true)
}

/// Reports a mutation whose verdict lacks the code its rule names.
fn confirmed(m: &Mutation) -> bool {
    let ok = !m.disagrees();
    if !ok {
        eprintln!(
            "gguf: {}: expected {}, the validator says {} [{}]",
            m.rule.name,
            if m.rule.expects.is_empty() {
                "no diagnostic".to_string()
            } else {
                names(m.rule.expects).join(" or ")
            },
            m.verdict.expect(),
            names(&m.verdict.codes).join(", ")
        );
    }
    ok
}

fn one(bytes: &[u8], rule: &str, output: Option<&Path>) -> Result<bool, String> {
    let m = mutate::apply(rule, bytes)
        .ok_or_else(|| format!("rule {rule} does not apply to this file"))?;
    match output {
        Some(path) => atomic::write(path, &m.bytes, atomic::Name::Given)?,
        None if io::stdout().is_terminal() => {
            return Err(
                "refusing to write a GGUF file to a terminal: give -o OUT or redirect".into(),
            )
        }
        None => {
            let mut out = io::stdout().lock();
            out.write_all(&m.bytes)
                .and_then(|()| out.flush())
                .map_err(|e| format!("stdout: {e}"))?;
        }
    }
    eprintln!("{}", describe(&m));
    Ok(confirmed(&m))
}

fn all(bytes: &[u8], file: &Path, dir: &Path) -> Result<bool, String> {
    let stem = file
        .file_stem()
        .map_or("file".into(), |s| s.to_string_lossy().into_owned());
    let name_of = |m: &Mutation| format!("{stem}.{}.gguf", m.rule.name);
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", shown(dir)))?;
    let (mut entries, mut disagreeing) = (Vec::new(), 0);
    for m in each_mutation(bytes) {
        let name = name_of(&m);
        let path = dir.join(&name);
        atomic::write(&path, &m.bytes, atomic::Name::Generated)?;
        entries.push(m.manifest_entry(&name));
        // Report every mutation that disagrees, not only the first.
        disagreeing += usize::from(!confirmed(&m));
    }
    let path = dir.join("manifest.json");
    let manifest = format!("[\n{}\n]\n", entries.join(",\n"));
    atomic::write(&path, manifest.as_bytes(), atomic::Name::Generated)?;
    eprintln!(
        "gguf: wrote {} mutations and manifest.json to {}",
        entries.len(),
        shown(dir)
    );
    Ok(disagreeing == 0)
}

fn names(codes: &[Code]) -> Vec<&'static str> {
    codes.iter().map(|c| c.name()).collect()
}
