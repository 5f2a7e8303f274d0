//! Checking a whole policy set: declarations first, then every rule and test against them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::declarations::Declarations;
use super::effects::check_effects;
use super::expr::{ArgsShape, ExprChecker};
use super::tests::{CheckedTest, check_test};
use super::{CheckedRule, Record, ToolSet, Ty};
use crate::ast::{Item, PolicyFile, Rule, Selector, Span};
use crate::diagnostics::{Code, Diagnostic, did_you_mean, help_with_suggestion};

/// One parsed file of the set, and the schema files the set names.
pub struct SourceUnit<'a> {
    pub path: &'a str,
    pub ast: &'a PolicyFile,
    /// Schema texts (or why they could not be read) by [`schema_key`](super::schema_key).
    pub schemas: &'a BTreeMap<String, Result<String, String>>,
}

/// A checked policy set. Rules are in set order: files by path, then source order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CheckedSet {
    pub decls: Declarations,
    pub rules: Vec<CheckedRule>,
    pub tests: Vec<CheckedTest>,
    /// Whether any error was found; an erroneous set is never lowered.
    pub has_errors: bool,
    /// Every tool selector written by any rule, checked or not (for the unused-tool lint).
    pub selectors: Vec<String>,
}

/// Checks every rule and test of the set against its declarations (see [`collect_declarations`]).
/// `declarations_failed` says whether collecting the declarations reported errors.
pub fn check_set(
    units: &[SourceUnit<'_>],
    decls: Declarations,
    declarations_failed: bool,
    diagnostics: &mut Vec<Diagnostic>,
) -> CheckedSet {
    let errors_before = diagnostics.iter().filter(|d| d.is_error()).count();
    let mut rules = Vec::new();
    let mut names: BTreeMap<String, (String, Span)> = BTreeMap::new();
    for unit in units {
        for item in &unit.ast.items {
            let Item::Rule(rule) = item else { continue };
            if let Some((file, span)) = names.get(&rule.name.name) {
                diagnostics.push(
                    Diagnostic::new(Code::DuplicateRule, unit.path, rule.name.span, format!("rule `{}` is defined twice", rule.name.name))
                        .label("defined again here")
                        .secondary(file, *span, "first defined here")
                        .help("rule names identify decisions in logs and tests; give each rule its own name"),
                );
                continue;
            }
            names.insert(
                rule.name.name.clone(),
                (unit.path.to_string(), rule.name.span),
            );
            if let Some(checked) = check_rule(unit.path, &decls, rule, diagnostics) {
                rules.push(checked);
            }
        }
    }
    let mut tests = Vec::new();
    let mut test_names: BTreeMap<String, (String, Span)> = BTreeMap::new();
    for unit in units {
        for item in &unit.ast.items {
            let Item::Test(test) = item else { continue };
            if let Some((file, span)) = test_names.get(&test.name) {
                diagnostics.push(
                    Diagnostic::new(
                        Code::DuplicateTest,
                        unit.path,
                        test.name_span,
                        format!("test `{}` is defined twice", test.name),
                    )
                    .label("defined again here")
                    .secondary(file, *span, "first defined here")
                    .help("give each test its own name so failures can be told apart"),
                );
                continue;
            }
            test_names.insert(test.name.clone(), (unit.path.to_string(), test.name_span));
            if let Some(checked) = check_test(unit.path, &decls, &names, test, diagnostics) {
                tests.push(checked);
            }
        }
    }
    let has_errors =
        declarations_failed || diagnostics.iter().filter(|d| d.is_error()).count() > errors_before;
    let selectors = units
        .iter()
        .flat_map(|unit| &unit.ast.items)
        .filter_map(|item| match item {
            Item::Rule(rule) => Some(rule.selectors.iter().map(|s| s.text.clone())),
            _ => None,
        })
        .flatten()
        .collect();
    CheckedSet {
        decls,
        rules,
        tests,
        has_errors,
        selectors,
    }
}

fn check_rule(
    file: &str,
    decls: &Declarations,
    rule: &Rule,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<CheckedRule> {
    let tools = resolve_selectors(file, decls, &rule.selectors, diagnostics)?;
    let args = args_shape(decls, &tools);
    let mut checker = ExprChecker::new(file, decls, rule.kind, args, diagnostics);
    let condition = rule.condition.as_ref().map(|cond| checker.condition(cond));
    let effects = check_effects(&mut checker, rule.kind, &rule.effects);
    let vars = checker.vars;
    let condition = match condition {
        Some(c) => Some(c?),
        None => None,
    };
    Some(CheckedRule {
        kind: rule.kind,
        name: rule.name.name.clone(),
        file: file.to_string(),
        span: rule.span,
        name_span: rule.name.span,
        tools,
        condition,
        effects: effects?,
        examples: rule.examples.clone(),
        vars,
    })
}

fn resolve_selectors(
    file: &str,
    decls: &Declarations,
    selectors: &[Selector],
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<ToolSet> {
    let mut set = ToolSet::default();
    let mut ok = true;
    for selector in selectors {
        if selector.text == "*" {
            set.all = true;
        } else if selector.is_glob() {
            match globset::Glob::new(&selector.text) {
                Ok(_) => set.globs.push(selector.text.clone()),
                Err(error) => {
                    diagnostics.push(
                        Diagnostic::new(
                            Code::InvalidGlob,
                            file,
                            selector.span,
                            format!("invalid tool glob `{}`: {}", selector.text, error.kind()),
                        )
                        .label("invalid glob")
                        .help("tool globs use `*` and `?`, for example `mcp__github__*`"),
                    );
                    ok = false;
                }
            }
        } else if decls.tools.contains_key(&selector.text) {
            if !set.names.contains(&selector.text) {
                set.names.push(selector.text.clone());
            }
        } else {
            let suggestion = did_you_mean(&selector.text, decls.tools.keys().map(String::as_str));
            diagnostics.push(
                Diagnostic::new(Code::UnknownTool, file, selector.span, format!("unknown tool `{}`", selector.text))
                    .label("not declared")
                    .help(help_with_suggestion(suggestion, format!("declare it with `tool {} {{ ... }}`, or use a glob such as `{}*` for tools declared elsewhere", selector.text, selector.text))),
            );
            ok = false;
        }
    }
    ok.then_some(set)
}

/// The arguments every tool of the set has, with the same type.
fn args_shape(decls: &Declarations, tools: &ToolSet) -> ArgsShape {
    let unknown = tools
        .names
        .iter()
        .any(|n| decls.tools.get(n).is_some_and(|t| !t.known));
    if !tools.is_exact() || unknown {
        return ArgsShape::Dynamic;
    }
    let records: Vec<(&str, &Arc<Record>)> = tools
        .names
        .iter()
        .filter_map(|n| decls.tools.get(n).map(|t| (n.as_str(), &t.args)))
        .collect();
    let mut all_fields: BTreeSet<&str> = BTreeSet::new();
    for (_, record) in &records {
        all_fields.extend(record.names());
    }
    let mut record = Record::default();
    let mut missing = BTreeMap::new();
    for field in all_fields {
        let lacking = records.iter().find(|(_, r)| r.get(field).is_none());
        if let Some((tool, _)) = lacking {
            missing.insert(field.to_string(), tool.to_string());
            continue;
        }
        let types: Vec<&Ty> = records.iter().filter_map(|(_, r)| r.get(field)).collect();
        let ty = match types.split_first() {
            Some((first, rest)) if rest.iter().all(|t| t == first) => (*first).clone(),
            _ => Ty::Json,
        };
        record.fields.push((field.to_string(), ty));
    }
    ArgsShape::Known {
        record: Arc::new(record),
        missing,
    }
}
