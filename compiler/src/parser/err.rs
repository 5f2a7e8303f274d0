//! Parse errors: pest's errors in words, never in grammar rule names.

use pest::error::{Error, ErrorVariant, InputLocation};

use super::Rule;
use super::recover::ITEM_KEYWORDS;
use crate::ast::Span;
use crate::diagnostics::{Code, Diagnostic, did_you_mean};

/// How deeply brackets may nest; deeper input is refused before parsing so that no recursive
/// stage (parser, builder, checker, interpreter) can exhaust the stack.
pub const MAX_NESTING: usize = 64;

/// How many operators one item's expressions may hold, `.field`, `.method()` and `[index]`
/// included. Each one can deepen the syntax tree by a level (`a + b + c` is `(a + b) + c`), and
/// every stage walks the tree recursively.
pub const MAX_OPERATORS: usize = 100;

pub(crate) fn to_diagnostic(
    path: &str,
    text: &str,
    offset: usize,
    error: &Error<Rule>,
) -> Diagnostic {
    let position = match error.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((start, _)) => start,
    };
    let found = describe_found(text, position);
    let span = Span::new(offset + position, offset + position + found.1);
    match &error.variant {
        ErrorVariant::ParsingError { positives, .. } => {
            if let Some(misspelt) = misspelt_keyword(path, text, offset, position, positives) {
                return misspelt;
            }
            let expected = expected_words(positives);
            let message = match found.0 {
                Some(token) => format!("unexpected `{token}`"),
                None => "unexpected end of file".to_string(),
            };
            let help = if expected.is_empty() {
                "check the syntax against lang-spec/grammar.md".to_string()
            } else {
                format!("expected {}", join_alternatives(&expected))
            };
            Diagnostic::new(Code::Syntax, path, span, message)
                .label("not expected here")
                .help(help)
        }
        ErrorVariant::CustomError { message } => Diagnostic::new(
            Code::ParserLimit,
            path,
            span,
            format!("the parser stopped: {message}"),
        )
        .label("stopped here")
        .help("split the policy into smaller rules or files"),
    }
}

/// The words an effect begins with.
pub(crate) const EFFECT_WORDS: &[&str] = &[
    "allow", "deny", "ask", "accept", "replace", "fail", "attach", "safe", "redact", "label",
];

const RULE_KINDS: &[&str] = &["precheck", "gate", "postcheck", "concurrency"];

/// The words the grammar reserves besides those that begin an item ([`ITEM_KEYWORDS`]), a rule
/// ([`RULE_KINDS`]) or an effect ([`EFFECT_WORDS`]).
const OTHER_KEYWORDS: &[&str] = &[
    "from", "on", "when", "for", "content", "value", "with", "as", "where", "examples", "agent",
    "call", "result", "error", "expect", "no", "rule", "reason", "part", "or", "and", "not", "in",
    "matches", "glob", "true", "false", "null", "session",
];

/// Whether the grammar reserves `word` somewhere: a misspelling is never one of them. Made of
/// the lists above rather than kept beside them, so a new item keyword cannot be left out.
fn is_keyword(word: &str) -> bool {
    [ITEM_KEYWORDS, RULE_KINDS, EFFECT_WORDS, OTHER_KEYWORDS]
        .iter()
        .any(|list| list.contains(&word))
}

/// The keywords a grammar rule stands for, when it is expected.
fn keywords_of(expected: Rule) -> &'static [&'static str] {
    match expected {
        // At the start of a file pest names only `file`: an item is wanted there.
        Rule::file
        | Rule::EOI
        | Rule::header
        | Rule::kw_policy
        | Rule::import_decl
        | Rule::kw_import
        | Rule::tool_decl
        | Rule::kw_tool
        | Rule::label_decl
        | Rule::kw_label
        | Rule::context_decl
        | Rule::effects_decl
        | Rule::kw_effects
        | Rule::test_block
        | Rule::kw_test => ITEM_KEYWORDS,
        Rule::rule_decl | Rule::rule_kind => RULE_KINDS,
        Rule::kw_on => &["on"],
        Rule::condition | Rule::kw_when => &["when"],
        Rule::per_part | Rule::kw_for => &["for"],
        Rule::kw_from | Rule::schema_ref => &["from"],
        Rule::effects
        | Rule::allow_effect
        | Rule::deny_effect
        | Rule::ask_effect
        | Rule::accept_effect
        | Rule::replace_content
        | Rule::replace_value
        | Rule::fail_effect
        | Rule::attach_effect
        | Rule::redact_effect
        | Rule::kw_redact
        | Rule::label_effect
        | Rule::safe_effect => EFFECT_WORDS,
        Rule::kw_session => &["session"],
        Rule::label_expiry | Rule::expiry_unit => &["calls", "s", "m", "h", "d"],
        Rule::kw_as => &["as"],
        Rule::kw_where => &["where"],
        Rule::kw_content => &["content"],
        Rule::kw_value => &["value"],
        Rule::kw_with => &["with"],
        Rule::kw_context => &["context"],
        Rule::examples | Rule::kw_examples => &["examples"],
        Rule::agent_stmt
        | Rule::context_stmt
        | Rule::call_stmt
        | Rule::result_stmt
        | Rule::session_stmt
        | Rule::expect_stmt => &["agent", "context", "session", "call", "result", "expect"],
        Rule::kw_in => &["in"],
        Rule::kw_matches => &["matches"],
        Rule::kw_glob => &["glob"],
        Rule::kw_and => &["and"],
        Rule::kw_or => &["or"],
        Rule::cmp_op => &["in", "matches", "glob"],
        _ => &[],
    }
}

/// A word close to a keyword where the grammar wanted one: `prechek`, `wen`, `exampels`, or an
/// effect such as `deney "no"`, which parses as far as a veto reason named `deney` and stops at
/// the string after it.
fn misspelt_keyword(
    path: &str,
    text: &str,
    offset: usize,
    position: usize,
    positives: &[Rule],
) -> Option<Diagnostic> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let rest = text.get(position..)?;
    let found: &str = rest.get(..rest.find(|c: char| !is_word(c)).unwrap_or(rest.len()))?;
    let wanted: Vec<&str> = positives
        .iter()
        .flat_map(|rule| keywords_of(*rule).iter().copied())
        .collect();
    let (word, start, suggestion) = match did_you_mean(found, wanted.iter().copied()) {
        Some(suggestion) if !found.is_empty() => (found, position, suggestion),
        _ => {
            // The word before the error, when it stands where an effect begins.
            let before = text.get(..position)?.trim_end();
            let start = before.rfind(|c: char| !is_word(c)).map_or(0, |i| i + 1);
            let word = before.get(start..)?;
            let lead = before.get(..start)?.trim_end();
            if word.is_empty() || !(lead.ends_with("=>") || lead.ends_with(',')) {
                return None;
            }
            (
                word,
                start,
                did_you_mean(word, EFFECT_WORDS.iter().copied())?,
            )
        }
    };
    if is_keyword(word) {
        return None;
    }
    let what = if EFFECT_WORDS.contains(&suggestion) {
        "effect"
    } else if RULE_KINDS.contains(&suggestion) {
        "rule kind"
    } else {
        "keyword"
    };
    let span = Span::new(offset + start, offset + start + word.len());
    Some(
        Diagnostic::new(
            Code::UnknownKeyword,
            path,
            span,
            format!("unknown {what} `{word}`"),
        )
        .label(format!(
            "not a{} {what}",
            if what == "effect" { "n" } else { "" }
        ))
        .help(format!("did you mean `{suggestion}`?")),
    )
}

/// The token at `position`, for "unexpected `…`", and its length in bytes.
fn describe_found(text: &str, position: usize) -> (Option<String>, usize) {
    let rest = text.get(position..).unwrap_or("");
    let Some(first) = rest.chars().next() else {
        return (None, 0);
    };
    const OPERATORS: &[&str] = &["=>", "==", "!=", "<=", ">=", "??"];
    let token: String = if let Some(op) = OPERATORS.iter().find(|op| rest.starts_with(**op)) {
        (*op).to_string()
    } else if first.is_alphanumeric() || first == '_' {
        rest.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .take(40)
            .collect()
    } else {
        first.to_string()
    };
    let shown = match token.as_str() {
        "\n" => "end of line".to_string(),
        _ => token.clone(),
    };
    (Some(shown), token.len())
}

fn expected_words(positives: &[Rule]) -> Vec<&'static str> {
    let mut words: Vec<&'static str> = positives.iter().filter_map(|r| describe_rule(*r)).collect();
    words.sort_unstable();
    words.dedup();
    words
}

fn join_alternatives(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// What a grammar rule is called in an error message.
fn describe_rule(expected: Rule) -> Option<&'static str> {
    Some(match expected {
        Rule::EOI => "end of file",
        Rule::file => {
            "an item (`policy`, `import`, `tool`, `context`, `effects`, a rule or `test`)"
        }
        Rule::import_decl | Rule::kw_import => "`import`",
        Rule::header | Rule::kw_policy => "`policy`",
        Rule::tool_decl | Rule::kw_tool => "`tool`",
        Rule::context_decl | Rule::kw_context => "`context`",
        Rule::rule_decl | Rule::rule_kind => {
            "a rule (`precheck`, `gate`, `postcheck` or `concurrency`)"
        }
        Rule::test_block | Rule::kw_test => "`test`",
        Rule::schema_ref | Rule::kw_from => "`from`",
        Rule::record_type => "`{`",
        Rule::field_decl => "a field declaration",
        Rule::type_expr | Rule::prim_type | Rule::list_type | Rule::enum_type => "a type",
        Rule::optional_mark => "`?`",
        Rule::selectors | Rule::selector => "a tool name or glob",
        Rule::condition | Rule::kw_when => "`when`",
        Rule::kw_on => "`on`",
        Rule::effects
        | Rule::allow_effect
        | Rule::deny_effect
        | Rule::ask_effect
        | Rule::accept_effect
        | Rule::replace_content
        | Rule::replace_value
        | Rule::fail_effect
        | Rule::attach_effect
        | Rule::safe_effect
        | Rule::veto_effect => "an effect",
        Rule::examples | Rule::kw_examples => "`examples`",
        Rule::agent_stmt
        | Rule::context_stmt
        | Rule::call_stmt
        | Rule::result_stmt
        | Rule::expect_stmt => {
            "a test statement (`agent`, `context`, `call`, `result` or `expect`)"
        }
        Rule::expect_verdict
        | Rule::expect_gate
        | Rule::expect_no_gate
        | Rule::expect_rule
        | Rule::expect_reason
        | Rule::expect_content
        | Rule::expect_value
        | Rule::expect_error
        | Rule::expect_fail
        | Rule::expect_attached => "an expectation",
        Rule::object_lit => "`{`",
        Rule::object_entry => "a field",
        Rule::list_lit | Rule::list_expr => "`[`",
        Rule::expr | Rule::postfix | Rule::quantifier | Rule::quantifier_kind | Rule::call => {
            "an expression"
        }
        Rule::cmp_op | Rule::kw_in | Rule::kw_matches | Rule::kw_glob => "an operator",
        Rule::coalesce_op | Rule::add_op | Rule::argv_match => "an operator",
        Rule::kw_or | Rule::kw_and => "an operator",
        Rule::kw_not => "`not`",
        Rule::method_call | Rule::field_access => "`.`",
        Rule::index => "`[`",
        Rule::arguments => "an argument",
        Rule::interp_string
        | Rule::raw_string
        | Rule::data_string
        | Rule::text
        | Rule::data_text
        | Rule::raw_text => "a string",
        Rule::escape => "an escape (`\\\"`, `\\\\`, `\\n`, `\\t`, `\\r`, `\\{`, `\\}` or `\\0`)",
        Rule::interpolation => "`{`",
        Rule::int | Rule::float => "a number",
        Rule::boolean => "`true` or `false`",
        Rule::null => "`null`",
        Rule::ident | Rule::field_name => "a name",
        Rule::tool_name => "a tool name",
        Rule::kw_allow | Rule::kw_deny | Rule::kw_ask | Rule::kw_accept | Rule::kw_safe => {
            "an effect"
        }
        Rule::kw_replace | Rule::kw_fail | Rule::kw_attach => "an effect",
        Rule::kw_content => "`content`",
        Rule::kw_value => "`value`",
        Rule::kw_with => "`with`",
        Rule::kw_agent | Rule::kw_call | Rule::kw_result | Rule::kw_expect => {
            "a test statement (`agent`, `context`, `call`, `result` or `expect`)"
        }
        Rule::kw_gate | Rule::kw_no | Rule::kw_rule | Rule::kw_reason => "an expectation",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may panic

    use super::is_keyword;

    /// Every word the grammar spells out as a keyword (`kw_*`, the rule kinds, the literals and
    /// the reserved words) is known as one, so it is never taken for a misspelling.
    #[test]
    fn every_word_the_grammar_reserves_is_a_keyword() {
        let grammar = include_str!("sluice.pest");
        let mut words = Vec::new();
        for line in grammar.lines() {
            let Some((name, body)) = line.split_once('=') else {
                continue;
            };
            let name = name.trim();
            if !(name.starts_with("kw_")
                || ["rule_kind", "boolean", "null", "reserved"].contains(&name))
            {
                continue;
            }
            for (i, piece) in body.split('"').enumerate() {
                if i % 2 == 1 && piece.chars().all(|c| c.is_ascii_lowercase()) {
                    words.push(piece.to_string());
                }
            }
        }
        assert!(words.len() > 40, "{words:?}");
        assert!(words.iter().any(|w| w == "import"), "{words:?}");
        for word in &words {
            assert!(is_keyword(word), "`{word}` is reserved but not a keyword");
        }
    }
}
