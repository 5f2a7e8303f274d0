//! `sluice compile`: what the compiler makes of policy sets, for people who debug the compiler
//! or a slow policy.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use sluice_compiler::ast::RuleKind;
use sluice_compiler::db::Database;
use sluice_compiler::ir::{Program, render_program};
use sluice_compiler::jit::{self, ConditionCode, JitOptions};
use sluice_compiler::load::discover;

use super::report::human;
use super::{CliError, Emit, exit};

pub fn run(paths: &[PathBuf], emit: Emit) -> Result<ExitCode, CliError> {
    let mut ok = true;
    for source in discover(paths).map_err(|e| e.to_string())? {
        let started = Instant::now();
        let mut db = Database::default();
        let compiled = db.load(&source).map_err(|e| e.to_string())?;
        let front_end = started.elapsed();
        let Some(program) = compiled.program.as_ref().filter(|_| !compiled.has_errors()) else {
            outln!("{}", human(&compiled.errors(), &compiled.sources));
            outln!("{}: does not compile", compiled.name);
            ok = false;
            continue;
        };
        let options = JitOptions {
            verify: false,
            keep_clif: emit == Emit::Clif,
        };
        match emit {
            Emit::Ir => out!(
                "# policy set {}\n{}",
                compiled.name,
                render_program(program)
            ),
            Emit::Clif => {
                let native = jit::compile(program, options).map_err(|e| e.to_string())?;
                outln!("; policy set {}", compiled.name);
                // Rule by rule, as `--emit stats` counts them: a rule without a function says
                // how its condition is decided instead.
                let mut functions = native.clif().iter();
                for (rule, code) in &native.stats().conditions {
                    match code {
                        ConditionCode::Native => {
                            if let Some(function) = functions.next() {
                                outln!("{function}");
                            }
                        }
                        other => outln!("; rule `{rule}`: {}\n", describe(other)),
                    }
                }
            }
            Emit::Stats => {
                let native = jit::compile(program, options).map_err(|e| e.to_string())?;
                print_stats(&compiled.name, program, front_end, native.stats());
            }
        }
    }
    Ok(exit(ok))
}

fn print_stats(name: &str, program: &Program, front_end: std::time::Duration, native: &jit::Stats) {
    let count = |kind| program.rules_of(kind).count();
    outln!("{name}");
    outln!(
        "  rules        {} ({} precheck, {} gate, {} postcheck, {} concurrency)",
        program.rules.len(),
        count(RuleKind::Precheck),
        count(RuleKind::Gate),
        count(RuleKind::Postcheck),
        count(RuleKind::Concurrency)
    );
    let fields: Vec<String> = program.slots.iter().map(|slot| slot.describe()).collect();
    outln!("  fields read  {} ({})", fields.len(), fields.join(", "));
    outln!("  regexes      {}", program.regexes.len());
    outln!("  globs        {}", program.globs.len());
    outln!("  literal sets {}", program.sets.len());
    let of = |wanted: fn(&ConditionCode) -> bool| {
        native
            .conditions
            .iter()
            .filter(|(_, code)| wanted(code))
            .count()
    };
    outln!(
        "  conditions   {}: {} native, {} settled by field scans, {} interpreted ({} string constants)",
        native.conditions.len(),
        of(|c| matches!(c, ConditionCode::Native)),
        of(|c| matches!(c, ConditionCode::SettledByScan { .. })),
        of(|c| matches!(c, ConditionCode::Interpreted { .. })),
        native.constants
    );
    outln!(
        "  field scans  {} (ruling out {} rules without running them, deciding {} alone)",
        native.scans,
        native.guarded,
        native.decided_by_scans
    );
    for (rule, code) in &native.conditions {
        match code {
            ConditionCode::Native => {}
            ConditionCode::SettledByScan { .. } => {
                outln!("  settled      {rule}: {}", describe(code))
            }
            ConditionCode::Interpreted { .. } => {
                outln!("  interpreted  {rule}: {}", describe(code))
            }
        }
    }
    outln!(
        "  time         {:.2} ms parse + check + lower, {:.2} ms JIT",
        front_end.as_secs_f64() * 1e3,
        native.compile_time.as_secs_f64() * 1e3
    );
}

/// How a condition without a function of its own is decided, in the words both emits use.
fn describe(code: &ConditionCode) -> String {
    match code {
        ConditionCode::Native => "native code".into(),
        ConditionCode::SettledByScan { field } => format!(
            "no function: its condition is one test of `{field}` that the field scan settles both ways"
        ),
        ConditionCode::Interpreted { why } => format!("no function, interpreted: {why}"),
    }
}
