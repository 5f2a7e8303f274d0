//! `sluice eval`: judge calls with a chain of policy sets and print outcomes as JSON.

use std::io::{BufRead, Read, Write};
use std::path::Path;
use std::process::ExitCode;

use serde_json::{Value, json};
use sluice_compiler::ast::RuleKind;
use sluice_compiler::call::Call;
use sluice_compiler::decision::{AppliedEffect, Decision};
use sluice_compiler::interp::{Step, explain};
use sluice_compiler::ir::RuleMeta;
use sluice_compiler::load::read_text;
use sluice_runtime::chain::{Chain, ChainOutcome};
use sluice_runtime::config::Config;

use super::CliError;
use super::chain::{self, ChainArgs};

/// How the call is given and completed.
pub struct CallArgs<'a> {
    /// A file holding the call, or `-` for standard input.
    pub source: &'a str,
    /// `--command`: the `bash` call is built from this line.
    pub command: Option<&'a str>,
    /// `--context KEY=VALUE`, in order.
    pub context: &'a [String],
    pub agent: Option<&'a str>,
    pub labels: &'a [String],
}

/// How the outcome is printed.
pub struct Output {
    pub jsonl: bool,
    pub explain: bool,
    pub exit_code: bool,
}

/// Exit statuses with `--exit-code` (documented in README and lang-spec/eval-json.md).
const EXIT_ASK: u8 = 3;
const EXIT_DENY: u8 = 4;

/// The largest call `sluice eval` reads, as one JSON text or one line of `--jsonl` (see
/// lang-spec/eval-json.md): past it the call is refused unread, an error and never an allow.
const MAX_CALL_BYTES: usize = 1 << 20;

pub fn run(
    sets: &ChainArgs<'_>,
    call: &CallArgs<'_>,
    output: &Output,
) -> Result<ExitCode, CliError> {
    let overrides = Overrides::parse(call)?;
    let (chain, config) = chain::load(sets)?;
    let judge = Judge {
        chain: &chain,
        config: config.as_ref(),
        overrides: &overrides,
    };
    if output.jsonl {
        let input = open(call.source)?;
        return stream(
            &judge,
            &mut std::io::BufReader::new(input),
            output.exit_code,
        );
    }
    let call = match call.command {
        Some(line) => Call::new("bash", json!({ "command": line })),
        None => {
            let mut bytes = Vec::new();
            open(call.source)?
                .take(MAX_CALL_BYTES as u64 + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| format!("cannot read the call: {e}"))?;
            if bytes.len() > MAX_CALL_BYTES {
                return Err(too_large());
            }
            let text =
                String::from_utf8(bytes).map_err(|_| "the call is not valid UTF-8".to_string())?;
            if text.trim().is_empty() {
                return Err("the call is empty: give a JSON object with `tool` and `args`, or use `--command`".into());
            }
            Call::from_json(&text).map_err(|e| format!("invalid call: {e}"))?
        }
    };
    let call = judge.complete(call);
    let outcome = chain.evaluate(&call);
    if output.explain {
        print_explanation(&chain, &call, &outcome);
    } else {
        let out = serde_json::to_string_pretty(&outcome).map_err(|e| e.to_string())?;
        outln!("{out}");
    }
    Ok(if output.exit_code {
        decision_exit(outcome.decision)
    } else {
        ExitCode::SUCCESS
    })
}

fn open(source: &str) -> Result<Box<dyn Read>, CliError> {
    Ok(if source == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(source).map_err(|e| format!("cannot read `{source}`: {e}"))?)
    })
}

fn decision_exit(decision: Decision) -> ExitCode {
    match decision {
        Decision::Allow | Decision::Delegate => ExitCode::SUCCESS,
        Decision::Ask => ExitCode::from(EXIT_ASK),
        Decision::Deny => ExitCode::from(EXIT_DENY),
    }
}

/// What the command line adds to every call: `--context`, `--agent`, `--label`.
struct Overrides {
    context: Vec<(String, Value)>,
    agent: Option<String>,
    labels: Vec<String>,
}

impl Overrides {
    fn parse(call: &CallArgs<'_>) -> Result<Overrides, CliError> {
        let mut context = Vec::new();
        for pair in call.context {
            let Some((key, value)) = pair.split_once('=').filter(|(k, _)| !k.is_empty()) else {
                return Err(format!("`--context {pair}` is not `KEY=VALUE`"));
            };
            // A value that reads as JSON is that value (`hosts=["a","b"]`, `n=3`); any other is a
            // string (`workspace=/w`).
            let value =
                serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()));
            context.push((key.to_string(), value));
        }
        Ok(Overrides {
            context,
            agent: call.agent.map(str::to_string),
            labels: call.labels.to_vec(),
        })
    }
}

struct Judge<'a> {
    chain: &'a Chain,
    config: Option<&'a Config>,
    overrides: &'a Overrides,
}

impl Judge<'_> {
    /// The call as judged: the command line's context and agent over the call's, then the
    /// configuration's sources for whatever is still missing.
    fn complete(&self, mut call: Call) -> Call {
        if let Value::Object(fields) = &mut call.context {
            for (key, value) in &self.overrides.context {
                fields.insert(key.clone(), value.clone());
            }
        }
        if let Some(agent) = &self.overrides.agent {
            call.agent.id = agent.clone();
        }
        call.agent
            .labels
            .extend(self.overrides.labels.iter().cloned());
        if let Some(config) = self.config {
            config.complete(&mut call);
        }
        call
    }

    fn line(&self, text: &str) -> Result<ChainOutcome, String> {
        let call = Call::from_json(text).map_err(|e| format!("invalid call: {e}"))?;
        Ok(self.chain.evaluate(&self.complete(call)))
    }
}

/// One outcome per input line; a bad line gets an error object and the stream goes on.
fn stream(
    judge: &Judge<'_>,
    input: &mut dyn BufRead,
    exit_code: bool,
) -> Result<ExitCode, CliError> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut all_ok = true;
    let mut strictest = Decision::Delegate;
    let mut buffer = Vec::new();
    let mut line_number = 0usize;
    loop {
        buffer.clear();
        let (read, too_long) = read_line(input, &mut buffer)?;
        if read == 0 {
            break;
        }
        line_number += 1;
        let record = match std::str::from_utf8(&buffer) {
            _ if too_long => Err(too_large()),
            Err(_) => Err("line is not valid UTF-8".to_string()),
            Ok(text) if text.trim().is_empty() => continue,
            Ok(text) => judge.line(text),
        };
        let line = match record {
            Ok(outcome) => {
                strictest = strictest.max(outcome.decision);
                serde_json::to_value(&outcome)
                    .unwrap_or_else(|e| json!({ "line": line_number, "error": e.to_string() }))
            }
            Err(error) => {
                all_ok = false;
                json!({ "line": line_number, "error": error })
            }
        };
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(|e| format!("cannot write: {e}"))?;
    }
    Ok(match (all_ok, exit_code) {
        (false, _) => ExitCode::from(1),
        (true, true) => decision_exit(strictest),
        (true, false) => ExitCode::SUCCESS,
    })
}

/// Reads one line into `buffer`, keeping at most [`MAX_CALL_BYTES`] and a newline of it. Returns
/// how many bytes it read and whether the line was longer, so that a longer one is refused
/// without being held in memory.
fn read_line(input: &mut dyn BufRead, buffer: &mut Vec<u8>) -> Result<(usize, bool), CliError> {
    let error = |e: std::io::Error| format!("cannot read calls: {e}");
    let mut read = input
        .take(MAX_CALL_BYTES as u64 + 1)
        .read_until(b'\n', buffer)
        .map_err(error)?;
    let too_long = buffer.last() != Some(&b'\n') && read > MAX_CALL_BYTES;
    if too_long {
        let mut rest = Vec::new();
        loop {
            rest.clear();
            let n = input
                .take(1 << 16)
                .read_until(b'\n', &mut rest)
                .map_err(error)?;
            read += n;
            if n == 0 || rest.last() == Some(&b'\n') {
                break;
            }
        }
    }
    Ok((read, too_long))
}

fn too_large() -> String {
    format!("the call is larger than {MAX_CALL_BYTES} bytes (1 MiB), the most `sluice eval` reads")
}

fn print_explanation(chain: &Chain, call: &Call, outcome: &ChainOutcome) {
    outln!("decision: {}", outcome.decision.as_str());
    if let Some(reason) = &outcome.reason {
        outln!("reason:   {reason}");
    }
    if let Some(set) = &outcome.decided_by {
        outln!("decided by: {set}");
    }
    if outcome.undeclared {
        outln!(
            "tool:     `{}` is declared by no set: only rules on globs and `*` apply",
            outcome.tool
        );
    }
    if chain.links().len() > 1 {
        outln!("sets, in chain order:");
        for set in &outcome.sets {
            let said = if !set.applies {
                "not asked (its scope does not govern this agent)".to_string()
            } else {
                let by = set
                    .rule
                    .as_ref()
                    .map_or(String::new(), |r| format!(" by {r}"));
                let vetoes = match set.vetoes {
                    0 => String::new(),
                    n => format!(", {n} gate veto{}", if n == 1 { "" } else { "es" }),
                };
                format!("{}{by}{vetoes}", set.precheck.as_str())
            };
            outln!("  {}  =>  {said}", set.set);
        }
    }
    if !outcome.parts.is_empty() {
        outln!("parts:");
        for part in &outcome.parts {
            let by = part
                .rule
                .as_ref()
                .map_or(String::new(), |rule| format!(" by {}", rule.name));
            outln!("  {}  =>  {}{by}", part.part, part.decision.as_str());
        }
    }
    let Some(meta) = &outcome.rule else {
        let who = match chain.links().len() {
            1 => "the set has no opinion on this call, so it delegates".to_string(),
            n => {
                format!("none of the {n} sets has an opinion on this call, so the chain delegates")
            }
        };
        outln!("no rule matched: {who}.");
        outln!(
            "delegate: Sluice leaves the call to whoever asked. A Sluice runtime asks its next \
             link and runs the call when no link is left (gates permitting), an agent's hook \
             leaves it to the agent's own permissions, and `sluice eval --exit-code` exits 0 as \
             for allow."
        );
        print_unmatched(chain, call, outcome);
        print_rewrites(outcome);
        return;
    };
    outln!(
        "rule:     {} {} ({}:{})",
        meta.kind.keyword(),
        meta.name,
        meta.file,
        meta.line
    );
    let text = read_text(Path::new(&*meta.file)).unwrap_or_default();
    for (i, line) in text
        .get(meta.span.range())
        .unwrap_or("")
        .lines()
        .enumerate()
    {
        outln!("  {:>4} | {line}", meta.line as usize + i);
    }
    let program = chain
        .links()
        .iter()
        .map(|link| link.policy.executable.program())
        .find(|program| {
            program
                .rules
                .iter()
                .any(|r| r.meta.file == meta.file && r.meta.name == meta.name)
        });
    if let Some(program) = program
        && let Some(rule) = program.rules.iter().find(|r| r.meta.name == meta.name)
    {
        outln!("conditions:");
        for step in explain(program, rule, call) {
            let source = step_source(&text, &step);
            let value = match step.value {
                Ok(v) => v,
                Err(e) => format!("error: {e}"),
            };
            outln!("  {}{source}  =>  {value}", "  ".repeat(step.depth));
        }
    }
    let others: Vec<String> = outcome
        .matched
        .iter()
        .filter(|m| m.rule.name != meta.name)
        .map(|m| format!("{} ({})", m.rule.name, m.effect.as_str()))
        .collect();
    if !others.is_empty() {
        outln!("also matched: {}", others.join(", "));
    }
    for veto in &outcome.gates {
        outln!(
            "gate {} ({}) vetoed: {}",
            veto.veto.rule.name,
            veto.set,
            veto.veto.reason
        );
    }
    for error in &outcome.errors {
        outln!(
            "error in {} ({}): {}",
            error.failure.rule.name,
            error.set,
            error.failure.error
        );
    }
    print_unmatched(chain, call, outcome);
    print_rewrites(outcome);
}

/// The pre-checks and gates of the sets asked that apply to the tool and did not match, each with
/// the first of its sub-conditions that was false.
fn print_unmatched(chain: &Chain, call: &Call, outcome: &ChainOutcome) {
    let fired = |rule: &RuleMeta| {
        outcome
            .matched
            .iter()
            .any(|m| m.rule.name == rule.name && m.rule.file == rule.file)
            || outcome
                .gates
                .iter()
                .any(|g| g.veto.rule.name == rule.name && g.veto.rule.file == rule.file)
    };
    let mut lines = Vec::new();
    for (link, verdict) in chain.links().iter().zip(&outcome.sets) {
        if !verdict.applies {
            continue;
        }
        let program = link.policy.executable.program();
        let mut text = String::new();
        let mut text_of = String::new();
        for rule in program.rules.iter().filter(|r| {
            matches!(r.meta.kind, RuleKind::Precheck | RuleKind::Gate)
                && r.applies_to(&call.tool)
                && !fired(&r.meta)
        }) {
            if text_of != *rule.meta.file {
                text = read_text(Path::new(&*rule.meta.file)).unwrap_or_default();
                text_of = rule.meta.file.to_string();
            }
            let steps = explain(program, rule, call);
            let falsified =
                first_false(&steps).map_or("no sub-condition held".to_string(), |step| {
                    let source = step_source(&text, step);
                    format!("{source}  =>  false")
                });
            lines.push(format!(
                "  {} {} ({}): {falsified}",
                rule.meta.kind.keyword(),
                rule.meta.name,
                verdict.set
            ));
        }
    }
    if !lines.is_empty() {
        outln!("did not match:");
        for line in lines {
            outln!("{line}");
        }
    }
}

/// The first sub-condition that was false and has no false part of its own, else the first false.
fn first_false(steps: &[Step]) -> Option<&Step> {
    let is_false = |step: &Step| step.value.as_deref() == Ok("false");
    let leaf = steps.iter().enumerate().find(|(i, step)| {
        is_false(step) && steps.get(i + 1).is_none_or(|next| next.depth <= step.depth)
    });
    leaf.map(|(_, step)| step)
        .or_else(|| steps.iter().find(|step| is_false(step)))
}

/// What each post-check did to the result, with the rule that did it.
fn print_rewrites(outcome: &ChainOutcome) {
    let Some(post) = outcome.postcheck.as_ref().filter(|p| !p.steps.is_empty()) else {
        return;
    };
    outln!("post-checks:");
    for step in &post.steps {
        for effect in &step.effects {
            let what = match effect {
                AppliedEffect::Accept => "accepted the result".to_string(),
                AppliedEffect::Content(content) => format!("replaced the content: {content:?}"),
                AppliedEffect::Value(value) => format!("replaced the value: {value}"),
                AppliedEffect::Attach(text) => format!("attached context: {text:?}"),
                AppliedEffect::Fail(failure) => format!("failed the result: {:?}", failure.message),
                AppliedEffect::Label(grant) => match grant.expiry {
                    Some(expiry) => format!(
                        "labelled the session {:?} for {}",
                        grant.label,
                        sluice_compiler::format::expiry_text(expiry)
                    ),
                    None => format!("labelled the session {:?}", grant.label),
                },
                AppliedEffect::Redacted(redacted) => {
                    let mut channels = Vec::new();
                    if let Some(content) = &redacted.content {
                        channels.push(format!("the content: {content:?}"));
                    }
                    if let Some(value) = &redacted.value {
                        channels.push(format!("the value: {value}"));
                    }
                    if let Some(error) = &redacted.error {
                        channels.push(format!("the error: {error:?}"));
                    }
                    format!("redacted {}", channels.join("; "))
                }
            };
            outln!(
                "  {} ({}:{}): {what}",
                step.rule.name,
                step.rule.file,
                step.rule.line
            );
        }
    }
}

/// A sub-condition's source text, on one line.
fn step_source(text: &str, step: &Step) -> String {
    text.get(step.span.range())
        .unwrap_or("?")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
