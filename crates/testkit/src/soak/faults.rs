//! The fault injector: a plan of faults at random times, carried out on the real servers.

use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{Cluster, Rng, Shared, Window};
use crate::{PostgresServer, S3sServer, Tmpfs};

/// One kind of fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultKind {
    /// One `captions serve` process is SIGKILLed, then started again on its port.
    Sigkill,
    /// PostgreSQL restarts (a fast shutdown, then a start).
    PostgresRestart,
    /// The S3 server stops for 10–30 s, then starts again on its port and folder.
    S3Outage,
    /// The data disk of the service processes is filled for a minute.
    DiskFull,
}

impl FaultKind {
    /// Every kind, in the report's order.
    pub const ALL: [Self; 4] = [
        Self::Sigkill,
        Self::PostgresRestart,
        Self::S3Outage,
        Self::DiskFull,
    ];

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sigkill => "sigkill",
            Self::PostgresRestart => "postgres restart",
            Self::S3Outage => "s3 outage",
            Self::DiskFull => "disk full",
        }
    }

    /// The kind named `name` (`sigkill`, `postgres`, `s3`, `disk`), as `scripts/soak --faults`
    /// takes them.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.trim() {
            "sigkill" | "kill" => Some(Self::Sigkill),
            "postgres" | "postgres-restart" => Some(Self::PostgresRestart),
            "s3" | "s3-outage" => Some(Self::S3Outage),
            "disk" | "disk-full" => Some(Self::DiskFull),
            _ => None,
        }
    }

    /// Seconds the fault takes beyond its hold time (a start-up, a restart), for planning.
    fn overhead_s(self) -> f64 {
        match self {
            Self::Sigkill | Self::PostgresRestart => 5.0,
            Self::S3Outage | Self::DiskFull => 3.0,
        }
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A fault to inject at `at_s` seconds into the run, held `hold_s` (the time a killed
/// process stays down, the bucket stays away, the disk stays full).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PlannedFault {
    pub(crate) at_s: f64,
    pub(crate) kind: FaultKind,
    pub(crate) hold_s: f64,
}

/// Faults at random times over `load_s` seconds: rounds of every kind in a random order, with
/// random gaps sized so that a first round fits in the run (in a 3-minute run the faults come
/// nearly back to back, in an hour one every few minutes). None starts in the first tenth of
/// the run (at most 30 s) or ends in its last 30 s, which leave time to see the service
/// recover.
pub(crate) fn plan(load_s: f64, kinds: &[FaultKind], rng: &mut Rng) -> Vec<PlannedFault> {
    let warmup_s = (load_s * 0.1).min(30.0);
    let last_end_s = load_s - (load_s * 0.2).min(30.0);
    let short = load_s < 600.0;
    let hold = |kind: FaultKind, rng: &mut Rng| match kind {
        FaultKind::Sigkill => rng.range(1.0, 4.0),
        FaultKind::PostgresRestart => 0.0,
        FaultKind::S3Outage if short => rng.range(10.0, 15.0),
        FaultKind::S3Outage => rng.range(10.0, 30.0),
        FaultKind::DiskFull => 60.0,
    };
    let longest_round_s: f64 = kinds
        .iter()
        .map(|&kind| {
            let longest_hold = match kind {
                FaultKind::Sigkill => 4.0,
                FaultKind::PostgresRestart => 0.0,
                FaultKind::S3Outage if short => 15.0,
                FaultKind::S3Outage => 30.0,
                FaultKind::DiskFull => 60.0,
            };
            longest_hold + kind.overhead_s()
        })
        .sum();
    #[allow(clippy::cast_precision_loss, reason = "four kinds at most")]
    let gaps = kinds.len().max(1) as f64;
    let gap_max_s = ((last_end_s - warmup_s - longest_round_s) / gaps).clamp(3.0, 240.0);
    let gap_min_s = (gap_max_s / 3.0).max(2.0);
    let mut faults = Vec::new();
    let mut at_s = warmup_s;
    if kinds.is_empty() {
        return faults;
    }
    loop {
        let mut round = kinds.to_vec();
        rng.shuffle(&mut round);
        for kind in round {
            let hold_s = hold(kind, rng);
            if at_s + hold_s + kind.overhead_s() > last_end_s {
                return faults;
            }
            faults.push(PlannedFault { at_s, kind, hold_s });
            at_s += hold_s + kind.overhead_s() + rng.range(gap_min_s, gap_max_s);
        }
    }
}

/// The servers the faults act on. The injector owns them while it runs and hands them back.
#[derive(Debug)]
pub(crate) struct Backends {
    pub(crate) postgres: PostgresServer,
    pub(crate) s3: S3sServer,
    /// The tmpfs holding every process's data folder; `None` where mounting is not permitted.
    pub(crate) disk: Option<Tmpfs>,
}

/// Carries out `plan` in order (each fault at its time, or at once when the one before ran
/// late), recording each as a window in `shared`. A fault that can no longer end before the
/// load ends is skipped. Returns the servers once done or once `stop` is set.
pub(crate) fn inject(
    plan: &[PlannedFault],
    mut backends: Backends,
    cluster: &Cluster,
    shared: &Shared,
    stop: &AtomicBool,
) -> Backends {
    for fault in plan {
        while shared.clock.now_s() < fault.at_s {
            if stop.load(Ordering::Relaxed) {
                return backends;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let now_s = shared.clock.now_s();
        if now_s + fault.hold_s + fault.kind.overhead_s() > shared.load_s {
            shared.note(format!(
                "{} planned at {} skipped: it would not end before the load does",
                fault.kind,
                clock_label(fault.at_s)
            ));
            continue;
        }
        let window = shared.open_window(fault.kind);
        let detail = match fault.kind {
            FaultKind::Sigkill => kill_and_restart(cluster, fault.hold_s),
            FaultKind::PostgresRestart => {
                let started = Instant::now();
                match backends.postgres.restart() {
                    Ok(()) => Ok(format!(
                        "accepting connections again after {:.1} s",
                        started.elapsed().as_secs_f64()
                    )),
                    Err(e) => Err(format!("PostgreSQL did not come back: {e}")),
                }
            }
            FaultKind::S3Outage => {
                backends.s3.stop();
                sleep_unless(stop, fault.hold_s);
                match backends.s3.restart() {
                    Ok(()) => Ok(format!("bucket away for {:.1} s", fault.hold_s)),
                    Err(e) => Err(format!("s3s-fs did not come back: {e}")),
                }
            }
            FaultKind::DiskFull => match &backends.disk {
                Some(disk) => fill_for(disk, fault.hold_s, stop),
                None => Err("no tmpfs for the data disk".to_owned()),
            },
        };
        shared.close_window(window, detail);
    }
    backends
}

/// SIGKILLs the second process, waits `down_s`, and starts it again on its port.
fn kill_and_restart(cluster: &Cluster, down_s: f64) -> Result<String, String> {
    const VICTIM: usize = 1;
    let killed = cluster.take(VICTIM);
    let old_pid = match killed {
        Some(mut service) => {
            let pid = service.pid();
            service.kill();
            pid
        }
        None => return Err("the process was not running".to_owned()),
    };
    std::thread::sleep(Duration::from_secs_f64(down_s));
    let started = Instant::now();
    let new_pid = cluster.restart(VICTIM, &format!("SIGKILLed (pid {old_pid})"))?;
    Ok(format!(
        "process {VICTIM} (pid {old_pid}) killed, down {down_s:.1} s, pid {new_pid} listening {:.1} s after its start",
        started.elapsed().as_secs_f64()
    ))
}

/// Fills `disk` until no space is left, holds it `hold_s`, then frees the space.
fn fill_for(disk: &Tmpfs, hold_s: f64, stop: &AtomicBool) -> Result<String, String> {
    let filled = disk.fill("filler");
    sleep_unless(stop, hold_s);
    let filler = disk.path().join("filler");
    std::fs::remove_file(&filler).map_err(|e| format!("{}: {e}", filler.display()))?;
    Ok(format!(
        "{:.1} MiB written until the disk was full, held {hold_s:.0} s",
        filled as f64 / (1024.0 * 1024.0)
    ))
}

fn sleep_unless(stop: &AtomicBool, seconds: f64) {
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    while Instant::now() < until && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `+mm:ss` from seconds into the run.
pub(crate) fn clock_label(t_s: f64) -> String {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a run lasts hours at most"
    )]
    let whole = t_s.max(0.0).round() as u64;
    format!("+{:02}:{:02}", whole / 60, whole % 60)
}

/// The folders of the processes' data on `disk`, or in `fallback` without one.
pub(crate) fn data_root<'a>(disk: Option<&'a Tmpfs>, fallback: &'a Path) -> &'a Path {
    disk.map_or(fallback, Tmpfs::path)
}

impl Window {
    /// Whether an exchange from `start_s` to `end_s` overlaps this window or the `grace_s`
    /// after it.
    pub(crate) fn overlaps(&self, start_s: f64, end_s: f64, grace_s: f64) -> bool {
        let window_end_s = self.end_s.unwrap_or(f64::INFINITY) + grace_s;
        start_s < window_end_s && end_s > self.start_s
    }
}
