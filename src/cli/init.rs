//! `sluice init`: a commented starter configuration, so a first run needs no reading.

use std::process::ExitCode;

use sluice_runtime::config::FILE_NAME;

use super::CliError;

/// The starter file: the shipped shell and git guards, and the usual context sources.
pub use sluice_runtime::config::STARTER;

pub fn run(force: bool) -> Result<ExitCode, CliError> {
    let path = std::path::Path::new(FILE_NAME);
    if path.exists() && !force {
        return Err(format!(
            "`{FILE_NAME}` already exists: edit it, or pass `--force` to replace it"
        ));
    }
    std::fs::write(path, STARTER).map_err(|e| format!("cannot write `{FILE_NAME}`: {e}"))?;
    outln!(
        "wrote {FILE_NAME}: {} policy sets in chain order; try `sluice eval --command 'rm -rf /'`",
        STARTER.matches("[[policy]]\nset").count()
    );
    Ok(ExitCode::SUCCESS)
}
