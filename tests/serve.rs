//! `sluice serve` against a real listening server: the binary on a loopback port, spoken to over
//! TCP (tests/support/server.rs), with curl for HTTP/2 and TLS, and Python as an agent would.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

#[path = "serve/api.rs"]
mod api;
#[path = "serve/clients.rs"]
mod clients;
#[path = "serve/limits.rs"]
mod limits;
#[path = "serve/ops.rs"]
mod ops;
#[path = "serve/security.rs"]
mod security;
#[path = "serve/sessions.rs"]
mod sessions;

use std::path::{Path, PathBuf};

use support::server::Server;

/// A project with the default configuration (`sluice init`), and more files.
pub fn project(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = support::temp_dir(&format!("serve-{name}"));
    let init = support::cli::sluice_in(&dir, &["init"], b"");
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    for (path, text) in files {
        write(&dir, path, text);
    }
    dir
}

pub fn write(dir: &Path, path: &str, text: &str) {
    let target = dir.join(path);
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::write(target, text).unwrap();
}

/// A server on the default configuration.
pub fn default_server(name: &str) -> (PathBuf, Server) {
    let dir = project(name, &[]);
    let server = Server::start(&dir, &[]);
    (dir, server)
}
