//! Loading: files and directories into policy sets, compiled through the database.
//!
//! A directory that holds `.sluice` files is one policy set (its direct files); its
//! subdirectories are sets of their own. Files named directly on the command line form one set.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use salsa::Setter;

use crate::ast::ToolShape;
use crate::check::{CheckedSet, schema_key};
use crate::db::{self, Database, PolicySet, SourceFile};
use crate::diagnostics::{Diagnostic, SourceMap};
use crate::ir::Program;

pub const EXTENSION: &str = "sluice";

/// The most files one set may hold with its imports: a bound on hostile import chains.
const MAX_FILES: usize = 256;

/// Files that make one policy set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetSource {
    /// The directory, or the files as named.
    pub name: String,
    pub files: Vec<PathBuf>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LoadError {
    #[error("`{0}` does not exist")]
    Missing(String),
    #[error("cannot read `{0}`: {1}")]
    Unreadable(String, String),
    #[error("`{0}` is not valid UTF-8")]
    NotUtf8(String),
    #[error("policy file `{0}` is empty")]
    Empty(String),
    #[error("no `.sluice` files found in {0}")]
    NoPolicies(String),
    #[error("there is no built-in policy set `{name}`{}", suggestion.map_or(String::new(), |s| format!(" (did you mean `builtin:{s}`?)")))]
    NoBuiltin {
        name: String,
        suggestion: Option<&'static str>,
    },
}

/// The policy sets named by `paths`.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<SetSource>, LoadError> {
    let mut sets = Vec::new();
    let mut loose = Vec::new();
    for path in paths {
        let shown = path.display().to_string();
        if let Some(name) = shown.strip_prefix(crate::builtin::PREFIX) {
            let set = crate::builtin::set(name).ok_or_else(|| LoadError::NoBuiltin {
                name: name.to_string(),
                suggestion: crate::builtin::suggest(name),
            })?;
            sets.push(set.source());
            continue;
        }
        if !path.exists() {
            return Err(LoadError::Missing(shown));
        }
        if path.is_dir() {
            collect_dir(path, &mut sets)?;
        } else {
            loose.push(path.clone());
        }
    }
    if !loose.is_empty() {
        let name = loose
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        sets.push(SetSource { name, files: loose });
    }
    if sets.is_empty() {
        let named = paths
            .iter()
            .map(|p| format!("`{}`", p.display()))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(LoadError::NoPolicies(named));
    }
    Ok(sets)
}

fn collect_dir(dir: &Path, sets: &mut Vec<SetSource>) -> Result<(), LoadError> {
    let shown = dir.display().to_string();
    let entries =
        std::fs::read_dir(dir).map_err(|e| LoadError::Unreadable(shown.clone(), e.to_string()))?;
    let mut files = Vec::new();
    let mut subdirs = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| LoadError::Unreadable(shown.clone(), e.to_string()))?
            .path();
        if path.is_dir() {
            subdirs.push(path);
        } else if path.extension().is_some_and(|e| e == EXTENSION) {
            files.push(path);
        }
    }
    files.sort();
    subdirs.sort();
    if !files.is_empty() {
        sets.push(SetSource { name: shown, files });
    }
    for sub in subdirs {
        collect_dir(&sub, sets)?;
    }
    Ok(())
}

/// A compiled policy set.
#[derive(Clone)]
pub struct Compiled {
    pub name: String,
    pub set: PolicySet,
    /// `None` when the set has errors, whichever stage reported them.
    pub program: Option<Arc<Program>>,
    pub checked: Arc<CheckedSet>,
    pub diagnostics: Vec<Diagnostic>,
    pub sources: SourceMap,
    /// Every file the set was compiled from, with its text: its own files, those they import,
    /// and the schemas they name. A cache of the program is valid while these are unchanged.
    pub inputs: Vec<(String, String)>,
}

/// A policy set checked but not linked: what an editor shows.
pub struct Analysis {
    pub name: String,
    pub set: PolicySet,
    pub checked: Arc<CheckedSet>,
    pub diagnostics: Vec<Diagnostic>,
    pub sources: SourceMap,
}

impl Analysis {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

impl Compiled {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The errors alone, without the warnings.
    pub fn errors(&self) -> Vec<Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| d.is_error())
            .cloned()
            .collect()
    }
}

/// A file's text: from disk, or from the binary for a built-in set's file (`builtin:…`).
pub fn read_text(path: &Path) -> Result<String, LoadError> {
    let shown = path.display().to_string();
    if shown.starts_with(crate::builtin::PREFIX) {
        return crate::builtin::BuiltinSet::text(&shown)
            .map(str::to_string)
            .ok_or(LoadError::Missing(shown));
    }
    let bytes = std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => LoadError::Missing(shown.clone()),
        _ => LoadError::Unreadable(shown.clone(), e.to_string()),
    })?;
    String::from_utf8(bytes).map_err(|_| LoadError::NotUtf8(shown))
}

impl Database {
    /// Reads the set's files (and the schemas they name) and compiles them.
    pub fn load(&mut self, source: &SetSource) -> Result<Compiled, LoadError> {
        let mut files = Vec::new();
        for path in &source.files {
            files.push((path.display().to_string(), read_policy(path)?));
        }
        Ok(self.compile_texts(&source.name, files))
    }

    /// Compiles a set given as texts; schema files are read from disk relative to each file, and
    /// so are the files they import.
    pub fn compile_texts(&mut self, name: &str, files: Vec<(String, String)>) -> Compiled {
        let inputs: Vec<SourceFile> = files
            .into_iter()
            .map(|(path, text)| SourceFile::new(self, path, text))
            .collect();
        let inputs = self.with_imports(inputs);
        let set = PolicySet::new(self, inputs.clone(), BTreeMap::new());
        db::parse_pieces_in_parallel(self, &inputs);
        let schemas = self.read_schemas(&inputs);
        if !schemas.is_empty() {
            set.set_schemas(self).to(schemas);
        }
        db::analyse_rules_in_parallel(self, set);
        self.compiled(name, set)
    }

    /// The files and every file they import, transitively, each once and in the order met. A
    /// file that cannot be read is left out: the checker reports its import (`E0033`).
    fn with_imports(&self, mut inputs: Vec<SourceFile>) -> Vec<SourceFile> {
        let mut seen: std::collections::BTreeSet<String> =
            inputs.iter().map(|f| f.path(self).clone()).collect();
        let mut next = 0;
        while let Some(file) = inputs.get(next).copied() {
            next += 1;
            let importer = file.path(self).clone();
            let targets: Vec<String> =
                crate::check::imports_of(&db::parse(self, file).outline.items)
                    .map(|import| crate::check::import_key(&importer, &import.path))
                    .collect();
            for key in targets {
                if inputs.len() >= MAX_FILES || !seen.insert(key.clone()) {
                    continue;
                }
                if let Ok(text) = read_policy(Path::new(&key)) {
                    inputs.push(SourceFile::new(self, key, text));
                }
            }
        }
        inputs
    }

    /// The schema files the given files name, read from disk (or why they could not be).
    fn read_schemas(&self, files: &[SourceFile]) -> BTreeMap<String, Result<String, String>> {
        let mut schemas = BTreeMap::new();
        for file in files {
            let path = file.path(self).clone();
            for item in &db::parse(self, *file).outline.items {
                if let crate::ast::Item::Tool(tool) = item
                    && let ToolShape::Schema { path: relative, .. } = &tool.shape
                {
                    let key = schema_key(&path, relative);
                    let text = read_text(Path::new(&key)).map_err(|e| e.to_string());
                    schemas.insert(key, text);
                }
            }
        }
        schemas
    }

    /// The compilation of a set already in the database.
    pub fn compiled(&self, name: &str, set: PolicySet) -> Compiled {
        let Analysis {
            name,
            set,
            checked,
            diagnostics,
            sources,
        } = self.analysed(name, set);
        // Any error, a parse error included, leaves no program: a rule the parser refused must
        // not leave behind a set that allows what the rule would have denied.
        let program = db::compile(self, set)
            .clone()
            .filter(|_| !diagnostics.iter().any(Diagnostic::is_error));
        let files = set
            .files(self)
            .iter()
            .map(|file| (file.path(self).clone(), file.text(self).clone()));
        let schemas = set
            .schemas(self)
            .iter()
            .filter_map(|(path, text)| Some((path.clone(), text.as_ref().ok()?.clone())));
        let inputs = files.chain(schemas).collect();
        Compiled {
            program,
            name,
            set,
            checked,
            diagnostics,
            sources,
            inputs,
        }
    }

    /// A set already in the database, checked without linking a program.
    pub fn analysed(&self, name: &str, set: PolicySet) -> Analysis {
        Analysis {
            name: name.to_string(),
            set,
            checked: db::check(self, set).clone(),
            diagnostics: db::diagnostics(self, set),
            sources: db::source_map(self, set),
        }
    }
}

/// Policy sets given as texts and kept in one database across edits: the same set and paths
/// reuse their inputs, so a new text recomputes only what depends on it (the language server).
#[derive(Default)]
pub struct OpenTexts {
    sets: BTreeMap<String, (PolicySet, Vec<SourceFile>)>,
}

impl OpenTexts {
    /// Checks the set `name` with these files, updating the inputs it had.
    pub fn analyse(
        &mut self,
        db: &mut Database,
        name: &str,
        files: Vec<(String, String)>,
    ) -> Analysis {
        let reusable = self.sets.get(name).filter(|(_, inputs)| {
            inputs.len() == files.len()
                && inputs
                    .iter()
                    .zip(&files)
                    .all(|(input, (path, _))| input.path(db) == path)
        });
        let (set, inputs) = match reusable {
            Some((set, inputs)) => {
                let (set, inputs) = (*set, inputs.clone());
                for (input, (_, text)) in inputs.iter().zip(files) {
                    if input.text(db) != &text {
                        input.set_text(db).to(text);
                    }
                }
                (set, inputs)
            }
            None => {
                let inputs: Vec<SourceFile> = files
                    .into_iter()
                    .map(|(path, text)| SourceFile::new(db, path, text))
                    .collect();
                let set = PolicySet::new(db, db.with_imports(inputs.clone()), BTreeMap::new());
                self.sets.insert(name.to_string(), (set, inputs.clone()));
                (set, inputs)
            }
        };
        let schemas = db.read_schemas(&inputs);
        if &schemas != set.schemas(db) {
            set.set_schemas(db).to(schemas);
        }
        db.analysed(name, set)
    }
}

/// Policy sets kept in one database across edits, so that a change recomputes only what depends
/// on it (watch mode; the language server).
pub struct Workspace {
    paths: Vec<PathBuf>,
    sets: Vec<OpenSet>,
}

struct OpenSet {
    source: SetSource,
    set: PolicySet,
    files: Vec<SourceFile>,
}

impl Workspace {
    pub fn open(db: &mut Database, paths: &[PathBuf]) -> Result<Workspace, LoadError> {
        let mut workspace = Workspace {
            paths: paths.to_vec(),
            sets: Vec::new(),
        };
        workspace.reload(db)?;
        Ok(workspace)
    }

    fn reload(&mut self, db: &mut Database) -> Result<(), LoadError> {
        let mut sets = Vec::new();
        for source in discover(&self.paths)? {
            let mut files = Vec::new();
            for path in &source.files {
                files.push(SourceFile::new(
                    db,
                    path.display().to_string(),
                    read_policy(path)?,
                ));
            }
            let set = PolicySet::new(db, db.with_imports(files.clone()), BTreeMap::new());
            let schemas = db.read_schemas(&files);
            set.set_schemas(db).to(schemas);
            sets.push(OpenSet { source, set, files });
        }
        self.sets = sets;
        Ok(())
    }

    /// Reads every file again and updates the inputs whose text changed; returns what changed.
    pub fn refresh(&mut self, db: &mut Database) -> Result<Vec<String>, LoadError> {
        let sources = discover(&self.paths)?;
        if sources.len() != self.sets.len()
            || sources.iter().zip(&self.sets).any(|(a, b)| *a != b.source)
        {
            self.reload(db)?;
            return Ok(vec!["files were added or removed".to_string()]);
        }
        let mut changed = Vec::new();
        for open in &self.sets {
            for file in &open.files {
                let path = file.path(db).clone();
                let text = read_policy(Path::new(&path))?;
                if &text != file.text(db) {
                    file.set_text(db).to(text);
                    changed.push(path);
                }
            }
            let schemas = db.read_schemas(&open.files);
            if &schemas != open.set.schemas(db) {
                open.set.set_schemas(db).to(schemas);
                changed.push(format!("the schemas of {}", open.source.name));
            }
        }
        Ok(changed)
    }

    pub fn compiled(&self, db: &Database) -> Vec<Compiled> {
        self.sets
            .iter()
            .map(|open| db.compiled(&open.source.name, open.set))
            .collect()
    }
}

/// A policy file's text; an empty file is refused.
fn read_policy(path: &Path) -> Result<String, LoadError> {
    let text = read_text(path)?;
    if text.trim().is_empty() {
        return Err(LoadError::Empty(path.display().to_string()));
    }
    Ok(text)
}
