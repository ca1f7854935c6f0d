//! Ctrl-C and SIGTERM: a burn in progress stops and removes its partial output; anything else
//! (or a second signal) ends the process at once, as the default action would.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

use anyhow::{Context as _, Result};

/// Raised by the first signal while a burn runs; every burn of this process watches it.
static CANCEL: std::sync::LazyLock<Arc<AtomicBool>> =
    std::sync::LazyLock::new(|| Arc::new(AtomicBool::new(false)));
/// Burns running now.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
/// The signal that raised [`CANCEL`].
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Exit code of a process ended by signal `n`, as shells report it.
fn exit_code(signal: i32) -> i32 {
    128 + signal
}

/// Installs the handlers; call once at start.
pub fn install() -> Result<()> {
    let cancel = Arc::clone(&CANCEL);
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let cancel = Arc::clone(&cancel);
        // SAFETY: the handler only does async-signal-safe work: atomic loads and stores, and
        // `low_level::exit`, which is `_exit`.
        unsafe {
            signal_hook::low_level::register(signal, move || {
                if ACTIVE.load(Ordering::SeqCst) > 0 && !cancel.swap(true, Ordering::SeqCst) {
                    SIGNAL.store(signal, Ordering::SeqCst);
                    return;
                }
                signal_hook::low_level::exit(exit_code(signal));
            })
        }
        .context("installing the signal handlers")?;
    }
    Ok(())
}

/// Marks a burn as running while it lives; the flag to hand to the burn's options.
#[derive(Debug)]
pub struct BurnGuard(());

impl BurnGuard {
    pub fn start() -> (Self, Arc<AtomicBool>) {
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        (Self(()), Arc::clone(&CANCEL))
    }
}

impl Drop for BurnGuard {
    fn drop(&mut self) {
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether a signal asked this process to stop.
pub fn interrupted() -> bool {
    CANCEL.load(Ordering::SeqCst)
}

/// The exit code after an interrupted burn: 130 for Ctrl-C, 143 for SIGTERM.
pub fn interrupted_exit_code() -> u8 {
    let signal = match SIGNAL.load(Ordering::SeqCst) {
        0 => signal_hook::consts::SIGINT,
        n => n,
    };
    u8::try_from(exit_code(signal)).unwrap_or(1)
}
