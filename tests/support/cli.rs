//! The real `sluice` binary, as the command-line tests run it: arguments, bytes on stdin, and
//! the whole output back. The harness's project variables are cleared, so a test run from inside
//! an agent finds only the configuration the test gives, and the compiled-policy cache is one of
//! the test run's own, not the user's.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `sluice ARGS` in the test's working directory.
pub fn sluice(args: &[&str], stdin: &[u8]) -> Output {
    run(None, args, stdin)
}

/// `sluice ARGS` in `dir`.
pub fn sluice_in(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    run(Some(dir), args, stdin)
}

/// `sluice ARGS` in `dir`, with its compiled-policy cache in `cache`.
#[allow(dead_code)] // not every test binary looks into the cache
pub fn sluice_cached(dir: &Path, cache: &Path, args: &[&str], stdin: &[u8]) -> Output {
    run_with(Some(dir), cache, args, stdin)
}

fn run(dir: Option<&Path>, args: &[&str], stdin: &[u8]) -> Output {
    let cache = std::env::temp_dir().join(format!("sluice-test-cache-{}", std::process::id()));
    run_with(dir, &cache, args, stdin)
}

fn run_with(dir: Option<&Path>, cache: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sluice"));
    command
        .args(args)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("GEMINI_PROJECT_DIR")
        .env("SLUICE_CACHE_DIR", cache)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let mut child = command.spawn().expect("sluice runs");
    let mut pipe = child.stdin.take().expect("stdin");
    // sluice may answer, or refuse a long input, without reading all of it: a closed pipe is fine.
    match pipe.write_all(stdin) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => panic!("stdin: {error}"),
        _ => {}
    }
    drop(pipe);
    child.wait_with_output().expect("sluice finishes")
}
