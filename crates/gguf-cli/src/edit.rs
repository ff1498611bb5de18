//! `gguf edit`: set, remove or rename metadata keys, keeping every tensor's bytes.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::{Arg, ArgAction, ArgMatches, FromArgMatches};
use gguf_grammar::escape::Terminal;
use gguf_grammar::write::{GgufBuilder, WriteError};
use gguf_grammar::{Gguf, OwnedGguf};
use gguf_tools::edit::{write_atomically, Edit, EditError, Locked, Replace};

use crate::Failure;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  gguf edit model.gguf --in-place --set general.name='My model'
  gguf edit model.gguf -o out.gguf --rename general.title=general.name --remove general.url
  gguf edit model.gguf -o - --set 'my.ids=[u32]:[1,2,3]' | gguf dump -
  gguf edit model.gguf -o out.gguf --chat-template-config tokenizer_config.json")]
pub struct Args {
    /// The GGUF file; `-` (or a pipe) is read whole from standard input (with -o).
    file: PathBuf,
    #[command(flatten)]
    edits: Edits,
    /// Write the edited file here (`-` for standard output).
    #[arg(short, long, value_name = "OUT", required_unless_present = "in_place")]
    output: Option<PathBuf>,
    /// Replace FILE (the target of a symbolic link) with the edited file.
    #[arg(long, conflicts_with = "output")]
    in_place: bool,
    /// Allow a set to change the type of an existing key.
    #[arg(long)]
    force_type: bool,
    /// Write even though FILE does not hold every tensor's bytes (the written file lacks
    /// them too).
    #[arg(long)]
    allow_data_loss: bool,
    /// Replace a file that has other hard links (they keep the old content).
    #[arg(long)]
    break_links: bool,
    /// Replace a read-only file.
    #[arg(long)]
    force: bool,
    /// Set the chat template from a Jinja file, as gguf-py's gguf_new_metadata
    /// --chat-template-file does: every `tokenizer.chat_template*` key is removed and
    /// `tokenizer.chat_template` added at the end (before the other edits apply). A template
    /// that does not parse is refused; one llama.cpp's engine would not parse is a warning.
    #[arg(
        long,
        value_name = "FILE.jinja",
        conflicts_with = "chat_template_config"
    )]
    chat_template: Option<PathBuf>,
    /// Set the chat templates from a tokenizer_config.json's `chat_template`, as
    /// gguf_new_metadata --chat-template-config does: a string is the template; a list of
    /// `{"name", "template"}` gives `tokenizer.chat_template.NAME` for each (the name's
    /// characters other than ASCII letters and digits become `_`), their names in
    /// `tokenizer.chat_templates`, and `default` the template. An empty or missing
    /// `chat_template` changes nothing.
    #[arg(long, value_name = "tokenizer_config.json")]
    chat_template_config: Option<PathBuf>,
}

/// `--set`, `--set-file`, `--remove` and `--rename`, kept in the order they were given.
struct Edits(Vec<Edit>);

const SET: &str = "set";
const SET_FILE: &str = "set-file";
const REMOVE: &str = "remove";
const RENAME: &str = "rename";

impl clap::Args for Edits {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let option = |name: &'static str, value_name: &'static str, help: &'static str| {
            Arg::new(name)
                .long(name)
                .value_name(value_name)
                .action(ArgAction::Append)
                .help(help)
        };
        cmd.arg(option(
            SET,
            "KEY=[TYPE:]VALUE",
            "Set a key: `KEY=VALUE` keeps the existing key's type (the value is checked against \
             it); `KEY=TYPE:VALUE` gives the type, one of u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 \
             bool string, or `[TYPE]` for an array given as JSON (`ids=[u32]:[1,2]`, \
             `t=[string]:[\"a\",\"b\"]`). Edits apply in the order given.",
        ))
        .arg(option(
            SET_FILE,
            "KEY=[TYPE:]PATH",
            "Set a key to the contents of a file (UTF-8), read as --set reads its VALUE: a \
             chat template (`tokenizer.chat_template=string:t.jinja`), or an array as JSON \
             (`my.ids=[u32]:ids.json`).",
        ))
        .arg(option(REMOVE, "KEY", "Remove every pair with this key."))
        .arg(option(
            RENAME,
            "OLD=NEW",
            "Rename a key (NEW must not exist).",
        ))
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for Edits {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        // `--set-file` reads its file here, before `main` sees the global `--max-header`.
        if let Ok(Some(&bytes)) = matches.try_get_one::<u64>("max_header") {
            gguf_tools::source::set_max_header(bytes);
        }
        let mut edits = Vec::new();
        for name in [SET, SET_FILE, REMOVE, RENAME] {
            let (Some(indices), Some(values)) =
                (matches.indices_of(name), matches.get_many::<String>(name))
            else {
                continue;
            };
            for (index, value) in indices.zip(values) {
                let invalid = |e: &dyn std::fmt::Display| {
                    clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("{e}\n"))
                };
                let edit = match name {
                    SET => Edit::parse_set(value),
                    SET_FILE => Edit::parse_set(value).and_then(read_value_file),
                    REMOVE => Ok(Edit::Remove(value.clone())),
                    _ => Edit::parse_rename(value),
                };
                let edit = edit.map_err(|e| invalid(&escaped(&e)))?;
                edits.push((index, edit));
            }
        }
        edits.sort_by_key(|(index, _)| *index);
        Ok(Edits(edits.into_iter().map(|(_, edit)| edit).collect()))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

/// A `--set-file` edit: its text names a file whose contents are the value's text.
fn read_value_file(edit: Edit) -> Result<Edit, EditError> {
    let Edit::Set { key, ty, text } = edit else {
        return Ok(edit);
    };
    let path = PathBuf::from(text);
    let io_err = |source| EditError::Io {
        path: path.clone(),
        source,
    };
    let bytes = crate::input::read_whole(&path).map_err(io_err)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| io_err(io::Error::new(io::ErrorKind::InvalidData, "not UTF-8")))?;
    Ok(Edit::Set { key, ty, text })
}

/// An error that quotes keys and names from the command line or the file, made safe to print.
fn escaped(e: &dyn std::fmt::Display) -> String {
    Terminal(e.to_string().as_bytes()).to_string()
}

/// `gguf edit`: exit 1 when FILE is not GGUF or the edit would lose or break something,
/// 2 on a bad edit or a file error, 130 when interrupted.
pub fn run(args: Args) -> Result<(), Failure> {
    let shown = crate::shown(&args.file);
    let unreadable = |e: &dyn std::fmt::Display| Failure::Unreadable(format!("{shown}: {e}"));
    // In place: hold the file locked from the read to the rename.
    let locked = if args.in_place {
        Some(Locked::open(&args.file).map_err(|e| unreadable(&e))?)
    } else {
        None
    };
    let source = locked.as_ref().map_or(args.file.as_path(), |l| &l.path);
    let template = crate::template::template_edit(
        args.chat_template.as_deref(),
        args.chat_template_config.as_deref(),
    )?;
    // A regular file's header is read into memory and its tensor data copied with
    // positioned reads (a file truncated by another process meanwhile is an error, not a
    // SIGBUS); standard input (`-`) and other streams are read whole, as the output holds
    // them whole too.
    let is_stream = source == Path::new("-")
        || std::fs::metadata(source).is_ok_and(|m| !m.is_file() && !m.is_dir());
    if is_stream && args.in_place {
        return Err(Failure::Unreadable(format!(
            "{shown}: --in-place needs a regular file"
        )));
    }
    let data_file: File;
    let header: OwnedGguf;
    let bytes: Vec<u8>;
    let mut builder = if is_stream {
        bytes = crate::input::read_whole(source).map_err(|e| unreadable(&e))?;
        let gguf = Gguf::parse(&bytes).map_err(|e| Failure::Invalid(format!("{shown}: {e}")))?;
        let mut builder = GgufBuilder::from_gguf(&gguf);
        template.iter().for_each(|t| t.apply(&gguf, &mut builder));
        builder
    } else {
        let (file, read, len) = crate::input::with_data(source)?;
        (data_file, header) = (file, read);
        let mut builder = GgufBuilder::from_header_and_file(header.gguf(), &data_file, len);
        template
            .iter()
            .for_each(|t| t.apply(header.gguf(), &mut builder));
        builder
    };
    for edit in &args.edits.0 {
        let applied = if args.force_type {
            edit.apply_changing_type(&mut builder)
        } else {
            edit.apply(&mut builder)
        };
        applied.map_err(|e| Failure::Unreadable(escaped(&e)))?;
    }
    if args.allow_data_loss {
        builder.allow_missing_data();
    }
    let refused = |e: WriteError| match e {
        WriteError::Io(e) => Failure::Unreadable(format!("output: {e}")),
        e => Failure::Invalid(format!("{shown}: {}; nothing written", escaped(&e))),
    };
    if args.output.as_deref().is_some_and(crate::input::is_stdout) {
        let mut out = io::stdout().lock();
        builder.write_to(&mut out).map_err(|e| match e {
            WriteError::Source(e) => {
                Failure::Invalid(format!("{shown}: {e}; the output is incomplete"))
            }
            e => refused(e),
        })?;
        return out
            .flush()
            .map_err(|e| Failure::Unreadable(format!("output: {e}")));
    }
    let dest = args.output.as_deref().unwrap_or(source);
    let cancel = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second signal ends the process at once; the first stops the write.
        let _ = signal_hook::flag::register_conditional_shutdown(signal, 130, cancel.clone());
        let _ = signal_hook::flag::register(signal, cancel.clone());
    }
    let replace = Replace {
        break_links: args.break_links,
        read_only: args.force,
        cancel: Some(cancel),
        ..Replace::default()
    };
    let expect = locked.as_ref().map(|l| l.identity);
    match write_atomically(&builder, dest, &replace, expect) {
        Ok(_) => Ok(()),
        Err(EditError::Cancelled) => {
            eprintln!("gguf: interrupted; {} left as it was", crate::shown(dest));
            std::process::exit(130)
        }
        Err(EditError::Write(e)) => Err(refused(e)),
        Err(e @ (EditError::Verify(_) | EditError::Changed(_))) => {
            Err(Failure::Invalid(escaped(&e)))
        }
        Err(e @ EditError::Check(_)) => Err(Failure::Unreadable(format!(
            "{}: {}",
            crate::shown(dest),
            escaped(&e)
        ))),
        // The others name their file (with --break-links or --force where they apply).
        Err(e) => Err(Failure::Unreadable(escaped(&e))),
    }
}
