use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::rules;

/// One transcribed word with its timing.
///
/// `start` and `end` are seconds from the beginning of the media (the interface's names, so they
/// carry no unit suffix). `word` is the bare word, `punctuated_word` the same word with the
/// punctuation that surrounds it in the transcript.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Word {
    /// Start time, seconds.
    #[schemars(range(min = rules::WORD_TIME_S.min, max = rules::WORD_TIME_S.max))]
    pub start: f64,
    /// End time, seconds; `start <= end`.
    #[schemars(range(min = rules::WORD_TIME_S.min, max = rules::WORD_TIME_S.max))]
    pub end: f64,
    /// The word as transcribed (at most 1000 bytes).
    #[schemars(length(max = rules::MAX_WORD_BYTES))]
    pub word: String,
    /// The word with its punctuation (at most 1000 bytes).
    #[schemars(length(max = rules::MAX_WORD_BYTES))]
    pub punctuated_word: String,
    /// Extension: an explicit emoji shown with this word (overrides the keyword lexicon).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = rules::MAX_EMOJI_CHARS))]
    pub emoji: Option<String>,
    /// Extension: a filler ("um", "uh", ...), which is never emphasised.
    // `null` reads as absent, as for every optional field.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[schemars(with = "Option<bool>")]
    pub filler: bool,
    /// Extension: the word carries its page's meaning and is drawn emphasised when the config's
    /// `emphasis` is not `NONE`. When no word of a request has it, the engine chooses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emphasis: Option<bool>,
    /// Extension: who speaks the word; `speakerColors` gives each speaker a text colour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = rules::MAX_SPEAKER_CHARS))]
    pub speaker: Option<String>,
    /// Extension: how sure the recogniser was of the word, from 0 to 1 (the probability of its
    /// least probable piece); absent for words it did not hear (a given text's). The aligner
    /// leaves room before a word heard with little confidence: a misheard word ("medical" for
    /// "bicycle") must not pull its neighbours onto sounds that are not theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = rules::CONFIDENCE.min, max = rules::CONFIDENCE.max))]
    pub confidence: Option<f64>,
}

impl Word {
    /// A word whose punctuated form equals its bare form.
    pub fn new(start_s: f64, end_s: f64, text: impl Into<String>) -> Self {
        let text = text.into();
        Self {
            start: start_s,
            end: end_s,
            punctuated_word: text.clone(),
            word: text,
            ..Self::default()
        }
    }

    /// Duration in seconds (never negative for a valid word).
    pub fn duration_s(&self) -> f64 {
        self.end - self.start
    }
}
