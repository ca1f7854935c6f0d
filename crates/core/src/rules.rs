//! The limits of the wire format, named once.
//!
//! The types' JSON Schema (`#[schemars(range(...), length(...))]` on their fields) and the
//! validator (`parse_generate_request` and its kin) both read these constants, so the OpenAPI
//! document the service serves and the checks it runs cannot drift apart.

/// An inclusive range of a number field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NumberRange {
    /// Smallest value accepted.
    pub min: f64,
    /// Largest value accepted.
    pub max: f64,
}

/// An inclusive range of an integer field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntegerRange {
    /// Smallest value accepted.
    pub min: u64,
    /// Largest value accepted.
    pub max: u64,
}

/// A color channel (`r`, `g`, `b`, `a`); fractions are rounded.
pub const CHANNEL: NumberRange = NumberRange {
    min: 0.0,
    max: 255.0,
};
/// Most colors one color role may cycle through.
pub const MAX_COLORS_PER_SET: usize = 64;

/// `sizes.fontSize`, reference pixels.
pub const FONT_SIZE_PX: NumberRange = NumberRange {
    min: 1.0,
    max: 1000.0,
};
/// `sizes.strokeSize`, reference pixels.
pub const STROKE_SIZE_PX: NumberRange = NumberRange {
    min: 0.0,
    max: 100.0,
};
/// `sizes.blurSize`, reference pixels.
pub const BLUR_SIZE_PX: NumberRange = NumberRange {
    min: 0.0,
    max: 100.0,
};
/// `sizes.emojiSize`, reference pixels.
pub const EMOJI_SIZE_PX: NumberRange = NumberRange {
    min: 0.0,
    max: 1000.0,
};
/// `sizes.backgroundRadius`, reference pixels.
pub const BACKGROUND_RADIUS_PX: NumberRange = NumberRange {
    min: 0.0,
    max: 500.0,
};

/// `linesCount`.
pub const LINES_COUNT: IntegerRange = IntegerRange { min: 1, max: 10 };
/// `wordsPerLineCount`.
pub const WORDS_PER_LINE_COUNT: IntegerRange = IntegerRange { min: 1, max: 50 };
/// `fontWeight`: CSS's named weights, Thin (100) to Black (900).
pub const FONT_WEIGHT: IntegerRange = IntegerRange { min: 100, max: 900 };
/// Longest `font` name, characters.
pub const MAX_FONT_CHARS: usize = 200;
/// `position.x` and `position.y`, fractions of the frame.
pub const POSITION: NumberRange = NumberRange { min: 0.0, max: 1.0 };
/// `maxWidth`, a fraction of the frame width.
pub const MAX_WIDTH: NumberRange = NumberRange { min: 0.1, max: 1.0 };

/// A word's `start` and `end`, seconds (up to 24 h).
pub const WORD_TIME_S: NumberRange = NumberRange {
    min: 0.0,
    max: 86_400.0,
};
/// A word's `confidence`.
pub const CONFIDENCE: NumberRange = NumberRange { min: 0.0, max: 1.0 };
/// Longest `word` or `punctuated_word`, bytes.
pub const MAX_WORD_BYTES: usize = 1000;
/// Longest `emoji` of a word, characters.
pub const MAX_EMOJI_CHARS: usize = 16;
/// Longest `speaker` of a word, characters.
pub const MAX_SPEAKER_CHARS: usize = 100;
/// Most speakers a transcription tells apart (`speakers`).
pub const MAX_SPEAKERS: u8 = 8;
/// Most colours in `speakerColors`.
pub const MAX_SPEAKER_COLORS: usize = 16;
/// `cutPausesS`: the longest a pause may stay, seconds.
pub const CUT_PAUSES_S: NumberRange = NumberRange {
    min: 0.1,
    max: 10.0,
};
/// Largest word list a request may carry (about ten hours of speech).
pub const MAX_WORDS: usize = 200_000;

/// Longest `input` (an object key), characters.
pub const MAX_INPUT_CHARS: usize = 1024;
/// Longest `templateId`, characters.
pub const MAX_TEMPLATE_ID_CHARS: usize = 100;
/// `lang` of a transcription: `auto` or an ISO 639-1 code.
pub const LANG_PATTERN: &str = "^(auto|[a-z]{2})$";

/// The rule broken by a channel outside [`CHANNEL`].
pub(crate) const RULE_CHANNEL: &str = "must be an integer from 0 to 255";

/// Rounds a channel value; `None` when it is not a finite number within [`CHANNEL`].
pub(crate) fn channel_from_f64(v: f64) -> Option<u8> {
    let rounded = v.round();
    // The value itself must be in range (the schema's bounds): -1e-300 rounds to 0 but is not.
    if (CHANNEL.min..=CHANNEL.max).contains(&v) {
        // In range and integral after rounding, so the cast is exact.
        Some(rounded as u8)
    } else {
        None
    }
}
