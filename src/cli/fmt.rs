//! `sluice fmt`: canonical formatting.

use std::path::PathBuf;
use std::process::ExitCode;

use super::CliError;

pub fn run(_paths: &[PathBuf], _check: bool) -> Result<ExitCode, CliError> {
    Err("fmt is not built yet".into())
}
