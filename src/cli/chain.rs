//! The chain a command judges calls with: the sets named with `--policy`, in the order named,
//! or else the project configuration (`--config`, or the nearest `sluice.toml`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sluice_compiler::jit::Backend;
use sluice_compiler::load::discover;
use sluice_runtime::chain::Chain;
use sluice_runtime::config::{Config, ConfigError, load_set};
use sluice_runtime::registry::Scope;

use super::CliError;
use super::report::human;

/// Where the chain comes from.
pub struct ChainArgs<'a> {
    pub policy: &'a [PathBuf],
    pub config: Option<&'a Path>,
    pub backend: Backend,
}

/// The chain, and the configuration it came from (which fills context), if any.
pub fn load(args: &ChainArgs<'_>) -> Result<(Chain, Option<Config>), CliError> {
    if !args.policy.is_empty() {
        let mut chain = Chain::new();
        for path in args.policy {
            for source in discover(std::slice::from_ref(path)).map_err(|e| e.to_string())? {
                let policy = load_set(&source, args.backend).map_err(report)?;
                chain.push(Scope::Global, Arc::new(policy));
            }
        }
        return Ok((chain, None));
    }
    let config = config(args.config)?;
    let chain = config.chain(args.backend).map_err(report)?;
    Ok((chain, Some(config)))
}

/// The configuration `--config` names, or the nearest one.
pub fn config(explicit: Option<&Path>) -> Result<Config, CliError> {
    let here =
        std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
    Config::discover(explicit, &here).map_err(|error| match error {
        ConfigError::NotFound(_) => format!("{error}; or name policy sets with `--policy`"),
        other => report(other),
    })
}

/// Prints a configuration's or a set's diagnostics and says what failed.
pub fn report(error: ConfigError) -> CliError {
    if let ConfigError::Invalid {
        diagnostics,
        sources,
        ..
    } = &error
    {
        eprintln!("{}", human(diagnostics, sources));
    }
    error.to_string()
}
