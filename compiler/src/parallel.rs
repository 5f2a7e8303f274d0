//! Work spread over the machine's cores, for the parts of loading a large policy set that do not
//! depend on each other: parsing its pieces, checking and lowering its rules, building its field
//! scans. Each thread takes the next item until none is left, so uneven items balance out.

use std::sync::atomic::{AtomicUsize, Ordering};

/// At most this many threads, however many cores the machine has.
const MAX_THREADS: usize = 8;

/// Maps `items` with `work`, on up to one thread per core when there are at least `min_items`
/// (below that, starting threads costs more than it saves). Each thread works with its own
/// `state`, made on the calling thread. The results are in the items' order; a panic in `work`
/// is resumed on the caller.
pub fn map<T: Sync, S: Send, R: Send>(
    items: &[T],
    min_items: usize,
    mut state: impl FnMut() -> S,
    work: impl Fn(&S, &T) -> R + Sync,
) -> Vec<R> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = cores.min(MAX_THREADS).min(items.len());
    if threads < 2 || items.len() < min_items {
        let state = state();
        return items.iter().map(|item| work(&state, item)).collect();
    }
    let next = AtomicUsize::new(0);
    let run = |state: S| {
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(index) else {
                return done;
            };
            done.push((index, work(&state, item)));
        }
    };
    let mine = state();
    let theirs: Vec<S> = (1..threads).map(|_| state()).collect();
    let mut done = std::thread::scope(|scope| {
        let run = &run;
        let helpers: Vec<_> = theirs
            .into_iter()
            .map(|state| scope.spawn(move || run(state)))
            .collect();
        let mut done = run(mine);
        for helper in helpers {
            match helper.join() {
                Ok(theirs) => done.extend(theirs),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        done
    });
    done.sort_unstable_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    use super::map;

    #[test]
    fn results_keep_the_items_order_whichever_thread_ran_them() {
        let items: Vec<u64> = (0..1_000).collect();
        let squares = map(&items, 2, || (), |(), n| n * n);
        assert_eq!(squares, items.iter().map(|n| n * n).collect::<Vec<_>>());
    }

    #[test]
    fn a_small_batch_runs_on_the_calling_thread() {
        let caller = std::thread::current().id();
        let threads = map(&[1, 2, 3], 64, || (), |(), _| std::thread::current().id());
        assert!(threads.iter().all(|id| *id == caller));
    }
}
