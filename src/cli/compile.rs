//! `sluice compile`: what the compiler makes of policy sets, for people who debug the compiler
//! or a slow policy.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use sluice_compiler::ast::RuleKind;
use sluice_compiler::db::Database;
use sluice_compiler::ir::{Program, render_program};
use sluice_compiler::jit::{self, JitOptions};
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
                for function in native.clif() {
                    outln!("{function}");
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
    outln!(
        "  native       {} of {} conditions ({} string constants)",
        native.compiled + native.decided_by_scans,
        program
            .rules
            .iter()
            .filter(|r| r.condition.is_some())
            .count(),
        native.constants
    );
    outln!(
        "  field scans  {} (ruling out {} rules without running them, deciding {} alone)",
        native.scans,
        native.guarded,
        native.decided_by_scans
    );
    for rule in &native.untranslated {
        outln!("  interpreted  {rule}");
    }
    outln!(
        "  time         {:.2} ms parse + check + lower, {:.2} ms JIT",
        front_end.as_secs_f64() * 1e3,
        native.compile_time.as_secs_f64() * 1e3
    );
}
