use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Sizes are pixels on a reference frame whose shorter side is this long; renderers scale them
/// by `output_short_side / REFERENCE_SHORT_SIDE_PX`.
pub const REFERENCE_SHORT_SIDE_PX: f32 = 1080.0;

/// An sRGB color. `r`, `g`, `b` are 0–255 on the wire; `a` (0–255, default 255) is an
/// extension and is only written when it is not opaque.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Color {
    pub r: u8,
    pub g: u8,
    pub b: u8,
    pub a: u8,
}

impl Color {
    pub const WHITE: Self = Self::rgb(255, 255, 255);
    pub const BLACK: Self = Self::rgb(0, 0, 0);

    pub const fn rgb(r: u8, g: u8, b: u8) -> Self {
        Self { r, g, b, a: 255 }
    }

    pub const fn rgba(r: u8, g: u8, b: u8, a: u8) -> Self {
        Self { r, g, b, a }
    }
}

impl Serialize for Color {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let opaque = self.a == 255;
        let mut s = serializer.serialize_struct("Color", if opaque { 3 } else { 4 })?;
        s.serialize_field("r", &self.r)?;
        s.serialize_field("g", &self.g)?;
        s.serialize_field("b", &self.b)?;
        if !opaque {
            s.serialize_field("a", &self.a)?;
        }
        s.end()
    }
}

impl<'de> Deserialize<'de> for Color {
    /// Channels are numbers; a fraction is rounded, anything outside 0–255 is refused.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            r: f64,
            g: f64,
            b: f64,
            #[serde(default = "opaque")]
            a: f64,
        }
        fn opaque() -> f64 {
            255.0
        }
        let raw = Raw::deserialize(deserializer)?;
        let channel = |name: &str, v: f64| {
            crate::validate::channel_from_f64(v).ok_or_else(|| {
                serde::de::Error::custom(format_args!("{name}: {}", crate::validate::RULE_CHANNEL))
            })
        };
        Ok(Self {
            r: channel("r", raw.r)?,
            g: channel("g", raw.g)?,
            b: channel("b", raw.b)?,
            a: channel("a", raw.a)?,
        })
    }
}

/// A list of colors for one role. Several colors cycle: the n-th use of the role in a video
/// takes `colors[n mod len]`. An empty list means the role is unused.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct ColorSet {
    pub colors: Vec<Color>,
}

impl ColorSet {
    pub fn one(color: Color) -> Self {
        Self {
            colors: vec![color],
        }
    }

    /// The color for the `nth` use of this role, or `None` when the role is unused.
    pub fn nth(&self, nth: usize) -> Option<Color> {
        if self.colors.is_empty() {
            None
        } else {
            Some(self.colors[nth % self.colors.len()])
        }
    }
}

/// The six color roles (see DESIGN.md): text before, while and after it is spoken, outline,
/// box, shadow.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Colors {
    #[serde(rename = "defaultColor")]
    pub default_color: ColorSet,
    #[serde(rename = "spokenColor")]
    pub spoken_color: ColorSet,
    #[serde(rename = "hilightColor")]
    pub hilight_color: ColorSet,
    #[serde(rename = "strokeColor")]
    pub stroke_color: ColorSet,
    #[serde(rename = "backgroundColor")]
    pub background_color: ColorSet,
    #[serde(rename = "shadowColor")]
    pub shadow_color: ColorSet,
}

/// Declares a mode enum: upper-case wire names, the full value list and parsing.
macro_rules! wire_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $wire:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $wire)] $variant),+
        }

        impl $name {
            /// Every value, in the order of the design.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];
            /// Every wire spelling, in the order of [`Self::ALL`].
            pub const NAMES: &'static [&'static str] = &[$($wire),+];

            /// The wire spelling.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $wire),+ }
            }

            /// Parses the exact wire spelling.
            pub fn from_wire(s: &str) -> Option<Self> {
                match s { $($wire => Some(Self::$variant),)+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

wire_enum!(
    /// Which words of the current page are visible.
    DisplayMode {
        /// The whole page shows at once.
        All = "ALL",
        /// Words appear as they are spoken and stay until the page ends.
        Progressive = "PROGRESSIVE",
        /// One word at a time.
        Word = "WORD",
    }
);

wire_enum!(
    /// How words are grouped into pages.
    DisplayWords {
        /// A page also ends after a word that ends a sentence or clause.
        Punctuation = "PUNCTUATION",
        /// Pages of exactly `linesCount × wordsPerLineCount` words.
        Count = "COUNT",
        /// A page also ends at a silence longer than a threshold.
        Pause = "PAUSE",
    }
);

wire_enum!(
    /// Which words take `spokenColor`.
    SpokenMode {
        None = "NONE",
        /// Words already spoken.
        Word = "WORD",
        /// A whole line once its first word has been spoken.
        Line = "LINE",
    }
);

wire_enum!(
    /// The animation of the unit named by [`EffectMode`].
    EffectType {
        Disabled = "DISABLED",
        Pop = "POP",
        Bounce = "BOUNCE",
        Zoom = "ZOOM",
        Fade = "FADE",
        Slide = "SLIDE",
        Shake = "SHAKE",
        Typewriter = "TYPEWRITER",
    }
);

wire_enum!(
    /// What an effect applies to.
    EffectMode {
        Word = "WORD",
        Line = "LINE",
        Page = "PAGE",
    }
);

wire_enum!(
    /// Where emoji are shown.
    DisplayEmojis {
        None = "NONE",
        /// Beside the word that has one.
        Word = "WORD",
        /// At the end of the line.
        Line = "LINE",
        /// Above the page.
        Page = "PAGE",
    }
);

wire_enum!(
    /// Letter case applied to every word.
    CapitalizationType {
        None = "NONE",
        Uppercase = "UPPERCASE",
        Lowercase = "LOWERCASE",
        /// Each word capitalised.
        Capitalize = "CAPITALIZE",
        /// The first word of each sentence capitalised.
        Sentence = "SENTENCE",
    }
);

/// The six mode fields of a template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Modes {
    #[serde(rename = "displayMode")]
    pub display_mode: DisplayMode,
    #[serde(rename = "displayWords")]
    pub display_words: DisplayWords,
    #[serde(rename = "spokenMode")]
    pub spoken_mode: SpokenMode,
    #[serde(rename = "effectType")]
    pub effect_type: EffectType,
    #[serde(rename = "effectMode")]
    pub effect_mode: EffectMode,
    #[serde(rename = "displayEmojis")]
    pub display_emojis: DisplayEmojis,
}

/// Sizes in pixels of a frame whose shorter side is [`REFERENCE_SHORT_SIDE_PX`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sizes {
    /// Em size of the text.
    #[serde(rename = "fontSize")]
    pub font_px: f32,
    /// Outline width.
    #[serde(rename = "strokeSize")]
    pub stroke_px: f32,
    /// Shadow blur radius.
    #[serde(rename = "blurSize")]
    pub blur_px: f32,
    /// Emoji height.
    #[serde(rename = "emojiSize")]
    pub emoji_px: f32,
    /// Corner radius of word and line boxes.
    #[serde(rename = "backgroundRadius")]
    pub background_radius_px: f32,
}

/// Centre of the caption block as fractions of the frame (0,0 top left; 1,1 bottom right).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Position {
    pub x: f32,
    pub y: f32,
}

impl Default for Position {
    fn default() -> Self {
        Self { x: 0.5, y: 0.75 }
    }
}

/// A complete style configuration: the template shape of the interface plus the extensions
/// `font`, `fontWeight`, `position` and `maxWidth`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub colors: Colors,
    pub modes: Modes,
    pub sizes: Sizes,
    #[serde(rename = "linesCount")]
    pub lines_count: u32,
    #[serde(rename = "wordsPerLineCount")]
    pub words_per_line_count: u32,
    #[serde(rename = "wordHasBackground")]
    pub word_has_background: bool,
    #[serde(rename = "wordHasPunctuation")]
    pub word_has_punctuation: bool,
    #[serde(rename = "wordHasShadow")]
    pub word_has_shadow: bool,
    #[serde(rename = "wordHasCustomShadowColor")]
    pub word_has_custom_shadow_color: bool,
    #[serde(rename = "emojiAnimated")]
    pub emoji_animated: bool,
    #[serde(rename = "capitalizationType")]
    pub capitalization_type: CapitalizationType,
    /// Font family name, as listed by `/fonts`.
    pub font: String,
    /// CSS-style weight, 100–900.
    #[serde(rename = "fontWeight")]
    pub font_weight: u16,
    pub position: Position,
    /// Widest a line may be, as a fraction of the frame width.
    #[serde(rename = "maxWidth")]
    pub max_width: f32,
}

impl Config {
    /// Checks every range rule; reports every problem with its path under `config`.
    pub fn validate(&self) -> Result<(), crate::ValidationErrors> {
        let value = serde_json::to_value(self).map_err(|e| {
            crate::ValidationErrors::one("config", format!("cannot be represented as JSON: {e}"))
        })?;
        crate::parse_config_patch(&value, "config").map(|_| ())
    }
}

/// `colors` of a partial config: each role optional.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ColorsPatch {
    #[serde(
        rename = "defaultColor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub default_color: Option<ColorSet>,
    #[serde(
        rename = "spokenColor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub spoken_color: Option<ColorSet>,
    #[serde(
        rename = "hilightColor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub hilight_color: Option<ColorSet>,
    #[serde(
        rename = "strokeColor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub stroke_color: Option<ColorSet>,
    #[serde(
        rename = "backgroundColor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub background_color: Option<ColorSet>,
    #[serde(
        rename = "shadowColor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub shadow_color: Option<ColorSet>,
}

/// `modes` of a partial config.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ModesPatch {
    #[serde(
        rename = "displayMode",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub display_mode: Option<DisplayMode>,
    #[serde(
        rename = "displayWords",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub display_words: Option<DisplayWords>,
    #[serde(
        rename = "spokenMode",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub spoken_mode: Option<SpokenMode>,
    #[serde(
        rename = "effectType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub effect_type: Option<EffectType>,
    #[serde(
        rename = "effectMode",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub effect_mode: Option<EffectMode>,
    #[serde(
        rename = "displayEmojis",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub display_emojis: Option<DisplayEmojis>,
}

/// `sizes` of a partial config.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SizesPatch {
    #[serde(rename = "fontSize", default, skip_serializing_if = "Option::is_none")]
    pub font_px: Option<f32>,
    #[serde(
        rename = "strokeSize",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub stroke_px: Option<f32>,
    #[serde(rename = "blurSize", default, skip_serializing_if = "Option::is_none")]
    pub blur_px: Option<f32>,
    #[serde(rename = "emojiSize", default, skip_serializing_if = "Option::is_none")]
    pub emoji_px: Option<f32>,
    #[serde(
        rename = "backgroundRadius",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub background_radius_px: Option<f32>,
}

/// A partial configuration, as a generate request carries it: every field optional. Fields that
/// are present replace the base template's, field by field ([`ConfigPatch::apply`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ConfigPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colors: Option<ColorsPatch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modes: Option<ModesPatch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<SizesPatch>,
    #[serde(
        rename = "linesCount",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub lines_count: Option<u32>,
    #[serde(
        rename = "wordsPerLineCount",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub words_per_line_count: Option<u32>,
    #[serde(
        rename = "wordHasBackground",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub word_has_background: Option<bool>,
    #[serde(
        rename = "wordHasPunctuation",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub word_has_punctuation: Option<bool>,
    #[serde(
        rename = "wordHasShadow",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub word_has_shadow: Option<bool>,
    #[serde(
        rename = "wordHasCustomShadowColor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub word_has_custom_shadow_color: Option<bool>,
    #[serde(
        rename = "emojiAnimated",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub emoji_animated: Option<bool>,
    #[serde(
        rename = "capitalizationType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub capitalization_type: Option<CapitalizationType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub font: Option<String>,
    #[serde(
        rename = "fontWeight",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub font_weight: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,
    #[serde(rename = "maxWidth", default, skip_serializing_if = "Option::is_none")]
    pub max_width: Option<f32>,
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
        out
    }

    /// The complete config this patch describes, or a `… is required` error for every field of
    /// the template shape it lacks. Extensions take their defaults.
    pub fn into_complete(self, path: &str) -> Result<Config, crate::ValidationErrors> {
        let mut missing = crate::ValidationErrors::default();
        let mut need = |present: bool, field: &str| {
            if !present {
                missing.push(format!("{path}.{field}"), "is required");
            }
        };
        let colors = self.colors.unwrap_or_default();
        let modes = self.modes.unwrap_or_default();
        let sizes = self.sizes.unwrap_or_default();
        for (present, name) in [
            (colors.default_color.is_some(), "colors.defaultColor"),
            (colors.spoken_color.is_some(), "colors.spokenColor"),
            (colors.hilight_color.is_some(), "colors.hilightColor"),
            (colors.stroke_color.is_some(), "colors.strokeColor"),
            (colors.background_color.is_some(), "colors.backgroundColor"),
            (colors.shadow_color.is_some(), "colors.shadowColor"),
            (modes.display_mode.is_some(), "modes.displayMode"),
            (modes.display_words.is_some(), "modes.displayWords"),
            (modes.spoken_mode.is_some(), "modes.spokenMode"),
            (modes.effect_type.is_some(), "modes.effectType"),
            (modes.effect_mode.is_some(), "modes.effectMode"),
            (modes.display_emojis.is_some(), "modes.displayEmojis"),
            (sizes.font_px.is_some(), "sizes.fontSize"),
            (sizes.stroke_px.is_some(), "sizes.strokeSize"),
            (sizes.blur_px.is_some(), "sizes.blurSize"),
            (sizes.emoji_px.is_some(), "sizes.emojiSize"),
            (
                sizes.background_radius_px.is_some(),
                "sizes.backgroundRadius",
            ),
            (self.lines_count.is_some(), "linesCount"),
            (self.words_per_line_count.is_some(), "wordsPerLineCount"),
            (self.word_has_background.is_some(), "wordHasBackground"),
            (self.word_has_punctuation.is_some(), "wordHasPunctuation"),
            (self.word_has_shadow.is_some(), "wordHasShadow"),
            (
                self.word_has_custom_shadow_color.is_some(),
                "wordHasCustomShadowColor",
            ),
            (self.emoji_animated.is_some(), "emojiAnimated"),
            (self.capitalization_type.is_some(), "capitalizationType"),
            (self.font.is_some(), "font"),
        ] {
            need(present, name);
        }
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
        })
    }
}

/// Weight used when a config names no `fontWeight`.
pub(crate) const DEFAULT_FONT_WEIGHT: u16 = 700;
/// Line width limit used when a config names no `maxWidth`.
pub(crate) const DEFAULT_MAX_WIDTH: f32 = 0.9;

fn set<T>(dst: &mut T, src: Option<T>) {
    if let Some(v) = src {
        *dst = v;
    }
}

/// A caption style: an id, a display name and, in the single-template response, its config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Template {
    pub id: String,
    pub name: String,
    pub config: Config,
}

/// An entry of the template list: id and name only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateSummary {
    pub id: String,
    pub name: String,
}

impl From<&Template> for TemplateSummary {
    fn from(t: &Template) -> Self {
        Self {
            id: t.id.clone(),
            name: t.name.clone(),
        }
    }
}
