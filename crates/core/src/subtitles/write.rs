//! Writing words as SRT, WebVTT, ASS or plain text.

use std::fmt::Write as _;

use super::ass::write_ass;
use super::clock::millisecond_clock;
use super::cues::{cues, punctuated};
use super::error::SubtitleError;
use super::format::SubtitleFormat;
use super::markup::{escape_srt, escape_vtt, join_words};
use super::options::ExportOptions;
use crate::{Catalog, Word};

/// The portrait frame an ASS file is laid out on when the video's size is not known.
const DEFAULT_FRAME_PX: (u32, u32) = (1080, 1920);

/// Writes `words` as a subtitle file in `format`.
///
/// Cues follow subtitle practice: at most two lines of 42 characters and 7 s of speech, a long
/// sentence spread evenly over its cues, each on screen at least 0.8 s and long enough to read
/// at 20 characters a second (held into the silence after it, never over the next cue). Words
/// are joined by a space, except two words of a script written without spaces (Chinese,
/// Japanese). Text is escaped as each format needs: `&`, `<`, `>` as references in WebVTT;
/// `{`, `}` and `\` in ASS so they open no override block; in SRT, which has no escapes, a
/// word joiner (which shows nothing) after every `<`, `{` and `\`; a line break inside a word
/// becomes a space. ASS is styled by [`ExportOptions`], each word with its karaoke time (`\k`)
/// and lit while it is spoken (the config's colours, one word at a time); without the burn's
/// fonts its cues are these same cues, each one line that the player wraps within the
/// caption's width ([`export_layout`](crate::export_layout) writes the burn's own pages and
/// lines). Plain text is one cue a line, without times.
///
/// Words out of time order are sorted; words with no text are left out.
///
/// ```
/// use caption_core::{ExportOptions, SubtitleFormat, Word, export_words};
///
/// let words = [Word::new(0.5, 0.9, "Fish"), Word::new(1.0, 1.4, "&"), Word::new(1.5, 2.0, "chips.")];
/// let srt = export_words(&words, SubtitleFormat::Srt, &ExportOptions::default())?;
/// assert_eq!(srt, "1\n00:00:00,500 --> 00:00:02,000\nFish & chips.\n\n");
///
/// let vtt = export_words(&words, SubtitleFormat::Vtt, &ExportOptions::default())?;
/// assert!(vtt.starts_with("WEBVTT\n\n00:00:00.500 --> 00:00:02.000\nFish &amp; chips.\n"));
///
/// let ass = export_words(&words, SubtitleFormat::Ass, &ExportOptions::default().with_frame_size(1920, 1080))?;
/// assert!(ass.contains("PlayResX: 1920\nPlayResY: 1080\n"));
/// // Karaoke: "Fish" spoken for 0.4 s, 0.1 s of silence, "&" spoken for 0.4 s.
/// assert!(ass.contains("{\\k40\\") && ass.contains(" {\\k10}{\\k40\\"));
///
/// let text = export_words(&words, SubtitleFormat::Text, &ExportOptions::default())?;
/// assert_eq!(text, "Fish & chips.\n");
/// # Ok::<(), caption_core::SubtitleError>(())
/// ```
pub fn export_words(
    words: &[Word],
    format: SubtitleFormat,
    options: &ExportOptions,
) -> Result<String, SubtitleError> {
    let mut words: Vec<Word> = words
        .iter()
        .filter(|w| !punctuated(w).is_empty())
        .cloned()
        .collect();
    words.sort_by(|a, b| a.start.total_cmp(&b.start));
    let mut out = String::new();
    match format {
        SubtitleFormat::Srt => {
            for (n, cue) in cues(&words).iter().enumerate() {
                let _ = write!(
                    out,
                    "{}\n{} --> {}\n{}\n\n",
                    n + 1,
                    millisecond_clock(cue.start_s, ','),
                    millisecond_clock(cue.end_s, ','),
                    escape_srt(&cue.line_texts(punctuated).join("\n"))
                );
            }
        }
        SubtitleFormat::Vtt => {
            out.push_str("WEBVTT\n\n");
            for cue in cues(&words) {
                let _ = write!(
                    out,
                    "{} --> {}\n{}\n\n",
                    millisecond_clock(cue.start_s, '.'),
                    millisecond_clock(cue.end_s, '.'),
                    escape_vtt(&cue.line_texts(punctuated).join("\n"))
                );
            }
        }
        SubtitleFormat::Ass => {
            let (width_px, height_px) = options.frame_size_px.unwrap_or(DEFAULT_FRAME_PX);
            out = match &options.config {
                Some(config) => write_ass(&words, config, width_px, height_px),
                None => {
                    let catalog = Catalog::builtin().map_err(|e| SubtitleError::NoStyle {
                        message: e.to_string(),
                    })?;
                    write_ass(&words, catalog.default_config(), width_px, height_px)
                }
            };
        }
        SubtitleFormat::Text => {
            for cue in cues(&words) {
                let lines = cue.line_texts(punctuated);
                let _ = writeln!(out, "{}", join_words(lines.iter().map(String::as_str)));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    fn words() -> Vec<Word> {
        let mut w = vec![
            Word::new(0.5, 0.9, "hello"),
            Word::new(1.0, 1.4, "world"),
            Word::new(3.0, 3.5, "again"),
        ];
        w[1].punctuated_word = "world.".into();
        w
    }

    fn karaoke() -> Config {
        let catalog = Catalog::builtin().unwrap();
        catalog.get("karaoke").unwrap().config.clone()
    }

    fn export(words: &[Word], format: SubtitleFormat) -> String {
        let options = ExportOptions::default()
            .with_frame_size(1920, 1080)
            .with_config(karaoke());
        export_words(words, format, &options).unwrap()
    }

    #[test]
    fn srt_cues_split_at_sentences_and_pauses_and_last_long_enough() {
        assert_eq!(
            export(&words(), SubtitleFormat::Srt),
            "1\n00:00:00,500 --> 00:00:01,400\nhello world.\n\n2\n00:00:03,000 --> 00:00:03,800\nagain\n\n"
        );
    }

    #[test]
    fn vtt_and_txt() {
        let vtt = export(&words(), SubtitleFormat::Vtt);
        assert!(vtt.starts_with("WEBVTT\n\n00:00:00.500 --> 00:00:01.400\nhello world.\n"));
        assert_eq!(
            export(&words(), SubtitleFormat::Text),
            "hello world.\nagain\n"
        );
    }

    #[test]
    fn ass_is_styled_by_the_template_at_the_videos_size() {
        let ass = export(&words(), SubtitleFormat::Ass);
        assert!(ass.contains("PlayResX: 1920\nPlayResY: 1080\n"), "{ass}");
        let config = karaoke();
        let style_line = ass.lines().find(|l| l.starts_with("Style: ")).unwrap();
        let fields: Vec<&str> = style_line["Style: ".len()..].split(',').collect();
        assert_eq!(fields[1], config.font);
        // 1080 is the reference short side: sizes are taken as they are.
        assert_eq!(fields[2], format!("{:.0}", config.sizes.font_px));
        // Words are drawn in the default colour, each lit in turn by its own overrides.
        let default = config.colors.default_color.nth(0).unwrap();
        assert_eq!(
            fields[3],
            format!(
                "&H{:02X}{:02X}{:02X}{:02X}",
                255 - default.a,
                default.b,
                default.g,
                default.r
            )
        );
        assert_eq!(
            fields[3], fields[4],
            "secondary as primary: \\k colours nothing"
        );
        // Lines too wide for the caption's width wrap within it.
        assert!(ass.contains("WrapStyle: 0\n"), "{ass}");
        assert_eq!(
            fields[19],
            format!("{}", (1920.0 * (1.0 - config.max_width) / 2.0).round())
        );
        assert!(
            ass.contains("Dialogue: 0,0:00:00.50,0:00:01.40,Default,,0,0,0,,{\\an5\\pos(960,"),
            "{ass}"
        );
        let hilight = config.colors.hilight_color.nth(0).unwrap();
        let lit = format!("\\1c&H{:02X}{:02X}{:02X}&", hilight.b, hilight.g, hilight.r);
        let unlit = format!("\\1c&H{:02X}{:02X}{:02X}&", default.b, default.g, default.r);
        // The karaoke template keeps spoken words lit: "world." is lit 0.5 s in and stays.
        let event = ass.lines().find(|l| l.starts_with("Dialogue:")).unwrap();
        let (_, world) = event.split_once("hello ").unwrap();
        assert!(world.contains(&format!("\\t(500,500,{lit}")), "{event}");
        assert!(!world.contains("\\t(900,"), "{event}");
        // Without a spoken colour, "hello" is lit from the start and goes back 0.4 s later,
        // "world." is lit 0.5 s in and goes back 0.4 s later.
        let mut unspoken = config.clone();
        unspoken.modes.spoken_mode = crate::SpokenMode::None;
        let options = ExportOptions::default()
            .with_frame_size(1920, 1080)
            .with_config(unspoken);
        let ass = export_words(&words(), SubtitleFormat::Ass, &options).unwrap();
        let event = ass.lines().find(|l| l.starts_with("Dialogue:")).unwrap();
        let (hello, world) = event.split_once("hello ").unwrap();
        assert!(hello.contains(&format!("{{\\k40{lit}")), "{event}");
        assert!(hello.contains(&format!("\\t(400,400,{unlit}")), "{event}");
        assert!(
            world.starts_with(&format!("{{\\k10}}{{\\k40{unlit}")),
            "{event}"
        );
        assert!(world.contains(&format!("\\t(500,500,{lit}")), "{event}");
        assert!(world.contains(&format!("\\t(900,900,{unlit}")), "{event}");
        assert!(world.ends_with("}world."), "{event}");
    }

    #[test]
    fn escaping_in_every_format() {
        let mut tricky = vec![
            Word::new(0.0, 0.4, "a<b>&c"),
            Word::new(0.5, 0.9, "{\\an8}"),
            Word::new(1.0, 1.4, "C:\\New"),
            Word::new(1.5, 1.9, "two\nlines"),
        ];
        tricky.push(Word::new(2.0, 2.4, "end."));
        let vtt = export(&tricky, SubtitleFormat::Vtt);
        assert!(vtt.contains("a&lt;b&gt;&amp;c"), "{vtt}");
        let srt = export(&tricky, SubtitleFormat::Srt);
        assert!(srt.contains("two lines"), "{srt}");
        assert_eq!(srt.matches("\n\n").count(), 1, "{srt}");
        let ass = export(&tricky, SubtitleFormat::Ass);
        let event = ass.lines().find(|l| l.starts_with("Dialogue:")).unwrap();
        assert!(event.contains("\\{\\\u{2060}an8\\}"), "{event}");
        assert!(event.contains("C:\\\u{2060}New"), "{event}");
        // Every word comes back from every timed format as it was written.
        for format in [
            SubtitleFormat::Srt,
            SubtitleFormat::Vtt,
            SubtitleFormat::Ass,
        ] {
            let text = export(&tricky, format);
            let back = crate::import_words(&text, format).unwrap();
            let back: Vec<&str> = back.iter().map(|w| w.punctuated_word.as_str()).collect();
            assert_eq!(
                back,
                ["a<b>&c", "{\\an8}", "C:\\New", "two", "lines", "end."],
                "{format:?}: {text}"
            );
        }
    }

    #[test]
    fn chinese_and_japanese_are_written_without_spaces() {
        let words = [
            Word::new(0.0, 0.3, "我们"),
            Word::new(0.3, 0.6, "今天"),
            Word::new(0.6, 0.9, "去"),
            Word::new(0.9, 1.2, "公园。"),
            Word::new(2.5, 2.8, "東京"),
            Word::new(2.8, 3.0, "に"),
            Word::new(3.0, 3.4, "行きます"),
        ];
        let srt = export(&words, SubtitleFormat::Srt);
        assert!(srt.contains("\n我们今天去公园。\n"), "{srt}");
        assert!(srt.contains("\n東京に行きます\n"), "{srt}");
        let ass = export(&words, SubtitleFormat::Ass);
        assert!(
            ass.contains("}我们{\\k30") && ass.contains("}今天{\\k30"),
            "{ass}"
        );
        let back = crate::import_words(&ass, SubtitleFormat::Ass).unwrap();
        assert_eq!(back.len(), words.len());
        for (a, b) in back.iter().zip(&words) {
            assert_eq!(a.punctuated_word, b.punctuated_word);
            assert!((a.start - b.start).abs() < 0.006 && (a.end - b.end).abs() < 0.006);
        }
    }

    #[test]
    fn out_of_order_and_empty_words() {
        let words = [
            Word::new(2.0, 2.5, "second."),
            Word::new(1.0, 1.5, " "),
            Word::new(0.0, 0.5, "first."),
        ];
        assert_eq!(export(&words, SubtitleFormat::Text), "first.\nsecond.\n");
        assert_eq!(export(&[], SubtitleFormat::Vtt), "WEBVTT\n\n");
    }

    #[test]
    fn ass_without_a_style_takes_the_default_template_on_a_portrait_frame() {
        let ass = export_words(&words(), SubtitleFormat::Ass, &ExportOptions::default()).unwrap();
        assert!(ass.contains("PlayResX: 1080\nPlayResY: 1920\n"), "{ass}");
        let font = Catalog::builtin().unwrap().default_config().font.clone();
        assert!(ass.contains(&format!("Style: Default,{font},")), "{ass}");
    }
}
