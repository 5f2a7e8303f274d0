//! The per-rule queries: every rule is a tracked item whose syntax and position are tracked
//! apart, and is checked, lowered, linted and has its examples run on its own. A rule reads the
//! declarations through small queries whose equal answers stop change from spreading, so editing
//! one rule redoes that rule's work and editing a tool redoes the work of the rules that name it.

use std::sync::Arc;

use super::{PolicySet, declarations, parse};
use crate::ast::{Item, PolicyFile, Rule};
use crate::check::{DeclarationView, DeclaredTool, Record, RuleCheck};
use crate::diagnostics::{Diagnostic, SourceMap};
use crate::lower::LoweredRule;
use crate::shell::EffectTable;

/// One rule of a set, identified by its set, file and name.
#[salsa::tracked(debug)]
pub struct RuleItem<'db> {
    #[returns(copy)]
    pub set: PolicySet,
    #[returns(ref)]
    pub file: String,
    #[returns(ref)]
    pub name: String,
    #[tracked]
    #[returns(ref)]
    pub syntax: RuleSyntax,
    /// Where the rule's piece starts in its file: the origin of the rule's positions.
    #[tracked]
    #[returns(copy)]
    pub offset: u32,
}

/// A rule's syntax tree, shared with the piece it was parsed in: equal only when it is the same
/// parse of the same piece, so an edit inside the piece is never served stale positions.
#[derive(Clone, Debug)]
pub struct RuleSyntax {
    piece: Arc<PolicyFile>,
    index: usize,
}

impl RuleSyntax {
    pub fn rule(&self) -> Option<&Rule> {
        match self.piece.items.get(self.index) {
            Some(Item::Rule(rule)) => Some(rule),
            _ => None,
        }
    }
}

impl PartialEq for RuleSyntax {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.piece, &other.piece) && self.index == other.index
    }
}

impl Eq for RuleSyntax {}

/// Every rule of the set, in set order.
#[salsa::tracked(returns(ref))]
pub fn rules<'db>(db: &'db dyn salsa::Database, set: PolicySet) -> Vec<RuleItem<'db>> {
    let mut items = Vec::new();
    for file in set.files(db) {
        for piece in &parse(db, *file).pieces {
            for (index, item) in piece.ast.items.iter().enumerate() {
                let Item::Rule(rule) = item else { continue };
                let syntax = RuleSyntax {
                    piece: piece.ast.clone(),
                    index,
                };
                items.push(RuleItem::new(
                    db,
                    set,
                    file.path(db).clone(),
                    rule.name.name.clone(),
                    syntax,
                    piece.offset,
                ));
            }
        }
    }
    items
}

/// A tool name asked about in one policy set.
#[salsa::interned(debug)]
pub struct ToolKey<'db> {
    #[returns(copy)]
    pub set: PolicySet,
    #[returns(ref)]
    pub name: String,
}

/// One declared tool as rules see it: nothing positional, so moving a declaration re-checks no
/// rule.
#[salsa::tracked]
pub fn declared_tool<'db>(db: &'db dyn salsa::Database, key: ToolKey<'db>) -> Option<DeclaredTool> {
    declarations(db, key.set(db)).0.tool(key.name(db))
}

/// The declared tools' names, for suggestions.
#[salsa::tracked(returns(ref))]
pub fn tool_names(db: &dyn salsa::Database, set: PolicySet) -> Vec<String> {
    declarations(db, set).0.tool_names()
}

/// The host context's declared fields.
#[salsa::tracked]
pub fn context_record(db: &dyn salsa::Database, set: PolicySet) -> Arc<Record> {
    declarations(db, set).0.context.clone()
}

/// The declared session labels.
#[salsa::tracked]
pub fn declared_labels(db: &dyn salsa::Database, set: PolicySet) -> Arc<Vec<String>> {
    Arc::new(declarations(db, set).0.labels.keys().cloned().collect())
}

/// The shell effect table: the built-in rows and the set's `effects` rows. Equal tables stop
/// change, so only editing `effects` re-runs the examples.
#[salsa::tracked]
pub fn effect_table(db: &dyn salsa::Database, set: PolicySet) -> Arc<EffectTable> {
    EffectTable::extended(declarations(db, set).0.effects.clone())
}

/// A set's declarations, read through the queries above.
struct SetDeclarations<'db> {
    db: &'db dyn salsa::Database,
    set: PolicySet,
}

impl DeclarationView for SetDeclarations<'_> {
    fn tool(&self, name: &str) -> Option<DeclaredTool> {
        declared_tool(self.db, ToolKey::new(self.db, self.set, name.to_string())).clone()
    }

    fn tool_names(&self) -> Vec<String> {
        tool_names(self.db, self.set).clone()
    }

    fn context(&self) -> Arc<Record> {
        context_record(self.db, self.set).clone()
    }

    fn labels(&self) -> Arc<Vec<String>> {
        declared_labels(self.db, self.set).clone()
    }
}

/// One rule, checked on its own (positions relative to its offset).
#[salsa::tracked(returns(ref), no_eq)]
pub fn check_rule<'db>(db: &'db dyn salsa::Database, item: RuleItem<'db>) -> RuleCheck {
    let decls = SetDeclarations {
        db,
        set: item.set(db),
    };
    match item.syntax(db).rule() {
        Some(rule) => crate::check::check_rule(item.file(db), &decls, rule),
        None => RuleCheck::default(),
    }
}

/// One rule, lowered on its own, or `None` when it did not check.
#[salsa::tracked(returns(ref), no_eq)]
pub fn lower_rule<'db>(
    db: &'db dyn salsa::Database,
    item: RuleItem<'db>,
) -> Option<Result<Arc<LoweredRule>, Vec<Diagnostic>>> {
    let checked = check_rule(db, item).rule.as_ref()?;
    Some(crate::lower::lower_rule(checked).map(Arc::new))
}

/// The warnings about one rule on its own.
#[salsa::tracked(returns(ref))]
pub fn lint_rule<'db>(db: &'db dyn salsa::Database, item: RuleItem<'db>) -> Vec<Diagnostic> {
    check_rule(db, item)
        .rule
        .as_deref()
        .map(crate::lint::lint_rule)
        .unwrap_or_default()
}

/// The rule's examples, run against the rule alone.
#[salsa::tracked(returns(ref))]
pub fn examples_rule<'db>(db: &'db dyn salsa::Database, item: RuleItem<'db>) -> Vec<Diagnostic> {
    let Some(checked) = check_rule(db, item).rule.as_deref() else {
        return Vec::new();
    };
    if checked.examples.is_none() {
        return Vec::new();
    }
    let Some(Ok(lowered)) = lower_rule(db, item) else {
        return Vec::new();
    };
    // Examples report their own positions; the program's line numbers are not read.
    let effects = effect_table(db, item.set(db)).clone();
    let program = crate::lower::link([(&**lowered, 0)], &SourceMap::default(), effects);
    // Examples are held to the declarations as test blocks are, so a misspelt key is named.
    let declared = checked.tools.names.first().and_then(|name| {
        declared_tool(db, ToolKey::new(db, item.set(db), name.clone()))
            .clone()
            .filter(|tool| tool.known)
    });
    let shapes = crate::testing::ExampleShapes {
        args: declared.map(|tool| tool.args),
        context: context_record(db, item.set(db)).clone(),
    };
    crate::testing::check_examples(checked, &program, &shapes)
}
