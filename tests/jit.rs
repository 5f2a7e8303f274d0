//! The JIT's compiled code as a value: shared across threads, verified, and freed when dropped.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

use std::sync::{Arc, RwLock, RwLockReadGuard};

use serde_json::json;
use sluice::compiler::call::Call;
use sluice::compiler::executable::Executable;
use sluice::compiler::interp::{CallJson, Facts};
use sluice::compiler::ir::Program;
use sluice::compiler::jit::{self, Backend, JitOptions};
use sluice::{Database, Evaluator};

const POLICY: &str = r#"
tool bash { command: string, cwd: string? }
precheck deny_rm on bash when args.command matches r"\brm\s+-rf\b" => deny "no {args.command}"
precheck ask_outside on bash when not path(args.cwd ?? "/w").under("/w") => ask "outside"
gate labelled on bash when any(l in agent.labels, l.starts_with("ro:")) => "read-only"
"#;

fn program() -> Arc<Program> {
    let compiled = Database::default().compile_texts("p", vec![("p.sluice".into(), POLICY.into())]);
    assert!(!compiled.has_errors(), "{:?}", compiled.diagnostics);
    compiled.program.expect("program")
}

/// The memory test measures the whole process: it runs alone, the other tests alongside each
/// other, so that no other test's allocations show in it.
static ALONE: RwLock<()> = RwLock::new(());

fn alongside_others() -> RwLockReadGuard<'static, ()> {
    ALONE
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn resident_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("linux");
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4
}

#[test]
fn loading_and_dropping_ten_thousand_sets_does_not_grow_memory() {
    let _alone = ALONE
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let program = program();
    let call = Call::new("bash", json!({ "command": "rm -rf /" }));
    // Warm up allocator pools so that only a leak shows.
    for _ in 0..1_000 {
        let executable = Executable::new(program.clone(), Backend::Jit);
        assert_eq!(
            executable.evaluator().evaluate(&call).decision.as_str(),
            "deny"
        );
    }
    let before = resident_kib();
    for _ in 0..10_000 {
        let executable = Executable::new(program.clone(), Backend::Jit);
        assert_eq!(executable.backend(), Backend::Jit);
        drop(executable);
    }
    let grown = resident_kib().saturating_sub(before);
    // Every set maps at least a page of code: 10,000 leaked sets would be 40 MiB or more.
    assert!(grown < 8 * 1024, "resident memory grew by {grown} KiB");
}

#[test]
fn compiled_code_is_shared_across_threads() {
    let _shared = alongside_others();
    let executable = Arc::new(Executable::new(program(), Backend::Jit));
    let reference = program();
    let threads: Vec<_> = (0..4)
        .map(|n| {
            let executable = executable.clone();
            let reference = reference.clone();
            std::thread::spawn(move || {
                // Four threads on a loaded machine: the comparison must not hang on the clock.
                let _untimed = sluice::compiler::budget::unbounded();
                for i in 0..500 {
                    let command = if (i + n) % 3 == 0 { "rm -rf x" } else { "ls" };
                    let mut call = Call::new("bash", json!({ "command": command, "cwd": "/tmp" }));
                    call.agent.labels = vec![format!("ro:{}", i % 2)];
                    assert_eq!(
                        executable.evaluator().evaluate(&call),
                        Evaluator::interpreted(&reference).evaluate(&call)
                    );
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("no thread panicked");
    }
}

#[test]
fn every_generated_function_passes_the_verifier() {
    let _shared = alongside_others();
    let program = program();
    let native = jit::compile(
        &program,
        JitOptions {
            verify: true,
            keep_clif: true,
        },
    )
    .expect("verified");
    // `deny_rm`'s condition is one scanned regex, which its scan decides: it has no code.
    assert_eq!(native.stats().compiled, 2);
    assert_eq!(native.clif().len(), 2);
    assert!(native.clif()[0].contains("call fn"), "{}", native.clif()[0]);
}

#[test]
fn the_interpreter_backend_compiles_nothing() {
    let _shared = alongside_others();
    let executable = Executable::new(program(), Backend::Interp);
    assert_eq!(executable.backend(), Backend::Interp);
    assert!(executable.native().is_none());
    assert!(executable.fallback().is_none());
}

#[test]
fn field_scans_rule_out_rules_but_a_field_of_the_wrong_type_still_fails_closed() {
    let _shared = alongside_others();
    let policy = r#"
tool t { command: string }
precheck a on t when args.command.contains("rm") => deny "a"
precheck b on t when args.command.starts_with("sudo") and args.command.contains("-i") => ask "b"
precheck c on t when args.command matches r"^git\s+push" => ask "c"
"#;
    let compiled = Database::default().compile_texts("p", vec![("p.sluice".into(), policy.into())]);
    let executable = Executable::new(compiled.program.expect("program"), Backend::Jit);
    let stats = executable.native().expect("jit").stats();
    assert_eq!((stats.scans, stats.guarded), (1, 3), "{stats:?}");

    let decide = |args| executable.evaluator().evaluate(&Call::new("t", args));
    let quiet = decide(json!({ "command": "ls -la" }));
    assert_eq!(quiet.decision.as_str(), "delegate");
    assert!(quiet.matched.is_empty() && quiet.errors.is_empty());

    let sudo = decide(json!({ "command": "sudo -i" }));
    assert_eq!(sudo.decision.as_str(), "ask");
    assert_eq!(sudo.rule.as_ref().map(|r| &*r.name), Some("b"));

    // A number where a string is declared: no scan can answer, every rule runs and fails closed.
    let wrong = decide(json!({ "command": 5 }));
    assert_eq!(wrong.decision.as_str(), "deny");
    assert_eq!(wrong.errors.len(), 3, "{:?}", wrong.errors);
}

#[test]
fn facts_read_for_another_program_are_refused() {
    let _shared = alongside_others();
    let program = program();
    let native = jit::compile(&program, JitOptions::default()).expect("jit");
    let other = Database::default()
        .compile_texts(
            "other",
            vec![("o.sluice".into(), "tool bash { command: string }\n".into())],
        )
        .program
        .expect("program");
    let call = Call::new("bash", json!({ "command": "ls" }));
    let json = CallJson::of(&call);
    let roots = json.roots(&call);
    let foreign = Facts::fill(&other, &call.tool, &roots);
    assert!(native.frame(&program, &foreign).is_none());
    let own = Facts::fill(&program, &call.tool, &roots);
    assert!(native.frame(&program, &own).is_some());
}
