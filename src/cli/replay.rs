//! `sluice replay`: decides every recorded call again under two configurations (or one
//! configuration at two git revisions) and shows the calls whose decision or deciding rule
//! changed, grouped by rule. A policy edit then never changes old decisions silently.
//!
//! The log is read line by line: a decision log line of `sluice serve` or `sluice mcp` (its
//! `tool`, `agent` and `input`), or a call as `sluice eval` reads it. A line with a post-check outcome is not replayed: the log never keeps
//! the tool's result, which post-checks judge.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::Serialize;
use serde_json::{Value as Json, json};
use sluice_compiler::call::{Agent, Call};
use sluice_compiler::decision::Decision;
use sluice_compiler::jit::Backend;
use sluice_runtime::chain::Chain;
use sluice_runtime::config::Config;

use super::{CliError, Format};

/// What to replay, and against what.
pub struct ReplayArgs<'a> {
    pub log: &'a Path,
    /// The configuration the log was decided under (or, with `revisions`, the configuration's
    /// path in the repository).
    pub config: &'a Path,
    /// The edited configuration; with `revisions`, unused.
    pub against: Option<&'a Path>,
    /// `OLD..NEW` (or `OLD..` for the working tree): the configuration at two git revisions.
    pub revisions: Option<&'a str>,
    pub format: Format,
    pub backend: Backend,
}

/// A configuration and the chain compiled from it.
type Loaded = (Config, Chain);

/// One call's decision under one chain.
#[derive(Clone, Debug, PartialEq, Serialize)]
struct Verdict {
    decision: Decision,
    /// The deciding rule, as `NAME (FILE:LINE)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    rule: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

/// A call whose verdict changed.
#[derive(Debug, Serialize)]
struct Change {
    /// The line of the log it was read from (1-based).
    line: usize,
    tool: String,
    args: Json,
    old: Verdict,
    new: Verdict,
}

#[derive(Debug, Default, Serialize)]
struct Summary {
    /// Lines read as calls and decided twice.
    replayed: usize,
    /// Post-check lines, which cannot be replayed without the tool's result.
    skipped: usize,
    /// Lines that are neither a decision log line nor a call, with why.
    unreadable: Vec<(usize, String)>,
    changed: Vec<Change>,
}

pub fn run(args: &ReplayArgs<'_>) -> Result<ExitCode, CliError> {
    let text = std::fs::read_to_string(args.log)
        .map_err(|e| format!("cannot read {}: {e}", args.log.display()))?;
    let (old, new) = chains(args)?;
    let mut summary = Summary::default();
    let mut calls = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match recorded_call(line) {
            Ok(Some(call)) => calls.push((index + 1, call)),
            Ok(None) => summary.skipped += 1,
            Err(why) => summary.unreadable.push((index + 1, why)),
        }
    }
    summary.replayed = calls.len();
    summary.changed = decide_all(&calls, (&old, &new));
    match args.format {
        Format::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?
        ),
        Format::Human => out!("{}", human(&summary)),
    }
    for (line, why) in summary.unreadable.iter().take(10) {
        eprintln!("sluice replay: line {line} is not a recorded call: {why}");
    }
    Ok(if summary.changed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The two chains: from two configurations, or from one configuration at two revisions.
fn chains(args: &ReplayArgs<'_>) -> Result<(Loaded, Loaded), CliError> {
    let load = |path: &Path| -> Result<Loaded, CliError> {
        let config = super::chain::config(Some(path))?;
        let chain = config.chain(args.backend).map_err(super::chain::report)?;
        Ok((config, chain))
    };
    match (args.revisions, args.against) {
        (Some(revisions), _) => {
            let (old_rev, new_rev) = revisions
                .split_once("..")
                .ok_or_else(|| format!("`--revisions {revisions}`: write it `OLD..NEW` or `OLD..`"))?;
            let (top, inside) = in_repository(args.config)?;
            let old_tree = checkout(&top, old_rev)?;
            let old = load(&old_tree.path().join(&inside))?;
            let new = if new_rev.is_empty() {
                load(args.config)?
            } else {
                let new_tree = checkout(&top, new_rev)?;
                load(&new_tree.path().join(&inside))?
            };
            Ok((old, new))
        }
        (None, Some(against)) => Ok((load(args.config)?, load(against)?)),
        (None, None) => Err("name the edited configuration with `--against NEW`, or two git revisions with `--revisions OLD..NEW`".into()),
    }
}

/// The repository the configuration is in, and the configuration's path inside it.
fn in_repository(config: &Path) -> Result<(PathBuf, PathBuf), CliError> {
    let absolute = std::fs::canonicalize(config)
        .map_err(|e| format!("cannot read {}: {e}", config.display()))?;
    let dir = absolute.parent().unwrap_or(Path::new("/"));
    let top = git(&["rev-parse", "--show-toplevel"], Some(dir))?;
    let top = std::fs::canonicalize(top.trim())
        .map_err(|e| format!("cannot read the repository: {e}"))?;
    let inside = absolute
        .strip_prefix(&top)
        .map(Path::to_path_buf)
        .map_err(|_| {
            format!(
                "{} is not inside the git repository at {}",
                config.display(),
                top.display()
            )
        })?;
    Ok((top, inside))
}

/// A revision's tree, written to a temporary directory that is removed when dropped.
fn checkout(top: &Path, revision: &str) -> Result<tempfile::TempDir, CliError> {
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    let archive = dir.path().join(".revision.tar");
    git(
        &[
            "archive",
            "--format=tar",
            "-o",
            &archive.to_string_lossy(),
            revision,
        ],
        Some(top),
    )?;
    let unpacked = std::process::Command::new("tar")
        .arg("-xf")
        .arg(&archive)
        .arg("-C")
        .arg(dir.path())
        .status()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if !unpacked.success() {
        return Err(format!("cannot unpack revision `{revision}`"));
    }
    Ok(dir)
}

fn git(args: &[&str], dir: Option<&Path>) -> Result<String, CliError> {
    let mut command = std::process::Command::new("git");
    if let Some(dir) = dir {
        command.arg("-C").arg(dir);
    }
    let output = command
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`git {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The call a log line records: `None` for a post-check line.
pub(super) fn recorded_call(line: &str) -> Result<Option<Call>, String> {
    let value: Json = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let Some(record) = value.as_object() else {
        return Err("not a JSON object".into());
    };
    if !record.contains_key("input") {
        // A call as `sluice eval` reads it.
        return Call::from_json(line).map(Some).map_err(|e| e.to_string());
    }
    if record.get("postcheck").is_some_and(|p| !p.is_null()) {
        return Ok(None);
    }
    let tool = record
        .get("tool")
        .and_then(Json::as_str)
        .ok_or("a decision log line without `tool`")?;
    let input = record.get("input").unwrap_or(&Json::Null);
    let agent = match record.get("agent") {
        Some(Json::String(id)) => Agent {
            id: id.clone(),
            ..Agent::default()
        },
        Some(agent @ Json::Object(_)) => {
            serde_json::from_value(agent.clone()).map_err(|e| format!("`agent`: {e}"))?
        }
        _ => Agent::default(),
    };
    let call = Call {
        tool: tool.to_string(),
        args: input.get("args").cloned().unwrap_or_else(|| json!({})),
        agent,
        context: input.get("context").cloned().unwrap_or_else(|| json!({})),
        result: None,
        // The session as the call saw it: a label-reading rule is judged on the same labels.
        session: match input.get("session") {
            Some(session) => Some(
                serde_json::from_value(session.clone()).map_err(|e| format!("`session`: {e}"))?,
            ),
            None => None,
        },
    };
    call.validate().map_err(|e| e.to_string())?;
    Ok(Some(call))
}

/// Decides every call under both chains, on every core, and keeps the calls that changed, in
/// log order.
fn decide_all(calls: &[(usize, Call)], chains: (&Loaded, &Loaded)) -> Vec<Change> {
    let workers = std::thread::available_parallelism().map_or(1, usize::from);
    let chunk = calls.len().div_ceil(workers).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = calls
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .filter_map(|c| compare(c, chains))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap_or_default())
            .collect()
    })
}

fn compare((line, call): &(usize, Call), (old, new): (&Loaded, &Loaded)) -> Option<Change> {
    let verdict = |(config, chain): &Loaded| {
        let mut call = call.clone();
        config.complete(&mut call);
        let outcome = chain.evaluate(&call);
        Verdict {
            decision: outcome.decision,
            rule: outcome
                .rule
                .map(|r| format!("{} ({}:{})", r.name, r.file, r.line)),
            reason: outcome.reason,
        }
    };
    let (before, after) = (verdict(old), verdict(new));
    let same = before.decision == after.decision && rule_name(&before) == rule_name(&after);
    (!same).then(|| Change {
        line: *line,
        tool: call.tool.clone(),
        args: call.args.clone(),
        old: before,
        new: after,
    })
}

/// A rule's name without where it is: a rule that only moved in its file did not change.
fn rule_name(verdict: &Verdict) -> Option<&str> {
    verdict
        .rule
        .as_deref()
        .map(|rule| rule.split(" (").next().unwrap_or(rule))
}

fn human(summary: &Summary) -> String {
    let mut out = format!(
        "{} of {} recorded calls decide differently",
        summary.changed.len(),
        summary.replayed
    );
    if summary.skipped > 0 {
        out.push_str(&format!(
            " ({} post-check lines not replayed: the log keeps no results)",
            summary.skipped
        ));
    }
    out.push('\n');
    // Grouped by the rule that made the difference: the new deciding rule, or the old one
    // that no longer decides.
    let mut groups: BTreeMap<String, Vec<&Change>> = BTreeMap::new();
    for change in &summary.changed {
        let rule = change
            .new
            .rule
            .clone()
            .or_else(|| change.old.rule.clone())
            .unwrap_or_else(|| "no rule".into());
        groups.entry(rule).or_default().push(change);
    }
    for (rule, changes) in groups {
        out.push_str(&format!("\n{rule}: {} call(s)\n", changes.len()));
        for change in changes {
            out.push_str(&format!(
                "  line {}: {} {}  {} -> {}\n",
                change.line,
                change.tool,
                shown(&change.args),
                change.old.decision.as_str(),
                change.new.decision.as_str()
            ));
        }
    }
    out
}

/// A call's arguments on one line, shortened: a command as its text.
fn shown(args: &Json) -> String {
    let text = match args.get("command").and_then(Json::as_str) {
        Some(command) => format!("`{command}`"),
        None => args.to_string(),
    };
    let mut short: String = text.chars().take(120).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    short
}
