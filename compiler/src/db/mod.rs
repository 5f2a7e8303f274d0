//! The compiler as salsa queries over inputs: `parse(file)` piece by piece, `declarations(set)`,
//! `rules(set)`, then per rule `check_rule`, `lower_rule`, `lint_rule` and `examples_rule`,
//! joined by `check(set)`, `analyse(set)` (every diagnostic) and `lower(set)` (the linked
//! program). Diagnostics are collected through the [`Diagnostics`] accumulator. A fresh load
//! runs the per-piece and per-rule queries on every core first ([`parse_pieces_in_parallel`],
//! [`analyse_rules_in_parallel`]). The CLI, the language server and the runtime's loader all use
//! this database type.

mod parallel;
mod parsing;
mod rule_queries;
mod set_queries;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::diagnostics::Diagnostic;

pub use parallel::analyse_rules_in_parallel;
pub use parsing::{Parsed, ParsedPiece, parse, parse_pieces_in_parallel};
pub use rule_queries::{
    RuleItem, RuleSyntax, ToolKey, check_rule, context_record, declared_tool, examples_rule,
    lint_rule, lower_rule, rules, tool_names,
};
pub use set_queries::{
    analyse, check, compile, declarations, diagnostics, lint, lower, source_map,
};

/// One policy source file.
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub path: String,
    #[returns(ref)]
    pub text: String,
}

/// A policy set: its files in set order (by path), and the schema files they name, read by the
/// driver (keyed by [`schema_key`](crate::check::schema_key)).
#[salsa::input(debug)]
pub struct PolicySet {
    #[returns(ref)]
    pub files: Vec<SourceFile>,
    #[returns(ref)]
    pub schemas: BTreeMap<String, Result<String, String>>,
}

/// Every diagnostic any query reports.
#[salsa::accumulator]
#[derive(Debug)]
pub struct Diagnostics(pub Diagnostic);

/// The one database type.
#[salsa::db]
#[derive(Clone, Default)]
pub struct Database {
    storage: salsa::Storage<Self>,
}

#[salsa::db]
impl salsa::Database for Database {}

impl Database {
    /// A database that records which queries executed, for tests of incrementality.
    pub fn with_log() -> (Self, QueryLog) {
        let log = QueryLog::default();
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind
                && let Ok(mut entries) = sink.0.lock()
            {
                entries.push(format!("{database_key:?}"));
            }
        })));
        (Database { storage }, log)
    }
}

/// The queries that executed, in order.
#[derive(Clone, Default)]
pub struct QueryLog(Arc<Mutex<Vec<String>>>);

impl QueryLog {
    pub fn take(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|mut entries| std::mem::take(&mut *entries))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
