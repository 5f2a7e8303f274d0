//! Rule examples: inputs a rule must decide and inputs it must pass over, checked at compile time
//! (like Codex execpolicy's `match`/`not_match`). A failing example is an error at its span.

use std::sync::Arc;

use serde_json::Value as Json;

use crate::ast::{Literal, RuleKind, Span};
use crate::call::{Call, Status, ToolResult};
use crate::check::{CheckedRule, CheckedSet, Record, Ty, agent_record, conform, result_record};
use crate::diagnostics::{Code, Diagnostic, did_you_mean};
use crate::interp::{CallJson, Evaluation, Facts, per_part_rule_matches};
use crate::ir::{EffectIr, Program, RuleIr};

/// What the examples are held to, as test blocks are: the declared arguments of the tool the
/// examples call (`None` for a glob or a declaration that could not be read) and the context.
#[derive(Clone, Debug, Default)]
pub struct ExampleShapes {
    pub args: Option<Arc<Record>>,
    pub context: Arc<Record>,
}

/// Checks a rule's examples against the rule alone: `program` is the rule lowered and linked on
/// its own. Positions are the checked rule's.
pub fn check_examples(
    checked: &CheckedRule,
    program: &Program,
    shapes: &ExampleShapes,
) -> Vec<Diagnostic> {
    // An example's verdict must not depend on how busy the machine is.
    let _untimed = crate::budget::unbounded();
    let mut out = Vec::new();
    if let (Some(examples), Some(rule)) = (&checked.examples, program.rules.first()) {
        check_rule(checked, rule, program, examples, shapes, &mut out);
    }
    out
}

/// How many examples the rules of a set carry (each is checked when the set compiles).
pub fn count_examples(set: &CheckedSet) -> usize {
    set.rules
        .iter()
        .filter_map(|placed| placed.rule.examples.as_ref()?.entries())
        .flatten()
        .filter(|(key, _)| !matches!(key.name.as_str(), "context" | "agent"))
        .filter_map(|(_, list)| list.items().map(<[Literal]>::len))
        .sum()
}

/// The example keys a rule accepts: `match`, `pass`, fixtures, and its own effect word.
fn effect_word(rule: &CheckedRule) -> &'static str {
    use crate::check::CheckedEffect::*;
    match rule.effects.first() {
        Some(Allow) => "allow",
        Some(Deny(_)) => "deny",
        Some(Ask(_)) => "ask",
        Some(Veto(_)) => "veto",
        Some(Safe) => "safe",
        _ => "match",
    }
}

fn check_rule(
    checked: &CheckedRule,
    rule: &RuleIr,
    program: &Program,
    examples: &Literal,
    shapes: &ExampleShapes,
    out: &mut Vec<Diagnostic>,
) {
    let file = checked.file.as_str();
    let word = effect_word(checked);
    let invalid = |span: Span, message: String| {
        Diagnostic::new(Code::InvalidExamples, file, span, message)
            .label("in these examples")
            .help(format!("write `examples {{ {word}: [{{...}}], pass: [{{...}}] }}`, optionally with `context: {{...}}` and `agent: {{...}}`; items are {}", if checked.kind == RuleKind::Postcheck { "results such as `{ content: \"...\" }`" } else { "the call's arguments" }))
    };
    let Some(entries) = examples.entries() else {
        out.push(invalid(examples.span, "examples must be an object".into()));
        return;
    };
    let mut context = Json::Object(Default::default());
    let mut agent = Json::Object(Default::default());
    let mut cases: Vec<(bool, &Literal)> = Vec::new();
    // A misspelt field is named with a did-you-mean, as a test block names it, instead of
    // surfacing later as a field the rule found missing. Examples may leave fields out.
    let shaped = |out: &mut Vec<Diagnostic>, what: &str, value: &Literal, record: &Arc<Record>| {
        let shape = Ty::Record(record.clone());
        match conform(value, &shape, true) {
            Ok(()) => true,
            Err((span, why)) => {
                out.push(
                    Diagnostic::new(
                        Code::InvalidExamples,
                        file,
                        span,
                        format!("invalid example {what}: {why}"),
                    )
                    .label("does not match the declaration")
                    .help(format!("{what} are `{shape}`")),
                );
                false
            }
        }
    };
    let mut ok = true;
    for (key, value) in entries {
        match key.name.as_str() {
            "context" => {
                ok &= shaped(out, "context fields", value, &shapes.context);
                context = value.to_json();
            }
            "agent" => {
                ok &= shaped(out, "agent fields", value, &agent_record());
                agent = value.to_json();
            }
            name if name == "match" || name == word || name == "pass" => match value.items() {
                Some(items) => cases.extend(items.iter().map(|item| (name != "pass", item))),
                None => out.push(invalid(
                    value.span,
                    format!("`{name}` must be a list of examples"),
                )),
            },
            other => {
                let keys = ["match", word, "pass", "context", "agent"];
                let hint = did_you_mean(other, keys)
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                out.push(invalid(
                    key.span,
                    format!("unknown example key `{other}`{hint}"),
                ));
            }
        }
    }
    if !ok {
        return;
    }
    let agent: crate::call::Agent = match serde_json::from_value(agent) {
        Ok(agent) => agent,
        Err(error) => {
            out.push(invalid(
                examples.span,
                format!("invalid example agent: {error}"),
            ));
            return;
        }
    };
    let tool = checked
        .tools
        .names
        .first()
        .or(checked.tools.globs.first())
        .cloned()
        .unwrap_or_else(|| "*".into());
    for (should_match, item) in cases {
        if item.entries().is_none() {
            out.push(invalid(item.span, "an example is an object".into()));
            continue;
        }
        let mut call = Call::new(tool.clone(), Json::Object(Default::default()));
        call.agent = agent.clone();
        call.context = context.clone();
        if checked.kind == RuleKind::Postcheck {
            if !shaped(out, "result fields", item, &result_record()) {
                continue;
            }
            let json = item.to_json();
            let status = json
                .get("status")
                .and_then(Json::as_str)
                .and_then(Status::parse)
                .unwrap_or(Status::Ok);
            let mut result =
                ToolResult::ok(json.get("content").and_then(Json::as_str).unwrap_or(""));
            result.status = status;
            result.value = json.get("value").cloned().unwrap_or(Json::Null);
            result.error = json.get("error").and_then(Json::as_str).map(str::to_string);
            call.result = Some(result);
        } else {
            if let Some(args) = &shapes.args
                && !shaped(out, &format!("`{tool}` arguments"), item, args)
            {
                continue;
            }
            call.args = item.to_json();
        }
        match matches(program, rule, &call) {
            Ok(matched) if matched == should_match => {}
            Ok(matched) => {
                let message = if matched {
                    format!("rule `{}` matches an example it must pass over", checked.name)
                } else {
                    format!("rule `{}` does not match an example it must {word}", checked.name)
                };
                out.push(
                    Diagnostic::new(Code::ExampleFailed, file, item.span, message)
                        .label(if matched { "matched" } else { "not matched" })
                        .secondary(file, checked.name_span, "the rule")
                        .help("fix the rule's condition, or move the example to the list it belongs in"),
                );
            }
            Err(error) => out.push(
                Diagnostic::new(Code::ExampleFailed, file, item.span, format!("rule `{}` fails on this example: {error}", checked.name))
                    .label("evaluation failed")
                    .help("give the example every field the rule reads, including `context` and `agent` fields"),
            ),
        }
    }
}

/// Whether the rule's condition holds for the call.
fn matches(program: &Program, rule: &RuleIr, call: &Call) -> Result<bool, String> {
    if rule
        .effects
        .iter()
        .any(|e| matches!(e, EffectIr::Redact(_)))
    {
        return crate::interp::Evaluator::new(program, None).redacts(call);
    }
    let json = CallJson::of(call);
    let roots = json.roots(call);
    let mut facts = Facts::fill(program, &call.tool, &roots);
    facts.shell = crate::interp::parses::Parses::Own(crate::interp::parses::ShellParses::untimed());
    match rule.per_part {
        Some(per_part) => per_part_rule_matches(program, rule, per_part, &facts),
        None => Evaluation::new(program, rule, &facts).condition_holds(),
    }
    .map_err(|e| e.message)
}

/// The calls a set's pre-check and gate examples must be decided on, each with the verdict its
/// rule gives it (`allow`, `deny`, `ask` or `veto`; `match` for a rule of another effect).
/// Examples a rule must pass over are left out: they say what the rule does not decide, not
/// what the chain must. `sluice allow` holds a proposed rule to these.
pub fn example_calls(set: &CheckedSet) -> Vec<(Call, &'static str)> {
    let mut out = Vec::new();
    for placed in &set.rules {
        let rule = &placed.rule;
        if !matches!(rule.kind, RuleKind::Precheck | RuleKind::Gate) {
            continue;
        }
        let (Some(examples), Some(tool)) = (&rule.examples, rule.tools.names.first()) else {
            continue;
        };
        let Some(entries) = examples.entries() else {
            continue;
        };
        let word = effect_word(rule);
        let field = |name: &str| {
            entries
                .iter()
                .find(|(key, _)| key.name == name)
                .map_or(Json::Object(Default::default()), |(_, value)| {
                    value.to_json()
                })
        };
        let agent: crate::call::Agent = serde_json::from_value(field("agent")).unwrap_or_default();
        let context = field("context");
        let items = entries
            .iter()
            .filter(|(key, _)| key.name == word || key.name == "match")
            .filter_map(|(_, list)| list.items())
            .flatten();
        for item in items {
            let mut call = Call::new(tool.clone(), item.to_json());
            call.agent = agent.clone();
            call.context = context.clone();
            out.push((call, word));
        }
    }
    out
}
