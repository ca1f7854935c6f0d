//! Timing a text the caller already has: a script, or the cues of a subtitle file.
//!
//! Every given word is first placed roughly, then the forced aligner (English) places it
//! exactly. A plain text is placed by matching its words to whisper's own transcript of the
//! audio (an edit-distance alignment in a band around the diagonal, so an hour of text costs
//! little): matched words take whisper's times, the words between two matches share the time
//! between them by length. A subtitle file's words are matched the same way, each heard word
//! kept only near its cue; the rest share their cue's time by length.

use caption_core::{Cue, SubtitleError, SubtitleFormat, Word, parse_cues, spread_by_length};

use crate::refine::MIN_WORD_S;
use crate::speech::{Region, round_ms};

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

/// Where the words of a text may lie when a run of them has no heard word on one side.
struct Bounds<'a> {
    /// Where the first words start when they come before any heard word (`None`: about
    /// [`UNANCHORED_WORD_S`] a word before the first heard word).
    lead_s: Option<f64>,
    /// Where the last words end when they come after every heard word (`None`: about
    /// [`UNANCHORED_WORD_S`] a word after the last).
    tail_s: Option<f64>,
    /// No word starts before this: where the words before the text end.
    floor_s: f64,
    /// The end of the audio.
    total_s: f64,
    /// Where the audio has sound, in time order.
    sound: &'a [Region],
    /// Whether the words are sung: a run of words whisper did not hear is then laid on as
    /// many of the islands of sound in its span as it has words, the longest
    /// ([`longest_islands`]). A sung word is held on its note, and lines are apart by rests: a
    /// song's line's last word, not heard, had been spread over the 7 s of music between its
    /// line and the next, whose first word's onset made a last island. Spoken words span the
    /// short pauses inside them (a stop's closure), and keep the whole span.
    sung: bool,
}

/// A pause at least this long inside a heard word may be where a word whisper did not hear
/// begins or ends (see [`place_on_anchors`]); stop closures are shorter.
const PAUSE_IN_WORD_S: f64 = 0.1;

/// The `sound` regions reaching at least [`MIN_WORD_S`] into `[from_s, to_s]` (less is the
/// end of the word beside it).
fn reaching(sound: &[Region], from_s: f64, to_s: f64) -> impl Iterator<Item = &Region> {
    let first = sound.partition_point(|r| r.end_s <= from_s);
    sound[first..]
        .iter()
        .take_while(move |r| r.start_s < to_s)
        .filter(move |r| r.end_s.min(to_s) - r.start_s.max(from_s) >= MIN_WORD_S)
}

/// The sound of `[from_s, to_s]` in islands: stretches of the sound regions reaching into
/// it ([`reaching`]), apart by pauses of at least [`PAUSE_IN_WORD_S`].
fn islands(sound: &[Region], from_s: f64, to_s: f64) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for region in reaching(sound, from_s, to_s) {
        let (start_s, end_s) = (region.start_s.max(from_s), region.end_s.min(to_s));
        match out.last_mut() {
            Some(last) if start_s - last.1 < PAUSE_IN_WORD_S => last.1 = end_s,
            _ => out.push((start_s, end_s)),
        }
    }
    out
}

/// `[from_s, to_s]` without the silence at its ends: from its first island of sound to its
/// last ([`islands`]), or `None` when it holds no sound. Words that were not heard as such
/// are where the sound is, not in the silence around them; in continuous speech the sound
/// covers the span, and it stays whole.
fn on_sound(islands: &[(f64, f64)]) -> Option<(f64, f64)> {
    Some((islands.first()?.0, islands.last()?.1))
}

/// The longest pause between the islands of sound of `[from_s, to_s]` (at least
/// [`PAUSE_IN_WORD_S`], as islands are apart).
fn longest_pause(sound: &[Region], from_s: f64, to_s: f64) -> Option<(f64, f64)> {
    let islands = islands(sound, from_s, to_s);
    let pauses = islands.windows(2).map(|pair| (pair[0].1, pair[1].0));
    pauses.reduce(|longest, pause| {
        if pause.1 - pause.0 > longest.1 - longest.0 {
            pause
        } else {
            longest
        }
    })
}

fn pause_s(pause: Option<(f64, f64)>) -> f64 {
    pause.map_or(0.0, |(from_s, to_s)| to_s - from_s)
}

/// Runs of more words than this are not laid on islands (the search is cubic).
const MAX_ISLAND_WORDS: usize = 64;

/// The words written `run` laid on the sound `islands` in order, each island taking one word
/// or more, and each word only one island: of all such ways, the one whose islands' lengths
/// differ least from their words' (their letters at the run's own pace), each island's
/// words sharing it by length. `None` for fewer than two islands, fewer words than islands,
/// or more than [`MAX_ISLAND_WORDS`]. Words whisper did not hear that pause between them
/// (each word on its own, or a phrase on each side of a breath) are then grouped where their
/// sound is, not spread over the pauses.
fn on_islands(run: &[&str], islands: &[(f64, f64)]) -> Option<Vec<Word>> {
    let (n, k) = (run.len(), islands.len());
    if k < 2 || n < k || n > MAX_ISLAND_WORDS {
        return None;
    }
    let letters: Vec<f64> = run.iter().map(|t| letters(t) as f64).collect();
    let island_s: Vec<f64> = islands.iter().map(|(a, b)| b - a).collect();
    let pace_s = island_s.iter().sum::<f64>() / letters.iter().sum::<f64>();
    let words_s: Vec<f64> = letters.iter().map(|l| l * pace_s).collect();
    let cuts = runs_matching(&words_s, &island_s, |_| 0.0)?;
    let mut out = Vec::with_capacity(n);
    for (j, &(start_s, end_s)) in islands.iter().enumerate() {
        out.extend(spread_by_length(&run[cuts[j]..cuts[j + 1]], start_s, end_s));
    }
    Some(out)
}

/// A word's letters and digits, at least one: its length when nothing better is known.
pub(crate) fn letters(word: &str) -> usize {
    word.chars().filter(|c| c.is_alphanumeric()).count().max(1)
}

/// Cuts `sizes` (in order) into `targets.len()` runs of one item or more, the runs' sums
/// differing least from their targets in all, less the `gain` of beginning a run at each item
/// (item 0 has none): where each run begins, then `sizes.len()`. `None` when there are fewer
/// items than targets, or no target. (Dynamic programming over where each run ends: quadratic
/// in the items, times the targets.)
pub(crate) fn runs_matching(
    sizes: &[f64],
    targets: &[f64],
    gain: impl Fn(usize) -> f64,
) -> Option<Vec<usize>> {
    let (n, k) = (sizes.len(), targets.len());
    if k == 0 || n < k {
        return None;
    }
    let mut prefix = vec![0.0; n + 1];
    for (i, size) in sizes.iter().enumerate() {
        prefix[i + 1] = prefix[i] + size;
    }
    // cost[j][i]: the least mismatch of sizes[..i] cut into the first j runs; from[j][i]:
    // where run j - 1 begins in it.
    let mut cost = vec![vec![f64::INFINITY; n + 1]; k + 1];
    let mut from = vec![vec![0usize; n + 1]; k + 1];
    cost[0][0] = 0.0;
    for j in 1..=k {
        for i in j..=n - (k - j) {
            for p in j - 1..i {
                let mismatch = (prefix[i] - prefix[p] - targets[j - 1]).abs();
                let c = cost[j - 1][p] + mismatch - if p > 0 { gain(p) } else { 0.0 };
                if c < cost[j][i] {
                    cost[j][i] = c;
                    from[j][i] = p;
                }
            }
        }
    }
    let mut cuts = vec![n];
    for j in (1..=k).rev() {
        let last = cuts[cuts.len() - 1];
        cuts.push(from[j][last]);
    }
    cuts.reverse();
    Some(cuts)
}

/// The `words` longest of `islands` (at least one), in time order.
fn longest_islands(mut islands: Vec<(f64, f64)>, words: usize) -> Vec<(f64, f64)> {
    while islands.len() > words.max(1) {
        let shortest = (0..islands.len())
            .min_by(|&a, &b| {
                let length = |k: usize| islands[k].1 - islands[k].0;
                length(a).total_cmp(&length(b))
            })
            .unwrap_or(0);
        islands.remove(shortest);
    }
    islands
}

/// Appends the words written `tokens` to `out`: a word matched to a heard word (an anchor:
/// its index in `tokens` and the heard word, in order) takes the heard word's times, the
/// words between two anchors share the time between them by length, and the words before
/// the first or after the last anchor reach to `bounds`; each such run keeps to the sound of
/// its span ([`on_sound`]). A run whose span holds no sound was spoken in a heard word
/// beside it (whisper gave that word the sound of two): it takes that word's sound on its
/// side of the word's longest pause ([`longest_pause`]). Times never go back.
fn place_on_anchors(
    tokens: &[&str],
    anchors: &[(usize, &Word)],
    bounds: &Bounds,
    out: &mut Vec<Word>,
) {
    let mut next_given = 0;
    let mut previous_end_s: Option<f64> = None;
    let ends = anchors.iter().map(|&(g, w)| (g, Some(w)));
    for (g, anchor) in ends.chain(std::iter::once((tokens.len(), None))) {
        let run = &tokens[next_given..g];
        // Where the next anchor starts when the run took the first part of its sound.
        let mut anchor_from_s: Option<f64> = None;
        if !run.is_empty() {
            let run_s = UNANCHORED_WORD_S * run.len() as f64;
            let from_s = match (previous_end_s, anchor) {
                (Some(from), _) => from,
                (None, Some(next)) => bounds
                    .lead_s
                    .filter(|&lead| lead < next.start)
                    .unwrap_or(next.start - run_s)
                    .max(bounds.floor_s),
                (None, None) => bounds.lead_s.unwrap_or(bounds.floor_s).max(bounds.floor_s),
            };
            let to_s = match anchor {
                Some(next) => next.start,
                None => bounds
                    .tail_s
                    .filter(|&tail| tail > from_s)
                    .unwrap_or(from_s + run_s)
                    .min(bounds.total_s),
            }
            .max(from_s);
            let found = islands(bounds.sound, from_s, to_s);
            let (from_s, to_s) = on_sound(&found).unwrap_or_else(|| {
                let before = previous_end_s
                    .and(out.last())
                    .and_then(|w| longest_pause(bounds.sound, w.start, w.end));
                let after = anchor.and_then(|w| longest_pause(bounds.sound, w.start, w.end));
                match (before, after, anchor, out.last_mut()) {
                    (_, Some((pause_from, pause_to)), Some(next), _)
                        if pause_s(after) >= pause_s(before) =>
                    {
                        anchor_from_s = Some(round_ms(pause_to));
                        (next.start.max(from_s), round_ms(pause_from))
                    }
                    (Some((pause_from, pause_to)), _, _, Some(previous)) => {
                        let end_s = previous.end;
                        previous.end = round_ms(pause_from);
                        (round_ms(pause_to), end_s)
                    }
                    _ => (from_s, to_s),
                }
            });
            // A span borrowed from a neighbour has islands of its own.
            let found = if found.is_empty() {
                islands(bounds.sound, from_s, to_s)
            } else {
                found
            };
            let found = if bounds.sung {
                longest_islands(found, run.len())
            } else {
                found
            };
            match (on_islands(run, &found), &found[..]) {
                (Some(words), _) => out.extend(words),
                (None, &[(start_s, end_s)]) if bounds.sung => {
                    out.extend(spread_by_length(run, start_s, end_s));
                }
                (None, _) => out.extend(spread_by_length(run, from_s, to_s)),
            }
        }
        if let Some(anchor) = anchor {
            let floor_s = out
                .last()
                .map_or(bounds.floor_s, |w| w.end.max(bounds.floor_s));
            let start_s = anchor_from_s.unwrap_or(anchor.start).max(floor_s);
            let end_s = anchor.end.max(start_s);
            out.extend(spread_by_length(&[tokens[g]], start_s, end_s));
            previous_end_s = Some(end_s);
        }
        next_given = g + 1;
    }
}

/// The share of the words of `text` that whisper heard: matched to one of `heard` (whisper's
/// words for the same audio, in time order). `1.0` for a text without words.
pub(crate) fn heard_share(text: &str, heard: &[Word]) -> f64 {
    let given: Vec<String> = text.split_whitespace().map(normalized).collect();
    if given.is_empty() {
        return 1.0;
    }
    let heard_norm: Vec<String> = heard.iter().map(|w| normalized(&w.word)).collect();
    matches(&given, &heard_norm).len() as f64 / given.len() as f64
}

/// Whether `t_s` lies in one of `stretches` (in time order).
fn in_stretches(stretches: &[Region], t_s: f64) -> bool {
    let i = stretches.partition_point(|r| r.end_s < t_s);
    stretches.get(i).is_some_and(|r| r.start_s <= t_s)
}

/// The words of `text`, placed by matching them to `heard` (whisper's words for the same
/// audio, in time order) within `[0, total_s]`, whose `sound` regions and `voiced` stretches
/// (where someone speaks or sings, in order) are given. Words before the first word whisper
/// heard reach back to where the voice begins, and words after the last one reach on to where
/// it ends: whisper missing the last lines of a song had put them all in the two seconds
/// after the last line it heard. Heard words outside the voiced stretches are not used.
pub(crate) fn place_plain(
    text: &str,
    heard: &[Word],
    total_s: f64,
    sound: &[Region],
    voiced: &[Region],
    sung: bool,
) -> Vec<Word> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let given: Vec<String> = tokens.iter().map(|t| normalized(t)).collect();
    // A word whisper heard where nobody speaks or sings (in a song's instrumental break) is no
    // anchor: it put "behind" four seconds early, in the music before its line.
    let heard: Vec<&Word> = heard
        .iter()
        .filter(|w| voiced.is_empty() || in_stretches(voiced, (w.start + w.end) / 2.0))
        .collect();
    let heard_norm: Vec<String> = heard.iter().map(|w| normalized(&w.word)).collect();
    let anchors: Vec<(usize, &Word)> = matches(&given, &heard_norm)
        .into_iter()
        .map(|(g, h)| (g, heard[h]))
        .collect();
    // Nothing matched: the text spans what was heard, or the whole input.
    let (lead_s, tail_s) = match (anchors.is_empty(), heard.first(), heard.last()) {
        (false, _, _) => (
            voiced.first().map(|v| v.start_s),
            voiced.last().map(|v| v.end_s),
        ),
        (true, Some(first), Some(last)) => (Some(first.start), Some(last.end)),
        (true, _, _) => (Some(0.0), Some(total_s)),
    };
    // Over music the sound is everywhere; the words whisper did not hear go where the voice is
    // (one word between two lines of a song had been spread over the eight seconds of music
    // between them).
    let sound_in_voice;
    let sound = if voiced.is_empty() {
        sound
    } else {
        sound_in_voice = intersection(sound, voiced);
        &sound_in_voice[..]
    };
    let bounds = Bounds {
        lead_s,
        tail_s,
        floor_s: 0.0,
        total_s,
        sound,
        sung,
    };
    let mut out = Vec::with_capacity(tokens.len());
    place_on_anchors(&tokens, &anchors, &bounds, &mut out);
    out
}

/// Where both `a` and `b` (each in time order, disjoint) have a region.
fn intersection(a: &[Region], b: &[Region]) -> Vec<Region> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        let start_s = a[i].start_s.max(b[j].start_s);
        let end_s = a[i].end_s.min(b[j].end_s);
        if end_s > start_s {
            out.push(Region { start_s, end_s });
        }
        if a[i].end_s < b[j].end_s {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// How far outside its cue a heard word may lie and still be taken for a word of the cue,
/// seconds: subtitle files are often timed a little early or late.
const CUE_SLACK_S: f64 = 1.0;

/// The words of subtitle `cues`, placed by matching them to `heard` (whisper's words for the
/// same audio, in time order) within `[0, total_s]`, whose `sound` regions are given. A cue's
/// time says little about where each of its words is: a word heard within [`CUE_SLACK_S`] of
/// its cue takes the heard word's times, the words between share the time between by length,
/// and the cue's first and last words reach to its start and end. A cue none of whose words
/// were heard spreads its words over the sound of its time.
pub(crate) fn place_cues(
    cues: &[Cue],
    heard: &[Word],
    total_s: f64,
    sound: &[Region],
) -> Vec<Word> {
    let rough = caption_core::cues_to_words(cues);
    // Which cue each word is in (each cue's words are read as in `cues_to_words`).
    let mut cue_of = Vec::with_capacity(rough.len());
    for (k, cue) in cues.iter().enumerate() {
        let count = caption_core::cues_to_words(std::slice::from_ref(cue)).len();
        cue_of.extend(std::iter::repeat_n(k, count));
    }
    if cue_of.len() != rough.len() {
        return rough;
    }
    let given: Vec<String> = rough.iter().map(|w| normalized(&w.word)).collect();
    let heard_norm: Vec<String> = heard.iter().map(|w| normalized(&w.word)).collect();
    let mut pairs = matches(&given, &heard_norm).into_iter().peekable();

    let mut out = Vec::with_capacity(rough.len());
    let mut first = 0;
    while first < rough.len() {
        let cue = cue_of[first];
        let last = first + cue_of[first..].iter().take_while(|&&k| k == cue).count();
        let words = &rough[first..last];
        let (from_s, to_s) = (words[0].start, words[words.len() - 1].end);
        let mut anchors = Vec::new();
        while let Some(&(g, h)) = pairs.peek().filter(|&&(g, _)| g < last) {
            let near = heard[h].end >= from_s - CUE_SLACK_S && heard[h].start <= to_s + CUE_SLACK_S;
            if near {
                anchors.push((g - first, &heard[h]));
            }
            pairs.next();
        }
        let tokens: Vec<&str> = words.iter().map(|w| w.punctuated_word.as_str()).collect();
        let bounds = Bounds {
            lead_s: Some(from_s),
            tail_s: Some(to_s),
            floor_s: out.last().map_or(0.0, |w: &Word| w.end),
            total_s,
            sound,
            sung: false,
        };
        place_on_anchors(&tokens, &anchors, &bounds, &mut out);
        first = last;
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn the_sound_in_the_voice_is_where_both_are() {
        let sound = [region(0.0, 2.0), region(3.0, 9.0)];
        let voice = [region(1.0, 4.0), region(6.0, 7.0), region(8.5, 12.0)];
        assert_eq!(
            intersection(&sound, &voice),
            vec![
                region(1.0, 2.0),
                region(3.0, 4.0),
                region(6.0, 7.0),
                region(8.5, 9.0)
            ]
        );
    }

    #[test]
    fn words_after_the_last_heard_reach_on_to_where_the_voice_ends() {
        // Whisper heard the first two of six words; the voice goes on to 9 s.
        let heard = [Word::new(1.0, 1.4, "sail"), Word::new(1.5, 2.0, "away")];
        let sound = [region(1.0, 9.0)];
        let voiced = [region(0.9, 9.0)];
        let placed = place_plain(
            "sail away I'm coming home now",
            &heard,
            10.0,
            &sound,
            &voiced,
            false,
        );
        assert_eq!(placed.len(), 6);
        assert!(placed[5].end >= 8.9, "{placed:?}");
        // Without a voice known, about a third of a second a word, as before.
        let placed = place_plain(
            "sail away I'm coming home now",
            &heard,
            10.0,
            &sound,
            &[],
            false,
        );
        assert!(placed[5].end < 4.0, "{placed:?}");
    }

    #[test]
    fn a_sung_word_not_heard_keeps_to_one_island_of_voice() {
        // "lay" ends a line held on its note until 16.2 s; music until the next line, whose
        // first word whisper heard at 23.53 s, its onset's sound from 23.48 s.
        let heard = heard(&[("we", 13.55, 14.48), ("the", 23.53, 23.57)]);
        let sound = [region(13.0, 16.24), region(23.48, 28.0)];
        let sung = place_plain("we lay the", &heard, 30.0, &sound, &sound, true);
        assert_eq!((sung[1].start, sung[1].end), (14.48, 16.24), "{sung:?}");
        // Spoken, a word spans the pauses inside its span.
        let spoken = place_plain("we lay the", &heard, 30.0, &sound, &sound, false);
        assert_eq!(
            (spoken[1].start, spoken[1].end),
            (14.48, 23.53),
            "{spoken:?}"
        );
    }

    pub(crate) fn region(start_s: f64, end_s: f64) -> Region {
        Region { start_s, end_s }
    }

    pub(crate) fn heard(words: &[(&str, f64, f64)]) -> Vec<Word> {
        words.iter().map(|&(w, s, e)| Word::new(s, e, w)).collect()
    }

    #[test]
    fn matched_words_take_heard_times_and_the_rest_share_the_gaps() {
        let heard = heard(&[("hello", 1.0, 1.4), ("word", 1.5, 1.9), ("again", 3.0, 3.5)]);
        let placed = place_plain("Hello, world; said again!", &heard, 5.0, &[], &[], false);
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
    fn cue_words_take_the_times_heard_near_their_cue() {
        let cues = [
            Cue::new(1.0, 4.0, "We debate, they agree."),
            Cue::new(5.0, 6.0, "Far away"),
        ];
        // "they" was heard as "a"; "far" was heard, but well after its cue.
        let heard = heard(&[
            ("we", 1.0, 1.2),
            ("debate", 1.5, 2.0),
            ("a", 2.4, 2.6),
            ("agree", 3.2, 3.7),
            ("far", 8.0, 8.3),
        ]);
        let placed = place_cues(&cues, &heard, 10.0, &[]);
        let times: Vec<(&str, f64, f64)> = placed
            .iter()
            .map(|w| (w.punctuated_word.as_str(), w.start, w.end))
            .collect();
        assert_eq!(times[..2], [("We", 1.0, 1.2), ("debate,", 1.5, 2.0)]);
        // The word heard otherwise fills the time between its heard neighbours.
        assert_eq!(times[2..4], [("they", 2.0, 3.2), ("agree.", 3.2, 3.7)]);
        // The second cue's words share its own time.
        assert_eq!(times[4].0, "Far");
        assert_eq!((times[4].1, times[5].2), (5.0, 6.0));
        assert_eq!(placed[3].word, "agree");
    }

    #[test]
    fn cue_words_never_go_back_in_time() {
        // Two overlapping cues, and a cue whose start is late for the word heard in it.
        let cues = [
            Cue::new(0.0, 2.0, "one two"),
            Cue::new(1.5, 3.0, "three four five"),
        ];
        let heard = heard(&[("one", 0.1, 0.5), ("two", 0.9, 1.8), ("four", 1.6, 2.2)]);
        let placed = place_cues(&cues, &heard, 3.0, &[]);
        assert_eq!(placed.len(), 5);
        assert!(
            placed.windows(2).all(|w| w[0].end <= w[1].start + 1e-9),
            "{placed:?}"
        );
        assert!(placed.iter().all(|w| w.start <= w.end && w.end <= 3.0));
        // "four" keeps its heard end; "three" squeezes between "two" and it.
        assert_eq!((placed[2].start, placed[3].end), (1.8, 2.2));
        assert_eq!((placed[4].start, placed[4].end), (2.2, 3.0));
    }

    #[test]
    fn words_not_heard_keep_to_the_sound_between_their_neighbours() {
        // "debate" ends a millisecond into the silence after it; "they" was not heard; its
        // sound lies alone in the gap, cut in two at a closure.
        let sound = [
            region(2.15, 2.582),
            region(2.99, 3.1),
            region(3.12, 3.3),
            region(3.5, 3.92),
        ];
        let heard = heard(&[("debate", 2.15, 2.581), ("agreed", 3.5, 3.92)]);
        let placed = place_plain("debate they agreed", &heard, 5.0, &sound, &[], false);
        assert_eq!((placed[1].start, placed[1].end), (2.99, 3.3));
        // Continuous speech: the sound runs on past the gap, which the word keeps, even where
        // the sound pauses inside the word.
        let placed = place_plain(
            "debate they agreed",
            &heard,
            5.0,
            &[region(2.1, 3.95)],
            &[],
            false,
        );
        assert_eq!((placed[1].start, placed[1].end), (2.581, 3.5));
        let closure = [region(2.1, 2.8), region(2.9, 3.95)];
        let placed = place_plain("debate they agreed", &heard, 5.0, &closure, &[], false);
        assert_eq!((placed[1].start, placed[1].end), (2.581, 3.5));
    }

    #[test]
    fn a_word_not_heard_in_silence_takes_its_sound_from_the_word_beside_it() {
        // Whisper gave "agreed" the sound of "they agreed", and "they" got the silence.
        let sound = [
            region(2.153, 2.494),
            region(2.535, 2.581),
            region(2.99, 3.303),
            region(3.503, 3.925),
        ];
        let in_the_next = heard(&[("debate", 2.153, 2.581), ("agreed", 2.99, 3.925)]);
        let placed = place_plain("debate they agreed", &in_the_next, 5.0, &sound, &[], false);
        let times: Vec<(f64, f64)> = placed.iter().map(|w| (w.start, w.end)).collect();
        // "debate" keeps its own (a 41 ms closure is no pause between words).
        assert_eq!(times, [(2.153, 2.581), (2.99, 3.303), (3.503, 3.925)]);
        // The same with the sound of two in the word before.
        let in_the_previous = heard(&[("debate", 2.153, 3.303), ("agreed", 3.503, 3.925)]);
        let sound = [
            region(2.153, 2.581),
            region(2.99, 3.303),
            region(3.503, 3.925),
        ];
        let placed = place_plain(
            "debate they agreed",
            &in_the_previous,
            5.0,
            &sound,
            &[],
            false,
        );
        let times: Vec<(f64, f64)> = placed.iter().map(|w| (w.start, w.end)).collect();
        assert_eq!(times, [(2.153, 2.581), (2.99, 3.303), (3.503, 3.925)]);
    }

    #[test]
    fn words_not_heard_are_laid_on_the_islands_of_sound_between_their_neighbours() {
        // Whisper heard "a", then "long-dimate a breed two-fund" for "long debate they agreed
        // to fund", then "a": five islands of sound for six words.
        let sound = [
            region(1.323, 1.557),
            region(1.735, 2.11),
            region(2.153, 2.581),
            region(2.99, 3.303),
            region(3.503, 3.925),
            region(4.5, 4.767),
            region(5.064, 5.429),
            region(5.771, 6.005),
        ];
        let heard = heard(&[("a", 1.323, 1.557), ("a", 5.771, 6.005)]);
        let text = "a long debate they agreed to fund a";
        let placed = place_plain(text, &heard, 7.0, &sound, &[], false);
        let times: Vec<(&str, f64, f64)> = placed
            .iter()
            .map(|w| (w.word.as_str(), w.start, w.end))
            .collect();
        assert_eq!(times[1].1, 1.735);
        assert_eq!(times[2].2, 2.581);
        assert_eq!(
            times[3..7],
            [
                ("they", 2.99, 3.303),
                ("agreed", 3.503, 3.925),
                ("to", 4.5, 4.767),
                ("fund", 5.064, 5.429)
            ]
        );
        // Fewer words than islands: spread over all of the sound.
        let placed = place_plain("a long debate a", &heard, 7.0, &sound, &[], false);
        assert_eq!((placed[1].start, placed[2].end), (1.735, 5.429));
    }

    #[test]
    fn nothing_heard_spreads_over_the_whole_input() {
        let placed = place_plain("one two", &[], 2.0, &[], &[], false);
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
        let placed = place_plain(&text.join(" "), &heard, 5000.0, &[], &[], false);
        assert_eq!(placed.len(), 5000);
        assert_eq!((placed[4001].start, placed[4001].end), (4001.0, 4001.5));
        // Word 4000 was not heard: it fills the gap between its heard neighbours.
        assert_eq!((placed[4000].start, placed[4000].end), (3999.5, 4001.0));
    }
}
