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

/// Tallies a job's end, and the problem when it did not end, or failed as it must not.
fn judge_row(row: &JobRow, label: &'static str, tally: &mut JobTally, problems: &mut JobProblems) {
    match row.status.as_str() {
        "COMPLETED" => tally.completed += 1,
        "FAILED" => {
            let code = row.error_code.clone().unwrap_or_default();
            *tally.failed.entry(code.clone()).or_default() += 1;
            let documented = DOCUMENTED_CODES.contains(&code.as_str());
            let passing = matches!(
                code.as_str(),
                "unavailable" | "storage_unavailable" | "disk_full"
            );
            let why = if passing && row.retries < PASSING_RETRIES {
                Some(format!(
                    "failed with `{code}` before its {PASSING_RETRIES} retries were used"
                ))
            } else if code == "retries_exhausted" && row.attempts < MAX_ATTEMPTS {
                Some(format!(
                    "failed with `retries_exhausted` before its {MAX_ATTEMPTS} claims"
                ))
            } else if !documented {
                Some(format!("failed with the undocumented code `{code}`"))
            } else if !passing && code != "retries_exhausted" {
                Some(format!("failed with `{code}` on a valid input"))
            } else {
                None
            };
            if let Some(why) = why {
                problems
                    .entry((label, why))
                    .or_default()
                    .push(row.id.clone());
            }
        }
        other => {
            tally.unfinished += 1;
            problems
                .entry((label, format!("still {other} at the end")))
                .or_default()
                .push(format!("{} (claimed {} times)", row.id, row.attempts));
        }
    }
}

/// Each job with a webhook: one delivery, one event, received at least once and no more
/// often than it was tried (more than once only when its delivery was claimed again after a
/// process died), with the job's end and a valid signature.
fn judge_webhooks(state: &FinalState, problems: &mut Vec<String>) -> WebhookTally {
    let mut tally = WebhookTally {
        received: state.hits.len(),
        ..WebhookTally::default()
    };
    let mut hits_by_job: HashMap<String, Vec<&Hit>> = HashMap::new();
    for hit in &state.hits {
        let event = hit.json();
        let job = event["job_id"].as_str().unwrap_or_default().to_owned();
        hits_by_job.entry(job).or_default().push(hit);
        if !verify_signature(WEBHOOK_SECRET, &hit.signature, &hit.body)
            || hit.event_id != event["id"].as_str().unwrap_or_default()
        {
            tally.bad_signature += 1;
        }
    }
    if tally.bad_signature > 0 {
        problems.push(format!(
            "{} webhook requests with a wrong signature or event id header",
            tally.bad_signature
        ));
    }
    let mut deliveries: HashMap<&str, Vec<&JobRow>> = HashMap::new();
    for row in state.rows.iter().filter(|r| r.kind == "webhook") {
        deliveries.entry(row.input.as_str()).or_default().push(row);
    }
    let jobs: HashMap<&str, &JobRow> = state
        .rows
        .iter()
        .filter(|r| r.kind != "webhook")
        .map(|r| (r.id.as_str(), r))
        .collect();
    for job in jobs
        .values()
        .filter(|j| j.webhook_url.is_some() && j.ended())
    {
        tally.expected += 1;
        let queued = deliveries.get(job.id.as_str()).cloned().unwrap_or_default();
        let hits = hits_by_job.get(&job.id).cloned().unwrap_or_default();
        let events: BTreeSet<String> = hits
            .iter()
            .map(|h| h.json()["id"].as_str().unwrap_or_default().to_owned())
            .collect();
        if queued.len() != 1 {
            problems.push(format!(
                "job {}: {} deliveries queued, one expected",
                job.id,
                queued.len()
            ));
        }
        match events.len() {
            0 => {
                tally.missing += 1;
                problems.push(format!(
                    "job {} ({}) ended {} but its webhook event never arrived",
                    job.id, job.kind, job.status
                ));
                continue;
            }
            1 => {}
            n => {
                tally.several_events += 1;
                problems.push(format!("job {}: {n} different events received", job.id));
                continue;
            }
        }
        let event = hits[0].json();
        let expected_type = format!(
            "{}.{}",
            if job.kind == "generate" {
                "generate"
            } else {
                "transcript"
            },
            if job.status == "COMPLETED" {
                "completed"
            } else {
                "failed"
            }
        );
        if event["status"] != job.status.as_str() || event["type"] != expected_type.as_str() {
            problems.push(format!(
                "job {} ended {} but its event says {} {}",
                job.id, job.status, event["type"], event["status"]
            ));
        }
        let delivery = queued.iter().find(|d| events.contains(&d.id)).copied();
        let tries = delivery.map_or(0, |d| d.attempts + d.retries);
        let claims = delivery.map_or(0, |d| d.attempts);
        let received = i32::try_from(hits.len()).unwrap_or(i32::MAX);
        if received == 1 {
            tally.exactly_once += 1;
        } else if received <= tries && claims > 1 {
            tally.redelivered += 1;
        } else {
            tally.over_tried += 1;
            problems.push(format!(
                "job {}: its event received {received} times, for {tries} tries over {claims} claims",
                job.id
            ));
        }
    }
    for (job, hits) in &hits_by_job {
        if !jobs.contains_key(job.as_str()) {
            tally.unknown_job += hits.len();
            problems.push(format!(
                "{} webhook events for job {job:?}, which is not in the job store",
                hits.len()
            ));
        }
    }
    tally
}

/// Outputs the clients were given against the bucket: each one there and sound, and nothing in
/// the bucket that no answer named, except outputs of synchronous generates whose answer was
/// lost (their process killed), which no client can know of.
fn judge_outputs(
    state: &FinalState,
    outputs: &[super::client::Output],
    iterations: &[super::client::Iteration],
    problems: &mut Vec<String>,
) -> OutputTally {
    let mut tally = OutputTally {
        answered: outputs.len(),
        in_bucket: state.bucket_outputs.len(),
        least_share: f64::INFINITY,
        ..OutputTally::default()
    };
    for output in outputs {
        match &output.check {
            Ok(checked) => {
                tally.checked += 1;
                tally.word_frames += checked.word_frames;
                tally.least_share = tally.least_share.min(checked.least_share);
            }
            Err(problem) => {
                let detail = match problem {
                    OutputProblem::Missing(why) => {
                        tally.missing += 1;
                        format!("missing: {why}")
                    }
                    OutputProblem::Probe(why) => {
                        tally.probe_failed += 1;
                        format!("ffprobe: {why}")
                    }
                    OutputProblem::Pixels(why) => {
                        tally.pixels_failed += 1;
                        format!("caption pixels: {why}")
                    }
                };
                tally.failures.push((output.key.clone(), detail));
            }
        }
    }
    let mut named: BTreeSet<&str> = outputs.iter().map(|o| o.key.as_str()).collect();
    for row in state.rows.iter().filter(|r| r.kind == "generate") {
        if let Some(output) = &row.output {
            named.insert(output.as_str());
            if row.status == "COMPLETED" && !state.bucket_outputs.contains(output) {
                problems.push(format!(
                    "generate job {} COMPLETED but its output {output} is not in the bucket",
                    row.id
                ));
            }
        }
    }
    for key in &state.bucket_outputs {
        if named.contains(key.as_str()) {
            continue;
        }
        // `outputs/<uuid>/c<client>-r<round>-<clip stem>-captioned.mp4`
        let name = key.rsplit('/').next().unwrap_or_default();
        let round = name.strip_prefix('c').and_then(|rest| {
            let (client, rest) = rest.split_once("-r")?;
            let (round, _) = rest.split_once('-')?;
            Some((client.parse::<usize>().ok()?, round.parse::<u64>().ok()?))
        });
        let lost = round.is_some_and(|(client, number)| {
            iterations.iter().any(|i| {
                i.client == client
                    && i.round == number
                    && i.lost_answers.contains(&Endpoint::GenerateSync)
            })
        });
        if lost {
            tally.orphaned += 1;
        } else {
            tally.duplicates += 1;
            problems.push(format!(
                "output {key} is in the bucket but no answer named it (a duplicate or stray output)"
            ));
        }
    }
    tally
}

/// In runs of 20 minutes or more: a process's RSS at the end of the load must be at most 110 %
/// of its RSS at minute 10 (of the run, or of its own life when it was started again later).
fn judge_rss(
    options: &SoakOptions,
    rss: &[RssSample],
    processes: &[(usize, u32, f64)],
    load_end_s: f64,
    problems: &mut Vec<String>,
) -> Vec<String> {
    let mut verdicts = Vec::new();
    let slots: BTreeSet<usize> = processes.iter().map(|p| p.0).collect();
    for slot in slots {
        let Some(last) = rss
            .iter()
            .filter(|s| s.process == slot && s.t_s <= load_end_s)
            .max_by(|a, b| a.t_s.total_cmp(&b.t_s))
        else {
            continue;
        };
        let born_s = processes
            .iter()
            .find(|p| p.0 == slot && p.1 == last.pid)
            .map_or(0.0, |p| p.2);
        let reference_s = born_s + 600.0;
        if options.minutes < 20.0 {
            verdicts.push(format!(
                "process {slot}: {} MiB at the end of the load (growth not judged in runs under 20 min)",
                last.rss_kib / 1024
            ));
            continue;
        }
        let Some(reference) = rss
            .iter()
            .filter(|s| s.process == slot && s.pid == last.pid && s.t_s >= reference_s)
            .min_by(|a, b| a.t_s.total_cmp(&b.t_s))
        else {
            verdicts.push(format!(
                "process {slot}: not judged, pid {} started at {} and did not reach its minute 10 before the end",
                last.pid,
                clock_label(born_s)
            ));
            continue;
        };
        if reference.t_s >= last.t_s {
            verdicts.push(format!(
                "process {slot}: not judged, pid {} started at {} lived under 10 min after its minute 10",
                last.pid,
                clock_label(born_s)
            ));
            continue;
        }
        #[allow(clippy::cast_precision_loss, reason = "KiB of a process")]
        let growth = last.rss_kib as f64 / reference.rss_kib.max(1) as f64;
        let verdict = format!(
            "process {slot} (pid {}): {} MiB at {}, {} MiB at {} ({:+.1} %)",
            last.pid,
            reference.rss_kib / 1024,
            clock_label(reference.t_s),
            last.rss_kib / 1024,
            clock_label(last.t_s),
            (growth - 1.0) * 100.0
        );
        if growth > 1.10 {
            problems.push(format!("RSS grew more than 10 %: {verdict}"));
        }
        verdicts.push(verdict);
    }
    verdicts
}

/// The value below which `share` of the sorted `values` lie (nearest rank).
fn percentile(sorted: &[f64], share: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into the list"
    )]
    let rank = ((share * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

impl fmt::Display for SoakReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        self.write(&mut out)?;
        f.write_str(&out)
    }
}

impl SoakReport {
    fn write(&self, out: &mut String) -> fmt::Result {
        writeln!(
            out,
            "soak of captions serve: {} min of load, {} clients, faults {}, seed {}",
            self.minutes,
            self.clients,
            if self.faults_on { "on" } else { "off" },
            self.seed
        )?;
        writeln!(
            out,
            "2 processes over PostgreSQL and s3s-fs; load ended at {}, the run at {} (drain and accounting after the load)",
            clock_label(self.load_end_s),
            clock_label(self.end_s)
        )?;
        let clips: Vec<String> = self
            .clips
            .iter()
            .map(|(name, s)| format!("{name} {s:.1} s"))
            .collect();
        writeln!(out, "clips: {}", clips.join(", "))?;
        writeln!(
            out,
            "logs: {}{}",
            self.logs.display(),
            if self.logs_kept { "" } else { " (removed)" }
        )?;

        writeln!(out, "\nfaults ({} planned):", self.planned)?;
        if self.windows.is_empty() {
            writeln!(out, "  none")?;
        }
        for window in &self.windows {
            let end = window.end_s.map_or_else(|| "…".to_owned(), clock_label);
            let detail = match &window.detail {
                Ok(what) => what.clone(),
                Err(why) => format!("FAILED: {why}"),
            };
            writeln!(
                out,
                "  {} – {}  {:<16} {detail}",
                clock_label(window.start_s),
                end,
                window.kind.name()
            )?;
        }
        let per_kind: Vec<String> = FaultKind::ALL
            .iter()
            .map(|&k| format!("{} {}", k.name(), self.faults_injected(k)))
            .collect();
        writeln!(out, "  injected: {}", per_kind.join(", "))?;

        writeln!(
            out,
            "\nrounds: {} started ({} sync, {} async generates), {} complete, {} ended by a failed job",
            self.rounds,
            self.rounds_sync,
            self.rounds_async,
            self.rounds_complete,
            self.rounds_job_failed
        )?;

        writeln!(
            out,
            "\nrequests by endpoint and status (\"none\": no answer: refused, reset or timed out):"
        )?;
        let statuses: BTreeSet<&String> = self.requests.values().flat_map(BTreeMap::keys).collect();
        write!(out, "  {:<28}", "endpoint")?;
        for status in &statuses {
            let label = if status.as_str() == "no answer" {
                "none"
            } else {
                status.as_str()
            };
            write!(out, " {label:>6}")?;
        }
        writeln!(out, " {:>7}", "total")?;
        for endpoint in Endpoint::ALL {
            let Some(counts) = self.requests.get(&endpoint) else {
                continue;
            };
            write!(out, "  {:<28}", endpoint.label())?;
            for status in &statuses {
                let n = counts.get(*status).copied().unwrap_or(0);
                if n == 0 {
                    write!(out, " {:>6}", "-")?;
                } else {
                    write!(out, " {n:>6}")?;
                }
            }
            writeln!(out, " {:>7}", counts.values().sum::<usize>())?;
        }
        writeln!(
            out,
            "  retried: {} × 429 busy (after its Retry-After), {} × 503/507 in fault windows, {} × no answer",
            self.busy_retries, self.fault_retries, self.no_answer_retries
        )?;

        writeln!(out, "\nlatency of 2xx answers, ms:")?;
        writeln!(
            out,
            "  {:<28} {:>6} {:>8} {:>8} {:>8} {:>8}",
            "endpoint", "n", "p50", "p95", "p99", "max"
        )?;
        for (endpoint, n, p50, p95, p99, max) in &self.latency {
            writeln!(
                out,
                "  {:<28} {n:>6} {p50:>8.0} {p95:>8.0} {p99:>8.0} {max:>8.0}",
                endpoint.label()
            )?;
        }

        writeln!(out, "\njobs:")?;
        writeln!(
            out,
            "  {:<18} {:>9} {:>9} {:>7} {:>10} {:>13}  failure codes",
            "kind", "submitted", "completed", "failed", "unfinished", "answer lost"
        )?;
        for (kind, tally) in &self.jobs {
            let failed: usize = tally.failed.values().sum();
            let codes: Vec<String> = tally
                .failed
                .iter()
                .map(|(code, n)| format!("{code} ×{n}"))
                .collect();
            writeln!(
                out,
                "  {kind:<18} {:>9} {:>9} {failed:>7} {:>10} {:>13}  {}",
                tally.submitted + tally.unannounced,
                tally.completed,
                tally.unfinished,
                tally.unannounced,
                if codes.is_empty() {
                    "-".to_owned()
                } else {
                    codes.join(", ")
                }
            )?;
        }
        let sync_failed: Vec<String> = self
            .sync_failed
            .iter()
            .map(|(answer, n)| format!("{answer} ×{n}"))
            .collect();
        writeln!(
            out,
            "  synchronous generates: {} stored, {} failed{}",
            self.sync_stored,
            self.sync_failed.values().sum::<usize>(),
            if sync_failed.is_empty() {
                String::new()
            } else {
                format!(" ({})", sync_failed.join(", "))
            }
        )?;
        writeln!(
            out,
            "  jobs claimed more than once (a process died or a lease ran out): {}",
            self.claimed_again
        )?;

        let w = &self.webhooks;
        writeln!(
            out,
            "\nwebhooks: {} jobs with a webhook, {} delivered exactly once, {} delivered again after their delivery was taken over from a killed process, {} missing, {} with several events, {} received more often than tried, {} badly signed, {} for unknown jobs ({} requests received)",
            w.expected,
            w.exactly_once,
            w.redelivered,
            w.missing,
            w.several_events,
            w.over_tried,
            w.bad_signature,
            w.unknown_job,
            w.received
        )?;

        let o = &self.outputs;
        writeln!(
            out,
            "\noutputs: {} named by answers, {} passed ffprobe and caption pixels ({} word frames, the fewest caption pixels on one {:.1} % of the frame, {:.1} % needed), {} missing, {} failed ffprobe, {} without caption pixels; {} in the bucket, {} of them left by synchronous generates whose answer was lost, {} duplicates or strays",
            o.answered,
            o.checked,
            o.word_frames,
            if o.least_share.is_finite() {
                o.least_share * 100.0
            } else {
                0.0
            },
            super::clips::MIN_CAPTION_SHARE * 100.0,
            o.missing,
            o.probe_failed,
            o.pixels_failed,
            o.in_bucket,
            o.orphaned,
            o.duplicates
        )?;
        for (key, why) in &o.failures {
            writeln!(out, "  {key}: {why}")?;
        }

        self.write_rss(out)?;

        if !self.notes.is_empty() {
            writeln!(out, "\nnotes:")?;
            for note in &self.notes {
                writeln!(out, "  {note}")?;
            }
        }
        writeln!(out, "\nproblems: {}", self.problems.len())?;
        for problem in &self.problems {
            writeln!(out, "  - {problem}")?;
        }
        Ok(())
    }

    fn write_rss(&self, out: &mut String) -> fmt::Result {
        let slots: BTreeSet<usize> = self.rss.iter().map(|s| s.process).collect();
        // About 30 rows, whatever the run's length.
        let step_s = (self.load_end_s / 30.0).max(1.0);
        writeln!(out, "\nRSS, MiB (from /proc/<pid>/status):")?;
        write!(out, "  {:<8}", "time")?;
        for slot in &slots {
            write!(out, " {:>12}", format!("process {slot}"))?;
        }
        writeln!(out)?;
        let mut next_s = 0.0;
        let mut last_pids: BTreeMap<usize, u32> = BTreeMap::new();
        let mut times: Vec<f64> = self.rss.iter().map(|s| s.t_s).collect();
        times.dedup_by(|a, b| (*a - *b).abs() < 0.5);
        for t_s in times {
            if t_s + 0.5 < next_s {
                continue;
            }
            next_s = t_s + step_s;
            write!(out, "  {:<8}", clock_label(t_s))?;
            for slot in &slots {
                match self
                    .rss
                    .iter()
                    .find(|s| s.process == *slot && (s.t_s - t_s).abs() < 0.5)
                {
                    Some(sample) => {
                        let restarted = last_pids
                            .insert(*slot, sample.pid)
                            .is_some_and(|pid| pid != sample.pid);
                        let mark = if restarted { "*" } else { " " };
                        write!(out, " {:>11}{mark}", sample.rss_kib / 1024)?;
                    }
                    None => write!(out, " {:>12}", "down")?,
                }
            }
            writeln!(out)?;
        }
        writeln!(out, "  (* a new pid: the process was started again)")?;
        let started: Vec<String> = self
            .processes
            .iter()
            .map(|(slot, pid, at_s)| format!("{slot}: pid {pid} at {}", clock_label(*at_s)))
            .collect();
        writeln!(out, "  processes started: {}", started.join(", "))?;
        for verdict in &self.rss_verdicts {
            writeln!(out, "  {verdict}")?;
        }
        Ok(())
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
