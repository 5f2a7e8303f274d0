//! Which options of a program take a value, and which of them change the directory it works in:
//! built-in data (`options.json`), read when a line is parsed, so `git -C dir push` has the
//! subcommand `push` and `git commit -m "rm -rf /"` has no operand `rm -rf /`.

use std::sync::LazyLock;

use rustc_hash::FxHashMap;
use serde::Deserialize;

/// Borrowed from the built-in text: a hook reads the table on every call that parses a line,
/// and copying each of its thousands of names was most of reading it.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct ProgramOptions {
    /// Options whose value is the next word (or follows `=`, or a short option's letter).
    #[serde(default, borrow)]
    pub value: Vec<&'static str>,
    /// Of those, the ones whose value is the directory the program works in.
    #[serde(default, borrow)]
    pub cwd: Vec<&'static str>,
}

static OPTIONS: LazyLock<FxHashMap<&'static str, ProgramOptions>> =
    LazyLock::new(|| serde_json::from_str(include_str!("options.json")).unwrap_or_default());

static NONE: LazyLock<ProgramOptions> = LazyLock::new(ProgramOptions::default);

/// The options `program` is known to take.
pub(super) fn of(program: &str) -> &'static ProgramOptions {
    OPTIONS.get(program).unwrap_or(&NONE)
}

/// Whether the table knows the options of `program`.
pub(super) fn is_known(program: &str) -> bool {
    OPTIONS.contains_key(program)
}

/// How many programs the table knows options of (for the documentation's count).
#[cfg(test)]
pub(super) fn programs() -> impl Iterator<Item = &'static str> {
    OPTIONS.keys().copied()
}
