//! The report as text: its tables.

#[allow(clippy::wildcard_imports, reason = "the report's own types")]
use super::*;

/// The value below which `share` of the sorted `values` lie (nearest rank).
pub(super) fn percentile(sorted: &[f64], share: f64) -> f64 {
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
            "  retried: {} × 429 busy (after its Retry-After), {} × 503/507 in fault windows, {} × no answer, {} × an upload's body the bucket could not read",
            self.busy_retries, self.fault_retries, self.no_answer_retries, self.body_unread_retries
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
            crate::soak::clips::MIN_CAPTION_SHARE * 100.0,
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
