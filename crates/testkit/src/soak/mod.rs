//! The soak of `captions serve`: clients loop over the whole product for a set time against two
//! service processes that share PostgreSQL and an S3 server (s3s-fs), while a fault injector
//! kills one process, restarts PostgreSQL, stops the bucket and fills the data disk, at random
//! times. Then every job, output and webhook is accounted for.
//!
//! Each client, in a loop, with its own API key:
//! 1. uploads a clip (an upload descriptor from `GET /v1/signedUrl`, then the form POST to the
//!    bucket) — one of four short clips of espeak-ng speech over an ffmpeg test picture, in
//!    MP4/H.264, MOV, WebM/VP9 and MKV, of different sizes;
//! 2. transcribes it (`POST /v1/transcript` with a webhook) and polls the job;
//! 3. burns the words (`POST /v1/generate`, at random synchronous or `"async": true` with a
//!    webhook, polled at `GET /v1/generate/{id}`) in one of a few templates;
//! 4. downloads the video and checks it with ffprobe and by its caption pixels;
//! 5. deletes its jobs (`DELETE` of a finished job: 409 `already_finished`; the service keeps
//!    stored files).
//!
//! Requests go to either process, as a load balancer would send them, and to the other one when
//! a process does not answer. A 429 is waited out as its `Retry-After` says; a 503
//! `unavailable` or 507 `disk_full`, or no answer at all, is tried again until it has gone on
//! for a minute after the last fault ended.
//!
//! [`SoakReport::problems`] lists what must not happen: a job accepted and lost, or never
//! finished; a job failed with a code the documentation does not give, or on a passing backend
//! fault before its retries were used; an output missing, unreadable, without caption pixels,
//! or stored twice; a webhook event missing, sent for one job as several events, received more
//! often than it was tried, or badly signed; a 5xx other than a 503 `unavailable` or 507
//! `disk_full` (with `Retry-After`) during or just after a fault, or any 5xx outside one; a
//! request still failing a minute after the faults ended; a process exiting on its own or not
//! stopping cleanly; and, in runs of 20 minutes or more, a process's RSS at the end above 110 %
//! of its RSS at minute 10 (both read off the least-squares line through its samples from
//! minute 10 on).

mod client;
mod clips;
mod faults;
mod report;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

pub use faults::FaultKind;
pub use report::SoakReport;

use crate::{PostgresServer, S3sServer, ServeCommand, Service, Tmpfs};
use client::{Exchange, Iteration, Output, SubmittedJob};
use faults::{Backends, FaultKind as Kind};

/// The webhook signing key every process shares.
const WEBHOOK_SECRET: &str = "soak-webhook-secret";
/// The processes of the service.
const PROCESSES: usize = 2;
/// After a fault ends, a 503 `unavailable` or 507 `disk_full` is still expected this long.
const GRACE_S: f64 = 15.0;
/// A request still failing this long after the last fault ended has failed for good.
const RECOVERY_S: f64 = 60.0;
/// A job not ended this long after it was submitted is stuck.
const JOB_LIMIT: Duration = Duration::from_secs(15 * 60);
/// Once the load ends, rounds still running may take this long to finish.
const DRAIN_LIMIT: Duration = Duration::from_secs(10 * 60);
/// Once the rounds have finished, webhook events may take this long to arrive.
const EVENT_LIMIT: Duration = Duration::from_secs(4 * 60);
/// Size of the data disk (a tmpfs) the processes share.
const DISK_MIB: u32 = 256;

/// What a soak runs.
#[derive(Debug, Clone)]
pub struct SoakOptions {
    /// How long clients keep starting rounds, in minutes; the rounds running at the end then
    /// finish.
    pub minutes: f64,
    /// Clients looping at once.
    pub clients: usize,
    /// Whether the fault injector runs.
    pub faults: bool,
    /// The kinds of fault it injects (every kind by default; the disk-full fault needs root,
    /// for a tmpfs, and is left out without it).
    pub fault_kinds: Vec<FaultKind>,
    /// The `captions` binary to serve with.
    pub captions_bin: PathBuf,
    /// The seed of every random choice (the fault plan, each client's choices).
    pub seed: u64,
    /// Where the clips, downloads and the processes' logs go; `None`: a temporary folder,
    /// kept only when the soak found problems.
    pub log_dir: Option<PathBuf>,
}

impl SoakOptions {
    /// An hour, 8 clients, faults on, a seed from the clock, serving with `captions_bin`.
    pub fn new(captions_bin: &Path) -> Self {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| u64::from(d.subsec_nanos()) ^ d.as_secs());
        Self {
            minutes: 60.0,
            clients: 8,
            faults: true,
            fault_kinds: FaultKind::ALL.to_vec(),
            captions_bin: captions_bin.to_owned(),
            seed,
            log_dir: None,
        }
    }
}

/// A small deterministic generator (SplitMix64): the soak's choices repeat with its seed.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        #[allow(
            clippy::cast_possible_truncation,
            reason = "the remainder is below n, a usize"
        )]
        let value = (self.next_u64() % n.max(1) as u64) as usize;
        value
    }

    /// A number in `low..high`.
    pub(crate) fn range(&mut self, low: f64, high: f64) -> f64 {
        #[allow(clippy::cast_precision_loss, reason = "53 random bits")]
        let unit = (self.next_u64() >> 11) as f64 / (1_u64 << 53) as f64;
        low + (high - low) * unit
    }

    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// Seconds since the soak's load began.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock(Instant);

impl Clock {
    pub(crate) fn now_s(self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
}

/// A fault as it happened: from `start_s` to `end_s` (`None` while it lasts).
#[derive(Debug, Clone)]
pub(crate) struct Window {
    pub(crate) kind: Kind,
    pub(crate) start_s: f64,
    pub(crate) end_s: Option<f64>,
    /// What was done, or why it failed.
    pub(crate) detail: Result<String, String>,
}

/// A process's resident memory at one moment.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RssSample {
    pub(crate) t_s: f64,
    pub(crate) process: usize,
    pub(crate) pid: u32,
    pub(crate) rss_kib: u64,
}

/// What the clients, the injector and the sampler record as they go.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) clock: Clock,
    /// When the load ends (clients start no new round after it).
    pub(crate) load_s: f64,
    /// Each process's `http://127.0.0.1:PORT`.
    pub(crate) bases: Vec<String>,
    pub(crate) hook_url: String,
    pub(crate) windows: Mutex<Vec<Window>>,
    pub(crate) exchanges: Mutex<Vec<Exchange>>,
    pub(crate) jobs: Mutex<Vec<SubmittedJob>>,
    pub(crate) outputs: Mutex<Vec<Output>>,
    pub(crate) iterations: Mutex<Vec<Iteration>>,
    pub(crate) rss: Mutex<Vec<RssSample>>,
    /// Problems seen as they happened.
    pub(crate) problems: Mutex<Vec<String>>,
    /// Things worth knowing that are no problem.
    pub(crate) notes: Mutex<Vec<String>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub(crate) fn problem(&self, what: String) {
        lock(&self.problems).push(what);
    }

    pub(crate) fn note(&self, what: String) {
        lock(&self.notes).push(what);
    }

    fn open_window(&self, kind: Kind) -> usize {
        let mut windows = lock(&self.windows);
        windows.push(Window {
            kind,
            start_s: self.clock.now_s(),
            end_s: None,
            detail: Ok(String::new()),
        });
        windows.len() - 1
    }

    fn close_window(&self, index: usize, detail: Result<String, String>) {
        let now_s = self.clock.now_s();
        if let Some(window) = lock(&self.windows).get_mut(index) {
            window.end_s = Some(now_s);
            window.detail = detail;
        }
    }

    /// Whether an exchange from `start_s` to `end_s` met a fault (or its grace time).
    pub(crate) fn in_fault(&self, start_s: f64, end_s: f64) -> bool {
        lock(&self.windows)
            .iter()
            .any(|w| w.overlaps(start_s, end_s, GRACE_S))
    }

    /// When the last fault ended (0 before any); `None` while one lasts.
    pub(crate) fn faults_ended_s(&self) -> Option<f64> {
        lock(&self.windows)
            .iter()
            .try_fold(0.0_f64, |last, w| w.end_s.map(|end| last.max(end)))
    }
}

/// The service processes: each slot's running process (`None` while it is down) and how to
/// start it again.
#[derive(Debug)]
pub(crate) struct Cluster {
    services: Mutex<Vec<Option<Service>>>,
    commands: Vec<ServeCommand>,
    /// Every process started: its slot, pid and start (seconds into the run).
    started: Mutex<Vec<(usize, u32, f64)>>,
    clock: Clock,
}

impl Cluster {
    fn take(&self, slot: usize) -> Option<Service> {
        lock(&self.services).get_mut(slot).and_then(Option::take)
    }

    /// Starts slot `slot`'s process again after `why`, on its port; returns its pid.
    fn restart(&self, slot: usize, why: &str) -> Result<u32, String> {
        let command = &self.commands[slot];
        if let Some(log) = &command.log {
            use std::io::Write as _;
            if let Ok(mut file) = std::fs::OpenOptions::new().append(true).open(log) {
                let _ = writeln!(
                    file,
                    "=== {} {why}: started again",
                    faults::clock_label(self.clock.now_s())
                );
            }
        }
        let service = command.start()?;
        let pid = service.pid();
        lock(&self.started).push((slot, pid, self.clock.now_s()));
        lock(&self.services)[slot] = Some(service);
        Ok(pid)
    }

    /// Every running process's slot and pid.
    fn pids(&self) -> Vec<(usize, u32)> {
        lock(&self.services)
            .iter()
            .enumerate()
            .filter_map(|(slot, s)| s.as_ref().map(|s| (slot, s.pid())))
            .collect()
    }

    /// Slots whose process exited without being killed here, with its status.
    fn exited(&self) -> Vec<(usize, u32, String)> {
        let mut services = lock(&self.services);
        let mut gone = Vec::new();
        for (slot, service) in services.iter_mut().enumerate() {
            if let Some(running) = service
                && let Some(status) = running.exited()
            {
                gone.push((slot, running.pid(), status.to_string()));
                *service = None;
            }
        }
        gone
    }
}

/// Runs a soak as `options` say, and reports. `Err` when it could not be set up (a server
/// missing, a clip that cannot be made); what the soak finds is in the report.
pub fn run(options: &SoakOptions) -> Result<SoakReport, String> {
    if options.clients == 0 || options.minutes.is_nan() || options.minutes <= 0.0 {
        return Err("a soak needs at least one client and a positive number of minutes".into());
    }
    if !options.captions_bin.is_file() {
        return Err(format!(
            "no captions binary at {} (cargo build -p caption-cli, or set CAPTIONS_BIN)",
            options.captions_bin.display()
        ));
    }
    let (scratch, logs) = match &options.log_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            (None, dir.clone())
        }
        None => {
            let dir = tempfile::Builder::new()
                .prefix("captions-soak-")
                .tempdir()
                .map_err(|e| format!("a folder for the soak: {e}"))?;
            let path = dir.path().to_owned();
            (Some(dir), path)
        }
    };
    let clips_dir = logs.join("clips");
    std::fs::create_dir_all(&clips_dir).map_err(|e| format!("{}: {e}", clips_dir.display()))?;
    let clips = clips::make_clips(&clips_dir).map_err(|e| format!("making the clips: {e:#}"))?;

    let postgres = PostgresServer::start()?;
    let database_url = postgres.database("captions")?;
    let s3 = S3sServer::start("soak-access-key", "soak-secret-key", "soak")?;
    let mut setup_notes = Vec::new();
    let disk = match Tmpfs::mount(DISK_MIB) {
        Ok(disk) => Some(disk),
        Err(why) => {
            setup_notes.push(format!(
                "the data folders are on the ordinary disk, and it is never filled: {why}"
            ));
            None
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("a tokio runtime: {e}"))?;
    let receiver = runtime
        .block_on(crate::webhook::Receiver::start())
        .map_err(|e| format!("the webhook receiver: {e}"))?;

    let keys: Vec<String> = (0..options.clients)
        .map(|i| format!("soak-key-{i}"))
        .collect();
    let mut env: Vec<(String, String)> = s3
        .service_env()
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    env.extend(
        [
            ("CAPTIONS_API_KEYS", keys.join(",")),
            ("CAPTIONS_DATABASE_URL", database_url.clone()),
            ("CAPTIONS_WORKERS", "1".to_owned()),
            ("CAPTIONS_THREADS_PER_JOB", "1".to_owned()),
            ("CAPTIONS_GENERATE_SLOTS", "2".to_owned()),
            ("CAPTIONS_ENCODER_THREADS", "1".to_owned()),
            ("CAPTIONS_LEASE_S", "10".to_owned()),
            ("CAPTIONS_MAX_ATTEMPTS", report::MAX_ATTEMPTS.to_string()),
            ("CAPTIONS_WEBHOOK_SECRET", WEBHOOK_SECRET.to_owned()),
            ("CAPTIONS_WEBHOOK_ALLOW_PRIVATE", "true".to_owned()),
            ("CAPTIONS_WEBHOOK_RETRY_BASE_MS", "500".to_owned()),
            // whisper.cpp says a dozen lines a job at info.
            ("RUST_LOG", "info,caption_whisper=warn".to_owned()),
        ]
        .map(|(k, v)| (k.to_owned(), v)),
    );
    let data_root = faults::data_root(disk.as_ref(), &logs).to_owned();
    let mut commands = Vec::new();
    for slot in 0..PROCESSES {
        let data_dir = data_root.join(format!("data-{slot}"));
        std::fs::create_dir_all(&data_dir).map_err(|e| format!("{}: {e}", data_dir.display()))?;
        let mut command = ServeCommand::new(&options.captions_bin, &data_dir);
        command.port = Some(crate::free_port().map_err(|e| format!("a free port: {e}"))?);
        command.env.clone_from(&env);
        command.log = Some(logs.join(format!("serve-{slot}.log")));
        commands.push(command);
    }
    let mut services = Vec::new();
    for command in &commands {
        services.push(Some(command.start()?));
    }
    let bases: Vec<String> = services
        .iter()
        .flatten()
        .map(|s| s.base().to_owned())
        .collect();

    // The load's clock starts now: everything above was set-up.
    let clock = Clock(Instant::now());
    let load_s = options.minutes * 60.0;
    let shared = Arc::new(Shared {
        clock,
        load_s,
        bases,
        hook_url: receiver.url().to_owned(),
        windows: Mutex::default(),
        exchanges: Mutex::default(),
        jobs: Mutex::default(),
        outputs: Mutex::default(),
        iterations: Mutex::default(),
        rss: Mutex::default(),
        problems: Mutex::default(),
        notes: Mutex::default(),
    });
    let cluster = Arc::new(Cluster {
        started: Mutex::new(
            services
                .iter()
                .enumerate()
                .filter_map(|(slot, s)| Some((slot, s.as_ref()?.pid(), 0.0)))
                .collect(),
        ),
        services: Mutex::new(services),
        commands,
        clock,
    });
    for note in setup_notes {
        shared.note(note);
    }

    let mut rng = Rng::new(options.seed);
    let kinds: Vec<Kind> = Kind::ALL
        .into_iter()
        .filter(|kind| options.fault_kinds.contains(kind))
        .filter(|&kind| kind != Kind::DiskFull || disk.is_some())
        .collect();
    let plan = if options.faults {
        faults::plan(load_s, &kinds, &mut rng)
    } else {
        Vec::new()
    };
    let stop = Arc::new(AtomicBool::new(false));
    let backends = Backends { postgres, s3, disk };
    let injector = {
        let (cluster, shared, stop) =
            (Arc::clone(&cluster), Arc::clone(&shared), Arc::clone(&stop));
        let plan = plan.clone();
        std::thread::spawn(move || faults::inject(&plan, backends, &cluster, &shared, &stop))
    };
    let sampler = {
        let (cluster, shared, stop) =
            (Arc::clone(&cluster), Arc::clone(&shared), Arc::clone(&stop));
        // About 120 samples a run, at least one each 5 s.
        let every = Duration::from_secs_f64((load_s / 120.0).max(5.0));
        std::thread::spawn(move || sample(&cluster, &shared, &stop, every))
    };

    let clips = Arc::new(clips);
    let downloads = logs.join("downloads");
    std::fs::create_dir_all(&downloads).map_err(|e| format!("{}: {e}", downloads.display()))?;
    let drained = runtime.block_on(client::run_clients(
        Arc::clone(&shared),
        Arc::clone(&clips),
        keys,
        &downloads,
        options.seed,
    ));
    let load_end_s = shared.clock.now_s();

    let backends = match injector.join() {
        Ok(backends) => backends,
        Err(_) => return Err("the fault injector panicked".into()),
    };
    let final_state = runtime.block_on(report::collect(&database_url, &receiver, &backends.s3));
    stop.store(true, Ordering::Relaxed);
    if sampler.join().is_err() {
        shared.problem("the RSS sampler panicked".into());
    }
    let mut stops = Vec::new();
    for slot in 0..PROCESSES {
        match cluster.take(slot) {
            Some(service) => {
                let pid = service.pid();
                stops.push((slot, pid, service.terminate()));
            }
            None => stops.push((slot, 0, Err("not running at the end".to_owned()))),
        }
    }
    drop(backends);
    let started = lock(&cluster.started).clone();
    let mut report = report::build(
        options,
        &shared,
        &plan,
        &kinds,
        final_state,
        report::RunFacts {
            load_end_s,
            drained,
            started,
            stops,
            clips: clips.iter().map(|c| (c.name, c.duration_s)).collect(),
            logs: logs.clone(),
        },
    );
    match scratch {
        Some(dir) if !report.problems().is_empty() => {
            let kept = dir.keep();
            report.set_logs(kept, true);
        }
        Some(dir) => {
            report.set_logs(dir.path().to_owned(), false);
        }
        None => report.set_logs(logs, true),
    }
    Ok(report)
}

/// Every `every`, the RSS of each process (from /proc), and a process that exited on its own is
/// a problem (and started again, so that the run goes on).
fn sample(cluster: &Cluster, shared: &Shared, stop: &AtomicBool, every: Duration) {
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        if Instant::now() >= next {
            next += every;
            let t_s = shared.clock.now_s();
            for (process, pid) in cluster.pids() {
                if let Some(rss_kib) = rss_kib(pid) {
                    lock(&shared.rss).push(RssSample {
                        t_s,
                        process,
                        pid,
                        rss_kib,
                    });
                }
            }
            for (slot, pid, status) in cluster.exited() {
                shared.problem(format!(
                    "process {slot} (pid {pid}) exited on its own at {}: {status}",
                    faults::clock_label(t_s)
                ));
                if let Err(e) = cluster.restart(slot, "exited on its own") {
                    shared.problem(format!("process {slot} could not start again: {e}"));
                }
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `VmRSS` of `pid` from /proc, KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
