//! Agent harness hooks: one hook event in, one answer out, in the harness's own contract.
//!
//! Claude Code, Codex CLI, Gemini CLI and GitHub Copilot CLI each run a command before and after
//! every tool call, pass it a JSON event on stdin, and read its answer from stdout and its exit
//! status. One module per harness reads its event into calls of the shared tool vocabulary and
//! writes the chain's verdict back in its terms (lang-spec/hooks.md has the tables).
//!
//! Every harness treats a hook that crashes, hangs or answers garbage as "go ahead", so nothing
//! here may fail open: every error becomes the harness's strongest block, with a reason.

mod claude;
mod codex;
mod copilot;
mod fields;
mod gemini;
mod http;
mod output;
mod patch;
mod sessions;

use serde_json::{Map, Value};
use sluice_compiler::call::Call;
use sluice_compiler::decision::{Decision, PostcheckKind};
use sluice_compiler::ir::RuleMeta;

use crate::chain::{Chain, ChainOutcome};
use crate::config::Config;
use crate::session::SessionStore;

pub use fields::quote as shell_quote;
pub use http::as_json;
pub use output::{Rewrite, postcheck, withheld};

/// The harnesses Sluice answers hooks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Harness {
    Claude,
    Codex,
    Gemini,
    Copilot,
}

impl Harness {
    pub const ALL: [Harness; 4] = [
        Harness::Claude,
        Harness::Codex,
        Harness::Gemini,
        Harness::Copilot,
    ];

    /// The name on the command line: `sluice hook NAME`.
    /// How a decision log names the hook that decided: `hook:claude`, `hook:codex`, ….
    pub fn endpoint(self) -> &'static str {
        match self {
            Harness::Claude => "hook:claude",
            Harness::Codex => "hook:codex",
            Harness::Gemini => "hook:gemini",
            Harness::Copilot => "hook:copilot",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Harness::Claude => "claude",
            Harness::Codex => "codex",
            Harness::Gemini => "gemini",
            Harness::Copilot => "copilot",
        }
    }

    pub fn parse(name: &str) -> Option<Harness> {
        Harness::ALL.into_iter().find(|h| h.name() == name)
    }

    /// The agent id calls carry, which `scope = "agent:ID"` in a configuration selects.
    pub fn agent_id(self) -> &'static str {
        match self {
            Harness::Claude => "claude-code",
            Harness::Codex => "codex",
            Harness::Gemini => "gemini-cli",
            Harness::Copilot => "copilot-cli",
        }
    }
}

/// When in the tool's life the event comes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Before the tool runs (`PreToolUse`, `BeforeTool`, `preToolUse`).
    Pre,
    /// When the harness is about to ask the user (`PermissionRequest`).
    Permission,
    /// After the tool ran, before the model sees its output.
    Post,
}

/// What the hook knows of the machine it runs on, beyond the event.
#[derive(Clone, Debug, Default)]
pub struct Host {
    /// The project directory the harness names in its environment (`CLAUDE_PROJECT_DIR`,
    /// `GEMINI_PROJECT_DIR`), if any.
    pub project_dir: Option<String>,
    pub home: Option<String>,
}

/// One event, read.
#[derive(Clone, Debug)]
pub struct HookEvent {
    pub harness: Harness,
    pub phase: Phase,
    /// The event's name as the harness sent it.
    pub name: String,
    /// The tool's name as the harness calls it.
    pub tool: String,
    /// The call in the shared vocabulary: one, or one per file or URL the tool touches.
    pub calls: Vec<Call>,
    /// The tool's output, after it ran, in the harness's own shape.
    pub response: Option<Value>,
}

/// The answer: what to print and how to exit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub stdout: String,
    pub stderr: String,
    pub exit: u8,
}

impl Reply {
    fn json(value: Value) -> Reply {
        Reply {
            stdout: value.to_string(),
            stderr: String::new(),
            exit: 0,
        }
    }

    /// No opinion: the harness's own permission flow decides.
    fn nothing() -> Reply {
        Reply::json(Value::Object(Map::new()))
    }

    /// Exit status 2 with the reason on stderr: the one block Claude Code, Codex and Gemini CLI
    /// all honour, whatever else they make of the output.
    fn exit_block(reason: &str) -> Reply {
        Reply {
            stdout: String::new(),
            stderr: reason.to_string(),
            exit: 2,
        }
    }
}

/// Why an event could not be judged.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum HookError {
    #[error("the hook event is not JSON: {0}")]
    NotJson(String),
    #[error("the hook event must be a JSON object")]
    NotObject,
    #[error("the hook event has no `{0}`")]
    Missing(&'static str),
    #[error("`{0}` is not an event Sluice judges for {1}")]
    UnknownEvent(String, &'static str),
    #[error("the {0} call's arguments cannot be read: {1}")]
    BadInput(String, String),
}

/// The chain's verdict on every call an event stands for.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// The strictest: deny over ask over delegate over allow, so a call is allowed outright
    /// only when a rule allowed every part of it.
    pub decision: Decision,
    /// Why, with the deciding rule's name, file and line.
    pub reason: String,
    pub outcomes: Vec<ChainOutcome>,
}

/// Answers one hook event. Never fails: an event that cannot be judged is blocked.
pub fn answer(
    harness: Harness,
    input: &str,
    chain: &Chain,
    config: Option<&Config>,
    host: &Host,
) -> Reply {
    answer_in_full(harness, input, chain, config, host).reply
}

/// An answer, with the calls the event stood for and the chain's outcome for each (none for an
/// event after the tool ran, or one that could not be read): what a server logs.
#[derive(Clone, Debug)]
pub struct Answered {
    pub reply: Reply,
    pub calls: Vec<Call>,
    pub outcomes: Vec<ChainOutcome>,
}

fn unjudged(reply: Reply) -> Answered {
    Answered {
        reply,
        calls: Vec::new(),
        outcomes: Vec::new(),
    }
}

/// [`answer`], with what was judged.
pub fn answer_in_full(
    harness: Harness,
    input: &str,
    chain: &Chain,
    config: Option<&Config>,
    host: &Host,
) -> Answered {
    answer_in_session(harness, input, chain, config, host, None)
}

/// [`answer_in_full`], with the calls judged in their session as `sessions` keeps it, when a set
/// of the chain reads the session or labels it.
pub fn answer_in_session(
    harness: Harness,
    input: &str,
    chain: &Chain,
    config: Option<&Config>,
    host: &Host,
    sessions: Option<&dyn SessionStore>,
) -> Answered {
    match read_event(harness, input, host) {
        Ok(event) => answer_event(&event, chain, config, sessions),
        Err(error) => unjudged(block(harness, None, &format!("sluice: {error}"))),
    }
}

/// [`answer_in_session`] for an event already read.
pub fn answer_event(
    event: &HookEvent,
    chain: &Chain,
    config: Option<&Config>,
    sessions: Option<&dyn SessionStore>,
) -> Answered {
    let harness = event.harness;
    let mut calls: Vec<Call> = event
        .calls
        .iter()
        .cloned()
        .map(|call| complete(call, config))
        .collect();
    let in_session = chain.uses_session();
    // A store that cannot be read leaves the calls without a session: the rules that read it
    // fail closed, and the others judge as ever.
    if in_session && let Err(why) = sessions::attach(&mut calls, sessions) {
        tracing::warn!("the session is not available: {why}");
    }
    match event.phase {
        Phase::Pre | Phase::Permission => {
            let verdict = judge(chain, &calls);
            // A permission request follows the pre-check of the same call, which counted it.
            if in_session
                && event.phase == Phase::Pre
                && let Err(why) = sessions::count(&calls, sessions)
            {
                tracing::warn!("the call could not be counted in its session: {why}");
            }
            let reply = decide(event, &verdict);
            Answered {
                reply,
                calls,
                outcomes: verdict.outcomes,
            }
        }
        Phase::Post => {
            let (Some(call), Some(response)) = (calls.first(), &event.response) else {
                return unjudged(block(
                    harness,
                    Some(Phase::Post),
                    "sluice: the event carries no tool output to check",
                ));
            };
            let rewrite = output::postcheck(chain, call, response);
            // A label that cannot be kept would let a later call pass that must not: the output
            // is withheld instead.
            if in_session && let Err(why) = sessions::label(&calls, sessions, &rewrite.labels) {
                let reason = format!(
                    "sluice: the session's labels could not be kept ({why}), so the output is withheld"
                );
                return unjudged(block(harness, Some(Phase::Post), &reason));
            }
            let reply = rewrite_reply(event, &rewrite);
            Answered {
                reply,
                calls,
                outcomes: Vec::new(),
            }
        }
    }
}

/// The harness's strongest block, for any failure before or during judging.
pub fn block(harness: Harness, phase: Option<Phase>, reason: &str) -> Reply {
    match harness {
        Harness::Copilot => copilot::block(phase, reason),
        // Exit 2 blocks every event of these harnesses, and needs no event to be read.
        Harness::Claude | Harness::Codex | Harness::Gemini => Reply::exit_block(reason),
    }
}

/// One hook event as the harness sent it, read; an event that cannot be read is answered
/// with [`block`].
pub fn read_event(harness: Harness, input: &str, host: &Host) -> Result<HookEvent, HookError> {
    let value =
        sluice_compiler::json::from_str(input).map_err(|e| HookError::NotJson(e.to_string()))?;
    if !value.is_object() {
        return Err(HookError::NotObject);
    }
    match harness {
        Harness::Claude => claude::read(&value, host),
        Harness::Codex => codex::read(&value, host),
        Harness::Gemini => gemini::read(&value, host),
        Harness::Copilot => copilot::read(&value, host),
    }
}

fn decide(event: &HookEvent, verdict: &Verdict) -> Reply {
    match event.harness {
        Harness::Claude => claude::decide(event, verdict),
        Harness::Codex => codex::decide(event, verdict),
        Harness::Gemini => gemini::decide(event, verdict),
        Harness::Copilot => copilot::decide(event, verdict),
    }
}

fn rewrite_reply(event: &HookEvent, rewrite: &Rewrite) -> Reply {
    if rewrite.kind == PostcheckKind::Accept && rewrite.attached.is_empty() {
        return Reply::nothing();
    }
    match event.harness {
        Harness::Claude => claude::rewrite(rewrite),
        Harness::Codex => codex::rewrite(rewrite),
        Harness::Gemini => gemini::rewrite(rewrite),
        Harness::Copilot => copilot::rewrite(rewrite),
    }
}

/// Fills what the host did not send from the configuration's context sources.
fn complete(mut call: Call, config: Option<&Config>) -> Call {
    if let Some(config) = config {
        config.complete(&mut call);
    }
    call
}

/// Judges each call and keeps the strictest verdict.
pub fn judge(chain: &Chain, calls: &[Call]) -> Verdict {
    let outcomes: Vec<ChainOutcome> = calls.iter().map(|call| chain.evaluate(call)).collect();
    let strictest = outcomes
        .iter()
        .max_by_key(|o| strictness(o.decision))
        .cloned();
    match strictest {
        None => Verdict {
            decision: Decision::Delegate,
            reason: String::new(),
            outcomes,
        },
        Some(outcome) => Verdict {
            decision: outcome.decision,
            reason: reason(&outcome),
            outcomes,
        },
    }
}

fn strictness(decision: Decision) -> u8 {
    match decision {
        Decision::Allow => 0,
        Decision::Delegate => 1,
        Decision::Ask => 2,
        Decision::Deny => 3,
    }
}

/// The outcome's reason, with where the deciding rule is, so the model can correct itself and
/// the user can find the rule.
fn reason(outcome: &ChainOutcome) -> String {
    let said = outcome.reason.clone().unwrap_or_else(|| {
        format!(
            "{} by policy",
            match outcome.decision {
                Decision::Deny => "denied",
                Decision::Ask => "needs approval",
                Decision::Allow => "allowed",
                Decision::Delegate => "no rule decided",
            }
        )
    });
    match &outcome.rule {
        Some(rule) => format!("{said} [sluice: {}]", rule_location(rule)),
        None => format!("{said} [sluice]"),
    }
}

fn rule_location(rule: &RuleMeta) -> String {
    format!(
        "{} `{}` at {}:{}",
        rule.kind.keyword(),
        rule.name,
        rule.file,
        rule.line
    )
}

/// The reason for a harness that cannot ask: the call is refused until a person allows it.
fn approval_needed(reason: &str) -> String {
    format!("this call needs a person's approval, which this harness cannot ask for: {reason}")
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod session_tests;
