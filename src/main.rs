//! The `sluice` command line: check, test, evaluate and format policy scripts.

mod cli;

use std::process::ExitCode;

use clap::Parser;

// A decision makes and frees many small values (parts, paths, strings): mimalloc runs a
// decision in about 15 % fewer instructions than glibc's malloc (README, "Speed of decisions").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    if let Some(hook) = cli::HookCli::parse_if_hook() {
        return cli::run_hook(hook);
    }
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}
