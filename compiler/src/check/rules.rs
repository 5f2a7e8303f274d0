//! Checking rules: each rule on its own against the declarations it names, then the set
//! assembled from its rules (placed in their files) and its tests.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::declarations::Declarations;
use super::effects::check_effects;
use super::expr::{ArgsShape, ExprChecker};
use super::tests::{CheckedTest, check_test};
use super::{CheckedRule, Record, ToolSet, Ty};
use crate::ast::{Expr, Item, PolicyFile, Relocate, Rule, Selector, Span};
use crate::diagnostics::{Code, Diagnostic, did_you_mean, help_with_suggestion};

/// One parsed file of the set, and the schema files the set names.
pub struct SourceUnit<'a> {
    pub path: &'a str,
    /// The file's header, declarations and tests, placed in the file; its rules come to
    /// [`check_set`] one by one.
    pub outline: &'a PolicyFile,
    /// Schema texts (or why they could not be read) by [`schema_key`](super::schema_key).
    pub schemas: &'a BTreeMap<String, Result<String, String>>,
}

/// A checked policy set. Rules are in set order: files by path, then source order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CheckedSet {
    pub decls: Declarations,
    pub rules: Vec<PlacedRule>,
    pub tests: Vec<CheckedTest>,
    /// Whether any error was found; an erroneous set is never lowered.
    pub has_errors: bool,
    /// Every tool selector written by any rule, checked or not (for the unused-tool lint).
    pub selectors: Vec<String>,
}

/// A checked rule with positions relative to `offset` in its file. Rules are checked on their own
/// and shared across edits; only their offsets follow edits above them.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacedRule {
    pub rule: Arc<CheckedRule>,
    pub offset: u32,
}

impl PlacedRule {
    /// A span of the rule, placed in its file.
    pub fn place(&self, mut span: Span) -> Span {
        span.relocate(0, self.offset);
        span
    }
}

/// What checking one rule reads of the set's declarations. The incremental database answers each
/// question from its own query, so a rule is re-checked only when a tool it names changes.
pub trait DeclarationView {
    /// A declared tool's arguments, or `None` when no tool has this name.
    fn tool(&self, name: &str) -> Option<DeclaredTool>;
    /// Every declared tool's name, for suggestions.
    fn tool_names(&self) -> Vec<String>;
    /// The host context's declared fields.
    fn context(&self) -> Arc<Record>;
    /// The declared session labels.
    fn labels(&self) -> Arc<Vec<String>>;
}

/// What a rule sees of a declared tool: nothing positional, so moving the declaration re-checks
/// no rule.
#[derive(Clone, Debug, PartialEq)]
pub struct DeclaredTool {
    pub args: Arc<Record>,
    /// See [`ToolInfo::known`](super::ToolInfo::known).
    pub known: bool,
}

impl DeclarationView for Declarations {
    fn tool(&self, name: &str) -> Option<DeclaredTool> {
        self.tools.get(name).map(|info| DeclaredTool {
            args: info.args.clone(),
            known: info.known,
        })
    }

    fn tool_names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    fn context(&self) -> Arc<Record> {
        self.context.clone()
    }

    fn labels(&self) -> Arc<Vec<String>> {
        Arc::new(self.labels.keys().cloned().collect())
    }
}

/// One rule checked on its own, with the positions of its syntax tree.
#[derive(Clone, Debug, Default)]
pub struct RuleCheck {
    /// The checked rule, or `None` when it has errors.
    pub rule: Option<Arc<CheckedRule>>,
    pub diagnostics: Vec<Diagnostic>,
}

/// A rule of the set: its file, its syntax tree, and the offset in the file its positions are
/// relative to.
pub struct RuleSite<'a> {
    pub file: &'a str,
    pub rule: &'a Rule,
    pub offset: u32,
}

/// Assembles the checked set: the rules at `sites` in set order, each checked by `check_rule`
/// (unless its name is taken) and placed at its offset, then every test against them.
/// `declarations_failed` says whether collecting the declarations reported errors.
pub fn check_set<'c>(
    units: &[SourceUnit<'_>],
    decls: Declarations,
    declarations_failed: bool,
    sites: &[RuleSite<'_>],
    mut check_rule: impl FnMut(usize) -> Option<&'c RuleCheck>,
    diagnostics: &mut Vec<Diagnostic>,
) -> CheckedSet {
    let errors_before = diagnostics.iter().filter(|d| d.is_error()).count();
    let mut rules = Vec::new();
    let mut names: BTreeMap<String, (String, Span)> = BTreeMap::new();
    for (index, site) in sites.iter().enumerate() {
        let mut name = site.rule.name.clone();
        name.relocate(0, site.offset);
        if let Some((file, span)) = names.get(&name.name) {
            diagnostics.push(
                Diagnostic::new(
                    Code::DuplicateRule,
                    site.file,
                    name.span,
                    format!("rule `{}` is defined twice", name.name),
                )
                .label("defined again here")
                .secondary(file, *span, "first defined here")
                .help(
                    "rule names identify decisions in logs and tests; give each rule its own name",
                ),
            );
            continue;
        }
        names.insert(name.name.clone(), (site.file.to_string(), name.span));
        let Some(check) = check_rule(index) else {
            continue;
        };
        diagnostics.extend(
            check
                .diagnostics
                .iter()
                .map(|d| d.placed(site.file, site.offset)),
        );
        if let Some(rule) = &check.rule {
            rules.push(PlacedRule {
                rule: rule.clone(),
                offset: site.offset,
            });
        }
    }
    let mut tests = Vec::new();
    let mut test_names: BTreeMap<String, (String, Span)> = BTreeMap::new();
    for unit in units {
        for item in &unit.outline.items {
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
    let selectors = sites
        .iter()
        .flat_map(|site| &site.rule.selectors)
        .map(|s| s.text.clone())
        .collect();
    CheckedSet {
        decls,
        rules,
        tests,
        has_errors,
        selectors,
    }
}

/// Checks one rule against the declarations. Its spans are wherever the rule's are: the database
/// passes rules relative to their own start.
pub fn check_rule(file: &str, decls: &dyn DeclarationView, rule: &Rule) -> RuleCheck {
    let mut diagnostics = Vec::new();
    let rule = check_rule_into(file, decls, rule, &mut diagnostics).map(Arc::new);
    RuleCheck { rule, diagnostics }
}

fn check_rule_into(
    file: &str,
    decls: &dyn DeclarationView,
    rule: &Rule,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<CheckedRule> {
    let tools = resolve_selectors(file, decls, &rule.selectors, diagnostics)?;
    let args = args_shape(decls, &tools);
    let mut checker = ExprChecker::new(file, decls.context(), rule.kind, args, diagnostics);
    checker.labels = decls.labels();
    let per_part = rule
        .per_part
        .as_ref()
        .map(|part| checker.per_part(rule.kind, part));
    let implied = implied_condition(rule);
    let condition = rule
        .condition
        .as_ref()
        .or(implied.as_ref())
        .map(|cond| checker.condition(cond));
    let effects = check_effects(&mut checker, rule.kind, &rule.effects);
    let vars = checker.vars;
    let condition = match condition {
        Some(c) => Some(c?),
        None => None,
    };
    let per_part = match per_part {
        Some(part) => Some(part?),
        None => None,
    };
    Some(CheckedRule {
        kind: rule.kind,
        name: rule.name.name.clone(),
        file: file.to_string(),
        span: rule.span,
        name_span: rule.name.span,
        tools,
        per_part,
        condition,
        effects: effects?,
        examples: rule.examples.clone(),
        vars,
    })
}

/// A redacting rule written without `when` holds where one of its patterns matches some text of
/// the result: `result.text matches r"re" or …`. Written out, the condition goes through the same
/// field scan as any other, so a long result is read once for all such rules.
fn implied_condition(rule: &Rule) -> Option<Expr> {
    use crate::ast::{BinOp, ExprKind, Ident, effect_patterns};
    if rule.condition.is_some() {
        return None;
    }
    effect_patterns(&rule.effects)
        .map(|pattern| {
            let span = pattern.span;
            let name = |kind| Box::new(Expr { kind, span });
            let text = ExprKind::Field(
                name(ExprKind::Name("result".into())),
                Ident {
                    name: "text".into(),
                    span,
                },
            );
            Expr {
                kind: ExprKind::Binary {
                    op: BinOp::Matches,
                    lhs: name(text),
                    rhs: Box::new(pattern.clone()),
                },
                span,
            }
        })
        .reduce(|lhs, rhs| {
            let span = lhs.span;
            Expr {
                kind: ExprKind::Binary {
                    op: BinOp::Or,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                },
                span,
            }
        })
}

fn resolve_selectors(
    file: &str,
    decls: &dyn DeclarationView,
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
        } else if decls.tool(&selector.text).is_some() {
            if !set.names.contains(&selector.text) {
                set.names.push(selector.text.clone());
            }
        } else {
            let names = decls.tool_names();
            let suggestion = did_you_mean(&selector.text, names.iter().map(String::as_str));
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
fn args_shape(decls: &dyn DeclarationView, tools: &ToolSet) -> ArgsShape {
    if !tools.is_exact() {
        return ArgsShape::Dynamic;
    }
    let declared: Vec<(&str, DeclaredTool)> = tools
        .names
        .iter()
        .filter_map(|n| decls.tool(n).map(|t| (n.as_str(), t)))
        .collect();
    if declared.iter().any(|(_, t)| !t.known) {
        return ArgsShape::Dynamic;
    }
    let records: Vec<(&str, &Arc<Record>)> = declared.iter().map(|(n, t)| (*n, &t.args)).collect();
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
