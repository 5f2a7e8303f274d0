//! Hostile lines cost at most linear work and never more than the grammar's time budget: the
//! shapes that made parsing super-linear (a pipeline ending in `|` thousands of times, runs of
//! `"$(` or `x=$(`, deep nesting) at the sizes they were found at.

use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::grammar::STEPS;
use super::{Limits, SimpleCommand, parse_command, parse_command_with};

const CWD: Option<&str> = Some("/home/dev/project");

/// No time budget: what the walk costs on its own.
fn unbounded() -> Limits {
    Limits {
        grammar_time: Duration::from_secs(600),
        ..Limits::default()
    }
}

/// The cursor and progress steps one parse takes.
fn steps(line: &str, limits: Limits) -> u64 {
    STEPS.with(|steps| steps.set(0));
    let _ = parse_command_with(line, CWD, limits);
    STEPS.with(std::cell::Cell::get)
}

fn reason(commands: &[SimpleCommand]) -> Option<&str> {
    commands.iter().rev().find_map(|c| c.unresolved.as_deref())
}

/// Units that, repeated, made the walk or the grammar super-linear, or that nest.
const SHAPES: &[&str] = &[
    "x=$(",
    "\"$(",
    "$(",
    "a && ",
    "a;",
    "a &",
    "$((",
    "${",
    "((",
    "{ ",
    "(",
    "a \"",
    "`",
    "echo \"$(a)\" ",
    "a <<E\n",
    "a|",
];

#[test]
fn the_walk_is_linear_in_the_line() {
    for shape in SHAPES {
        // The grammar's own error recovery is what is slow on `a|`; its steps still count.
        let n = if *shape == "a|" { 500 } else { 2_000 };
        let small = steps(&shape.repeat(n), unbounded());
        let large = steps(&shape.repeat(4 * n), unbounded());
        assert!(
            large <= 5 * small.max(100),
            "{shape:?}: {small} steps at {n}, {large} at {}",
            4 * n
        );
    }
}

#[test]
fn runs_of_substitutions_at_the_issues_sizes_are_quick() {
    // 84 KB and 80 KB: the walk fetched children by index, 2.2 s and 17 s before.
    for (shape, n) in [("\"$(", 28_000), ("x=$(", 20_000)] {
        let line = shape.repeat(n);
        let start = Instant::now();
        let commands = parse_command_with(&line, CWD, unbounded());
        let took = start.elapsed();
        assert!(took < Duration::from_secs(3), "{shape:?}: {took:?}");
        assert!(reason(&commands).is_some(), "{shape:?}");
    }
}

#[test]
fn a_pipeline_left_open_stops_at_the_budget() {
    // 32 KB: 6 to 23 s in the grammar's error recovery before the budget.
    let line = "a|".repeat(16_000);
    let start = Instant::now();
    let commands = parse_command(&line, CWD);
    let took = start.elapsed();
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(reason(&commands).is_some());
}

#[test]
fn past_the_budget_the_rest_is_unresolved_with_the_reason() {
    let limits = Limits {
        grammar_time: Duration::ZERO,
        ..Limits::default()
    };
    let expected = "the command line takes the shell grammar longer than 0 ms to read";
    // (A plain line past 512 commands is cut short by the fast path, before the grammar.)
    for line in [
        format!("({}", "a|".repeat(2_000)),
        format!("ls; bash -c '{}'", "(".repeat(2_000)),
        format!("for f in *; do echo $f; done; {}", "x=$(".repeat(2_000)),
    ] {
        let commands = parse_command_with(&line, CWD, limits);
        let last = commands.last().and_then(|c| c.unresolved.as_deref());
        assert_eq!(last, Some(expected), "{:.40}", line);
    }
    // Plain lines never reach the grammar, so its budget does not touch them.
    let plain = "echo a b c | tee log && ls -la";
    assert!(
        parse_command_with(plain, CWD, limits)
            .iter()
            .all(|c| c.unresolved.is_none())
    );
}

/// A hostile line: a run of one shape, then something after it.
fn hostile() -> impl Strategy<Value = String> {
    (
        prop::sample::select(SHAPES),
        1_000usize..20_000,
        prop::sample::select(vec!["", "b", "|", ")", "\"", "'", "; rm -rf /", "\n"]),
    )
        .prop_map(|(shape, n, tail)| {
            let mut line = shape.repeat(n);
            line.push_str(tail);
            line
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Whatever the line, the parse ends well within a second (the grammar's budget is 20 ms;
    /// a generous bound, since tests run unoptimized on a shared machine), and a line that
    /// does not parse says so.
    #[test]
    fn hostile_lines_end_within_the_budget(line in hostile()) {
        let start = Instant::now();
        let commands = parse_command(&line, CWD);
        let took = start.elapsed();
        prop_assert!(took < Duration::from_secs(1), "{:?} on {:.40}", took, line);
        prop_assert!(!commands.is_empty());
    }
}

#[test]
fn a_cd_chain_cannot_grow_the_working_directory_without_bound() {
    let line = format!(
        "{} rm -rf x",
        "cd aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa; ".repeat(300)
    );
    let commands = parse_command(&line, CWD);
    let longest = commands
        .iter()
        .filter_map(|c| c.cwd.as_ref())
        .map(String::len)
        .max()
        .unwrap_or(0);
    assert!(
        longest <= super::normalize::MAX_CWD,
        "a cwd of {longest} bytes"
    );
    // Fails closed: the `cd` that went too far is unresolved, and what runs after it is not
    // placed under the directory the line started in.
    let cd = commands
        .iter()
        .find(|c| c.unresolved.is_some())
        .expect("an unresolved cd");
    assert_eq!(cd.name, "cd");
    assert!(
        cd.unresolved
            .as_deref()
            .is_some_and(|r| r.contains("4096 bytes"))
    );
    let rm = commands.last().expect("rm");
    assert_eq!(rm.name, "rm");
    assert!(
        rm.cwd.as_deref().is_none_or(|c| !c.starts_with('/')),
        "{:?}",
        rm.cwd
    );
}

#[test]
fn a_command_of_too_many_words_is_unresolved_and_judged_on_its_first_ones() {
    let max = super::normalize::MAX_WORDS;
    let line = format!("rm {}", "x ".repeat(max * 4));
    let commands = parse_command(&line, CWD);
    let rm = commands.first().expect("rm");
    assert_eq!(rm.argv.len(), max);
    assert!(
        rm.unresolved
            .as_deref()
            .is_some_and(|r| r.contains("words")),
        "{:?}",
        rm.unresolved
    );
    let under = parse_command(&format!("rm {}", "x ".repeat(max - 1)), CWD);
    assert!(under.iter().all(|c| c.unresolved.is_none()));
}

#[test]
fn past_the_command_cap_the_rest_of_the_line_is_one_unresolved_part() {
    let line = format!("{}rm -rf /", "ls; ".repeat(Limits::default().commands));
    let commands = parse_command(&line, CWD);
    assert!(commands.len() <= Limits::default().commands + 1);
    assert!(reason(&commands).is_some_and(|r| r.contains("more simple commands")));
    assert!(
        !commands
            .iter()
            .any(|c| c.name == "rm" && c.unresolved.is_none())
    );
}

#[test]
fn a_plain_line_past_the_command_cap_is_read_no_further() {
    // 200,000 `a && `: the fast path stops reading after the commands the walker follows, so
    // the cost is theirs, not the line's; the rest is one unresolved part.
    for unit in ["a && ", "a;", "a|", "a &"] {
        let line = unit.repeat(200_000);
        let commands = parse_command_with(&line, CWD, unbounded());
        assert_eq!(commands.len(), Limits::default().commands + 1, "{unit:?}");
        assert_eq!(
            reason(&commands),
            Some("more simple commands than can be followed"),
            "{unit:?}"
        );
    }
    // A command with more words than are kept is unresolved, judged on its first words.
    let words = format!("echo {}", "a ".repeat(200_000));
    let commands = parse_command_with(&words, CWD, unbounded());
    assert_eq!(commands.len(), 1);
    assert!(reason(&commands).is_some_and(|r| r.contains("words")));
}
