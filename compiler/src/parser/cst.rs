//! The concrete syntax tree: pest's pairs for the one grammar in `sluice.pest`.

use std::num::NonZeroUsize;
use std::sync::{Mutex, PoisonError};

use pest::Parser;
use pest::iterators::Pairs;

#[derive(pest_derive::Parser)]
#[grammar = "parser/sluice.pest"]
struct SluiceParser;

/// Every parse gets a budget of grammar calls proportional to its size, so that no input, however
/// hostile, keeps the parser busy for long.
const CALLS_PER_BYTE: usize = 256;
const BASE_CALLS: usize = 100_000;

pub(crate) fn parse(text: &str) -> Result<Pairs<'_, Rule>, Box<pest::error::Error<Rule>>> {
    parse_rule(Rule::file, text)
}

pub(crate) fn parse_rule(
    start: Rule,
    text: &str,
) -> Result<Pairs<'_, Rule>, Box<pest::error::Error<Rule>>> {
    let budget = BASE_CALLS.saturating_add(text.len().saturating_mul(CALLS_PER_BYTE));
    let _budgeted = Budgeted::start(budget);
    SluiceParser::parse(start, text).map_err(Box::new)
}

/// The budgets of the parses in progress. pest has one call limit for the whole process, read
/// when a parse starts, and parses run on several threads at once (a set loads on every core, a
/// server reloads beside its requests): set per parse, a short text's budget could cut a long
/// one's parse short on another thread. So the limit is the largest budget in progress: every
/// parse gets at least its own, and none more than that of the longest text being parsed.
static IN_PROGRESS: Mutex<Vec<usize>> = Mutex::new(Vec::new());

struct Budgeted(usize);

impl Budgeted {
    fn start(budget: usize) -> Budgeted {
        let mut budgets = IN_PROGRESS.lock().unwrap_or_else(PoisonError::into_inner);
        budgets.push(budget);
        limit_to_largest(&budgets);
        Budgeted(budget)
    }
}

/// With none in progress the limit stays as it is: the next parse sets its own.
fn limit_to_largest(budgets: &[usize]) {
    if let Some(largest) = budgets.iter().copied().max().and_then(NonZeroUsize::new) {
        pest::set_call_limit(Some(largest));
    }
}

impl Drop for Budgeted {
    fn drop(&mut self) {
        let mut budgets = IN_PROGRESS.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(at) = budgets.iter().position(|&budget| budget == self.0) {
            budgets.swap_remove(at);
        }
        limit_to_largest(&budgets);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long policy parsed over and over while other threads parse short texts: each parse
    /// must get the budget of its own text, whatever the others set.
    #[test]
    fn short_parses_on_other_threads_never_cut_a_long_parse_short() {
        let long = include_str!("../../../policies/shell-safety/shell-safety.sluice");
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let shorts: Vec<_> = (0..2)
                .map(|_| {
                    scope.spawn(|| {
                        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                            let _ = parse("tool t { s: string }");
                        }
                    })
                })
                .collect();
            let cut_short = (0..100).filter(|_| parse(long).is_err()).count();
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            for short in shorts {
                assert!(short.join().is_ok());
            }
            assert_eq!(cut_short, 0, "short parses cut the long one short");
        });
    }
}
