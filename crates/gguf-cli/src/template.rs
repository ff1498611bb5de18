//! `gguf template`: the chat templates a file carries — listed, printed as stored, or
//! rendered with a conversation as transformers renders it (crate `gguf-template`).

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use gguf_grammar::escape::terminal;
use gguf_grammar::{Gguf, OwnedGguf};
use gguf_template::read::TEMPLATE_KEY;
use gguf_template::{render, screen, templates, ChatTemplate, Conversation, Limits, SpecialTokens};
use gguf_tools::set::{shard_name, shard_path};
use gguf_tools::source::http::is_remote;

use crate::{remote, Failure};

#[derive(clap::Args)]
#[command(after_help = "\
Only the header is read (from a URL, with range requests); for a shard the templates come from
the first shard of the set, which holds the metadata. Without --name or --render, every template
(`tokenizer.chat_template` and each `tokenizer.chat_template.NAME`) is listed with its size, its
family and the screen's findings, then its source (text escaped for the terminal).

--name NAME prints one template as stored (`default` is `tokenizer.chat_template`, as gguf-py
names it); --render renders one (the default unless --name) with the conversation of --messages,
binding the file's special tokens (bos_token, eos_token, unk_token, sep_token, pad_token,
cls_token, mask_token from tokenizer.ggml.*_token_id) as transformers binds a tokenizer's, in a
sandbox with bounded instructions, output and time. Both write the bytes as they are unless
standard output is a terminal, where control characters are escaped.

Exit status: 0 ok; 1 when the file is not GGUF, a template key is not a string, or the template
does not render (a syntax error, an exception it raises, a limit); 2 on usage errors, an
unreadable file, messages or tools that are not JSON, or no template of that name.

Examples:
  gguf template model.gguf
  gguf template model.gguf --name tool_use > tool_use.jinja
  gguf template model.gguf --render --messages chat.json --add-generation-prompt
  gguf template hf://OWNER/REPO/model.gguf --json")]
pub struct Args {
    /// The GGUF file (`-` reads standard input), or an `http://`, `https://` or
    /// `hf://OWNER/REPO/PATH[@REVISION]` URL. A URL's read stops after 10 s to connect, 30 s to the
    /// first byte or 120 s in all (one retry at most).
    model: PathBuf,
    /// The template `tokenizer.chat_template.NAME` (`default`: `tokenizer.chat_template`).
    #[arg(long)]
    name: Option<String>,
    /// Render the template (the default, or --name) with the conversation of --messages.
    #[arg(long, requires = "messages")]
    render: bool,
    /// A JSON file with the messages: `[{"role": "user", "content": "Hi"}, ...]`.
    #[arg(long, value_name = "FILE", requires = "render")]
    messages: Option<PathBuf>,
    /// A JSON file with the tool schemas the template sees as `tools`.
    #[arg(long, value_name = "FILE", requires = "render")]
    tools: Option<PathBuf>,
    /// End the rendering with the opening of the assistant's turn.
    #[arg(long, requires = "render")]
    add_generation_prompt: bool,
    /// Print JSON: the list (with each template's source, lint and screen), the one template
    /// (`{"key", "name", "source"}`), or the rendering (`{"key", "name", "text"}`).
    #[arg(long)]
    json: bool,
    /// For a shard, read this file's templates, not the first shard's.
    #[arg(long)]
    shard_only: bool,
    /// For a URL, report the requests made and the bytes fetched on stderr.
    #[arg(long, short)]
    verbose: bool,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let (header, shown) = header(&args.model, args.shard_only, args.verbose)?;
    let gguf = header.gguf();
    let (found, errors) = templates(gguf);
    let mut out = io::stdout().lock();
    if args.render || args.name.is_some() {
        let name = args.name.as_deref().unwrap_or("default");
        let template = find(&found, name).ok_or_else(|| {
            Failure::Unreadable(format!(
                "{shown}: no chat template {}",
                match name {
                    "default" => format!("(no {TEMPLATE_KEY})"),
                    _ => format!("named {:?}", terminal(name.as_bytes())),
                }
            ))
        })?;
        if args.render {
            return render_one(gguf, template, &args, &shown, &mut out);
        }
        let written = if args.json {
            let doc = serde_json::json!({
                "key": template.key, "name": template.name, "source": template.source,
            });
            json_line(&mut out, &doc, false)
        } else {
            write_data(&mut out, &template.source)
        };
        return finish(written);
    }
    if args.json {
        let doc = gguf_template::report::report(
            gguf,
            true,
            Some(&gguf_template::lint::lint_gguf(gguf)),
            true,
        );
        finish(json_line(&mut out, &doc, true))?;
    } else {
        if found.is_empty() && errors.is_empty() {
            eprintln!("gguf: {shown}: no chat template");
        }
        finish(list(&found, &mut out))?;
    }
    match errors.first() {
        None => Ok(()),
        Some(_) => Err(Failure::Invalid(
            errors
                .iter()
                .map(|e| format!("{shown}: {}", terminal(e.to_string().as_bytes())))
                .collect::<Vec<_>>()
                .join("\ngguf: "),
        )),
    }
}

/// The template called `name` (`default` is the unnamed one unless a template is named so).
fn find<'a>(found: &'a [ChatTemplate], name: &str) -> Option<&'a ChatTemplate> {
    found
        .iter()
        .find(|t| t.name.as_deref() == Some(name))
        .or_else(|| match name {
            "default" => found.iter().find(|t| t.name.is_none()),
            _ => None,
        })
}

/// The screen's result in a few words.
fn screened(findings: &[screen::Finding]) -> String {
    match findings.iter().map(|f| f.severity).max() {
        None => "no findings".to_string(),
        Some(worst) => format!("{} finding(s), worst {worst}", findings.len()),
    }
}

/// The lines `gguf dump --summary` adds for a file with chat templates: each template's family
/// (as llama.cpp detects it), size and screen result; nothing for a file without one.
pub fn summary(gguf: &Gguf<'_>, out: &mut impl Write) -> io::Result<()> {
    let (found, errors) = templates(gguf);
    for t in &found {
        let name = match &t.name {
            None => String::new(),
            Some(n) => format!("{}: ", terminal(n.as_bytes())),
        };
        writeln!(
            out,
            "{:<14} {name}{}, {} bytes, screen: {}",
            "chat template",
            gguf_template::family::family(&t.source),
            t.source.len(),
            screened(&screen::screen(&t.source))
        )?;
    }
    for e in &errors {
        writeln!(
            out,
            "{:<14} {}",
            "chat template",
            terminal(e.to_string().as_bytes())
        )?;
    }
    Ok(())
}

/// `gguf scan`'s template cell: the default template's family, each named one as
/// `NAME=FAMILY` (the name as stored: escaped where it is printed), then `screen: SEVERITY`,
/// the worst finding, when there is one, and `not a string` for a template key that is not
/// text; `None` for a file without templates.
pub fn scan_cell(gguf: &Gguf<'_>) -> Option<String> {
    let (found, errors) = templates(gguf);
    if found.is_empty() && errors.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = found
        .iter()
        .map(|t| {
            let family = gguf_template::family::family(&t.source);
            match &t.name {
                None => family.to_string(),
                Some(name) => format!("{name}={family}"),
            }
        })
        .collect();
    if !errors.is_empty() {
        parts.push(format!("{} not a string", errors.len()));
    }
    let worst = found
        .iter()
        .flat_map(|t| screen::screen(&t.source))
        .map(|f| f.severity)
        .max();
    let mut cell = parts.join(" ");
    if let Some(worst) = worst {
        cell += &format!("; screen: {worst}");
    }
    Some(cell)
}

/// Every template: a heading (key, size, family, screen), then its source, indented and
/// escaped line by line.
fn list(found: &[ChatTemplate], out: &mut impl Write) -> io::Result<()> {
    for (i, t) in found.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        let findings = screen::screen(&t.source);
        let screened = screened(&findings);
        writeln!(
            out,
            "{} ({}): {} bytes, {} lines, family {}, screen: {screened}",
            terminal(t.key.as_bytes()),
            t.name
                .as_deref()
                .map_or("default".into(), |n| terminal(n.as_bytes())),
            t.source.len(),
            t.source.lines().count(),
            gguf_template::family::family(&t.source),
        )?;
        for f in &findings {
            writeln!(
                out,
                "  screen {}",
                gguf_grammar::escape::controls(&f.to_string())
            )?;
        }
        for line in t.source.lines() {
            writeln!(out, "    {}", terminal(line.as_bytes()))?;
        }
    }
    out.flush()
}

fn render_one(
    gguf: &Gguf<'_>,
    template: &ChatTemplate,
    args: &Args,
    shown: &str,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let json_file = |path: &Path| -> Result<serde_json::Value, Failure> {
        let text = crate::input::read_whole(path)
            .map_err(|e| Failure::Unreadable(format!("{}: {e}", crate::shown(path))))?;
        serde_json::from_slice(&text)
            .map_err(|e| Failure::Unreadable(format!("{}: not JSON: {e}", crate::shown(path))))
    };
    let messages = match &args.messages {
        Some(path) => json_file(path)?,
        None => return Err(Failure::Unreadable("--render needs --messages FILE".into())),
    };
    let tools = args.tools.as_deref().map(json_file).transpose()?;
    let conversation = Conversation {
        messages,
        tools,
        add_generation_prompt: args.add_generation_prompt,
        ..Conversation::default()
    };
    let special = SpecialTokens::from_gguf(gguf);
    let text = render(
        &template.source,
        &conversation,
        &special,
        &Limits::default(),
    )
    .map_err(|e| {
        let message = format!(
            "{shown}: {}: {}",
            terminal(template.key.as_bytes()),
            gguf_grammar::escape::terminal(e.to_string().as_bytes())
        );
        match e {
            gguf_template::RenderError::Input(_) => Failure::Unreadable(message),
            _ => Failure::Invalid(message),
        }
    })?;
    let written = if args.json {
        let doc = serde_json::json!({ "key": template.key, "name": template.name, "text": text });
        json_line(out, &doc, false)
    } else {
        write_data(out, &text)
    };
    finish(written)
}

/// `doc` and a line break (see [`gguf_tools::render::json::write_value`]).
fn json_line(out: &mut impl Write, doc: &serde_json::Value, pretty: bool) -> io::Result<()> {
    gguf_tools::render::json::write_value(doc, pretty, out)?;
    writeln!(out)
}

/// Text from the file as it is, unless standard output is a terminal: then each line is
/// escaped (the line breaks kept).
fn write_data(out: &mut impl Write, text: &str) -> io::Result<()> {
    if io::stdout().is_terminal() {
        for line in text.split('\n') {
            writeln!(out, "{}", terminal(line.as_bytes()))?;
        }
    } else {
        out.write_all(text.as_bytes())?;
    }
    out.flush()
}

/// The header holding the templates (a shard set's first shard unless `shard_only`), and the
/// name shown in messages.
fn header(model: &Path, shard_only: bool, verbose: bool) -> Result<(OwnedGguf, String), Failure> {
    let mut path = model.to_path_buf();
    if let Some((prefix, no, count)) = shard_name(model).filter(|_| !shard_only) {
        if no != 0 {
            path = shard_path(&prefix, 0, count);
            eprintln!(
                "note: {} is a shard: reading the templates of the first, {} (--shard-only reads this file)",
                crate::shown(model),
                crate::shown(&path)
            );
        }
    }
    let shown = crate::shown(&path);
    if let Some(url) = path.to_str().filter(|p| is_remote(p)) {
        let (buf, _) = remote::fetch_header(url, verbose)?;
        let header =
            OwnedGguf::from_vec(buf).map_err(|e| Failure::Invalid(format!("{shown}: {e}")))?;
        return Ok((header, shown));
    }
    crate::input::header(&path).map(|(header, _)| (header, shown))
}

/// A closed pipe is the reader's choice, not a failure.
fn finish(written: io::Result<()>) -> Result<(), Failure> {
    match written {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Failure::Unreadable(format!("writing output: {e}")))
        }
        _ => Ok(()),
    }
}

/// What `gguf edit --chat-template FILE.jinja` or `--chat-template-config
/// tokenizer_config.json` writes, as gguf-py 0.19.0's `gguf_new_metadata` writes it: every
/// key starting with `tokenizer.chat_template` is removed and the new keys are added at the
/// end (named templates in the config's order, then `tokenizer.chat_templates`, then the
/// default template).
pub struct TemplateEdit {
    keys: Vec<(String, gguf_grammar::write::OwnedValue)>,
}

/// The edit the options ask for (`None`: none asked, or a config whose `chat_template` is
/// empty or missing, which gguf_new_metadata ignores). A template that does not parse is
/// refused (exit 2); one that llama.cpp's engine would not parse is written, with a warning.
pub fn template_edit(
    jinja: Option<&Path>,
    config: Option<&Path>,
) -> Result<Option<TemplateEdit>, Failure> {
    use gguf_grammar::write::OwnedValue;
    use gguf_grammar::ValueType;
    let read = |path: &Path| -> Result<String, Failure> {
        let bytes = crate::input::read_whole(path)
            .map_err(|e| Failure::Unreadable(format!("{}: {e}", crate::shown(path))))?;
        String::from_utf8(bytes)
            .map_err(|_| Failure::Unreadable(format!("{}: not UTF-8", crate::shown(path))))
    };
    // (name, template): `None` is the default.
    let mut templates: Vec<(Option<String>, String)> = Vec::new();
    let shown;
    if let Some(path) = jinja {
        shown = crate::shown(path);
        templates.push((None, read(path)?));
    } else if let Some(path) = config {
        shown = crate::shown(path);
        let bad = |what: &str| Failure::Unreadable(format!("{shown}: {what}"));
        let doc: serde_json::Value =
            serde_json::from_str(&read(path)?).map_err(|e| bad(&format!("not JSON: {e}")))?;
        match doc.get("chat_template") {
            None | Some(serde_json::Value::Null) => return Ok(None),
            Some(serde_json::Value::String(s)) if s.is_empty() => return Ok(None),
            Some(serde_json::Value::String(s)) => templates.push((None, s.clone())),
            Some(serde_json::Value::Array(list)) if list.is_empty() => return Ok(None),
            Some(serde_json::Value::Array(list)) => {
                for (i, choice) in list.iter().enumerate() {
                    let choice = choice
                        .as_object()
                        .ok_or_else(|| bad(&format!("chat_template[{i}] is not an object")))?;
                    let name = match choice.get("name") {
                        None | Some(serde_json::Value::Null) => String::new(),
                        Some(serde_json::Value::String(s)) => s.clone(),
                        Some(_) => {
                            return Err(bad(&format!("chat_template[{i}].name is not a string")))
                        }
                    };
                    let template = match choice.get("template") {
                        None | Some(serde_json::Value::Null) => continue,
                        Some(serde_json::Value::String(s)) => s.clone(),
                        Some(_) => {
                            return Err(bad(&format!(
                                "chat_template[{i}].template is not a string"
                            )))
                        }
                    };
                    // gguf-py keeps ASCII letters and digits and turns the rest into `_`.
                    let name: String = name
                        .chars()
                        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                        .collect();
                    if name.is_empty() {
                        continue;
                    }
                    templates.push(((name != "default").then_some(name), template));
                }
            }
            Some(_) => return Err(bad("chat_template is neither a string nor a list")),
        }
    } else {
        return Ok(None);
    }
    for (name, source) in &templates {
        let which = name.as_deref().map_or(String::new(), |n| format!(" {n:?}"));
        if let Err(e) = gguf_template::render::parse(source) {
            return Err(Failure::Unreadable(format!(
                "{shown}: the chat template{which} does not parse: {}; nothing written",
                terminal(e.to_string().as_bytes())
            )));
        }
        if let Some((line, column, construct)) = gguf_template::minja::llama_cpp_syntax(source) {
            eprintln!(
                "gguf: warning: {shown}: the chat template{which}, line {line}, column {column}: llama.cpp 0.3.16's engine does not parse {}; llama.cpp would use chatml instead",
                terminal(construct.as_bytes())
            );
        }
    }
    let mut keys: Vec<(String, OwnedValue)> = Vec::new();
    let mut put = |key: String, value: OwnedValue| match keys.iter_mut().find(|(k, _)| *k == key) {
        // A key given twice keeps its first place and takes the last value (a Python dict).
        Some(slot) => slot.1 = value,
        None => keys.push((key, value)),
    };
    let mut names: Vec<String> = Vec::new();
    let mut default = None;
    for (name, source) in templates {
        match name {
            None => default = Some(source),
            Some(name) => {
                put(
                    format!("{TEMPLATE_KEY}.{name}"),
                    OwnedValue::from(source.as_str()),
                );
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
    }
    if !names.is_empty() {
        put(
            "tokenizer.chat_templates".into(),
            OwnedValue::array(ValueType::String, names.iter().map(String::as_str)),
        );
    }
    if let Some(source) = default {
        put(TEMPLATE_KEY.into(), OwnedValue::from(source.as_str()));
    }
    Ok(Some(TemplateEdit { keys }))
}

impl TemplateEdit {
    /// Removes `gguf`'s template keys from `builder` and adds the new ones.
    pub fn apply(&self, gguf: &Gguf<'_>, builder: &mut gguf_grammar::write::GgufBuilder<'_>) {
        for kv in &gguf.kvs {
            if kv.key.as_bytes().starts_with(TEMPLATE_KEY.as_bytes()) {
                builder.remove(kv.key.as_bytes());
            }
        }
        for (key, value) in &self.keys {
            builder.set(key, value.clone());
        }
    }
}
