//! Printing diagnostics for people and for machines.

use sluice_compiler::diagnostics::{Diagnostic, SourceMap, render_human, to_json};

/// Fixed so that output does not depend on the terminal.
pub const WIDTH: usize = 100;

pub fn human(diagnostics: &[Diagnostic], sources: &SourceMap) -> String {
    diagnostics
        .iter()
        .map(|d| render_human(d, sources, WIDTH))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn json(diagnostics: &[Diagnostic], sources: &SourceMap) -> Vec<serde_json::Value> {
    diagnostics
        .iter()
        .filter_map(|d| serde_json::to_value(to_json(d, sources)).ok())
        .collect()
}

pub fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}
