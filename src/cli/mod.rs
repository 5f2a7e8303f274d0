//! Command-line arguments and dispatch.

#[macro_use]
mod output;

mod check;
mod compile;
mod eval;
mod explain;
mod fmt;
mod lsp;
mod report;
mod test;
mod watch;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "sluice",
    version,
    about = "Check, test and evaluate Sluice policies for AI agents' tool calls"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
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
        #[arg(default_value = ".")]
        paths: Vec<PathBuf>,
        /// Test again whenever a policy file changes
        #[arg(long)]
        watch: bool,
        #[arg(long, value_enum, default_value_t = BackendArg::Jit)]
        backend: BackendArg,
    },
    /// Evaluate calls (JSON) against one policy set and print the outcome as JSON
    Eval {
        /// The policy set: files or one directory
        #[arg(long, required = true, num_args = 1..)]
        policy: Vec<PathBuf>,
        /// A file holding the call, or `-` for standard input
        #[arg(long, default_value = "-")]
        call: String,
        /// Read one call per line and write one outcome per line
        #[arg(long)]
        jsonl: bool,
        /// Explain the decision: the deciding rule, its source and its sub-conditions' values
        #[arg(long, conflicts_with = "jsonl")]
        explain: bool,
        #[arg(long, value_enum, default_value_t = BackendArg::Jit)]
        backend: BackendArg,
    },
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
            watch,
            backend,
        } => test::run(&paths, watch, backend.into()),
        Command::Eval {
            policy,
            call,
            jsonl,
            explain,
            backend,
        } => eval::run(&policy, &call, jsonl, explain, backend.into()),
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
