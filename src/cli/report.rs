//! Printing diagnostics for people and for machines.

use sluice_compiler::diagnostics::{
    Diagnostic, MAX_PER_CODE, MAX_PER_FILE, SourceMap, capped, render_human, to_json,
};

/// Fixed so that output does not depend on the terminal.
pub const WIDTH: usize = 100;

/// At most [`MAX_PER_CODE`] diagnostics of one code and [`MAX_PER_FILE`] in all for each file;
/// the rest are counted (`--format json` lists every one).
pub fn human(diagnostics: &[Diagnostic], sources: &SourceMap) -> String {
    let (shown, left_out) = capped(diagnostics);
    let mut blocks: Vec<String> = shown
        .into_iter()
        .map(|d| render_human(d, sources, WIDTH))
        .collect();
    for (file, n) in left_out {
        let what = if n == 1 { "diagnostic" } else { "diagnostics" };
        blocks.push(format!(
            "… and {n} more {what} in {file} (at most {MAX_PER_CODE} of each code and {MAX_PER_FILE} in all are shown per file; `--format json` lists every one)\n"
        ));
    }
    blocks.join("\n")
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
