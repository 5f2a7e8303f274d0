//! `sluice check`: parse, check and lint.

use std::path::PathBuf;
use std::process::ExitCode;

use sluice_compiler::db::Database;
use sluice_compiler::load::discover;

use super::report::{human, json, plural};
use super::{CliError, Format, exit};

pub fn run(paths: &[PathBuf], deny_warnings: bool, format: Format) -> Result<ExitCode, CliError> {
    let sets = discover(paths).map_err(|e| e.to_string())?;
    let mut db = Database::default();
    let (mut errors, mut warnings) = (0, 0);
    let mut all_json = Vec::new();
    for source in &sets {
        let compiled = db.load(source).map_err(|e| e.to_string())?;
        errors += compiled.diagnostics.iter().filter(|d| d.is_error()).count();
        warnings += compiled
            .diagnostics
            .iter()
            .filter(|d| !d.is_error())
            .count();
        match format {
            Format::Human => {
                if !compiled.diagnostics.is_empty() {
                    println!("{}", human(&compiled.diagnostics, &compiled.sources));
                }
            }
            Format::Json => all_json.extend(json(&compiled.diagnostics, &compiled.sources)),
        }
    }
    match format {
        Format::Human => println!(
            "{}, {} in {}",
            plural(errors, "error"),
            plural(warnings, "warning"),
            plural(sets.len(), "policy set")
        ),
        Format::Json => println!("{}", serde_json::Value::Array(all_json)),
    }
    Ok(exit(errors == 0 && (!deny_warnings || warnings == 0)))
}
