//! The set-level queries: declarations, then the checked set assembled from its rules, lint and
//! examples (`analyse`), and the program linked from the lowered rules (`lower`).

use std::sync::Arc;

use salsa::Accumulator;

use super::rule_queries::{check_rule, examples_rule, lint_rule, lower_rule, rules};
use super::{Diagnostics, PolicySet, parse};
use crate::ast::Relocate;
use crate::check::{
    CheckedSet, Declarations, RuleSite, SourceUnit, check_set, collect_declarations,
};
use crate::diagnostics::{Code, Diagnostic, SourceMap};
use crate::ir::Program;

/// The set's text, for line numbers and rendering.
pub fn source_map(db: &dyn salsa::Database, set: PolicySet) -> SourceMap {
    let mut sources = SourceMap::default();
    for file in set.files(db) {
        sources.insert(file.path(db).clone(), file.text(db).clone());
    }
    sources
}

/// The set's files as checker units.
fn units<'db>(db: &'db dyn salsa::Database, set: PolicySet) -> Vec<SourceUnit<'db>> {
    let schemas = set.schemas(db);
    set.files(db)
        .iter()
        .map(|f| SourceUnit {
            path: f.path(db),
            outline: &parse(db, *f).outline,
            schemas,
        })
        .collect()
}

/// The declarations shared by the set's files, and whether collecting them failed.
#[salsa::tracked(returns(ref), no_eq)]
pub fn declarations(db: &dyn salsa::Database, set: PolicySet) -> (Arc<Declarations>, bool) {
    let mut diagnostics = Vec::new();
    let decls = collect_declarations(&units(db, set), &mut diagnostics);
    let failed = diagnostics.iter().any(Diagnostic::is_error);
    for diagnostic in diagnostics {
        Diagnostics(diagnostic).accumulate(db);
    }
    (Arc::new(decls), failed)
}

/// Every rule and test, checked against the declarations.
#[salsa::tracked(returns(ref), no_eq)]
pub fn check(db: &dyn salsa::Database, set: PolicySet) -> Arc<CheckedSet> {
    let (decls, failed) = declarations(db, set);
    let mut items = Vec::new();
    let mut sites = Vec::new();
    for item in rules(db, set) {
        if let Some(rule) = item.syntax(db).rule() {
            items.push(*item);
            sites.push(RuleSite {
                file: item.file(db),
                rule,
                offset: item.offset(db),
            });
        }
    }
    let mut diagnostics = Vec::new();
    for site in sites.iter().filter(|s| decls.imported.contains(s.file)) {
        let mut span = site.rule.name.span;
        span.relocate(0, site.offset);
        diagnostics.push(crate::check::imported_item(site.file, span, "rule"));
    }
    let checked = check_set(
        &units(db, set),
        (**decls).clone(),
        *failed,
        &sites,
        |index| items.get(index).map(|item| check_rule(db, *item)),
        &mut diagnostics,
    );
    // An item that does not parse may be the declaration (a misspelt `tool` or `import`): while
    // it stands, a tool that no parsed item declares is not reported, as the warnings are not
    // (see `lint`); it would only echo the syntax error.
    if set.files(db).iter().any(|file| parse(db, *file).broken) {
        diagnostics.retain(|d| d.code != Code::UnknownTool);
    }
    for diagnostic in diagnostics {
        Diagnostics(diagnostic).accumulate(db);
    }
    Arc::new(checked)
}

/// Accumulates a rule's diagnostics, placed in its file.
fn report_placed(db: &dyn salsa::Database, file: &str, offset: u32, diagnostics: &[Diagnostic]) {
    for diagnostic in diagnostics {
        Diagnostics(diagnostic.placed(file, offset)).accumulate(db);
    }
}

#[salsa::tracked]
pub fn lint(db: &dyn salsa::Database, set: PolicySet) {
    let mut seen = std::collections::HashSet::new();
    for item in rules(db, set) {
        // A rule whose name is taken is not part of the set (see `check_set`).
        if seen.insert(item.name(db)) {
            report_placed(db, item.file(db), item.offset(db), lint_rule(db, *item));
        }
    }
    let parsed = set.files(db).iter().all(|file| !parse(db, *file).broken);
    for diagnostic in crate::lint::lint_set(check(db, set), parsed) {
        Diagnostics(diagnostic).accumulate(db);
    }
}

/// Everything `sluice check` reports — parse, check, lower, lint and example diagnostics —
/// without linking a program.
#[salsa::tracked]
pub fn analyse(db: &dyn salsa::Database, set: PolicySet) {
    let checked = check(db, set);
    lint(db, set);
    if checked.has_errors {
        return;
    }
    for item in rules(db, set) {
        let (file, offset) = (item.file(db), item.offset(db));
        if let Some(Err(diagnostics)) = lower_rule(db, *item) {
            report_placed(db, file, offset, diagnostics);
        }
        report_placed(db, file, offset, examples_rule(db, *item));
    }
}

/// The lowered program, or `None` when the set has errors.
#[salsa::tracked(returns(ref), no_eq)]
pub fn lower(db: &dyn salsa::Database, set: PolicySet) -> Option<Arc<Program>> {
    if check(db, set).has_errors {
        return None;
    }
    let mut lowered = Vec::new();
    for item in rules(db, set) {
        let Some(Ok(rule)) = lower_rule(db, *item) else {
            return None;
        };
        lowered.push((rule.clone(), item.offset(db)));
    }
    let sources = source_map(db, set);
    let effects = super::rule_queries::effect_table(db, set).clone();
    let program = crate::lower::link(lowered.iter().map(|(r, o)| (&**r, *o)), &sources, effects);
    Some(Arc::new(program))
}

/// The program and everything `sluice check` reports.
#[salsa::tracked(returns(ref), no_eq)]
pub fn compile(db: &dyn salsa::Database, set: PolicySet) -> Option<Arc<Program>> {
    analyse(db, set);
    lower(db, set).clone()
}

/// The diagnostics of [`analyse`], sorted by place.
pub fn diagnostics(db: &dyn salsa::Database, set: PolicySet) -> Vec<Diagnostic> {
    let mut all: Vec<Diagnostic> = analyse::accumulated::<Diagnostics>(db, set)
        .into_iter()
        .map(|d| d.0.clone())
        .collect();
    all.sort_by_key(Diagnostic::sort_key);
    all.dedup();
    all
}
