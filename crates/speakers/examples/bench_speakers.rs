//! Run with `scripts/bench-speakers` (or `cargo run --release -p caption-speakers --example
//! bench_speakers`): dialogues of espeak-ng and Festival voices, clean and under a music bed,
//! diarized with the count estimated and with it given; prints each one's error rate by words,
//! the speakers found and the time taken.

#![allow(clippy::print_stdout, reason = "a benchmark's report is its output")]

use std::time::Instant;

use caption_speakers::{Diarizer, SpeakerCount, WordSpan};
use caption_testkit::dialogue::{Conversation, Voice, conversation, speaker_error_rate};

const E_PAIR: &[Voice] = &[Voice::Espeak("en-us"), Voice::Espeak("en-gb+f3")];
const F_PAIR: &[Voice] = &[Voice::Festival("slt"), Voice::Festival("kal")];
const F_MALE_PAIR: &[Voice] = &[Voice::Festival("kal"), Voice::Festival("kdl")];
const TRIO: &[Voice] = &[
    Voice::Festival("slt"),
    Voice::Espeak("en-us"),
    Voice::Festival("kal"),
];
const F_TRIO: &[Voice] = &[
    Voice::Festival("slt"),
    Voice::Festival("kal"),
    Voice::Festival("kdl"),
];
const E_TRIO: &[Voice] = &[
    Voice::Espeak("en-us"),
    Voice::Espeak("en-gb+f3"),
    Voice::Espeak("en-us+m7"),
];

const SHORT: &[Voice] = &[Voice::Festival("slt"), Voice::Espeak("en-us")];
const HELD_PAIR: &[Voice] = &[Voice::Espeak("en-gb-x-rp"), Voice::Espeak("en-us+f4")];
const HELD_TRIO: &[Voice] = &[
    Voice::Espeak("en-us+f2"),
    Voice::Festival("kdl"),
    Voice::Espeak("en-gb-scotland"),
];

/// Name, voices (taking turns), turns, music bed's SNR.
const CASES: &[(&str, &[Voice], usize, Option<f64>)] = &[
    ("espeak pair, 8 turns", E_PAIR, 8, None),
    ("espeak pair, 8 turns, music 10 dB", E_PAIR, 8, Some(10.0)),
    ("espeak pair, 6 turns, music 5 dB", E_PAIR, 6, Some(5.0)),
    ("festival pair, 6 turns", F_PAIR, 6, None),
    ("festival pair, 8 turns", F_PAIR, 8, None),
    ("festival pair, 6 turns, music 10 dB", F_PAIR, 6, Some(10.0)),
    ("festival male pair, 6 turns", F_MALE_PAIR, 6, None),
    ("trio (slt, espeak, kal), 9 turns", TRIO, 9, None),
    ("trio, 9 turns, music 10 dB", TRIO, 9, Some(10.0)),
    ("festival trio, 9 turns", F_TRIO, 9, None),
    ("espeak trio, 9 turns", E_TRIO, 9, None),
    ("slt alone, 6 lines", &[Voice::Festival("slt")], 6, None),
    ("kal alone, 6 lines", &[Voice::Festival("kal")], 6, None),
    (
        "espeak en-us alone, 6 lines",
        &[Voice::Espeak("en-us")],
        6,
        None,
    ),
    (
        "espeak en-gb+f3 alone, music 10 dB",
        &[Voice::Espeak("en-gb+f3")],
        6,
        Some(10.0),
    ),
    (
        "short exchange (slt, espeak en-us), 2 turns",
        SHORT,
        2,
        None,
    ),
    ("short exchange, 3 turns, music 10 dB", SHORT, 3, Some(10.0)),
    // Held out: voices the thresholds were not set on.
    ("held out: rp and us+f4 pair", HELD_PAIR, 8, None),
    (
        "held out: rp and us+f4, music 10 dB",
        HELD_PAIR,
        8,
        Some(10.0),
    ),
    (
        "held out: slt and kdl pair",
        &[Voice::Festival("slt"), Voice::Festival("kdl")],
        6,
        None,
    ),
    ("held out: trio (us+f2, kdl, scotland)", HELD_TRIO, 9, None),
    (
        "held out: scotland alone",
        &[Voice::Espeak("en-gb-scotland")],
        6,
        None,
    ),
    (
        "held out: kdl alone, music 10 dB",
        &[Voice::Festival("kdl")],
        6,
        Some(10.0),
    ),
];

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let diarizer = Diarizer::open_installed()?;
    println!(
        "{:<40} {:>6} {:>6} {:>5} {:>9} {:>9} {:>7}",
        "dialogue", "length", "voices", "found", "DER auto", "DER given", "time"
    );
    let (mut worst_two, mut worst_three) = (0f64, 0f64);
    for &(name, voices, turns, music_snr_db) in CASES {
        let Conversation { samples, words } = conversation(voices, turns, music_snr_db)?;
        let spans: Vec<WordSpan> = words
            .iter()
            .map(|w| WordSpan {
                start_s: w.start_s,
                end_s: w.end_s,
            })
            .collect();
        let started = Instant::now();
        let auto = diarizer.speakers(&samples, &spans, SpeakerCount::Auto)?;
        let elapsed_s = started.elapsed().as_secs_f64();
        let given = SpeakerCount::Exactly(u8::try_from(voices.len())?);
        let given = diarizer.speakers(&samples, &spans, given)?;
        let found = auto.iter().max().map_or(0, |m| m + 1);
        let der_auto = speaker_error_rate(&words, &auto);
        match voices.len() {
            2 => worst_two = worst_two.max(der_auto),
            3 => worst_three = worst_three.max(der_auto),
            _ => {}
        }
        println!(
            "{name:<40} {:>5.1}s {:>6} {found:>5} {:>8.1}% {:>8.1}% {elapsed_s:>6.2}s",
            samples.len() as f64 / 16_000.0,
            voices.len(),
            100.0 * der_auto,
            100.0 * speaker_error_rate(&words, &given),
        );
    }
    println!(
        "worst DER with the count estimated: two voices {:.1}%, three voices {:.1}%",
        100.0 * worst_two,
        100.0 * worst_three
    );
    Ok(())
}
