//! Linting (typed tree → warnings): rules that can never match, allows that never win, globs and
//! declarations nothing uses, and empty-matching regexes that guard a deny.

mod fold;

use std::collections::BTreeSet;

use crate::ast::{BinOp, RuleKind, is_glob};
use crate::check::{CheckedEffect, CheckedRule, CheckedSet, PlacedRule, TExpr, TExprKind};
use crate::diagnostics::{Code, Diagnostic};

pub use fold::constant_truth;

/// The warnings about one rule on its own.
pub fn lint_rule(rule: &CheckedRule) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    never_matches(rule, &mut out);
    empty_match_guard(rule, &mut out);
    out
}

/// The warnings that compare rules and declarations across the set. When an item of the set did
/// not parse (`parsed` is false), what it declares and what it uses are unknown, so the
/// warnings that would follow from its absence — a tool nothing uses, a glob that matches no
/// tool — are not given: they would only repeat the syntax error.
pub fn lint_set(set: &CheckedSet, parsed: bool) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for rule in &set.rules {
        shadowed_allow(rule, set, &mut out);
        if parsed {
            selector_matches_nothing(rule, set, &mut out);
        }
    }
    if parsed {
        unused_tools(set, &mut out);
    }
    out
}

fn never_matches(rule: &CheckedRule, out: &mut Vec<Diagnostic>) {
    let Some(cond) = &rule.condition else { return };
    if constant_truth(cond) == Some(false) {
        out.push(
            Diagnostic::new(
                Code::NeverMatches,
                &rule.file,
                cond.span,
                format!("rule `{}` can never match", rule.name),
            )
            .label("this condition is always false")
            .help("fix the condition, or delete the rule"),
        );
    }
}

fn is_stricter(rule: &CheckedRule) -> bool {
    matches!(
        rule.effects.first(),
        Some(CheckedEffect::Deny(_) | CheckedEffect::Ask(_))
    )
}

/// An allow is overridden when a stricter rule of the set applies to all its tools whenever it does.
fn shadowed_allow(placed: &PlacedRule, set: &CheckedSet, out: &mut Vec<Diagnostic>) {
    let rule = &placed.rule;
    if rule.kind != RuleKind::Precheck
        || !matches!(rule.effects.first(), Some(CheckedEffect::Allow))
    {
        return;
    }
    let covers = |other: &CheckedRule| {
        let tools_covered = other.tools.all
            || (rule.tools.is_exact()
                && rule
                    .tools
                    .names
                    .iter()
                    .all(|n| other.tools.names.contains(n)));
        let always = match &other.condition {
            None => true,
            Some(c) => constant_truth(c) == Some(true) || rule.condition.as_ref() == Some(c),
        };
        tools_covered && always
    };
    if let Some(stricter) = set.rules.iter().find(|other| {
        other.rule.kind == RuleKind::Precheck && is_stricter(&other.rule) && covers(&other.rule)
    }) {
        out.push(
            Diagnostic::new(Code::ShadowedAllow, &rule.file, placed.place(rule.name_span), format!("`allow` rule `{}` is always overridden", rule.name))
                .label("never decides")
                .secondary(&stricter.rule.file, stricter.place(stricter.rule.name_span), format!("`{}` is stricter and matches whenever this does", stricter.rule.name))
                .help("the strictest matching rule wins; narrow the stricter rule's condition, or delete this one"),
        );
    }
}

fn selector_matches_nothing(placed: &PlacedRule, set: &CheckedSet, out: &mut Vec<Diagnostic>) {
    let rule = &placed.rule;
    for glob in &rule.tools.globs {
        let Ok(matcher) = globset::Glob::new(glob).map(|g| g.compile_matcher()) else {
            continue;
        };
        if !set.decls.tools.keys().any(|tool| matcher.is_match(tool)) {
            out.push(
                Diagnostic::new(Code::SelectorMatchesNothing, &rule.file, placed.place(rule.name_span), format!("tool glob `{glob}` of rule `{}` matches no declared tool", rule.name))
                    .label("applies to no declared tool")
                    .help("declare the tools it is meant for, so its conditions are checked against their arguments, or fix the glob"),
            );
        }
    }
}

fn unused_tools(set: &CheckedSet, out: &mut Vec<Diagnostic>) {
    // A set of declarations alone is a vocabulary that other sets import.
    if set.selectors.is_empty() && set.tests.is_empty() {
        return;
    }
    // Selectors as written, so a rule that failed to check still counts as a use. Names are
    // compared as they are; only globs are compiled, each once.
    let (globs, names): (BTreeSet<&str>, BTreeSet<&str>) = set
        .selectors
        .iter()
        .map(String::as_str)
        .partition(|s| is_glob(s));
    let matchers: Vec<globset::GlobMatcher> = globs
        .into_iter()
        .filter_map(|s| globset::Glob::new(s).ok())
        .map(|g| g.compile_matcher())
        .collect();
    // A shared vocabulary declares tools for every set that imports it, used or not.
    for tool in set
        .decls
        .tools
        .values()
        .filter(|t| !set.decls.imported.contains(&t.file))
    {
        let used = names.contains(tool.name.as_str())
            || matchers.iter().any(|m| m.is_match(&tool.name))
            || set
                .tests
                .iter()
                .any(|t| t.steps.iter().any(|step| step.tool == tool.name));
        if !used {
            out.push(
                Diagnostic::new(
                    Code::UnusedTool,
                    &tool.file,
                    tool.span,
                    format!("tool `{}` is declared but never used", tool.name),
                )
                .label("unused")
                .help("write a rule or a test for it, or delete the declaration"),
            );
        }
    }
}

fn empty_match_guard(rule: &CheckedRule, out: &mut Vec<Diagnostic>) {
    let guards = matches!(
        rule.effects.first(),
        Some(CheckedEffect::Deny(_) | CheckedEffect::Veto(_))
    );
    let Some(cond) = &rule.condition else { return };
    if !guards {
        return;
    }
    let mut found = Vec::new();
    positive_regexes(cond, &mut found);
    for (pattern, hir, span) in found {
        if hir.properties().minimum_len() == Some(0) {
            out.push(
                Diagnostic::new(Code::EmptyMatchGuard, &rule.file, span, format!("regex `{pattern}` matches the empty string"))
                    .label("matches every input")
                    .help("a regex that can match nothing matches everywhere; require at least one character, e.g. `+` instead of `*`"),
            );
        }
    }
}

/// Regexes whose match makes the condition true (not under `not`, not behind `or`'s other side),
/// with their syntax trees.
fn positive_regexes<'e>(
    expr: &'e TExpr,
    out: &mut Vec<(&'e str, &'e regex_syntax::hir::Hir, crate::ast::Span)>,
) {
    match &expr.kind {
        TExprKind::Matches { pattern, hir, .. } => out.push((pattern, hir, expr.span)),
        TExprKind::Binary {
            op: BinOp::And | BinOp::Or,
            lhs,
            rhs,
        } => {
            positive_regexes(lhs, out);
            positive_regexes(rhs, out);
        }
        TExprKind::Quantified { body, .. } => positive_regexes(body, out),
        _ => {}
    }
}
