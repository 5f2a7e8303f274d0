//! The chain being served, and its replacement on reload.
//!
//! A request takes the chain that is current when it starts and keeps it to its end, so a swap
//! never changes a decision half-way; a reload that does not compile keeps the old chain.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use arc_swap::ArcSwap;
use serde::Serialize;

use sluice_compiler::jit::Backend;
use sluice_runtime::chain::Chain;
use sluice_runtime::config::{Config, ConfigError};

/// One compiled configuration.
pub struct Loaded {
    pub chain: Chain,
    pub config: Config,
    /// A hash of the configuration and every file its chain was compiled from: replicas that
    /// report the same hash decide alike.
    pub hash: String,
    pub loaded_at: SystemTime,
    /// The files and directories a change to which means a reload.
    pub watched: Vec<PathBuf>,
}

/// Why the last reload was refused.
#[derive(Clone, Debug, Serialize)]
pub struct ReloadFailure {
    #[serde(serialize_with = "rfc3339")]
    pub at: SystemTime,
    pub error: String,
    /// Each diagnostic as `FILE:LINE: MESSAGE [CODE]`.
    pub diagnostics: Vec<String>,
}

pub struct Engine {
    config_path: PathBuf,
    current: ArcSwap<Loaded>,
    last_failure: Mutex<Option<ReloadFailure>>,
}

impl Engine {
    /// Compiles the configuration at `path`; an error says what is wrong with it.
    pub fn start(path: PathBuf) -> Result<Engine, String> {
        let loaded = load(&path).map_err(|failure| {
            let mut text = failure.error;
            for line in failure.diagnostics {
                text.push_str("\n  ");
                text.push_str(&line);
            }
            text
        })?;
        Ok(Engine {
            config_path: path,
            current: ArcSwap::from_pointee(loaded),
            last_failure: Mutex::new(None),
        })
    }

    /// The chain as it is now: a request holds it to its end.
    pub fn current(&self) -> Arc<Loaded> {
        self.current.load_full()
    }

    /// Compiles the configuration again and swaps the chain in if it compiled and differs.
    /// `Ok(true)` when the chain changed.
    pub fn reload(&self) -> Result<bool, ReloadFailure> {
        match load(&self.config_path) {
            Ok(loaded) => {
                if let Ok(mut failure) = self.last_failure.lock() {
                    *failure = None;
                }
                if loaded.hash == self.current.load().hash {
                    return Ok(false);
                }
                self.current.store(Arc::new(loaded));
                Ok(true)
            }
            Err(failure) => {
                if let Ok(mut last) = self.last_failure.lock() {
                    *last = Some(failure.clone());
                }
                Err(failure)
            }
        }
    }

    pub fn last_failure(&self) -> Option<ReloadFailure> {
        self.last_failure.lock().ok().and_then(|f| f.clone())
    }
}

fn load(path: &Path) -> Result<Loaded, ReloadFailure> {
    let failure = |error: ConfigError| ReloadFailure {
        at: SystemTime::now(),
        diagnostics: diagnostics(&error),
        error: error.to_string(),
    };
    let config = Config::load(path).map_err(failure)?;
    // A server lives long enough for native code to pay off.
    let (chain, inputs) = config.chain_and_inputs(Backend::Jit).map_err(failure)?;
    let hash = sluice_runtime::config::policy_hash(
        &config,
        inputs.iter().map(|(file, text)| {
            (
                file.as_str(),
                sluice_runtime::config::text_hash(text.as_bytes()),
            )
        }),
    );
    let mut watched = vec![config.path.clone()];
    let builtin = sluice_compiler::builtin::PREFIX;
    watched.extend(
        config
            .set_paths()
            .into_iter()
            .filter(|p| !p.to_string_lossy().starts_with(builtin)),
    );
    watched.extend(
        inputs
            .iter()
            .filter(|(file, _)| !file.starts_with(builtin))
            .map(|(file, _)| PathBuf::from(file)),
    );
    watched.sort();
    watched.dedup();
    Ok(Loaded {
        chain,
        config,
        hash,
        loaded_at: SystemTime::now(),
        watched,
    })
}

fn diagnostics(error: &ConfigError) -> Vec<String> {
    let ConfigError::Invalid {
        diagnostics,
        sources,
        ..
    } = error
    else {
        return Vec::new();
    };
    diagnostics
        .iter()
        .map(|d| {
            let (line, _) = sources.line_col(&d.primary.file, d.primary.span.start as usize);
            format!(
                "{}:{line}: {} [{}]",
                d.primary.file,
                d.message,
                d.code.info().id.trim_start_matches("sluice::")
            )
        })
        .collect()
}

pub fn rfc3339<S: serde::Serializer>(at: &SystemTime, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(&humantime::format_rfc3339_micros(*at))
}
