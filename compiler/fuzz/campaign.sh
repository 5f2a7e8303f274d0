#!/usr/bin/env bash
# A fuzzing campaign: every target (or the ones named) for SECONDS each, one after another, with
# AddressSanitizer, each from its seeds and with its dictionary; then a table of executions,
# executions per second, coverage, corpus size and findings per target.
#
#   compiler/fuzz/campaign.sh [--smoke] [--seconds N] [--sanitizer none] [TARGET...]
#
# --smoke runs each target for 10 s (what CI runs); the default is 600 s. --sanitizer none builds
# without AddressSanitizer, for long runs: the C code (tree-sitter) is not instrumented either
# way, and the Rust code is several times faster without it. The working corpus
# (compiler/fuzz/corpus/TARGET) is kept between runs, so campaigns add up over sessions; a
# finding lands in compiler/fuzz/artifacts/TARGET/ and makes the script exit 1. Needs the
# nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz --locked`).
set -euo pipefail
cd "$(dirname "$0")"

seconds=600
sanitizer=address
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) seconds=10 ;;
    --seconds) seconds="$2"; shift ;;
    --sanitizer) sanitizer="$2"; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
named=${#targets[@]}
if [ "$named" -eq 0 ]; then
  targets=(policy policy_gen shell call_json config hook_event mcp_message serve_body)
fi

# Nightly where the machine has it; else the stable compiler, which takes the nightly flags that
# coverage and sanitizers need only with RUSTC_BOOTSTRAP=1.
toolchain="${FUZZ_TOOLCHAIN:-nightly}"
if ! cargo "+$toolchain" --version >/dev/null 2>&1; then
  echo "no $toolchain toolchain: using stable with RUSTC_BOOTSTRAP=1" >&2
  toolchain=stable
  export RUSTC_BOOTSTRAP=1
fi
if ! cargo "+$toolchain" fuzz --version >/dev/null 2>&1; then
  echo "cargo-fuzz is needed: cargo install cargo-fuzz --locked" >&2
  exit 2
fi

# The seeds of each target: its own directory, and the repository's policies for the policy
# targets.
seeds_of() {
  case "$1" in
    policy) echo "../../policies ../../tests/fixtures" ;;
    policy_gen) echo "" ;;
    *) echo "seeds/$1" ;;
  esac
}

# Lines and calls up to the size limit (1 MiB); the others at libFuzzer's own growing length.
max_len_of() {
  case "$1" in
    shell|call_json) echo 1048576 ;;
    *) echo 65536 ;;
  esac
}

# FUZZ_TARGET_DIR keeps the instrumented build somewhere that outlives the checkout.
build_dir=()
if [ -n "${FUZZ_TARGET_DIR:-}" ]; then build_dir=(--target-dir "$FUZZ_TARGET_DIR"); fi

# The targets build with the versions the workspace is tested with: its lock file, which cargo
# extends with libFuzzer's crate. Resolved afresh, a new release of a dependency could break the
# fuzz build (or only this build) on the day it is published.
cp ../../Cargo.lock Cargo.lock

echo "--- building ${#targets[@]} targets (release, sanitizer: $sanitizer)"
if [ "$named" -eq 0 ]; then
  # All of them in one cargo run, which builds (and links) two at a time.
  cargo "+$toolchain" fuzz build -O -s "$sanitizer" "${build_dir[@]}"
else
  for target in "${targets[@]}"; do
    cargo "+$toolchain" fuzz build -O -s "$sanitizer" "${build_dir[@]}" "$target"
  done
fi

report=$(mktemp)
status=0
for target in "${targets[@]}"; do
  corpus="corpus/$target"
  mkdir -p "$corpus" "artifacts/$target"
  dict=()
  if [ -f "dict/$target.dict" ]; then dict=("-dict=dict/$target.dict"); fi
  before=$(find "artifacts/$target" -type f | wc -l)
  log="artifacts/$target.log"
  echo "--- $target for ${seconds}s"
  # No leak check after each input (-detect_leaks=0): the targets keep pools from one input to
  # the next (tree-sitter's parser of each thread, Tokio's runtime), so nearly every input ended
  # with more allocations than frees, and libFuzzer then scanned the whole heap for leaks: three
  # quarters of the shell target's time (234 inputs a second, 1,489 without). Growth without
  # bound is still a finding: -rss_limit_mb.
  # shellcheck disable=SC2046 # the seed directories are words
  cargo "+$toolchain" fuzz run -O -s "$sanitizer" "${build_dir[@]}" "$target" "$corpus" $(seeds_of "$target") -- \
    "${dict[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -detect_leaks=0 \
    -max_len="$(max_len_of "$target")" -print_final_stats=1 >"$log" 2>&1 || true
  execs=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -ao 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  cov=$(grep -ao 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
  corp=$(find "$corpus" -type f | wc -l)
  after=$(find "artifacts/$target" -type f | wc -l)
  found=$((after - before))
  if [ -z "$execs" ]; then
    # No final statistics: the run did not start, or ended on a crash before them.
    found=$((found > 0 ? found : 1))
    tail -20 "$log" >&2
  fi
  [ "$found" -eq 0 ] || status=1
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$target" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$corp" "$found" >>"$report"
done

echo "--- campaign: ${seconds}s per target"
{
  printf 'target\texecutions\texec/s\tcoverage\tcorpus\tfindings\n'
  cat "$report"
} | column -t -s $'\t'
rm -f "$report"
exit "$status"
