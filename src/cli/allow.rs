//! `sluice allow`: "always allow", checked before it is saved. For a call that was asked about,
//! it proposes the narrowest rule that allows it (or one broadened as asked), and writes it only
//! when no test, no rule example and no logged call that was denied or asked about would be
//! allowed because of it.
//!
//! The rules go to a set of the user's own (`.sluice/allowed.sluice` beside the configuration),
//! placed first in the chain so that its `allow` answers before the sets that asked; a shipped
//! set is never edited, and a gate's veto still holds over it.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::ValueEnum;
use serde_json::Value as Json;
use sluice_compiler::call::Call;
use sluice_compiler::check::Expect;
use sluice_compiler::db::Database;
use sluice_compiler::decision::Decision;
use sluice_compiler::interp::Evaluator;
use sluice_compiler::jit::Backend;
use sluice_compiler::load::Workspace;
use sluice_compiler::testing::{example_calls, test_calls};
use sluice_runtime::chain::Chain;
use sluice_runtime::config::Config;
use sluice_runtime::session::FileStore;
use sluice_runtime::session::approvals::Approvals;

use super::CliError;

/// How far past the call itself the proposed rule reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Broaden {
    /// A command whose words start with the call's program and first argument
    ArgvPrefix,
    /// Any path in the call's path's directory
    PathDir,
    /// Any address on the call's URL's host
    Host,
}

/// Where the call comes from.
pub enum Source<'a> {
    /// A call as `sluice eval` reads it.
    File(&'a Path),
    /// The latest call a person approved, of the session or of any.
    LastApproved(Option<&'a str>),
}

pub struct AllowArgs<'a> {
    pub from: Source<'a>,
    pub broaden: Option<Broaden>,
    pub config: Option<&'a Path>,
    pub log: Option<&'a Path>,
    /// The user's own set; by default `.sluice/allowed.sluice` beside the configuration.
    pub set: Option<&'a Path>,
    pub dry_run: bool,
}

/// The latest call the hooks saw a person approve.
fn last_approved(session: Option<&str>) -> Result<Call, CliError> {
    let dir =
        FileStore::default_dir().ok_or("no state directory: set `HOME` or `XDG_STATE_HOME`")?;
    let noted = Approvals::new(&dir)
        .last(session)
        .map_err(|e| format!("cannot read the approvals in {}: {e}", dir.display()))?;
    let Some(noted) = noted else {
        return Err(match session {
            Some(id) => format!("no call of session `{id}` was approved after the chain asked about it"),
            None => "no call was approved after the chain asked about it: `sluice hook` notes such calls as they run".into(),
        });
    };
    outln!(
        "the latest approved call (session {}): {} {}\n",
        noted.session,
        noted.call.tool,
        shown(&noted.call.args)
    );
    Ok(noted.call)
}

/// The set a new file of allowed calls starts with.
const HEADER: &str = "policy allowed \"Calls a person allowed with `sluice allow`, each checked against the chain's tests, examples and logged decisions before it was written\"\n\nimport \"builtin:vocabulary/tools.sluice\"\n\n# The host's directories, when it gives them.\ncontext { workspace: string?, home: string? }\n";

pub fn run(args: &AllowArgs<'_>) -> Result<ExitCode, CliError> {
    let call = match args.from {
        Source::File(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            Call::from_json(text.trim()).map_err(|e| format!("{}: {e}", path.display()))?
        }
        Source::LastApproved(session) => last_approved(session)?,
    };
    let config = super::chain::config(args.config)?;
    let set = args.set.map_or_else(
        || config.dir.join(".sluice/allowed.sluice"),
        Path::to_path_buf,
    );
    let old = config
        .chain(Backend::Interp)
        .map_err(super::chain::report)?;
    let before = decide(&config, &old, &call);
    match before {
        Decision::Allow => {
            outln!("the chain already allows this call: nothing to add");
            return Ok(ExitCode::SUCCESS);
        }
        Decision::Deny if vetoed(&config, &old, &call) => {
            return Err("a gate vetoes this call, and no allow rule can change that".into());
        }
        _ => {}
    }
    let existing = std::fs::read_to_string(&set).unwrap_or_else(|_| HEADER.to_string());
    // A relative path is proposed as the workspace resolves it.
    let mut completed = call.clone();
    config.complete(&mut completed);
    let rule = propose(&completed, args.broaden, &existing)?;
    outln!("proposed rule, for {}:\n\n{rule}", set.display());

    // The chain as it would be: the user's set, with the rule, first.
    let trial_dir =
        tempfile::tempdir().map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    let trial_set = trial_dir.path().join("allowed.sluice");
    std::fs::write(&trial_set, format!("{existing}\n{rule}"))
        .map_err(|e| format!("cannot write {}: {e}", trial_set.display()))?;
    let trial_text = with_set_first(config.text(), &config.dir, &set, Some(&trial_set));
    let trial = Config::parse(&config.path, trial_text).map_err(super::chain::report)?;
    let new = trial.chain(Backend::Interp).map_err(super::chain::report)?;
    if decide(&trial, &new, &call) != Decision::Allow {
        return Err("the proposed rule does not allow the call (a set before it, or a gate, decides it): nothing written".into());
    }

    let mut flips = Vec::new();
    let checked = held_to(&config, args.log)?;
    for case in &checked {
        let was = decide(&config, &old, &case.call);
        let now = decide(&trial, &new, &case.call);
        if matches!(was, Decision::Deny | Decision::Ask) && now == Decision::Allow {
            flips.push(format!(
                "{}: {} {} was {}, would be allowed",
                case.source,
                case.call.tool,
                shown(&case.call.args),
                was.as_str()
            ));
        }
    }
    outln!(
        "\nchecked against {} calls ({} tests, {} rule examples, {} logged): {}",
        checked.len(),
        checked.iter().filter(|c| c.kind == Kind::Test).count(),
        checked.iter().filter(|c| c.kind == Kind::Example).count(),
        checked.iter().filter(|c| c.kind == Kind::Logged).count(),
        if flips.is_empty() {
            "nothing that was denied or asked about would be allowed".to_string()
        } else {
            format!("{} would flip to allow", flips.len())
        }
    );
    if !flips.is_empty() {
        for flip in &flips {
            outln!("  {flip}");
        }
        outln!(
            "\nrefused: nothing written. These calls are meant to be denied or asked about; without --broaden the rule reaches only this call, and if it is one of them, change the policy and its tests by hand."
        );
        return Ok(ExitCode::from(1));
    }
    if args.dry_run {
        outln!("--dry-run: nothing written");
        return Ok(ExitCode::SUCCESS);
    }
    write_locked(&set, |current| {
        // What was checked is the set as it was read: another `sluice allow` that wrote in
        // between would make the check stale, and could take the same rule name.
        let current = current.unwrap_or_else(|| HEADER.to_string());
        if current != existing {
            return Err(format!(
                "{} changed while the rule was checked: nothing written; run `sluice allow` again",
                set.display()
            ));
        }
        Ok(format!("{current}\n{rule}"))
    })?;
    let config_text = with_set_first(config.text(), &config.dir, &set, None);
    if config_text != config.text() {
        write_locked(&config.path, |_| Ok(config_text.clone()))?;
        outln!(
            "{} now lists {} first",
            config.path.display(),
            set.display()
        );
    }
    outln!("written to {}", set.display());
    Ok(ExitCode::SUCCESS)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Test,
    Example,
    Logged,
}

/// A call the proposal is held to, and where it came from.
struct Case {
    call: Call,
    kind: Kind,
    source: String,
}

/// Every test block and rule example of the chain's sets that expects a denial or an ask, and
/// every call of the log.
fn held_to(config: &Config, log: Option<&Path>) -> Result<Vec<Case>, CliError> {
    let mut cases = Vec::new();
    let mut db = Database::default();
    let workspace = Workspace::open(&mut db, &config.set_paths()).map_err(|e| e.to_string())?;
    for compiled in workspace.compiled(&db) {
        let Some(program) = compiled.program.as_deref() else {
            continue;
        };
        // A sequence's later calls are held to in the session its earlier calls left.
        let reference = Evaluator::interpreted(program);
        for test in &compiled.checked.tests {
            let calls = test_calls(test, &|call| reference.evaluate(call));
            for (step, (call, _)) in test.steps.iter().zip(calls) {
                let strict = step.expects.iter().any(|(expect, _)| {
                    matches!(expect, Expect::Verdict(word) if word == "deny" || word == "ask")
                });
                if strict {
                    cases.push(Case {
                        call,
                        kind: Kind::Test,
                        source: format!("test \"{}\" ({})", test.name, test.file),
                    });
                }
            }
        }
        for (call, word) in example_calls(&compiled.checked) {
            if matches!(word, "deny" | "ask" | "veto") {
                cases.push(Case {
                    call,
                    kind: Kind::Example,
                    source: format!("an example of {}", compiled.name),
                });
            }
        }
    }
    if let Some(log) = log {
        let text = std::fs::read_to_string(log)
            .map_err(|e| format!("cannot read {}: {e}", log.display()))?;
        for (index, line) in text.lines().enumerate() {
            if let Ok(Some(call)) = super::replay::recorded_call(line) {
                cases.push(Case {
                    call,
                    kind: Kind::Logged,
                    source: format!("{} line {}", log.display(), index + 1),
                });
            }
        }
    }
    Ok(cases)
}

fn decide(config: &Config, chain: &Chain, call: &Call) -> Decision {
    let mut call = call.clone();
    config.complete(&mut call);
    chain.evaluate(&call).decision
}

fn vetoed(config: &Config, chain: &Chain, call: &Call) -> bool {
    let mut call = call.clone();
    config.complete(&mut call);
    !chain.evaluate(&call).gates.is_empty()
}

/// The narrowest rule that allows `call`, or one broadened as asked, named so that it does not
/// clash with a rule already in `existing`.
fn propose(call: &Call, broaden: Option<Broaden>, existing: &str) -> Result<String, CliError> {
    let field = |name: &str| call.args.get(name).and_then(Json::as_str);
    let (slug, condition) = match (broaden, field("command"), field("path"), field("url")) {
        (None, Some(command), ..) => (
            words(command, 3),
            format!("args.command == {}", quoted(command)?),
        ),
        (Some(Broaden::ArgvPrefix), Some(command), ..) => {
            let argv = sluice_compiler::shell::parse_command(command, None);
            let [part] = argv.as_slice() else {
                return Err(
                    "the command has several parts: allow it as it is, without --broaden".into(),
                );
            };
            let prefix: Vec<&String> = part.argv.iter().take(2).collect();
            if prefix.is_empty() || part.unresolved.is_some() {
                return Err(
                    "the command's words cannot be read for a prefix: allow it as it is".into(),
                );
            }
            let items = prefix
                .iter()
                .map(|w| quoted(w))
                .collect::<Result<Vec<_>, _>>()?
                .join(", ");
            let rule_words = prefix
                .iter()
                .map(|w| w.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            let condition = format!(
                "\n  for cmd in shell(args.command, args.cwd ?? context.workspace, context.home)\n  when cmd.argv ~ [{items}, ..]"
            );
            return Ok(named(
                existing,
                &words(&rule_words, 2),
                &call.tool,
                &condition,
            ));
        }
        (None, None, Some(path), _) => (words(path, 2), format!("args.path == {}", quoted(path)?)),
        (Some(Broaden::PathDir), _, Some(path), _) => {
            let workspace = call
                .context
                .get("workspace")
                .and_then(Json::as_str)
                .unwrap_or("/");
            let absolute = lexical(&Path::new(workspace).join(path));
            let dir = absolute
                .parent()
                .filter(|dir| !dir.as_os_str().is_empty() && dir != &Path::new("/"))
                .ok_or("the path has no directory narrower than the root: allow it as it is")?;
            let dir = dir.to_string_lossy();
            (
                words(&dir, 2),
                format!(
                    "path(args.path, context.workspace ?? \"/\").under({})",
                    quoted(&dir)?
                ),
            )
        }
        (None, None, None, Some(url)) => (words(url, 2), format!("args.url == {}", quoted(url)?)),
        (Some(Broaden::Host), .., Some(url)) => {
            let host = url::Url::parse(url)
                .ok()
                .and_then(|u| u.host_str().map(str::to_string))
                .ok_or("the URL has no host")?;
            (
                words(&host, 2),
                format!("url(args.url).host == {}", quoted(&host)?),
            )
        }
        (Some(broaden), ..) => {
            return Err(format!(
                "--broaden {} does not fit a `{}` call",
                broaden
                    .to_possible_value()
                    .map_or_else(String::new, |v| v.get_name().to_string()),
                call.tool
            ));
        }
        _ => {
            return Err(format!(
                "cannot propose a narrow rule for `{}`: it has no command, path or URL",
                call.tool
            ));
        }
    };
    Ok(named(
        existing,
        &slug,
        &call.tool,
        &format!(" when {condition}"),
    ))
}

/// A path with `.` and `..` resolved by its text, as the language's `path()` does.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::Normal(name) => out.push(name),
            _ => {}
        }
    }
    out
}

/// A rule called `allow_SLUG` (with a number when that name is taken).
fn named(existing: &str, slug: &str, tool: &str, condition: &str) -> String {
    let base = format!("allow_{slug}");
    let mut name = base.clone();
    let mut n = 2;
    while existing.contains(&format!(" {name} on ")) {
        name = format!("{base}_{n}");
        n += 1;
    }
    format!("precheck {name} on {tool}{condition}\n  => allow\n")
}

/// A name from the first words of a text: lowercase letters and digits joined by `_`.
fn words(text: &str, most: usize) -> String {
    let slug: Vec<String> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(most)
        .map(str::to_ascii_lowercase)
        .collect();
    if slug.is_empty() {
        "call".into()
    } else {
        slug.join("_")
    }
}

/// A string literal of the language: quotes, backslashes and braces escaped.
fn quoted(text: &str) -> Result<String, CliError> {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' | '\\' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                return Err(
                    "the call holds control characters a rule cannot spell: allow it by hand"
                        .into(),
                );
            }
            c => out.push(c),
        }
    }
    out.push('"');
    Ok(out)
}

/// The configuration's text with `set` as its first `[[policy]]` (named relative to the
/// configuration when it is beside it), or with `trial` standing in for it; unchanged when
/// the set is listed already.
fn with_set_first(text: &str, dir: &Path, set: &Path, trial: Option<&Path>) -> String {
    let named = set
        .strip_prefix(dir)
        .map_or_else(|_| set.to_path_buf(), Path::to_path_buf);
    let named = named.to_string_lossy().replace('\\', "/");
    let listed = format!("set = \"{named}\"");
    let entry = format!("[[policy]]\n{listed}\n\n");
    match (trial, text.contains(&listed)) {
        (None, true) => text.to_string(),
        (Some(trial), true) => text.replace(&listed, &format!("set = \"{}\"", trial.display())),
        (trial, false) => {
            let entry = match trial {
                Some(trial) => format!("[[policy]]\nset = \"{}\"\n\n", trial.display()),
                None => entry,
            };
            // Before the first table of sets, not a mention of one in a comment.
            let first = if text.starts_with("[[policy]]") {
                Some(0)
            } else {
                text.find("\n[[policy]]").map(|at| at + 1)
            };
            match first {
                Some(at) => format!("{}{entry}{}", &text[..at], &text[at..]),
                None => format!("{entry}{text}"),
            }
        }
    }
}

/// Rewrites a file under an exclusive lock on a lock file beside it: the new text goes to a
/// temporary file that is renamed into place, so a reader sees the old text or the new.
fn write_locked(
    path: &Path,
    make: impl FnOnce(Option<String>) -> Result<String, CliError>,
) -> Result<(), CliError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let lock_path = PathBuf::from(format!("{}.lock", path.display()));
    let lock = std::fs::File::create(&lock_path)
        .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
    lock.lock()
        .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
    let current = std::fs::read_to_string(path).ok();
    let text = make(current)?;
    let temporary = PathBuf::from(format!("{}.tmp.{}", path.display(), std::process::id()));
    let written = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(text.as_bytes())?;
        file.sync_data()?;
        std::fs::rename(&temporary, path)
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(format!("cannot write {}: {error}", path.display()));
    }
    Ok(())
}

/// A call's arguments on one line, shortened.
fn shown(args: &Json) -> String {
    let text = match args.get("command").and_then(Json::as_str) {
        Some(command) => format!("`{command}`"),
        None => args.to_string(),
    };
    let mut short = String::new();
    for c in text.chars().take(100) {
        let _ = write!(short, "{c}");
    }
    if short.len() < text.len() {
        short.push('…');
    }
    short
}
