//! Redaction: a run of `redact` rules finds its matches in every text channel of a result (the
//! content, each string in the value, the error), merges the matches that overlap, and rewrites
//! each text once. Merging is what keeps a secret whole when two families match parts of it;
//! rewriting once is what keeps a long output from being copied once per family.

use serde_json::Value as Json;

use super::eval::Evaluation;
use super::value::Value;
use super::{EvalError, Facts};
use crate::budget;
use crate::call::ToolResult;
use crate::decision::Redacted;
use crate::ir::{Program, RedactIr, RuleIr};

/// How far `around` reaches on each side of a match, in characters, within its line.
pub const AROUND_CHARS: usize = 40;

/// A rule whose condition held, with the redactions it asks for.
pub struct Pending<'r> {
    pub rule: &'r RuleIr,
    pub redactions: Vec<&'r RedactIr>,
}

/// What a run of redactions did.
#[derive(Default)]
pub struct Applied {
    /// Matches found, per pending rule, before merging: a rule that found none did not apply.
    pub found: Vec<usize>,
    /// The channels that changed.
    pub redacted: Redacted,
    /// A filter that failed, with the rule it belongs to: the match was redacted all the same.
    pub failures: Vec<(usize, EvalError)>,
}

/// One match to replace: a byte range of a text and the family that names it.
struct Hit<'r> {
    start: usize,
    end: usize,
    family: &'r str,
}

/// Finds and replaces the pending rules' matches in every channel of `result`.
pub fn apply<'r>(
    program: &'r Program,
    facts: &Facts<'_>,
    pending: &[Pending<'r>],
    result: &ToolResult,
) -> Result<Applied, EvalError> {
    let mut applied = Applied {
        found: vec![0; pending.len()],
        ..Applied::default()
    };
    let mut finder = Finder {
        program,
        facts,
        pending,
        applied: &mut applied,
    };
    let content = finder.rewrite(&result.content)?;
    let error = match &result.error {
        Some(error) => finder.rewrite(error)?,
        None => None,
    };
    let mut value = result.value.clone();
    let value_changed = finder.rewrite_tree(&mut value)?;
    applied.redacted = Redacted {
        content,
        value: value_changed.then_some(value),
        error,
    };
    Ok(applied)
}

struct Finder<'f, 'r, 'a> {
    program: &'r Program,
    facts: &'f Facts<'a>,
    pending: &'f [Pending<'r>],
    applied: &'f mut Applied,
}

impl<'r> Finder<'_, 'r, '_> {
    /// Every string of a JSON tree rewritten in place; whether any changed.
    fn rewrite_tree(&mut self, value: &mut Json) -> Result<bool, EvalError> {
        match value {
            Json::String(text) => match self.rewrite(text)? {
                Some(new) => {
                    *text = new;
                    Ok(true)
                }
                None => Ok(false),
            },
            Json::Array(items) => {
                let mut changed = false;
                for item in items {
                    changed |= self.rewrite_tree(item)?;
                }
                Ok(changed)
            }
            Json::Object(map) => {
                let mut changed = false;
                for item in map.values_mut() {
                    changed |= self.rewrite_tree(item)?;
                }
                Ok(changed)
            }
            _ => Ok(false),
        }
    }

    /// One text with its matches replaced, or `None` when nothing matched.
    fn rewrite(&mut self, text: &str) -> Result<Option<String>, EvalError> {
        if budget::passed() {
            return Err(EvalError {
                message: budget::EXCEEDED.to_string(),
                span: self
                    .pending
                    .first()
                    .map(|p| p.rule.meta.span)
                    .unwrap_or_default(),
            });
        }
        let mut hits = Vec::new();
        for (owner, pending) in self.pending.iter().enumerate() {
            for redaction in &pending.redactions {
                self.find(owner, pending.rule, redaction, text, &mut hits)?;
            }
        }
        if hits.is_empty() {
            return Ok(None);
        }
        Ok(Some(replace(text, merge(hits))))
    }

    fn find(
        &mut self,
        owner: usize,
        rule: &'r RuleIr,
        redaction: &'r RedactIr,
        text: &str,
        hits: &mut Vec<Hit<'r>>,
    ) -> Result<(), EvalError> {
        let Some(regex) = self.program.regex(redaction.regex) else {
            return Ok(());
        };
        let secret_group = regex.capture_names().flatten().any(|name| name == "secret");
        let mut found = Vec::new();
        if secret_group {
            for captures in regex.captures_iter(text) {
                if let Some(m) = captures.name("secret").filter(|m| !m.is_empty()) {
                    found.push((m.start(), m.end()));
                }
            }
        } else {
            found.extend(
                regex
                    .find_iter(text)
                    .filter(|m| !m.is_empty())
                    .map(|m| (m.start(), m.end())),
            );
        }
        for (start, end) in found {
            if let Some(filter) = redaction.filter {
                let secret = text.get(start..end).unwrap_or_default();
                let mut evaluation = Evaluation::new(self.program, rule, self.facts);
                evaluation.bind(redaction.secret, Value::Str(secret.to_string().into()));
                evaluation.bind(
                    redaction.around,
                    Value::Str(around(text, start, end).to_string().into()),
                );
                match evaluation.truth(filter) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    // A filter that cannot be judged redacts: a secret kept by a policy error
                    // would be a leak.
                    Err(error) => self.applied.failures.push((owner, error)),
                }
            }
            if let Some(count) = self.applied.found.get_mut(owner) {
                *count += 1;
            }
            hits.push(Hit {
                start,
                end,
                family: &redaction.family,
            });
        }
        Ok(())
    }
}

/// The match with up to [`AROUND_CHARS`] characters on each side, within its line.
pub fn around(text: &str, start: usize, end: usize) -> &str {
    let before = text.get(..start).unwrap_or_default();
    let from = before
        .char_indices()
        .rev()
        .take_while(|(_, c)| *c != '\n')
        .take(AROUND_CHARS)
        .last()
        .map_or(start, |(i, _)| i);
    let after = text.get(end..).unwrap_or_default();
    let to = after
        .char_indices()
        .take_while(|(_, c)| *c != '\n')
        .take(AROUND_CHARS)
        .last()
        .map_or(end, |(i, c)| end + i + c.len_utf8());
    text.get(from..to).unwrap_or_default()
}

/// Overlapping hits merged into one: the merged span is named by the hit that starts first
/// (the longer one on a tie), so a secret two families match in part is replaced whole.
fn merge(mut hits: Vec<Hit<'_>>) -> Vec<Hit<'_>> {
    hits.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut merged: Vec<Hit<'_>> = Vec::with_capacity(hits.len());
    for hit in hits {
        match merged.last_mut() {
            Some(last) if hit.start < last.end => last.end = last.end.max(hit.end),
            _ => merged.push(hit),
        }
    }
    merged
}

/// `text` with each (sorted, disjoint) hit replaced by `[REDACTED family]`.
fn replace(text: &str, hits: Vec<Hit<'_>>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for hit in hits {
        out.push_str(text.get(at..hit.start).unwrap_or_default());
        out.push_str("[REDACTED ");
        out.push_str(hit.family);
        out.push(']');
        at = hit.end;
    }
    out.push_str(text.get(at..).unwrap_or_default());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(start: usize, end: usize, family: &str) -> Hit<'_> {
        Hit { start, end, family }
    }

    #[test]
    fn overlapping_hits_merge_under_the_first() {
        let merged = merge(vec![hit(4, 10, "b"), hit(0, 6, "a"), hit(12, 14, "c")]);
        let spans: Vec<_> = merged.iter().map(|h| (h.start, h.end, h.family)).collect();
        assert_eq!(spans, vec![(0, 10, "a"), (12, 14, "c")]);
    }

    #[test]
    fn touching_hits_stay_apart() {
        let merged = merge(vec![hit(0, 4, "a"), hit(4, 8, "b")]);
        assert_eq!(merged.len(), 2);
        assert_eq!(replace("abcdefgh", merged), "[REDACTED a][REDACTED b]");
    }

    #[test]
    fn around_stays_on_the_line() {
        let text = "first line\nkey = SECRET tail\nnext";
        let start = text.find("SECRET").unwrap_or_default();
        assert_eq!(around(text, start, start + 6), "key = SECRET tail");
        let long = format!("{}X{}", "a".repeat(100), "b".repeat(100));
        let at = long.find('X').unwrap_or_default();
        assert_eq!(around(&long, at, at + 1).len(), 2 * AROUND_CHARS + 1);
    }
}
