//! Where pages and lines break. A page never runs across a sentence end or a pause of
//! [`PAUSE_S`] or more, whatever `displayWords` says; `displayWords` adds its own breaks (a
//! clause end, a word count). Between the breaks, words are spread over as few pages and lines
//! as fit, as evenly as possible, preferring to break where the speaker does (after a comma, at
//! a breath), never leaving one word alone on a page when another split exists, and never
//! ending a line or page on a word that leans on the next.

use std::ops::Range;

use caption_core::{DisplayWords, is_unspaced_char};

/// A silence between two words this long or longer always ends a page.
pub const PAUSE_S: f64 = 0.3;

/// A shorter silence still makes a good place for a break (a breath).
const BREATH_S: f64 = 0.15;

/// Cost of ending a line or page on a weak word (see [`is_weak`]), in units of the squared
/// line limit: larger than any gain in evenness, so such a break is taken only when every other
/// split is impossible.
const WEAK_END_COST: f32 = 4.0;

/// Cost of breaking a page inside a phrase (not after a clause end or at a breath), in units of
/// the squared page capacity: of the splits into the fewest pages, one at a comma is worth
/// pages up to about half a page apart in length.
const PAGE_MID_PHRASE_COST: f32 = 0.5;

/// Cost of breaking a line inside a phrase, in units of the squared mean line width: a line
/// break at a comma is taken when it leaves the lines no more than about a sixth of the
/// page's text width from even (two lines of 12 characters may become 9 and 15).
const LINE_MID_PHRASE_COST: f32 = 0.25;

/// What the breaker needs of each word.
#[derive(Debug, Clone)]
pub(crate) struct BreakWord<'a> {
    /// The text as it is drawn.
    pub text: &'a str,
    pub start_s: f64,
    pub end_s: f64,
    /// The word ends a sentence or a clause.
    pub ends_clause: bool,
    /// The word ends a sentence.
    pub ends_sentence: bool,
}

/// The silence after word `i`, seconds (`None` after the last word).
fn gap_after(words: &[BreakWord<'_>], i: usize) -> Option<f64> {
    words.get(i + 1).map(|next| next.start_s - words[i].end_s)
}

/// Whether a page must end after word `i`: it ends a sentence, or a pause of [`PAUSE_S`] or
/// more follows it. (A hair below the threshold counts: times are sums of floats.)
pub(crate) fn must_break_after(words: &[BreakWord<'_>], i: usize) -> bool {
    words[i].ends_sentence || gap_after(words, i).is_some_and(|g| g >= PAUSE_S - 1e-9)
}

/// Whether breaking after word `i` follows the speech: after a clause or sentence end, or
/// before a breath.
fn is_phrase_end(words: &[BreakWord<'_>], i: usize) -> bool {
    words[i].ends_clause || gap_after(words, i).is_some_and(|g| g >= BREATH_S)
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

/// Cuts `range` after every word `cut_after` accepts (and at its end).
fn cut(range: Range<usize>, mut cut_after: impl FnMut(usize) -> bool) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = range.start;
    for i in range.clone() {
        if cut_after(i) || i + 1 == range.end {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    out
}

/// A sentence cut into runs of `capacity` words but one, which is shorter: the last, unless
/// putting it earlier keeps a run from ending on a weak word ("build a" / "rocket."). One word
/// left over takes a second from the run before it, when runs hold three words or more.
fn count_runs(
    words: &[BreakWord<'_>],
    sentence: Range<usize>,
    capacity: usize,
) -> Vec<Range<usize>> {
    let (full, rest) = (sentence.len() / capacity, sentence.len() % capacity);
    let runs_of = |sizes: &[usize]| -> Vec<Range<usize>> {
        let mut start = sentence.start;
        sizes
            .iter()
            .map(|&len| {
                let run = start..start + len;
                start += len;
                run
            })
            .collect()
    };
    let mut sizes = vec![capacity; full];
    if rest == 0 || full == 0 {
        sizes.extend((rest > 0).then_some(rest));
        return runs_of(&sizes);
    }
    if rest == 1 && capacity >= 3 {
        sizes[full - 1] -= 1;
        sizes.push(2);
        return runs_of(&sizes);
    }
    let weak_ends = |runs: &Vec<Range<usize>>| {
        runs[..runs.len() - 1]
            .iter()
            .filter(|r| is_weak(words[r.end - 1].text))
            .count()
    };
    // The latest place with the fewest weak ends.
    (0..=full)
        .rev()
        .map(|k| {
            let mut sizes = sizes.clone();
            sizes.insert(k, rest);
            runs_of(&sizes)
        })
        .min_by_key(weak_ends)
        .unwrap_or_default()
}

/// Runs of words the pages are made from. Every rule cuts after a sentence end and before a
/// pause of [`PAUSE_S`] or more. `PUNCTUATION` also cuts after each clause end, except that a
/// clause of one word ("First,") joins the clause after it (or, last in its sentence, the one
/// before). `COUNT` cuts each sentence into runs of `capacity` words, the last one shorter;
/// one word left over takes a second from the run before it, when runs hold three words or more.
pub(crate) fn hard_runs(
    words: &[BreakWord<'_>],
    rule: DisplayWords,
    capacity: usize,
) -> Vec<Range<usize>> {
    let capacity = capacity.max(1);
    let sentences = cut(0..words.len(), |i| must_break_after(words, i));
    let mut runs = Vec::new();
    for sentence in sentences {
        match rule {
            DisplayWords::Pause => runs.push(sentence),
            DisplayWords::Punctuation => {
                let mut clauses = cut(sentence, |i| words[i].ends_clause);
                let mut k = 0;
                while clauses.len() > 1 && k < clauses.len() {
                    if clauses[k].len() == 1 {
                        let into = if k + 1 < clauses.len() { k + 1 } else { k - 1 };
                        let (a, b) = (clauses[k.min(into)].start, clauses[k.max(into)].end);
                        clauses[k.min(into)] = a..b;
                        clauses.remove(k.max(into));
                    } else {
                        k += 1;
                    }
                }
                runs.extend(clauses);
            }
            DisplayWords::Count => runs.extend(count_runs(words, sentence, capacity)),
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

/// Splits `run` into pages of lines that fit `limits`: no page of one word where another split
/// avoids it; then the fewest pages; then the words spread evenly over them (the sum of squared
/// page lengths is smallest), breaking at phrase ends where that costs little evenness and never
/// ending a page on a weak word when another split exists; then each page's lines balanced by
/// [`balanced_lines`].
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
    let unit = (capacity * capacity) as f32;
    // best[i]: (pages of one word, pages, cost) of the first i words of the run; from[i]: where
    // its last page starts.
    let mut best = vec![(usize::MAX, usize::MAX, f32::INFINITY); n + 1];
    let mut from = vec![0usize; n + 1];
    best[0] = (0, 0, 0.0);
    for end in 1..=n {
        for start in end.saturating_sub(capacity)..end {
            let (singles, pages, cost) = best[start];
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
            let len = end - start;
            let last = range.end - 1;
            let mut extra = 0.0;
            if end < n && is_weak(words[last].text) {
                extra += WEAK_END_COST * unit;
            }
            if end < n && !is_phrase_end(words, last) {
                extra += PAGE_MID_PHRASE_COST * unit;
            }
            let candidate = (
                singles + usize::from(len == 1 && n > 1),
                pages + 1,
                cost + (len * len) as f32 + extra,
            );
            let current = best[end];
            if (candidate.0, candidate.1) < (current.0, current.1)
                // Of equally good splits, the one with the fuller first pages (read on).
                || ((candidate.0, candidate.1) == (current.0, current.1)
                    && candidate.2 <= current.2 + 1e-3)
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
/// squared widths), breaking at phrase ends where that costs little evenness, and not ending a
/// line on a weak word where it can avoid it. `None` when no split into `k` lines fits.
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
    let mean_px = widths.line(range.clone()) / k as f32;
    let phrase_cost = LINE_MID_PHRASE_COST * mean_px * mean_px;
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
                let last = line.end - 1;
                let mut extra = 0.0;
                if i < n && is_weak(words[last].text) {
                    extra += weak_cost;
                }
                if i < n && !is_phrase_end(words, last) {
                    extra += phrase_cost;
                }
                let cand = prev + w * w + extra;
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

    /// Words with widths in characters (a space is 1), spoken 0.4 s apart with 0.05 s between
    /// them.
    fn setup(texts: &[&'static str]) -> (Vec<BreakWord<'static>>, Vec<f32>, Vec<f32>) {
        let words = texts
            .iter()
            .enumerate()
            .map(|(i, t)| BreakWord {
                text: t,
                start_s: i as f64 * 0.4,
                end_s: i as f64 * 0.4 + 0.35,
                ends_clause: t.ends_with(['.', ',', '?', '!']),
                ends_sentence: t.ends_with(['.', '?', '!']),
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

    /// The pages of `words` under `rule`, `lines` × `per_line` words, lines at most `line_px`
    /// characters.
    fn paged_words(
        words: &[BreakWord<'static>],
        w: &[f32],
        gaps: &[f32],
        rule: DisplayWords,
        (lines, per_line, line_px): (usize, usize, f32),
    ) -> Vec<Vec<String>> {
        let widths = Widths { words: w, gaps };
        let limits = PageLimits {
            lines,
            words_per_line: per_line,
            line_px,
        };
        let all: Vec<Vec<Range<usize>>> = hard_runs(words, rule, lines * per_line)
            .into_iter()
            .flat_map(|run| pages(words, widths, run, limits))
            .collect();
        texts(words, &all)
    }

    /// `t` broken into pages under `rule`.
    fn paged(
        t: &[&'static str],
        rule: DisplayWords,
        limits: (usize, usize, f32),
    ) -> Vec<Vec<String>> {
        let (words, w, gaps) = setup(t);
        paged_words(&words, &w, &gaps, rule, limits)
    }

    #[test]
    fn a_run_one_word_too_long_is_split_evenly_not_with_a_stray_word() {
        let t = ["this", "is", "the", "first", "test", "of", "speech."];
        assert_eq!(
            paged(&t, DisplayWords::Pause, (2, 3, 100.0)),
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
            paged(&t, DisplayWords::Punctuation, (2, 4, 20.0)),
            [vec!["like 25%", "or the year 2021?"]]
        );
    }

    #[test]
    fn no_page_runs_across_a_sentence_end_or_a_pause_under_any_rule() {
        let t = [
            "and", "welcome", "back.", "To", "the", "channel", "today", "we", "go",
        ];
        let (mut words, w, gaps) = setup(&t);
        // A 0.3 s pause after "today".
        for later in &mut words[7..] {
            later.start_s += 0.3;
            later.end_s += 0.3;
        }
        for rule in DisplayWords::ALL.iter().copied() {
            assert_eq!(
                paged_words(&words, &w, &gaps, rule, (2, 4, 100.0)),
                [
                    vec!["and welcome back."],
                    vec!["To the channel today"],
                    vec!["we go"]
                ],
                "{rule:?}"
            );
        }
    }

    #[test]
    fn pages_and_lines_break_at_commas() {
        // Five words where pages hold four: two pages either way, split at the comma.
        let t = ["so", "yes,", "this", "really", "works."];
        assert_eq!(
            paged(&t, DisplayWords::Pause, (1, 4, 100.0)),
            [vec!["so yes,"], vec!["this really works."]]
        );
        // Twelve words, pages of eight: two pages, split at a comma rather than evenly, each
        // with its lines split at a comma.
        let t = [
            "first,", "keep", "it", "short,", "because", "people", "scroll", "fast,", "and",
            "third,", "never", "stop.",
        ];
        assert_eq!(
            paged(&t, DisplayWords::Pause, (2, 4, 100.0)),
            [
                vec!["first, keep it short,", "because people scroll fast,"],
                vec!["and third, never stop."]
            ]
        );
        // A breath is a phrase end too.
        let t = ["we", "went", "up", "the", "hill", "and", "then", "home."];
        let (mut words, w, gaps) = setup(&t);
        for later in &mut words[3..] {
            later.start_s += 0.2;
            later.end_s += 0.2;
        }
        assert_eq!(
            paged_words(&words, &w, &gaps, DisplayWords::Pause, (1, 5, 100.0)),
            [vec!["we went up"], vec!["the hill and then home."]]
        );
    }

    #[test]
    fn a_clause_of_one_word_joins_the_next() {
        let t = ["First,", "keep", "your", "captions", "short."];
        assert_eq!(
            paged(&t, DisplayWords::Punctuation, (2, 3, 100.0)),
            [vec!["First, keep", "your captions short."]]
        );
        // A one-word clause last in its sentence joins the one before.
        let t = ["Sounds", "easy,", "right?"];
        assert_eq!(
            paged(&t, DisplayWords::Punctuation, (2, 3, 100.0)),
            [vec!["Sounds easy, right?"]]
        );
        // Under PUNCTUATION, other clauses still end their pages.
        let t = ["Hey", "everyone,", "and", "welcome", "back."];
        assert_eq!(
            paged(&t, DisplayWords::Punctuation, (2, 4, 100.0)),
            [vec!["Hey everyone,"], vec!["and welcome back."]]
        );
        // A sentence of one word is a page of one word.
        let t = ["Yes.", "It", "works."];
        assert_eq!(
            paged(&t, DisplayWords::Punctuation, (2, 4, 100.0)),
            [vec!["Yes."], vec!["It works."]]
        );
    }

    #[test]
    fn no_stray_word_between_full_pages() {
        // Nine words, pages of four: 4 + 3 + 2 (or so), never 4 + 4 + 1.
        let t = ["a1", "b2", "c3", "d4", "e5", "f6", "g7", "h8", "i9."];
        let pages = paged(&t, DisplayWords::Pause, (1, 4, 100.0));
        assert!(pages.iter().all(|p| p[0].contains(' ')), "{pages:?}");
        let counted = paged(&t, DisplayWords::Count, (1, 4, 100.0));
        assert_eq!(
            counted,
            [vec!["a1 b2 c3 d4"], vec!["e5 f6 g7"], vec!["h8 i9."]]
        );
    }

    #[test]
    fn count_runs_are_exact_within_sentences() {
        let t = ["a", "b", "c", "d", "e."];
        let (words, _, _) = setup(&t);
        assert_eq!(
            hard_runs(&words, DisplayWords::Count, 2),
            [0..2, 2..4, 4..5]
        );
        let t = ["a", "b", "c.", "d", "e"];
        let (words, _, _) = setup(&t);
        assert_eq!(
            hard_runs(&words, DisplayWords::Count, 2),
            [0..2, 2..3, 3..5]
        );
        // The short run goes where no run ends on a weak word.
        let t = ["today", "we", "build", "a", "rocket."];
        let (words, _, _) = setup(&t);
        assert_eq!(
            hard_runs(&words, DisplayWords::Count, 2),
            [0..2, 2..3, 3..5]
        );
        assert!(is_weak("the") && is_weak("I") && is_weak("Of") && is_weak("y"));
        assert!(!is_weak("year") && !is_weak("25%") && !is_weak("is") && !is_weak("日"));
        assert!(!is_weak("日本"));
    }
}
