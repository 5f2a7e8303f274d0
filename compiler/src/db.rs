//! The compiler as salsa queries over inputs: `parse(file)`, `declarations(set)`, `check(set)`,
//! `lower(set)`, `lint(set)`, `run_examples(set)`; diagnostics are collected through the
//! [`Diagnostics`] accumulator. The CLI holds one database for its whole run.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use salsa::Accumulator;

use crate::ast::PolicyFile;
use crate::check::{CheckedSet, Declarations, SourceUnit, check_set, collect_declarations};
use crate::diagnostics::{Diagnostic, SourceMap};
use crate::ir::Program;

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

/// A parsed file. Equal only when the text is equal, so a moved node is never served stale.
#[derive(Debug, PartialEq, Eq)]
pub struct Parsed {
    text: String,
    pub ast: Arc<PolicyFile>,
}

#[salsa::tracked(returns(ref))]
pub fn parse(db: &dyn salsa::Database, file: SourceFile) -> Parsed {
    let text = file.text(db);
    let (ast, diagnostics) = crate::parser::parse_file(file.path(db), text);
    for diagnostic in diagnostics {
        Diagnostics(diagnostic).accumulate(db);
    }
    Parsed {
        text: text.clone(),
        ast: Arc::new(ast),
    }
}

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
            ast: &parse(db, *f).ast,
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
    let mut diagnostics = Vec::new();
    let checked = check_set(
        &units(db, set),
        (**decls).clone(),
        *failed,
        &mut diagnostics,
    );
    for diagnostic in diagnostics {
        Diagnostics(diagnostic).accumulate(db);
    }
    Arc::new(checked)
}

/// The lowered program, or `None` when the set has errors.
#[salsa::tracked(returns(ref), no_eq)]
pub fn lower(db: &dyn salsa::Database, set: PolicySet) -> Option<Arc<Program>> {
    let checked = check(db, set);
    if checked.has_errors {
        return None;
    }
    match crate::lower::lower_set(checked, &source_map(db, set)) {
        Ok(program) => Some(Arc::new(program)),
        Err(diagnostics) => {
            for diagnostic in diagnostics {
                Diagnostics(diagnostic).accumulate(db);
            }
            None
        }
    }
}

#[salsa::tracked]
pub fn lint(db: &dyn salsa::Database, set: PolicySet) {
    for diagnostic in crate::lint::lint_set(check(db, set)) {
        Diagnostics(diagnostic).accumulate(db);
    }
}

#[salsa::tracked]
pub fn run_examples(db: &dyn salsa::Database, set: PolicySet) {
    let Some(program) = lower(db, set) else {
        return;
    };
    for diagnostic in crate::testing::check_examples(check(db, set), program) {
        Diagnostics(diagnostic).accumulate(db);
    }
}

/// Everything `sluice check` reports: parse, check, lower, lint and example diagnostics.
#[salsa::tracked(returns(ref), no_eq)]
pub fn compile(db: &dyn salsa::Database, set: PolicySet) -> Option<Arc<Program>> {
    let program = lower(db, set).clone();
    lint(db, set);
    run_examples(db, set);
    program
}

/// The diagnostics of [`compile`], sorted by place.
pub fn diagnostics(db: &dyn salsa::Database, set: PolicySet) -> Vec<Diagnostic> {
    let mut all: Vec<Diagnostic> = compile::accumulated::<Diagnostics>(db, set)
        .into_iter()
        .map(|d| d.0.clone())
        .collect();
    all.sort_by_key(Diagnostic::sort_key);
    all.dedup();
    all
}

/// The one database type: the CLI, the tests and (later) the language server use it.
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
mod tests {
    use std::collections::BTreeMap;

    use salsa::Setter;

    use super::*;

    fn executed(log: &QueryLog, query: &str) -> usize {
        log.take().iter().filter(|q| q.starts_with(query)).count()
    }

    #[test]
    fn editing_one_file_reparses_only_that_file() {
        let (mut db, log) = Database::with_log();
        let a = SourceFile::new(
            &db,
            "a.sluice".into(),
            "tool bash { command: string }\n".into(),
        );
        let b = SourceFile::new(
            &db,
            "b.sluice".into(),
            "gate g on bash when args.command == \"x\" => \"no\"\n".into(),
        );
        let set = PolicySet::new(&db, vec![a, b], BTreeMap::new());
        assert!(compile(&db, set).is_some());
        assert_eq!(executed(&log, "parse"), 2);

        b.set_text(&mut db)
            .to("gate g on bash when args.command == \"y\" => \"no\"\n".into());
        assert!(compile(&db, set).is_some());
        let ran = log.take();
        assert_eq!(
            ran.iter().filter(|q| q.starts_with("parse")).count(),
            1,
            "{ran:?}"
        );
        assert!(ran.iter().any(|q| q.starts_with("check")), "{ran:?}");

        // Nothing changed: nothing runs again.
        assert!(compile(&db, set).is_some());
        assert_eq!(log.take(), Vec::<String>::new());
    }

    #[test]
    fn diagnostics_come_from_every_stage() {
        let db = Database::default();
        let file = SourceFile::new(&db, "a.sluice".into(), "tool bash { command: string }\ntool unused { x: int }\ngate g on bash when args.comand == \"x\" => \"no\"\n".into());
        let set = PolicySet::new(&db, vec![file], BTreeMap::new());
        let codes: Vec<&str> = diagnostics(&db, set)
            .iter()
            .map(|d| d.code.short())
            .collect();
        assert_eq!(codes, ["W0004", "E0007"]);
    }
}
