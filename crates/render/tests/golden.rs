//! Golden frames: every built-in template, every mode value, every visible config field, and
//! four scripts, rendered at 540x960 with the fonts under fixtures/fonts and compared with the
//! PNGs under fixtures/golden (per-channel tolerance, un-premultiplied).
//!
//! `CAPTIONS_BLESS=1 cargo test -p caption-render --test golden` rewrites the references. On a
//! mismatch a three-panel image (expected | differing pixels | actual) is written to
//! `$CARGO_TARGET_TMPDIR/golden-diff/`.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use caption_core::{
    CapitalizationType, Catalog, Color, ColorSet, Config, DisplayEmojis, DisplayMode, DisplayWords,
    EffectMode, EffectType, Position, SpokenMode, Word,
};
use caption_render::{
    CaptionRenderer, DirFonts, FontSource, FrameSize, SheetOptions, SystemFonts,
    contact_sheets_png, frame_png,
};
use tiny_skia::Pixmap;

const FRAME: FrameSize = FrameSize {
    width_px: 540,
    height_px: 960,
};
/// Channels may differ by this much: rasterizer rounding differs between SIMD paths.
const TOLERANCE: u8 = 2;
const BACKGROUND: Color = Color::rgb(52, 60, 74);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Fixture fonts, plus the system's color emoji font (too large to commit; Debian package
/// fonts-noto-color-emoji, listed in scripts/system-packages.txt).
fn fonts() -> Arc<dyn FontSource> {
    static FONTS: OnceLock<Arc<DirFonts>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let emoji = SystemFonts::new()
                .expect("fontconfig")
                .emoji_font()
                .expect("a color emoji font (fonts-noto-color-emoji) must be installed");
            Arc::new(
                DirFonts::open(&root().join("fixtures/fonts"))
                    .expect("fixture fonts")
                    .with_emoji_font(emoji),
            )
        })
        .clone()
}

fn w(start: f64, end: f64, word: &str, punctuated: &str) -> Word {
    Word {
        start,
        end,
        word: word.to_owned(),
        punctuated_word: punctuated.to_owned(),
        emoji: None,
        ..Default::default()
    }
}

/// An English script with a sentence end, a clause end, a long pause and emoji keywords.
fn english() -> Vec<Word> {
    vec![
        w(0.0, 0.3, "welcome", "Welcome"),
        w(0.3, 0.6, "back", "back,"),
        w(0.6, 1.0, "everyone", "everyone!"),
        w(1.1, 1.4, "today", "Today"),
        w(1.4, 1.6, "we", "we"),
        w(1.6, 1.9, "build", "build"),
        w(1.9, 2.0, "a", "a"),
        w(2.0, 2.5, "rocket", "rocket."),
        w(3.4, 3.7, "it", "It"),
        w(3.7, 3.9, "runs", "runs"),
        w(3.9, 4.0, "on", "on"),
        w(4.0, 4.4, "pizza", "pizza"),
        w(4.4, 4.6, "and", "and"),
        w(4.6, 5.0, "fire", "fire!"),
    ]
}

fn base() -> Config {
    Catalog::builtin().unwrap().default_config().clone()
}

fn compare_or_bless(name: &str, png: &[u8], failures: &mut Vec<String>) {
    let path = root().join("fixtures/golden").join(format!("{name}.png"));
    if std::env::var_os("CAPTIONS_BLESS").is_some_and(|v| v == "1")
        || !path.exists() && std::env::var_os("CAPTIONS_BLESS_NEW").is_some()
    {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, png).unwrap();
        return;
    }
    let Ok(expected_bytes) = std::fs::read(&path) else {
        failures.push(format!(
            "{name}: no reference at {} (run with CAPTIONS_BLESS=1)",
            path.display()
        ));
        return;
    };
    let expected = Pixmap::decode_png(&expected_bytes).unwrap();
    let actual = Pixmap::decode_png(png).unwrap();
    if let Some(count) = differing_pixels(&expected, &actual) {
        let diff = write_diff(name, &expected, &actual);
        failures.push(format!(
            "{name}: {count} pixels differ; diff in {}",
            diff.display()
        ));
    }
}

/// Number of pixels whose un-premultiplied channels differ by more than the tolerance (or
/// `Some(usize::MAX)` on a size mismatch); `None` when the images match.
fn differing_pixels(expected: &Pixmap, actual: &Pixmap) -> Option<usize> {
    if expected.width() != actual.width() || expected.height() != actual.height() {
        return Some(usize::MAX);
    }
    let count = expected
        .pixels()
        .iter()
        .zip(actual.pixels())
        .filter(|(e, a)| !pixels_match(**e, **a))
        .count();
    (count > 0).then_some(count)
}

fn pixels_match(e: tiny_skia::PremultipliedColorU8, a: tiny_skia::PremultipliedColorU8) -> bool {
    let (e, a) = (e.demultiply(), a.demultiply());
    [
        (e.red(), a.red()),
        (e.green(), a.green()),
        (e.blue(), a.blue()),
        (e.alpha(), a.alpha()),
    ]
    .iter()
    .all(|(x, y)| x.abs_diff(*y) <= TOLERANCE)
}

fn write_diff(name: &str, expected: &Pixmap, actual: &Pixmap) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("golden-diff");
    std::fs::create_dir_all(&dir).unwrap();
    let (w, h) = (
        expected.width().max(actual.width()),
        expected.height().max(actual.height()),
    );
    let mut panel = Pixmap::new(w * 3, h).unwrap();
    let paint = tiny_skia::PixmapPaint::default();
    let id = tiny_skia::Transform::identity();
    panel.draw_pixmap(0, 0, expected.as_ref(), &paint, id, None);
    panel.draw_pixmap((2 * w) as i32, 0, actual.as_ref(), &paint, id, None);
    for y in 0..h.min(expected.height()).min(actual.height()) {
        for x in 0..w.min(expected.width()).min(actual.width()) {
            let e = expected.pixel(x, y).unwrap();
            let a = actual.pixel(x, y).unwrap();
            let v = if pixels_match(e, a) { 0 } else { 255 };
            let i = ((y * w * 3 + w + x) * 4) as usize;
            panel.data_mut()[i..i + 4].copy_from_slice(&[v, 0, 0, 255]);
        }
    }
    let path = dir.join(format!("{name}.png"));
    panel.save_png(&path).unwrap();
    path
}

fn render(name: &str, words: &[Word], config: &Config, t_s: f64, failures: &mut Vec<String>) {
    render_sized(name, words, config, FRAME, t_s, failures);
}

fn render_sized(
    name: &str,
    words: &[Word],
    config: &Config,
    frame: FrameSize,
    t_s: f64,
    failures: &mut Vec<String>,
) {
    let renderer = CaptionRenderer::new(words, config, frame, fonts()).unwrap();
    let png = frame_png(&renderer, t_s, BACKGROUND).unwrap();
    compare_or_bless(name, &png, failures);
}

/// Words of `text`, 0.3 s each, back to back from 0.
fn spoken(text: &str) -> Vec<Word> {
    text.split(' ')
        .enumerate()
        .map(|(i, p)| {
            let bare: String = p.chars().filter(|c| c.is_alphanumeric()).collect();
            w(
                i as f64 * 0.3,
                i as f64 * 0.3 + 0.3,
                &bare.to_lowercase(),
                p,
            )
        })
        .collect()
}

fn finish(failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "golden mismatches:\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_builtin_template() {
    let mut failures = Vec::new();
    let words = english();
    for template in Catalog::builtin().unwrap().templates() {
        // Mid "build" (an effect in progress on the second page), and late in the last page.
        render(
            &format!("template-{}-a", template.id),
            &words,
            &template.config,
            1.7,
            &mut failures,
        );
        render(
            &format!("template-{}-b", template.id),
            &words,
            &template.config,
            4.7,
            &mut failures,
        );
    }
    finish(failures);
}

/// A longer script of everyday speech with numbers and names, for emphasis.
fn talk() -> Vec<Word> {
    let text = "So last week Maria and I drove to Lisbon to test the new camera. \
                We filmed for 3 hours straight and honestly the battery lasted longer than \
                I expected. The footage looks amazing in low light, even at 4K. \
                If you want to see the settings we used, they are in the description, \
                and I will answer every question in the comments.";
    let mut t = 0.0;
    text.split_whitespace()
        .map(|token| {
            let bare = caption_core::bare_word(token).to_lowercase();
            let word = w(t, t + 0.3, &bare, token);
            t += 0.35;
            word
        })
        .collect()
}

/// The installed English table's stop words (its 250 most frequent words).
fn english_stop_words() -> std::collections::HashSet<String> {
    let home = std::env::var("HOME").unwrap();
    let dir = std::env::var("CAPTIONS_MODELS")
        .unwrap_or_else(|_| format!("{home}/.cache/caption-engine/models"));
    let table = std::fs::read_to_string(format!("{dir}/word-frequencies/en.tsv"))
        .expect("set-up installs the word frequencies (scripts/setup-wheel-models)");
    table
        .lines()
        .take(caption_layout::STOP_WORDS)
        .map(|l| l.split('\t').next().unwrap().to_owned())
        .collect()
}

#[test]
fn every_builtin_template_with_emphasis() {
    let stop = english_stop_words();
    let mut failures = Vec::new();
    for template in Catalog::builtin().unwrap().templates() {
        for words in [english(), talk()] {
            let mut config = template.config.clone();
            config.emphasis = caption_core::Emphasis::ColorSize;
            let renderer = CaptionRenderer::new(&words, &config, FRAME, fonts()).unwrap();
            let timeline = renderer.timeline();
            let marked: Vec<&caption_layout::LaidWord> = timeline
                .words
                .iter()
                .filter(|w| w.emphasis.is_some())
                .collect();
            assert!(!marked.is_empty(), "{}: nothing emphasised", template.id);
            for page in &timeline.pages {
                let on_page = timeline.words[page.words.clone()]
                    .iter()
                    .filter(|w| w.emphasis.is_some())
                    .count();
                let allowed = if page.words.len() >= caption_layout::TWO_FROM_WORDS {
                    2
                } else {
                    1
                };
                assert!(
                    on_page <= allowed,
                    "{}: {on_page} on page {page:?}",
                    template.id
                );
            }
            for word in marked {
                let key = caption_core::bare_word(&word.text).to_lowercase();
                assert!(!stop.contains(&key), "{}: stop word {key:?}", template.id);
            }
        }
        // "rocket" emphasised while "build" is spoken.
        let mut config = template.config.clone();
        config.emphasis = caption_core::Emphasis::ColorSize;
        render(
            &format!("emphasis-{}", template.id),
            &english(),
            &config,
            1.7,
            &mut failures,
        );
    }
    // The caller's marks are used as given, under COLOR only.
    let mut words = english();
    words[3].emphasis = Some(true);
    let mut config = base();
    config.emphasis = caption_core::Emphasis::Color;
    render(
        "emphasis-by-hand-color",
        &words,
        &config,
        1.7,
        &mut failures,
    );
    finish(failures);
}

#[test]
fn every_mode_value() {
    let mut failures = Vec::new();
    let words = english();
    for &mode in DisplayMode::ALL {
        let mut c = base();
        c.modes.display_mode = mode;
        render(
            &format!("display-mode-{mode}"),
            &words,
            &c,
            1.7,
            &mut failures,
        );
    }
    for &mode in DisplayWords::ALL {
        let mut c = base();
        c.modes.display_words = mode;
        c.lines_count = 2;
        c.words_per_line_count = 4;
        render(
            &format!("display-words-{mode}"),
            &words,
            &c,
            1.7,
            &mut failures,
        );
    }
    for &mode in SpokenMode::ALL {
        let mut c = base();
        c.modes.spoken_mode = mode;
        c.colors.spoken_color = ColorSet::one(Color::rgb(120, 200, 255));
        render(
            &format!("spoken-mode-{mode}"),
            &words,
            &c,
            1.7,
            &mut failures,
        );
    }
    for &effect in EffectType::ALL {
        for &unit in EffectMode::ALL {
            let mut c = base();
            c.modes.effect_type = effect;
            c.modes.effect_mode = unit;
            // 0.1 s into "build" (word effects), "Today" + 0.6 s for line/page units so a
            // typewriter is half way; the other effects are caught mid-animation at their start.
            let t = match (effect, unit) {
                (EffectType::Typewriter, _) => 1.75,
                (_, EffectMode::Word) => 1.7,
                _ => 1.2,
            };
            render(
                &format!("effect-{effect}-{unit}"),
                &words,
                &c,
                t,
                &mut failures,
            );
        }
    }
    for &mode in DisplayEmojis::ALL {
        let mut c = base();
        c.modes.display_emojis = mode;
        c.sizes.emoji_px = 90.0;
        render(
            &format!("display-emojis-{mode}"),
            &words,
            &c,
            4.7,
            &mut failures,
        );
    }
    for &cap in CapitalizationType::ALL {
        let mut c = base();
        c.capitalization_type = cap;
        let mut lower = english();
        for word in &mut lower {
            word.punctuated_word = word.punctuated_word.to_lowercase();
            word.word = word.word.to_lowercase();
        }
        render(
            &format!("capitalization-{cap}"),
            &lower,
            &c,
            1.7,
            &mut failures,
        );
    }
    finish(failures);
}

#[test]
fn every_visible_config_field() {
    let mut failures = Vec::new();
    let words = english();
    let mut cases: Vec<(&str, Config)> = Vec::new();
    let mut push = |name, f: &dyn Fn(&mut Config)| {
        let mut c = base();
        f(&mut c);
        cases.push((name, c));
    };
    push("field-default-color", &|c| {
        c.colors.default_color = ColorSet::one(Color::rgb(255, 120, 200));
    });
    push("field-hilight-cycle", &|c| {
        c.colors.hilight_color = ColorSet {
            colors: vec![Color::rgb(255, 0, 0), Color::rgb(0, 255, 0)],
        };
    });
    push("field-stroke-color", &|c| {
        c.colors.stroke_color = ColorSet::one(Color::rgb(200, 0, 0));
    });
    push("field-background", &|c| {
        c.word_has_background = true;
        c.colors.background_color = ColorSet::one(Color::rgba(0, 0, 0, 160));
        c.sizes.background_radius_px = 20.0;
    });
    push("field-background-per-word", &|c| {
        c.word_has_background = true;
        c.modes.effect_mode = EffectMode::Word;
        c.colors.background_color = ColorSet::one(Color::rgb(40, 40, 160));
        c.sizes.background_radius_px = 12.0;
    });
    push("field-background-radius-0", &|c| {
        c.word_has_background = true;
        c.colors.background_color = ColorSet::one(Color::rgba(0, 0, 0, 160));
        c.sizes.background_radius_px = 0.0;
    });
    push("field-punctuation-off", &|c| c.word_has_punctuation = false);
    push("field-punctuation-on", &|c| c.word_has_punctuation = true);
    push("field-shadow-off", &|c| c.word_has_shadow = false);
    push("field-shadow-custom", &|c| {
        c.word_has_shadow = true;
        c.word_has_custom_shadow_color = true;
        c.colors.shadow_color = ColorSet::one(Color::rgb(255, 0, 200));
        c.sizes.blur_px = 20.0;
    });
    push("field-font-size-120", &|c| c.sizes.font_px = 120.0);
    push("field-stroke-size-0", &|c| c.sizes.stroke_px = 0.0);
    push("field-stroke-size-20", &|c| c.sizes.stroke_px = 20.0);
    push("field-blur-size-0", &|c| c.sizes.blur_px = 0.0);
    push("field-blur-size-30", &|c| c.sizes.blur_px = 30.0);
    push("field-lines-count-1", &|c| c.lines_count = 1);
    push("field-lines-count-3", &|c| {
        c.lines_count = 3;
        c.words_per_line_count = 2;
    });
    push("field-words-per-line-1", &|c| c.words_per_line_count = 1);
    push("field-font-bebas", &|c| c.font = "Bebas Neue".into());
    push("field-font-weight-700", &|c| c.font_weight = 700);
    push("field-position-top-left", &|c| {
        c.position = Position { x: 0.3, y: 0.2 }
    });
    push("field-max-width-0.5", &|c| c.max_width = 0.5);
    push("field-emoji-size-150", &|c| {
        c.modes.display_emojis = DisplayEmojis::Word;
        c.sizes.emoji_px = 150.0;
    });
    for (name, config) in &cases {
        render(name, &words, config, 1.7, &mut failures);
    }
    // emojiAnimated: the same instant with and without the pop-in.
    for animated in [false, true] {
        let mut c = base();
        c.modes.display_emojis = DisplayEmojis::Word;
        c.sizes.emoji_px = 100.0;
        c.emoji_animated = animated;
        render(
            &format!("field-emoji-animated-{animated}"),
            &words,
            &c,
            4.65,
            &mut failures,
        );
    }
    // A word too wide for the line is shrunk, never cut.
    let long = vec![w(
        0.0,
        1.0,
        "supercalifragilisticexpialidocious",
        "Supercalifragilisticexpialidocious",
    )];
    render("field-too-wide-word", &long, &base(), 0.5, &mut failures);
    // Two speakers, word by word: each speaker's words in its colour (the spoken word keeps
    // the highlight).
    let speakers: Vec<Word> = english()
        .into_iter()
        .enumerate()
        .map(|(i, mut w)| {
            w.speaker = Some(if i % 2 == 0 { "Ana" } else { "Ben" }.to_owned());
            w
        })
        .collect();
    let mut c = base();
    c.speaker_colors = vec![Color::rgb(255, 90, 90), Color::rgb(90, 170, 255)];
    render("field-speaker-colors", &speakers, &c, 1.5, &mut failures);
    finish(failures);
}

#[test]
fn pages_and_effects_read_well() {
    let mut failures = Vec::new();
    let catalog = Catalog::builtin().unwrap();
    let template = |id: &str| catalog.get(id).unwrap().config.clone();
    // Seven words where a page holds six: two pages of four and three, not six and a stray one.
    let seven = spoken("Welcome to the first test of captions.");
    let bold = template("bold-highlight");
    render("pages-balanced-first", &seven, &bold, 0.4, &mut failures);
    render("pages-balanced-second", &seven, &bold, 1.9, &mut failures);
    // Lines do not end on a word that leans on the next ("or the" / "year 2021?").
    let year = spoken("like 25% or the year 2021?");
    render(
        "lines-no-weak-end",
        &year,
        &template("karaoke"),
        1.0,
        &mut failures,
    );
    // A popping word keeps clear of its neighbours on a landscape frame (mid-pop of "AN").
    let punch = spoken("testing an automatic");
    let landscape = FrameSize::new(960, 540);
    let creator = template("creator-punch");
    render_sized(
        "effect-pop-clear",
        &punch,
        &creator,
        landscape,
        0.42,
        &mut failures,
    );
    finish(failures);
}

#[test]
fn contact_sheets_are_labelled_and_split() {
    let mut failures = Vec::new();
    let words = spoken("Welcome to the first test of captions.");
    let renderer = CaptionRenderer::new(&words, &base(), FRAME, fonts()).unwrap();
    let options = SheetOptions::default()
        .columns(2)
        .tile_width_px(120)
        .tiles_per_sheet(4)
        .background(BACKGROUND);
    let sheets = contact_sheets_png(&renderer, fonts(), &options).unwrap();
    // Seven words, four to a sheet: two sheets, none dropped.
    assert_eq!(sheets.len(), 2);
    let second = Pixmap::decode_png(&sheets[1]).unwrap();
    assert_eq!(
        second.height(),
        2 * (213 + 30 + 4) + 4,
        "two rows of tile and label"
    );
    compare_or_bless("sheet-labelled", &sheets[0], &mut failures);
    finish(failures);
}

#[test]
fn scripts() {
    let mut failures = Vec::new();
    // Arabic: joined letters, words right to left, the second word (reading order) active.
    let arabic = vec![
        w(0.0, 0.5, "مرحبا", "مرحبا"),
        w(0.5, 1.0, "بكم", "بكم"),
        w(1.0, 1.5, "جميعا", "جميعا"),
        w(1.5, 2.0, "اليوم", "اليوم."),
    ];
    let mut c = base();
    c.font = "Noto Sans Arabic".into();
    c.capitalization_type = CapitalizationType::None;
    c.colors.hilight_color = ColorSet::one(Color::rgb(255, 220, 0));
    render("script-arabic", &arabic, &c, 0.7, &mut failures);
    let mut boxed = c.clone();
    boxed.word_has_background = true;
    boxed.colors.background_color = ColorSet::default();
    boxed.colors.hilight_color = ColorSet::one(Color::rgb(200, 30, 90));
    boxed.sizes.background_radius_px = 14.0;
    render("script-arabic-box", &arabic, &boxed, 0.7, &mut failures);

    // Hindi: Devanagari conjuncts and vowel signs.
    let hindi = vec![
        w(0.0, 0.5, "नमस्ते", "नमस्ते"),
        w(0.5, 1.0, "दोस्तों", "दोस्तों,"),
        w(1.0, 1.5, "क्या", "क्या"),
        w(1.5, 2.0, "हाल", "हाल"),
        w(2.0, 2.5, "है", "है?"),
    ];
    let mut c = base();
    c.font = "Noto Sans Devanagari".into();
    c.capitalization_type = CapitalizationType::None;
    c.modes.display_words = DisplayWords::Count;
    render("script-hindi", &hindi, &c, 1.2, &mut failures);

    // Japanese: one transcript token split into words, no spaces added between them.
    let japanese = vec![
        w(0.0, 2.0, "今日はいい天気ですね", "今日はいい天気ですね。"),
        w(2.0, 3.5, "散歩に行きましょう", "散歩に行きましょう！"),
    ];
    let mut c = base();
    c.font = "Sawarabi Gothic".into();
    c.capitalization_type = CapitalizationType::None;
    c.lines_count = 2;
    c.words_per_line_count = 3;
    render("script-japanese", &japanese, &c, 0.9, &mut failures);

    // English with color emoji above the words, inline, and an explicit emoji.
    let mut words = english();
    words[4].emoji = Some("🎉".into());
    words[5].punctuated_word = "build🔧".into();
    let mut c = base();
    c.modes.display_emojis = DisplayEmojis::Word;
    c.sizes.emoji_px = 100.0;
    c.word_has_punctuation = true;
    c.lines_count = 2;
    c.words_per_line_count = 3;
    render("script-english-emoji", &words, &c, 1.7, &mut failures);
    finish(failures);
}

#[test]
fn parallel_render_equals_serial_render() {
    let catalog = Catalog::builtin().unwrap();
    let words = english();
    let times: Vec<f64> = (0..180).map(|f| f as f64 / 30.0).collect();
    for id in ["emoji-hype", "moving-box", "neon-glow"] {
        let config = &catalog.get(id).unwrap().config;
        let serial_renderer = CaptionRenderer::new(&words, config, FRAME, fonts()).unwrap();
        let serial: Vec<_> = times
            .iter()
            .map(|&t| serial_renderer.render_at(t))
            .collect();
        let parallel_renderer = CaptionRenderer::new(&words, config, FRAME, fonts()).unwrap();
        let parallel = parallel_renderer.render_many(&times);
        assert_eq!(serial.len(), parallel.len());
        for (k, (s, p)) in serial.iter().zip(&parallel).enumerate() {
            assert_eq!(s.as_deref(), p.as_deref(), "{id}: frame {k} differs");
        }
        // The overlay cache returns what an uncached render draws.
        for &t in &[0.1, 1.7, 4.7] {
            let state = serial_renderer.timeline().state_at(t);
            let cached = serial_renderer.render_at(t);
            assert_eq!(
                cached.as_deref(),
                serial_renderer.render_state(&state).as_ref()
            );
        }
        assert!(serial_renderer.stats().overlay_hits > 0);
    }
}

#[test]
fn overlay_stays_inside_the_frame() {
    let catalog = Catalog::builtin().unwrap();
    for template in catalog.templates() {
        let mut config = template.config.clone();
        config.position = Position { x: 0.99, y: 0.99 };
        let renderer = CaptionRenderer::new(&english(), &config, FRAME, fonts()).unwrap();
        for f in 0..50 {
            if let Some(o) = renderer.render_at(f as f64 / 10.0) {
                assert!(o.x >= 0 && o.y >= 0);
                assert!(
                    o.x as u32 + o.width <= FRAME.width_px
                        && o.y as u32 + o.height <= FRAME.height_px
                );
                assert_eq!(o.rgba.len(), (o.width * o.height * 4) as usize);
            }
        }
    }
}

#[test]
fn goldens_have_no_strays() {
    // Every reference file belongs to a case above (a renamed case leaves no stale PNG).
    let dir = root().join("fixtures/golden");
    let names: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        names
            .iter()
            .all(|n| n.ends_with(".png") || n == "README.md"),
        "{names:?}"
    );
    let _ = Path::new(&dir);
}
