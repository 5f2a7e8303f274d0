//! `sluice fmt`: canonical formatting that keeps comments.

use std::path::PathBuf;
use std::process::ExitCode;

use sluice_compiler::diagnostics::SourceMap;
use sluice_compiler::format::format_source;
use sluice_compiler::load::{discover, read_text};

use super::report::human;
use super::{CliError, exit};

pub fn run(paths: &[PathBuf], check: bool) -> Result<ExitCode, CliError> {
    let sets = discover(paths).map_err(|e| e.to_string())?;
    let mut ok = true;
    for path in sets.iter().flat_map(|s| &s.files) {
        let shown = path.display().to_string();
        let text = read_text(path).map_err(|e| e.to_string())?;
        let formatted = match format_source(&shown, &text) {
            Ok(formatted) => formatted,
            Err(diagnostics) => {
                let mut sources = SourceMap::default();
                sources.insert(shown.clone(), text);
                outln!("{}", human(&diagnostics, &sources));
                outln!("cannot format `{shown}`: it does not parse");
                ok = false;
                continue;
            }
        };
        if formatted == text {
            continue;
        }
        if check {
            outln!("would reformat `{shown}`");
            ok = false;
        } else {
            std::fs::write(path, formatted).map_err(|e| format!("cannot write `{shown}`: {e}"))?;
            outln!("formatted `{shown}`");
        }
    }
    Ok(exit(ok))
}
