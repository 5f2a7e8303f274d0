//! `--watch`: run again whenever a policy file changes, on the same database, so only what the
//! change touches is recomputed.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use sluice_compiler::db::Database;
use sluice_compiler::load::{Compiled, Workspace};

use super::CliError;

/// How often the files are read again; policy sets are small.
const POLL: Duration = Duration::from_millis(250);

pub fn watch(
    paths: &[PathBuf],
    mut run: impl FnMut(&[Compiled]) -> bool,
) -> Result<ExitCode, CliError> {
    let mut db = Database::default();
    let mut workspace = Workspace::open(&mut db, paths).map_err(|e| e.to_string())?;
    loop {
        run(&workspace.compiled(&db));
        outln!("watching for changes (Ctrl+C to stop)");
        let _ = std::io::stdout().flush();
        let mut last_error = None;
        loop {
            std::thread::sleep(POLL);
            match workspace.refresh(&mut db) {
                Ok(changed) if changed.is_empty() => {}
                Ok(changed) => {
                    outln!("changed: {}", changed.join(", "));
                    break;
                }
                Err(error) => {
                    let error = error.to_string();
                    if last_error.as_ref() != Some(&error) {
                        outln!("error: {error}");
                        let _ = std::io::stdout().flush();
                        last_error = Some(error);
                    }
                }
            }
        }
    }
}
