//! One budget of cores for every whisper run and every aligner pass on the machine.
//!
//! ggml's worker threads wait for each other at every step by spinning. Two runs whose threads
//! together outnumber the cores spin against each other while the thread they wait for is not
//! scheduled: measured on two cores, two concurrent transcriptions of two threads each took 16×
//! as long as one alone, and two processes 20×. So a run takes its threads from a budget first,
//! and waits while others hold them; runs alternate piece by piece, and each takes about twice as
//! long as alone, as it should. The aligner's pass does not spin, but a thread of it beside a
//! run that holds every core keeps one of the run's threads from being scheduled, so it takes
//! its threads from the same budget.
//!
//! The budget has two levels. Inside the process, a counter under a mutex. Between processes (two
//! `captions` commands, a service beside a batch), one lock file per core in the temporary
//! folder, held with `flock`: a run holds the files of the cores it uses, takes what is free
//! (waiting for one when none is), and the kernel gives the locks back if the process dies. When
//! the folder cannot be used the in-process budget still holds; a run never fails for it.
//!
//! Runs take cores one piece at a time, so a process that has just given its cores back asks
//! again at once. `flock` is not fair: a waiter woken by a release loses the race to that
//! process's next ask, and under two busy services another process waited 17 minutes for a core.
//! So cores are taken only through a turnstile, one more lock file: a run holds it while it
//! looks for free cores (and while it waits for one), and lets it go once it has them. A process
//! that asks again queues behind the waiter that holds the turnstile, which gets the next core
//! given back.

use std::fs::File;
use std::path::PathBuf;
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
    /// Held in the process's budget.
    count: usize,
    /// Held between processes: one locked file per core; empty when the folder is unusable.
    machine: Vec<File>,
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
        drop(free);
        let mut cores = Self {
            count,
            machine: Vec::new(),
        };
        if let Some(folder) = lock_folder() {
            match take_machine_cores(folder, budget.total, count) {
                Ok(files) => {
                    // Cores another process holds go back to this process's budget.
                    cores.give_back(count - files.len());
                    cores.machine = files;
                }
                Err(error) => {
                    tracing::debug!(%error, "cores between processes not shared");
                }
            }
        }
        cores
    }

    /// How many cores are held: the thread count to run with.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    fn give_back(&mut self, count: usize) {
        if count == 0 {
            return;
        }
        let budget = budget();
        let mut free = budget
            .free
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *free += count;
        self.count -= count;
        budget.freed.notify_all();
    }
}

/// The folder of the per-core lock files, made once, open to every user of the machine.
fn lock_folder() -> Option<&'static PathBuf> {
    static FOLDER: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOLDER
        .get_or_init(|| {
            let folder = std::env::temp_dir().join("caption-engine-cores");
            match make_shared_folder(&folder) {
                Ok(()) => Some(folder),
                Err(error) => {
                    tracing::debug!(%error, folder = %folder.display(), "no core lock folder");
                    None
                }
            }
        })
        .as_ref()
}

fn make_shared_folder(folder: &std::path::Path) -> std::io::Result<()> {
    match std::fs::create_dir(folder) {
        Ok(()) => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                // Sticky and writable by all, as the temporary folder itself.
                std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o1777))?;
            }
            Ok(())
        }
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(error),
    }
}

fn open_core_file(folder: &std::path::Path, core: usize) -> std::io::Result<File> {
    open_lock_file(&folder.join(format!("core-{core}.lock")))
}

fn open_lock_file(path: &std::path::Path) -> std::io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Another user's process must be able to open it too; only its creator may change that.
        if let Ok(meta) = file.metadata()
            && meta.permissions().mode() & 0o777 != 0o666
        {
            file.set_permissions(std::fs::Permissions::from_mode(0o666))
                .ok();
        }
    }
    Ok(file)
}

/// Locks up to `wanted` of the machine's `total` core files: every one that is free, or, when
/// none is, waits for one and then takes whatever else has become free. Only the holder of the
/// turnstile looks, so a waiter is served before anyone who asks after it.
fn take_machine_cores(
    folder: &std::path::Path,
    total: usize,
    wanted: usize,
) -> std::io::Result<Vec<File>> {
    let turnstile = open_lock_file(&folder.join("turnstile.lock"))?;
    turnstile.lock()?;
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        let held = take_free_cores(folder, total, wanted)?;
        if !held.is_empty() {
            // Dropping the turnstile lets the next waiter look.
            return Ok(held);
        }
        // Nobody else may take a core while the turnstile is held here, so a core given back
        // stays free until this loop sees it; looking every few milliseconds costs nothing.
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(10));
    }
}

/// Every free core file, up to `wanted`, locked without waiting.
fn take_free_cores(
    folder: &std::path::Path,
    total: usize,
    wanted: usize,
) -> std::io::Result<Vec<File>> {
    let mut held = Vec::with_capacity(wanted);
    for core in 0..total {
        if held.len() == wanted {
            break;
        }
        let file = open_core_file(folder, core)?;
        match file.try_lock() {
            Ok(()) => held.push(file),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(error)) => return Err(error),
        }
    }
    Ok(held)
}

impl Drop for Cores {
    fn drop(&mut self) {
        // Closing the files lets other processes in.
        self.machine.clear();
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
        let _serial = serial();
        let first = Cores::take(usize::MAX);
        assert!(first.count() >= 1);
        let (sender, receiver) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let cores = Cores::take(1);
            sender.send(cores.count()).ok();
        });
        // Either this process's budget or the machine's lock files hold it back (other
        // processes on the machine may hold some of the cores `first` did not get).
        assert!(
            receiver
                .recv_timeout(std::time::Duration::from_millis(200))
                .is_err()
                || first.count() < budget().total,
            "took a core while all were held"
        );
        drop(first);
        assert_eq!(
            receiver.recv_timeout(std::time::Duration::from_secs(60)),
            Ok(1)
        );
        waiter.join().ok();
    }

    #[test]
    fn cores_another_process_holds_are_waited_for() {
        let _serial = serial();
        let Some(folder) = lock_folder() else {
            panic!("the temporary folder takes no lock files");
        };
        let total = budget().total;
        // Locks held through other open files stand for another process: flock locks belong to
        // the open file, not to the process.
        let others: Vec<File> = (0..total)
            .map(|core| {
                let file = open_core_file(folder, core).expect("open a core file");
                file.lock().expect("lock a core file");
                file
            })
            .collect();
        let (sender, receiver) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let cores = Cores::take(usize::MAX);
            sender.send(cores.count()).ok();
        });
        assert!(
            receiver
                .recv_timeout(std::time::Duration::from_millis(300))
                .is_err(),
            "ran while another process held every core"
        );
        drop(others);
        let count = receiver
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("ran once the cores were free");
        assert!((1..=total).contains(&count));
        waiter.join().ok();
    }

    #[test]
    fn a_run_takes_only_the_free_cores() {
        let _serial = serial();
        let total = budget().total;
        if total < 2 {
            return;
        }
        let folder = lock_folder().expect("lock folder");
        let other = open_core_file(folder, 0).expect("open a core file");
        other.lock().expect("lock a core file");
        let cores = Cores::take(usize::MAX);
        assert!(cores.count() < total, "took a core another process held");
        assert!(cores.count() >= 1);
        drop(cores);
        // What it did not use went back: the whole budget is free again.
        assert_eq!(
            *budget().free.lock().unwrap_or_else(|e| e.into_inner()),
            total
        );
    }

    #[test]
    fn a_waiter_is_served_while_others_keep_asking() {
        let _serial = serial();
        let folder = lock_folder().expect("lock folder");
        let total = budget().total;
        // One busy "process" per core (flock locks belong to the open file, so each thread's
        // files stand for another process): it holds its core for a piece, computing, gives it
        // back and asks again at once, as a service transcribing one piece after another does.
        // A waiter woken by the release then finds no idle core to run on before the releaser
        // asks again.
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let pieces = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let busy: Vec<_> = (0..total)
            .map(|_| {
                let stop = std::sync::Arc::clone(&stop);
                let pieces = std::sync::Arc::clone(&pieces);
                std::thread::spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        let held = take_machine_cores(folder, total, 1).expect("take a core");
                        // Busy while it holds the core, as whisper's threads are.
                        let piece = std::time::Instant::now();
                        while piece.elapsed() < std::time::Duration::from_millis(20) {
                            std::hint::spin_loop();
                        }
                        drop(held);
                        pieces.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                })
            })
            .collect();
        while pieces.load(std::sync::atomic::Ordering::Relaxed) < 2 * total {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let asked_at = pieces.load(std::sync::atomic::Ordering::Relaxed);
        let (sender, receiver) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let held = take_machine_cores(folder, total, 1).expect("take a core");
            sender.send(held.len()).ok();
        });
        let served = receiver.recv_timeout(std::time::Duration::from_secs(60));
        let pieces_before = pieces.load(std::sync::atomic::Ordering::Relaxed) - asked_at;
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for thread in busy {
            thread.join().ok();
        }
        waiter.join().ok();
        assert_eq!(served, Ok(1), "starved while others kept taking the cores");
        // Served at one of the next cores given back, not after others asked again many times.
        assert!(
            pieces_before <= 10 * total,
            "{pieces_before} pieces went to others after the waiter asked"
        );
    }

    /// The tests share the process's budget: one at a time.
    fn serial() -> std::sync::MutexGuard<'static, ()> {
        static SERIAL: Mutex<()> = Mutex::new(());
        SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
