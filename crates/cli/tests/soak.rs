//! Three minutes of the soak (`scripts/soak` runs an hour): 4 clients loop upload → transcribe →
//! generate → download → delete against two `captions serve` processes over PostgreSQL and
//! s3s-fs while a process is SIGKILLed, PostgreSQL restarts, the bucket stops and the data disk
//! fills, each at least once. Every job, output and webhook must be accounted for.
//! `CAPTIONS_SOAK_SEED` repeats a run's random choices (its report names its seed).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "test code: a panic is the failure report, and the soak's report is its output"
)]

mod support;

use caption_testkit::soak::{SoakOptions, run};

#[test]
fn three_minutes_of_clients_under_faults_lose_nothing() {
    let mut options = SoakOptions::new(&support::captions_binary());
    options.minutes = 3.0;
    options.clients = 4;
    options.faults = true;
    if let Some(seed) = std::env::var("CAPTIONS_SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        options.seed = seed;
    }
    let report = run(&options).unwrap_or_else(|e| panic!("the soak could not run: {e}"));
    println!("{report}");
    assert!(report.problems().is_empty(), "{report}");
    // Every kind this machine permits (the disk-full fault needs root, for a tmpfs).
    for &kind in report.fault_kinds() {
        assert!(
            report.faults_injected(kind) >= 1,
            "no {kind} fault in three minutes:\n{report}"
        );
    }
    assert!(report.fault_kinds().len() >= 3, "{report}");
}
