//! Layout of 10 minutes of words (1500 words), with real fonts and with a fixed-advance measure.
//! Run: `cargo bench -p caption-layout --bench layout`.
#![allow(
    clippy::expect_used,
    reason = "a bench without its fixtures cannot run"
)]

use std::path::PathBuf;
use std::sync::Arc;

use caption_core::{Catalog, Word};
use caption_layout::{DirFonts, FrameSize, MonoMeasure, Shaper, Timeline};
use criterion::{Criterion, criterion_group, criterion_main};

const VOCABULARY: &[&str] = &[
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog.",
    "captions",
    "make",
    "videos",
    "easier",
    "to",
    "follow,",
    "especially",
    "on",
    "phones!",
    "we",
    "love",
    "fire",
];

fn ten_minutes_of_words() -> Vec<Word> {
    (0..1500)
        .map(|i| {
            let start = i as f64 * 0.4;
            let text = VOCABULARY[i % VOCABULARY.len()];
            let mut w = Word::new(start, start + 0.35, text.trim_end_matches(['.', ',', '!']));
            w.punctuated_word = text.to_owned();
            w
        })
        .collect()
}

fn fonts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/fonts")
}

fn layout(c: &mut Criterion) {
    let words = ten_minutes_of_words();
    let catalog = Catalog::builtin().expect("catalog");
    let config = catalog.default_config().clone();
    let frame = FrameSize::new(1080, 1920);
    let fonts = Arc::new(DirFonts::open(&fonts_dir()).expect("fixture fonts"));

    c.bench_function("layout/10min/mono-measure", |b| {
        b.iter(|| Timeline::build(&words, &config, frame, &MonoMeasure::default()));
    });
    c.bench_function("layout/10min/shaped-cold", |b| {
        b.iter(|| {
            let shaper =
                Shaper::new(fonts.clone(), &config.font, config.font_weight).expect("font");
            Timeline::build(&words, &config, frame, &shaper)
        });
    });
    let shaper = Shaper::new(fonts.clone(), &config.font, config.font_weight).expect("font");
    c.bench_function("layout/10min/shaped-warm", |b| {
        b.iter(|| Timeline::build(&words, &config, frame, &shaper));
    });
    let timeline = Timeline::build(&words, &config, frame, &shaper);
    c.bench_function("layout/state_at/18000-frames", |b| {
        b.iter(|| {
            (0..18_000)
                .map(|f| timeline.state_at(f as f64 / 30.0).words.len())
                .sum::<usize>()
        });
    });
}

criterion_group!(benches, layout);
criterion_main!(benches);
