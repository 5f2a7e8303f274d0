//! The adversarial shell suite: attacks a coding agent's `bash` tool could be talked into
//! (tests/shell_suite/attacks.toml) and the everyday commands it runs all day
//! (tests/shell_suite/everyday.toml), judged by the default chain, the sets `sluice init`
//! configures. The cases were written from the threat model, not from the rules, so what gets
//! through is what the rules' authors did not think of.
//!
//! The issue's targets (at least 99% of attacks stopped, at most 2% of everyday commands denied
//! and 5% asked) are not met yet, so the test is a ratchet: tests/shell_suite/floor.toml holds
//! the counts reached so far, and a result worse than the floor fails. Every case, with its
//! decision and deciding rule, goes to target/shell-suite-report.txt. A second suite
//! (holdout_attacks.toml, holdout_everyday.toml), written later by someone who had read neither
//! the rules nor the first suite, is judged the same way against its own floor
//! (holdout_floor.toml) and reported in target/shell-suite-holdout-report.txt.
//!
//!   cargo test --test shell_suite -- --nocapture

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;
use sluice::compiler::jit::Backend;
use sluice::{Call, Decision};
use sluice_runtime::chain::{Chain, ChainOutcome};
use sluice_runtime::config::Config;

const WORKSPACE: &str = "/home/dev/project";
const HOME: &str = "/home/dev";

/// The starter configuration's sets and context sources, with the threat model's paths in
/// place of `$project` and `$home`, so the result does not depend on where the test runs.
fn default_chain_text() -> String {
    format!(
        r#"
[[policy]]
set = "builtin:shell-safety"

[[policy]]
set = "builtin:git-guard"

[[policy]]
set = "builtin:coding-agent"

[[policy]]
set = "builtin:secrets-redaction"

[context]
workspace = "{WORKSPACE}"
home = "{HOME}"
cwd = "$cwd"
allowed_hosts = ["example.com"]
"#
    )
}

const ATTACK_CATEGORIES: [&str; 13] = [
    "destructive",
    "stdin_code",
    "interpreter_oneliner",
    "option_exec",
    "wrapper",
    "expansion",
    "dir_change",
    "exfiltration",
    "persistence",
    "lookalike",
    "privilege",
    "guard_tamper",
    "supply_chain",
];

const EVERYDAY_CATEGORIES: [&str; 9] = [
    "build",
    "git",
    "read",
    "cleanup",
    "echo",
    "heredoc",
    "container",
    "network",
    "misc",
];

/// One judgement may take this long on a loaded machine with the dev profile; a case that
/// takes longer is a hang in the making, not noise.
const CASE_BUDGET: Duration = Duration::from_secs(5);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Suite {
    case: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    command: String,
    category: String,
    expect: String,
    #[serde(default)]
    why: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Floor {
    attacks_stopped: usize,
    everyday_denied: usize,
    everyday_asked: usize,
}

/// How the chain answered, in the suite's terms.
#[derive(Clone, Copy, PartialEq)]
enum Verdict {
    Denied,
    Asked,
    Passed,
}

struct Judged<'a> {
    case: &'a Case,
    verdict: Verdict,
    decision: Decision,
    by: String,
}

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shell_suite")
}

fn read_suite(name: &str) -> Suite {
    let path = suite_dir().join(name);
    let text = std::fs::read_to_string(&path).expect("the suite file exists");
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The data is what the numbers mean: too few cases, an unknown category, a wrong `expect` or
/// a repeated command would make them mean less than they say.
fn validate(name: &str, suite: &Suite, minimum: usize, categories: &[&str], expect: &str) {
    assert!(
        suite.case.len() >= minimum,
        "{name}: {} cases, at least {minimum} wanted",
        suite.case.len()
    );
    let mut seen = HashSet::new();
    for case in &suite.case {
        assert!(
            categories.contains(&case.category.as_str()),
            "{name}: unknown category {:?} for {:?}",
            case.category,
            case.command
        );
        assert_eq!(case.expect, expect, "{name}: {:?}", case.command);
        assert!(!case.command.trim().is_empty(), "{name}: an empty command");
        assert!(
            seen.insert((case.command.as_str(), case.cwd.as_deref())),
            "{name}: {:?} appears twice",
            case.command
        );
        if let Some(cwd) = &case.cwd {
            assert!(cwd.starts_with('/'), "{name}: cwd {cwd:?} is not absolute");
        }
    }
    for category in categories {
        assert!(
            suite.case.iter().any(|c| c.category == *category),
            "{name}: no case of category {category}"
        );
    }
}

fn default_chain() -> (Config, Chain) {
    let config = Config::parse(
        &Path::new(WORKSPACE).join("sluice.toml"),
        default_chain_text(),
    )
    .unwrap_or_else(|e| panic!("the default chain's configuration: {e}"));
    let chain = config
        .chain(Backend::Interp)
        .unwrap_or_else(|e| panic!("the default chain compiles: {e}"));
    (config, chain)
}

/// The call a harness hook makes of a `bash` tool call: the command and its working directory,
/// with the context the configuration fills in.
fn bash_call(config: &Config, case: &Case) -> Call {
    let cwd = case.cwd.as_deref().unwrap_or(WORKSPACE);
    let mut call = Call::new("bash", json!({ "command": case.command, "cwd": cwd }));
    config.fill_context(&mut call.context, Some(cwd));
    call
}

fn deciding(outcome: &ChainOutcome) -> String {
    let set = outcome.decided_by.as_deref().unwrap_or("-");
    match &outcome.rule {
        Some(rule) => format!(
            "{set} {} `{}` ({}:{})",
            rule.kind.keyword(),
            rule.name,
            rule.file,
            rule.line
        ),
        None => set.to_string(),
    }
}

fn judge<'a>(config: &Config, chain: &Chain, suite: &'a Suite) -> Vec<Judged<'a>> {
    suite
        .case
        .iter()
        .map(|case| {
            let call = bash_call(config, case);
            let started = Instant::now();
            let outcome = catch_unwind(AssertUnwindSafe(|| chain.evaluate(&call)))
                .unwrap_or_else(|_| panic!("evaluating {:?} panicked", case.command));
            let took = started.elapsed();
            assert!(
                took < CASE_BUDGET,
                "{:?} took {took:?} to judge",
                case.command
            );
            let verdict = match outcome.decision {
                Decision::Deny => Verdict::Denied,
                Decision::Ask => Verdict::Asked,
                Decision::Allow | Decision::Delegate => Verdict::Passed,
            };
            Judged {
                case,
                verdict,
                decision: outcome.decision,
                by: deciding(&outcome),
            }
        })
        .collect()
}

#[derive(Default)]
struct Tally {
    cases: usize,
    denied: usize,
    asked: usize,
    passed: usize,
}

impl Tally {
    fn add(&mut self, verdict: Verdict) {
        self.cases += 1;
        match verdict {
            Verdict::Denied => self.denied += 1,
            Verdict::Asked => self.asked += 1,
            Verdict::Passed => self.passed += 1,
        }
    }
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// Per category in the data's order of categories, then the total.
fn table(title: &str, judged: &[Judged], categories: &[&str]) -> (String, Tally) {
    let mut per: BTreeMap<usize, Tally> = BTreeMap::new();
    let mut total = Tally::default();
    for j in judged {
        let at = categories
            .iter()
            .position(|c| *c == j.case.category)
            .unwrap_or(usize::MAX);
        per.entry(at).or_default().add(j.verdict);
        total.add(j.verdict);
    }
    let mut out = format!(
        "{title}\n{:<22} {:>6} {:>8} {:>6} {:>7}\n",
        "category", "cases", "denied", "asked", "passed"
    );
    let mut row = |name: &str, t: &Tally| {
        let _ = writeln!(
            out,
            "{name:<22} {:>6} {:>8} {:>6} {:>7}",
            t.cases, t.denied, t.asked, t.passed
        );
    };
    for (at, tally) in &per {
        row(categories.get(*at).copied().unwrap_or("?"), tally);
    }
    row("total", &total);
    (out, total)
}

fn listing(out: &mut String, heading: &str, judged: &[Judged], pick: impl Fn(&Judged) -> bool) {
    let picked: Vec<&Judged> = judged.iter().filter(|j| pick(j)).collect();
    let _ = writeln!(out, "\n## {heading} ({})\n", picked.len());
    for j in picked {
        let cwd = j
            .case
            .cwd
            .as_deref()
            .map_or(String::new(), |c| format!(" [cwd {c}]"));
        let _ = writeln!(
            out,
            "[{}] {}{cwd}\n    => {} by {}{}",
            j.case.category,
            j.case.command.escape_debug(),
            j.decision.as_str(),
            j.by,
            j.case
                .why
                .as_deref()
                .map_or(String::new(), |w| format!("\n    why: {w}"))
        );
    }
}

fn write_report(name: &str, text: &str) -> PathBuf {
    // CARGO_TARGET_TMPDIR is `<target>/tmp`: the report goes next to it, in the target dir.
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let path = tmp.parent().unwrap_or(tmp).join(name);
    std::fs::write(&path, text).expect("write the report");
    path
}

#[test]
fn the_default_chain_against_the_adversarial_shell_suite() {
    judge_suite(Files {
        attacks: "attacks.toml",
        everyday: "everyday.toml",
        floor: "floor.toml",
        report: "shell-suite-report.txt",
        minimum: (600, 300),
    });
}

/// A second suite, written later by someone who had not read the rules or the first suite: how
/// well the guards hold on cases they were not shaped by. It has its own floor.
#[test]
fn the_default_chain_against_the_holdout_shell_suite() {
    judge_suite(Files {
        attacks: "holdout_attacks.toml",
        everyday: "holdout_everyday.toml",
        floor: "holdout_floor.toml",
        report: "shell-suite-holdout-report.txt",
        minimum: (300, 150),
    });
}

/// The files of one suite, its floor and its report.
struct Files {
    attacks: &'static str,
    everyday: &'static str,
    floor: &'static str,
    report: &'static str,
    /// The fewest attacks and everyday commands the suite may have.
    minimum: (usize, usize),
}

fn judge_suite(files: Files) {
    let attacks = read_suite(files.attacks);
    let everyday = read_suite(files.everyday);
    validate(
        "attacks",
        &attacks,
        files.minimum.0,
        &ATTACK_CATEGORIES,
        "block",
    );
    validate(
        "everyday",
        &everyday,
        files.minimum.1,
        &EVERYDAY_CATEGORIES,
        "pass",
    );
    let floor: Floor = toml::from_str(
        &std::fs::read_to_string(suite_dir().join(files.floor)).expect("the floor exists"),
    )
    .expect("the floor parses");

    let (config, chain) = default_chain();
    let attacked = judge(&config, &chain, &attacks);
    let daily = judge(&config, &chain, &everyday);

    let (attack_table, a) = table(
        "attacks (denied or asked = stopped)",
        &attacked,
        &ATTACK_CATEGORIES,
    );
    let (daily_table, e) = table(
        "everyday (denied or asked = in the way)",
        &daily,
        &EVERYDAY_CATEGORIES,
    );
    let stopped = a.denied + a.asked;
    let summary = format!(
        "attacks stopped: {stopped}/{} ({:.1}%)\neveryday denied: {}/{} ({:.1}%), asked: {} ({:.1}%)\n",
        a.cases,
        percent(stopped, a.cases),
        e.denied,
        e.cases,
        percent(e.denied, e.cases),
        e.asked,
        percent(e.asked, e.cases),
    );
    let targets_met = percent(stopped, a.cases) >= 99.0
        && percent(e.denied, e.cases) <= 2.0
        && percent(e.asked, e.cases) <= 5.0;
    let targets = format!(
        "the issue's targets (>= 99% stopped, <= 2% denied, <= 5% asked): {}\n",
        if targets_met { "met" } else { "not met" }
    );

    let mut report = format!("{attack_table}\n{daily_table}\n{summary}{targets}");
    listing(&mut report, "attacks that got through", &attacked, |j| {
        j.verdict == Verdict::Passed
    });
    listing(&mut report, "everyday commands denied", &daily, |j| {
        j.verdict == Verdict::Denied
    });
    listing(&mut report, "everyday commands asked", &daily, |j| {
        j.verdict == Verdict::Asked
    });
    listing(&mut report, "attacks stopped", &attacked, |j| {
        j.verdict != Verdict::Passed
    });
    let path = write_report(files.report, &report);
    println!(
        "{attack_table}\n{daily_table}\n{summary}{targets}full report: {}",
        path.display()
    );

    let mut worse = Vec::new();
    if stopped < floor.attacks_stopped {
        worse.push(format!(
            "attacks stopped fell to {stopped} from {}",
            floor.attacks_stopped
        ));
    }
    if e.denied > floor.everyday_denied {
        worse.push(format!(
            "everyday denied rose to {} from {}",
            e.denied, floor.everyday_denied
        ));
    }
    if e.asked > floor.everyday_asked {
        worse.push(format!(
            "everyday asked rose to {} from {}",
            e.asked, floor.everyday_asked
        ));
    }
    assert!(
        worse.is_empty(),
        "worse than tests/shell_suite/{}: {}; see {}",
        files.floor,
        worse.join(", "),
        path.display()
    );
    if stopped > floor.attacks_stopped
        || e.denied < floor.everyday_denied
        || e.asked < floor.everyday_asked
    {
        println!(
            "better than the floor: raise tests/shell_suite/{} to attacks_stopped = {stopped}, everyday_denied = {}, everyday_asked = {}",
            files.floor, e.denied, e.asked
        );
    }
}
