//! The concrete syntax tree: pest's pairs for the one grammar in `sluice.pest`.

use std::num::NonZeroUsize;

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
    pest::set_call_limit(NonZeroUsize::new(budget));
    SluiceParser::parse(start, text).map_err(Box::new)
}
