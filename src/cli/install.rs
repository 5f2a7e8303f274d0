//! `sluice init HARNESS [--global]` and `sluice init --check HARNESS`: the hook entries that make
//! an agent harness run `sluice hook`, merged into the harness's own settings file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Map, Value, json};
use sluice_compiler::jit::Backend;
use sluice_runtime::config::{Config, FILE_NAME};
use sluice_runtime::hooks::{Harness, shell_quote};

use super::CliError;

/// The harness's hook timeout, in seconds, and `sluice hook`'s own deadline, below it.
const HARNESS_TIMEOUT_S: u64 = 10;
const DEADLINE_MS: u64 = 5000;

/// Where the hook entries and the configuration go.
struct Place {
    settings: PathBuf,
    config: PathBuf,
}

fn home() -> Result<PathBuf, CliError> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| "HOME is not set".to_string())
}

fn place(harness: Harness, global: bool) -> Result<Place, CliError> {
    let here =
        std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
    let home = home()?;
    let config = if global {
        home.join(".config/sluice").join(FILE_NAME)
    } else {
        here.join(FILE_NAME)
    };
    let base = if global { home.clone() } else { here };
    let settings = match harness {
        Harness::Claude => base.join(".claude/settings.json"),
        // Codex reads hooks from its home only (`CODEX_HOME`, else `~/.codex`).
        Harness::Codex => std::env::var_os("CODEX_HOME")
            .map_or_else(|| home.join(".codex"), PathBuf::from)
            .join("hooks.json"),
        Harness::Gemini => base.join(".gemini/settings.json"),
        // Copilot reads a repository's `.github/hooks/`, and its user's hooks from its home
        // (`COPILOT_HOME`, else `~/.copilot`).
        Harness::Copilot if global => std::env::var_os("COPILOT_HOME")
            .map_or_else(|| home.join(".copilot"), PathBuf::from)
            .join("hooks/sluice.json"),
        Harness::Copilot => base.join(".github/hooks/sluice.json"),
    };
    Ok(Place { settings, config })
}

/// The command the harness runs: this binary, by its absolute path, and the configuration.
fn command(harness: Harness, config: &Path) -> Result<String, CliError> {
    let binary = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| format!("cannot find this binary's path: {e}"))?;
    Ok(format!(
        "{} hook {} --config {} --deadline-ms {DEADLINE_MS}",
        shell_quote(&binary.display().to_string()),
        harness.name(),
        shell_quote(&config.display().to_string())
    ))
}

/// The events the hook runs on, and the entry each gets, in the harness's settings shape.
fn entries(harness: Harness, command: &str) -> Vec<(&'static str, Value)> {
    match harness {
        Harness::Claude | Harness::Codex => ["PreToolUse", "PostToolUse"]
            .into_iter()
            .map(|event| {
                (
                    event,
                    json!({ "matcher": "*", "hooks": [{ "type": "command", "command": command, "timeout": HARNESS_TIMEOUT_S }] }),
                )
            })
            .collect(),
        Harness::Gemini => ["BeforeTool", "AfterTool"]
            .into_iter()
            .map(|event| {
                (
                    event,
                    json!({ "matcher": ".*", "hooks": [{ "type": "command", "name": "sluice", "command": command, "timeout": HARNESS_TIMEOUT_S * 1000 }] }),
                )
            })
            .collect(),
        Harness::Copilot => ["preToolUse", "postToolUse"]
            .into_iter()
            .map(|event| {
                (
                    event,
                    json!({ "type": "command", "bash": command, "timeoutSec": HARNESS_TIMEOUT_S }),
                )
            })
            .collect(),
    }
}

/// Whether a settings value already runs `sluice hook HARNESS` on `event`.
fn installed(settings: &Value, harness: Harness, event: &str) -> bool {
    let marker = format!(" hook {} ", harness.name());
    settings
        .get("hooks")
        .and_then(|h| h.get(event))
        .is_some_and(|list| list.to_string().contains(&marker))
}

pub fn install(harness: Harness, global: bool) -> Result<ExitCode, CliError> {
    let place = place(harness, global)?;
    if !place.config.exists() {
        if let Some(dir) = place.config.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        }
        std::fs::write(&place.config, super::init::STARTER)
            .map_err(|e| format!("cannot write `{}`: {e}", place.config.display()))?;
        outln!("wrote {}", place.config.display());
    }
    let command = command(harness, &place.config)?;
    let text = match std::fs::read_to_string(&place.settings) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read `{}`: {e}", place.settings.display())),
    };
    let mut settings: Value = match &text {
        Some(text) if !text.trim().is_empty() => serde_json::from_str(text).map_err(|e| {
            format!(
                "`{}` is not JSON ({e}): fix it, then run this again",
                place.settings.display()
            )
        })?,
        _ => Value::Object(Map::new()),
    };
    let Some(root) = settings.as_object_mut() else {
        return Err(format!(
            "`{}` is not a JSON object",
            place.settings.display()
        ));
    };
    if harness == Harness::Copilot {
        root.entry("version").or_insert(json!(1));
    }
    let mut changed = false;
    let pending: Vec<(&str, Value)> = entries(harness, &command)
        .into_iter()
        .filter(|(event, _)| !installed(&Value::Object(root.clone()), harness, event))
        .collect();
    if !pending.is_empty() {
        let hooks = root.entry("hooks").or_insert_with(|| json!({}));
        let Some(hooks) = hooks.as_object_mut() else {
            return Err(format!(
                "`hooks` in `{}` is not an object",
                place.settings.display()
            ));
        };
        for (event, entry) in pending {
            let list = hooks.entry(event).or_insert_with(|| json!([]));
            let Some(list) = list.as_array_mut() else {
                return Err(format!(
                    "`hooks.{event}` in `{}` is not a list",
                    place.settings.display()
                ));
            };
            list.push(entry);
            changed = true;
        }
    }
    if harness == Harness::Gemini {
        let config = root.entry("hooksConfig").or_insert_with(|| json!({}));
        if let Some(config) = config.as_object_mut()
            && config.get("enabled") != Some(&json!(true))
        {
            config.insert("enabled".into(), json!(true));
            changed = true;
        }
    }
    if changed {
        if let Some(dir) = place.settings.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        }
        let mut out = serde_json::to_string_pretty(&settings).map_err(|e| e.to_string())?;
        out.push('\n');
        std::fs::write(&place.settings, out)
            .map_err(|e| format!("cannot write `{}`: {e}", place.settings.display()))?;
        outln!(
            "installed the {} hook in {}",
            harness.name(),
            place.settings.display()
        );
    } else {
        outln!(
            "the {} hook is already installed in {}",
            harness.name(),
            place.settings.display()
        );
    }
    if harness == Harness::Codex {
        outln!("Codex runs a new hook only once you trust it: review it with `/hooks` in Codex");
    }
    outln!("check it with `sluice init --check {}`", harness.name());
    Ok(ExitCode::SUCCESS)
}

/// Says what is installed for `harness` and whether it would work.
pub fn check(harness: Harness, global: bool) -> Result<ExitCode, CliError> {
    let place = place(harness, global)?;
    let mut ok = true;
    let settings = std::fs::read_to_string(&place.settings)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok());
    let events: Vec<&str> = entries(harness, "").into_iter().map(|(e, _)| e).collect();
    match &settings {
        None => {
            ok = false;
            outln!(
                "hook:    not installed ({} is missing or not JSON); run `sluice init {}`",
                place.settings.display(),
                harness.name()
            );
        }
        Some(settings) => {
            for event in &events {
                let here = installed(settings, harness, event);
                ok &= here;
                outln!(
                    "hook:    {event} {} in {}",
                    if here { "installed" } else { "MISSING" },
                    place.settings.display()
                );
            }
            let binary = hook_binary(settings, harness);
            match binary {
                Some(binary) if Path::new(&binary).is_file() => outln!("binary:  {binary}"),
                Some(binary) => {
                    ok = false;
                    outln!(
                        "binary:  {binary} does not exist: run `sluice init {}` again",
                        harness.name()
                    );
                }
                None => {}
            }
        }
    }
    match Config::load(&place.config) {
        Err(error) => {
            ok = false;
            outln!("config:  {}: {error}", place.config.display());
        }
        Ok(config) => match config.chain(Backend::Interp) {
            Err(error) => {
                ok = false;
                outln!(
                    "config:  {} does not compile: {error} (every call would be blocked)",
                    place.config.display()
                );
            }
            Ok(chain) => {
                outln!(
                    "config:  {} ({} policy sets)",
                    place.config.display(),
                    chain.links().len()
                );
                outln!("policy:  hash {:016x}", policy_hash(&config));
            }
        },
    }
    outln!("{}", if ok { "ready" } else { "not ready" });
    Ok(super::exit(ok))
}

/// The binary the installed hook command runs.
fn hook_binary(settings: &Value, harness: Harness) -> Option<String> {
    let marker = format!(" hook {} ", harness.name());
    let text = settings.get("hooks")?.to_string();
    let at = text.find(&marker)?;
    let before = text.get(..at)?;
    let start = before.rfind('"')? + 1;
    Some(before.get(start..)?.trim_matches('\'').to_string())
}

/// A hash of everything the chain is compiled from: the configuration and every set's sources.
fn policy_hash(config: &Config) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    env!("CARGO_PKG_VERSION").hash(&mut hasher);
    env!("SLUICE_COMMIT").hash(&mut hasher);
    config.path.display().to_string().hash(&mut hasher);
    if let Ok(text) = std::fs::read_to_string(&config.path) {
        text.hash(&mut hasher);
    }
    if let Ok(sources) = config.set_sources() {
        for (source, _) in sources {
            source.name.hash(&mut hasher);
            for path in &source.files {
                path.hash(&mut hasher);
                if let Ok(text) = sluice_compiler::load::read_text(path) {
                    text.hash(&mut hasher);
                }
            }
        }
    }
    hasher.finish()
}
