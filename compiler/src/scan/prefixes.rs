//! Which of many regexes on one field may match, from their literal prefixes: one pass of an
//! Aho-Corasick automaton over the text finds every prefix that occurs, and only the regexes
//! with one (or with none that could be extracted) run. This is how secret scanners stay fast
//! over eighty families: the families' prefixes (`AKIA`, `ghp_`, `xoxb-`) are rare in ordinary
//! output. Unlike a regex set the answer is "may match", never "matches": a scan of prefixes
//! can rule a rule out, and leaves the rest to run.

use std::sync::{Arc, OnceLock};

use aho_corasick::AhoCorasick;
use regex_syntax::hir::Hir;
use regex_syntax::hir::literal::{ExtractKind, Extractor};

use super::Found;

/// A prefix shorter than this occurs too often to rule anything out; a regex with one runs.
const MIN_PREFIX: usize = 3;

/// The most prefixes one regex may have (a case-insensitive word has one per spelling).
const MAX_PREFIXES: usize = 256;

pub struct LazyPrefixes {
    patterns: Vec<(String, Option<Arc<Hir>>)>,
    built: OnceLock<Option<Prefixes>>,
}

struct Prefixes {
    automaton: AhoCorasick,
    /// For each prefix of the automaton, the pattern it belongs to.
    owner: Vec<u32>,
    /// The patterns without prefixes to look for: they always run.
    always: Vec<u32>,
    len: usize,
}

impl LazyPrefixes {
    pub fn new(patterns: Vec<(String, Option<Arc<Hir>>)>) -> LazyPrefixes {
        LazyPrefixes {
            patterns,
            built: OnceLock::new(),
        }
    }

    /// The patterns that may match `text`, ascending; `None` when the automaton cannot be
    /// built (then every rule runs).
    pub fn candidates(&self, text: &str) -> Option<Found> {
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
        Some(
            (0u32..)
                .zip(seen)
                .filter(|(_, seen)| *seen)
                .map(|(pattern, _)| pattern)
                .collect(),
        )
    }
}

fn build(patterns: &[(String, Option<Arc<Hir>>)]) -> Option<Prefixes> {
    let mut literals: Vec<Vec<u8>> = Vec::new();
    let mut owner = Vec::new();
    let mut always = Vec::new();
    let mut extractor = Extractor::new();
    extractor
        .kind(ExtractKind::Prefix)
        .limit_total(MAX_PREFIXES);
    for (pattern, (text, hir)) in (0u32..).zip(patterns) {
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

    fn prefixes(patterns: &[&str]) -> LazyPrefixes {
        LazyPrefixes::new(patterns.iter().map(|p| (p.to_string(), None)).collect())
    }

    /// Every regex that matches is a candidate: a prefix scan may let through, never rule out,
    /// a match.
    #[test]
    fn every_match_is_a_candidate() {
        let patterns = [
            r"(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)",
            r"ghp_[A-Za-z0-9]{36}",
            r"(?i)secret_?key\s*=\s*\S{8,}",
            r"\d{3}-\d{4}",
            r"x+",
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
            "SECRET_KEY = hunter2hunter2",
            "Secretkey=abcdefghij",
            "call 555-1234",
            "xxx",
        ] {
            let Some(candidates) = lazy.candidates(text) else {
                unreachable!("the automaton builds")
            };
            for (index, regex) in (0u32..).zip(&regexes) {
                if regex.is_match(text) {
                    assert!(candidates.contains(&index), "{text:?}: {index}");
                }
            }
        }
    }

    /// Ordinary text rules out the regexes with rare prefixes; those without a usable prefix
    /// always run.
    #[test]
    fn ordinary_text_rules_out_rare_prefixes() {
        let lazy = prefixes(&[r"AKIA[0-9A-Z]{16}", r"ghp_[A-Za-z0-9]{36}", r"\d{3}-\d{4}"]);
        let candidates = lazy.candidates("fn main() { println!(\"hello\"); }");
        assert_eq!(candidates.map(|c| c.to_vec()), Some(vec![2]));
    }
}
