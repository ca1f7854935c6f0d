//! Reading subtitle files: SRT, WebVTT and ASS cues.
//!
//! Readers are lenient where real files vary (a byte-order mark, CRLF or CR line ends, missing
//! cue numbers, `,` or `.` before milliseconds, hours left out, styling tags, overlapping cues)
//! and strict where a guess would mislead: a time that cannot be read is an error naming the
//! line.

use super::clock::parse_timestamp;
use super::error::SubtitleError;
use super::format::SubtitleFormat;
use super::markup::{Syllable, decode_entities, join_lines, read_ass_text, strip_tags};

/// One subtitle cue: text shown from `start_s` to `end_s`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cue {
    /// When the cue appears, seconds.
    pub start_s: f64,
    /// When it disappears, seconds.
    pub end_s: f64,
    /// Its text with styling removed and escapes read; its lines joined as words are (a space,
    /// or nothing between two Chinese or Japanese words).
    pub text: String,
}

impl Cue {
    /// A cue showing `text` from `start_s` to `end_s`.
    pub fn new(start_s: f64, end_s: f64, text: impl Into<String>) -> Self {
        Self {
            start_s,
            end_s,
            text: text.into(),
        }
    }
}

/// A cue as read, with the karaoke syllables of an ASS event that times its words.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Event {
    pub(crate) cue: Cue,
    pub(crate) syllables: Vec<Syllable>,
}

/// Reads the cues of `text` in `format`, in start order (plain text has no cues).
///
/// ```
/// use caption_core::{SubtitleFormat, parse_cues};
///
/// let srt = "\u{feff}1\r\n00:00:01,000 --> 00:00:02,500\r\n<i>Hello</i>\r\nworld\r\n";
/// let cues = parse_cues(srt, SubtitleFormat::Srt)?;
/// assert_eq!(cues[0].text, "Hello world");
/// assert_eq!((cues[0].start_s, cues[0].end_s), (1.0, 2.5));
/// # Ok::<(), caption_core::SubtitleError>(())
/// ```
pub fn parse_cues(text: &str, format: SubtitleFormat) -> Result<Vec<Cue>, SubtitleError> {
    Ok(read_events(text, format)?
        .into_iter()
        .map(|event| event.cue)
        .collect())
}

/// The events of `text` in `format`, in start order, empty ones left out.
pub(crate) fn read_events(text: &str, format: SubtitleFormat) -> Result<Vec<Event>, SubtitleError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut events = match format {
        SubtitleFormat::Srt => read_timed_blocks(&text, |line| strip_tags(line, true))?,
        SubtitleFormat::Vtt => {
            read_timed_blocks(&text, |line| decode_entities(&strip_tags(line, false)))?
        }
        SubtitleFormat::Ass => read_ass(&text)?,
        SubtitleFormat::Text => Vec::new(),
    };
    events.retain(|e| !e.cue.text.is_empty());
    // Stable: cues that start together keep the file's order.
    events.sort_by(|a, b| a.cue.start_s.total_cmp(&b.cue.start_s));
    Ok(events)
}

/// SRT and WebVTT: blocks separated by blank lines, each with a `start --> end` line; `plain`
/// reads a line of text.
fn read_timed_blocks(
    text: &str,
    plain: impl Fn(&str) -> String,
) -> Result<Vec<Event>, SubtitleError> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut events = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        let Some((start, rest)) = line.split_once("-->") else {
            i += 1;
            continue;
        };
        // WebVTT cue settings follow the end time.
        let end = rest.split_whitespace().next().unwrap_or("");
        let bad = |which| SubtitleError::BadTime {
            line: i + 1,
            which,
            text: line.to_owned(),
        };
        let start_s = parse_timestamp(start).ok_or_else(|| bad("start"))?;
        let end_s = parse_timestamp(end).ok_or_else(|| bad("end"))?;
        if end_s < start_s {
            return Err(SubtitleError::EndsBeforeStart {
                line: i + 1,
                start: start.trim().to_owned(),
                end: end.to_owned(),
            });
        }
        let body_start = i + 1;
        let mut j = body_start;
        while j < lines.len() && !lines[j].trim().is_empty() {
            j += 1;
        }
        let body: Vec<String> = lines[body_start..j].iter().map(|l| plain(l)).collect();
        events.push(Event {
            cue: Cue::new(start_s, end_s, join_lines(body.iter().map(String::as_str))),
            syllables: Vec::new(),
        });
        i = j;
    }
    Ok(events)
}

/// ASS: `Dialogue:` lines of the `[Events]` section, fields as its `Format:` line names them.
fn read_ass(text: &str) -> Result<Vec<Event>, SubtitleError> {
    // The v4+ default, used until a `Format:` line says otherwise.
    let mut fields: Vec<String> = [
        "layer", "start", "end", "style", "name", "marginl", "marginr", "marginv", "effect", "text",
    ]
    .map(str::to_owned)
    .to_vec();
    let mut in_events = false;
    let mut events = Vec::new();
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
        let bad = |which| SubtitleError::BadTime {
            line: index + 1,
            which,
            text: line.to_owned(),
        };
        let start_s = field("start")
            .and_then(parse_timestamp)
            .ok_or_else(|| bad("start"))?;
        let end_s = field("end")
            .and_then(parse_timestamp)
            .ok_or_else(|| bad("end"))?;
        let read = read_ass_text(field("text").unwrap_or(""));
        events.push(Event {
            cue: Cue::new(
                start_s,
                end_s.max(start_s),
                join_lines(read.plain.split('\n')),
            ),
            syllables: read.syllables,
        });
    }
    Ok(events)
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
        assert_eq!(err.line(), Some(2));
        assert_eq!(err.code(), crate::SubtitleErrorCode::BadTime);
        let err =
            parse_cues("00:00:03,000 --> 00:00:02,000\nHi\n", SubtitleFormat::Srt).unwrap_err();
        assert!(err.to_string().contains("before it starts"), "{err}");
        assert_eq!(err.code(), crate::SubtitleErrorCode::EndsBeforeStart);
    }

    #[test]
    fn overlapping_cues_come_out_in_start_order() {
        let srt = "00:00:02,000 --> 00:00:04,000\nB\n\n00:00:01,000 --> 00:00:03,000\nA\n";
        let cues = parse_cues(srt, SubtitleFormat::Srt).unwrap();
        assert_eq!(cues[0].text, "A");
        assert_eq!(cues[1].text, "B");
    }

    #[test]
    fn lines_of_chinese_join_without_a_space() {
        let srt = "1\n00:00:01,000 --> 00:00:02,000\n我们今天\n去公园。\n";
        let cues = parse_cues(srt, SubtitleFormat::Vtt).unwrap();
        assert_eq!(cues[0].text, "我们今天去公园。");
    }

    #[test]
    fn plain_text_has_no_cues() {
        assert!(
            parse_cues("hello there", SubtitleFormat::Text)
                .unwrap()
                .is_empty()
        );
    }
}
