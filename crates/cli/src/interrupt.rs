//! Ctrl-C and SIGTERM: a transcription or burn in progress stops, removes its partial output
//! and says what was not written; anything else (or a second signal) ends the process at once,
//! as the default action would.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

use anyhow::{Context as _, Result};

/// Raised by the first signal while long work runs; every burn of this process watches it.
static CANCEL: std::sync::LazyLock<Arc<AtomicBool>> =
    std::sync::LazyLock::new(|| Arc::new(AtomicBool::new(false)));
/// Raised with [`CANCEL`]; every transcription of this process watches it.
static TASK_CANCEL: std::sync::LazyLock<caption_engine::Cancel> =
    std::sync::LazyLock::new(caption_engine::Cancel::new);
/// Transcriptions and burns running now.
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
    // Made now, so that the handler only reads it.
    let task_cancel = TASK_CANCEL.clone();
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let cancel = Arc::clone(&cancel);
        let task_cancel = task_cancel.clone();
        // SAFETY: the handler only does async-signal-safe work: atomic loads and stores, and
        // `low_level::exit`, which is `_exit`.
        unsafe {
            signal_hook::low_level::register(signal, move || {
                if ACTIVE.load(Ordering::SeqCst) > 0 && !cancel.swap(true, Ordering::SeqCst) {
                    task_cancel.cancel();
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

/// Marks long work (a transcription, a burn) as running while it lives: a signal then stops
/// the work instead of the process.
#[derive(Debug)]
pub struct Working(());

impl Working {
    pub fn start() -> Self {
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        Self(())
    }

    /// The flag to hand to a burn's options.
    pub fn burn_cancel(&self) -> Arc<AtomicBool> {
        Arc::clone(&CANCEL)
    }

    /// The flag to hand to a transcription's task.
    pub fn task_cancel(&self) -> caption_engine::Cancel {
        TASK_CANCEL.clone()
    }
}

impl Drop for Working {
    fn drop(&mut self) {
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether a signal asked this process to stop.
pub fn interrupted() -> bool {
    CANCEL.load(Ordering::SeqCst)
}

/// The exit code after interrupted work: 130 for Ctrl-C, 143 for SIGTERM.
pub fn interrupted_exit_code() -> u8 {
    let signal = match SIGNAL.load(Ordering::SeqCst) {
        0 => signal_hook::consts::SIGINT,
        n => n,
    };
    u8::try_from(exit_code(signal)).unwrap_or(1)
}

/// Says what an interruption left unwritten (`what`: the output's name, or what standard
/// output would have had) and gives the exit code to end with.
pub fn stopped(what: &str) -> std::process::ExitCode {
    eprintln!("interrupted: {what} was not written");
    std::process::ExitCode::from(interrupted_exit_code())
}
