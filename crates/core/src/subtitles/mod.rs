//! Subtitles in and out: SRT, WebVTT, ASS and plain text.
//!
//! - Export: [`export_words`] writes words as cues that follow subtitle practice; ASS in the
//!   caption style ([`ExportOptions`]) with per-word karaoke timing. [`export_layout`] writes
//!   captions as the burn lays them out (pages, lines, each word lit in turn) as ASS; the
//!   layout comes from caption-layout's `Timeline::caption_layout`.
//! - Import: [`parse_cues`] reads a file's cues (a byte-order mark, CRLF, styling tags and
//!   overlapping cues are fine); [`import_words`] reads its words, timed by the file's karaoke
//!   when it has it, else by length within their cue ([`cues_to_words`]). To time them on the
//!   audio instead, give the cues to caption-transcribe's aligner.
//!
//! Text is escaped as each format needs and read back the same way: what one of these writes,
//! it reads back word for word.

#![warn(missing_docs)]

mod ass;
mod clock;
mod cues;
mod error;
mod format;
mod markup;
mod options;
mod read;
mod spread;
mod write;

pub use ass::{CaptionLayout, CaptionPage, CaptionWord, WordLook, export_layout};
pub use error::{SubtitleError, SubtitleErrorCode};
pub use format::SubtitleFormat;
pub use options::ExportOptions;
pub use read::{Cue, parse_cues};
pub use spread::{cues_to_words, import_words, spread_by_length};
pub use write::export_words;
