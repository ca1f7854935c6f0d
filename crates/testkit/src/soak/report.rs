//! The soak's accounting: what the job store, the bucket and the webhook receiver hold at the
//! end, set against what the clients were told, and the report.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::client::{Endpoint, JobKind, OutputProblem, Stop};
use super::faults::{FaultKind, PlannedFault, clock_label};
use super::{EVENT_LIMIT, RssSample, Shared, SoakOptions, WEBHOOK_SECRET, Window, lock};
use crate::S3sServer;
use crate::webhook::{Hit, Receiver, verify_signature};

mod judge;
mod render;

use judge::{judge_outputs, judge_row, judge_rss, judge_webhooks};
use render::percentile;

/// Claims of a job before it fails with `retries_exhausted` (`CAPTIONS_MAX_ATTEMPTS`).
pub(crate) const MAX_ATTEMPTS: i32 = 3;
/// Times a job failing on a passing backend fault is queued again before it fails.
const PASSING_RETRIES: i32 = 12;
/// Error codes docs/http.md and docs/operations.md give.
const DOCUMENTED_CODES: &[&str] = &[
    "unauthorized",
    "malformed_json",
    "invalid_request",
    "not_found",
    "too_large",
    "busy",
    "no_audio",
    "no_video",
    "not_a_video",
    "unreadable_input",
    "input_too_large",
    "unsupported_language",
    "already_finished",
    "unavailable",
    "disk_full",
    "internal",
    "cancelled",
    "retries_exhausted",
];

/// One row of the job store.
#[derive(Debug, Clone)]
pub(crate) struct JobRow {
    id: String,
    kind: String,
    status: String,
    attempts: i32,
    retries: i32,
    error_code: Option<String>,
    webhook_url: Option<String>,
    /// The job's input: for a delivery, the id of the job it announces.
    input: String,
    /// A background generate's output key.
    output: Option<String>,
}

impl JobRow {
    fn ended(&self) -> bool {
        self.status == "COMPLETED" || self.status == "FAILED"
    }
}

/// What the servers hold once the rounds are over.
#[derive(Debug)]
pub(crate) struct FinalState {
    rows: Vec<JobRow>,
    hits: Vec<Hit>,
    /// Object keys under `outputs/` in the bucket.
    bucket_outputs: Vec<String>,
    database_error: Option<String>,
}

/// Waits (up to [`EVENT_LIMIT`]) until every job has ended and every event has arrived, then
/// reads the job store, the receiver and the bucket.
pub(crate) async fn collect(database_url: &str, receiver: &Receiver, s3: &S3sServer) -> FinalState {
    let deadline = Instant::now() + EVENT_LIMIT;
    loop {
        let rows = job_rows(database_url).await;
        let hits = receiver.hits();
        let settled = rows.as_ref().is_ok_and(|rows| settled(rows, &hits));
        if settled || Instant::now() > deadline {
            let bucket_outputs = bucket_outputs(s3);
            return match rows {
                Ok(rows) => FinalState {
                    rows,
                    hits,
                    bucket_outputs,
                    database_error: None,
                },
                Err(e) => FinalState {
                    rows: Vec::new(),
                    hits,
                    bucket_outputs,
                    database_error: Some(e),
                },
            };
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// Every job and delivery ended, and every job with a webhook announced.
fn settled(rows: &[JobRow], hits: &[Hit]) -> bool {
    let announced: BTreeSet<String> = hits
        .iter()
        .filter_map(|h| h.json()["job_id"].as_str().map(str::to_owned))
        .collect();
    rows.iter().all(|row| {
        row.ended()
            && (row.kind == "webhook" || row.webhook_url.is_none() || announced.contains(&row.id))
    })
}

async fn job_rows(database_url: &str) -> Result<Vec<JobRow>, String> {
    let (db, connection) = tokio_postgres::connect(database_url, tokio_postgres::NoTls)
        .await
        .map_err(|e| format!("connecting to the job store: {e}"))?;
    let connection = tokio::spawn(connection);
    let rows = db
        .query(
            "SELECT id, kind, status, attempts, retries, error_code, webhook_url, input,
                    payload->>'output'
             FROM caption_jobs",
            &[],
        )
        .await
        .map_err(|e| format!("reading the job store: {e}"))?;
    drop(db);
    let _ = connection.await;
    Ok(rows
        .iter()
        .map(|row| JobRow {
            id: row.get(0),
            kind: row.get(1),
            status: row.get(2),
            attempts: row.get(3),
            retries: row.get(4),
            error_code: row.get(5),
            webhook_url: row.get(6),
            input: row.get(7),
            output: row.get(8),
        })
        .collect())
}

/// The keys of the objects s3s-fs holds under `outputs/` (each object is a file named by its
/// key under the bucket's folder).
fn bucket_outputs(s3: &S3sServer) -> Vec<String> {
    let bucket = s3.object_file("");
    let mut keys = Vec::new();
    let mut folders = vec![bucket.join("outputs")];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if let Ok(key) = path.strip_prefix(&bucket)
                && !key
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            {
                keys.push(key.to_string_lossy().into_owned());
            }
        }
    }
    keys.sort();
    keys
}

/// Facts of the run beside what `Shared` recorded.
#[derive(Debug)]
pub(crate) struct RunFacts {
    pub(crate) load_end_s: f64,
    /// Whether every round finished within the drain.
    pub(crate) drained: bool,
    /// Every process started: slot, pid, start (seconds into the run).
    pub(crate) started: Vec<(usize, u32, f64)>,
    /// How each process stopped at the end: slot, pid, the graceful stop's outcome.
    pub(crate) stops: Vec<(usize, u32, Result<(), String>)>,
    pub(crate) clips: Vec<(&'static str, f64)>,
    pub(crate) logs: PathBuf,
}

/// Jobs of one kind.
#[derive(Debug, Default, Clone)]
struct JobTally {
    submitted: usize,
    completed: usize,
    failed: BTreeMap<String, usize>,
    unfinished: usize,
    unannounced: usize,
}

/// What a soak found. `Display` prints it all; [`SoakReport::problems`] is what fails it.
#[derive(Debug, Clone)]
pub struct SoakReport {
    minutes: f64,
    clients: usize,
    faults_on: bool,
    seed: u64,
    load_end_s: f64,
    end_s: f64,
    logs: PathBuf,
    logs_kept: bool,
    clips: Vec<(&'static str, f64)>,
    windows: Vec<Window>,
    planned: usize,
    kinds: Vec<FaultKind>,
    rounds: usize,
    rounds_complete: usize,
    rounds_job_failed: usize,
    rounds_sync: usize,
    rounds_async: usize,
    requests: BTreeMap<Endpoint, BTreeMap<String, usize>>,
    latency: Vec<(Endpoint, usize, f64, f64, f64, f64)>,
    busy_retries: usize,
    fault_retries: usize,
    no_answer_retries: usize,
    /// Form uploads the bucket answered with a 400 saying it could not read the body, sent again.
    body_unread_retries: usize,
    jobs: BTreeMap<&'static str, JobTally>,
    claimed_again: usize,
    sync_stored: usize,
    /// Synchronous generates answered with an error to keep (not retried), by status and code.
    sync_failed: BTreeMap<String, usize>,
    webhooks: WebhookTally,
    outputs: OutputTally,
    rss: Vec<RssSample>,
    rss_verdicts: Vec<String>,
    processes: Vec<(usize, u32, f64)>,
    notes: Vec<String>,
    problems: Vec<String>,
}

#[derive(Debug, Default, Clone)]
struct WebhookTally {
    expected: usize,
    exactly_once: usize,
    redelivered: usize,
    missing: usize,
    several_events: usize,
    over_tried: usize,
    bad_signature: usize,
    unknown_job: usize,
    received: usize,
}

#[derive(Debug, Default, Clone)]
struct OutputTally {
    /// Each output that failed its check: its key and what was wrong.
    failures: Vec<(String, String)>,
    answered: usize,
    checked: usize,
    word_frames: usize,
    /// The smallest share of caption pixels on a word's frame, over every output.
    least_share: f64,
    missing: usize,
    probe_failed: usize,
    pixels_failed: usize,
    in_bucket: usize,
    orphaned: usize,
    duplicates: usize,
}

impl SoakReport {
    /// What must not have happened, one line each; empty when the soak passed.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// How many faults of `kind` were injected.
    pub fn faults_injected(&self, kind: FaultKind) -> usize {
        self.windows
            .iter()
            .filter(|w| w.kind == kind && w.detail.is_ok())
            .count()
    }

    /// The kinds of fault the run could inject (those asked for that this machine permits).
    pub fn fault_kinds(&self) -> &[FaultKind] {
        &self.kinds
    }

    /// The folder holding the clips, the processes' logs and failed downloads.
    pub fn logs(&self) -> &Path {
        &self.logs
    }

    pub(crate) fn set_logs(&mut self, logs: PathBuf, kept: bool) {
        self.logs = logs;
        self.logs_kept = kept;
    }
}

/// Sets everything recorded against the final state and lists the problems.
pub(crate) fn build(
    options: &SoakOptions,
    shared: &Shared,
    plan: &[PlannedFault],
    kinds: &[FaultKind],
    state: FinalState,
    facts: RunFacts,
) -> SoakReport {
    let mut problems: Vec<String> = lock(&shared.problems).clone();
    let windows = lock(&shared.windows).clone();
    let exchanges = lock(&shared.exchanges).clone();
    let submitted = lock(&shared.jobs).clone();
    let outputs = lock(&shared.outputs).clone();
    let iterations = lock(&shared.iterations).clone();
    let rss = lock(&shared.rss).clone();

    for window in &windows {
        if let Err(why) = &window.detail {
            problems.push(format!(
                "the {} fault at {} went wrong: {why}",
                window.kind,
                clock_label(window.start_s)
            ));
        }
    }
    if options.faults && options.minutes >= 3.0 {
        for &kind in kinds {
            if !windows.iter().any(|w| w.kind == kind && w.detail.is_ok()) {
                problems.push(format!("no {kind} fault was injected"));
            }
        }
    }

    // Rounds: the same problem in several rounds is one line naming them.
    let mut rounds_complete = 0;
    let mut rounds_job_failed = 0;
    let mut round_problems: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for round in &iterations {
        match (&round.end_s, &round.stopped) {
            (None, _) => problems.push(format!(
                "client {} round {} ({}, started at {}) still running {} min after the load ended",
                round.client,
                round.round,
                round.clip,
                clock_label(round.start_s),
                super::DRAIN_LIMIT.as_secs() / 60
            )),
            (Some(_), None) => rounds_complete += 1,
            (Some(_), Some(Stop::JobFailed(_))) => rounds_job_failed += 1,
            (Some(_), Some(Stop::Problem(what))) => {
                round_problems
                    .entry(what.as_str())
                    .or_default()
                    .push(format!(
                        "client {} round {} {} {}",
                        round.client,
                        round.round,
                        round.clip,
                        if round.asynchronous { "async" } else { "sync" }
                    ));
            }
        }
    }
    for (what, rounds) in round_problems {
        problems.push(format!(
            "{} ({}): {what}",
            rounds_label(rounds.len()),
            rounds.join(", ")
        ));
    }
    if !facts.drained {
        problems.push("rounds were still running when the drain time ran out".to_owned());
    }

    // Requests.
    let mut requests: BTreeMap<Endpoint, BTreeMap<String, usize>> = BTreeMap::new();
    let mut latencies: BTreeMap<Endpoint, Vec<f64>> = BTreeMap::new();
    // (endpoint, answer, during a fault) → (how many, the first's time)
    let mut unexpected: BTreeMap<(Endpoint, String, bool), (usize, f64)> = BTreeMap::new();
    let (mut busy_retries, mut fault_retries, mut no_answer_retries) = (0, 0, 0);
    let mut body_unread_retries = 0;
    let mut sync_failed: BTreeMap<String, usize> = BTreeMap::new();
    for exchange in &exchanges {
        let status = exchange
            .status
            .map_or_else(|| "no answer".to_owned(), |s| s.to_string());
        *requests
            .entry(exchange.endpoint)
            .or_default()
            .entry(status.clone())
            .or_default() += 1;
        if exchange.endpoint == Endpoint::GenerateSync
            && let Some(status @ 400..) = exchange.status
            && !(status == 429 || (matches!(status, 503 | 507) && exchange.retry_after))
        {
            *sync_failed
                .entry(format!("{status} {}", exchange.code))
                .or_default() += 1;
        }
        match exchange.status {
            Some(200..=299) => latencies
                .entry(exchange.endpoint)
                .or_default()
                .push((exchange.end_s - exchange.start_s) * 1000.0),
            Some(429) => busy_retries += 1,
            Some(_) if exchange.body_unread => body_unread_retries += 1,
            Some(status @ 500..) => {
                let expected = exchange.retry_after
                    && shared.in_fault(exchange.start_s, exchange.end_s)
                    && matches!(
                        (status, exchange.code.as_str()),
                        (503, "unavailable") | (507, "disk_full")
                    );
                if expected {
                    fault_retries += 1;
                } else {
                    let during = shared.in_fault(exchange.start_s, exchange.end_s);
                    let entry = unexpected
                        .entry((
                            exchange.endpoint,
                            format!("{status} {}", exchange.code),
                            during,
                        ))
                        .or_insert((0, exchange.start_s));
                    entry.0 += 1;
                }
            }
            None => no_answer_retries += 1,
            _ => {}
        }
    }
    for ((endpoint, answer, during), (count, first_s)) in &unexpected {
        let when = if *during {
            "during a fault, where only a 503 `unavailable` or 507 `disk_full` with Retry-After is expected"
        } else {
            "outside the fault windows"
        };
        problems.push(format!(
            "{count} × {answer} from {endpoint} {when} (first at {})",
            clock_label(*first_s)
        ));
    }
    let latency = latencies
        .into_iter()
        .map(|(endpoint, mut ms)| {
            ms.sort_by(f64::total_cmp);
            (
                endpoint,
                ms.len(),
                percentile(&ms, 0.50),
                percentile(&ms, 0.95),
                percentile(&ms, 0.99),
                ms.last().copied().unwrap_or(0.0),
            )
        })
        .collect();

    // Jobs.
    if let Some(e) = &state.database_error {
        problems.push(format!("the job store could not be read at the end: {e}"));
    }
    let rows: HashMap<&str, &JobRow> = state.rows.iter().map(|r| (r.id.as_str(), r)).collect();
    let known: HashMap<&str, JobKind> = submitted.iter().map(|j| (j.id.as_str(), j.kind)).collect();
    let mut jobs: BTreeMap<&'static str, JobTally> = BTreeMap::new();
    // (kind, what went wrong) → the jobs it went wrong for.
    let mut job_problems: JobProblems = BTreeMap::new();
    for job in &submitted {
        let label = kind_label(job.kind);
        let tally = jobs.entry(label).or_default();
        tally.submitted += 1;
        let Some(row) = rows.get(job.id.as_str()) else {
            if state.database_error.is_none() {
                job_problems
                    .entry((label, "accepted but not in the job store: lost".to_owned()))
                    .or_default()
                    .push(format!(
                        "{} (client {} round {})",
                        job.id, job.client, job.round
                    ));
            }
            continue;
        };
        judge_row(row, label, tally, &mut job_problems);
    }
    let lost_creations = iterations
        .iter()
        .flat_map(|i| i.lost_answers.iter())
        .filter(|e| matches!(e, Endpoint::CreateTranscript | Endpoint::GenerateAsync))
        .count();
    let mut unannounced_total = 0;
    for row in state
        .rows
        .iter()
        .filter(|r| r.kind != "webhook" && !known.contains_key(r.id.as_str()))
    {
        let label = if row.kind == "generate" {
            "generate (async)"
        } else {
            "transcript"
        };
        let tally = jobs.entry(label).or_default();
        tally.unannounced += 1;
        unannounced_total += 1;
        judge_row(row, label, tally, &mut job_problems);
    }
    for ((label, why), ids) in job_problems {
        problems.push(format!(
            "{} {label} job{} {why}: {}",
            ids.len(),
            if ids.len() == 1 { "" } else { "s" },
            ids.join(", ")
        ));
    }
    if unannounced_total > lost_creations {
        problems.push(format!(
            "{unannounced_total} jobs in the store that no client was told of, but only {lost_creations} answers to job submissions were lost"
        ));
    }
    let claimed_again = state
        .rows
        .iter()
        .filter(|r| r.kind != "webhook" && r.attempts > 1)
        .count();

    let webhooks = judge_webhooks(&state, &mut problems);
    let outputs_tally = judge_outputs(&state, &outputs, &iterations, &mut problems);
    let processes = facts.started.clone();
    let rss_verdicts = judge_rss(options, &rss, &processes, facts.load_end_s, &mut problems);
    for (slot, pid, stopped) in &facts.stops {
        if let Err(why) = stopped {
            problems.push(format!("process {slot} (pid {pid}) at the end: {why}"));
        }
    }

    SoakReport {
        minutes: options.minutes,
        clients: options.clients,
        faults_on: options.faults,
        seed: options.seed,
        load_end_s: facts.load_end_s,
        end_s: shared.clock.now_s(),
        logs: facts.logs,
        logs_kept: true,
        clips: facts.clips,
        windows,
        planned: plan.len(),
        kinds: if options.faults {
            kinds.to_vec()
        } else {
            Vec::new()
        },
        rounds: iterations.len(),
        rounds_complete,
        rounds_job_failed,
        rounds_sync: iterations.iter().filter(|i| !i.asynchronous).count(),
        rounds_async: iterations.iter().filter(|i| i.asynchronous).count(),
        requests,
        latency,
        busy_retries,
        fault_retries,
        no_answer_retries,
        body_unread_retries,
        jobs,
        claimed_again,
        sync_stored: outputs.iter().filter(|o| !o.asynchronous).count(),
        sync_failed,
        webhooks,
        outputs: outputs_tally,
        rss,
        rss_verdicts,
        processes,
        notes: lock(&shared.notes).clone(),
        problems,
    }
}

fn kind_label(kind: JobKind) -> &'static str {
    match kind {
        JobKind::Transcript => "transcript",
        JobKind::Generate => "generate (async)",
    }
}

/// Jobs that went wrong, by their kind and what went wrong.
type JobProblems = BTreeMap<(&'static str, String), Vec<String>>;

/// "1 round", "3 rounds".
fn rounds_label(n: usize) -> String {
    if n == 1 {
        "1 round".to_owned()
    } else {
        format!("{n} rounds")
    }
}

#[cfg(test)]
mod tests {
    use super::percentile;

    #[test]
    fn percentiles_are_nearest_rank() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        assert!((percentile(&values, 0.5) - 50.0).abs() < f64::EPSILON);
        assert!((percentile(&values, 0.99) - 99.0).abs() < f64::EPSILON);
        assert!((percentile(&[7.0], 0.95) - 7.0).abs() < f64::EPSILON);
        assert!(percentile(&[], 0.5).abs() < f64::EPSILON);
    }
}
