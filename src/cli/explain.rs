//! `sluice explain CODE`: a diagnostic code's page, as `rustc --explain` prints one. The pages
//! are lang-spec/diagnostics.md, built into the binary so that they exist wherever it runs.

use std::process::ExitCode;

use sluice_compiler::diagnostics::{Code, REGISTRY, did_you_mean};

use super::CliError;

const CATALOGUE: &str = include_str!("../../lang-spec/diagnostics.md");

/// The code a user typed (`E0007`, `e0007`, `sluice::E0007`), if it is one.
pub fn parse_code(text: &str) -> Option<Code> {
    let text = text.trim();
    let short = text.strip_prefix("sluice::").unwrap_or(text);
    Code::from_short(&short.to_ascii_uppercase())
}

/// A code's section of the catalogue: its heading, meaning, failing and fixed examples.
pub fn page(code: Code) -> Option<&'static str> {
    let heading = format!("## {}\n", code.short());
    let start = CATALOGUE.find(&heading)?;
    let body = CATALOGUE.get(start + heading.len()..)?;
    let end = body.find("\n## ").map_or(body.len(), |i| i + 1);
    CATALOGUE
        .get(start..start + heading.len() + end)
        .map(str::trim_end)
}

pub fn run(code: &str) -> Result<ExitCode, CliError> {
    let Some(found) = parse_code(code) else {
        let upper = code.trim().to_ascii_uppercase();
        let suggestion = did_you_mean(&upper, REGISTRY.iter().map(|info| info.code.short()))
            .map(|s| format!("did you mean `{s}`? "))
            .unwrap_or_default();
        return Err(format!(
            "`{code}` is not a diagnostic code; {suggestion}codes look like `E0007` or `W0004`, \
             and `sluice check` prints the code of every diagnostic"
        ));
    };
    let text = page(found).ok_or_else(|| format!("no page for `{}`", found.id()))?;
    outln!("{text}");
    Ok(ExitCode::SUCCESS)
}
