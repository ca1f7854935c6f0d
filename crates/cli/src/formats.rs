//! Transcript files by extension: JSON words, and the subtitle formats caption-core reads and
//! writes (SRT, WebVTT, ASS, plain text).

use std::path::Path;

use anyhow::Result;
use caption_core::{ErrorCode, ExportOptions, SubtitleFormat, Word, import_words, parse_words};
use caption_engine::Captioner;
use clap::ValueEnum;
use serde_json::Value;

use crate::failure::{Failure, fail};
use crate::paths;

/// The extensions words are read from and written to, as users are told.
pub const EXTENSIONS: &str = ".json, .srt, .vtt, .ass or .txt";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The interface's word list: `[{start, end, word, punctuated_word}]`.
    Json,
    Srt,
    Vtt,
    /// Advanced SubStation Alpha in the template's style: the burn's pages and lines, each word
    /// lit while it is spoken, with per-word karaoke timing.
    Ass,
    Txt,
}

impl Format {
    /// The file extension of this format.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Srt => "srt",
            Self::Vtt => "vtt",
            Self::Ass => "ass",
            Self::Txt => "txt",
        }
    }

    /// The format a file's extension names.
    pub fn from_extension(path: &Path) -> Option<Self> {
        match paths::extension(path)?.as_str() {
            "json" => Some(Self::Json),
            "srt" => Some(Self::Srt),
            "vtt" => Some(Self::Vtt),
            "ass" | "ssa" => Some(Self::Ass),
            "txt" => Some(Self::Txt),
            _ => None,
        }
    }

    /// The subtitle format, for all but JSON.
    fn subtitle(self) -> Option<SubtitleFormat> {
        match self {
            Self::Json => None,
            Self::Srt => Some(SubtitleFormat::Srt),
            Self::Vtt => Some(SubtitleFormat::Vtt),
            Self::Ass => Some(SubtitleFormat::Ass),
            Self::Txt => Some(SubtitleFormat::Text),
        }
    }
}

/// The format to write: `--format`, else the output file's extension, else JSON. An output
/// whose extension is not a transcript format, or is another format than `--format`, is
/// refused rather than written with a misleading name.
pub fn choose(format: Option<Format>, output: Option<&Path>) -> Result<Format> {
    let Some(path) = output else {
        return Ok(format.unwrap_or(Format::Json));
    };
    let Some(ext) = paths::extension(path) else {
        return Ok(format.unwrap_or(Format::Json));
    };
    let named = Format::from_extension(path);
    match (format, named) {
        (_, None) => fail(
            ErrorCode::InvalidRequest,
            path.display(),
            format!(".{ext} is not a transcript format; name the file {EXTENSIONS}"),
        ),
        (Some(f), Some(n)) if f != n => fail(
            ErrorCode::InvalidRequest,
            path.display(),
            format!(
                "--format {} writes .{} files, not .{ext}",
                f.extension(),
                f.extension()
            ),
        ),
        (_, Some(n)) => Ok(n),
    }
}

/// The interface's word list, pretty-printed.
pub fn json(words: &[Word]) -> String {
    let mut out = serde_json::to_string_pretty(words).unwrap_or_else(|_| "[]".to_owned());
    out.push('\n');
    out
}

/// Words in `format`: JSON, or a subtitle file (cues by subtitle practice; ASS styled by
/// `options` and laid out by `captioner` as the burn lays it out).
pub fn render(
    words: &[Word],
    format: Format,
    options: &ExportOptions,
    captioner: &Captioner,
) -> Result<String> {
    match format.subtitle() {
        None => Ok(json(words)),
        Some(subtitle) => Ok(captioner
            .subtitles(words, subtitle, options)
            .map_err(|e| Failure::engine(&[], &e))?),
    }
}

/// Reads timed words by the file's extension: a JSON word list (an array of words, or an
/// object with `words`, as a transcript result has), or the cues of an SRT, VTT or ASS file,
/// their words sharing each cue's time by length (an ASS file's karaoke times them exactly).
/// A file of another extension is read as JSON.
pub fn read_words(path: &Path) -> Result<Vec<Word>> {
    let text = paths::read_text(path)?;
    let format = Format::from_extension(path);
    if format == Some(Format::Txt) {
        return fail(
            ErrorCode::InvalidRequest,
            path.display(),
            format!(
                "plain text has no times, so its words cannot be shown in time; time them on \
                 the video first (captions align VIDEO --text {} -o words.json)",
                path.display()
            ),
        );
    }
    if let Some(subtitle) = format.and_then(Format::subtitle) {
        return import_words(&text, subtitle).map_err(|e| {
            Failure::new(ErrorCode::from(e.code()), path.display(), e.to_string()).into()
        });
    }
    let value: Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(e) => {
            let hint = match format {
                Some(_) => String::new(),
                None => " (words are read by extension: .json, .srt, .vtt or .ass)".to_owned(),
            };
            return fail(
                ErrorCode::InvalidRequest,
                path.display(),
                format!("is not valid JSON: {e}{hint}"),
            );
        }
    };
    let list = value.get("words").unwrap_or(&value);
    parse_words(list, "words").map_err(|e| Failure::invalid(path.display(), &e).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trips() {
        let mut words = vec![Word::new(0.5, 0.9, "hello"), Word::new(1.0, 1.4, "world")];
        words[1].punctuated_word = "world.".into();
        let captioner = Captioner::builder().build().unwrap();
        let json = render(&words, Format::Json, &ExportOptions::default(), &captioner).unwrap();
        let back: Vec<Word> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, words);
    }

    #[test]
    fn formats_by_extension() {
        let p = |s: &str| Path::new(s).to_owned();
        assert_eq!(Format::from_extension(&p("a.SRT")), Some(Format::Srt));
        assert_eq!(Format::from_extension(&p("a.ssa")), Some(Format::Ass));
        assert_eq!(Format::from_extension(&p("a.mp4")), None);
        let err = choose(None, Some(&p("out.doc"))).unwrap_err().to_string();
        assert!(err.contains(EXTENSIONS), "{err}");
        assert!(choose(Some(Format::Vtt), Some(&p("out.srt"))).is_err());
    }
}
