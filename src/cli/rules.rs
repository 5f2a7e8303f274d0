//! `sluice rules`: every rule of the policy sets, with its kind, tools, effect, file and line.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;
use sluice_compiler::check::CheckedEffect;
use sluice_compiler::db::Database;
use sluice_compiler::load::Workspace;

use super::{CliError, Format};

pub fn run(paths: &[PathBuf], format: Format) -> Result<ExitCode, CliError> {
    let mut db = Database::default();
    let workspace = Workspace::open(&mut db, paths).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for compiled in workspace.compiled(&db) {
        for placed in &compiled.checked.rules {
            let rule = &placed.rule;
            let (line, _) = compiled
                .sources
                .line_col(&rule.file, placed.place(rule.name_span).start as usize);
            let tools = &rule.tools;
            let mut selectors: Vec<String> =
                tools.names.iter().chain(&tools.globs).cloned().collect();
            if tools.all {
                selectors.push("*".into());
            }
            rows.push(json!({
                "set": compiled.name,
                "name": rule.name,
                "kind": rule.kind.keyword(),
                "tools": selectors,
                "per_part": rule.per_part.is_some(),
                "effect": rule.effects.iter().map(effect_word).collect::<Vec<_>>().join(", "),
                "file": rule.file,
                "line": line,
            }));
        }
    }
    if format == Format::Json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?
        );
        return Ok(ExitCode::SUCCESS);
    }
    for row in &rows {
        let tools: Vec<&str> = row["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str())
            .collect();
        outln!(
            "{:<12} {:<40} on {:<28} => {:<14} {}:{}",
            row["kind"].as_str().unwrap_or(""),
            row["name"].as_str().unwrap_or(""),
            tools.join(", "),
            row["effect"].as_str().unwrap_or(""),
            row["file"].as_str().unwrap_or(""),
            row["line"]
        );
    }
    outln!("{} rules", rows.len());
    Ok(ExitCode::SUCCESS)
}

fn effect_word(effect: &CheckedEffect) -> &'static str {
    match effect {
        CheckedEffect::Allow => "allow",
        CheckedEffect::Deny(_) => "deny",
        CheckedEffect::Ask(_) => "ask",
        CheckedEffect::Veto(_) => "veto",
        CheckedEffect::Accept => "accept",
        CheckedEffect::ReplaceContent(_) => "replace content",
        CheckedEffect::ReplaceValue(_) => "replace value",
        CheckedEffect::Fail { .. } => "fail",
        CheckedEffect::Attach(_) => "attach context",
        CheckedEffect::Redact(_) => "redact",
        CheckedEffect::Label(_) => "label session",
        CheckedEffect::Safe => "safe",
    }
}
