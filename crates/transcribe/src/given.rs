//! Timing a text the caller already has: a script, or the cues of a subtitle file.
//!
//! Every given word is first placed roughly, then the forced aligner (English) places it
//! exactly. A plain text is placed by matching its words to whisper's own transcript of the
//! audio (an edit-distance alignment in a band around the diagonal, so an hour of text costs
//! little): matched words take whisper's times, the words between two matches share the time
//! between them by length. A subtitle cue's words share the cue's time by length
//! ([`caption_core::cues_to_words`]).

use caption_core::{Cue, SubtitleError, SubtitleFormat, Word, parse_cues, spread_by_length};

/// A text to time on the audio.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum GivenText {
    /// Words in reading order, without times (a script, a plain transcript).
    Plain(String),
    /// Subtitle cues: each cue's words are spoken between its start and end.
    Cues(Vec<Cue>),
}

impl GivenText {
    /// Reads the text of a file whose name ends in `extension`: the cues of `srt`, `vtt` or
    /// `ass` (`ssa`), and anything else as plain words.
    ///
    /// ```
    /// use caption_transcribe::GivenText;
    ///
    /// let srt = "1\n00:00:01,000 --> 00:00:02,500\nHello there\n";
    /// let GivenText::Cues(cues) = GivenText::parse(srt, Some("srt"))? else { panic!() };
    /// assert_eq!(cues.len(), 1);
    /// assert_eq!(GivenText::parse("Hello there", None)?, GivenText::Plain("Hello there".into()));
    /// # Ok::<(), caption_core::SubtitleError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`SubtitleError`] naming the line of a subtitle file that cannot be read.
    pub fn parse(text: &str, extension: Option<&str>) -> Result<Self, SubtitleError> {
        match extension.and_then(SubtitleFormat::from_extension) {
            None | Some(SubtitleFormat::Text) => Ok(Self::Plain(text.to_owned())),
            Some(format) => parse_cues(text, format).map(Self::Cues),
        }
    }
}

/// Half-width of the band the edit-distance alignment searches around the diagonal, in words.
const BAND: usize = 200;
/// Assumed length of a word with no anchor on one side, seconds.
const UNANCHORED_WORD_S: f64 = 0.35;

/// Lower-case letters and digits: what two spellings of a word are compared on.
pub(crate) fn normalized(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Pairs `(given index, heard index)` of equal words in an edit-distance alignment of the two
/// sequences, searched within [`BAND`] words of the diagonal.
fn matches(given: &[String], heard: &[String]) -> Vec<(usize, usize)> {
    let (n, m) = (given.len(), heard.len());
    if n == 0 || m == 0 {
        return Vec::new();
    }
    // Row i covers heard indices [lo(i), lo(i) + width).
    let width = 2 * BAND + 1;
    let centre = |i: usize| i * m / n;
    let lo = |i: usize| centre(i).saturating_sub(BAND);
    const FAR: u32 = u32::MAX / 2;
    // cost[i][k]: edits to align given[..i] with heard[..lo(i) + k].
    let mut cost = vec![FAR; (n + 1) * width];
    let get = |cost: &[u32], i: usize, j: usize| -> u32 {
        let l = lo(i);
        if j < l || j >= l + width || j > m {
            FAR
        } else {
            cost[i * width + (j - l)]
        }
    };
    for i in 0..=n {
        let l = lo(i);
        for j in l..(l + width).min(m + 1) {
            let value = if i == 0 {
                j as u32
            } else if j == 0 {
                i as u32
            } else {
                let substitute = get(&cost, i - 1, j - 1) + u32::from(given[i - 1] != heard[j - 1]);
                let skip_given = get(&cost, i - 1, j) + 1;
                let skip_heard = get(&cost, i, j - 1) + 1;
                substitute.min(skip_given).min(skip_heard)
            };
            cost[i * width + (j - l)] = value;
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut j) = (n, m);
    if get(&cost, n, m) >= FAR {
        return pairs;
    }
    while i > 0 && j > 0 {
        let here = get(&cost, i, j);
        let same = given[i - 1] == heard[j - 1];
        if here == get(&cost, i - 1, j - 1) + u32::from(!same) {
            if same {
                pairs.push((i - 1, j - 1));
            }
            i -= 1;
            j -= 1;
        } else if here == get(&cost, i - 1, j) + 1 {
            i -= 1;
        } else {
            j -= 1;
        }
    }
    pairs.reverse();
    pairs
}

/// The words of `text`, placed by matching them to `heard` (whisper's words for the same
/// audio, in time order) within `[0, total_s]`.
pub(crate) fn place_plain(text: &str, heard: &[Word], total_s: f64) -> Vec<Word> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let given: Vec<String> = tokens.iter().map(|t| normalized(t)).collect();
    let heard_norm: Vec<String> = heard.iter().map(|w| normalized(&w.word)).collect();
    let pairs = matches(&given, &heard_norm);

    let mut out = Vec::with_capacity(tokens.len());
    let mut next_given = 0;
    let mut previous_end_s: Option<f64> = None;
    let anchors = pairs.iter().map(|&(g, h)| (g, Some(&heard[h])));
    for (g, anchor) in anchors.chain(std::iter::once((tokens.len(), None))) {
        let run = &tokens[next_given..g];
        if !run.is_empty() {
            let run_s = UNANCHORED_WORD_S * run.len() as f64;
            let (from_s, to_s) = match (previous_end_s, anchor) {
                (Some(from), Some(next)) => (from, next.start.max(from)),
                (Some(from), None) => (from, (from + run_s).min(total_s).max(from)),
                (None, Some(next)) => ((next.start - run_s).max(0.0), next.start),
                (None, None) => match (heard.first(), heard.last()) {
                    (Some(first), Some(last)) => (first.start, last.end),
                    _ => (0.0, total_s),
                },
            };
            out.extend(spread_by_length(run, from_s, to_s));
        }
        if let Some(anchor) = anchor {
            let start_s = previous_end_s.map_or(anchor.start, |p| anchor.start.max(p));
            out.extend(spread_by_length(
                &[tokens[g]],
                start_s,
                anchor.end.max(start_s),
            ));
            previous_end_s = Some(anchor.end.max(start_s));
        }
        next_given = g + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heard(words: &[(&str, f64, f64)]) -> Vec<Word> {
        words.iter().map(|&(w, s, e)| Word::new(s, e, w)).collect()
    }

    #[test]
    fn matched_words_take_heard_times_and_the_rest_share_the_gaps() {
        let heard = heard(&[("hello", 1.0, 1.4), ("word", 1.5, 1.9), ("again", 3.0, 3.5)]);
        let placed = place_plain("Hello, world; said again!", &heard, 5.0);
        let texts: Vec<&str> = placed.iter().map(|w| w.punctuated_word.as_str()).collect();
        assert_eq!(texts, ["Hello,", "world;", "said", "again!"]);
        assert_eq!((placed[0].start, placed[0].end), (1.0, 1.4));
        assert_eq!(placed[0].word, "Hello");
        // "world" and "said" were not heard as such: they share 1.4 .. 3.0 by length.
        assert_eq!(placed[1].start, 1.4);
        assert!((placed[2].end - 3.0).abs() < 1e-9);
        assert_eq!((placed[3].start, placed[3].end), (3.0, 3.5));
        assert!(placed.windows(2).all(|w| w[0].end <= w[1].start + 1e-9));
    }

    #[test]
    fn nothing_heard_spreads_over_the_whole_input() {
        let placed = place_plain("one two", &[], 2.0);
        assert_eq!(placed.len(), 2);
        assert_eq!(placed[0].start, 0.0);
        assert!((placed[1].end - 2.0).abs() < 1e-9);
    }

    #[test]
    fn long_texts_match_within_the_band() {
        let text: Vec<String> = (0..5000).map(|i| format!("w{i}")).collect();
        let heard: Vec<Word> = text
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 7 != 3)
            .map(|(i, w)| Word::new(i as f64, i as f64 + 0.5, w.clone()))
            .collect();
        let placed = place_plain(&text.join(" "), &heard, 5000.0);
        assert_eq!(placed.len(), 5000);
        assert_eq!((placed[4001].start, placed[4001].end), (4001.0, 4001.5));
        // Word 4000 was not heard: it fills the gap between its heard neighbours.
        assert_eq!((placed[4000].start, placed[4000].end), (3999.5, 4001.0));
    }
}
