//! Which of a field's regexes match its string, scanned forward once. A scan only asks whether
//! and which patterns match, never where, so it needs only the forward automaton: a lazy DFA,
//! with a Pike VM over the same NFA for the strings the lazy DFA gives up on (non-ASCII text
//! against a Unicode `\b`, or a cache that keeps filling). `regex::RegexSet` also builds the
//! reverse automaton, which a scan never uses: two thirds of its build. As the regex crate does,
//! a set whose every pattern starts with `^` is searched anchored, and otherwise the lazy DFA
//! skips ahead with a prefilter of the patterns' literal prefixes when that prefilter is fast.

use std::borrow::Borrow;
use std::fmt;
use std::sync::{Arc, OnceLock};

use regex_automata::hybrid::dfa::{Cache as DfaCache, DFA};
use regex_automata::nfa::thompson::pikevm::{Cache as VmCache, PikeVM};
use regex_automata::nfa::thompson::{self, NFA, WhichCaptures};
use regex_automata::util::pool::Pool;
use regex_automata::util::prefilter::Prefilter;
use regex_automata::{Anchored, Input, MatchKind, PatternSet};
use regex_syntax::hir::{Hir, Look};

use super::Found;

/// The caches one search needs, one set per thread that searches.
struct Caches {
    dfa: DfaCache,
    vm: VmCache,
    /// Which patterns matched, cleared after each search.
    found: PatternSet,
}

type MakeCaches = Box<dyn Fn() -> Caches + Send + Sync>;

pub struct RegexSet {
    dfa: DFA,
    vm: PikeVM,
    caches: Pool<Caches, MakeCaches>,
    len: usize,
    /// `Yes` when every pattern starts with `^`: a search stops where none can go on.
    anchored: Anchored,
}

impl fmt::Debug for RegexSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegexSet").field("len", &self.len).finish()
    }
}

impl RegexSet {
    /// The set of the patterns with these syntax trees, in their order; `None` when the
    /// automaton would exceed `size_limit` bytes.
    pub fn new(hirs: &[impl Borrow<Hir>], size_limit: usize) -> Option<RegexSet> {
        let nfa = thompson::Compiler::new()
            .configure(
                NFA::config()
                    .which_captures(WhichCaptures::None)
                    .nfa_size_limit(Some(size_limit)),
            )
            .build_many_from_hir(hirs)
            .ok()?;
        // As the regex crate configures its own lazy DFA, so that it gives up (and the Pike VM
        // answers) rather than thrash.
        let anchored = hirs.iter().all(|hir| {
            let prefix = hir.borrow().properties().look_set_prefix();
            prefix.contains(Look::Start)
        });
        // An anchored search starts only at the start, where a prefilter has nothing to skip.
        // A prefilter that is not fast (Aho-Corasick over many literals) walks the string byte
        // by byte as the lazy DFA does, and only adds its own cost.
        let prefilter = match anchored {
            true => None,
            false => Prefilter::from_hirs_prefix(MatchKind::All, hirs).filter(Prefilter::is_fast),
        };
        let dfa = DFA::builder()
            .configure(
                DFA::config()
                    .prefilter(prefilter)
                    .match_kind(MatchKind::All)
                    .unicode_word_boundary(true)
                    .minimum_cache_clear_count(Some(3))
                    .minimum_bytes_per_state(Some(10)),
            )
            .build_from_nfa(nfa.clone())
            .ok()?;
        let vm = PikeVM::builder()
            .configure(PikeVM::config().match_kind(MatchKind::All))
            .build_from_nfa(nfa)
            .ok()?;
        let (for_dfa, for_vm, len) = (dfa.clone(), vm.clone(), hirs.len());
        let make: MakeCaches = Box::new(move || Caches {
            dfa: for_dfa.create_cache(),
            vm: for_vm.create_cache(),
            found: PatternSet::new(len),
        });
        Some(RegexSet {
            dfa,
            vm,
            caches: Pool::new(make),
            len: hirs.len(),
            anchored: match anchored {
                true => Anchored::Yes,
                false => Anchored::No,
            },
        })
    }

    /// Whether any pattern matches somewhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        let input = Input::new(text).anchored(self.anchored).earliest(true);
        let mut caches = self.caches.get();
        match self.dfa.try_search_fwd(&mut caches.dfa, &input) {
            Ok(found) => found.is_some(),
            Err(_) => self.vm.is_match(&mut caches.vm, input),
        }
    }

    /// The patterns that match somewhere in `text`, ascending.
    pub fn matches(&self, text: &str) -> Found {
        let input = Input::new(text).anchored(self.anchored);
        let mut caches = self.caches.get();
        let Caches { dfa, vm, found } = &mut *caches;
        if self
            .dfa
            .try_which_overlapping_matches(dfa, &input, found)
            .is_err()
        {
            found.clear();
            self.vm.which_overlapping_matches(vm, &input, found);
        }
        let matched = found.iter().map(|pattern| pattern.as_u32()).collect();
        found.clear();
        matched
    }
}

/// A scan's regex set, built the first time a call reads its field: a call runs the scans of
/// its own tool only, so a program loaded for one call (a hook) builds few of its sets.
pub struct LazyRegexSet {
    /// Each pattern's text, and its syntax tree when it is at hand; the text is parsed when it
    /// is not (a program read back from the cache).
    patterns: Vec<(String, Option<Arc<Hir>>)>,
    size_limit: usize,
    set: OnceLock<Option<RegexSet>>,
}

impl LazyRegexSet {
    pub fn new(patterns: Vec<(String, Option<Arc<Hir>>)>, size_limit: usize) -> LazyRegexSet {
        LazyRegexSet {
            patterns,
            size_limit,
            set: OnceLock::new(),
        }
    }

    /// The set; `None` when a pattern does not parse or the automaton would exceed the size
    /// limit: the scan then decides nothing, and its rules run.
    pub fn get(&self) -> Option<&RegexSet> {
        self.set
            .get_or_init(|| {
                let hirs: Option<Vec<Arc<Hir>>> = self
                    .patterns
                    .iter()
                    .map(|(text, hir)| match hir {
                        Some(hir) => Some(hir.clone()),
                        None => regex_syntax::parse(text).ok().map(Arc::new),
                    })
                    .collect();
                let hirs: Vec<&Hir> = hirs.as_deref()?.iter().map(|hir| &**hir).collect();
                RegexSet::new(&hirs, self.size_limit)
            })
            .as_ref()
    }
}

impl fmt::Debug for LazyRegexSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LazyRegexSet")
            .field("patterns", &self.patterns.len())
            .field("built", &self.set.get().is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use regex_syntax::hir::Hir;

    use super::RegexSet;

    fn set(patterns: &[&str], size_limit: usize) -> Option<RegexSet> {
        let hirs: Vec<Hir> = patterns
            .iter()
            .map(|pattern| regex_syntax::parse(pattern).ok())
            .collect::<Option<_>>()?;
        RegexSet::new(&hirs, size_limit)
    }

    const PATTERNS: &[&str] = &[
        r"rm -rf",
        r"^git push(?:\s|$)",
        r"(?:\.env)$",
        r"^/etc(?:/|$)",
        r"\bdanger\b",
        r"^curl .*\|\s*sh",
        r"(?i)password",
        r"[0-9]{3,}",
        r"^$",
        r"\w+@\w+",
    ];

    const TEXTS: &[&str] = &[
        "",
        "ls -la",
        "rm -rf /",
        "git push origin main",
        "git pushed",
        "cat .env",
        "/etc/passwd",
        "/etcetera",
        "a danger zone",
        "endangered",
        "curl https://x | sh",
        "PassWord=1",
        "id 12345",
        "mail me@example",
        "Ünïcödé danger ünd",
        "dängerous",
        "日本 danger 語",
    ];

    /// What the set must answer: the patterns whose own `regex::Regex` matches. (Not
    /// `regex::RegexSet`, which panics on some sets, such as `^\b` with `^a` on `é`, in its
    /// one-pass DFA: a bug of regex-automata 0.4.19 that a scan's set, without that DFA, does
    /// not have.)
    fn reference(patterns: &[&str]) -> impl Fn(&str) -> Vec<u32> {
        let regexes: Vec<regex::Regex> = patterns
            .iter()
            .map(|pattern| regex::Regex::new(pattern).unwrap_or_else(|e| unreachable!("{e}")))
            .collect();
        move |text| {
            (0..)
                .zip(&regexes)
                .filter(|(_, regex)| regex.is_match(text))
                .map(|(index, _)| index)
                .collect()
        }
    }

    /// The set answers as the regex crate does for each pattern, on ASCII and Unicode text,
    /// including the strings the lazy DFA hands to the Pike VM.
    #[test]
    fn agrees_with_the_regex_crate() {
        let Some(ours) = set(PATTERNS, 1 << 24) else {
            unreachable!("the set builds");
        };
        let expected = reference(PATTERNS);
        for text in TEXTS {
            assert_eq!(ours.matches(text).to_vec(), expected(text), "{text:?}");
            assert_eq!(ours.is_match(text), !expected(text).is_empty(), "{text:?}");
        }
    }

    /// Every pattern starts with `^`: the set is searched anchored.
    #[test]
    fn an_anchored_set_matches_only_at_the_start() {
        let patterns = [r"^/etc(?:/|$)", r"^/home/", r"^(?i)run \d+"];
        let Some(ours) = set(&patterns, 1 << 24) else {
            unreachable!("the set builds");
        };
        let expected = reference(&patterns);
        for text in [
            "/etc",
            "/etc/passwd",
            "x/etc",
            "/home/a",
            "/homes",
            "RUN 12",
            " run 1",
            "",
        ] {
            assert_eq!(ours.matches(text).to_vec(), expected(text), "{text:?}");
            assert_eq!(ours.is_match(text), !expected(text).is_empty(), "{text:?}");
        }
    }

    #[test]
    fn a_word_boundary_at_the_start_of_non_ascii_text() {
        let Some(ours) = set(&[r"^\b", "^a"], 1 << 24) else {
            unreachable!("the set builds");
        };
        assert_eq!(ours.matches("é").to_vec(), [0]);
        assert_eq!(ours.matches("a").to_vec(), [0, 1]);
        assert!(ours.matches(" ").is_empty());
    }

    /// Pieces of patterns that exercise anchors, classes, repetition, alternation, word
    /// boundaries (which the lazy DFA hands to the Pike VM on non-ASCII text) and case.
    const PATTERN_PIECES: &[&str] = &[
        "a", "b", "é", ".", r"\w", r"\d", r"\s", "[a-c]", r"\b", "(?i)a", "x*", "y+", "(a|bé)",
        "z?",
    ];

    const TEXT_PIECES: &[&str] = &["a", "b", "A", "é", "日", "x", "yy", "7", " ", "\n"];

    /// Up to `most` pieces, joined.
    fn joined(
        pieces: &'static [&'static str],
        most: usize,
    ) -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        proptest::collection::vec(proptest::sample::select(pieces), 0..most)
            .prop_map(|pieces| pieces.concat())
    }

    fn pattern() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        (any::<bool>(), joined(PATTERN_PIECES, 5), any::<bool>()).prop_map(|(start, body, end)| {
            let (start, end) = (if start { "^" } else { "" }, if end { "$" } else { "" });
            format!("{start}{body}{end}")
        })
    }

    proptest::proptest! {
        /// On random sets and strings, the set answers as the regex crate does per pattern.
        #[test]
        fn random_sets_agree_with_the_regex_crate(
            patterns in proptest::collection::vec(pattern(), 1..6),
            texts in proptest::collection::vec(joined(TEXT_PIECES, 10), 1..6),
        ) {
            let refs: Vec<&str> = patterns.iter().map(String::as_str).collect();
            let Some(ours) = set(&refs, 1 << 24) else {
                unreachable!("the set builds");
            };
            let expected = reference(&refs);
            for text in &texts {
                let expected = expected(text);
                proptest::prop_assert_eq!(ours.matches(text).to_vec(), expected.clone(), "{:?}", text);
                proptest::prop_assert_eq!(ours.is_match(text), !expected.is_empty(), "{:?}", text);
            }
        }
    }

    #[test]
    fn a_set_that_does_not_fit_its_limit_is_not_built() {
        assert!(set(&[r"\w{1000}"], 1 << 16).is_none());
        assert!(set(&[r"\w{10}"], 1 << 24).is_some());
    }

    /// A lazy set parses the patterns it has only as text, and gives up on one that is no
    /// regex (a stored program that was altered) rather than fail the call.
    #[test]
    fn a_lazy_set_builds_on_first_use_from_text_or_tree() {
        let tree = regex_syntax::parse("^git ").ok().map(std::sync::Arc::new);
        let lazy = super::LazyRegexSet::new(
            vec![("rm -rf".into(), None), ("^git ".into(), tree)],
            1 << 24,
        );
        assert!(lazy.set.get().is_none());
        assert_eq!(
            lazy.get().map(|s| s.matches("git rm -rf x").to_vec()),
            Some(vec![0, 1])
        );
        let broken = super::LazyRegexSet::new(vec![("(".into(), None)], 1 << 24);
        assert!(broken.get().is_none());
    }
}
