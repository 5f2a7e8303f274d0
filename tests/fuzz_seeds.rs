//! The fuzz targets' bodies (`sluice::fuzz`, run by `cargo fuzz` from compiler/fuzz/) over their
//! seeds and a few mutations of each, on stable, in the normal test suite: every finding saved
//! under compiler/fuzz/regressions/TARGET/ stays fixed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may panic

use std::path::{Path, PathBuf};

/// The files under `dirs` whose extension is one of `ext` (any file when `ext` is empty).
fn files(dirs: &[&Path], ext: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = dirs.iter().map(|d| d.to_path_buf()).collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let wanted = ext.is_empty()
                || ext
                    .iter()
                    .any(|e| path.extension().is_some_and(|x| x == *e));
            let hidden = path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'));
            if path.is_dir() {
                stack.push(path);
            } else if wanted && !hidden {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A seed, cut at a few points and with a few bytes changed: cheap neighbours of each seed.
fn mutations(seed: &[u8]) -> Vec<Vec<u8>> {
    let n = seed.len();
    let mut out = vec![seed.to_vec()];
    for cut in [n / 3, n / 2, n.saturating_sub(1)] {
        out.push(seed.get(..cut).unwrap_or_default().to_vec());
    }
    for (at, byte) in [
        (n / 4, b'('),
        (n / 2, b'"'),
        (3 * n / 4, b'\n'),
        (n / 5, b'{'),
    ] {
        let mut changed = seed.to_vec();
        if let Some(slot) = changed.get_mut(at) {
            *slot = byte;
            out.push(changed);
        }
    }
    out
}

fn run(target: &str, body: fn(&[u8]), mut seeds: Vec<PathBuf>) {
    let regressions = Path::new("compiler/fuzz/regressions").join(target);
    seeds.extend(files(&[&regressions], &[]));
    assert!(!seeds.is_empty(), "no seeds for {target}");
    for path in seeds {
        let seed = std::fs::read(&path).unwrap();
        for input in mutations(&seed) {
            body(&input);
        }
    }
}

fn seeds(target: &str) -> Vec<PathBuf> {
    files(&[&Path::new("compiler/fuzz/seeds").join(target)], &[])
}

#[test]
fn policy_seeds_load_and_agree_between_interpreter_and_jit() {
    let dirs = [
        Path::new("tests/fixtures"),
        Path::new("tests/golden/diagnostics"),
        Path::new("policies"),
    ];
    let seeds = files(&dirs, &["sluice"]);
    assert!(seeds.len() > 30, "{} seeds", seeds.len());
    run("policy", sluice::fuzz::policy, seeds);
}

#[test]
fn shell_seeds_parse() {
    run("shell", sluice::fuzz::shell, seeds("shell"));
}

#[test]
fn call_seeds_are_judged_by_the_shipped_sets() {
    run("call_json", sluice::fuzz::call_json, seeds("call_json"));
}

#[test]
fn config_seeds_parse() {
    let mut all = seeds("config");
    all.extend(files(&[Path::new("tests/golden/diagnostics")], &["toml"]));
    run("config", sluice::fuzz::config, all);
}

#[test]
fn hook_event_seeds_get_a_decision_or_a_block_from_every_harness() {
    run("hook_event", sluice::fuzz::hook_event, seeds("hook_event"));
}

#[test]
fn mcp_message_seeds_are_handled_as_the_gateway_handles_them() {
    run(
        "mcp_message",
        sluice::fuzz::mcp_message,
        seeds("mcp_message"),
    );
}

#[test]
fn serve_body_seeds_get_json_below_500_from_every_endpoint() {
    run("serve_body", sluice::fuzz::serve_body, seeds("serve_body"));
}

mod policy_gen {
    use proptest::prelude::*;
    use sluice::Database;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The generator's policies reach the JIT: nine in ten of them compile (the issue's
        /// floor; a plain byte corpus reaches about one in ten), and both backends agree on them.
        #[test]
        fn generated_policies_compile_and_the_backends_agree(
            inputs in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..400), 20)
        ) {
            let mut compiled = 0;
            for data in &inputs {
                let (source, _) = sluice::fuzz::policy_gen::generate(data);
                let out = Database::default()
                    .compile_texts("gen", vec![("gen.sluice".into(), source.clone())]);
                if out.program.is_some() && out.errors().is_empty() {
                    compiled += 1;
                } else {
                    eprintln!("does not compile: {:#?}\n{source}", out.errors());
                }
                sluice::fuzz::policy_gen(data);
            }
            prop_assert!(compiled * 10 >= inputs.len() * 9, "{compiled} of {} compile", inputs.len());
        }
    }
}
