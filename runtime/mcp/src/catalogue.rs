//! The tool catalogue the client sees: the server's `tools/list`, less what the policies would
//! always refuse and what the server got wrong.
//!
//! A tool a gate vetoes unconditionally, or a pre-check denies unconditionally before any set
//! could allow it, is removed from the model's view: the model never plans around a tool it
//! can never use. A tool whose schema is not a JSON Schema of an object, or whose name the server
//! lists twice, is hidden too, with a diagnostic on stderr: a tool that cannot be checked is
//! never passed through unchecked.

use std::collections::{BTreeMap, HashSet};

use rmcp::model::Tool;
use serde_json::Value;
use sluice_compiler::ast::RuleKind;
use sluice_compiler::call::Call;
use sluice_compiler::check::Const;
use sluice_compiler::ir::{EffectIr, Op, RuleIr};
use sluice_runtime::chain::{Chain, governs};

/// Why a tool is not in the client's view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hidden {
    /// The policies refuse every call to it; the rule that does.
    Refused(String),
    /// The server described it so that it cannot be checked.
    Malformed(String),
}

/// The view of one `tools/list`: the tools shown, and why each other one is not.
#[derive(Debug, Default)]
pub struct Catalogue {
    pub shown: Vec<Tool>,
    pub hidden: BTreeMap<String, Hidden>,
    /// Whether the server's tools were listed at all.
    pub listed: bool,
}

impl Catalogue {
    /// Sorts the server's tools into shown and hidden. `vocabulary` is each tool's name in the
    /// policies, `mcp__SERVER__TOOL`; `probe` a call of the gateway's agent.
    pub fn build(
        tools: Vec<Tool>,
        chain: &Chain,
        probe: &Call,
        vocabulary: impl Fn(&str) -> String,
    ) -> Catalogue {
        let mut names: HashSet<String> = HashSet::new();
        let mut repeated: HashSet<String> = HashSet::new();
        for tool in &tools {
            if !names.insert(tool.name.to_string()) {
                repeated.insert(tool.name.to_string());
            }
        }
        let mut catalogue = Catalogue::default();
        for tool in tools {
            let name = tool.name.to_string();
            let hidden = if repeated.contains(&name) {
                Some(Hidden::Malformed(format!(
                    "the server lists `{name}` more than once"
                )))
            } else if let Some(problem) = schema_problem(&tool) {
                Some(Hidden::Malformed(problem))
            } else {
                always_refused(chain, probe, &vocabulary(&name)).map(Hidden::Refused)
            };
            match hidden {
                Some(why) => {
                    catalogue.hidden.insert(name, why);
                }
                None => catalogue.shown.push(tool),
            }
        }
        catalogue
    }

    pub fn is_hidden(&self, name: &str) -> Option<&Hidden> {
        self.hidden.get(name)
    }
}

/// What is wrong with the tool's `inputSchema`, if anything.
fn schema_problem(tool: &Tool) -> Option<String> {
    let schema = Value::Object((*tool.input_schema).clone());
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Some(format!(
            "the input schema of `{}` does not describe an object",
            tool.name
        ));
    }
    if let Err(error) = jsonschema::validator_for(&schema) {
        return Some(format!(
            "the input schema of `{}` is not a valid JSON Schema: {error}",
            tool.name
        ));
    }
    None
}

/// The rule that refuses every call to `tool` by `probe`'s agent, whatever its arguments.
pub fn always_refused(chain: &Chain, probe: &Call, tool: &str) -> Option<String> {
    let mut earlier_could_decide = false;
    for link in chain.links() {
        if !governs(&link.scope, probe) {
            continue;
        }
        let program = link.policy.executable.program();
        let rules = program.rules.iter().filter(|rule| rule.applies_to(tool));
        for rule in rules {
            let unconditional = is_unconditional(rule);
            let vetoes = rule.meta.kind == RuleKind::Gate
                && rule.effects.iter().any(|e| matches!(e, EffectIr::Veto(_)));
            let denies = rule.meta.kind == RuleKind::Precheck
                && rule.effects.iter().any(|e| matches!(e, EffectIr::Deny(_)));
            if unconditional && (vetoes || (denies && !earlier_could_decide)) {
                return Some(format!(
                    "{} `{}` at {}:{}",
                    rule.meta.kind.keyword(),
                    rule.meta.name,
                    rule.meta.file,
                    rule.meta.line
                ));
            }
        }
        // A set with a pre-check on the tool may decide before a later set's deny is reached.
        earlier_could_decide |= program
            .rules
            .iter()
            .any(|rule| rule.meta.kind == RuleKind::Precheck && rule.applies_to(tool));
    }
    None
}

/// A whole-call rule with no condition, or the condition `true`.
fn is_unconditional(rule: &RuleIr) -> bool {
    if rule.per_part.is_some() {
        return false;
    }
    match rule.condition {
        None => true,
        Some(id) => matches!(
            rule.node(id).map(|node| &node.op),
            Some(Op::Const(Const::Bool(true)))
        ),
    }
}
