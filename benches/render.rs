//! Overlay rendering at 1080x1920: one frame per template cold (fresh caches), with warm glyphs
//! (a new visual state), the next frame of a video (the previous one's shadows cached), and warm
//! (cached state); and 60 s at 30 fps serially and with rayon.
//! Run: `cargo bench -p caption-render --bench render`.
#![allow(
    clippy::expect_used,
    reason = "a bench without its fixtures cannot run"
)]

use std::path::PathBuf;
use std::sync::Arc;

use caption_core::{Catalog, Color, ColorSet, Config, DisplayEmojis, Word};
use caption_render::{CaptionRenderer, DirFonts, FontSource, FrameSize, SystemFonts};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

const FRAME: FrameSize = FrameSize {
    width_px: 1080,
    height_px: 1920,
};

const VOCABULARY: &[&str] = &[
    "welcome",
    "back",
    "everyone!",
    "today",
    "we",
    "build",
    "a",
    "rocket.",
    "it",
    "runs",
    "on",
    "pizza",
    "and",
    "fire!",
    "captions",
    "make",
    "videos",
    "easier",
    "to",
    "follow,",
];

fn words(seconds: usize) -> Vec<Word> {
    (0..seconds * 5 / 2)
        .map(|i| {
            let start = i as f64 * 0.4;
            let text = VOCABULARY[i % VOCABULARY.len()];
            let mut w = Word::new(start, start + 0.35, text.trim_end_matches(['.', ',', '!']));
            w.punctuated_word = text.to_owned();
            w
        })
        .collect()
}

fn fonts() -> Arc<dyn FontSource> {
    let emoji = SystemFonts::new()
        .expect("fontconfig")
        .emoji_font()
        .expect("color emoji font");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/fonts");
    Arc::new(
        DirFonts::open(&dir)
            .expect("fixture fonts")
            .with_emoji_font(emoji),
    )
}

/// Outline, blurred shadow, word boxes, active box and emoji at once.
fn heaviest(catalog: &Catalog) -> Config {
    let mut c = catalog.get("emoji-hype").expect("template").config.clone();
    c.word_has_background = true;
    c.colors.background_color = ColorSet::one(Color::rgba(0, 0, 0, 150));
    c.sizes.background_radius_px = 20.0;
    c.modes.display_emojis = DisplayEmojis::Word;
    c.lines_count = 2;
    c.words_per_line_count = 3;
    c
}

fn render(c: &mut Criterion) {
    let catalog = Catalog::builtin().expect("catalog");
    let fonts = fonts();
    let words = words(60);
    // 11.7 s: "pizza" is being spoken (has an emoji), mid-effect.
    let t = 11.65;
    let mut configs: Vec<(String, Config)> = catalog
        .templates()
        .iter()
        .map(|t| (t.id.clone(), t.config.clone()))
        .collect();
    configs.push(("heaviest".into(), heaviest(&catalog)));

    let mut group = c.benchmark_group("overlay-1080x1920");
    for (id, config) in &configs {
        group.bench_function(format!("{id}/cold"), |b| {
            b.iter_batched(
                || CaptionRenderer::new(&words, config, FRAME, fonts.clone()).expect("renderer"),
                |r| r.render_at(t),
                BatchSize::PerIteration,
            );
        });
        let renderer =
            CaptionRenderer::new(&words, config, FRAME, fonts.clone()).expect("renderer");
        let state = renderer.timeline().state_at(t);
        let next = renderer.timeline().state_at(t + 1.0 / 30.0);
        renderer.render_at(t);
        renderer.render_at(t + 1.0 / 30.0);
        // A state never drawn: every shadow blurred anew, glyphs rasterized already.
        group.bench_function(format!("{id}/new-state-warm-glyphs"), |b| {
            b.iter_batched(
                || renderer.forget_frames(),
                |()| renderer.render_state(&state),
                BatchSize::PerIteration,
            );
        });
        // The next frame of a video: the previous frame's shadows are cached, so only what
        // changed (the word that pops, the emoji that moves) is drawn anew.
        group.bench_function(format!("{id}/next-frame"), |b| {
            b.iter_batched(
                || {
                    renderer.forget_frames();
                    renderer.render_state(&state);
                },
                |()| renderer.render_state(&next),
                BatchSize::PerIteration,
            );
        });
        group.bench_function(format!("{id}/warm"), |b| b.iter(|| renderer.render_at(t)));
    }
    group.finish();

    let times: Vec<f64> = (0..60 * 30).map(|f| f as f64 / 30.0).collect();
    let mut group = c.benchmark_group("video-60s-30fps");
    group.sample_size(10);
    for (id, config) in configs
        .iter()
        .filter(|(id, _)| id == "heaviest" || id == "bold-highlight")
    {
        group.bench_function(format!("{id}/serial"), |b| {
            b.iter_batched(
                || CaptionRenderer::new(&words, config, FRAME, fonts.clone()).expect("renderer"),
                |r| {
                    times
                        .iter()
                        .map(|&t| r.render_at(t))
                        .filter(Option::is_some)
                        .count()
                },
                BatchSize::PerIteration,
            );
        });
        group.bench_function(format!("{id}/rayon"), |b| {
            b.iter_batched(
                || CaptionRenderer::new(&words, config, FRAME, fonts.clone()).expect("renderer"),
                |r| r.render_many(&times).iter().filter(|o| o.is_some()).count(),
                BatchSize::PerIteration,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, render);
criterion_main!(benches);
