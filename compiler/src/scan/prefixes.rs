//! Which of many regexes on one field match, narrowed by their literal prefixes: one pass of an
//! Aho-Corasick automaton over the text finds every prefix that occurs, and only the patterns
//! with one (or with none that could be extracted) are tried, each with its own regex (a literal
//! test by comparing bytes). This is how secret scanners stay fast over eighty families: the
//! families' prefixes (`AKIA`, `ghp_`, `xoxb-`) are rare in ordinary output. The answer is what
//! matches, as a regex set's is, so a rule whose whole condition is its test is decided by the
//! scan and needs no code of its own.

use std::sync::{Arc, OnceLock};

use aho_corasick::AhoCorasick;
use regex_syntax::hir::Hir;
use regex_syntax::hir::literal::{ExtractKind, Extractor};

use super::{Found, Literal};
use crate::ir::REGEX_SIZE_LIMIT;

/// A prefix shorter than this occurs too often to rule anything out; a regex with one runs.
const MIN_PREFIX: usize = 3;

/// The most prefixes one regex may have (a case-insensitive word has one per spelling).
const MAX_PREFIXES: usize = 256;

/// One pattern of the group: its regex source, its syntax tree where loading has it, and the
/// literal when the pattern is a literal test.
pub type PrefixPattern = (String, Option<Arc<Hir>>, Option<Literal>);

pub struct LazyPrefixes {
    patterns: Vec<PrefixPattern>,
    built: OnceLock<Option<Prefixes>>,
    /// Each regex pattern's own regex, compiled when a text first has its prefix.
    regexes: Vec<OnceLock<Option<regex::Regex>>>,
}

struct Prefixes {
    automaton: AhoCorasick,
    /// For each prefix of the automaton, the pattern it belongs to.
    owner: Vec<u32>,
    /// The patterns without prefixes to look for: they are always tried.
    always: Vec<u32>,
    len: usize,
}

impl LazyPrefixes {
    pub fn new(patterns: Vec<PrefixPattern>) -> LazyPrefixes {
        let regexes = patterns.iter().map(|_| OnceLock::new()).collect();
        LazyPrefixes {
            patterns,
            built: OnceLock::new(),
            regexes,
        }
    }

    /// The patterns that match `text`, ascending; `None` when the automaton or a tried
    /// pattern's regex cannot be built (then the scan cannot tell, and every rule runs).
    pub fn matches(&self, text: &str) -> Option<Found> {
        let prefixes = self.built.get_or_init(|| build(&self.patterns)).as_ref()?;
        let mut seen = vec![false; prefixes.len];
        for &pattern in &prefixes.always {
            if let Some(slot) = seen.get_mut(pattern as usize) {
                *slot = true;
            }
        }
        for found in prefixes.automaton.find_overlapping_iter(text) {
            if let Some(slot) = prefixes
                .owner
                .get(found.pattern().as_usize())
                .and_then(|&owner| seen.get_mut(owner as usize))
            {
                *slot = true;
            }
        }
        let mut matched = Found::new();
        for (pattern, seen) in (0u32..).zip(seen) {
            if seen && self.matches_one(pattern, text)? {
                matched.push(pattern);
            }
        }
        Some(matched)
    }

    /// Whether one pattern whose prefix occurs in `text` matches it.
    fn matches_one(&self, pattern: u32, text: &str) -> Option<bool> {
        let (source, _, literal) = self.patterns.get(pattern as usize)?;
        if let Some(literal) = literal {
            return Some(literal.matches(text));
        }
        let regex = self.regexes.get(pattern as usize)?.get_or_init(|| {
            regex::RegexBuilder::new(source)
                .size_limit(REGEX_SIZE_LIMIT)
                .build()
                .ok()
        });
        Some(regex.as_ref()?.is_match(text))
    }
}

fn build(patterns: &[PrefixPattern]) -> Option<Prefixes> {
    let mut literals: Vec<Vec<u8>> = Vec::new();
    let mut owner = Vec::new();
    let mut always = Vec::new();
    let mut extractor = Extractor::new();
    extractor
        .kind(ExtractKind::Prefix)
        .limit_total(MAX_PREFIXES);
    for (pattern, (text, hir, _)) in (0u32..).zip(patterns) {
        let hir = match hir {
            Some(hir) => hir.clone(),
            None => Arc::new(regex_syntax::parse(text).ok()?),
        };
        let prefixes = extractor.extract(&hir);
        let usable = prefixes.literals().filter(|found| {
            !found.is_empty() && found.iter().all(|literal| literal.len() >= MIN_PREFIX)
        });
        match usable {
            Some(found) => {
                // Folded to one case and searched without regard to it: a case-insensitive
                // regex's prefixes are one literal each instead of one per spelling, and "may
                // match" stays true of every spelling.
                let mut folded: Vec<Vec<u8>> = found
                    .iter()
                    .map(|literal| literal.as_bytes().to_ascii_lowercase())
                    .collect();
                folded.sort_unstable();
                folded.dedup();
                for literal in folded {
                    literals.push(literal);
                    owner.push(pattern);
                }
            }
            None => always.push(pattern),
        }
    }
    let automaton = AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::Standard)
        .ascii_case_insensitive(true)
        // A DFA: one pass over a long tool output costs a quarter less than the NFA it would
        // otherwise pick for this many literals.
        .kind(Some(aho_corasick::AhoCorasickKind::DFA))
        .build(&literals)
        .ok()?;
    Some(Prefixes {
        automaton,
        owner,
        always,
        len: patterns.len(),
    })
}

impl std::fmt::Debug for LazyPrefixes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyPrefixes")
            .field("patterns", &self.patterns.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::LazyPrefixes;
    use crate::scan::Literal;

    fn prefixes(patterns: &[&str]) -> LazyPrefixes {
        LazyPrefixes::new(
            patterns
                .iter()
                .map(|p| (p.to_string(), None, None))
                .collect(),
        )
    }

    /// A prefix scan answers exactly what matches: every pattern whose regex matches, and no
    /// other, though its prefix occurs (`ghp_` too short for its family, `x` in any text).
    #[test]
    fn a_scan_finds_exactly_the_patterns_that_match() {
        let patterns = [
            r"(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)",
            r"ghp_[A-Za-z0-9]{36}",
            r"(?i)secret_?key\s*=\s*\S{8,}",
            r"\d{3}-\d{4}",
            r"x+",
            r"^run12 .*--danger",
        ];
        let lazy = prefixes(&patterns);
        let regexes: Vec<regex::Regex> = patterns
            .iter()
            .map(|p| regex::Regex::new(p).unwrap_or_else(|e| unreachable!("{e}")))
            .collect();
        for text in [
            "",
            "nothing here",
            "key AKIAIOSFODNN7EXAMPLE end",
            "ghp_abcdefghijklmnopqrstuvwxyzABCDEF0123",
            "ghp_short",
            "SECRET_KEY = hunter2hunter2",
            "Secretkey=abcdefghij",
            "secret_key = short",
            "call 555-1234",
            "xxx",
            "run12 build --danger",
            "run123 build --danger",
            "echo run12 x --danger",
        ] {
            let Some(found) = lazy.matches(text) else {
                unreachable!("the automaton builds")
            };
            let expected: Vec<u32> = (0u32..)
                .zip(&regexes)
                .filter(|(_, regex)| regex.is_match(text))
                .map(|(index, _)| index)
                .collect();
            assert_eq!(found.to_vec(), expected, "{text:?}");
        }
    }

    /// Ordinary text rules out the regexes with rare prefixes without trying them.
    #[test]
    fn ordinary_text_tries_only_the_patterns_without_a_prefix() {
        let lazy = prefixes(&[r"AKIA[0-9A-Z]{16}", r"ghp_[A-Za-z0-9]{36}", r"\d{3}-\d{4}"]);
        let found = lazy.matches("fn main() { println!(\"hello\"); }");
        assert_eq!(found.map(|c| c.to_vec()), Some(vec![]));
        assert!(lazy.regexes.first().is_some_and(|r| r.get().is_none()));
        assert!(lazy.regexes.get(2).is_some_and(|r| r.get().is_some()));
    }

    /// A literal test is answered by its literal, as a scan of it alone would answer.
    #[test]
    fn a_literal_test_is_compared_not_compiled() {
        let lazy = LazyPrefixes::new(vec![
            (
                "^/etc(/|$)".into(),
                None,
                Some(Literal::Under("/etc".into())),
            ),
            (
                "cmd1x".into(),
                None,
                Some(Literal::Contains("cmd1x".into())),
            ),
        ]);
        assert_eq!(
            lazy.matches("/etc/passwd").map(|f| f.to_vec()),
            Some(vec![0])
        );
        assert_eq!(lazy.matches("/etcetera").map(|f| f.to_vec()), Some(vec![]));
        assert_eq!(lazy.matches("echo CMD1X").map(|f| f.to_vec()), Some(vec![]));
        assert_eq!(
            lazy.matches("echo cmd1x").map(|f| f.to_vec()),
            Some(vec![1])
        );
        assert!(lazy.regexes.iter().all(|r| r.get().is_none()));
    }
}
