//! The caption engine's wire data model.
//!
//! Every type here serialises with the exact field names of the HTTP interface
//! (`punctuated_word`, `hilightColor`, `wordsPerLineCount`, ...). Requests arrive as loose JSON;
//! [`parse_generate_request`], [`parse_transcript_request`], [`parse_config_patch`] and
//! [`parse_words`] check them against every rule at once and report each problem with its field
//! path, then [`ConfigPatch::apply`] merges what the caller gave over a base [`Config`].
//!
//! The built-in template catalog lives here too ([`Catalog`]), as JSON data files validated when
//! loaded, so every crate can use the same styles without pulling in the heavy parts.
//!
//! ```
//! use caption_core::{Catalog, parse_generate_request};
//! use serde_json::json;
//!
//! let body = json!({
//!     "input": "uploads/1/talk.mp4",
//!     "words": [{"start": 0.0, "end": 0.4, "word": "hi", "punctuated_word": "Hi!"}],
//!     "config": {"linesCount": 1, "sizes": {"fontSize": 90}},
//! });
//! let request = parse_generate_request(&body)?;
//! let style = request.config.apply(Catalog::builtin()?.default_config());
//! assert_eq!(style.lines_count, 1);
//! assert_eq!(style.sizes.font_px, 90.0);
//!
//! // Every problem at once, each with its path.
//! let bad = json!({"input": "", "words": [], "config": {"linesCount": 0, "fontWeight": 950}});
//! let problems = parse_generate_request(&bad).unwrap_err();
//! let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
//! assert!(paths.contains(&"input"), "{problems}");
//! assert!(paths.contains(&"config.linesCount"), "{problems}");
//! assert!(paths.contains(&"config.fontWeight"), "{problems}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

#[macro_use]
mod wire_enum;

mod catalog;
mod components;
mod config;
mod cuts;
mod error;
mod filler;
mod jobs;
mod models;
mod patch;
mod problems;
mod punctuation;
pub mod rules;
mod schema;
mod script;
mod speakers;
mod subtitles;
mod suggest;
mod validate;
mod word;

pub use catalog::{Catalog, CatalogError, parse_template};
pub use components::{add_wire_schemas, wire_schemas};
pub use config::{
    CapitalizationType, Color, ColorSet, Colors, Config, DisplayEmojis, DisplayMode, DisplayWords,
    EMPHASIS_SCALE, EffectMode, EffectType, Emphasis, Modes, Position, REFERENCE_SHORT_SIDE_PX,
    Sizes, SpokenMode, Template, TemplateSummary,
};
pub use cuts::{CutPlan, CutRules, Span};
pub use error::{ErrorBody, ErrorCode, ErrorDetail};
pub use filler::mark_fillers;
pub use jobs::{
    CreateJobResponse, GenerateRequest, GenerateResponse, JobError, JobStatus, OutputKind, Reframe,
    TranscriptRequest, TranscriptResult, TranscriptTask, UploadDescriptor,
};
pub use models::models_dir;
pub use patch::{ColorsPatch, ConfigPatch, ModesPatch, SizesPatch};
pub use problems::{ValidationError, ValidationErrors};
pub use punctuation::{bare_word, is_punctuation};
pub use schema::{COMPONENTS_PATH, schema_generator};
pub use script::{is_unspaced_char, joins_without_space, split_unspaced};
pub use speakers::{RULE_SPEAKERS, SpeakerCount};
pub use subtitles::{
    CaptionLayout, CaptionPage, CaptionWord, Cue, ExportOptions, SubtitleError, SubtitleErrorCode,
    SubtitleFormat, WordLook, cues_to_words, export_layout, export_words, import_words, parse_cues,
    spread_by_length,
};
pub use suggest::{closest, nearest};
pub use validate::{
    Checked, FONT_WEIGHT_MAX, FONT_WEIGHT_MIN, Findings, UnknownFields, check_config_patch,
    check_generate_request, parse_config_patch, parse_config_patch_with, parse_generate_request,
    parse_generate_request_with, parse_transcript_request, parse_words,
};
pub use word::Word;
