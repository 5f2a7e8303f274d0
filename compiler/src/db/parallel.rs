//! Loading a large set on every core: the queries of independent pieces and rules run first on
//! several threads, each with its own handle on the database, so that the set's queries then
//! find them remembered. The result is the same as running them in order: a query's value does
//! not depend on which thread ran it.

use super::{Database, PolicySet, check, check_rule, examples_rule, lint_rule, lower_rule, rules};

/// Below this many pieces or rules, starting threads costs more than it saves.
pub(super) const PARALLEL_ITEMS: usize = 64;

/// Runs `work` on every item on every core, each thread with its own handle on `db`.
pub(super) fn on_every_core<T: Copy + Send + Sync>(
    db: &Database,
    items: &[T],
    work: impl Fn(&Database, T) + Sync,
) {
    crate::parallel::map(
        items,
        PARALLEL_ITEMS,
        || db.clone(),
        |db, item| work(db, *item),
    );
}

/// Checks and lints every rule of `set` on every core, then, when the set checked without
/// errors, lowers them and runs their examples the same way.
pub fn analyse_rules_in_parallel(db: &Database, set: PolicySet) {
    let items = rules(db, set);
    on_every_core(db, items, |db, item| {
        check_rule(db, item);
        lint_rule(db, item);
    });
    if check(db, set).has_errors {
        return;
    }
    on_every_core(db, items, |db, item| {
        lower_rule(db, item);
        examples_rule(db, item);
    });
}
