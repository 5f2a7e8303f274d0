//! One call's scans: each field is scanned when a rule first needs it, at most once per call.

use std::borrow::Cow;

use serde_json::Value as Json;
use smallvec::SmallVec;

use super::{Found, Matcher, Plan, Scan, Scans, View};
use crate::ast::RuleKind;
use crate::interp::{Facts, Roots, ScanInput, path};
use crate::ir::{Program, RuleIr, ToolRef};

/// The rules a stage runs, by index, when the scans chose them.
pub type Chosen = SmallVec<[u32; 16]>;

/// What the scans found in one call's fields.
pub struct ScanFrame<'s> {
    scans: &'s Scans,
    /// The matches of each scan a rule needed so far, by scan: a call reads only its tool's
    /// few scans, so they are found by comparing ids.
    found: SmallVec<[(u32, Scanned); 4]>,
}

/// What one scan found in its field.
#[derive(Debug)]
enum Scanned {
    Nothing,
    /// The patterns that matched, ascending.
    Found(Found),
}

impl<'s> ScanFrame<'s> {
    pub fn new(scans: &'s Scans) -> Self {
        ScanFrame {
            scans,
            found: SmallVec::new(),
        }
    }

    /// The rules of `kind` for `tool` that may match this call, in set order, when scans can
    /// tell: the rules no scan answers for (open rules matching the tool among them), and the
    /// rules whose scanned test matched (all of a scan's rules when its field holds nothing the
    /// scan reads).
    /// `None`: no scan serves this tool and kind; every applicable rule must run.
    pub fn candidates(
        &mut self,
        kind: RuleKind,
        tool: ToolRef<'_>,
        facts: &Facts<'_>,
    ) -> Option<Chosen> {
        let scans = self.scans;
        let plan = scans.plan(tool, kind)?;
        let mut chosen = Chosen::from_slice(&plan.rest);
        let mut lists = usize::from(!plan.rest.is_empty());
        for &id in &plan.scans {
            let Some(scan) = scans.scans.get(id as usize) else {
                continue;
            };
            match self.scanned(id, facts) {
                None => {
                    chosen.extend_from_slice(&scan.all_rules);
                    lists += 1;
                }
                Some(scanned) => lists += choose(&mut chosen, scan, scanned),
            }
        }
        sort_into_set_order(&mut chosen, lists);
        Some(chosen)
    }

    /// What the rule's guarding scan says of its condition: false when its first test failed,
    /// true when that test is the whole condition and passed, and nothing otherwise.
    pub fn decided(&mut self, rule: &RuleIr, facts: &Facts<'_>) -> Option<bool> {
        let guard = self.scans.guard(rule.index)?;
        let matched = match self.scanned(guard.scan, facts)? {
            Scanned::Nothing => false,
            Scanned::Found(matches) => matches.binary_search(&guard.pattern).is_ok(),
        };
        match (matched, guard.whole) {
            (false, _) => Some(false),
            (true, true) => Some(true),
            (true, false) => None,
        }
    }

    /// What the scan found in its field; `None` when the field does not hold what the scan
    /// reads (a string, or for a membership scan a list).
    fn scanned(&mut self, id: u32, facts: &Facts<'_>) -> Option<&Scanned> {
        let scan = self.scans.scans.get(id as usize)?;
        let Some(Ok(value)) = facts.values.get(scan.slot as usize) else {
            return None;
        };
        let input = ScanInput::of(value)?;
        if !readable(scan.view, input) {
            return None;
        }
        let position = match self.found.iter().position(|(scanned, _)| *scanned == id) {
            Some(position) => position,
            None => {
                self.found.push((id, scan_input(scan, input)?));
                self.found.len() - 1
            }
        };
        self.found.get(position).map(|(_, scanned)| scanned)
    }
}

impl Scans {
    /// Puts in `chosen` the rules of a settled plan ([`super::Plan::settled`]) of the call's
    /// tool that match the call, in set order, when each field the plan scans, as read from
    /// `roots` and checked against its declaration, holds what its scan reads. `None`
    /// otherwise (or when the plan is not settled): the rules must run.
    pub fn settle(
        &self,
        (plan, tool): (&Plan, &str),
        (program, roots): (&Program, &Roots<'_>),
        chosen: &mut Chosen,
    ) -> Option<()> {
        if !plan.settled {
            return None;
        }
        let mut lists = 0;
        for &id in &plan.scans {
            let scan = self.scans.get(id as usize)?;
            let decl = program.slots.get(scan.slot as usize)?;
            let input = roots.scan_input(decl, tool)?;
            if !readable(scan.view, input) {
                return None;
            }
            lists += choose(chosen, scan, &scan_input(scan, input)?);
        }
        sort_into_set_order(chosen, lists);
        Some(())
    }
}

/// Adds the rules behind each pattern the scan found; how many lists it added.
fn choose(chosen: &mut Chosen, scan: &Scan, scanned: &Scanned) -> usize {
    let Scanned::Found(matches) = scanned else {
        return 0;
    };
    let mut lists = 0;
    for &pattern in matches {
        if let Some(rules) = scan.rules.get(pattern as usize) {
            chosen.extend_from_slice(rules);
            lists += 1;
        }
    }
    lists
}

/// Rules gathered from `lists` lists, each in set order without repeats: only merging two
/// needs a sort.
fn sort_into_set_order(chosen: &mut Chosen, lists: usize) {
    if lists > 1 {
        chosen.sort_unstable();
        chosen.dedup();
    }
}

/// Whether a scan with this view can read the field; when not, its rules run.
fn readable(view: View, input: ScanInput<'_>) -> bool {
    match view {
        View::Text | View::Path => matches!(input, ScanInput::Text(_)),
        View::Members => matches!(input, ScanInput::Strings(_) | ScanInput::Items(_)),
    }
}

/// What the scan finds in a field it can read; `None` when its regex set cannot be built, and
/// its rules must run.
fn scan_input(scan: &Scan, input: ScanInput<'_>) -> Option<Scanned> {
    let found = match (&scan.matcher, input) {
        (Matcher::Regexes(set), ScanInput::Text(text)) => {
            let set = set.get()?;
            let text = viewed(scan.view, text);
            // Most calls match nothing: a plain match stops early and settles that.
            if !set.is_match(&text) {
                return Some(Scanned::Nothing);
            }
            set.matches(&text)
        }
        (Matcher::Prefixes(prefixes), ScanInput::Text(text)) => {
            prefixes.matches(&viewed(scan.view, text))?
        }
        (Matcher::Literal(literal), ScanInput::Text(text)) => {
            if !literal.matches(&viewed(scan.view, text)) {
                return Some(Scanned::Nothing);
            }
            Found::from_slice(&[0])
        }
        (Matcher::Members(literals), ScanInput::Strings(items)) => {
            members(literals, items.iter().map(String::as_str))
        }
        (Matcher::Members(literals), ScanInput::Items(items)) => {
            members(literals, items.iter().filter_map(Json::as_str))
        }
        _ => Found::new(),
    };
    Some(if found.is_empty() {
        Scanned::Nothing
    } else {
        Scanned::Found(found)
    })
}

/// The text a scan reads: a path field's as `path(field)` normalizes it.
fn viewed(view: View, text: &str) -> Cow<'_, str> {
    match view {
        View::Path => Cow::Owned(path::normalize(text, None)),
        View::Text | View::Members => Cow::Borrowed(text),
    }
}

/// The patterns (literals) that some string of the list equals, ascending.
fn members<'v>(
    literals: &rustc_hash::FxHashMap<String, u32>,
    items: impl Iterator<Item = &'v str>,
) -> Found {
    let mut found = Found::new();
    for item in items {
        if let Some(&pattern) = literals.get(item) {
            found.push(pattern);
        }
    }
    if found.len() > 1 {
        found.sort_unstable();
        found.dedup();
    }
    found
}
