//! Partial configs: what a request or a template override gives, merged over a base config.

use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::{
    CapitalizationType, Color, ColorSet, Colors, Config, DEFAULT_FONT_WEIGHT, DEFAULT_MAX_WIDTH,
    DisplayEmojis, DisplayMode, DisplayWords, EffectMode, EffectType, Emphasis, Modes, Position,
    Sizes, SpokenMode,
};
use crate::problems::ValidationErrors;
use crate::rules;
use crate::schema::{missing_fields, schema_generator};

/// `colors` of a partial config: each role optional.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ColorsPatch {
    /// Replaces `defaultColor`.
    #[serde(
        rename = "defaultColor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub default_color: Option<ColorSet>,
    /// Replaces `spokenColor`.
    #[serde(
        rename = "spokenColor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub spoken_color: Option<ColorSet>,
    /// Replaces `hilightColor`.
    #[serde(
        rename = "hilightColor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub hilight_color: Option<ColorSet>,
    /// Replaces `strokeColor`.
    #[serde(
        rename = "strokeColor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub stroke_color: Option<ColorSet>,
    /// Replaces `backgroundColor`.
    #[serde(
        rename = "backgroundColor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub background_color: Option<ColorSet>,
    /// Replaces `shadowColor`.
    #[serde(
        rename = "shadowColor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub shadow_color: Option<ColorSet>,
}

/// `modes` of a partial config.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ModesPatch {
    /// Replaces `displayMode`.
    #[serde(
        rename = "displayMode",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub display_mode: Option<DisplayMode>,
    /// Replaces `displayWords`.
    #[serde(
        rename = "displayWords",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub display_words: Option<DisplayWords>,
    /// Replaces `spokenMode`.
    #[serde(
        rename = "spokenMode",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub spoken_mode: Option<SpokenMode>,
    /// Replaces `effectType`.
    #[serde(
        rename = "effectType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub effect_type: Option<EffectType>,
    /// Replaces `effectMode`.
    #[serde(
        rename = "effectMode",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub effect_mode: Option<EffectMode>,
    /// Replaces `displayEmojis`.
    #[serde(
        rename = "displayEmojis",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub display_emojis: Option<DisplayEmojis>,
}

/// `sizes` of a partial config.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct SizesPatch {
    /// Replaces `fontSize`, pixels.
    #[serde(rename = "fontSize", default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = rules::FONT_SIZE_PX.min, max = rules::FONT_SIZE_PX.max))]
    pub font_px: Option<f32>,
    /// Replaces `strokeSize`, pixels.
    #[serde(
        rename = "strokeSize",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(range(min = rules::STROKE_SIZE_PX.min, max = rules::STROKE_SIZE_PX.max))]
    pub stroke_px: Option<f32>,
    /// Replaces `blurSize`, pixels.
    #[serde(rename = "blurSize", default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = rules::BLUR_SIZE_PX.min, max = rules::BLUR_SIZE_PX.max))]
    pub blur_px: Option<f32>,
    /// Replaces `emojiSize`, pixels.
    #[serde(rename = "emojiSize", default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = rules::EMOJI_SIZE_PX.min, max = rules::EMOJI_SIZE_PX.max))]
    pub emoji_px: Option<f32>,
    /// Replaces `backgroundRadius`, pixels.
    #[serde(
        rename = "backgroundRadius",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(range(
        min = rules::BACKGROUND_RADIUS_PX.min,
        max = rules::BACKGROUND_RADIUS_PX.max
    ))]
    pub background_radius_px: Option<f32>,
}

/// A partial configuration, as a generate request carries it: every field optional. Fields that
/// are present replace the base template's, field by field ([`ConfigPatch::apply`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ConfigPatch {
    /// Color roles to replace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colors: Option<ColorsPatch>,
    /// Modes to replace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modes: Option<ModesPatch>,
    /// Sizes to replace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<SizesPatch>,
    /// Replaces `linesCount`.
    #[serde(
        rename = "linesCount",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(range(min = rules::LINES_COUNT.min, max = rules::LINES_COUNT.max))]
    pub lines_count: Option<u32>,
    /// Replaces `wordsPerLineCount`.
    #[serde(
        rename = "wordsPerLineCount",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(range(
        min = rules::WORDS_PER_LINE_COUNT.min,
        max = rules::WORDS_PER_LINE_COUNT.max
    ))]
    pub words_per_line_count: Option<u32>,
    /// Replaces `wordHasBackground`.
    #[serde(
        rename = "wordHasBackground",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub word_has_background: Option<bool>,
    /// Replaces `wordHasPunctuation`.
    #[serde(
        rename = "wordHasPunctuation",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub word_has_punctuation: Option<bool>,
    /// Replaces `wordHasShadow`.
    #[serde(
        rename = "wordHasShadow",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub word_has_shadow: Option<bool>,
    /// Replaces `wordHasCustomShadowColor`.
    #[serde(
        rename = "wordHasCustomShadowColor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub word_has_custom_shadow_color: Option<bool>,
    /// Replaces `emojiAnimated`.
    #[serde(
        rename = "emojiAnimated",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub emoji_animated: Option<bool>,
    /// Replaces `capitalizationType`.
    #[serde(
        rename = "capitalizationType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub capitalization_type: Option<CapitalizationType>,
    /// Replaces `font`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = rules::MAX_FONT_CHARS))]
    pub font: Option<String>,
    /// Replaces `fontWeight`.
    #[serde(
        rename = "fontWeight",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(range(min = rules::FONT_WEIGHT.min, max = rules::FONT_WEIGHT.max))]
    pub font_weight: Option<u16>,
    /// Replaces `position`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,
    /// Replaces `maxWidth`.
    #[serde(rename = "maxWidth", default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = rules::MAX_WIDTH.min, max = rules::MAX_WIDTH.max))]
    pub max_width: Option<f32>,
    /// Replaces `emphasis`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emphasis: Option<Emphasis>,
    /// Replaces `speakerColors` (an empty list turns speaker colours off).
    #[serde(
        rename = "speakerColors",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(max = rules::MAX_SPEAKER_COLORS))]
    pub speaker_colors: Option<Vec<Color>>,
    /// Replaces `cutPausesS`.
    #[serde(
        rename = "cutPausesS",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(range(min = rules::CUT_PAUSES_S.min, max = rules::CUT_PAUSES_S.max))]
    pub cut_pauses_s: Option<f32>,
    /// Replaces `cutFillers`.
    #[serde(
        rename = "cutFillers",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cut_fillers: Option<bool>,
}

impl ConfigPatch {
    /// `base` with every field this patch sets replaced.
    pub fn apply(&self, base: &Config) -> Config {
        let mut out = base.clone();
        if let Some(c) = &self.colors {
            let dst = &mut out.colors;
            for (src, dst) in [
                (&c.default_color, &mut dst.default_color),
                (&c.spoken_color, &mut dst.spoken_color),
                (&c.hilight_color, &mut dst.hilight_color),
                (&c.stroke_color, &mut dst.stroke_color),
                (&c.background_color, &mut dst.background_color),
                (&c.shadow_color, &mut dst.shadow_color),
            ] {
                if let Some(set) = src {
                    dst.clone_from(set);
                }
            }
        }
        if let Some(m) = self.modes {
            let dst = &mut out.modes;
            set(&mut dst.display_mode, m.display_mode);
            set(&mut dst.display_words, m.display_words);
            set(&mut dst.spoken_mode, m.spoken_mode);
            set(&mut dst.effect_type, m.effect_type);
            set(&mut dst.effect_mode, m.effect_mode);
            set(&mut dst.display_emojis, m.display_emojis);
        }
        if let Some(s) = self.sizes {
            let dst = &mut out.sizes;
            set(&mut dst.font_px, s.font_px);
            set(&mut dst.stroke_px, s.stroke_px);
            set(&mut dst.blur_px, s.blur_px);
            set(&mut dst.emoji_px, s.emoji_px);
            set(&mut dst.background_radius_px, s.background_radius_px);
        }
        set(&mut out.lines_count, self.lines_count);
        set(&mut out.words_per_line_count, self.words_per_line_count);
        set(&mut out.word_has_background, self.word_has_background);
        set(&mut out.word_has_punctuation, self.word_has_punctuation);
        set(&mut out.word_has_shadow, self.word_has_shadow);
        set(
            &mut out.word_has_custom_shadow_color,
            self.word_has_custom_shadow_color,
        );
        set(&mut out.emoji_animated, self.emoji_animated);
        set(&mut out.capitalization_type, self.capitalization_type);
        if let Some(font) = &self.font {
            out.font.clone_from(font);
        }
        set(&mut out.font_weight, self.font_weight);
        set(&mut out.position, self.position);
        set(&mut out.max_width, self.max_width);
        set(&mut out.emphasis, self.emphasis);
        if let Some(colors) = &self.speaker_colors {
            out.speaker_colors.clone_from(colors);
        }
        if self.cut_pauses_s.is_some() {
            out.cut_pauses_s = self.cut_pauses_s;
        }
        set(&mut out.cut_fillers, self.cut_fillers);
        out
    }

    /// The complete config this patch describes, or a `… is required` error for every field of
    /// the template shape it lacks. Extensions take their defaults.
    pub fn into_complete(self, path: &str) -> Result<Config, ValidationErrors> {
        // The required fields are those of `Config`'s schema (the template shape); the
        // extensions have defaults there and here.
        let value = serde_json::to_value(&self)
            .map_err(|e| ValidationErrors::one(path, format!("cannot be represented: {e}")))?;
        let mut missing = ValidationErrors::default();
        for field in missing_fields(config_schemas(), "Config", "ConfigPatch", &value) {
            missing.push(format!("{path}.{field}"), "is required");
        }
        let colors = self.colors.unwrap_or_default();
        let modes = self.modes.unwrap_or_default();
        let sizes = self.sizes.unwrap_or_default();
        if !missing.is_empty() {
            return Err(missing);
        }
        // Every unwrap below was checked just above; `or_default` keeps this free of panics.
        Ok(Config {
            colors: Colors {
                default_color: colors.default_color.unwrap_or_default(),
                spoken_color: colors.spoken_color.unwrap_or_default(),
                hilight_color: colors.hilight_color.unwrap_or_default(),
                stroke_color: colors.stroke_color.unwrap_or_default(),
                background_color: colors.background_color.unwrap_or_default(),
                shadow_color: colors.shadow_color.unwrap_or_default(),
            },
            modes: Modes {
                display_mode: modes.display_mode.unwrap_or(DisplayMode::All),
                display_words: modes.display_words.unwrap_or(DisplayWords::Punctuation),
                spoken_mode: modes.spoken_mode.unwrap_or(SpokenMode::None),
                effect_type: modes.effect_type.unwrap_or(EffectType::Disabled),
                effect_mode: modes.effect_mode.unwrap_or(EffectMode::Word),
                display_emojis: modes.display_emojis.unwrap_or(DisplayEmojis::None),
            },
            sizes: Sizes {
                font_px: sizes.font_px.unwrap_or_default(),
                stroke_px: sizes.stroke_px.unwrap_or_default(),
                blur_px: sizes.blur_px.unwrap_or_default(),
                emoji_px: sizes.emoji_px.unwrap_or_default(),
                background_radius_px: sizes.background_radius_px.unwrap_or_default(),
            },
            lines_count: self.lines_count.unwrap_or(1),
            words_per_line_count: self.words_per_line_count.unwrap_or(1),
            word_has_background: self.word_has_background.unwrap_or_default(),
            word_has_punctuation: self.word_has_punctuation.unwrap_or_default(),
            word_has_shadow: self.word_has_shadow.unwrap_or_default(),
            word_has_custom_shadow_color: self.word_has_custom_shadow_color.unwrap_or_default(),
            emoji_animated: self.emoji_animated.unwrap_or_default(),
            capitalization_type: self.capitalization_type.unwrap_or(CapitalizationType::None),
            font: self.font.unwrap_or_default(),
            font_weight: self.font_weight.unwrap_or(DEFAULT_FONT_WEIGHT),
            position: self.position.unwrap_or_default(),
            max_width: self.max_width.unwrap_or(DEFAULT_MAX_WIDTH),
            emphasis: self.emphasis.unwrap_or_default(),
            speaker_colors: self.speaker_colors.unwrap_or_default(),
            cut_pauses_s: self.cut_pauses_s,
            cut_fillers: self.cut_fillers.unwrap_or_default(),
        })
    }
}

/// The schemas of [`Config`] and [`ConfigPatch`] and what they refer to, derived once.
fn config_schemas() -> &'static serde_json::Map<String, serde_json::Value> {
    static SCHEMAS: OnceLock<serde_json::Map<String, serde_json::Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let mut generator = schema_generator();
        generator.subschema_for::<Config>();
        generator.subschema_for::<ConfigPatch>();
        generator.take_definitions(true)
    })
}

fn set<T>(dst: &mut T, src: Option<T>) {
    if let Some(v) = src {
        *dst = v;
    }
}
