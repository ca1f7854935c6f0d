//! The generate slots: how many burns run at once in this process, synchronous and background
//! alike. A slot is held only while a burn runs; when every slot is taken, how long until one
//! is free is guessed from the running burns' progress.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::Error;

/// A wait to suggest when nothing tells how long the running burns have left.
const UNKNOWN_WAIT: Duration = Duration::from_secs(5);
/// The longest wait suggested: past it a client would rather be told to come back soon.
const LONGEST_WAIT: Duration = Duration::from_secs(300);

/// The slots of one engine.
#[derive(Debug)]
pub(crate) struct Slots {
    semaphore: Arc<Semaphore>,
    burns: Mutex<HashMap<u64, Burn>>,
    next: AtomicU64,
}

#[derive(Debug)]
struct Burn {
    started: Instant,
    /// Done, in thousandths.
    progress: Arc<AtomicU16>,
}

/// One running burn's slot, given back on drop.
#[derive(Debug)]
pub(crate) struct Slot {
    _permit: OwnedSemaphorePermit,
    slots: Arc<Slots>,
    id: u64,
    progress: Arc<AtomicU16>,
}

impl Slots {
    pub(crate) fn new(count: usize) -> Arc<Self> {
        Arc::new(Self {
            semaphore: Arc::new(Semaphore::new(count.max(1))),
            burns: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
        })
    }

    fn burns(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Burn>> {
        // Plain records: still usable after a panic elsewhere.
        self.burns
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A slot now, or [`Error::Busy`] with the guessed wait when every slot runs a burn.
    pub(crate) fn try_take(self: &Arc<Self>) -> Result<Slot, Error> {
        match Arc::clone(&self.semaphore).try_acquire_owned() {
            Ok(permit) => Ok(self.slot(permit)),
            Err(_) => {
                let wait = self.wait_guess();
                Err(Error::Busy {
                    message: format!(
                        "every generate slot is running a burn; retry in about {} s",
                        wait.as_secs()
                    ),
                    retry_after_s: wait.as_secs(),
                })
            }
        }
    }

    /// A slot, once one is free; `None` when the slots are closed.
    pub(crate) async fn take(self: &Arc<Self>) -> Option<Slot> {
        let permit = Arc::clone(&self.semaphore).acquire_owned().await.ok()?;
        Some(self.slot(permit))
    }

    /// Waits until a slot is free, without taking it (a worker then looks for a job, and
    /// takes a slot only for a job it found).
    pub(crate) async fn free(&self) -> bool {
        self.semaphore.acquire().await.is_ok()
    }

    fn slot(self: &Arc<Self>, permit: OwnedSemaphorePermit) -> Slot {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let progress = Arc::new(AtomicU16::new(0));
        self.burns().insert(
            id,
            Burn {
                started: Instant::now(),
                progress: Arc::clone(&progress),
            },
        );
        Slot {
            _permit: permit,
            slots: Arc::clone(self),
            id,
            progress,
        }
    }

    /// How long until the first running burn ends, from each one's pace so far: a burn at
    /// fraction `p` after `t` seconds has about `t (1 - p) / p` left. Between 1 s and 5 min.
    pub(crate) fn wait_guess(&self) -> Duration {
        let now = Instant::now();
        let soonest = self
            .burns()
            .values()
            .filter_map(|burn| {
                let done = f64::from(burn.progress.load(Ordering::Relaxed)) / 1000.0;
                let elapsed = now.duration_since(burn.started).as_secs_f64();
                (done > 0.0).then(|| elapsed * (1.0 - done) / done)
            })
            .reduce(f64::min);
        let Some(seconds) = soonest else {
            return UNKNOWN_WAIT;
        };
        // Whole seconds, rounded up: Retry-After counts seconds.
        Duration::from_secs_f64(seconds.clamp(1.0, LONGEST_WAIT.as_secs_f64()).ceil())
    }
}

impl Slot {
    /// A progress callback for a burn that feeds this slot's guess.
    pub(crate) fn reporter(&self) -> impl Fn(f64) + Send + Sync + 'static {
        let progress = Arc::clone(&self.progress);
        move |fraction: f64| record(&progress, fraction)
    }
}

fn record(progress: &AtomicU16, fraction: f64) {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "clamped to 0..=1000 first"
    )]
    let thousandths = (fraction * 1000.0).clamp(0.0, 1000.0) as u16;
    progress.fetch_max(thousandths, Ordering::Relaxed);
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots.burns().remove(&self.id);
        // The burn's frames and buffers are freed by now.
        super::memory::give_back();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[tokio::test]
    async fn a_slot_is_busy_only_while_a_burn_holds_it() {
        let slots = Slots::new(1);
        // Waiting for a free slot takes none.
        assert!(slots.free().await);
        let held = slots.try_take().unwrap();
        let Err(Error::Busy { retry_after_s, .. }) = slots.try_take() else {
            panic!("a second burn must be refused while the only slot runs one");
        };
        // Nothing said how far the burn is: the default wait.
        assert_eq!(retry_after_s, UNKNOWN_WAIT.as_secs());
        drop(held);
        assert!(slots.try_take().is_ok());
    }

    #[tokio::test]
    async fn the_wait_follows_the_running_burns_pace() {
        let slots = Slots::new(2);
        let slow = slots.try_take().unwrap();
        let fast = slots.try_take().unwrap();
        std::thread::sleep(Duration::from_millis(200));
        // A quarter done after 0.2 s: about 0.6 s left; a tenth: 1.8 s. The sooner one
        // counts, rounded up to whole seconds.
        slow.reporter()(0.1);
        fast.reporter()(0.25);
        assert_eq!(slots.wait_guess(), Duration::from_secs(1));
        drop(fast);
        assert_eq!(slots.wait_guess(), Duration::from_secs(2));
        // A burn that has done nothing yet tells nothing.
        drop(slow);
        let _fresh = slots.try_take().unwrap();
        assert_eq!(slots.wait_guess(), UNKNOWN_WAIT);
    }
}
