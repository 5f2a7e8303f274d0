//! `import "PATH"`: where an imported file is, and what it may hold. The loader reads the files
//! a set imports into the set (see `load`); the checker reports an import that found no file,
//! and an imported file that holds rules or tests (only declarations are shared).

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use crate::ast::{ImportDecl, Item};
use crate::builtin::PREFIX;
use crate::diagnostics::{Code, Diagnostic};

use super::SourceUnit;

/// The path an import names, as the set's files are known: relative to the importing file's
/// directory (inside the built-in sets for a built-in file), or `builtin:SET/FILE`, normalized
/// without touching the disk (`a/../b` is `b`).
pub fn import_key(importer: &str, target: &str) -> String {
    if target.starts_with(PREFIX) {
        return normalize_builtin(target);
    }
    if let Some(inside) = importer.strip_prefix(PREFIX) {
        let dir = Path::new(inside).parent().unwrap_or(Path::new(""));
        return normalize_builtin(&format!("{PREFIX}{}", dir.join(target).display()));
    }
    let dir = Path::new(importer).parent().unwrap_or(Path::new(""));
    normalize(&dir.join(target)).display().to_string()
}

fn normalize_builtin(path: &str) -> String {
    let inside = path.strip_prefix(PREFIX).unwrap_or(path);
    format!("{PREFIX}{}", normalize(Path::new(inside)).display())
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            // Above the root is the root.
            Component::ParentDir if out.has_root() => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The imports of a file's outline.
pub fn imports_of(items: &[Item]) -> impl Iterator<Item = &ImportDecl> {
    items.iter().filter_map(|item| match item {
        Item::Import(import) => Some(import),
        _ => None,
    })
}

/// The files the set's imports name, and a diagnostic for each import that names none of the
/// set's files (the loader could not read it) or whose file holds tests.
pub fn check_imports(
    units: &[SourceUnit<'_>],
    diagnostics: &mut Vec<Diagnostic>,
) -> BTreeSet<String> {
    let paths: BTreeSet<&str> = units.iter().map(|u| u.path).collect();
    let mut imported = BTreeSet::new();
    for unit in units {
        for import in imports_of(&unit.outline.items) {
            let key = import_key(unit.path, &import.path);
            if !paths.contains(key.as_str()) {
                diagnostics.push(
                    Diagnostic::new(Code::UnresolvedImport, unit.path, import.path_span, format!("cannot import `{}`: no such policy file", import.path))
                        .label(format!("looked for `{key}`"))
                        .help("import a `.sluice` file of declarations by its path relative to this file, or a built-in one such as `builtin:vocabulary/tools.sluice`"),
                );
                continue;
            }
            imported.insert(key);
        }
    }
    for unit in units.iter().filter(|u| imported.contains(u.path)) {
        for item in &unit.outline.items {
            if let Item::Test(test) = item {
                diagnostics.push(imported_item(unit.path, test.name_span, "test"));
            }
        }
    }
    imported
}

/// The diagnostic for a rule or test in a file that the set imports.
pub fn imported_item(file: &str, span: crate::ast::Span, what: &str) -> Diagnostic {
    Diagnostic::new(Code::ImportHoldsRules, file, span, format!("this {what} is in a file that is imported, and an imported file may hold only declarations"))
        .label(format!("a {what} in an imported file"))
        .help("keep `tool`, `context` and `effects` declarations in the imported file, and move rules and tests to a set of their own")
}

#[cfg(test)]
mod tests {
    use super::import_key;

    #[test]
    fn an_import_is_relative_to_its_file_on_disk_and_among_the_built_in_sets() {
        assert_eq!(
            import_key(
                "policies/git-guard/git-guard.sluice",
                "../vocabulary/tools.sluice"
            ),
            "policies/vocabulary/tools.sluice"
        );
        assert_eq!(
            import_key(
                "builtin:git-guard/git-guard.sluice",
                "../vocabulary/tools.sluice"
            ),
            "builtin:vocabulary/tools.sluice"
        );
        assert_eq!(
            import_key("/p/a.sluice", "builtin:vocabulary/./tools.sluice"),
            "builtin:vocabulary/tools.sluice"
        );
        assert_eq!(import_key("a.sluice", "decls.sluice"), "decls.sluice");
        assert_eq!(import_key("/x/a.sluice", "../../../y.sluice"), "/y.sluice");
    }
}
