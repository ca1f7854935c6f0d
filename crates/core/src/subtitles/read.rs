//! Reading subtitle files: SRT, WebVTT and ASS cues, or plain text.
//!
//! Readers are lenient where real files vary (a byte-order mark, CRLF or CR line ends, missing
//! cue numbers, `,` or `.` before milliseconds, hours left out, styling tags, overlapping cues)
//! and strict where a guess would mislead: a time that cannot be read is an error naming the
//! line.

use std::fmt;

/// A subtitle file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SubtitleFormat {
    /// SubRip (`.srt`).
    Srt,
    /// WebVTT (`.vtt`).
    Vtt,
    /// Advanced SubStation Alpha (`.ass`, `.ssa`).
    Ass,
    /// Plain text: words without times (`.txt`).
    Text,
}

impl SubtitleFormat {
    /// The format a file name's extension names, if any.
    pub fn from_extension(extension: &str) -> Option<Self> {
        match extension.to_ascii_lowercase().as_str() {
            "srt" => Some(Self::Srt),
            "vtt" => Some(Self::Vtt),
            "ass" | "ssa" => Some(Self::Ass),
            "txt" | "text" => Some(Self::Text),
            _ => None,
        }
    }
}

/// One subtitle cue: text shown from `start_s` to `end_s`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cue {
    /// When the cue appears, seconds.
    pub start_s: f64,
    /// When it disappears, seconds.
    pub end_s: f64,
    /// Its text with styling removed; lines joined by a space.
    pub text: String,
}

/// A subtitle file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubtitleError {
    /// 1-based line of the problem.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SubtitleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for SubtitleError {}

/// Reads the cues of `text` in `format`, in time order (a plain text gives no cues).
pub fn parse_cues(text: &str, format: SubtitleFormat) -> Result<Vec<Cue>, SubtitleError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut cues = match format {
        SubtitleFormat::Srt | SubtitleFormat::Vtt => parse_timed_blocks(&text)?,
        SubtitleFormat::Ass => parse_ass(&text)?,
        SubtitleFormat::Text => Vec::new(),
    };
    cues.retain(|c| !c.text.is_empty());
    cues.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    Ok(cues)
}

/// `HH:MM:SS,mmm`, `HH:MM:SS.mmm` or `MM:SS.mmm` (WebVTT may leave out hours).
fn parse_timestamp(s: &str) -> Option<f64> {
    let s = s.trim();
    let (clock, fraction) = match s.rfind([',', '.']) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    };
    let parts: Vec<&str> = clock.split(':').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let mut seconds = 0.0;
    for part in &parts {
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        seconds = seconds * 60.0 + part.parse::<f64>().ok()?;
    }
    if !fraction.is_empty() {
        if !fraction.bytes().all(|b| b.is_ascii_digit()) || fraction.len() > 9 {
            return None;
        }
        seconds += fraction.parse::<f64>().ok()? / 10f64.powi(fraction.len() as i32);
    }
    Some(seconds)
}

/// Removes `<i>`, `<c.yellow>`, `<00:00:01.000>`, `{\an8}` and decodes the entities WebVTT uses.
fn strip_markup(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '<' => {
                for c in chars.by_ref() {
                    if c == '>' {
                        break;
                    }
                }
            }
            '{' if chars.peek() == Some(&'\\') => {
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&")
}

fn join_lines<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    lines
        .map(strip_markup)
        .flat_map(|l| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .collect::<Vec<_>>()
        .join(" ")
}

/// SRT and WebVTT: blocks separated by blank lines, each with a `start --> end` line.
fn parse_timed_blocks(text: &str) -> Result<Vec<Cue>, SubtitleError> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut cues = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        let Some((start, rest)) = line.split_once("-->") else {
            i += 1;
            continue;
        };
        // WebVTT cue settings follow the end time.
        let end = rest.split_whitespace().next().unwrap_or("");
        let bad = |what: &str| SubtitleError {
            line: i + 1,
            message: format!("cannot read the {what} time in {line:?}"),
        };
        let start_s = parse_timestamp(start).ok_or_else(|| bad("start"))?;
        let end_s = parse_timestamp(end).ok_or_else(|| bad("end"))?;
        if end_s < start_s {
            return Err(SubtitleError {
                line: i + 1,
                message: format!("the cue ends ({end}) before it starts ({})", start.trim()),
            });
        }
        let body_start = i + 1;
        let mut j = body_start;
        while j < lines.len() && !lines[j].trim().is_empty() {
            j += 1;
        }
        cues.push(Cue {
            start_s,
            end_s,
            text: join_lines(lines[body_start..j].iter().copied()),
        });
        i = j;
    }
    Ok(cues)
}

/// ASS: `Dialogue:` lines of the `[Events]` section, fields as its `Format:` line names them.
fn parse_ass(text: &str) -> Result<Vec<Cue>, SubtitleError> {
    // The v4+ default, used until a `Format:` line says otherwise.
    let mut fields: Vec<String> = [
        "layer", "start", "end", "style", "name", "marginl", "marginr", "marginv", "effect", "text",
    ]
    .map(str::to_owned)
    .to_vec();
    let mut in_events = false;
    let mut cues = Vec::new();
    for (index, raw) in text.split('\n').enumerate() {
        let line = raw.trim();
        if line.starts_with('[') {
            in_events = line.eq_ignore_ascii_case("[events]");
            continue;
        }
        if !in_events {
            continue;
        }
        if let Some(format) = line.strip_prefix("Format:") {
            fields = format
                .split(',')
                .map(|f| f.trim().to_ascii_lowercase())
                .collect();
            continue;
        }
        let Some(values) = line.strip_prefix("Dialogue:") else {
            continue;
        };
        let values: Vec<&str> = values.trim_start().splitn(fields.len(), ',').collect();
        let field = |name: &str| {
            fields
                .iter()
                .position(|f| f == name)
                .and_then(|i| values.get(i).copied())
        };
        let bad = |what: &str| SubtitleError {
            line: index + 1,
            message: format!("cannot read the {what} time of a Dialogue line"),
        };
        let start_s = field("start")
            .and_then(parse_timestamp)
            .ok_or_else(|| bad("start"))?;
        let end_s = field("end")
            .and_then(parse_timestamp)
            .ok_or_else(|| bad("end"))?;
        let body = field("text").unwrap_or("");
        // `\N` and `\n` are line breaks, `\h` a hard space.
        let body = body
            .replace("\\N", "\n")
            .replace("\\n", "\n")
            .replace("\\h", " ");
        cues.push(Cue {
            start_s,
            end_s: end_s.max(start_s),
            text: join_lines(body.split('\n')),
        });
    }
    Ok(cues)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srt_with_bom_crlf_and_tags() {
        let srt = "\u{feff}1\r\n00:00:01,000 --> 00:00:02,500\r\n<i>Hello</i>\r\nworld\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,000\r\n{\\an8}Second <b>cue</b>\r\n";
        let cues = parse_cues(srt, SubtitleFormat::Srt).unwrap();
        assert_eq!(
            cues,
            vec![
                Cue {
                    start_s: 1.0,
                    end_s: 2.5,
                    text: "Hello world".into()
                },
                Cue {
                    start_s: 3.0,
                    end_s: 4.0,
                    text: "Second cue".into()
                },
            ]
        );
    }

    #[test]
    fn vtt_with_settings_short_times_and_entities() {
        let vtt = "WEBVTT\n\nNOTE a comment\n\nintro\n00:01.000 --> 00:02.000 align:start position:10%\n<v Roger>Fish &amp; chips &lt;3\n\n00:00:00.500 --> 00:00:00.900\nFirst\n";
        let cues = parse_cues(vtt, SubtitleFormat::Vtt).unwrap();
        assert_eq!(cues.len(), 2);
        assert_eq!(cues[0].text, "First");
        assert_eq!(cues[1].text, "Fish & chips <3");
        assert!((cues[1].start_s - 1.0).abs() < 1e-9);
    }

    #[test]
    fn ass_dialogue_with_commas_overrides_and_breaks() {
        let ass = "[Script Info]\nTitle: x\n\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\nDialogue: 0,0:00:01.50,0:00:03.00,Default,,0,0,0,,{\\k20}Well, {\\k30}hello\\Nthere\n";
        let cues = parse_cues(ass, SubtitleFormat::Ass).unwrap();
        assert_eq!(
            cues,
            vec![Cue {
                start_s: 1.5,
                end_s: 3.0,
                text: "Well, hello there".into()
            }]
        );
    }

    #[test]
    fn bad_times_name_the_line() {
        let err = parse_cues(
            "1\n00:00:xx,000 --> 00:00:02,000\nHi\n",
            SubtitleFormat::Srt,
        )
        .unwrap_err();
        assert_eq!(err.line, 2);
        let err =
            parse_cues("00:00:03,000 --> 00:00:02,000\nHi\n", SubtitleFormat::Srt).unwrap_err();
        assert!(err.message.contains("before it starts"), "{err}");
    }

    #[test]
    fn overlapping_cues_come_out_in_start_order() {
        let srt = "00:00:02,000 --> 00:00:04,000\nB\n\n00:00:01,000 --> 00:00:03,000\nA\n";
        let cues = parse_cues(srt, SubtitleFormat::Srt).unwrap();
        assert_eq!(cues[0].text, "A");
        assert_eq!(cues[1].text, "B");
    }
}
