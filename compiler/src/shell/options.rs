//! Which options of a program take a value, and which of them change the directory it works in:
//! built-in data (`options.json`), read when a line is parsed, so `git -C dir push` has the
//! subcommand `push` and `git commit -m "rm -rf /"` has no operand `rm -rf /`.

use std::sync::OnceLock;

use serde::Deserialize;

use super::tables::{self, OPTION_ENTRIES, OPTIONS_TEXT};

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
    /// Long options without a value that the program also reads by any unambiguous prefix, as
    /// getopt_long and git's option parser do (`git reset --har`, `rm --recur`); the value
    /// options above are read by prefix too.
    #[serde(default, borrow)]
    pub long: Vec<&'static str>,
}

/// How many characters after `--` a word needs before it is read as an abbreviation.
const SHORTEST_ABBREVIATION: usize = 2;

impl ProgramOptions {
    /// The long options `written` (`--name`, without a value) abbreviates: every known long option
    /// it is a proper prefix of. A prefix of several is read as each of them, the strictest
    /// reading of a command the program would refuse as ambiguous.
    pub(super) fn completions(&self, written: &str) -> Vec<&'static str> {
        let Some(name) = written.strip_prefix("--") else {
            return Vec::new();
        };
        if name.len() < SHORTEST_ABBREVIATION
            || self.value.contains(&written)
            || self.long.contains(&written)
        {
            return Vec::new();
        }
        self.value
            .iter()
            .chain(&self.long)
            .copied()
            .filter(|option| option.starts_with("--") && option.len() > written.len())
            .filter(|option| option.starts_with(written))
            .collect()
    }
}

/// Each program's options, read from their text on first use: a call names a few programs of
/// the hundreds the table knows.
static READ: [OnceLock<ProgramOptions>; OPTION_ENTRIES.len()] =
    [const { OnceLock::new() }; OPTION_ENTRIES.len()];

static NONE: ProgramOptions = ProgramOptions {
    value: Vec::new(),
    cwd: Vec::new(),
    long: Vec::new(),
};

/// The number of `program`'s entry in the table.
fn entry_of(program: &str) -> Option<usize> {
    OPTION_ENTRIES
        .binary_search_by(|(name, _, _)| (*name).cmp(program))
        .ok()
}

/// The text of entry `number`.
fn text_of(number: usize) -> &'static str {
    OPTION_ENTRIES
        .get(number)
        .map(|&(_, start, end)| tables::entry(OPTIONS_TEXT, (start, end)))
        .unwrap_or_default()
}

/// The options `program` is known to take.
pub(super) fn of(program: &str) -> &'static ProgramOptions {
    let read = entry_of(program).and_then(|number| Some((number, READ.get(number)?)));
    match read {
        Some((number, read)) => {
            read.get_or_init(|| serde_json::from_str(text_of(number)).unwrap_or_default())
        }
        None => &NONE,
    }
}

/// Whether the table knows the options of `program`.
pub(super) fn is_known(program: &str) -> bool {
    entry_of(program).is_some()
}

/// Whether the options of `program`, which the table names, do not read (a malformed entry).
#[cfg(test)]
pub(super) fn unreadable(program: &str) -> bool {
    entry_of(program)
        .is_some_and(|number| serde_json::from_str::<ProgramOptions>(text_of(number)).is_err())
}

/// How many programs the table knows options of (for the documentation's count).
#[cfg(test)]
pub(super) fn programs() -> impl Iterator<Item = &'static str> {
    OPTION_ENTRIES.iter().map(|&(program, _, _)| program)
}
