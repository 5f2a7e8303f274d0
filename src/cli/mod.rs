//! Command-line arguments and dispatch.

#[macro_use]
mod output;

mod allow;
mod chain;
mod check;
mod compile;
mod eval;
mod explain;
mod fmt;
mod hook;
mod init;
mod install;
mod lsp;
mod mcp;
mod replay;
mod report;
mod rules;
mod serve;
mod shell;
mod test;
mod watch;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use sluice_compiler::shell::Dirs;

#[derive(Debug, Parser)]
#[command(
    name = "sluice",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("SLUICE_COMMIT"), ")"),
    about = "Check, test and evaluate Sluice policies for AI agents' tool calls"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `sluice hook …` alone. A hook is one process per tool call, and building the parser of every
/// subcommand was a twentieth of one; the help and errors are the same as the full parser's.
#[derive(Debug, Parser)]
#[command(name = "sluice")]
pub struct HookCli {
    #[command(subcommand)]
    command: HookCommand,
}

#[derive(Debug, Subcommand)]
enum HookCommand {
    Hook(HookOptions),
}

/// Answer one agent harness hook event (JSON on stdin) in that harness's contract
///
/// Whatever goes wrong, the answer is the harness's block, never a crash or a hang.
#[derive(Debug, clap::Args)]
pub struct HookOptions {
    #[arg(value_enum)]
    harness: HarnessArg,
    /// The configuration; by default the nearest `sluice.toml` from the project directory
    #[arg(long)]
    config: Option<PathBuf>,
    /// Block the call if no decision is made within this many milliseconds; keep it below
    /// the harness's own hook timeout, after which the harness runs the tool
    #[arg(long, default_value_t = 5000)]
    deadline_ms: u64,
    #[arg(long, value_enum, default_value_t = BackendArg::Interp)]
    backend: BackendArg,
    /// Compile the chain on every call instead of reading it from the compiled-policy
    /// cache (`$SLUICE_CACHE_DIR`, else `~/.cache/sluice`); the JIT never uses the cache
    #[arg(long)]
    no_cache: bool,
    /// Append a decision log line (as `sluice serve` writes them, for `sluice replay`) for
    /// each call judged before it runs
    #[arg(long)]
    log: Option<PathBuf>,
}

/// Runs `sluice hook`, parsed by either parser.
pub fn run_hook(options: HookOptions) -> ExitCode {
    let HookOptions {
        harness,
        config,
        deadline_ms,
        backend,
        no_cache,
        log,
    } = options;
    hook::run(hook::HookArgs {
        harness: harness.into(),
        config,
        deadline: std::time::Duration::from_millis(deadline_ms),
        backend: backend.into(),
        cache: !no_cache,
        log,
    })
}

impl HookCli {
    /// The hook's options, when the command line is `sluice hook …`; parsing it exits as clap
    /// does on `--help` or an error.
    pub fn parse_if_hook() -> Option<HookOptions> {
        if std::env::args_os()
            .nth(1)
            .is_none_or(|first| first != "hook")
        {
            return None;
        }
        let HookCommand::Hook(options) = HookCli::parse().command;
        Some(options)
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Parse, check and lint policy sets
    Check {
        /// Policy files or directories (a directory of files is one policy set)
        #[arg(default_value = ".")]
        paths: Vec<PathBuf>,
        /// Treat warnings as errors
        #[arg(long)]
        deny_warnings: bool,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Check again whenever a policy file changes
        #[arg(long)]
        watch: bool,
    },
    /// Run the policies' examples and test blocks
    Test {
        /// Policy files, directories or built-in sets (`builtin:git-guard`)
        #[arg(default_value = ".")]
        paths: Vec<PathBuf>,
        /// More policy sets, after the paths (as `eval --policy` names them)
        #[arg(long, num_args = 1..)]
        policy: Vec<PathBuf>,
        /// Test the sets of this configuration instead
        #[arg(long, conflicts_with = "policy")]
        config: Option<PathBuf>,
        /// Test again whenever a policy file changes
        #[arg(long)]
        watch: bool,
        #[arg(long, value_enum, default_value_t = BackendArg::Jit)]
        backend: BackendArg,
    },
    /// Propose a rule that allows a call that was asked about, and write it only when no test,
    /// rule example or logged denial would be allowed because of it
    ///
    /// The rule goes to a set of your own (`.sluice/allowed.sluice` beside the configuration),
    /// listed first in the chain. Exit status: 0 written (or nothing to do), 1 refused because
    /// something would flip, 2 on an error.
    Allow {
        /// The call, as `sluice eval` reads it
        #[arg(long, required_unless_present = "last", conflicts_with = "last")]
        from: Option<PathBuf>,
        /// The latest call a person approved after the chain asked about it, as the hooks noted
        /// it (of every session, or of `--session`)
        #[arg(long)]
        last: bool,
        /// With `--last`: the harness's session id
        #[arg(long, requires = "last")]
        session: Option<String>,
        /// Reach past the call itself: every command with its first two words, every path in its
        /// directory, or every address on its host
        #[arg(long, value_enum)]
        broaden: Option<allow::Broaden>,
        /// The configuration (default: the nearest `sluice.toml` from here up)
        #[arg(long)]
        config: Option<PathBuf>,
        /// A decision log whose denied and asked calls must stay so
        #[arg(long)]
        log: Option<PathBuf>,
        /// The set to write to (default: `.sluice/allowed.sluice` beside the configuration)
        #[arg(long)]
        set: Option<PathBuf>,
        /// Check the proposal and write nothing
        #[arg(long)]
        dry_run: bool,
    },
    /// Decide recorded calls again under an edited configuration and show what changed
    ///
    /// Exit status: 0 when every call decides as before, 1 when some call changed, 2 on an
    /// unreadable log or a configuration that does not compile.
    Replay {
        /// The decision log of `sluice serve`, `sluice mcp` or `sluice hook --log`, or calls
        /// as `sluice eval` reads them, one JSON object a line
        #[arg(long)]
        log: PathBuf,
        /// The configuration the calls were decided under (with `--revisions`, the
        /// configuration's path in the repository)
        #[arg(long, default_value = "sluice.toml")]
        config: PathBuf,
        /// The edited configuration
        #[arg(long, required_unless_present = "revisions")]
        against: Option<PathBuf>,
        /// The configuration at two git revisions, `OLD..NEW` (`OLD..` for the working tree)
        #[arg(long, conflicts_with = "against")]
        revisions: Option<String>,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        #[arg(long, value_enum, default_value_t = BackendArg::Jit)]
        backend: BackendArg,
    },
    /// Judge calls (JSON) with a chain of policy sets and print the outcome as JSON
    Eval {
        /// Policy sets in chain order: files, directories or built-in sets (`builtin:git-guard`);
        /// without it, the sets of the configuration
        #[arg(long, num_args = 1..)]
        policy: Vec<PathBuf>,
        /// The configuration (default: the nearest `sluice.toml` from here up)
        #[arg(long, conflicts_with = "policy")]
        config: Option<PathBuf>,
        /// A file holding the call, or `-` for standard input
        #[arg(long, default_value = "-")]
        call: String,
        /// Judge a `bash` call running this command line
        #[arg(long, conflicts_with_all = ["call", "jsonl"])]
        command: Option<String>,
        /// Set a context field (repeatable); a value that reads as JSON is that value
        #[arg(long = "context", value_name = "KEY=VALUE")]
        context: Vec<String>,
        /// The agent's id
        #[arg(long)]
        agent: Option<String>,
        /// Add a label to the agent (repeatable)
        #[arg(long = "label", value_name = "LABEL")]
        labels: Vec<String>,
        /// Read one call per line and write one outcome per line
        #[arg(long)]
        jsonl: bool,
        /// Explain the decision: each set's verdict, the deciding rule, its source and its
        /// sub-conditions' values
        #[arg(long, conflicts_with = "jsonl")]
        explain: bool,
        /// Exit 0 for allow or delegate, 3 for ask, 4 for deny (with `--jsonl`, the strictest)
        #[arg(long)]
        exit_code: bool,
        #[arg(long, value_enum, default_value_t = BackendArg::Jit)]
        backend: BackendArg,
    },
    /// Show what `shell(...)` sees of a command line: each part's argv, flags, paths, redirects,
    /// wrappers, effects, and why it is unresolved
    Shell {
        /// The command line
        line: String,
        /// The directory it runs in (paths are resolved against it)
        #[arg(long)]
        cwd: Option<String>,
        /// The home directory `~` and `$HOME` name (kept as `~` without it)
        #[arg(long)]
        home: Option<String>,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// List every rule with its kind, tools, effect, file and line
    Rules {
        /// Policy files, directories or built-in sets
        #[arg(default_value = ".")]
        paths: Vec<PathBuf>,
        /// List the rules of this configuration's sets instead
        #[arg(long)]
        config: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Print a completion script for a shell
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write a commented starter `sluice.toml` in the working directory
    Init {
        /// Install the hook for this agent harness: merge `sluice hook` into its settings, and
        /// write a starter `sluice.toml` if there is none
        #[arg(value_enum)]
        harness: Option<HarnessArg>,
        /// Replace an existing `sluice.toml`
        #[arg(long, conflicts_with = "harness")]
        force: bool,
        /// Install for every project of this user (`~/.claude`, `~/.gemini`, `~/.copilot/hooks`;
        /// `~/.config/sluice/sluice.toml`) instead of this one
        #[arg(long, requires = "harness")]
        global: bool,
        /// Say what is installed for the harness and whether it would work
        #[arg(long, requires = "harness")]
        check: bool,
    },
    Hook(HookOptions),
    /// Serve decisions over HTTP: the configuration's chain for agents in any language
    ///
    /// The API (decide, batch, post-check, the four harnesses' hooks, AuthZEN, health and
    /// metrics) is in lang-spec/serve.md. The configuration and its files are reloaded when
    /// they change or on SIGHUP; SIGTERM stops the server after open requests finish.
    Serve(serve::ServeArgs),
    /// Put the configuration's chain between an MCP client and an MCP server
    ///
    /// The host starts `sluice mcp -- SERVER ARGS…` where it would start the server. Every
    /// `tools/call` goes through the chain; everything else passes through (lang-spec/mcp.md).
    Mcp(mcp::McpArgs),
    /// Serve the Language Server Protocol over stdin and stdout, for editors
    Lsp,
    /// Show what the compiler makes of policy sets: the lowered IR, the Cranelift IR, or counts
    /// and compile times
    Compile {
        #[arg(default_value = ".")]
        paths: Vec<PathBuf>,
        #[arg(long, value_enum, default_value_t = Emit::Stats)]
        emit: Emit,
    },
    /// Print the page of a diagnostic code (`sluice explain E0007`): what it means, a policy
    /// that triggers it and the policy fixed
    Explain {
        /// A code such as `E0007` or `sluice::W0004`
        code: String,
    },
    /// Format policy files canonically, keeping comments
    Fmt {
        #[arg(default_value = ".")]
        paths: Vec<PathBuf>,
        /// Report files that are not formatted instead of rewriting them
        #[arg(long)]
        check: bool,
    },
}

/// Which engine evaluates conditions: native code from the JIT (the interpreter where the host
/// is unsupported), or the reference interpreter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    Jit,
    Interp,
}

impl From<BackendArg> for sluice_compiler::jit::Backend {
    fn from(arg: BackendArg) -> Self {
        match arg {
            BackendArg::Jit => sluice_compiler::jit::Backend::Jit,
            BackendArg::Interp => sluice_compiler::jit::Backend::Interp,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum HarnessArg {
    Claude,
    Codex,
    Gemini,
    Copilot,
}

impl From<HarnessArg> for sluice_runtime::hooks::Harness {
    fn from(arg: HarnessArg) -> Self {
        use sluice_runtime::hooks::Harness;
        match arg {
            HarnessArg::Claude => Harness::Claude,
            HarnessArg::Codex => Harness::Codex,
            HarnessArg::Gemini => Harness::Gemini,
            HarnessArg::Copilot => Harness::Copilot,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The lowered predicate IR, rule by rule
    Ir,
    /// The Cranelift IR of every compiled condition
    Clif,
    /// Rules, fields, regexes and sets per policy set, and compile times
    Stats,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

/// A failure that is not about the policies themselves (usage, I/O): exit code 2.
pub type CliError = String;

pub fn run(cli: Cli) -> Result<ExitCode, CliError> {
    match cli.command {
        Command::Check {
            paths,
            deny_warnings,
            format,
            watch,
        } => check::run(&paths, deny_warnings, format, watch),
        Command::Test {
            paths,
            policy,
            config,
            watch,
            backend,
        } => {
            let paths = match config {
                Some(path) => chain::config(Some(&path))?.set_paths(),
                // `--policy` alone names the sets; the default `.` applies only without it.
                None if !policy.is_empty() && paths == [PathBuf::from(".")] => policy,
                None => paths.into_iter().chain(policy).collect(),
            };
            test::run(&paths, watch, backend.into())
        }
        Command::Allow {
            from,
            last,
            session,
            broaden,
            config,
            log,
            set,
            dry_run,
        } => allow::run(&allow::AllowArgs {
            from: match (&from, last) {
                (Some(path), _) => allow::Source::File(path),
                (None, _) => allow::Source::LastApproved(session.as_deref()),
            },
            broaden,
            config: config.as_deref(),
            log: log.as_deref(),
            set: set.as_deref(),
            dry_run,
        }),
        Command::Replay {
            log,
            config,
            against,
            revisions,
            format,
            backend,
        } => replay::run(&replay::ReplayArgs {
            log: &log,
            config: &config,
            against: against.as_deref(),
            revisions: revisions.as_deref(),
            format,
            backend: backend.into(),
        }),
        Command::Eval {
            policy,
            config,
            call,
            command,
            context,
            agent,
            labels,
            jsonl,
            explain,
            exit_code,
            backend,
        } => eval::run(
            &chain::ChainArgs {
                policy: &policy,
                config: config.as_deref(),
                backend: backend.into(),
            },
            &eval::CallArgs {
                source: &call,
                command: command.as_deref(),
                context: &context,
                agent: agent.as_deref(),
                labels: &labels,
            },
            &eval::Output {
                jsonl,
                explain,
                exit_code,
            },
        ),
        Command::Init {
            harness: None,
            force,
            ..
        } => init::run(force),
        Command::Init {
            harness: Some(harness),
            global,
            check,
            ..
        } => {
            if check {
                install::check(harness.into(), global)
            } else {
                install::install(harness.into(), global)
            }
        }
        Command::Hook(options) => Ok(run_hook(options)),
        Command::Serve(args) => serve::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Shell {
            line,
            cwd,
            home,
            format,
        } => shell::run(
            &line,
            Dirs {
                cwd: cwd.as_deref(),
                home: home.as_deref(),
            },
            format,
        ),
        Command::Rules {
            paths,
            config,
            format,
        } => {
            let paths = match config {
                Some(path) => chain::config(Some(&path))?.set_paths(),
                None => paths,
            };
            rules::run(&paths, format)
        }
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut command = Cli::command();
            clap_complete::generate(shell, &mut command, "sluice", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Command::Compile { paths, emit } => compile::run(&paths, emit),
        Command::Lsp => lsp::run(),
        Command::Fmt { paths, check } => fmt::run(&paths, check),
        Command::Explain { code } => explain::run(&code),
    }
}

fn exit(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
