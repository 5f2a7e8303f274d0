#!/usr/bin/env bash
# Builds the two peer guards into a cache, once: safe-chains as shipped, and dcg 0.16.0 from
# its unpacked crate (a crate its lock file names is gone from the Rust registry and a newer
# dependency needs a newer rustc, so webpki-roots is pinned back and its nightly toolchain files
# are removed). Sourced by tests/harnesses/bench.sh and tests/shell_suite/compare.sh; sets
# PEERS, DCG and SAFE_CHAINS.
PEERS="${SLUICE_PEERS:-$HOME/.cache/sluice-peers}"
mkdir -p "$PEERS"

SAFE_CHAINS="$PEERS/safe-chains/bin/safe-chains"
if [ ! -x "$SAFE_CHAINS" ]; then
  cargo install safe-chains --locked --root "$PEERS/safe-chains"
fi

DCG="$PEERS/dcg/target/release/dcg"
if [ ! -x "$DCG" ]; then
  work="$PEERS/fetch"
  mkdir -p "$work/src"
  printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\ndestructive_command_guard = "=0.16.0"\n' >"$work/Cargo.toml"
  : >"$work/src/lib.rs"
  (cd "$work" && cargo fetch --quiet)
  src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/destructive_command_guard-0.16.0 | head -1)
  rm -rf "$PEERS/dcg"
  cp -r "$src" "$PEERS/dcg"
  rm -f "$PEERS/dcg/.cargo/config.toml" "$PEERS/dcg/rust-toolchain.toml" "$PEERS/dcg/rust-toolchain"
  (cd "$PEERS/dcg" && cargo update -p webpki-roots --precise 1.0.10 && cargo build --release --locked --ignore-rust-version)
fi
