//! Golden diagnostics: one failing policy per code under `tests/golden/diagnostics/`, its rendered
//! report snapshotted (no colour, fixed width), and a fixed version that is clean. The
//! diagnostics catalogue in `lang-spec/diagnostics.md` is generated from the registry and these
//! fixtures; this test fails when it is stale (`UPDATE_DOCS=1 cargo test --test golden` rewrites it).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

use std::path::{Path, PathBuf};

use sluice::Database;
use sluice::compiler::diagnostics::{Code, REGISTRY, SourceMap, render_human};
use sluice::compiler::load::SetSource;
use sluice::runtime::config::{Config, ConfigError};

const FIXTURES: &str = "tests/golden/diagnostics";

/// A fixture's diagnostics and the texts they point into: a policy file, or for the
/// configuration's codes a `sluice.toml` (`CODE.toml`).
struct Checked {
    diagnostics: Vec<sluice::compiler::diagnostics::Diagnostic>,
    sources: SourceMap,
}

fn compile(path: &Path) -> Checked {
    if path.extension().is_some_and(|e| e == "toml") {
        let text = std::fs::read_to_string(path).expect("fixture");
        let checked = Config::parse(path, text).and_then(|config| config.set_sources().map(drop));
        return match checked {
            Ok(()) => Checked {
                diagnostics: Vec::new(),
                sources: SourceMap::default(),
            },
            Err(ConfigError::Invalid {
                diagnostics,
                sources,
                ..
            }) => Checked {
                diagnostics,
                sources,
            },
            Err(other) => panic!("{}: {other}", path.display()),
        };
    }
    let source = SetSource {
        name: path.display().to_string(),
        files: vec![path.to_path_buf()],
    };
    let compiled = Database::default().load(&source).expect("fixture loads");
    Checked {
        diagnostics: compiled.diagnostics,
        sources: compiled.sources,
    }
}

/// `CODE.sluice`, or `CODE.toml` for a code about the configuration.
fn fixture_in(dir: PathBuf, code: Code) -> PathBuf {
    let toml = dir.join(format!("{}.toml", code.short()));
    if toml.exists() {
        return toml;
    }
    dir.join(format!("{}.sluice", code.short()))
}

fn fixture(code: Code) -> PathBuf {
    fixture_in(PathBuf::from(FIXTURES), code)
}

fn fixed(code: Code) -> PathBuf {
    fixture_in(PathBuf::from(FIXTURES).join("fixed"), code)
}

#[test]
fn every_code_has_a_failing_fixture_that_reports_it() {
    for info in REGISTRY {
        let compiled = compile(&fixture(info.code));
        assert!(
            compiled.diagnostics.iter().any(|d| d.code == info.code),
            "{} does not report {}: {:#?}",
            fixture(info.code).display(),
            info.id,
            compiled.diagnostics
        );
        let rendered: Vec<String> = compiled
            .diagnostics
            .iter()
            .map(|d| render_human(d, &compiled.sources, 100))
            .collect();
        insta::assert_snapshot!(info.code.short(), rendered.join("\n"));
    }
}

#[test]
fn every_fixed_fixture_is_clean() {
    for info in REGISTRY {
        let compiled = compile(&fixed(info.code));
        assert!(
            compiled.diagnostics.is_empty(),
            "{} is not clean: {:#?}",
            fixed(info.code).display(),
            compiled.diagnostics
        );
    }
}

#[test]
fn every_fixture_names_a_code() {
    for entry in std::fs::read_dir(FIXTURES).expect("fixtures") {
        let path = entry.expect("entry").path();
        if path
            .extension()
            .is_some_and(|e| e == "sluice" || e == "toml")
        {
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            assert!(
                Code::from_short(stem).is_some(),
                "{} names no diagnostic code",
                path.display()
            );
        }
    }
}

#[test]
fn diagnostics_catalogue_is_generated_from_the_registry() {
    let mut page = String::from(
        "# Diagnostics\n\n\
         <!-- Generated from the registry (compiler/src/diagnostics/registry.rs) and the fixtures in\n\
         tests/golden/diagnostics/ by `UPDATE_DOCS=1 cargo test --test golden`. Do not edit. -->\n\n\
         Every diagnostic has a stable code: `sluice::E…` for errors, which stop a policy set from\n\
         loading, and `sluice::W…` for warnings. Each entry shows a policy that triggers it, the\n\
         report `sluice check` prints for it, and the policy fixed. `sluice explain CODE` prints\n\
         one entry, from the binary; the language server shows it on hovering over a diagnostic.\n\n",
    );
    page.push_str("| code | name | meaning |\n| --- | --- | --- |\n");
    for info in REGISTRY {
        page.push_str(&format!(
            "| [`{}`](#{}) | {} | {} |\n",
            info.id,
            info.code.short().to_lowercase(),
            info.name,
            info.summary
        ));
    }
    for info in REGISTRY {
        let bad = std::fs::read_to_string(fixture(info.code)).expect("fixture");
        let good = std::fs::read_to_string(fixed(info.code)).expect("fixed fixture");
        let lang = if fixture(info.code).extension().is_some_and(|e| e == "toml") {
            "toml"
        } else {
            "sluice"
        };
        let compiled = compile(&fixture(info.code));
        let report: Vec<String> = compiled
            .diagnostics
            .iter()
            .filter(|d| d.code == info.code)
            .map(|d| render_human(d, &compiled.sources, 100))
            .collect();
        page.push_str(&format!(
            "\n## {}\n\n`{}` ({}) — {}\n\nFails:\n\n```{lang}\n{}```\n\n```text\n{}```\n\nFixed:\n\n```{lang}\n{}```\n",
            info.code.short(),
            info.id,
            info.name,
            info.summary,
            bad,
            report.join("\n"),
            good
        ));
    }
    let target = Path::new("lang-spec/diagnostics.md");
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(target, &page).expect("write catalogue");
    }
    let current = std::fs::read_to_string(target).unwrap_or_default();
    assert!(
        current == page,
        "lang-spec/diagnostics.md is stale: run `UPDATE_DOCS=1 cargo test --test golden`"
    );
}
