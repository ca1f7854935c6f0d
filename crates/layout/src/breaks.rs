//! Where pages and lines break. Hard breaks come from `displayWords` (a clause end, a pause,
//! a word count); between them, words are spread over as few pages and lines as fit, as evenly
//! as possible, so that no page or line holds one stray word because the next did not fit.

use std::ops::Range;

use caption_core::{DisplayWords, is_unspaced_char};

/// A silence longer than this ends a page under `displayWords: PAUSE`.
pub const PAUSE_S: f64 = 0.6;

/// Cost of ending a line or page on a weak word (see [`is_weak`]), in units of the squared
/// line limit: larger than any gain in evenness, so such a break is taken only when every other
/// split is impossible.
const WEAK_END_COST: f32 = 4.0;

/// What the breaker needs of each word.
#[derive(Debug, Clone)]
pub(crate) struct BreakWord<'a> {
    /// The text as it is drawn.
    pub text: &'a str,
    pub start_s: f64,
    pub end_s: f64,
    /// The word ends a sentence or a clause.
    pub ends_clause: bool,
}

/// Articles, prepositions, conjunctions and possessives that lean on the word after them, in
/// the languages the templates are mostly used for (English, Spanish, French, German,
/// Portuguese, Italian). Typesetting practice keeps them off the end of a line; a closed word
/// class, so a short list covers it.
const LEANING_WORDS: &[&str] = &[
    // English
    "an", "the", "of", "to", "in", "on", "at", "by", "for", "with", "from", "into", "and", "or",
    "but", "nor", "as", "if", "than", "my", "your", "our", "their", "his", "her", "its",
    // Spanish
    "el", "la", "los", "las", "un", "una", "unos", "unas", "de", "del", "al", "en", "con", "por",
    "para", "que", // French
    "le", "les", "une", "des", "du", "au", "aux", "et", "ou", // German
    "der", "die", "das", "den", "dem", "ein", "eine", "einen", "einem", "einer", "und", "oder",
    "mit", "von", "zu", "im", "am", // Portuguese
    "os", "as", "um", "uma", "do", "da", "dos", "das", "no", "na", "com", // Italian
    "il", "lo", "gli", "di", "della", "per", "che",
];

/// A word that leans on the next one ("the", "of", "or", and any one-letter word such as "a",
/// "I" or "y"): a line or page ending on it reads badly ("like 25% or the" / "year 2021?").
pub(crate) fn is_weak(text: &str) -> bool {
    let mut chars = text.chars();
    let one_letter = chars
        .next()
        .is_some_and(|c| c.is_alphabetic() && !is_unspaced_char(c))
        && chars.next().is_none();
    one_letter || LEANING_WORDS.contains(&text.to_lowercase().as_str())
}

/// Runs of words between hard breaks: under `COUNT`, exactly `capacity` words each (the last
/// may be shorter); otherwise a run ends after a clause end (`PUNCTUATION`) or before a
/// silence longer than [`PAUSE_S`] (`PAUSE`), however long it is.
pub(crate) fn hard_runs(
    words: &[BreakWord<'_>],
    rule: DisplayWords,
    capacity: usize,
) -> Vec<Range<usize>> {
    let mut runs = Vec::new();
    let mut start = 0;
    for i in 0..words.len() {
        let next_gap = words.get(i + 1).map(|n| n.start_s - words[i].end_s);
        let end_here = match rule {
            DisplayWords::Count => i + 1 - start >= capacity,
            DisplayWords::Punctuation => words[i].ends_clause,
            DisplayWords::Pause => next_gap.is_some_and(|g| g > PAUSE_S),
        };
        if end_here || i + 1 == words.len() {
            runs.push(start..i + 1);
            start = i + 1;
        }
    }
    runs
}

/// The widths the breaker measures: each word's advance and the space before it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Widths<'a> {
    pub words: &'a [f32],
    /// `gaps[i]`: the room between word `i - 1` and word `i` on one line.
    pub gaps: &'a [f32],
}

impl Widths<'_> {
    /// Width of words `range` set on one line.
    pub fn line(&self, range: Range<usize>) -> f32 {
        let mut w = 0.0;
        for i in range.clone() {
            w += self.words[i];
            if i > range.start {
                w += self.gaps[i];
            }
        }
        w
    }

    /// Breaks `range` into lines of at most `max_words` words and `limit` width, greedily: the
    /// fewest lines that fit. A word wider than `limit` gets a line of its own.
    pub fn greedy_lines(
        &self,
        range: Range<usize>,
        max_words: usize,
        limit: f32,
    ) -> Vec<Range<usize>> {
        let mut lines = Vec::new();
        let mut start = range.start;
        let mut width = 0.0;
        for i in range.clone() {
            let add = if i == start {
                self.words[i]
            } else {
                self.gaps[i] + self.words[i]
            };
            if i > start && (i - start >= max_words || width + add > limit) {
                lines.push(start..i);
                start = i;
                width = self.words[i];
            } else {
                width += add;
            }
        }
        if start < range.end {
            lines.push(start..range.end);
        }
        lines
    }
}

/// The limits of one page.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageLimits {
    pub lines: usize,
    pub words_per_line: usize,
    /// Widest a line may be.
    pub line_px: f32,
}

impl PageLimits {
    fn capacity(self) -> usize {
        self.lines * self.words_per_line
    }
}

/// Splits `run` into pages of lines: the fewest pages that fit `limits`, with the words spread
/// evenly over them (the sum of squared page lengths is smallest), never ending a page on a
/// weak word when another split exists; then each page's lines balanced by [`balanced_lines`].
pub(crate) fn pages(
    words: &[BreakWord<'_>],
    widths: Widths<'_>,
    run: Range<usize>,
    limits: PageLimits,
) -> Vec<Vec<Range<usize>>> {
    let n = run.len();
    if n == 0 {
        return Vec::new();
    }
    let capacity = limits.capacity().max(1);
    let weak_cost = WEAK_END_COST * (capacity * capacity) as f32;
    // best[i]: (pages, cost) of the first i words of the run; from[i]: where its last page starts.
    let mut best = vec![(usize::MAX, f32::INFINITY); n + 1];
    let mut from = vec![0usize; n + 1];
    best[0] = (0, 0.0);
    for end in 1..=n {
        for start in end.saturating_sub(capacity)..end {
            let (pages, cost) = best[start];
            if pages == usize::MAX {
                continue;
            }
            let range = run.start + start..run.start + end;
            let lines = widths
                .greedy_lines(range.clone(), limits.words_per_line, limits.line_px)
                .len();
            // One word always gets its page, however wide (it is shrunk to fit later).
            if lines > limits.lines && end - start > 1 {
                continue;
            }
            let len = (end - start) as f32;
            let weak = end < n && is_weak(words[range.end - 1].text);
            let candidate = (
                pages + 1,
                cost + len * len + if weak { weak_cost } else { 0.0 },
            );
            if candidate.0 < best[end].0
                // Of equally even splits, the one with the fuller first pages (read on).
                || (candidate.0 == best[end].0 && candidate.1 <= best[end].1 + 1e-3)
            {
                best[end] = candidate;
                from[end] = start;
            }
        }
    }
    let mut bounds = Vec::new();
    let mut end = n;
    while end > 0 {
        let start = from[end];
        bounds.push(run.start + start..run.start + end);
        end = start;
    }
    bounds.reverse();
    bounds
        .into_iter()
        .map(|page| {
            let greedy = widths.greedy_lines(page.clone(), limits.words_per_line, limits.line_px);
            balanced_lines(words, widths, page, greedy.len(), limits).unwrap_or(greedy)
        })
        .collect()
}

/// Re-breaks words `range` into exactly `k` lines under the same limits as
/// [`Widths::greedy_lines`], choosing the split with the most even widths (the smallest sum of
/// squared widths) that does not end a line on a weak word where it can avoid it. `None` when
/// no split into `k` lines fits.
pub(crate) fn balanced_lines(
    words: &[BreakWord<'_>],
    widths: Widths<'_>,
    range: Range<usize>,
    k: usize,
    limits: PageLimits,
) -> Option<Vec<Range<usize>>> {
    let n = range.len();
    if k == 0 || n < k {
        return None;
    }
    let weak_cost = WEAK_END_COST * limits.line_px * limits.line_px;
    // best[j][i]: the cost of the first i words in j lines.
    let mut best = vec![vec![f32::INFINITY; n + 1]; k + 1];
    let mut from = vec![vec![0usize; n + 1]; k + 1];
    best[0][0] = 0.0;
    for j in 1..=k {
        for i in j..=n {
            let lo = i.saturating_sub(limits.words_per_line).max(j - 1);
            for s in lo..i {
                let prev = best[j - 1][s];
                if !prev.is_finite() {
                    continue;
                }
                let line = range.start + s..range.start + i;
                let w = widths.line(line.clone());
                if w > limits.line_px && i - s > 1 {
                    continue;
                }
                let weak = i < n && is_weak(words[line.end - 1].text);
                let cand = prev + w * w + if weak { weak_cost } else { 0.0 };
                if cand < best[j][i] {
                    best[j][i] = cand;
                    from[j][i] = s;
                }
            }
        }
    }
    if !best[k][n].is_finite() {
        return None;
    }
    let mut out = Vec::with_capacity(k);
    let mut i = n;
    for j in (1..=k).rev() {
        let s = from[j][i];
        out.push(range.start + s..range.start + i);
        i = s;
    }
    out.reverse();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words with widths in characters (a space is 1).
    fn setup(texts: &[&'static str]) -> (Vec<BreakWord<'static>>, Vec<f32>, Vec<f32>) {
        let words = texts
            .iter()
            .enumerate()
            .map(|(i, t)| BreakWord {
                text: t,
                start_s: i as f64,
                end_s: i as f64 + 0.5,
                ends_clause: t.ends_with(['.', ',', '?']),
            })
            .collect();
        let w = texts.iter().map(|t| t.chars().count() as f32).collect();
        let gaps = (0..texts.len())
            .map(|i| if i == 0 { 0.0 } else { 1.0 })
            .collect();
        (words, w, gaps)
    }

    fn texts<'a>(words: &[BreakWord<'a>], pages: &[Vec<Range<usize>>]) -> Vec<Vec<String>> {
        pages
            .iter()
            .map(|lines| {
                lines
                    .iter()
                    .map(|l| {
                        words[l.clone()]
                            .iter()
                            .map(|w| w.text)
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .collect()
            })
            .collect()
    }

    /// `t` broken into pages of `lines` × `per_line` words, lines at most `line_px` characters.
    fn paged(t: &[&'static str], lines: usize, per_line: usize, line_px: f32) -> Vec<Vec<String>> {
        let (words, w, gaps) = setup(t);
        let widths = Widths {
            words: &w,
            gaps: &gaps,
        };
        let limits = PageLimits {
            lines,
            words_per_line: per_line,
            line_px,
        };
        texts(&words, &pages(&words, widths, 0..t.len(), limits))
    }

    #[test]
    fn a_run_one_word_too_long_is_split_evenly_not_with_a_stray_word() {
        let t = ["this", "is", "the", "first", "test", "of", "speech."];
        assert_eq!(
            paged(&t, 2, 3, 100.0),
            [vec!["this is", "the first"], vec!["test of speech."]]
        );
    }

    #[test]
    fn balanced_split_prefers_even_lines() {
        let (words, _, _) = setup(&["aaaa", "bbbb", "cccc", "dddd", "eeee"]);
        let widths = Widths {
            words: &[100.0, 100.0, 100.0, 100.0, 300.0],
            gaps: &[0.0, 10.0, 10.0, 10.0, 10.0],
        };
        let limits = PageLimits {
            lines: 2,
            words_per_line: 4,
            line_px: 1000.0,
        };
        let lines = balanced_lines(&words, widths, 0..5, 2, limits).unwrap();
        assert_eq!(lines, vec![0..3, 3..5]);
    }

    #[test]
    fn lines_do_not_end_on_a_weak_word() {
        let t = ["like", "25%", "or", "the", "year", "2021?"];
        assert_eq!(
            paged(&t, 2, 4, 20.0),
            [vec!["like 25%", "or the year 2021?"]]
        );
    }

    #[test]
    fn count_runs_are_exact_and_pause_runs_end_at_silences() {
        let t = ["a", "b", "c", "d", "e"];
        let (mut words, _, _) = setup(&t);
        assert_eq!(
            hard_runs(&words, DisplayWords::Count, 2),
            [0..2, 2..4, 4..5]
        );
        words[3].start_s = words[2].end_s + 1.0;
        assert_eq!(hard_runs(&words, DisplayWords::Pause, 2), [0..3, 3..5]);
        assert!(is_weak("the") && is_weak("I") && is_weak("Of") && is_weak("y"));
        assert!(!is_weak("year") && !is_weak("25%") && !is_weak("is") && !is_weak("日"));
        assert!(!is_weak("日本"));
    }
}
