//! The index of the shell model's built-in JSON tables, made by the crate's build script
//! (`compiler/build.rs`): each entry's place in the text included here, found by a binary
//! search, so a process reads the entries of the programs its commands name and no others.

/// `options.json`: which options of each program take a value.
pub(super) static OPTIONS_TEXT: &str = include_str!("options.json");

/// `effects.json`: what commands do.
pub(super) static EFFECTS_TEXT: &str = include_str!("effects.json");

include!(concat!(env!("OUT_DIR"), "/shell_tables.rs"));

/// The text at `place` in `table`; empty for a place outside it, which reads as no entry.
pub(super) fn entry(table: &'static str, (start, end): (u32, u32)) -> &'static str {
    table.get(start as usize..end as usize).unwrap_or_default()
}
