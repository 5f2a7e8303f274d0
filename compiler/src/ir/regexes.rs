//! A policy's regexes: each pattern's size is checked when the policy loads, and the regex is
//! compiled the first time a rule runs it. Most rules' regexes are answered by a field scan's
//! regex set and never run on their own, so compiling each one up front was a fifth of the
//! load.

use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_syntax::hir::Hir;

/// The size limit of every compiled regex, so that a hostile pattern cannot exhaust memory.
pub const REGEX_SIZE_LIMIT: usize = 1 << 22;

/// A regex of the program: its pattern and syntax tree, which loading has checked, and the
/// compiled regex once a rule has run it.
#[derive(Clone)]
pub struct PolicyRegex {
    pattern: Arc<str>,
    /// Kept for the field scans, which build their automata from it rather than parse again.
    /// A program read back from the cache has only the pattern, parsed again when a scan
    /// first needs it.
    hir: OnceLock<Option<Arc<Hir>>>,
    compiled: OnceLock<Option<regex::Regex>>,
}

impl PolicyRegex {
    /// A regex whose syntax tree passed [`check_size_of`] (and the checker's syntax check).
    pub fn new(pattern: Arc<str>, hir: Arc<Hir>) -> PolicyRegex {
        PolicyRegex {
            pattern,
            hir: OnceLock::from(Some(hir)),
            compiled: OnceLock::new(),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// The syntax tree, if it is at hand: a program read back from the cache has not parsed
    /// its patterns.
    pub fn parsed(&self) -> Option<&Arc<Hir>> {
        self.hir.get().and_then(Option::as_ref)
    }

    /// The compiled regex, compiled on first use. `None` only if the regex crate refuses a
    /// pattern [`check_size`] accepted; the rule running it then faults, and a fault denies.
    pub fn regex(&self) -> Option<&regex::Regex> {
        self.compiled
            .get_or_init(|| {
                regex::RegexBuilder::new(&self.pattern)
                    .size_limit(REGEX_SIZE_LIMIT)
                    .build()
                    .ok()
            })
            .as_ref()
    }
}

impl serde::Serialize for PolicyRegex {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.pattern.serialize(serializer)
    }
}

/// A stored regex is only its pattern: compiling it is left to its first use, as for a fresh
/// one, and a pattern the regex crate refuses makes the rule running it fault.
impl<'de> serde::Deserialize<'de> for PolicyRegex {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(PolicyRegex {
            pattern: Arc::<str>::deserialize(deserializer)?,
            hir: OnceLock::new(),
            compiled: OnceLock::new(),
        })
    }
}

impl std::fmt::Debug for PolicyRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PolicyRegex").field(&self.pattern).finish()
    }
}

thread_local! {
    /// One forward and one reverse NFA compiler per thread, reused: a compiler's first regex
    /// with a Unicode class allocates a 10,000-entry cache that every later one reuses.
    static COMPILERS: RefCell<Option<(thompson::Compiler, thompson::Compiler)>> =
        const { RefCell::new(None) };
}

/// Checks that `pattern` parses and compiles within [`REGEX_SIZE_LIMIT`], and returns its syntax
/// tree.
pub fn check_size(pattern: &str) -> Result<Hir, String> {
    let hir = regex_syntax::Parser::new()
        .parse(pattern)
        .map_err(|e| e.to_string())?;
    check_size_of(&hir)?;
    Ok(hir)
}

/// Checks that a parsed regex compiles within [`REGEX_SIZE_LIMIT`]: the regex crate builds a
/// forward NFA with captures and a reverse one without, and refuses the regex when either
/// exceeds the limit, so this builds the same two.
pub fn check_size_of(hir: &Hir) -> Result<(), String> {
    COMPILERS.with(|cell| {
        let mut compilers = cell.borrow_mut();
        let (forward, reverse) = compilers.get_or_insert_with(|| {
            let config = thompson::Config::new()
                .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
                .shrink(false);
            let mut forward = thompson::Compiler::new();
            forward.configure(config.clone().which_captures(WhichCaptures::All));
            let mut reverse = thompson::Compiler::new();
            reverse.configure(config.which_captures(WhichCaptures::None).reverse(true));
            (forward, reverse)
        });
        forward.build_from_hir(hir).map_err(|e| e.to_string())?;
        reverse.build_from_hir(hir).map_err(|e| e.to_string())?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_size_check_agrees_with_the_regex_crate() {
        for pattern in [
            "^git .*force",
            r"\w{50}",
            r"\w{100}",
            r"\w{1000}",
            r"(\w{100}){100}",
            r"[a-z]{5000}",
            r"\pL{2000}",
        ] {
            let checked = check_size(pattern).is_ok();
            let built = regex::RegexBuilder::new(pattern)
                .size_limit(REGEX_SIZE_LIMIT)
                .build()
                .is_ok();
            assert_eq!(checked, built, "{pattern}");
        }
    }

    #[test]
    fn a_regex_is_compiled_once_on_first_use() {
        let Ok(hir) = check_size("^rm ") else {
            unreachable!("a small regex passes")
        };
        let regex = PolicyRegex::new("^rm ".into(), Arc::new(hir));
        assert!(regex.compiled.get().is_none());
        assert!(regex.regex().is_some_and(|r| r.is_match("rm -rf /")));
        assert!(regex.compiled.get().is_some());
    }
}
