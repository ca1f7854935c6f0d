//! How the run is judged: each job, the webhooks, the outputs and the memory.

#[allow(clippy::wildcard_imports, reason = "the report's own types")]
use super::*;

/// Tallies a job's end, and the problem when it did not end, or failed as it must not.
pub(super) fn judge_row(
    row: &JobRow,
    label: &'static str,
    tally: &mut JobTally,
    problems: &mut JobProblems,
) {
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
pub(super) fn judge_webhooks(state: &FinalState, problems: &mut Vec<String>) -> WebhookTally {
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
pub(super) fn judge_outputs(
    state: &FinalState,
    outputs: &[crate::soak::client::Output],
    iterations: &[crate::soak::client::Iteration],
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

/// How long a process must live past its minute 10 for its RSS to be judged: a line through
/// fewer samples says little.
const MIN_JUDGED_S: f64 = 120.0;

/// In runs of 20 minutes or more: a process's RSS at the end of the load must be at most 110 %
/// of its RSS at minute 10 (of the run, or of its own life when it was started again later).
/// Both are read off the least-squares line through every sample from that minute 10 to the
/// end. One sample is one instant, high while burns are in flight and low between them (within
/// one hour a process swung between 399 and 563 MiB with no trend; medians of the samples within
/// a minute of each moment still differed by 13 %): what grows without bound is a slope.
pub(super) fn judge_rss(
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
        if reference_s + MIN_JUDGED_S > last.t_s {
            verdicts.push(format!(
                "process {slot}: not judged, pid {} started at {} did not live 2 min past its minute 10 before the end",
                last.pid,
                clock_label(born_s)
            ));
            continue;
        }
        #[allow(clippy::cast_precision_loss, reason = "KiB of a process")]
        let points: Vec<(f64, f64)> = rss
            .iter()
            .filter(|s| s.process == slot && s.pid == last.pid)
            .filter(|s| s.t_s >= reference_s && s.t_s <= load_end_s)
            .map(|s| (s.t_s, s.rss_kib as f64 / 1024.0))
            .collect();
        let Some((reference, end)) = trend(&points, reference_s, last.t_s) else {
            continue;
        };
        let growth = end / reference.max(1.0);
        let verdict = format!(
            "process {slot} (pid {}): {reference:.0} MiB at {}, {end:.0} MiB at {} ({:+.1} %; the least-squares line through its {} samples from {}, which ranged {:.0}-{:.0} MiB)",
            last.pid,
            clock_label(reference_s),
            clock_label(last.t_s),
            (growth - 1.0) * 100.0,
            points.len(),
            clock_label(reference_s),
            points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min),
            points.iter().map(|p| p.1).fold(0.0, f64::max),
        );
        if growth > 1.10 {
            problems.push(format!("RSS grew more than 10 %: {verdict}"));
        }
        verdicts.push(verdict);
    }
    verdicts
}

/// The values at `from_s` and `to_s` of the least-squares line through `points` (time, value);
/// `None` for fewer than two distinct times.
fn trend(points: &[(f64, f64)], from_s: f64, to_s: f64) -> Option<(f64, f64)> {
    #[allow(clippy::cast_precision_loss, reason = "a count of samples")]
    let n = points.len() as f64;
    let mean_t = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_v = points.iter().map(|p| p.1).sum::<f64>() / n;
    let spread: f64 = points.iter().map(|p| (p.0 - mean_t).powi(2)).sum();
    if points.len() < 2 || spread <= 0.0 {
        return None;
    }
    let slope = points
        .iter()
        .map(|p| (p.0 - mean_t) * (p.1 - mean_v))
        .sum::<f64>()
        / spread;
    let at = |t_s: f64| mean_v + slope * (t_s - mean_t);
    Some((at(from_s), at(to_s)))
}

#[cfg(test)]
#[allow(clippy::cast_precision_loss, reason = "sample counts")]
mod tests {
    use std::path::Path;

    use super::*;

    fn samples(values: impl Fn(usize) -> u64) -> Vec<RssSample> {
        (0..=360)
            .map(|i| RssSample {
                t_s: i as f64 * 10.0,
                process: 0,
                pid: 7,
                rss_kib: values(i) * 1024,
            })
            .collect()
    }

    fn judged(rss: &[RssSample]) -> (Vec<String>, Vec<String>) {
        let options = SoakOptions::new(Path::new("captions"));
        let mut problems = Vec::new();
        let verdicts = judge_rss(&options, rss, &[(0, 7, 0.0)], 3600.0, &mut problems);
        (verdicts, problems)
    }

    #[test]
    fn memory_that_swings_without_a_trend_is_flat() {
        // Burns in flight: 400 to 560 MiB in bursts, the last minutes high.
        let rss = samples(|i| if i % 7 < 3 || i > 350 { 560 } else { 400 });
        let (verdicts, problems) = judged(&rss);
        assert!(problems.is_empty(), "{problems:?}");
        assert!(verdicts[0].contains("MiB at +10:00"), "{verdicts:?}");
    }

    #[test]
    fn memory_that_keeps_growing_is_a_problem() {
        // 0.2 MiB more every 10 s under swings of 80 MiB: +13 % from minute 10 to the end.
        let rss = samples(|i| 400 + i as u64 / 5 + if i % 2 == 0 { 80 } else { 0 });
        let (_, problems) = judged(&rss);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("RSS grew more than 10 %"));
    }
}
