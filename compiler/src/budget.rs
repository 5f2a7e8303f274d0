//! The time one decision may take.
//!
//! Every agent harness runs its hook under a deadline and treats a hook that does not answer in
//! time as "go ahead", so a decision that runs long on a hostile argument would be a bypass.
//! Each evaluation of a call therefore has a budget ([`DECISION_MILLIS`]); past it, the rule
//! being evaluated fails with [`EXCEEDED`] (an evaluation error, which never lets a call
//! through) and the rest of the stage is not run (lang-spec/evaluation.md, "Bounds").
//!
//! The deadline lives in a thread-local, set by whoever starts a decision (an evaluator's entry
//! point, or a chain for all of its sets) and read by the loops under it (a stage's rules, the
//! shell parse), so the bound reaches the shell grammar without every function taking it. A
//! decision runs on one thread from start to end, so the thread is the decision.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// The budget of one decision, in milliseconds (lang-spec/evaluation.md documents it). The clock
/// is read between units of work, so a decision ends a little past it (by about 9 ms on a 1 MiB
/// shell word of globs, the worst shape): 30 ms keeps every call up to the size limit under the
/// documented 50 ms on the project's machine (the `hostile` bench).
///
/// Unoptimized builds (the test suite on a loaded CI machine) run many times slower, so they get
/// ten times the budget: a test of a decision must not turn on how busy the machine is.
pub const DECISION_MILLIS: u64 = if cfg!(debug_assertions) { 300 } else { 30 };

/// The error of the rule that was running when the budget ran out.
pub const EXCEEDED: &str = "the decision ran past its time budget, so it fails closed";

#[derive(Clone, Copy)]
enum Clock {
    /// No decision is running: nothing is timed.
    Idle,
    /// Timing is lifted (a policy's own examples, differential tests): the verdict must not
    /// depend on how busy the machine is.
    Unbounded,
    /// A decision is running and must end by then.
    Until(Instant),
}

thread_local! {
    static CLOCK: Cell<Clock> = const { Cell::new(Clock::Idle) };
    /// Whether the running decision was seen past its deadline: once seen, it stays past.
    static PASSED: Cell<bool> = const { Cell::new(false) };
}

/// The budget in force while it lives; dropping it restores what was before.
#[must_use = "the budget ends when this is dropped"]
pub struct Spending {
    before: Option<(Clock, bool)>,
}

impl Drop for Spending {
    fn drop(&mut self) {
        if let Some((clock, passed)) = self.before {
            CLOCK.with(|c| c.set(clock));
            PASSED.with(|p| p.set(passed));
        }
    }
}

/// Starts a decision's budget, unless one is already running (a chain's budget covers each of
/// its sets) or timing is lifted.
pub fn decision() -> Spending {
    match CLOCK.with(Cell::get) {
        Clock::Idle => {
            let now = Instant::now();
            let until = now
                .checked_add(Duration::from_millis(DECISION_MILLIS))
                .unwrap_or(now);
            replace(Clock::Until(until))
        }
        Clock::Unbounded | Clock::Until(_) => Spending { before: None },
    }
}

/// Lifts the budget while the guard lives.
pub fn unbounded() -> Spending {
    replace(Clock::Unbounded)
}

fn replace(clock: Clock) -> Spending {
    let before = (
        CLOCK.with(|c| c.replace(clock)),
        PASSED.with(|p| p.replace(false)),
    );
    Spending {
        before: Some(before),
    }
}

/// Whether the running decision is past its deadline. Reads the clock, so it is called between
/// units of work (a rule, a statement, a run of tokens), not inside them.
pub fn passed() -> bool {
    match CLOCK.with(Cell::get) {
        Clock::Until(until) => {
            let passed = PASSED.with(Cell::get) || Instant::now() >= until;
            if passed {
                PASSED.with(|p| p.set(true));
            }
            passed
        }
        Clock::Idle | Clock::Unbounded => false,
    }
}

/// How much work (in bytes of input, with a floor per call) may pass between two readings of
/// the clock in [`passed_after`]: reading it costs about as much as a small builtin call.
const WORK_BETWEEN_READINGS: usize = 16 * 1024;

/// The least work one call counts for: its own cost, whatever the size of its input.
const WORK_PER_CALL: usize = 64;

/// The work one rule counts for besides what it reports itself: the clock is read at least once
/// every 16 rules.
pub const WORK_PER_RULE: usize = WORK_BETWEEN_READINGS / 16;

thread_local! {
    /// Work done since the clock was last read by [`passed_after`].
    static WORK: Cell<usize> = const { Cell::new(0) };
}

/// [`passed`] for a unit of work over `bytes` of input (a builtin call): the clock is read once
/// enough work has been done since the last reading, so small calls share one reading and a
/// large one reads it at once. A decision thus overshoots its budget by at most the time of
/// [`WORK_BETWEEN_READINGS`] bytes of work.
pub fn passed_after(bytes: usize) -> bool {
    if PASSED.with(Cell::get) {
        return true;
    }
    let done = WORK
        .with(|w| w.get())
        .saturating_add(bytes.max(WORK_PER_CALL));
    if done < WORK_BETWEEN_READINGS {
        WORK.with(|w| w.set(done));
        return false;
    }
    WORK.with(|w| w.set(0));
    passed()
}

/// When the running decision must end, if one is timed.
pub fn deadline() -> Option<Instant> {
    match CLOCK.with(Cell::get) {
        Clock::Until(until) => Some(until),
        Clock::Idle | Clock::Unbounded => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inner_decision_shares_the_outer_budget() {
        let outer = decision();
        let until = deadline();
        assert!(until.is_some());
        {
            let _inner = decision();
            assert_eq!(deadline(), until);
        }
        assert_eq!(deadline(), until);
        drop(outer);
        assert_eq!(deadline(), None);
        assert!(!passed());
    }

    #[test]
    fn lifted_timing_holds_inside_and_ends_with_its_guard() {
        let lifted = unbounded();
        let _inner = decision();
        assert_eq!(deadline(), None);
        drop(_inner);
        drop(lifted);
        let _timed = decision();
        assert!(deadline().is_some());
    }

    #[test]
    fn a_passed_deadline_stays_passed_until_the_decision_ends() {
        let spending = replace(Clock::Until(Instant::now()));
        assert!(passed());
        assert!(passed());
        drop(spending);
        assert!(!passed());
    }
}
