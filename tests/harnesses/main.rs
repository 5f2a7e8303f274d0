//! The hooks against the real agent harnesses: Claude Code, Codex CLI, Gemini CLI and Copilot
//! CLI, installed pinned from the npm registry (`.ci/run` installs them), each driven by a
//! scripted fake model on 127.0.0.1 so that it really runs `sluice hook` around a real tool.
//!
//! The harnesses live in `$SLUICE_HARNESSES/node_modules` (by default
//! `~/.cache/sluice-harnesses`). Where one is missing the test says so and passes, except under
//! CI (`CI` set), where a missing harness fails.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod claude;
mod codex;
mod copilot;
mod fake_model;
mod gemini;
mod init;
mod mcp;
mod scenarios;
mod served;
#[path = "../support/server.rs"]
#[allow(dead_code)] // the harness tests start servers and post nothing themselves
mod server;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Where the harness's binary is, or `None` (with a note) when it is not installed here.
pub fn harness_binary(relative: &str) -> Option<PathBuf> {
    let root = std::env::var_os("SLUICE_HARNESSES").map_or_else(
        || {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/sluice-harnesses")
        },
        PathBuf::from,
    );
    let binary = root.join("node_modules").join(relative);
    if binary.exists() {
        return Some(binary);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{} is not installed: `.ci/run` installs the harnesses",
            binary.display()
        );
    }
    eprintln!(
        "skipped: {} is not installed (see .ci/run)",
        binary.display()
    );
    None
}

/// A project directory for one run: the config, a home of its own, and the hook's log.
pub struct Project {
    _dir: tempfile_dir::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub log: PathBuf,
}

impl Project {
    pub fn new(name: &str) -> Project {
        let dir = tempfile_dir::TempDir::new(name);
        let root = dir.path().join("project");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let log = dir.path().join("hook.log");
        let project = Project {
            root,
            home,
            log,
            _dir: dir,
        };
        // The chain `sluice init` writes: every set it configures, as a new user has it.
        let init = Command::new(env!("CARGO_BIN_EXE_sluice"))
            .arg("init")
            .current_dir(&project.root)
            .output()
            .unwrap();
        assert!(init.status.success(), "{}", text(&init));
        project
    }

    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn config(&self) -> PathBuf {
        self.root.join("sluice.toml")
    }

    /// The hook command a harness runs: `sluice hook HARNESS`, with each answer logged.
    pub fn hook_command(&self, harness: &str, extra: &str) -> String {
        format!(
            "out=$('{bin}' hook {harness} --config '{config}' {extra}); status=$?; printf '%s\\n' \"$out\" >> '{log}'; printf '%s' \"$out\"; exit $status",
            bin = env!("CARGO_BIN_EXE_sluice"),
            config = self.config().display(),
            log = self.log.display(),
        )
    }

    /// Every answer the hook gave, in order.
    pub fn answers(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A file the scripted command would destroy: it must outlive the run.
    pub fn victim(&self) -> PathBuf {
        self.write("important/keep.txt", "precious\n");
        self.root.join("important")
    }
}

/// The AWS example key: the secrets set must keep it from the model.
pub const SECRET: &str = "AKIAIOSFODNN7EXAMPLE";

/// Runs a harness to completion (or kills it after two minutes).
pub fn run(command: &mut Command) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

pub fn text(output: &Output) -> String {
    format!(
        "status: {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A policy file that never finishes opening (a FIFO no one writes): loading it hangs, as a
/// stalled network mount would, so only the hook's own deadline can answer.
pub fn hanging_policy(project: &Project) -> PathBuf {
    let path = project.root.join("stalled.sluice");
    let status = Command::new("mkfifo").arg(&path).status().unwrap();
    assert!(status.success());
    path
}

/// The configuration `sluice init` wrote for the project.
fn starter(project: &Project) -> String {
    std::fs::read_to_string(project.config()).unwrap()
}

pub fn broken_config(project: &Project) {
    project.write(
        "mine.sluice",
        "policy mine \"a typo\"\nprecheck r on bash when args.command == \"x\" => deney \"no\"\n",
    );
    project.write(
        "sluice.toml",
        &format!("{}\n[[policy]]\nset = \"mine.sluice\"\n", starter(project)),
    );
}

pub fn hanging_config(project: &Project) {
    hanging_policy(project);
    project.write(
        "sluice.toml",
        &format!(
            "{}\n[[policy]]\nset = \"stalled.sluice\"\n",
            starter(project)
        ),
    );
}

/// Temporary directories, removed when the test ends.
mod tempfile_dir {
    use std::path::{Path, PathBuf};

    pub struct TempDir(PathBuf);

    impl TempDir {
        pub fn new(name: &str) -> TempDir {
            let base = std::env::temp_dir().join(format!(
                "sluice-harness-{name}-{}-{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos()
            ));
            std::fs::create_dir_all(&base).unwrap();
            TempDir(base)
        }

        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
