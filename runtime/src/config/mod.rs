//! The project configuration, `sluice.toml`: the policy sets of one agent in chain order, the
//! scope each loads at, and where context fields come from when the host does not send them.
//! The CLI, the runtime's builder and every integration read it through this module, so they
//! all evaluate the same chain (lang-spec/config.md).

mod cache;
mod parse;

pub use cache::{CacheUse, PolicyCache, Stages, policy_hash, text_hash};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value as Json;
use sluice_compiler::ast::Span;
use sluice_compiler::db::Database;
use sluice_compiler::diagnostics::{Code, Diagnostic, SourceMap};
use sluice_compiler::jit::Backend;
use sluice_compiler::load::{SetSource, discover};

use crate::chain::Chain;
use crate::policy::{LoadedPolicy, PolicyError};
use crate::registry::Scope;

/// The file `sluice` looks for, from the working directory up.
pub const FILE_NAME: &str = "sluice.toml";

/// Which policy set a `[[policy]]` table names.
#[derive(Clone, Debug, PartialEq)]
pub enum SetRef {
    /// A shipped set, compiled into the binary (`builtin:shell-safety`).
    Builtin(String),
    /// A directory or file, relative to the configuration's directory.
    Path { path: String, span: Span },
}

/// One `[[policy]]` table.
#[derive(Clone, Debug, PartialEq)]
pub struct SetEntry {
    pub set: SetRef,
    pub scope: Scope,
    /// The table, for diagnostics about the set it names.
    pub span: Span,
}

/// Where a context field's value comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// The directory that holds the configuration: the project.
    Project,
    /// The user's home directory (`$HOME`).
    Home,
    /// The call's own working directory (the hook event's `cwd`; for the CLI, its own).
    Cwd,
    /// An environment variable of the process.
    Env(String),
}

#[derive(Clone, Debug, PartialEq)]
pub enum ContextSource {
    From(Source),
    Value(Json),
}

/// A parsed configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// The file, as it was named or found.
    pub path: PathBuf,
    /// The directory relative paths and `$project` are resolved against.
    pub dir: PathBuf,
    pub sets: Vec<SetEntry>,
    pub context: Vec<(String, ContextSource)>,
    text: String,
}

/// Why a configuration or one of its sets cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "no `{FILE_NAME}` in `{0}` or any directory above it: run `sluice init` to write one, or name one with `--config`"
    )]
    NotFound(String),
    #[error("cannot read `{0}`: {1}")]
    Unreadable(String, String),
    /// Diagnostics about the file or a set it names, with the texts they point into.
    #[error("{summary}")]
    Invalid {
        summary: String,
        diagnostics: Vec<Diagnostic>,
        sources: SourceMap,
    },
}

/// The configuration `sluice init` writes: the shipped shell, git and coding-agent guards and
/// secrets redaction, and the usual context sources. The default chain of the benchmarks.
pub const STARTER: &str = include_str!("starter.toml");

impl Config {
    /// The configuration `explicit` names, or the nearest `sluice.toml` from `start` up.
    pub fn discover(explicit: Option<&Path>, start: &Path) -> Result<Config, ConfigError> {
        match explicit {
            Some(path) => Config::load(path),
            None => {
                let found = Config::find(start)
                    .ok_or_else(|| ConfigError::NotFound(start.display().to_string()))?;
                Config::load(&found)
            }
        }
    }

    /// The nearest `sluice.toml` in `start` or a directory above it.
    pub fn find(start: &Path) -> Option<PathBuf> {
        start
            .ancestors()
            .map(|dir| dir.join(FILE_NAME))
            .find(|candidate| candidate.is_file())
    }

    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::Unreadable(shown.clone(), e.to_string()))?;
        Config::parse(path, text)
    }

    /// A configuration from its text; `path` places it (relative sets, `$project`).
    pub fn parse(path: &Path, text: String) -> Result<Config, ConfigError> {
        let shown = path.display().to_string();
        let parsed = parse::parse(&shown, &text)
            .map_err(|diagnostics| invalid(&shown, &text, diagnostics))?;
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        Ok(Config {
            dir: std::path::absolute(&dir).unwrap_or(dir),
            path: path.to_path_buf(),
            sets: parsed.sets,
            context: parsed.context,
            text,
        })
    }

    /// What each `[[policy]]` table names, as a path `discover` takes (`builtin:NAME` for a
    /// built-in set), in chain order.
    pub fn set_paths(&self) -> Vec<PathBuf> {
        self.sets.iter().map(|entry| self.set_path(entry)).collect()
    }

    fn set_path(&self, entry: &SetEntry) -> PathBuf {
        match &entry.set {
            SetRef::Builtin(name) => {
                PathBuf::from(format!("{}{name}", sluice_compiler::builtin::PREFIX))
            }
            SetRef::Path { path, .. } => self.dir.join(path),
        }
    }

    /// The policy sets in chain order, each with its scope (a directory of sets gives each).
    pub fn set_sources(&self) -> Result<Vec<(SetSource, Scope)>, ConfigError> {
        let mut out = Vec::new();
        let mut diagnostics = Vec::new();
        for entry in &self.sets {
            let named = self.set_path(entry);
            match discover(std::slice::from_ref(&named)) {
                Ok(sets) => out.extend(sets.into_iter().map(|mut source| {
                    // A set is known by its path as the configuration writes it.
                    if let Ok(relative) = Path::new(&source.name).strip_prefix(&self.dir) {
                        source.name = relative.display().to_string();
                    }
                    (source, entry.scope.clone())
                })),
                Err(error) => {
                    let span = match &entry.set {
                        SetRef::Path { span, .. } => *span,
                        SetRef::Builtin(_) => entry.span,
                    };
                    diagnostics.push(
                        Diagnostic::new(
                            Code::ConfigValue,
                            &self.path.display().to_string(),
                            span,
                            error.to_string(),
                        )
                        .label("this set cannot be loaded")
                        .help(format!("paths are relative to `{}`", self.dir.display())),
                    );
                }
            }
        }
        if diagnostics.is_empty() {
            Ok(out)
        } else {
            Err(invalid(
                &self.path.display().to_string(),
                &self.text,
                diagnostics,
            ))
        }
    }

    /// Every set compiled, in chain order.
    ///
    /// The sets compile side by side, one thread each: a hook is a process per tool call, and
    /// compiling is most of its time.
    pub fn chain(&self, backend: Backend) -> Result<Chain, ConfigError> {
        self.chain_and_inputs(backend).map(|(chain, _)| chain)
    }

    /// Every set compiled, with the files the chain was compiled from and their texts: what a
    /// long-running server watches, and hashes into the policy's identity.
    pub fn chain_and_inputs(
        &self,
        backend: Backend,
    ) -> Result<(Chain, Vec<(String, String)>), ConfigError> {
        let sources = self.set_sources()?;
        let compiled = self.compile_sets(&sources, backend)?;
        let inputs = compiled
            .iter()
            .flat_map(|(_, inputs)| inputs.iter().cloned())
            .collect();
        Ok((chain_of(sources, compiled), inputs))
    }

    /// The configuration's own text, which the chain's identity includes.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Fills what the host did not send from the context sources, with the call's working
    /// directory taken from its arguments (`args.cwd`) or its context (`context.cwd`).
    pub fn complete(&self, call: &mut sluice_compiler::call::Call) {
        let cwd = [&call.args, &call.context]
            .into_iter()
            .find_map(|fields| fields.get("cwd").and_then(Json::as_str))
            .map(str::to_string);
        self.fill_context(&mut call.context, cwd.as_deref());
    }

    /// Each set compiled, with the files it was compiled from; the first error, in chain order.
    fn compile_sets(
        &self,
        sources: &[(SetSource, Scope)],
        backend: Backend,
    ) -> Result<Vec<CompiledSet>, ConfigError> {
        let loaded: Vec<Result<CompiledSet, ConfigError>> = std::thread::scope(|scope| {
            let workers: Vec<_> = sources
                .iter()
                .map(|(source, _)| scope.spawn(move || compile_set(source, backend)))
                .collect();
            workers
                .into_iter()
                .zip(sources)
                .map(|(worker, (source, _))| {
                    worker.join().unwrap_or_else(|_| {
                        Err(ConfigError::Unreadable(
                            source.name.clone(),
                            "compiling it panicked".into(),
                        ))
                    })
                })
                .collect()
        });
        loaded.into_iter().collect()
    }

    /// Fills the context fields the host did not send (absent or `null`) from their sources.
    /// `cwd` is the call's working directory, when the host knows it.
    pub fn fill_context(&self, context: &mut Json, cwd: Option<&str>) {
        let Json::Object(fields) = context else {
            return;
        };
        for (name, source) in &self.context {
            if fields.get(name).is_some_and(|v| !v.is_null()) {
                continue;
            }
            let value = match source {
                ContextSource::Value(value) => Some(value.clone()),
                ContextSource::From(Source::Project) => {
                    Some(Json::String(self.dir.display().to_string()))
                }
                ContextSource::From(Source::Home) => std::env::var("HOME").ok().map(Json::String),
                ContextSource::From(Source::Cwd) => cwd
                    .map(str::to_string)
                    .or_else(|| {
                        std::env::current_dir()
                            .ok()
                            .map(|d| d.display().to_string())
                    })
                    .map(Json::String),
                ContextSource::From(Source::Env(var)) => std::env::var(var).ok().map(Json::String),
            };
            if let Some(value) = value {
                fields.insert(name.clone(), value);
            }
        }
    }
}

/// Compiles one set; its errors come back with the texts they point into.
pub fn load_set(source: &SetSource, backend: Backend) -> Result<LoadedPolicy, ConfigError> {
    compile_set(source, backend).map(|(policy, _)| policy)
}

/// A compiled set, and the files (with their texts) it was compiled from.
type CompiledSet = (LoadedPolicy, Vec<(String, String)>);

/// The compiled sets as a chain, each at the scope its source names.
fn chain_of(sources: Vec<(SetSource, Scope)>, compiled: Vec<CompiledSet>) -> Chain {
    let mut chain = Chain::new();
    for ((_, scope), (policy, _)) in sources.into_iter().zip(compiled) {
        chain.push(scope, Arc::new(policy));
    }
    chain
}

/// Compiles one set, and says which files it was compiled from.
fn compile_set(source: &SetSource, backend: Backend) -> Result<CompiledSet, ConfigError> {
    let mut compiled = Database::default()
        .load(source)
        .map_err(|e| ConfigError::Unreadable(source.name.clone(), e.to_string()))?;
    let sources = compiled.sources.clone();
    let inputs = std::mem::take(&mut compiled.inputs);
    let policy = LoadedPolicy::from_compiled(compiled, backend).map_err(|error| match error {
        PolicyError::Compile { name, errors } => ConfigError::Invalid {
            summary: format!("policy set `{name}` does not compile"),
            diagnostics: errors,
            sources,
        },
        other => ConfigError::Unreadable(source.name.clone(), other.to_string()),
    })?;
    Ok((policy, inputs))
}

fn invalid(path: &str, text: &str, diagnostics: Vec<Diagnostic>) -> ConfigError {
    let mut sources = SourceMap::default();
    sources.insert(path, text);
    ConfigError::Invalid {
        summary: format!("`{path}` is not a valid configuration"),
        diagnostics,
        sources,
    }
}
