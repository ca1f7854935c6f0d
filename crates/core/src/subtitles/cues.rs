//! Words grouped into cues as subtitle practice wants them: at most two lines of about 42
//! characters, on screen at least 0.8 s and at most 7 s, read at no more than about 20
//! characters a second, and a long sentence spread evenly over its cues rather than leaving one
//! word alone.

use super::markup::{join_words, one_line};
use crate::Word;

/// Characters on one line of a cue.
pub(crate) const LINE_CHARS: usize = 42;
/// Lines of a cue.
const CUE_LINES: usize = 2;
/// Shortest time a cue stays on screen, seconds (extended into the silence after it).
pub(crate) const MIN_CUE_S: f64 = 0.8;
/// Longest span of speech one cue covers, seconds.
pub(crate) const MAX_CUE_S: f64 = 7.0;
/// Fastest comfortable reading speed, characters a second.
pub(crate) const MAX_CHARS_PER_S: f64 = 20.0;
/// A silence longer than this always ends a cue.
const PAUSE_S: f64 = 0.8;
/// A silence this long is a breath: a good place for a break.
const BREATH_S: f64 = 0.15;
/// What breaking a cue inside a phrase costs, in squared characters: a cue break after a
/// comma or at a breath is taken when it leaves cues up to about 15 characters from even.
const MID_PHRASE_CUE_COST: usize = LINE_CHARS * LINE_CHARS / 4;
/// What breaking a line inside a phrase costs, in characters of the longer line.
const MID_PHRASE_LINE_COST: usize = 8;

/// One cue: its words, where its second line starts and when it shows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Group<'w> {
    pub(crate) words: &'w [Word],
    /// Index in `words` of the first word of the second line, if the cue has two.
    pub(crate) second_line: Option<usize>,
    pub(crate) start_s: f64,
    pub(crate) end_s: f64,
}

impl<'w> Group<'w> {
    /// The words of each line.
    pub(crate) fn lines(&self) -> Vec<&'w [Word]> {
        match self.second_line {
            Some(k) => vec![&self.words[..k], &self.words[k..]],
            None => vec![self.words],
        }
    }

    /// Each line's text, the words shown as `shown` says and joined by script.
    pub(crate) fn line_texts(&self, shown: impl Fn(&Word) -> String) -> Vec<String> {
        self.lines()
            .into_iter()
            .map(|line| {
                let words: Vec<String> = line.iter().map(&shown).collect();
                join_words(words.iter().map(String::as_str))
            })
            .collect()
    }
}

/// A word as subtitles show it: punctuated, on one line.
pub(crate) fn punctuated(word: &Word) -> String {
    one_line(&word.punctuated_word)
}

fn joined(words: &[Word]) -> String {
    let texts: Vec<String> = words.iter().map(punctuated).collect();
    join_words(texts.iter().map(String::as_str))
}

fn chars(words: &[Word]) -> usize {
    joined(words).chars().count()
}

/// Runs of words between hard breaks: a sentence end or a pause.
fn runs(words: &[Word]) -> Vec<&[Word]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 0..words.len() {
        let last = i + 1 == words.len();
        let sentence_end = words[i]
            .punctuated_word
            .trim_end()
            .ends_with(['.', '!', '?', '…', '。', '！', '？']);
        let pause = !last && words[i + 1].start - words[i].end > PAUSE_S;
        if last || sentence_end || pause {
            out.push(&words[start..=i]);
            start = i + 1;
        }
    }
    out
}

/// Whether a break after word `i` follows the speech: after a clause or sentence end, or before
/// a breath.
fn is_phrase_end(words: &[Word], i: usize) -> bool {
    let clause = words[i].punctuated_word.trim_end().ends_with([
        ',', ';', ':', '.', '!', '?', '…', '，', '；', '：', '、', '—',
    ]);
    clause
        || words
            .get(i + 1)
            .is_some_and(|next| next.start - words[i].end >= BREATH_S)
}

/// Whether `words` fit one cue: their text in two lines, their speech within [`MAX_CUE_S`].
fn fits(words: &[Word]) -> bool {
    let span = words.last().map_or(0.0, |w| w.end) - words.first().map_or(0.0, |w| w.start);
    words.len() == 1 || (chars(words) <= LINE_CHARS * CUE_LINES && span <= MAX_CUE_S)
}

/// Splits a run into the fewest cues that fit, as even in length as possible, preferring to
/// break after a comma or at a breath.
fn split_run(run: &[Word]) -> Vec<&[Word]> {
    let n = run.len();
    let mut best = vec![(usize::MAX, usize::MAX); n + 1];
    let mut from = vec![0; n + 1];
    best[0] = (0, 0);
    for end in 1..=n {
        for start in (0..end).rev() {
            if !fits(&run[start..end]) {
                break;
            }
            let (count, cost) = best[start];
            if count == usize::MAX {
                continue;
            }
            let len = chars(&run[start..end]);
            let mid_phrase = end < n && !is_phrase_end(run, end - 1);
            let candidate = (
                count + 1,
                cost + len * len + if mid_phrase { MID_PHRASE_CUE_COST } else { 0 },
            );
            if candidate < best[end] {
                best[end] = candidate;
                from[end] = start;
            }
        }
    }
    let mut out = Vec::new();
    let mut end = n;
    while end > 0 {
        let start = from[end];
        out.push(&run[start..end]);
        end = start;
    }
    out.reverse();
    out
}

/// Where a cue's second line starts: none when it fits one line, else where the two lines come
/// out most even, after a comma or at a breath if that leaves them nearly as even.
fn second_line(words: &[Word]) -> Option<usize> {
    if chars(words) <= LINE_CHARS || words.len() < 2 {
        return None;
    }
    (1..words.len()).min_by_key(|&k| {
        let longer = chars(&words[..k]).max(chars(&words[k..]));
        let too_long = longer > LINE_CHARS;
        let mid_phrase = !is_phrase_end(words, k - 1);
        (
            too_long,
            longer + if mid_phrase { MID_PHRASE_LINE_COST } else { 0 },
        )
    })
}

/// The cues of a transcript, timed: each starts with its first word and lasts until its last
/// word ends, then longer (into the silence that follows, never past the next cue's start)
/// until it has been on screen [`MIN_CUE_S`] and long enough to read at
/// [`MAX_CHARS_PER_S`].
pub(crate) fn cues(words: &[Word]) -> Vec<Group<'_>> {
    let mut out: Vec<Group<'_>> = runs(words)
        .into_iter()
        .flat_map(split_run)
        .filter_map(|group| {
            let (first, last) = (group.first()?, group.last()?);
            Some(Group {
                words: group,
                second_line: second_line(group),
                start_s: first.start,
                end_s: last.end.max(first.start),
            })
        })
        .collect();
    for i in 0..out.len() {
        let next_start = out.get(i + 1).map_or(f64::INFINITY, |c| c.start_s);
        let cue = &mut out[i];
        let reading_s = chars(cue.words) as f64 / MAX_CHARS_PER_S;
        let wanted = cue.end_s.max(cue.start_s + MIN_CUE_S.max(reading_s));
        cue.end_s = wanted.min(next_start).max(cue.end_s.min(next_start));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words of `text`, `each_s` apart, each lasting 80 % of that.
    fn spoken(text: &str, from_s: f64, each_s: f64) -> Vec<Word> {
        text.split(' ')
            .enumerate()
            .map(|(i, w)| {
                let start = from_s + i as f64 * each_s;
                Word::new(start, start + each_s * 0.8, w)
            })
            .collect()
    }

    fn text(cue: &Group<'_>) -> String {
        cue.line_texts(punctuated).join(" ")
    }

    #[test]
    fn long_sentences_split_evenly_in_two_lines_of_42() {
        let words = spoken(
            "So this is the part of the video where we finally explain how the whole thing works and why it matters to you today.",
            0.0,
            0.3,
        );
        let cues = cues(&words);
        assert!(cues.len() >= 2);
        let sizes: Vec<usize> = cues.iter().map(|c| c.words.len()).collect();
        let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        assert!(max - min <= 2, "{sizes:?}");
        for cue in &cues {
            let lines = cue.line_texts(punctuated);
            assert!(lines.len() <= 2);
            assert!(
                lines.iter().all(|l| l.chars().count() <= LINE_CHARS),
                "{cue:?}"
            );
            assert!(cue.end_s - cue.start_s <= MAX_CUE_S + 1.0);
        }
    }

    #[test]
    fn short_cues_last_long_enough_to_read_without_overlapping() {
        let mut words = spoken("Yes.", 1.0, 0.2);
        words.extend(spoken("Absolutely wonderful.", 1.4, 0.3));
        words.extend(spoken("Fine.", 5.0, 0.2));
        let cues = cues(&words);
        assert_eq!(cues.len(), 3);
        // "Yes." is cut short by the next cue, never overlapping it.
        assert!((cues[0].end_s - 1.4).abs() < 1e-9, "{:?}", cues[0]);
        // "Absolutely wonderful." (21 characters) needs 1.05 s to read.
        assert!(
            cues[1].end_s - cues[1].start_s >= 1.05 - 1e-9,
            "{:?}",
            cues[1]
        );
        assert!(cues[1].end_s <= cues[2].start_s);
        // "Fine." alone at the end stays 0.8 s.
        assert!((cues[2].end_s - cues[2].start_s - MIN_CUE_S).abs() < 1e-9);
        for cue in &cues {
            let cps = text(cue).chars().count() as f64 / (cue.end_s - cue.start_s);
            assert!(cps <= MAX_CHARS_PER_S + 1e-9 || cue.end_s == 1.4, "{cue:?}");
        }
    }

    #[test]
    fn speech_longer_than_seven_seconds_is_split() {
        let words = spoken("one two three four five six seven eight nine ten", 0.0, 0.9);
        let cues = cues(&words);
        assert!(cues.len() >= 2);
        assert!(
            cues.iter()
                .all(|c| { c.words.last().unwrap().end - c.words[0].start <= MAX_CUE_S })
        );
    }

    #[test]
    fn cues_and_lines_break_at_commas() {
        // 89 characters: two cues. Split evenly they would break inside "because people".
        let words = spoken(
            "First, keep your captions short, because people scroll fast, and they decide in a second.",
            0.0,
            0.3,
        );
        let cues = cues(&words);
        let texts: Vec<String> = cues.iter().map(text).collect();
        assert_eq!(
            texts,
            [
                "First, keep your captions short,",
                "because people scroll fast, and they decide in a second."
            ]
        );
        // The second cue's two lines break at its comma too.
        assert_eq!(
            cues[1].line_texts(punctuated),
            [
                "because people scroll fast,",
                "and they decide in a second."
            ]
        );
    }

    #[test]
    fn chinese_words_count_and_join_without_spaces() {
        let words = spoken("我们 今天 去 公园。", 0.0, 0.3);
        let cues = cues(&words);
        assert_eq!(cues.len(), 1);
        assert_eq!(text(&cues[0]), "我们今天去公园。");
    }
}
