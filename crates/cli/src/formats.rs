//! Transcript files: JSON words, SRT, WebVTT, ASS and plain text.

use std::fmt::Write as _;

use caption_core::Word;
use clap::ValueEnum;

use crate::ass::{self, AssStyle};
use crate::cues::cues;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The interface's word list: `[{start, end, word, punctuated_word}]`.
    Json,
    Srt,
    Vtt,
    /// Advanced SubStation Alpha in the template's style, one event per cue with per-word
    /// karaoke timing.
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

    /// Guesses the format from an output file's extension.
    pub fn from_extension(path: &std::path::Path) -> Option<Self> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "json" => Some(Self::Json),
            "srt" => Some(Self::Srt),
            "vtt" => Some(Self::Vtt),
            "ass" => Some(Self::Ass),
            "txt" => Some(Self::Txt),
            _ => None,
        }
    }
}

/// The format to write: `--format`, else the output file's extension, else JSON. An output
/// whose extension is not a transcript format, or is another format than `--format`, is
/// refused rather than written with a misleading name.
pub fn choose(format: Option<Format>, output: Option<&std::path::Path>) -> anyhow::Result<Format> {
    let Some(path) = output else {
        return Ok(format.unwrap_or(Format::Json));
    };
    let Some(ext) = crate::paths::extension(path) else {
        return Ok(format.unwrap_or(Format::Json));
    };
    let named = Format::from_extension(path);
    match (format, named) {
        (_, None) => anyhow::bail!(
            "{}: .{ext} is not a transcript format; name the file .json, .srt, .vtt, .ass or .txt",
            path.display()
        ),
        (Some(f), Some(n)) if f != n => anyhow::bail!(
            "{}: --format {} writes .{} files, not .{ext}",
            path.display(),
            f.extension(),
            f.extension()
        ),
        (_, Some(n)) => Ok(n),
    }
}

/// `HH:MM:SS{sep}mmm`.
fn clock(t_s: f64, sep: char) -> String {
    let ms = (t_s.max(0.0) * 1000.0).round() as u64;
    format!(
        "{:02}:{:02}:{:02}{sep}{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// The interface's word list, pretty-printed.
pub fn json(words: &[Word]) -> String {
    let mut out = serde_json::to_string_pretty(words).unwrap_or_else(|_| "[]".to_owned());
    out.push('\n');
    out
}

/// Words in `format`. Cue-based formats follow subtitle practice ([`crate::cues`]); ASS is
/// styled by `style`.
pub fn render(words: &[Word], format: Format, style: &AssStyle) -> String {
    let mut out = String::new();
    match format {
        Format::Json => out = json(words),
        Format::Txt => {
            for cue in cues(words) {
                let _ = writeln!(out, "{}", cue.text(" "));
            }
        }
        Format::Srt => {
            for (n, cue) in cues(words).iter().enumerate() {
                let _ = write!(
                    out,
                    "{}\n{} --> {}\n{}\n\n",
                    n + 1,
                    clock(cue.start_s, ','),
                    clock(cue.end_s, ','),
                    cue.text("\n")
                );
            }
        }
        Format::Vtt => {
            out.push_str("WEBVTT\n\n");
            for cue in cues(words) {
                let _ = write!(
                    out,
                    "{} --> {}\n{}\n\n",
                    clock(cue.start_s, '.'),
                    clock(cue.end_s, '.'),
                    cue.text("\n")
                );
            }
        }
        Format::Ass => out = ass::render(words, style),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words() -> Vec<Word> {
        let mut w = vec![
            Word::new(0.5, 0.9, "hello"),
            Word::new(1.0, 1.4, "world"),
            Word::new(3.0, 3.5, "again"),
        ];
        w[1].punctuated_word = "world.".into();
        w
    }

    fn style() -> AssStyle {
        let catalog = caption_core::Catalog::builtin().unwrap();
        AssStyle {
            width_px: 1920,
            height_px: 1080,
            config: catalog.get("karaoke").unwrap().config.clone(),
        }
    }

    #[test]
    fn srt_cues_split_at_sentences_and_pauses_and_last_long_enough() {
        let srt = render(&words(), Format::Srt, &style());
        assert_eq!(
            srt,
            "1\n00:00:00,500 --> 00:00:01,400\nhello world.\n\n2\n00:00:03,000 --> 00:00:03,800\nagain\n\n"
        );
    }

    #[test]
    fn vtt_and_txt() {
        let vtt = render(&words(), Format::Vtt, &style());
        assert!(vtt.starts_with("WEBVTT\n\n00:00:00.500 --> 00:00:01.400\nhello world.\n"));
        assert_eq!(
            render(&words(), Format::Txt, &style()),
            "hello world.\nagain\n"
        );
    }

    #[test]
    fn ass_is_styled_by_the_template_at_the_videos_size() {
        let ass = render(&words(), Format::Ass, &style());
        assert!(ass.contains("PlayResX: 1920\nPlayResY: 1080\n"), "{ass}");
        let config = &style().config;
        let style_line = ass.lines().find(|l| l.starts_with("Style: ")).unwrap();
        let fields: Vec<&str> = style_line["Style: ".len()..].split(',').collect();
        assert_eq!(fields[1], config.font);
        // 1080 is the reference short side: sizes are taken as they are.
        assert_eq!(fields[2], format!("{:.0}", config.sizes.font_px));
        let hilight = config.colors.hilight_color.nth(0).unwrap();
        assert_eq!(
            fields[3],
            format!("&H00{:02X}{:02X}{:02X}", hilight.b, hilight.g, hilight.r)
        );
        assert!(
            ass.contains("Dialogue: 0,0:00:00.50,0:00:01.40,Default,,0,0,0,,{\\an5\\pos(960,"),
            "{ass}"
        );
        assert!(ass.contains("{\\k40}hello {\\k10}{\\k40}world."), "{ass}");
    }

    #[test]
    fn json_round_trips() {
        let json = render(&words(), Format::Json, &style());
        let back: Vec<Word> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, words());
    }

    #[test]
    fn clocks() {
        assert_eq!(clock(3725.0426, ','), "01:02:05,043");
        assert_eq!(ass::ass_clock(61.005), "0:01:01.01");
    }
}
