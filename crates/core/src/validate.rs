//! Validation of loose JSON against every rule of the interface, reporting all problems at once.
//!
//! serde stops at the first error and cannot say "and also this"; a request with three mistakes
//! should get three messages. So requests are walked as [`serde_json::Value`] here, every problem
//! is recorded with its path (`config.colors.hilightColor.colors[0].r`) and its rule, and the
//! typed value is built only from the parts that passed.

use std::sync::OnceLock;

use serde::Deserialize as _;
use serde_json::{Map, Value};

use crate::components::wire_schemas;
use crate::config::{
    CapitalizationType, Color, ColorSet, Config, DisplayEmojis, DisplayMode, DisplayWords,
    EffectMode, EffectType, Emphasis, Position, SpokenMode,
};
use crate::jobs::{GenerateRequest, OutputKind, Reframe, TranscriptRequest, TranscriptTask};
use crate::patch::{ColorsPatch, ConfigPatch, ModesPatch, SizesPatch};
use crate::problems::ValidationErrors;
use crate::rules::{self, IntegerRange, NumberRange, RULE_CHANNEL, channel_from_f64};
use crate::speakers::{RULE_SPEAKERS, SpeakerCount};
use crate::word::Word;

/// What to do with a field no rule knows (a typo such as `colours`, or a field of another
/// product's format).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum UnknownFields {
    /// Accept the input and say nothing (the interface's default: unknown fields are ignored).
    #[default]
    Ignore,
    /// Accept the input and list each unknown field, with the closest known name, as a warning.
    Warn,
    /// Refuse the input: each unknown field is an error.
    Deny,
}

/// An input that passed validation, with the warnings it raised.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked<T> {
    /// The parsed input.
    pub value: T,
    /// Unknown fields under [`UnknownFields::Warn`], each with its path.
    pub warnings: ValidationErrors,
}

/// Everything one validation found, as a report that lists them all: the parsed input when no
/// rule is broken, every error, and every warning (unknown fields under
/// [`UnknownFields::Warn`]) whether or not there are errors too.
#[derive(Debug, Clone, PartialEq)]
pub struct Findings<T> {
    /// The parsed input; `None` when `errors` is not empty.
    pub value: Option<T>,
    /// Every rule broken, each with its path.
    pub errors: ValidationErrors,
    /// Every unknown field, each with its path and the closest known name.
    pub warnings: ValidationErrors,
}

impl<T> Findings<T> {
    /// The input with its warnings, or its errors (the warnings then dropped).
    pub fn into_result(self) -> Result<Checked<T>, ValidationErrors> {
        match self.value {
            Some(value) if self.errors.is_empty() => Ok(Checked {
                value,
                warnings: self.warnings,
            }),
            _ => Err(self.errors),
        }
    }
}

/// Top-level fields of a generate request that the service reads besides the interface's.
const SERVICE_REQUEST_FIELDS: &[&str] = &["async", "webhook_url"];

/// The field names of the wire schema's object `name` (`ConfigPatch`, `ColorsPatch`, ...): the
/// fields the validator knows, the candidates of a "did you mean".
fn known_fields(name: &str) -> Vec<&'static str> {
    static SCHEMAS: OnceLock<Map<String, Value>> = OnceLock::new();
    let schemas = SCHEMAS.get_or_init(wire_schemas);
    schemas
        .get(name)
        .and_then(|schema| schema.get("properties"))
        .and_then(Value::as_object)
        .map(|properties| properties.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// Lowest `fontWeight` (CSS's Thin).
pub const FONT_WEIGHT_MIN: u64 = rules::FONT_WEIGHT.min;
/// Highest `fontWeight` (CSS's Black).
pub const FONT_WEIGHT_MAX: u64 = rules::FONT_WEIGHT.max;

struct Walker {
    errors: ValidationErrors,
    warnings: ValidationErrors,
    unknown: UnknownFields,
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_owned()
    } else {
        format!("{path}.{field}")
    }
}

impl Walker {
    fn new() -> Self {
        Self::with(UnknownFields::Ignore)
    }

    fn with(unknown: UnknownFields) -> Self {
        Self {
            errors: ValidationErrors::default(),
            warnings: ValidationErrors::default(),
            unknown,
        }
    }

    /// Reports the fields of `map` that are not in `known`, each with the closest of
    /// `known` and `nested` (paths into sub-objects) as a suggestion.
    fn unknown_fields(
        &mut self,
        map: &Map<String, Value>,
        path: &str,
        known: &[&str],
        nested: &[&str],
    ) {
        if self.unknown == UnknownFields::Ignore {
            return;
        }
        for key in map.keys().filter(|k| !known.contains(&k.as_str())) {
            let candidates: Vec<&str> = known.iter().chain(nested).copied().collect();
            let rule = match crate::suggest::closest(key, &candidates, 1).first() {
                Some(close) => format!("unknown field; did you mean {}?", join(path, close)),
                None => "unknown field".to_owned(),
            };
            let rule = match self.unknown {
                UnknownFields::Warn => format!("{rule} (ignored)"),
                _ => rule,
            };
            let target = if self.unknown == UnknownFields::Deny {
                &mut self.errors
            } else {
                &mut self.warnings
            };
            target.push(join(path, key), rule);
        }
    }

    fn fail(&mut self, path: &str, rule: impl Into<String>) {
        self.errors.push(path, rule);
    }

    fn finish<T>(self, value: T) -> Result<T, ValidationErrors> {
        if self.errors.is_empty() {
            Ok(value)
        } else {
            Err(self.errors)
        }
    }

    fn object<'v>(&mut self, v: &'v Value, path: &str) -> Option<&'v Map<String, Value>> {
        match v {
            Value::Object(map) => Some(map),
            _ => {
                self.fail(path, "must be an object");
                None
            }
        }
    }

    /// A field that may be absent; `null` counts as absent.
    fn field<'v>(map: &'v Map<String, Value>, name: &str) -> Option<&'v Value> {
        map.get(name).filter(|v| !v.is_null())
    }

    fn bool(&mut self, map: &Map<String, Value>, path: &str, name: &str) -> Option<bool> {
        let v = Self::field(map, name)?;
        let b = v.as_bool();
        if b.is_none() {
            self.fail(&join(path, name), "must be true or false");
        }
        b
    }

    fn number(&mut self, v: &Value, path: &str, range: NumberRange) -> Option<f64> {
        let NumberRange { min, max } = range;
        match v.as_f64() {
            Some(n) if n.is_finite() && (min..=max).contains(&n) => Some(n),
            _ => {
                self.fail(path, format!("must be a number from {min} to {max}"));
                None
            }
        }
    }

    fn integer(&mut self, v: &Value, path: &str, range: IntegerRange) -> Option<u64> {
        let IntegerRange { min, max } = range;
        match v.as_u64() {
            Some(n) if (min..=max).contains(&n) => Some(n),
            _ => {
                self.fail(path, format!("must be an integer from {min} to {max}"));
                None
            }
        }
    }

    fn string<'v>(&mut self, v: &'v Value, path: &str, max_chars: usize) -> Option<&'v str> {
        match v.as_str() {
            Some(s) if !s.trim().is_empty() && s.chars().count() <= max_chars => Some(s),
            _ => {
                self.fail(
                    path,
                    format!("must be a non-empty string of at most {max_chars} characters"),
                );
                None
            }
        }
    }

    fn wire_enum<T: Copy>(
        &mut self,
        map: &Map<String, Value>,
        path: &str,
        name: &str,
        names: &[&str],
        parse: fn(&str) -> Option<T>,
    ) -> Option<T> {
        let v = Self::field(map, name)?;
        let parsed = v.as_str().and_then(parse);
        if parsed.is_none() {
            self.fail(
                &join(path, name),
                format!("must be one of {}", names.join(", ")),
            );
        }
        parsed
    }

    fn color(&mut self, v: &Value, path: &str) -> Option<Color> {
        let map = self.object(v, path)?;
        self.unknown_fields(map, path, &known_fields("Color"), &[]);
        let mut channel = |name: &str, required: bool| -> Option<u8> {
            let p = join(path, name);
            match Self::field(map, name) {
                None if required => {
                    self.fail(&p, format!("is required ({RULE_CHANNEL})"));
                    None
                }
                None => Some(255),
                Some(v) => {
                    let c = v.as_f64().and_then(channel_from_f64);
                    if c.is_none() {
                        self.fail(&p, RULE_CHANNEL);
                    }
                    c
                }
            }
        };
        let (r, g, b, a) = (
            channel("r", true),
            channel("g", true),
            channel("b", true),
            channel("a", false),
        );
        Some(Color {
            r: r?,
            g: g?,
            b: b?,
            a: a?,
        })
    }

    fn color_set(&mut self, v: &Value, path: &str) -> Option<ColorSet> {
        let map = self.object(v, path)?;
        self.unknown_fields(map, path, &known_fields("ColorSet"), &[]);
        let colors_path = join(path, "colors");
        let Some(list) = Self::field(map, "colors") else {
            self.fail(&colors_path, "is required (an array of colors)");
            return None;
        };
        self.color_list(list, &colors_path, rules::MAX_COLORS_PER_SET)
            .map(|colors| ColorSet { colors })
    }

    fn color_list(&mut self, v: &Value, path: &str, max: usize) -> Option<Vec<Color>> {
        let Some(items) = v.as_array() else {
            self.fail(path, format!("must be an array of at most {max} colors"));
            return None;
        };
        if items.len() > max {
            self.fail(path, format!("must hold at most {max} colors"));
            return None;
        }
        let colors: Vec<Option<Color>> = items
            .iter()
            .enumerate()
            .map(|(i, c)| self.color(c, &format!("{path}[{i}]")))
            .collect();
        colors.into_iter().collect()
    }

    fn colors(&mut self, v: &Value, path: &str) -> Option<ColorsPatch> {
        let map = self.object(v, path)?;
        self.unknown_fields(map, path, &known_fields("ColorsPatch"), &[]);
        let mut slot =
            |name: &str| Self::field(map, name).and_then(|v| self.color_set(v, &join(path, name)));
        Some(ColorsPatch {
            default_color: slot("defaultColor"),
            spoken_color: slot("spokenColor"),
            hilight_color: slot("hilightColor"),
            stroke_color: slot("strokeColor"),
            background_color: slot("backgroundColor"),
            shadow_color: slot("shadowColor"),
        })
    }

    fn modes(&mut self, v: &Value, path: &str) -> Option<ModesPatch> {
        let map = self.object(v, path)?;
        self.unknown_fields(map, path, &known_fields("ModesPatch"), &[]);
        Some(ModesPatch {
            display_mode: self.wire_enum(
                map,
                path,
                "displayMode",
                DisplayMode::NAMES,
                DisplayMode::from_wire,
            ),
            display_words: self.wire_enum(
                map,
                path,
                "displayWords",
                DisplayWords::NAMES,
                DisplayWords::from_wire,
            ),
            spoken_mode: self.wire_enum(
                map,
                path,
                "spokenMode",
                SpokenMode::NAMES,
                SpokenMode::from_wire,
            ),
            effect_type: self.wire_enum(
                map,
                path,
                "effectType",
                EffectType::NAMES,
                EffectType::from_wire,
            ),
            effect_mode: self.wire_enum(
                map,
                path,
                "effectMode",
                EffectMode::NAMES,
                EffectMode::from_wire,
            ),
            display_emojis: self.wire_enum(
                map,
                path,
                "displayEmojis",
                DisplayEmojis::NAMES,
                DisplayEmojis::from_wire,
            ),
        })
    }

    fn sizes(&mut self, v: &Value, path: &str) -> Option<SizesPatch> {
        let map = self.object(v, path)?;
        self.unknown_fields(map, path, &known_fields("SizesPatch"), &[]);
        let mut size = |name: &str, range: NumberRange| {
            Self::field(map, name)
                .and_then(|v| self.number(v, &join(path, name), range))
                .map(|n| n as f32)
        };
        Some(SizesPatch {
            font_px: size("fontSize", rules::FONT_SIZE_PX),
            stroke_px: size("strokeSize", rules::STROKE_SIZE_PX),
            blur_px: size("blurSize", rules::BLUR_SIZE_PX),
            emoji_px: size("emojiSize", rules::EMOJI_SIZE_PX),
            background_radius_px: size("backgroundRadius", rules::BACKGROUND_RADIUS_PX),
        })
    }

    fn position(&mut self, v: &Value, path: &str) -> Option<Position> {
        let map = self.object(v, path)?;
        self.unknown_fields(map, path, &known_fields("Position"), &[]);
        let mut coord = |name: &str| {
            let p = join(path, name);
            match Self::field(map, name) {
                None => {
                    self.fail(&p, "is required (a number from 0 to 1)");
                    None
                }
                Some(v) => self.number(v, &p, rules::POSITION).map(|n| n as f32),
            }
        };
        let (x, y) = (coord("x"), coord("y"));
        Some(Position { x: x?, y: y? })
    }

    fn config(&mut self, v: &Value, path: &str) -> ConfigPatch {
        let Some(map) = self.object(v, path) else {
            return ConfigPatch::default();
        };
        let nested: Vec<String> = [
            ("colors", "ColorsPatch"),
            ("modes", "ModesPatch"),
            ("sizes", "SizesPatch"),
        ]
        .into_iter()
        .flat_map(|(group, schema)| {
            known_fields(schema)
                .into_iter()
                .map(move |f| format!("{group}.{f}"))
        })
        .collect();
        let nested: Vec<&str> = nested.iter().map(String::as_str).collect();
        self.unknown_fields(map, path, &known_fields("ConfigPatch"), &nested);
        let int = |w: &mut Self, name: &str, range: IntegerRange| {
            Self::field(map, name).and_then(|v| w.integer(v, &join(path, name), range))
        };
        ConfigPatch {
            colors: Self::field(map, "colors").and_then(|v| self.colors(v, &join(path, "colors"))),
            modes: Self::field(map, "modes").and_then(|v| self.modes(v, &join(path, "modes"))),
            sizes: Self::field(map, "sizes").and_then(|v| self.sizes(v, &join(path, "sizes"))),
            lines_count: int(self, "linesCount", rules::LINES_COUNT).map(|n| n as u32),
            words_per_line_count: int(self, "wordsPerLineCount", rules::WORDS_PER_LINE_COUNT)
                .map(|n| n as u32),
            word_has_background: self.bool(map, path, "wordHasBackground"),
            word_has_punctuation: self.bool(map, path, "wordHasPunctuation"),
            word_has_shadow: self.bool(map, path, "wordHasShadow"),
            word_has_custom_shadow_color: self.bool(map, path, "wordHasCustomShadowColor"),
            emoji_animated: self.bool(map, path, "emojiAnimated"),
            capitalization_type: self.wire_enum(
                map,
                path,
                "capitalizationType",
                CapitalizationType::NAMES,
                CapitalizationType::from_wire,
            ),
            font: Self::field(map, "font")
                .and_then(|v| self.string(v, &join(path, "font"), rules::MAX_FONT_CHARS))
                .map(str::to_owned),
            font_weight: int(self, "fontWeight", rules::FONT_WEIGHT).map(|n| n as u16),
            position: Self::field(map, "position")
                .and_then(|v| self.position(v, &join(path, "position"))),
            max_width: Self::field(map, "maxWidth")
                .and_then(|v| self.number(v, &join(path, "maxWidth"), rules::MAX_WIDTH))
                .map(|n| n as f32),
            emphasis: self.wire_enum(map, path, "emphasis", Emphasis::NAMES, Emphasis::from_wire),
            speaker_colors: Self::field(map, "speakerColors").and_then(|v| {
                self.color_list(v, &join(path, "speakerColors"), rules::MAX_SPEAKER_COLORS)
            }),
            cut_pauses_s: Self::field(map, "cutPausesS")
                .and_then(|v| self.number(v, &join(path, "cutPausesS"), rules::CUT_PAUSES_S))
                .map(|n| n as f32),
            cut_fillers: self.bool(map, path, "cutFillers"),
        }
    }

    fn word(&mut self, v: &Value, path: &str) -> Option<Word> {
        let map = self.object(v, path)?;
        let mut time = |name: &str| {
            let p = join(path, name);
            match Self::field(map, name) {
                None => {
                    self.fail(&p, "is required (seconds, a number from 0)");
                    None
                }
                Some(v) => self.number(v, &p, rules::WORD_TIME_S),
            }
        };
        let (start, end) = (time("start"), time("end"));
        if let (Some(s), Some(e)) = (start, end)
            && s > e
        {
            self.fail(&join(path, "end"), "must not be before start");
        }
        let mut text = |name: &str| {
            let p = join(path, name);
            match Self::field(map, name) {
                None => {
                    self.fail(&p, "is required (a string)");
                    None
                }
                Some(Value::String(s)) if s.len() <= rules::MAX_WORD_BYTES => Some(s.clone()),
                Some(_) => {
                    self.fail(
                        &p,
                        format!(
                            "must be a string of at most {} bytes",
                            rules::MAX_WORD_BYTES
                        ),
                    );
                    None
                }
            }
        };
        let (word, punctuated) = (text("word"), text("punctuated_word"));
        let emoji = match Self::field(map, "emoji") {
            None => None,
            Some(Value::String(s))
                if !s.is_empty() && s.chars().count() <= rules::MAX_EMOJI_CHARS =>
            {
                Some(s.clone())
            }
            Some(_) => {
                self.fail(
                    &join(path, "emoji"),
                    format!(
                        "must be a non-empty string of at most {} characters",
                        rules::MAX_EMOJI_CHARS
                    ),
                );
                None
            }
        };
        let filler = self.bool(map, path, "filler").unwrap_or(false);
        let emphasis = self.bool(map, path, "emphasis");
        let speaker = Self::field(map, "speaker")
            .and_then(|v| self.string(v, &join(path, "speaker"), rules::MAX_SPEAKER_CHARS))
            .map(str::to_owned);
        let confidence = Self::field(map, "confidence")
            .and_then(|v| self.number(v, &join(path, "confidence"), rules::CONFIDENCE));
        Some(Word {
            start: start?,
            end: end?,
            word: word?,
            punctuated_word: punctuated?,
            emoji,
            filler,
            emphasis,
            speaker,
            confidence,
        })
    }

    fn words(&mut self, v: &Value, path: &str) -> Vec<Word> {
        let Some(items) = v.as_array() else {
            self.fail(path, "must be an array of words");
            return Vec::new();
        };
        if items.len() > rules::MAX_WORDS {
            self.fail(
                path,
                format!("must hold at most {} words", rules::MAX_WORDS),
            );
            return Vec::new();
        }
        let mut words: Vec<Word> = items
            .iter()
            .enumerate()
            .filter_map(|(i, w)| self.word(w, &format!("{path}[{i}]")))
            .collect();
        // Out-of-order words are accepted and sorted; the sort is stable so equal starts keep
        // their order.
        words.sort_by(|a, b| a.start.total_cmp(&b.start));
        words
    }

    fn required_string(
        &mut self,
        map: &Map<String, Value>,
        name: &str,
        max_chars: usize,
    ) -> Option<String> {
        match Self::field(map, name) {
            None => {
                self.fail(name, "is required (a non-empty string)");
                None
            }
            Some(v) => self.string(v, name, max_chars).map(str::to_owned),
        }
    }
}

impl Config {
    /// Checks every range rule; reports every problem with its path under `config`.
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        let value = serde_json::to_value(self).map_err(|e| {
            ValidationErrors::one("config", format!("cannot be represented as JSON: {e}"))
        })?;
        parse_config_patch(&value, "config").map(|_| ())
    }
}

/// Validates a (partial) config found at `path`; every problem is reported with its path.
/// Unknown fields are ignored.
pub fn parse_config_patch(value: &Value, path: &str) -> Result<ConfigPatch, ValidationErrors> {
    parse_config_patch_with(value, path, UnknownFields::Ignore).map(|c| c.value)
}

/// [`parse_config_patch`] with unknown fields treated as `unknown` says.
pub fn parse_config_patch_with(
    value: &Value,
    path: &str,
    unknown: UnknownFields,
) -> Result<Checked<ConfigPatch>, ValidationErrors> {
    check_config_patch(value, path, unknown).into_result()
}

/// Validates a (partial) config found at `path` and reports every error and every warning
/// together (a config file's checker lists both).
///
/// ```
/// use caption_core::{UnknownFields, check_config_patch};
/// use serde_json::json;
///
/// let found = check_config_patch(&json!({"colours": {}, "linesCount": 0}), "config", UnknownFields::Warn);
/// assert!(found.value.is_none());
/// assert_eq!(found.errors.iter().next().unwrap().path, "config.linesCount");
/// assert_eq!(found.warnings.iter().next().unwrap().path, "config.colours");
/// ```
pub fn check_config_patch(
    value: &Value,
    path: &str,
    unknown: UnknownFields,
) -> Findings<ConfigPatch> {
    let mut w = Walker::with(unknown);
    let patch = w.config(value, path);
    Findings {
        value: w.errors.is_empty().then_some(patch),
        errors: w.errors,
        warnings: w.warnings,
    }
}

/// Validates a word list found at `path` and sorts it by start time.
///
/// ```
/// use serde_json::json;
///
/// let words = json!([
///     {"start": 0.5, "end": 0.9, "word": "world", "punctuated_word": "world."},
///     {"start": 0.0, "end": 0.4, "word": "hello", "punctuated_word": "Hello"},
/// ]);
/// let words = caption_core::parse_words(&words, "words")?;
/// assert_eq!(words[0].word, "hello");
///
/// let backwards = json!([{"start": 2.0, "end": 1.0, "word": "x", "punctuated_word": "x"}]);
/// let problems = caption_core::parse_words(&backwards, "words").unwrap_err();
/// assert!(problems.iter().any(|p| p.path.starts_with("words[0]")), "{problems}");
/// # Ok::<(), caption_core::ValidationErrors>(())
/// ```
///
/// # Errors
///
/// Every problem of every word, each with its path (`words[3].end`).
pub fn parse_words(value: &Value, path: &str) -> Result<Vec<Word>, ValidationErrors> {
    let mut w = Walker::new();
    let words = w.words(value, path);
    w.finish(words)
}

/// Validates the body of `POST /generate`. Unknown fields are ignored.
pub fn parse_generate_request(value: &Value) -> Result<GenerateRequest, ValidationErrors> {
    parse_generate_request_with(value, UnknownFields::Ignore).map(|c| c.value)
}

/// [`parse_generate_request`] with unknown fields treated as `unknown` says.
pub fn parse_generate_request_with(
    value: &Value,
    unknown: UnknownFields,
) -> Result<Checked<GenerateRequest>, ValidationErrors> {
    check_generate_request(value, unknown).into_result()
}

/// Validates the body of `POST /generate` and reports every error and every warning together.
pub fn check_generate_request(value: &Value, unknown: UnknownFields) -> Findings<GenerateRequest> {
    let mut w = Walker::with(unknown);
    let Some(map) = w.object(value, "body") else {
        return Findings {
            value: None,
            errors: w.errors,
            warnings: w.warnings,
        };
    };
    let mut known = known_fields("GenerateRequest");
    known.extend_from_slice(SERVICE_REQUEST_FIELDS);
    w.unknown_fields(map, "", &known, &[]);
    let input = w.required_string(map, "input", rules::MAX_INPUT_CHARS);
    let words = match Walker::field(map, "words") {
        None => {
            w.fail("words", "is required (an array of words; may be empty)");
            Vec::new()
        }
        Some(v) => w.words(v, "words"),
    };
    let config = Walker::field(map, "config")
        .map(|v| w.config(v, "config"))
        .unwrap_or_default();
    let template_id = Walker::field(map, "templateId")
        .and_then(|v| w.string(v, "templateId", rules::MAX_TEMPLATE_ID_CHARS))
        .map(str::to_owned);
    let output = w
        .wire_enum(map, "", "output", OutputKind::NAMES, OutputKind::from_wire)
        .unwrap_or_default();
    let reframe = w.wire_enum(map, "", "reframe", Reframe::NAMES, Reframe::from_wire);
    if output != OutputKind::Video {
        if reframe.is_some() {
            w.fail("reframe", crate::jobs::RULE_REFRAME_OUTPUT);
        }
        // A caption layer is laid over the uncut video in an editor.
        let rule = "cannot be used with an overlay output (a caption layer keeps the input's \
                    timeline); cut in the editor, or ask for \"output\": \"video\"";
        if config.cut_pauses_s.is_some() {
            w.fail("config.cutPausesS", rule);
        }
        if config.cut_fillers == Some(true) {
            w.fail("config.cutFillers", rule);
        }
    }
    let request = input.map(|input| GenerateRequest {
        input,
        words,
        config,
        template_id,
        output,
        reframe,
    });
    Findings {
        value: request.filter(|_| w.errors.is_empty()),
        errors: w.errors,
        warnings: w.warnings,
    }
}

/// Validates the body of `POST /transcript`. `lang` must be `auto` or a two-letter lower-case
/// code; whether a model supports it is the transcriber's decision.
///
/// ```
/// use caption_core::parse_transcript_request;
/// use serde_json::json;
///
/// let request = parse_transcript_request(&json!({"input": "uploads/1/talk.mp4"}))?;
/// assert_eq!(request.lang, "auto");
/// let problems = parse_transcript_request(&json!({"input": "x", "lang": "English"})).unwrap_err();
/// assert_eq!(problems.iter().next().map(|p| p.path.as_str()), Some("lang"));
/// # Ok::<(), caption_core::ValidationErrors>(())
/// ```
pub fn parse_transcript_request(value: &Value) -> Result<TranscriptRequest, ValidationErrors> {
    let mut w = Walker::new();
    let Some(map) = w.object(value, "body") else {
        return Err(w.errors);
    };
    let input = w.required_string(map, "input", rules::MAX_INPUT_CHARS);
    let lang = match Walker::field(map, "lang") {
        None => Some("auto".to_owned()),
        Some(Value::String(s)) if s == "auto" || is_iso639_1_shape(s) => Some(s.clone()),
        Some(_) => {
            w.fail(
                "lang",
                "must be \"auto\" or an ISO 639-1 code (two lower-case letters)",
            );
            None
        }
    };
    let task = w
        .wire_enum(
            map,
            "",
            "task",
            TranscriptTask::NAMES,
            TranscriptTask::from_wire,
        )
        .unwrap_or_default();
    let keep_fillers = w.bool(map, "", "keepFillers").unwrap_or(false);
    if keep_fillers && task == TranscriptTask::Translate {
        w.fail(
            "keepFillers",
            "cannot be used with \"task\": \"translate\" (a translation has no fillers)",
        );
    }
    let speakers = Walker::field(map, "speakers")
        .filter(|v| !v.is_null())
        .and_then(|v| {
            let count = SpeakerCount::deserialize(v).ok();
            if count.is_none() {
                w.fail("speakers", RULE_SPEAKERS);
            }
            count
        });
    match (input, lang) {
        (Some(input), Some(lang)) if w.errors.is_empty() => Ok(TranscriptRequest {
            input,
            lang,
            task,
            keep_fillers,
            speakers,
        }),
        _ => Err(w.errors),
    }
}

fn is_iso639_1_shape(s: &str) -> bool {
    s.len() == 2 && s.bytes().all(|b| b.is_ascii_lowercase())
}
