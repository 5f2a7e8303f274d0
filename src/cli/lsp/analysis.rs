//! What the server knows about a document: its policy set compiled, and the answers to hover,
//! definition and completion read from the set's declarations and rules.

use std::path::Path;
use std::sync::Arc;

use sluice_compiler::check::{CheckedSet, Record, agent_record, result_record};
use sluice_compiler::db::Database;
use sluice_compiler::diagnostics::{Diagnostic, Severity};
use sluice_compiler::load::{Analysis, OpenTexts};

/// A document's policy set: the document itself (as the editor has it) and its sibling files.
pub fn compile(
    db: &mut Database,
    sets: &mut OpenTexts,
    path: &str,
    text: &str,
    open: &[(String, String)],
) -> Analysis {
    let mut files = vec![(path.to_string(), text.to_string())];
    if let Some(dir) = Path::new(path).parent()
        && let Ok(entries) = std::fs::read_dir(dir)
    {
        let mut siblings: Vec<String> = entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|p| p.extension().is_some_and(|e| e == "sluice"))
            .map(|p| p.display().to_string())
            .filter(|p| p != path)
            .collect();
        siblings.sort();
        for sibling in siblings {
            let text = match open.iter().find(|(p, _)| *p == sibling) {
                Some((_, text)) => text.clone(),
                None => std::fs::read_to_string(&sibling).unwrap_or_default(),
            };
            files.push((sibling, text));
        }
    }
    let name = Path::new(path)
        .parent()
        .map_or_else(|| path.to_string(), |dir| dir.display().to_string());
    sets.analyse(db, &name, files)
}

/// A diagnostic's code explained, for the hover over its span: the page `sluice explain` prints,
/// carried in the reply because no link to it would exist on every machine the server runs on.
pub fn code_explanation(diagnostic: &Diagnostic) -> String {
    let info = diagnostic.code.info();
    let page = crate::cli::explain::page(diagnostic.code).unwrap_or(info.summary);
    // The page's own heading repeats the code; the hover starts with what is wrong here.
    let page = page
        .strip_prefix(&format!("## {}\n", diagnostic.code.short()))
        .unwrap_or(page)
        .trim_start();
    format!(
        "**{}** ({}): {}\n\n{page}",
        info.id, info.name, diagnostic.message
    )
}

pub fn is_warning(diagnostic: &Diagnostic) -> bool {
    diagnostic.severity() == Severity::Warning
}

/// The dotted name under the cursor (`args.command`, `starts_with`, `bash`) and where it starts:
/// from the start of the chain to the end of the name the cursor is on.
pub fn word_at(text: &str, offset: usize) -> Option<(usize, &str)> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let offset = offset.min(text.len());
    let start = text
        .get(..offset)?
        .rfind(|c: char| !(is_name(c) || c == '.'))
        .map_or(0, |i| i + 1);
    let end = text
        .get(offset..)?
        .find(|c: char| !is_name(c))
        .map_or(text.len(), |i| offset + i);
    let word = text.get(start..end)?.trim_matches('.');
    (!word.is_empty()).then_some((start, word))
}

/// The tools the rule around `offset` names: its `on` selectors, globs matched against the
/// declared tools.
pub fn enclosing_tools(text: &str, offset: usize, checked: &CheckedSet) -> Vec<String> {
    let before = text.get(..offset.min(text.len())).unwrap_or(text);
    let Some(header) = before.lines().rev().find(|line| {
        let first = line.split_whitespace().next().unwrap_or("");
        matches!(first, "precheck" | "gate" | "postcheck" | "concurrency")
    }) else {
        return Vec::new();
    };
    let Some((_, after_on)) = header.split_once(" on ") else {
        return Vec::new();
    };
    let selectors = after_on
        .split(" when ")
        .next()
        .unwrap_or("")
        .split("=>")
        .next()
        .unwrap_or("");
    let mut tools = Vec::new();
    for selector in selectors
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let glob = globset::Glob::new(selector).map(|g| g.compile_matcher());
        for name in checked.decls.tools.keys() {
            let matches = match &glob {
                Ok(matcher) => matcher.is_match(name),
                Err(_) => name == selector,
            };
            if matches && !tools.contains(name) {
                tools.push(name.clone());
            }
        }
    }
    tools
}

/// The record a root (`args`, `agent`, `context`, `result`) has at `offset`.
pub fn root_record(
    root: &str,
    text: &str,
    offset: usize,
    checked: &CheckedSet,
) -> Option<(String, Arc<Record>)> {
    match root {
        "agent" => Some(("the agent".into(), agent_record())),
        "result" => Some(("the tool's result".into(), result_record())),
        "context" => Some(("the host's context".into(), checked.decls.context.clone())),
        "args" => {
            let tool = enclosing_tools(text, offset, checked).into_iter().next()?;
            let info = checked.decls.tools.get(&tool)?;
            Some((format!("the arguments of `{tool}`"), info.args.clone()))
        }
        _ => None,
    }
}

/// The row of the builtins page that documents `name`, as markdown.
pub fn builtin_doc(name: &str) -> Option<String> {
    const PAGE: &str = include_str!("../../../lang-spec/builtins.md");
    let wanted = [
        format!("`{name}("),
        format!(".{name}("),
        format!("`.{name}`"),
    ];
    PAGE.lines()
        .filter(|line| line.starts_with("| "))
        .find(|line| {
            let first = line.split('|').nth(1).unwrap_or("");
            let second = line.split('|').nth(2).unwrap_or("");
            wanted
                .iter()
                .any(|w| first.contains(w.as_str()) || second.contains(w.as_str()))
        })
        .map(|line| {
            let cells: Vec<&str> = line
                .split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            cells.join(" — ")
        })
}

/// Every builtin function and method name, for completion.
pub fn builtin_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = sluice_compiler::check::Builtin::ALL
        .iter()
        .map(|b| b.name())
        .collect();
    names.extend(["url", "any", "all"]);
    names.sort_unstable();
    names.dedup();
    names
}

/// Keywords inside items, for completion; the item keywords come from the parser.
const INNER_KEYWORDS: &[&str] = &[
    "on", "when", "allow", "deny", "ask", "accept", "replace", "content", "value", "attach",
    "fail", "with", "safe", "examples", "call", "result", "expect", "and", "or", "not", "in",
    "matches", "glob", "true", "false", "null",
];

pub fn keywords() -> impl Iterator<Item = &'static str> {
    sluice_compiler::parser::ITEM_KEYWORDS
        .iter()
        .chain(INNER_KEYWORDS)
        .copied()
}
