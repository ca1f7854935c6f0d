use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::rules::{self, RULE_CHANNEL, channel_from_f64};

/// Sizes are pixels on a reference frame whose shorter side is this long; renderers scale them
/// by `output_short_side / REFERENCE_SHORT_SIDE_PX`.
pub const REFERENCE_SHORT_SIDE_PX: f32 = 1080.0;

/// An sRGB color. `r`, `g`, `b` are 0–255 on the wire; `a` (0–255, default 255) is an
/// extension and is only written when it is not opaque.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Color {
    /// Red, 0–255.
    pub r: u8,
    /// Green, 0–255.
    pub g: u8,
    /// Blue, 0–255.
    pub b: u8,
    /// Opacity, 0 (transparent) to 255 (opaque).
    pub a: u8,
}

impl Color {
    /// Opaque white.
    pub const WHITE: Self = Self::rgb(255, 255, 255);
    /// Opaque black.
    pub const BLACK: Self = Self::rgb(0, 0, 0);

    /// An opaque color.
    pub const fn rgb(r: u8, g: u8, b: u8) -> Self {
        Self { r, g, b, a: 255 }
    }

    /// A color with opacity `a` (0–255).
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

/// A [`Color`] as it is read: numbers, rounded to channels. Its derived schema is `Color`'s.
#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "Color")]
/// An sRGB color; channels 0–255 (fractions are rounded).
struct ColorChannels {
    #[schemars(range(min = rules::CHANNEL.min, max = rules::CHANNEL.max))]
    r: f64,
    #[schemars(range(min = rules::CHANNEL.min, max = rules::CHANNEL.max))]
    g: f64,
    #[schemars(range(min = rules::CHANNEL.min, max = rules::CHANNEL.max))]
    b: f64,
    /// Extension: opacity, default 255.
    #[serde(default = "opaque")]
    #[schemars(range(min = rules::CHANNEL.min, max = rules::CHANNEL.max))]
    a: f64,
}

fn opaque() -> f64 {
    rules::CHANNEL.max
}

impl JsonSchema for Color {
    fn schema_name() -> Cow<'static, str> {
        ColorChannels::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        ColorChannels::json_schema(generator)
    }
}

impl<'de> Deserialize<'de> for Color {
    /// Channels are numbers; a fraction is rounded, anything outside 0–255 is refused.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = ColorChannels::deserialize(deserializer)?;
        let channel = |name: &str, v: f64| {
            channel_from_f64(v)
                .ok_or_else(|| serde::de::Error::custom(format_args!("{name}: {RULE_CHANNEL}")))
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
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
pub struct ColorSet {
    /// The colors, cycled through by use.
    #[schemars(length(max = rules::MAX_COLORS_PER_SET))]
    pub colors: Vec<Color>,
}

impl ColorSet {
    /// A role of one color.
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
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Colors {
    /// Text not yet spoken.
    #[serde(rename = "defaultColor")]
    pub default_color: ColorSet,
    /// Text already spoken (see [`SpokenMode`]).
    #[serde(rename = "spokenColor")]
    pub spoken_color: ColorSet,
    /// The word being spoken (its text, or its box with `wordHasBackground`).
    #[serde(rename = "hilightColor")]
    pub hilight_color: ColorSet,
    /// Text outline.
    #[serde(rename = "strokeColor")]
    pub stroke_color: ColorSet,
    /// Boxes behind words or lines.
    #[serde(rename = "backgroundColor")]
    pub background_color: ColorSet,
    /// Drop shadow, used with `wordHasCustomShadowColor`.
    #[serde(rename = "shadowColor")]
    pub shadow_color: ColorSet,
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
    /// How words are grouped into pages. Whatever the value, a page ends with its sentence and
    /// at a silence of 0.3 s or more.
    DisplayWords {
        /// A page also ends after each clause (a comma, semicolon, colon or dash); a clause of
        /// one word ("First,") shares the page of the next.
        Punctuation = "PUNCTUATION",
        /// Pages of `linesCount × wordsPerLineCount` words, the last of a sentence shorter.
        Count = "COUNT",
        /// Pages end only at sentence ends and pauses, the words between spread evenly.
        Pause = "PAUSE",
    }
);

wire_enum!(
    /// Which words take `spokenColor`.
    SpokenMode {
        /// No word takes it.
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
        /// No animation.
        Disabled = "DISABLED",
        /// Grows past full size and settles.
        Pop = "POP",
        /// Drops in and bounces.
        Bounce = "BOUNCE",
        /// Grows from small.
        Zoom = "ZOOM",
        /// Fades in.
        Fade = "FADE",
        /// Slides up into place.
        Slide = "SLIDE",
        /// Shakes side to side.
        Shake = "SHAKE",
        /// Letters appear one by one.
        Typewriter = "TYPEWRITER",
    }
);

wire_enum!(
    /// What an effect applies to.
    EffectMode {
        /// Each word as it is spoken.
        Word = "WORD",
        /// Each line as its first word is spoken.
        Line = "LINE",
        /// Each page as it appears.
        Page = "PAGE",
    }
);

wire_enum!(
    /// Where emoji are shown.
    DisplayEmojis {
        /// No emoji.
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
    /// How words marked `emphasis` are drawn.
    Emphasis {
        /// Not at all: marks are ignored.
        None = "NONE",
        /// In the next colour of `hilightColor`.
        Color = "COLOR",
        /// At 1.25 times the font size ([`EMPHASIS_SCALE`]).
        Size = "SIZE",
        /// Both.
        ColorSize = "COLOR_SIZE",
    }
);

impl Default for Emphasis {
    /// Not at all.
    fn default() -> Self {
        Self::None
    }
}

impl Emphasis {
    /// True when emphasised words take the next colour of `hilightColor`.
    pub fn colors(self) -> bool {
        matches!(self, Self::Color | Self::ColorSize)
    }

    /// True when emphasised words are drawn at [`EMPHASIS_SCALE`].
    pub fn grows(self) -> bool {
        matches!(self, Self::Size | Self::ColorSize)
    }
}

/// How much bigger an emphasised word is drawn under `SIZE` and `COLOR_SIZE`.
pub const EMPHASIS_SCALE: f32 = 1.25;

wire_enum!(
    /// Letter case applied to every word.
    CapitalizationType {
        /// As transcribed.
        None = "NONE",
        /// EVERY LETTER CAPITAL.
        Uppercase = "UPPERCASE",
        /// every letter small.
        Lowercase = "LOWERCASE",
        /// Each word capitalised.
        Capitalize = "CAPITALIZE",
        /// The first word of each sentence capitalised.
        Sentence = "SENTENCE",
    }
);

/// The six mode fields of a template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Modes {
    /// Which words of the page show.
    #[serde(rename = "displayMode")]
    pub display_mode: DisplayMode,
    /// How words are grouped into pages.
    #[serde(rename = "displayWords")]
    pub display_words: DisplayWords,
    /// Which words take `spokenColor`.
    #[serde(rename = "spokenMode")]
    pub spoken_mode: SpokenMode,
    /// The animation.
    #[serde(rename = "effectType")]
    pub effect_type: EffectType,
    /// What the animation applies to.
    #[serde(rename = "effectMode")]
    pub effect_mode: EffectMode,
    /// Where emoji show.
    #[serde(rename = "displayEmojis")]
    pub display_emojis: DisplayEmojis,
}

/// Sizes in pixels of a frame whose shorter side is [`REFERENCE_SHORT_SIDE_PX`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Sizes {
    /// Em size of the text.
    #[serde(rename = "fontSize")]
    #[schemars(range(min = rules::FONT_SIZE_PX.min, max = rules::FONT_SIZE_PX.max))]
    pub font_px: f32,
    /// Outline width.
    #[serde(rename = "strokeSize")]
    #[schemars(range(min = rules::STROKE_SIZE_PX.min, max = rules::STROKE_SIZE_PX.max))]
    pub stroke_px: f32,
    /// Shadow blur radius.
    #[serde(rename = "blurSize")]
    #[schemars(range(min = rules::BLUR_SIZE_PX.min, max = rules::BLUR_SIZE_PX.max))]
    pub blur_px: f32,
    /// Emoji height.
    #[serde(rename = "emojiSize")]
    #[schemars(range(min = rules::EMOJI_SIZE_PX.min, max = rules::EMOJI_SIZE_PX.max))]
    pub emoji_px: f32,
    /// Corner radius of word and line boxes.
    #[serde(rename = "backgroundRadius")]
    #[schemars(range(
        min = rules::BACKGROUND_RADIUS_PX.min,
        max = rules::BACKGROUND_RADIUS_PX.max
    ))]
    pub background_radius_px: f32,
}

/// Centre of the caption block as fractions of the frame (0,0 top left; 1,1 bottom right).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Position {
    /// From the left edge (0) to the right edge (1).
    #[schemars(range(min = rules::POSITION.min, max = rules::POSITION.max))]
    pub x: f32,
    /// From the top edge (0) to the bottom edge (1).
    #[schemars(range(min = rules::POSITION.min, max = rules::POSITION.max))]
    pub y: f32,
}

impl Default for Position {
    fn default() -> Self {
        Self { x: 0.5, y: 0.75 }
    }
}

/// A complete style configuration: the template shape of the interface plus the extensions
/// `font`, `fontWeight`, `position` and `maxWidth`.
///
/// Its JSON Schema's `required` list is the template shape: the extensions have defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Config {
    /// The six color roles.
    pub colors: Colors,
    /// Display, grouping, effect and emoji modes.
    pub modes: Modes,
    /// Text, outline, shadow, emoji and corner sizes.
    pub sizes: Sizes,
    /// Lines on a page.
    #[serde(rename = "linesCount")]
    #[schemars(range(min = rules::LINES_COUNT.min, max = rules::LINES_COUNT.max))]
    pub lines_count: u32,
    /// Most words on a line (fewer when the line would be too wide).
    #[serde(rename = "wordsPerLineCount")]
    #[schemars(range(
        min = rules::WORDS_PER_LINE_COUNT.min,
        max = rules::WORDS_PER_LINE_COUNT.max
    ))]
    pub words_per_line_count: u32,
    /// The spoken word gets a box in `hilightColor` (its text keeps `defaultColor`).
    #[serde(rename = "wordHasBackground")]
    pub word_has_background: bool,
    /// Words are shown with their punctuation (`punctuated_word`), else bare.
    #[serde(rename = "wordHasPunctuation")]
    pub word_has_punctuation: bool,
    /// Text casts a drop shadow.
    #[serde(rename = "wordHasShadow")]
    pub word_has_shadow: bool,
    /// The shadow takes `shadowColor` instead of a soft black.
    #[serde(rename = "wordHasCustomShadowColor")]
    pub word_has_custom_shadow_color: bool,
    /// Emoji animate with the effect.
    #[serde(rename = "emojiAnimated")]
    pub emoji_animated: bool,
    /// Letter case applied to every word.
    #[serde(rename = "capitalizationType")]
    pub capitalization_type: CapitalizationType,
    /// Font family name, as listed by `/fonts`.
    #[schemars(length(min = 1, max = rules::MAX_FONT_CHARS))]
    pub font: String,
    /// CSS-style weight, 100–900.
    #[serde(rename = "fontWeight", default = "default_font_weight")]
    #[schemars(range(min = rules::FONT_WEIGHT.min, max = rules::FONT_WEIGHT.max))]
    pub font_weight: u16,
    /// Where the caption block's centre sits (default: centred, three quarters down).
    #[serde(default)]
    pub position: Position,
    /// Widest a line may be, as a fraction of the frame width.
    #[serde(rename = "maxWidth", default = "default_max_width")]
    #[schemars(range(min = rules::MAX_WIDTH.min, max = rules::MAX_WIDTH.max))]
    pub max_width: f32,
    /// How words marked `emphasis` are drawn (`NONE`: not at all).
    #[serde(default)]
    pub emphasis: Emphasis,
    /// Text colours of the words' speakers, in order of each speaker's first word (cycling).
    #[serde(
        rename = "speakerColors",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    #[schemars(length(max = rules::MAX_SPEAKER_COLORS))]
    pub speaker_colors: Vec<Color>,
    /// Every pause longer than this many seconds is cut to this length (absent: none is).
    #[serde(
        rename = "cutPausesS",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(range(min = rules::CUT_PAUSES_S.min, max = rules::CUT_PAUSES_S.max))]
    pub cut_pauses_s: Option<f32>,
    /// Filler words (`"filler": true`) are cut with their audio and video.
    #[serde(
        rename = "cutFillers",
        default,
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub cut_fillers: bool,
}

fn default_font_weight() -> u16 {
    DEFAULT_FONT_WEIGHT
}

fn default_max_width() -> f32 {
    DEFAULT_MAX_WIDTH
}

/// Weight used when a config names no `fontWeight`.
pub(crate) const DEFAULT_FONT_WEIGHT: u16 = 700;
/// Line width limit used when a config names no `maxWidth`.
pub(crate) const DEFAULT_MAX_WIDTH: f32 = 0.9;

/// A caption style: an id, a display name and, in the single-template response, its config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Template {
    /// Stable id, e.g. `bold-highlight`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// The complete style.
    pub config: Config,
}

/// An entry of the template list: id and name only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TemplateSummary {
    /// Stable id, e.g. `bold-highlight`.
    pub id: String,
    /// Display name.
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
