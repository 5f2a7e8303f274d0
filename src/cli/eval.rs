//! `sluice eval`: evaluate calls against one policy set and print outcomes as JSON.

use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;
use sluice_compiler::call::Call;
use sluice_compiler::db::Database;
use sluice_compiler::executable::Executable;
use sluice_compiler::interp::explain;
use sluice_compiler::ir::Program;
use sluice_compiler::jit::Backend;
use sluice_compiler::load::{Compiled, discover};

use super::report::human;
use super::{CliError, exit};

pub fn run(
    policy: &[PathBuf],
    call_source: &str,
    jsonl: bool,
    explain: bool,
    backend: Backend,
) -> Result<ExitCode, CliError> {
    let sets = discover(policy).map_err(|e| e.to_string())?;
    let [source] = sets.as_slice() else {
        let names: Vec<String> = sets.iter().map(|s| format!("`{}`", s.name)).collect();
        return Err(format!(
            "`eval` takes one policy set, found {}: {}",
            sets.len(),
            names.join(", ")
        ));
    };
    let mut db = Database::default();
    let compiled = db.load(source).map_err(|e| e.to_string())?;
    let Some(program) = compiled.program.clone().filter(|_| !compiled.has_errors()) else {
        let errors = compiled.errors();
        eprintln!("{}", human(&errors, &compiled.sources));
        return Err(format!("policy set `{}` does not compile", compiled.name));
    };
    let executable = Executable::new(program.clone(), backend);
    let mut input: Box<dyn Read> = if call_source == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(
            std::fs::File::open(call_source)
                .map_err(|e| format!("cannot read `{call_source}`: {e}"))?,
        )
    };
    if jsonl {
        return stream(&compiled, &executable, &mut std::io::BufReader::new(input));
    }
    let mut bytes = Vec::new();
    input
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the call: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| "the call is not valid UTF-8".to_string())?;
    if text.trim().is_empty() {
        return Err("the call is empty: give a JSON object with `tool` and `args`".into());
    }
    let call = parse_call(&compiled, &text)?;
    let outcome = executable.evaluator().evaluate(&call);
    if explain {
        print_explanation(&compiled, &program, &call, &outcome);
    } else {
        let out = serde_json::to_string_pretty(&outcome).map_err(|e| e.to_string())?;
        outln!("{out}");
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_call(compiled: &Compiled, text: &str) -> Result<Call, String> {
    let call = Call::from_json(text).map_err(|e| format!("invalid call: {e}"))?;
    if !compiled.checked.decls.tools.contains_key(&call.tool) {
        return Err(format!(
            "unknown tool `{}`: policy set `{}` does not declare it",
            call.tool, compiled.name
        ));
    }
    Ok(call)
}

/// One outcome per input line; a bad line gets an error object and the stream goes on.
fn stream(
    compiled: &Compiled,
    executable: &Executable,
    input: &mut dyn BufRead,
) -> Result<ExitCode, CliError> {
    let evaluator = executable.evaluator();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut all_ok = true;
    let mut buffer = Vec::new();
    let mut line_number = 0usize;
    loop {
        buffer.clear();
        let read = input
            .read_until(b'\n', &mut buffer)
            .map_err(|e| format!("cannot read calls: {e}"))?;
        if read == 0 {
            break;
        }
        line_number += 1;
        let record = match std::str::from_utf8(&buffer) {
            Err(_) => Err("line is not valid UTF-8".to_string()),
            Ok(text) if text.trim().is_empty() => continue,
            Ok(text) => parse_call(compiled, text).map(|call| evaluator.evaluate(&call)),
        };
        let line = match record {
            Ok(outcome) => serde_json::to_value(&outcome)
                .unwrap_or_else(|e| json!({ "line": line_number, "error": e.to_string() })),
            Err(error) => {
                all_ok = false;
                json!({ "line": line_number, "error": error })
            }
        };
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(|e| format!("cannot write: {e}"))?;
    }
    Ok(exit(all_ok))
}

fn print_explanation(
    compiled: &Compiled,
    program: &Program,
    call: &Call,
    outcome: &sluice_compiler::decision::Outcome,
) {
    outln!("decision: {}", outcome.decision.as_str());
    if let Some(reason) = &outcome.reason {
        outln!("reason:   {reason}");
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
        outln!("no rule matched: the policy set delegates to the next link of the chain");
        return;
    };
    outln!(
        "rule:     {} {} ({}:{})",
        meta.kind.keyword(),
        meta.name,
        meta.file,
        meta.line
    );
    let text = compiled.sources.get(&meta.file).unwrap_or("");
    for (i, line) in text
        .get(meta.span.range())
        .unwrap_or("")
        .lines()
        .enumerate()
    {
        outln!("  {:>4} | {line}", meta.line as usize + i);
    }
    if let Some(rule) = program.rules.iter().find(|r| r.meta.name == meta.name) {
        outln!("conditions:");
        for step in explain(program, rule, call) {
            let source = text
                .get(step.span.range())
                .unwrap_or("?")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
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
        outln!("gate {} vetoed: {}", veto.rule.name, veto.reason);
    }
}
