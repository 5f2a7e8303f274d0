//! `sluice check`: parse, check and lint.

use std::path::PathBuf;
use std::process::ExitCode;

use sluice_compiler::db::Database;
use sluice_compiler::load::{Compiled, Workspace};

use super::report::{human, json, plural};
use super::{CliError, Format, exit, watch};

pub fn run(
    paths: &[PathBuf],
    deny_warnings: bool,
    format: Format,
    watching: bool,
) -> Result<ExitCode, CliError> {
    if watching {
        return watch::watch(paths, |sets| report(sets, deny_warnings, format));
    }
    let mut db = Database::default();
    let workspace = Workspace::open(&mut db, paths).map_err(|e| e.to_string())?;
    Ok(exit(report(
        &workspace.compiled(&db),
        deny_warnings,
        format,
    )))
}

/// Prints the diagnostics of every set; whether the check passed.
fn report(sets: &[Compiled], deny_warnings: bool, format: Format) -> bool {
    let (mut errors, mut warnings) = (0, 0);
    let mut all_json = Vec::new();
    for compiled in sets {
        errors += compiled.diagnostics.iter().filter(|d| d.is_error()).count();
        warnings += compiled
            .diagnostics
            .iter()
            .filter(|d| !d.is_error())
            .count();
        match format {
            Format::Human => {
                if !compiled.diagnostics.is_empty() {
                    outln!("{}", human(&compiled.diagnostics, &compiled.sources));
                }
            }
            Format::Json => all_json.extend(json(&compiled.diagnostics, &compiled.sources)),
        }
    }
    match format {
        Format::Human => outln!(
            "{}, {} in {}",
            plural(errors, "error"),
            plural(warnings, "warning"),
            plural(sets.len(), "policy set")
        ),
        Format::Json => outln!("{}", serde_json::Value::Array(all_json)),
    }
    errors == 0 && (!deny_warnings || warnings == 0)
}
