//! Any valid config serialises and parses back equal, through both the typed and the validating
//! path.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use caption_core::{
    CapitalizationType, Color, ColorSet, Colors, Config, DisplayEmojis, DisplayMode, DisplayWords,
    EffectMode, EffectType, Emphasis, Modes, Position, Sizes, SpokenMode, parse_config_patch,
};
use proptest::prelude::*;

fn color() -> impl Strategy<Value = Color> {
    (
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        prop_oneof![Just(255u8), any::<u8>()],
    )
        .prop_map(|(r, g, b, a)| Color { r, g, b, a })
}

fn color_set() -> impl Strategy<Value = ColorSet> {
    prop::collection::vec(color(), 0..4).prop_map(|colors| ColorSet { colors })
}

fn pick<T: Copy + std::fmt::Debug + 'static>(all: &'static [T]) -> impl Strategy<Value = T> {
    prop::sample::select(all)
}

/// A value on a 1/8 grid, so that f32 → JSON → f32 is exact.
fn grid(min: f32, max: f32) -> impl Strategy<Value = f32> {
    ((min * 8.0) as i32..=(max * 8.0) as i32).prop_map(|n| n as f32 / 8.0)
}

prop_compose! {
    fn config()(
        sets in prop::collection::vec(color_set(), 6),
        modes in (pick(DisplayMode::ALL), pick(DisplayWords::ALL), pick(SpokenMode::ALL),
                  pick(EffectType::ALL), pick(EffectMode::ALL), pick(DisplayEmojis::ALL)),
        sizes in (grid(1.0, 1000.0), grid(0.0, 100.0), grid(0.0, 100.0), grid(0.0, 1000.0), grid(0.0, 500.0)),
        counts in (1u32..=10, 1u32..=50),
        flags in any::<[bool; 5]>(),
        cap in pick(CapitalizationType::ALL),
        font in "[A-Za-z][A-Za-z ]{0,30}",
        weight in 1u16..=9,
        pos in (grid(0.0, 1.0), grid(0.0, 1.0)),
        max_width in grid(0.125, 1.0),
        emphasis in pick(Emphasis::ALL),
        speaker_colors in prop::collection::vec(color(), 0..4),
        cut_pauses_s in prop::option::of(grid(0.125, 10.0)),
        cut_fillers in any::<bool>(),
    ) -> Config {
        Config {
            colors: Colors {
                default_color: sets[0].clone(), spoken_color: sets[1].clone(), hilight_color: sets[2].clone(),
                stroke_color: sets[3].clone(), background_color: sets[4].clone(), shadow_color: sets[5].clone(),
            },
            modes: Modes { display_mode: modes.0, display_words: modes.1, spoken_mode: modes.2,
                           effect_type: modes.3, effect_mode: modes.4, display_emojis: modes.5 },
            sizes: Sizes { font_px: sizes.0, stroke_px: sizes.1, blur_px: sizes.2, emoji_px: sizes.3,
                           background_radius_px: sizes.4 },
            lines_count: counts.0,
            words_per_line_count: counts.1,
            word_has_background: flags[0],
            word_has_punctuation: flags[1],
            word_has_shadow: flags[2],
            word_has_custom_shadow_color: flags[3],
            emoji_animated: flags[4],
            capitalization_type: cap,
            font,
            font_weight: weight * 100,
            position: Position { x: pos.0, y: pos.1 },
            max_width,
            emphasis,
            speaker_colors,
            cut_pauses_s,
            cut_fillers,
        }
    }
}

proptest! {
    #[test]
    fn valid_configs_round_trip(config in config()) {
        prop_assert!(config.validate().is_ok(), "{:?}", config.validate());
        let text = serde_json::to_string(&config).unwrap();
        let typed: Config = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(&typed, &config);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let validated = parse_config_patch(&value, "config").unwrap().into_complete("config").unwrap();
        prop_assert_eq!(validated, config);
    }

    #[test]
    fn arbitrary_json_never_panics(text in ".{0,200}") {
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) {
            let _ = parse_config_patch(&value, "config");
            let _ = caption_core::parse_generate_request(&value);
        }
    }
}
