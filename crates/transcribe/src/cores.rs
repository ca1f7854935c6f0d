//! One budget of cores for every whisper run in the process.
//!
//! ggml's worker threads wait for each other at every step by spinning. Two runs whose threads
//! together outnumber the cores spin against each other while the thread they wait for is not
//! scheduled: measured on two cores, two concurrent transcriptions of two threads each took 16×
//! as long as one alone. So a run takes its threads from this budget first, and waits while
//! another run holds them; runs alternate piece by piece, and each takes about twice as long as
//! alone, as it should.

use std::sync::{Condvar, Mutex, OnceLock};

struct Budget {
    free: Mutex<usize>,
    freed: Condvar,
    total: usize,
}

fn budget() -> &'static Budget {
    static BUDGET: OnceLock<Budget> = OnceLock::new();
    BUDGET.get_or_init(|| {
        let total = std::thread::available_parallelism().map_or(1, usize::from);
        Budget {
            free: Mutex::new(total),
            freed: Condvar::new(),
            total,
        }
    })
}

/// Cores held for one run; given back on drop.
pub(crate) struct Cores {
    count: usize,
}

impl Cores {
    /// Waits until `wanted` cores (at most all of them, at least one) are free, and takes them.
    pub(crate) fn take(wanted: usize) -> Self {
        let budget = budget();
        let count = wanted.clamp(1, budget.total);
        // A poisoned lock only means a holder panicked; the count itself stays consistent.
        let mut free = budget
            .free
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while *free < count {
            free = budget
                .freed
                .wait(free)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *free -= count;
        Self { count }
    }

    /// How many cores are held: the thread count to run with.
    pub(crate) fn count(&self) -> usize {
        self.count
    }
}

impl Drop for Cores {
    fn drop(&mut self) {
        let budget = budget();
        let mut free = budget
            .free
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *free += self.count;
        budget.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_waits_for_the_first() {
        let total = budget().total;
        let first = Cores::take(usize::MAX);
        assert_eq!(first.count(), total);
        let (sender, receiver) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let cores = Cores::take(1);
            sender.send(cores.count()).ok();
        });
        assert!(
            receiver
                .recv_timeout(std::time::Duration::from_millis(200))
                .is_err(),
            "took a core while all were held"
        );
        drop(first);
        assert_eq!(
            receiver.recv_timeout(std::time::Duration::from_secs(10)),
            Ok(1)
        );
        waiter.join().ok();
    }
}
