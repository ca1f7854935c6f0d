//! Transcript files: JSON words, SRT, WebVTT, ASS and plain text.

use std::fmt::Write as _;

use caption_core::Word;
use clap::ValueEnum;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The interface's word list: `[{start, end, word, punctuated_word}]`.
    Json,
    Srt,
    Vtt,
    /// Advanced SubStation Alpha, one event per cue with per-word karaoke timing.
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

/// Words per subtitle cue, and the longest silence a cue spans, for the cue-based formats.
const CUE_MAX_WORDS: usize = 7;
const CUE_MAX_GAP_S: f64 = 0.8;

/// Groups words into cues: a cue ends after a sentence end, a long pause or `CUE_MAX_WORDS`.
fn cues(words: &[Word]) -> Vec<&[Word]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 0..words.len() {
        let last = i + 1 == words.len();
        let sentence_end = words[i]
            .punctuated_word
            .ends_with(['.', '!', '?', '…', '。', '！', '？']);
        let pause = !last && words[i + 1].start - words[i].end > CUE_MAX_GAP_S;
        if last || sentence_end || pause || i + 1 - start >= CUE_MAX_WORDS {
            out.push(&words[start..=i]);
            start = i + 1;
        }
    }
    out
}

fn text(cue: &[Word]) -> String {
    cue.iter()
        .map(|w| w.punctuated_word.as_str())
        .collect::<Vec<_>>()
        .join(" ")
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

/// ASS time: `H:MM:SS.cc`.
fn ass_clock(t_s: f64) -> String {
    let cs = (t_s.max(0.0) * 100.0).round() as u64;
    format!(
        "{}:{:02}:{:02}.{:02}",
        cs / 360_000,
        cs / 6000 % 60,
        cs / 100 % 60,
        cs % 100
    )
}

pub fn render(words: &[Word], format: Format) -> String {
    let mut out = String::new();
    match format {
        Format::Json => {
            out = serde_json::to_string_pretty(words).unwrap_or_else(|_| "[]".to_owned());
            out.push('\n');
        }
        Format::Txt => {
            for cue in cues(words) {
                let _ = writeln!(out, "{}", text(cue));
            }
        }
        Format::Srt => {
            for (n, cue) in cues(words).iter().enumerate() {
                let (a, b) = (cue[0].start, cue[cue.len() - 1].end);
                let _ = write!(
                    out,
                    "{}\n{} --> {}\n{}\n\n",
                    n + 1,
                    clock(a, ','),
                    clock(b, ','),
                    text(cue)
                );
            }
        }
        Format::Vtt => {
            out.push_str("WEBVTT\n\n");
            for cue in cues(words) {
                let (a, b) = (cue[0].start, cue[cue.len() - 1].end);
                let _ = write!(
                    out,
                    "{} --> {}\n{}\n\n",
                    clock(a, '.'),
                    clock(b, '.'),
                    text(cue)
                );
            }
        }
        Format::Ass => {
            out.push_str(
                "[Script Info]\nScriptType: v4.00+\nPlayResX: 1080\nPlayResY: 1920\n\n[V4+ Styles]\n\
                 Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, \
                 Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, \
                 Alignment, MarginL, MarginR, MarginV, Encoding\n\
                 Style: Default,Noto Sans,72,&H0000FFFF,&H00FFFFFF,&H00000000,&H80000000,-1,0,0,0,100,100,0,0,1,4,2,2,60,60,400,1\n\n\
                 [Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n",
            );
            for cue in cues(words) {
                let (a, b) = (cue[0].start, cue[cue.len() - 1].end);
                let mut line = String::new();
                let mut at = a;
                for w in cue {
                    // \k durations run from the previous word's start, so silences stay unlit.
                    let lead = ((w.start - at) * 100.0).round().max(0.0) as u64;
                    if lead > 0 {
                        let _ = write!(line, "{{\\k{lead}}}");
                    }
                    let dur = ((w.end - w.start) * 100.0).round().max(1.0) as u64;
                    let _ = write!(
                        line,
                        "{{\\k{dur}}}{} ",
                        w.punctuated_word.replace(['{', '}'], "")
                    );
                    at = w.end;
                }
                let _ = writeln!(
                    out,
                    "Dialogue: 0,{},{},Default,,0,0,0,,{}",
                    ass_clock(a),
                    ass_clock(b),
                    line.trim_end()
                );
            }
        }
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

    #[test]
    fn srt_cues_split_at_sentences_and_pauses() {
        let srt = render(&words(), Format::Srt);
        assert_eq!(
            srt,
            "1\n00:00:00,500 --> 00:00:01,400\nhello world.\n\n2\n00:00:03,000 --> 00:00:03,500\nagain\n\n"
        );
    }

    #[test]
    fn vtt_and_txt() {
        let vtt = render(&words(), Format::Vtt);
        assert!(vtt.starts_with("WEBVTT\n\n00:00:00.500 --> 00:00:01.400\nhello world.\n"));
        assert_eq!(render(&words(), Format::Txt), "hello world.\nagain\n");
    }

    #[test]
    fn ass_has_karaoke_timing() {
        let ass = render(&words(), Format::Ass);
        assert!(ass.contains("Dialogue: 0,0:00:00.50,0:00:01.40,Default,,0,0,0,,{\\k40}hello {\\k10}{\\k40}world."), "{ass}");
    }

    #[test]
    fn json_round_trips() {
        let json = render(&words(), Format::Json);
        let back: Vec<Word> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, words());
    }

    #[test]
    fn clocks() {
        assert_eq!(clock(3725.0426, ','), "01:02:05,043");
        assert_eq!(ass_clock(61.005), "0:01:01.01");
    }
}
