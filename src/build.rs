//! Stamps the commit the binary was built from into `sluice --version`, and links the binary
//! for a fast start.

fn main() {
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown commit".to_string());
    println!("cargo:rustc-env=SLUICE_COMMIT={commit}");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=src/build.rs");
    println!("cargo:rerun-if-changed=.git/refs/heads");
    // A hook is one process per tool call. Linked position-independent, the binary's start
    // spent about a millisecond relocating some 50,000 pointers and copying the pages that
    // hold them; linked at a fixed address it has none to relocate. Its libraries, heap and
    // stacks are still placed at random.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
