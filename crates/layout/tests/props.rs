//! Property tests of the layout: widths, order, the active word, sentence pages, no panics.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use caption_core::{
    CapitalizationType, Catalog, Config, DisplayEmojis, DisplayMode, DisplayWords, EffectMode,
    EffectType, SpokenMode, Word,
};
use caption_layout::{FrameSize, MonoMeasure, Timeline, Visibility, ends_sentence};
use proptest::prelude::*;

fn base_config() -> Config {
    Catalog::builtin().unwrap().default_config().clone()
}

fn word_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,12}",
        "[a-z]{1,8}[.,!?]",
        "[A-Z]{1,30}",
        Just("今日は".to_owned()),
        Just("مرحبا".to_owned()),
        Just("fire".to_owned()),
    ]
}

/// Non-overlapping words: each starts at or after the previous end.
fn words_strategy() -> impl Strategy<Value = Vec<Word>> {
    prop::collection::vec((word_strategy(), 0.0f64..1.2, 0.0f64..1.0), 0..60).prop_map(|items| {
        let mut t = 0.0;
        items
            .into_iter()
            .map(|(text, gap, dur)| {
                let start = t + gap;
                let end = start + dur;
                t = end;
                let bare = text.trim_end_matches(['.', ',', '!', '?']).to_owned();
                Word {
                    start,
                    end,
                    word: if bare.is_empty() { text.clone() } else { bare },
                    punctuated_word: text,
                    emoji: None,
                    ..Default::default()
                }
            })
            .collect()
    })
}

fn config_strategy() -> impl Strategy<Value = Config> {
    (
        (
            prop::sample::select(DisplayMode::ALL.to_vec()),
            prop::sample::select(DisplayWords::ALL.to_vec()),
            prop::sample::select(SpokenMode::ALL.to_vec()),
            prop::sample::select(EffectType::ALL.to_vec()),
            prop::sample::select(EffectMode::ALL.to_vec()),
            prop::sample::select(DisplayEmojis::ALL.to_vec()),
        ),
        (
            1u32..5,
            1u32..9,
            10.0f32..300.0,
            0.0f32..30.0,
            0.0f32..200.0,
        ),
        (any::<bool>(), any::<bool>(), any::<bool>(), 0.1f32..1.0),
        prop::sample::select(CapitalizationType::ALL.to_vec()),
        (0.0f32..1.0, 0.0f32..1.0),
    )
        .prop_map(|(modes, counts, flags, cap, pos)| {
            let mut c = base_config();
            c.modes.display_mode = modes.0;
            c.modes.display_words = modes.1;
            c.modes.spoken_mode = modes.2;
            c.modes.effect_type = modes.3;
            c.modes.effect_mode = modes.4;
            c.modes.display_emojis = modes.5;
            c.lines_count = counts.0;
            c.words_per_line_count = counts.1;
            c.sizes.font_px = counts.2;
            c.sizes.stroke_px = counts.3;
            c.sizes.emoji_px = counts.4;
            c.word_has_background = flags.0;
            c.word_has_punctuation = flags.1;
            c.emoji_animated = flags.2;
            c.max_width = flags.3;
            c.capitalization_type = cap;
            c.position.x = pos.0;
            c.position.y = pos.1;
            c
        })
}

const FRAME: FrameSize = FrameSize {
    width_px: 540,
    height_px: 960,
};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn no_line_exceeds_the_allowed_width(words in words_strategy(), config in config_strategy()) {
        let t = Timeline::build(&words, &config, FRAME, &MonoMeasure::default());
        let allowed = FRAME.width_px as f32 * config.max_width;
        for line in &t.lines {
            prop_assert!(line.rect.w <= t.line_limit_px + 0.01, "{} > {}", line.rect.w, t.line_limit_px);
            prop_assert!(line.rect.w <= allowed + 0.01);
            prop_assert!(line.words.len() <= config.words_per_line_count as usize);
        }
        prop_assert!(t.pages.iter().all(|p| p.lines.len() <= config.lines_count as usize));
    }

    #[test]
    fn word_order_is_kept(words in words_strategy(), config in config_strategy()) {
        let t = Timeline::build(&words, &config, FRAME, &MonoMeasure::default());
        for (k, w) in t.words.iter().enumerate() {
            prop_assert_eq!(w.index, k);
        }
        for pair in t.words.windows(2) {
            prop_assert!(pair[0].start_s <= pair[1].start_s);
            prop_assert!(pair[0].page <= pair[1].page && pair[0].line <= pair[1].line);
        }
        // Pages follow each other in time and every word appears exactly once.
        let covered: usize = t.pages.iter().map(|p| p.words.len()).sum();
        prop_assert_eq!(covered, t.words.len());
        for pair in t.pages.windows(2) {
            prop_assert!(pair[0].show_end_s <= pair[1].show_start_s + 1e-9);
        }
    }

    #[test]
    fn active_word_holds_t(words in words_strategy(), config in config_strategy(), f in 0.0f64..1.0) {
        let t = Timeline::build(&words, &config, FRAME, &MonoMeasure::default());
        let at = t.duration_s() * f;
        let expected = t.words.iter().find(|w| w.start_s <= at && at < w.end_s).map(|w| w.index);
        prop_assert_eq!(t.active_word_at(at), expected);
        let state = t.state_at(at);
        for s in &state.words {
            let w = &t.words[s.word];
            prop_assert_eq!(s.visibility == Visibility::Active, w.start_s <= at && at < w.end_s);
        }
    }

    #[test]
    fn punctuation_pages_hold_one_sentence(words in words_strategy(), mut config in config_strategy()) {
        config.modes.display_words = DisplayWords::Punctuation;
        config.word_has_punctuation = true;
        let t = Timeline::build(&words, &config, FRAME, &MonoMeasure::default());
        for page in &t.pages {
            let inner = &t.words[page.words.start..page.words.end.saturating_sub(1)];
            for w in inner {
                prop_assert!(!ends_sentence(&w.text), "{:?} ends a sentence inside a page", w.text);
            }
        }
    }

    #[test]
    fn sentences_are_spread_evenly_over_their_pages(
        lengths in prop::collection::vec(1usize..20, 1..8),
        mut config in config_strategy(),
    ) {
        // Sentences of plain words (none leaning on the next) that always fit their lines: a
        // sentence too long for one page is spread evenly, never leaving a stray word.
        config.modes.display_words = DisplayWords::Punctuation;
        config.modes.display_mode = DisplayMode::All;
        config.modes.display_emojis = DisplayEmojis::None;
        config.word_has_punctuation = true;
        config.max_width = 0.9;
        config.sizes.font_px = config.sizes.font_px.min(20.0);
        config.words_per_line_count = config.words_per_line_count.min(3);
        let mut words = Vec::new();
        let mut sentence_of = Vec::new();
        for (s, &n) in lengths.iter().enumerate() {
            for k in 0..n {
                let t = words.len() as f64 * 0.4;
                let text = if k + 1 == n { format!("word{s}x{k}.") } else { format!("word{s}x{k}") };
                words.push(Word::new(t, t + 0.3, text));
                sentence_of.push(s);
            }
        }
        let t = Timeline::build(&words, &config, FRAME, &MonoMeasure::default());
        for s in 0..lengths.len() {
            let sizes: Vec<usize> = t.pages.iter()
                .filter(|p| sentence_of[p.words.start] == s)
                .map(|p| p.words.len())
                .collect();
            let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            prop_assert!(max - min <= 1, "sentence {s}: pages of {sizes:?} words");
        }
    }

    #[test]
    fn effects_never_push_a_word_into_its_neighbours(
        words in words_strategy(),
        mut config in config_strategy(),
        effect in prop::sample::select(vec![EffectType::Pop, EffectType::Bounce, EffectType::Shake, EffectType::Zoom]),
        mode in prop::sample::select(vec![EffectMode::Word, EffectMode::Line]),
    ) {
        config.modes.effect_type = effect;
        config.modes.effect_mode = mode;
        config.modes.display_emojis = DisplayEmojis::None;
        let t = Timeline::build(&words, &config, FRAME, &MonoMeasure::default());
        let times = t.words.iter().flat_map(|w| [w.start_s + 0.05, w.start_s + 0.125, w.start_s + 0.2]);
        for at in times {
            let state = t.state_at(at);
            // Each drawn word's text box, where its effect puts it: no two may intersect.
            let boxes: Vec<_> = state.words.iter().filter(|s| s.transform.opacity > 0).map(|s| {
                s.transform.apply_rect(&t.words[s.word].rect)
            }).collect();
            for (k, a) in boxes.iter().enumerate() {
                for b in &boxes[k + 1..] {
                    let across = a.x.max(b.x) < a.right().min(b.right()) - 0.01;
                    let down = a.y.max(b.y) < a.bottom().min(b.bottom()) - 0.01;
                    prop_assert!(!(across && down), "{effect:?} {mode:?} at {at}: {a:?} overlaps {b:?}");
                }
            }
        }
    }

    #[test]
    fn random_inputs_never_panic(
        raw in prop::collection::vec((any::<f64>(), any::<f64>(), ".{0,20}"), 0..40),
        config in config_strategy(),
        w in 0u32..3000, h in 0u32..3000, at in any::<f64>(),
    ) {
        let words: Vec<Word> = raw.into_iter().map(|(s, e, text)| Word::new(s, e, text)).collect();
        let t = Timeline::build(&words, &config, FrameSize::new(w, h), &MonoMeasure::default());
        let _ = t.state_at(at);
        let _ = t.state_at(t.duration_s() / 2.0);
    }
}

#[test]
fn emoji_hype_finds_emoji_for_creator_words_in_several_languages() {
    let config = Catalog::builtin()
        .unwrap()
        .get("emoji-hype")
        .unwrap()
        .config
        .clone();
    let said = |text: &str| -> Vec<Option<String>> {
        let words: Vec<Word> = text
            .split(' ')
            .enumerate()
            .map(|(i, w)| Word::new(i as f64 * 0.4, i as f64 * 0.4 + 0.3, w))
            .collect();
        let t = Timeline::build(&words, &config, FRAME, &MonoMeasure::default());
        t.words.iter().map(|w| w.emoji.clone()).collect()
    };
    let english = said("I love money, great videos, subscribe!");
    for (k, word) in [(1, "love"), (2, "money"), (3, "great"), (5, "subscribe")] {
        assert!(english[k].is_some(), "{word}: {english:?}");
    }
    assert_eq!(english[0], None);
    // Spanish and German transcripts get their own language's keywords.
    let spanish = said("el fuego y la pizza que me gusta");
    assert_eq!(spanish[1].as_deref(), Some("🔥"));
    let german = said("das Feuer und die Rakete");
    assert_eq!(german[1].as_deref(), Some("🔥"));
    assert_eq!(german[4].as_deref(), Some("🚀"));
}
