//! The comparison scenario, generated: an agent's tool calls against N rules, written once per
//! engine. Rule `i` guards tool `i % TOOLS` with one of three checks on the call's arguments:
//! a path prefix, a command substring, or a command regex of the form `^P .*S` (which Cedar's
//! `like "P *S*"` expresses exactly); a label gate denies read-only agents on every tool.

use serde_json::{Value as Json, json};

pub const TOOLS: usize = 10;
const REQUESTS: usize = 64;

#[derive(Clone, Debug)]
pub enum Check {
    PathPrefix(String),
    Substring(String),
    /// `^{0} .*{1}`.
    Regex(String, String),
}

#[derive(Clone, Debug)]
pub struct Rule {
    pub tool: String,
    pub check: Check,
}

/// One call: what every engine is asked.
#[derive(Clone, Debug)]
pub struct Request {
    pub agent: String,
    pub labels: Vec<String>,
    pub tool: String,
    pub command: String,
    pub path: String,
}

pub fn tool(index: usize) -> String {
    format!("tool_{}", index % TOOLS)
}

pub fn rules(n: usize) -> Vec<Rule> {
    (0..n)
        .map(|i| Rule {
            tool: tool(i),
            check: match i % 3 {
                0 => Check::PathPrefix(format!("/p{i}/")),
                1 => Check::Substring(format!("cmd{i}x")),
                _ => Check::Regex(format!("run{i}"), "--danger".into()),
            },
        })
        .collect()
}

/// A fixed mix of allowed and denied calls, the same for every run (a small LCG, no seed file).
pub fn requests(rules: &[Rule]) -> Vec<Request> {
    let mut state: u64 = 0x5eed;
    let mut next = move |bound: usize| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % bound
    };
    (0..REQUESTS)
        .map(|_| {
            let rule = &rules[next(rules.len())];
            let mut request = Request {
                agent: format!("agent-{}", next(5)),
                labels: vec!["team:core".into()],
                tool: rule.tool.clone(),
                command: "cargo test --workspace && git status".into(),
                path: "/home/dev/project/src/main.rs".into(),
            };
            match (next(6), &rule.check) {
                (0, Check::PathPrefix(prefix)) => request.path = format!("{prefix}etc/conf"),
                (0, Check::Substring(needle)) => request.command = format!("echo {needle} done"),
                (0, Check::Regex(start, end)) => request.command = format!("{start} build {end}"),
                (1, Check::Regex(start, _)) => request.command = format!("{start} build --safe"),
                (2, _) => request.labels.push("readonly".into()),
                _ => {}
            }
            request
        })
        .collect()
}

pub fn sluice(rules: &[Rule]) -> String {
    let mut out = String::new();
    for t in 0..TOOLS.min(rules.len().max(1)) {
        out.push_str(&format!(
            "tool {} {{ command: string, path: string }}\n",
            tool(t)
        ));
    }
    for (i, rule) in rules.iter().enumerate() {
        let condition = match &rule.check {
            Check::PathPrefix(prefix) => format!("args.path.starts_with(\"{prefix}\")"),
            Check::Substring(needle) => format!("args.command.contains(\"{needle}\")"),
            Check::Regex(start, end) => format!("args.command matches r\"^{start} .*{end}\""),
        };
        out.push_str(&format!(
            "precheck r{i} on {} when {condition} => deny \"r{i}\"\n",
            rule.tool
        ));
    }
    out.push_str("gate readonly on * when \"readonly\" in agent.labels => \"read-only agent\"\n");
    out
}

fn cedar_forbid(rule: &Rule) -> String {
    let condition = match &rule.check {
        Check::PathPrefix(prefix) => format!("context.path like \"{prefix}*\""),
        Check::Substring(needle) => format!("context.command like \"*{needle}*\""),
        Check::Regex(start, end) => format!("context.command like \"{start} *{end}*\""),
    };
    format!(
        "forbid(principal, action == Action::\"call\", resource == Tool::\"{}\") when {{ {condition} }};\n",
        rule.tool
    )
}

const CEDAR_COMMON: &str = "permit(principal, action, resource);\nforbid(principal, action, resource) when { context.labels.contains(\"readonly\") };\n";

pub fn cedar(rules: &[Rule]) -> String {
    let mut out = CEDAR_COMMON.to_string();
    for rule in rules {
        out.push_str(&cedar_forbid(rule));
    }
    out
}

/// Cedar's best form here: one policy set per tool, chosen by the host before authorizing.
pub fn cedar_sliced(rules: &[Rule]) -> Vec<(String, String)> {
    (0..TOOLS)
        .map(|t| {
            let mut out = CEDAR_COMMON.to_string();
            for rule in rules.iter().filter(|r| r.tool == tool(t)) {
                out.push_str(&cedar_forbid(rule));
            }
            (tool(t), out)
        })
        .collect()
}

const REGO_HEADER: &str = "package sluice\nimport rego.v1\n\ndefault deny := false\n\ndeny if \"readonly\" in input.agent.labels\n";

pub fn rego(rules: &[Rule]) -> String {
    let mut out = REGO_HEADER.to_string();
    for rule in rules {
        let condition = match &rule.check {
            Check::PathPrefix(prefix) => format!("startswith(input.args.path, \"{prefix}\")"),
            Check::Substring(needle) => format!("contains(input.args.command, \"{needle}\")"),
            Check::Regex(start, end) => {
                format!("regex.match(`^{start} .*{end}`, input.args.command)")
            }
        };
        out.push_str(&format!(
            "\ndeny if {{\n  input.tool == \"{}\"\n  {condition}\n}}\n",
            rule.tool
        ));
    }
    out
}

/// Rego's best form here: the rules as data indexed by tool, and three generic rules. regorus
/// compiles a regex given as data on every evaluation, so the regex check `^P .*S` is written
/// with string builtins (equivalent on commands without newlines, which these are).
pub fn rego_data_driven() -> String {
    format!(
        "{REGO_HEADER}
deny if {{
  some prefix in data.rules[input.tool].prefix
  startswith(input.args.path, prefix)
}}

deny if {{
  some needle in data.rules[input.tool].substring
  contains(input.args.command, needle)
}}

deny if {{
  some pattern in data.rules[input.tool].regex
  startswith(input.args.command, pattern.start)
  contains(substring(input.args.command, count(pattern.start), -1), pattern.then)
}}
"
    )
}

pub fn rego_data(rules: &[Rule]) -> Json {
    let mut by_tool = serde_json::Map::new();
    for rule in rules {
        let entry = by_tool
            .entry(rule.tool.clone())
            .or_insert_with(|| json!({ "prefix": [], "substring": [], "regex": [] }));
        let (kind, value) = match &rule.check {
            Check::PathPrefix(prefix) => ("prefix", json!(prefix)),
            Check::Substring(needle) => ("substring", json!(needle)),
            Check::Regex(start, end) => (
                "regex",
                json!({ "start": format!("{start} "), "then": end }),
            ),
        };
        if let Some(list) = entry[kind].as_array_mut() {
            list.push(value);
        }
    }
    json!({ "rules": by_tool })
}

/// The request as each engine's input JSON: `{tool, args, agent}`.
pub fn input_json(request: &Request) -> Json {
    json!({
        "tool": request.tool,
        "args": { "command": request.command, "path": request.path },
        "agent": { "id": request.agent, "labels": request.labels },
    })
}
