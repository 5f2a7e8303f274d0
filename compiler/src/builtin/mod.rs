//! The shipped policy sets, compiled into the binary: `builtin:shell-safety` needs no clone of
//! the repository. Their text is the repository's `policies/` at build time.

use std::path::PathBuf;

use crate::diagnostics::did_you_mean;
use crate::load::SetSource;

/// The prefix that names a built-in set (`builtin:git-guard`) or one of its files.
pub const PREFIX: &str = "builtin:";

/// One shipped set: its name and its files as `(file name, text)`.
pub struct BuiltinSet {
    pub name: &'static str,
    pub description: &'static str,
    pub files: &'static [(&'static str, &'static str)],
}

macro_rules! builtin {
    ($name:literal, $description:literal, [$($file:literal),+]) => {
        BuiltinSet {
            name: $name,
            description: $description,
            files: &[$(($file, include_str!(concat!("../../../policies/", $name, "/", $file)))),+],
        }
    };
}

/// Every shipped set, in the order `sluice init` lists them.
pub const SETS: &[BuiltinSet] = &[
    builtin!(
        "shell-safety",
        "destructive shell commands, judged part by part",
        [
            "damage.sluice",
            "footholds.sluice",
            "leaks.sluice",
            "reach.sluice",
            "shell-safety.sluice"
        ]
    ),
    builtin!(
        "git-guard",
        "git history: force pushes, hard resets, cleans, rewrites",
        ["git-guard.sluice"]
    ),
    builtin!(
        "coding-agent",
        "a coding agent's writes, deletes and secret files",
        ["coding-agent.sluice", "guard.sluice"]
    ),
    builtin!(
        "secrets-redaction",
        "credentials in tool output",
        [
            "ai.sluice",
            "chat.sluice",
            "cloud.sluice",
            "code-hosts.sluice",
            "payments.sluice",
            "registries.sluice",
            "saas.sluice",
            "secrets-redaction.sluice"
        ]
    ),
    builtin!(
        "network",
        "outbound HTTP to the hosts the config allows",
        ["network.sluice"]
    ),
    builtin!("readonly", "read-only agents", ["readonly.sluice"]),
    builtin!(
        "data-flow",
        "labels across a session: a secret read, then sent; web content fetched, then run",
        ["data-flow.sluice"]
    ),
    builtin!(
        "vocabulary",
        "the standard tool declarations the other sets import",
        ["tools.sluice"]
    ),
];

/// The shipped set called `name` (without the prefix).
pub fn set(name: &str) -> Option<&'static BuiltinSet> {
    SETS.iter().find(|set| set.name == name)
}

/// The closest shipped set's name, for a "did you mean".
pub fn suggest(name: &str) -> Option<&'static str> {
    did_you_mean(name, SETS.iter().map(|set| set.name))
}

impl BuiltinSet {
    /// The path a file of this set is known by in diagnostics and outcomes:
    /// `builtin:git-guard/git-guard.sluice`.
    pub fn path(&self, file: &str) -> String {
        format!("{PREFIX}{}/{file}", self.name)
    }

    pub fn source(&self) -> SetSource {
        SetSource {
            name: format!("{PREFIX}{}", self.name),
            files: self
                .files
                .iter()
                .map(|(file, _)| PathBuf::from(self.path(file)))
                .collect(),
        }
    }

    /// The text of the file known by `path`, if it is one of this set's.
    pub fn text(path: &str) -> Option<&'static str> {
        let rest = path.strip_prefix(PREFIX)?;
        let (set_name, file) = rest.split_once('/')?;
        set(set_name)?
            .files
            .iter()
            .find(|(name, _)| *name == file)
            .map(|(_, text)| *text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_directory_is_built_in() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../policies");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut built_in: Vec<String> = SETS.iter().map(|s| s.name.to_string()).collect();
        built_in.sort();
        assert_eq!(on_disk, built_in);
        // And every file of each, so no set ships without part of itself.
        for set in SETS {
            let mut files: Vec<String> = std::fs::read_dir(format!("{dir}/{}", set.name))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(".sluice"))
                .collect();
            files.sort();
            let built: Vec<String> = set.files.iter().map(|(f, _)| f.to_string()).collect();
            assert_eq!(files, built, "{}", set.name);
        }
    }

    #[test]
    fn a_file_is_found_by_its_path() {
        let set = set("git-guard").expect("git-guard is built in");
        let path = set.path("git-guard.sluice");
        assert_eq!(path, "builtin:git-guard/git-guard.sluice");
        assert!(BuiltinSet::text(&path).is_some_and(|t| t.contains("policy git_guard")));
        assert!(BuiltinSet::text("builtin:nope/x.sluice").is_none());
        assert_eq!(suggest("git-gaurd"), Some("git-guard"));
    }
}
