//! Random valid configs and word lists never panic the renderer (and if a generated config is
//! refused, the refusal names a field path); an invalid config is refused with its field path.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use caption_core::{
    CapitalizationType, Catalog, Config, DisplayEmojis, DisplayMode, DisplayWords, EffectMode,
    EffectType, SpokenMode, Word,
};
use caption_render::{CaptionRenderer, DirFonts, Error, FontSource, FrameSize};
use proptest::prelude::*;

fn fonts() -> Arc<dyn FontSource> {
    static FONTS: OnceLock<Arc<DirFonts>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/fonts");
            Arc::new(DirFonts::open(&dir).unwrap())
        })
        .clone()
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
            0u32..6,
            0u32..9,
            -10.0f32..400.0,
            -5.0f32..60.0,
            -5.0f32..80.0,
        ),
        (any::<bool>(), any::<bool>(), any::<bool>(), 0.1f32..1.0),
        prop::sample::select(CapitalizationType::ALL.to_vec()),
        (0.0f32..1.0, 0.0f32..1.0, 100u16..900, 0.0f32..100.0),
        prop::sample::select(vec!["Inter", "Noto Sans Arabic", "Unknown Family"]),
    )
        .prop_map(|(modes, counts, flags, cap, more, font)| {
            let mut c = Catalog::builtin().unwrap().default_config().clone();
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
            c.sizes.blur_px = counts.4;
            c.word_has_background = flags.0;
            c.word_has_shadow = flags.1;
            c.emoji_animated = flags.2;
            c.max_width = flags.3;
            c.capitalization_type = cap;
            c.position.x = more.0;
            c.position.y = more.1;
            c.font_weight = more.2;
            c.sizes.background_radius_px = more.3;
            c.font = font.to_owned();
            c
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_configs_and_words_never_panic(
        config in config_strategy(),
        raw in prop::collection::vec((0.0f64..20.0, 0.0f64..2.0, ".{0,12}"), 0..30),
        times in prop::collection::vec(-1.0f64..25.0, 1..6),
        (w, h) in (1u32..400, 1u32..400),
    ) {
        let words: Vec<Word> = raw.into_iter().map(|(s, d, t)| Word::new(s, s + d, t)).collect();
        match CaptionRenderer::new(&words, &config, FrameSize::new(w, h), fonts()) {
            Ok(renderer) => {
                for t in times {
                    if let Some(o) = renderer.render_at(t) {
                        prop_assert_eq!(o.rgba.len(), (o.width * o.height * 4) as usize);
                        prop_assert!(o.x as u32 + o.width <= w && o.y as u32 + o.height <= h);
                    }
                }
            }
            Err(Error::InvalidConfig(errors)) => {
                prop_assert!(errors.0.iter().all(|e| !e.path.is_empty()), "{errors}");
            }
            Err(other) => prop_assert!(false, "unexpected error {other}"),
        }
    }
}

#[test]
fn invalid_config_names_the_field() {
    let mut c = Catalog::builtin().unwrap().default_config().clone();
    c.sizes.font_px = -3.0;
    let err = CaptionRenderer::new(&[], &c, FrameSize::new(100, 100), fonts()).unwrap_err();
    assert!(err.to_string().contains("fontSize"), "{err}");
}
