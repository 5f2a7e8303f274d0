//! `sluice shell 'LINE'`: what `shell(...)` sees of a command line, part by part, so a rule can be
//! written against it without a throwaway rule that prints it.

use std::process::ExitCode;

use serde_json::Value;
use sluice_compiler::shell::{Dirs, EffectTable, Limits, parse_command_in, parts_json_in};

use super::{CliError, Format};

pub fn run(line: &str, dirs: Dirs<'_>, format: Format) -> Result<ExitCode, CliError> {
    let commands = parse_command_in(line, dirs, Limits::default());
    let parts = parts_json_in(&commands, &EffectTable::built_in(), dirs.home);
    if format == Format::Json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&parts).map_err(|e| e.to_string())?
        );
        return Ok(ExitCode::SUCCESS);
    }
    for (index, part) in parts.as_array().into_iter().flatten().enumerate() {
        let text = part.get("text").and_then(Value::as_str).unwrap_or("");
        outln!("part {index}: {text}");
        let Value::Object(fields) = part else {
            continue;
        };
        for (field, value) in fields {
            if field == "text" || is_empty(value) {
                continue;
            }
            outln!("  {field:<11} {}", shown(value));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Fields with nothing to say are left out of the human view (the JSON keeps them all).
fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.is_empty(),
        Value::String(text) => text.is_empty(),
        _ => false,
    }
}

fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
