//! How many speakers a transcription tells apart: `"auto"` or a number.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::rules;

/// The rule a speaker count follows, as error messages state it.
pub const RULE_SPEAKERS: &str = "must be \"auto\" or a whole number from 1 to 8";

/// How many speakers to tell apart (the `speakers` of a transcription request, `--speakers` of
/// the command line). On the wire: `"auto"` or a number from 1 to
/// [`MAX_SPEAKERS`](rules::MAX_SPEAKERS).
///
/// ```
/// use caption_core::SpeakerCount;
///
/// assert_eq!("auto".parse::<SpeakerCount>(), Ok(SpeakerCount::Auto));
/// assert_eq!("2".parse::<SpeakerCount>(), Ok(SpeakerCount::Exactly(2)));
/// assert!("0".parse::<SpeakerCount>().is_err());
/// assert_eq!(serde_json::to_value(SpeakerCount::Exactly(3))?, serde_json::json!(3));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SpeakerCount {
    /// As many as the voices suggest.
    #[default]
    Auto,
    /// Exactly this many (fewer when there are fewer stretches of speech).
    Exactly(u8),
}

impl SpeakerCount {
    /// A count from 1 to [`MAX_SPEAKERS`](rules::MAX_SPEAKERS), else `None`.
    pub fn exactly(n: u64) -> Option<Self> {
        u8::try_from(n)
            .ok()
            .filter(|n| (1..=rules::MAX_SPEAKERS).contains(n))
            .map(Self::Exactly)
    }
}

impl FromStr for SpeakerCount {
    type Err = String;

    /// `auto` or a number from 1 to [`MAX_SPEAKERS`](rules::MAX_SPEAKERS); the error is the rule.
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("auto") {
            return Ok(Self::Auto);
        }
        s.parse::<u64>()
            .ok()
            .and_then(Self::exactly)
            .ok_or_else(|| RULE_SPEAKERS.to_owned())
    }
}

impl fmt::Display for SpeakerCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::Exactly(n) => write!(f, "{n}"),
        }
    }
}

impl Serialize for SpeakerCount {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Auto => serializer.serialize_str("auto"),
            Self::Exactly(n) => serializer.serialize_u8(*n),
        }
    }
}

impl<'de> Deserialize<'de> for SpeakerCount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::String(s) if s == "auto" => Some(Self::Auto),
            serde_json::Value::Number(n) => n.as_u64().and_then(Self::exactly),
            _ => None,
        }
        .ok_or_else(|| serde::de::Error::custom(RULE_SPEAKERS))
    }
}

impl JsonSchema for SpeakerCount {
    fn schema_name() -> Cow<'static, str> {
        "SpeakerCount".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        schemars::json_schema!({
            "description": "How many speakers to tell apart: \"auto\" or a number.",
            "oneOf": [
                { "type": "string", "enum": ["auto"] },
                { "type": "integer", "minimum": 1, "maximum": rules::MAX_SPEAKERS },
            ],
        })
    }
}
