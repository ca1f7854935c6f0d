//! Words out of cues: a cue's words share its time by their length, unless the file times them
//! (the karaoke `\k` of an ASS event). Spreading by the forced aligner, when the audio is at
//! hand, is caption-transcribe's: it starts from these words.

use super::error::SubtitleError;
use super::format::SubtitleFormat;
use super::markup::{Syllable, tokens};
use super::read::{Cue, read_events};
use crate::Word;
use crate::punctuation::bare_word;
use crate::rules::MAX_WORD_BYTES;

/// A word written `token`, from `start_s` to `end_s`: its bare form without the punctuation
/// around it.
fn word(token: &str, start_s: f64, end_s: f64) -> Word {
    let bare = bare_word(token);
    Word {
        start: start_s,
        end: end_s.max(start_s),
        word: if bare.is_empty() { token } else { bare }.to_owned(),
        punctuated_word: token.to_owned(),
        emoji: None,
        ..Default::default()
    }
}

/// Letters and digits of a token, at least one: what its share of a cue's time goes by.
fn letters(token: &str) -> usize {
    token.chars().filter(|c| c.is_alphanumeric()).count().max(1)
}

/// `t_s` rounded to the millisecond: finer than any subtitle format times, and words read
/// back print as `0.6`, not `0.6000000000000001`.
fn millisecond(t_s: f64) -> f64 {
    (t_s * 1000.0).round() / 1000.0
}

/// `token` in pieces of at most [`MAX_WORD_BYTES`], cut between characters: a "word" longer
/// than a request may carry (a pasted link, a run of garbage in a damaged file) becomes words
/// that fit, so that imported words are always words a generate request accepts.
fn pieces(token: &str) -> impl Iterator<Item = &str> {
    let mut rest = token;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = rest.len().min(MAX_WORD_BYTES);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

/// Spreads `tokens` over `[from_s, to_s]` in proportion to their letters.
fn spread(tokens: &[&str], from_s: f64, to_s: f64, out: &mut Vec<Word>) {
    let tokens: Vec<&str> = tokens.iter().flat_map(|t| pieces(t)).collect();
    let total: usize = tokens.iter().map(|t| letters(t)).sum();
    let span_s = (to_s - from_s).max(0.0);
    let mut at_s = from_s;
    for token in &tokens {
        let end_s = at_s + span_s * letters(token) as f64 / total.max(1) as f64;
        out.push(word(token, millisecond(at_s), millisecond(end_s)));
        at_s = end_s;
    }
}

/// Words written `tokens` (with their punctuation) sharing `[from_s, to_s]` one after the
/// other, each in proportion to its letters and digits, times rounded to the millisecond; each
/// word's bare form leaves out the punctuation around it.
///
/// ```
/// let words = caption_core::spread_by_length(&["Hi,", "you!"], 0.0, 1.0);
/// assert_eq!(words[0].word, "Hi");
/// assert!((words[0].end - 0.4).abs() < 1e-9 && (words[1].end - 1.0).abs() < 1e-9);
/// ```
pub fn spread_by_length(tokens: &[&str], from_s: f64, to_s: f64) -> Vec<Word> {
    let mut out = Vec::with_capacity(tokens.len());
    spread(tokens, from_s, to_s, &mut out);
    out
}

/// Where the words of a cue starting at `start_s` may start: overlapping cues are read one
/// after the other, so a cue's words start no earlier than the previous cue's words end.
fn first_free_s(out: &[Word], start_s: f64) -> f64 {
    out.last().map_or(start_s, |w| w.end.max(start_s))
}

/// The words of `cues`, each cue's words sharing its time in proportion to their letters.
/// Text of scripts written without spaces (Chinese, Japanese, Thai) is cut into its words.
/// Overlapping cues are read one after the other: a cue's words start no earlier than the
/// previous cue's words end.
///
/// ```
/// use caption_core::{Cue, cues_to_words};
///
/// let words = cues_to_words(&[Cue::new(1.0, 2.0, "Hi there!")]);
/// assert_eq!(words[0].word, "Hi");
/// assert_eq!(words[1].punctuated_word, "there!");
/// assert_eq!(words[1].word, "there");
/// assert_eq!((words[0].start, words[1].end), (1.0, 2.0));
/// ```
pub fn cues_to_words(cues: &[Cue]) -> Vec<Word> {
    let mut out = Vec::new();
    for cue in cues {
        let from_s = first_free_s(&out, cue.start_s);
        spread(&tokens(&cue.text), from_s, cue.end_s.max(from_s), &mut out);
    }
    out
}

/// The words of karaoke syllables lit from `start_s` on: each syllable's words share its time.
fn karaoke_words(syllables: &[Syllable], start_s: f64, out: &mut Vec<Word>) {
    let mut at_s = first_free_s(out, start_s);
    for syllable in syllables {
        let end_s = at_s + syllable.duration_s;
        // A syllable is the file's own unit (a word, or a mora of Japanese karaoke): it is cut
        // at spaces only.
        let words: Vec<&str> = syllable.text.split_whitespace().collect();
        spread(&words, at_s, end_s, out);
        at_s = end_s;
    }
}

/// Reads the words of a subtitle file: the words of each cue, timed by the file's karaoke
/// (`\k` in ASS) when it has it, else sharing the cue's time by their length
/// ([`cues_to_words`]).
///
/// Plain text has no times: [`SubtitleError::Untimed`] (align it on the audio instead).
///
/// ```
/// use caption_core::{SubtitleFormat, import_words};
///
/// let vtt = "WEBVTT\n\n00:01.000 --> 00:02.000\n<v Ann>Fish &amp; chips\n";
/// let words = import_words(vtt, SubtitleFormat::Vtt)?;
/// let text: Vec<&str> = words.iter().map(|w| w.punctuated_word.as_str()).collect();
/// assert_eq!(text, ["Fish", "&", "chips"]);
///
/// let ass = "[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n\
///            Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,{\\k30}Hello {\\k20}{\\k50}world\n";
/// let words = import_words(ass, SubtitleFormat::Ass)?;
/// assert_eq!((words[1].start, words[1].end), (1.5, 2.0));
/// # Ok::<(), caption_core::SubtitleError>(())
/// ```
pub fn import_words(text: &str, format: SubtitleFormat) -> Result<Vec<Word>, SubtitleError> {
    if !format.is_timed() {
        return Err(SubtitleError::Untimed);
    }
    let mut out = Vec::new();
    for event in read_events(text, format)? {
        if event.syllables.is_empty() {
            let from_s = first_free_s(&out, event.cue.start_s);
            let to_s = event.cue.end_s.max(from_s);
            spread(&tokens(&event.cue.text), from_s, to_s, &mut out);
        } else {
            karaoke_words(&event.syllables, event.cue.start_s, &mut out);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cues_spread_their_words_and_never_overlap() {
        let cues = [Cue::new(1.0, 2.0, "a bb"), Cue::new(1.5, 3.0, "ccc")];
        let placed = cues_to_words(&cues);
        assert_eq!(placed.len(), 3);
        assert_eq!(placed[0].end, 1.333);
        assert_eq!(placed[2].start, 2.0);
        assert_eq!(placed[2].end, 3.0);
    }

    #[test]
    fn chinese_cues_become_words() {
        let words = cues_to_words(&[Cue::new(0.0, 1.0, "我们今天去公园。")]);
        assert!(words.len() >= 3, "{words:?}");
        let joined: String = words.iter().map(|w| w.punctuated_word.as_str()).collect();
        assert_eq!(joined, "我们今天去公园。");
        assert_eq!(words.last().map(|w| w.word.as_str()), Some("公园"));
    }

    #[test]
    fn a_token_too_long_for_a_word_is_cut_between_characters() {
        let long = format!("a{}", "é".repeat(600));
        let words = spread_by_length(&[&long, "end"], 0.0, 2.0);
        let texts: Vec<&str> = words.iter().map(|w| w.punctuated_word.as_str()).collect();
        assert_eq!(texts.concat(), format!("{long}end"));
        assert_eq!(words.len(), 3, "{texts:?}");
        assert!(
            words
                .iter()
                .all(|w| w.punctuated_word.len() <= MAX_WORD_BYTES)
        );
        assert_eq!(words[0].punctuated_word.len(), 999);
    }

    #[test]
    fn plain_text_is_refused() {
        let err = import_words("hello", SubtitleFormat::Text).unwrap_err();
        assert_eq!(err.code(), crate::SubtitleErrorCode::Untimed);
    }

    #[test]
    fn karaoke_leads_leave_gaps_and_overlaps_are_read_in_turn() {
        let ass = "[Events]\nDialogue: 0,0:00:01.00,0:00:03.00,Default,,0,0,0,,{\\k50}{\\k50}one {\\k100}two\nDialogue: 0,0:00:02.00,0:00:04.00,Default,,0,0,0,,three\n";
        let words = import_words(ass, SubtitleFormat::Ass).unwrap();
        let times: Vec<(f64, f64)> = words.iter().map(|w| (w.start, w.end)).collect();
        assert_eq!(times, [(1.5, 2.0), (2.0, 3.0), (3.0, 4.0)]);
    }
}
