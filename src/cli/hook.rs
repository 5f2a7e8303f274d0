//! `sluice hook HARNESS`: one hook event on stdin, the chain's answer in the harness's contract.
//!
//! Every harness runs the tool when a hook crashes, hangs or prints garbage, so this command
//! never does any of those: whatever goes wrong (no configuration, a policy that does not
//! compile, an unreadable event, a panic, a stall past the deadline) becomes the harness's
//! block, with the reason.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime};

use sluice_compiler::jit::Backend;
use sluice_http::LogEntry;
use sluice_runtime::chain::Chain;
use sluice_runtime::config::{Config, ConfigError, PolicyCache, Stages, policy_hash, text_hash};
use sluice_runtime::hooks::{self, Answered, Harness, Host, Phase, Reply};
use sluice_runtime::session::approvals::Approvals;
use sluice_runtime::session::{FileStore, SessionStore};

/// The largest event read: a tool's whole output can be in it.
const MAX_EVENT: u64 = 16 * 1024 * 1024;

pub struct HookArgs {
    pub harness: Harness,
    pub config: Option<PathBuf>,
    pub deadline: Duration,
    pub backend: Backend,
    /// Whether the chain may come from the compiled-policy cache.
    pub cache: bool,
    /// Where to append a decision log line for each call judged before it runs.
    pub log: Option<PathBuf>,
}

pub fn run(args: HookArgs) -> ExitCode {
    let harness = args.harness;
    // A panic's message goes into the block's reason, not onto stderr before it.
    std::panic::set_hook(Box::new(|_| {}));
    // The decision is made on this thread, and a watchdog answers for it at the deadline. The
    // other way round, every allocation of the decision would grow a thread's own malloc arena
    // (a system call and page faults a few KiB at a time: a tenth of a hook call).
    let answered = Arc::new(AtomicBool::new(false));
    let (done, finished) = mpsc::channel::<()>();
    let watchdog = {
        let answered = Arc::clone(&answered);
        let deadline = args.deadline;
        std::thread::Builder::new()
            .name("hook deadline".into())
            .spawn(move || {
                if let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(deadline)
                    && !answered.swap(true, Ordering::SeqCst)
                {
                    let reason = format!(
                        "sluice: no decision within {} ms, so the call is blocked",
                        deadline.as_millis()
                    );
                    let reply = hooks::block(harness, None, &reason);
                    write(&reply);
                    std::process::exit(i32::from(reply.exit));
                }
            })
    };
    if let Err(error) = watchdog {
        let reason = format!("sluice: cannot start the deadline: {error}");
        return emit(&hooks::block(harness, None, &reason));
    }
    let reply = std::panic::catch_unwind(|| respond(&args)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".into());
        hooks::block(harness, None, &format!("sluice: internal error ({what})"))
    });
    if answered.swap(true, Ordering::SeqCst) {
        // The watchdog answered first and is ending the process.
        loop {
            std::thread::park();
        }
    }
    let _ = done.send(());
    emit(&reply)
}

fn respond(args: &HookArgs) -> Reply {
    let input = match read_event() {
        Ok(input) => input,
        Err(reason) => return hooks::block(args.harness, None, &format!("sluice: {reason}")),
    };
    let host = Host {
        project_dir: project_dir(),
        home: std::env::var("HOME").ok(),
    };
    // A missing or broken configuration is the first thing to say: it blocks every event.
    let config = match discover(args, host.project_dir.as_deref()) {
        Ok(config) => config,
        Err(reason) => return hooks::block(args.harness, None, &format!("sluice: {reason}")),
    };
    let event = match hooks::read_event(args.harness, &input, &host) {
        Ok(event) => event,
        Err(error) => return hooks::block(args.harness, None, &format!("sluice: {error}")),
    };
    // An event judges a call before it runs or its output after: only the sets with rules
    // for that stage are read back from the cache.
    let stages = match event.phase {
        Phase::Pre | Phase::Permission => Stages::BeforeRun,
        Phase::Post => Stages::AfterRun,
    };
    match load(args, config, stages) {
        Ok((chain, config, hash)) => {
            let started = Instant::now();
            // Labels outlive the process: each event of a session is a hook process of its own.
            let state = FileStore::default_dir();
            let store = state.clone().map(FileStore::new);
            let answered = hooks::answer_event(
                &event,
                &chain,
                Some(&config),
                store.as_ref().map(|s| s as &dyn SessionStore),
            );
            if let Some(dir) = state
                && let Err(error) = note_approvals(&Approvals::new(dir), &answered)
            {
                eprintln!("sluice: cannot note the call for `sluice allow --last`: {error}");
            }
            if let Some(path) = &args.log {
                let hash = hash.as_deref().unwrap_or_default();
                if let Err(error) = log_decisions(path, args.harness, &answered, hash, started) {
                    eprintln!(
                        "sluice: cannot write the decision log {}: {error}",
                        path.display()
                    );
                }
            }
            let reply = answered.reply;
            // The process ends with this answer: freeing the chain, a tenth of a call's time,
            // would only delay it.
            std::mem::forget(chain);
            reply
        }
        Err(reason) => hooks::block(args.harness, None, &format!("sluice: {reason}")),
    }
}

fn read_event() -> Result<String, String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_EVENT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the hook event: {e}"))?;
    if bytes.len() as u64 > MAX_EVENT {
        return Err(format!(
            "the hook event is larger than {} MiB, too large to check",
            MAX_EVENT / 1024 / 1024
        ));
    }
    String::from_utf8(bytes).map_err(|_| "the hook event is not valid UTF-8".into())
}

/// What `sluice allow --last` proposes from: the calls this event asked a person about, or,
/// after a call ran, that it was one of them (so the person approved it).
fn note_approvals(approvals: &Approvals, answered: &Answered) -> std::io::Result<()> {
    let Some(session) = answered
        .calls
        .first()
        .and_then(|call| call.context.get("session_id"))
        .and_then(|id| id.as_str())
    else {
        return Ok(());
    };
    if answered.outcomes.is_empty() {
        // After the tool ran: the event stands for one call.
        if let Some(call) = answered.calls.first() {
            approvals.ran(session, call)?;
        }
        return Ok(());
    }
    let asked: Vec<_> = answered
        .calls
        .iter()
        .zip(&answered.outcomes)
        .filter(|(_, outcome)| outcome.decision == sluice_compiler::decision::Decision::Ask)
        .map(|(call, _)| call.clone())
        .collect();
    if asked.is_empty() {
        return Ok(());
    }
    approvals.asked(session, &asked)
}

/// The project the harness names, else the working directory it ran the hook in.
fn project_dir() -> Option<String> {
    ["CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"]
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|v| !v.is_empty()))
}

/// Appends one decision log line per judged call, in the shape `sluice serve` writes and
/// `sluice replay` reads. The lines go out in one write under the file's lock, so hooks of
/// calls the harness runs in parallel do not interleave.
fn log_decisions(
    path: &Path,
    harness: Harness,
    answered: &Answered,
    hash: &str,
    started: Instant,
) -> std::io::Result<()> {
    if answered.outcomes.is_empty() {
        return Ok(());
    }
    let stamp = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut lines = String::new();
    for (index, decided) in answered.calls.iter().zip(&answered.outcomes).enumerate() {
        let id = format!("{stamp:x}-{:x}-{index}", std::process::id());
        let input = sluice_http::logged_input(decided.0);
        let entry = LogEntry::decided(
            &id,
            harness.endpoint(),
            decided,
            hash,
            started.elapsed(),
            input,
        );
        lines.push_str(&serde_json::to_string(&entry).map_err(std::io::Error::other)?);
        lines.push('\n');
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.lock()?;
    file.write_all(lines.as_bytes())
}

fn discover(args: &HookArgs, project: Option<&str>) -> Result<Config, String> {
    let start = match project {
        Some(dir) => PathBuf::from(dir),
        None => std::env::current_dir()
            .map_err(|e| format!("cannot read the working directory: {e}"))?,
    };
    Config::discover(args.config.as_deref(), &start).map_err(summary)
}

fn load(
    args: &HookArgs,
    config: Config,
    stages: Stages,
) -> Result<(Chain, Config, Option<String>), String> {
    // The cache holds programs for the interpreter; native code is compiled afresh.
    let cache = match args.cache && args.backend == Backend::Interp {
        true => PolicyCache::for_user(),
        false => None,
    };
    // The policy hash is computed only for a decision log.
    let chain = match (cache, args.log.is_some()) {
        (Some(cache), _) => cache
            .chain_for(&config, stages)
            .map(|(chain, _, hash)| (chain, Some(hash))),
        (None, true) => config
            .chain_and_inputs(args.backend)
            .map(|(chain, inputs)| {
                let inputs = inputs
                    .iter()
                    .map(|(file, text)| (file.as_str(), text_hash(text.as_bytes())));
                let hash = policy_hash(&config, inputs);
                (chain, Some(hash))
            }),
        (None, false) => config.chain(args.backend).map(|chain| (chain, None)),
    };
    let (chain, hash) = chain.map_err(summary)?;
    Ok((chain, config, hash))
}

/// A configuration error as one line: what failed, and the first thing wrong with it.
fn summary(error: ConfigError) -> String {
    match &error {
        ConfigError::Invalid {
            diagnostics,
            sources,
            ..
        } => match diagnostics.first() {
            Some(first) => {
                let (line, _) =
                    sources.line_col(&first.primary.file, first.primary.span.start as usize);
                format!(
                    "{error}: {}:{line}: {} [{}]; until it is fixed every call is blocked",
                    first.primary.file,
                    first.message,
                    first.code.info().id.trim_start_matches("sluice::")
                )
            }
            None => error.to_string(),
        },
        _ => format!("{error}; until then every call is blocked"),
    }
}

fn emit(reply: &Reply) -> ExitCode {
    write(reply);
    ExitCode::from(reply.exit)
}

fn write(reply: &Reply) {
    // A closed pipe cannot be answered; the exit status still carries a block.
    if !reply.stdout.is_empty() {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", reply.stdout).and_then(|()| out.flush());
    }
    if !reply.stderr.is_empty() {
        let _ = writeln!(std::io::stderr().lock(), "{}", reply.stderr);
    }
}
