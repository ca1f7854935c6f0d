//! Alignment groups: the words of a piece cut at pauses, each aligned on its own audio.
//!
//! The groups are cut where whisper's times pause (at least [`GROUP_PAUSE_S`]); each group is
//! aligned with a little of the silence around it, a group whose alignment fails is aligned
//! again in halves, and each cut is then checked by aligning the words around it together (a
//! cut one word off moves).

use caption_align::{LanguageAligner, Span};
use caption_core::Word;

use crate::cores::Cores;
use crate::speech::{SAMPLE_RATE_HZ, round_ms};

mod room;

use room::{UNSURE_BELOW, align_leaving_room};

/// An aligner's call: audio and written words in, one span per word out
/// ([`LanguageAligner::align`]; tests give scripted ones).
trait Align: FnMut(&[f32], &[&str]) -> caption_align::Result<Vec<Span>> {}
impl<F: FnMut(&[f32], &[&str]) -> caption_align::Result<Vec<Span>>> Align for F {}

/// Aligned words at least this far apart have a pause between them; closer, they touch.
pub(crate) const APART_S: f64 = 0.02;

/// A silence at least this long between two words separates alignment groups.
const GROUP_PAUSE_S: f64 = 0.25;
/// Audio kept before a group's first and after its last word (at most half the pause).
const GROUP_MARGIN_S: f64 = 0.25;
/// Groups are not allowed to grow beyond this (the aligner's search is linear in length, but
/// failures cost the whole group).
const MAX_GROUP_S: f64 = 20.0;

/// A group whose alignment fails is cut in two and each half aligned again, down to halves of
/// this many words.
const MIN_SPLIT_WORDS: usize = 2;
/// How many times a failed group is halved at most (a 20-second group into pieces of about
/// two and a half seconds).
const MAX_SPLIT_DEPTH: u32 = 3;

/// Aligns every group and writes the times into `words`; returns how many groups (or pieces
/// of a group cut after a failure) failed and kept their old times. The indices of words in
/// pieces too short for their phones are added to `unfit`, in order. Each cut between two
/// groups is then checked (see [`moved_cut`]); a cut the aligner puts elsewhere moves, and the
/// two groups are aligned again. A cut at a line break of a given text (`line_starts`: for each
/// word, whether it begins a line; empty when there are none) is not checked: a song's line
/// held its last word ("road", 2 s on its note) up to the rest, and aligned with the next
/// line's first words that note was taken for silence and the word moved over the rest, 2.75 s
/// late; another's last word went to the next line's voice, 5 s late. With
/// `threads` of 2 or more, words spanning at least [`TWO_HALVES_MIN_S`] are aligned in two
/// halves at once (see [`align_in_halves`]).
pub(crate) fn align_groups(
    aligner: &LanguageAligner<'_>,
    samples: &[f32],
    words: &mut [Word],
    line_starts: &[bool],
    unfit: &mut Vec<usize>,
    threads: usize,
) -> usize {
    let mut ranges = groups(words);
    // Whisper's times, before the aligner's.
    let heard: Vec<(f64, f64)> = words.iter().map(|w| (w.start, w.end)).collect();
    let mut session = match aligner.session() {
        Ok(session) => session,
        Err(error) => {
            tracing::warn!(%error, "no aligner decoder: words keep their DTW times");
            return ranges.len();
        }
    };
    // One decoder through the groups in order (through each half's, with two halves): its
    // noise estimate carries from one group to the next, which short groups (a word between
    // two pauses) need; a decoder per group or a fresh estimate per group each moved the
    // gapped bench from 15/18 clips on target to 12/18.
    let mut align = |audio: &[f32], texts: &[&str]| session.align(audio, texts);
    let mut found = Found::new(words.len());
    let halves = (threads >= 2).then(|| halfway(words, &ranges)).flatten();
    // The pass takes its threads from the budget whisper's runs take theirs from: a thread
    // beside a run that holds every core would keep one of its spinning threads waiting.
    let cores = Cores::take(if halves.is_some() { 2 } else { 1 });
    let mut failed: Vec<usize> = match halves {
        Some(half) if cores.count() >= 2 => align_in_halves(
            aligner, &mut align, samples, words, &ranges, half, &mut found,
        ),
        _ => None,
    }
    .unwrap_or_else(|| align_all(&mut align, samples, words, &ranges, &mut found));
    // A failed group is aligned again with the aligned group after it, then with the one
    // before it: whisper's rough times can put a word's sound in either neighbour's audio.
    for i in 1..ranges.len() {
        if failed[i - 1] > 0
            && failed[i] == 0
            && together(&mut align, samples, words, &ranges, i - 1, &mut found)
        {
            failed[i - 1] = 0;
        }
    }
    for i in 1..ranges.len() {
        if failed[i] > 0
            && failed[i - 1] == 0
            && together(&mut align, samples, words, &ranges, i - 1, &mut found)
        {
            failed[i] = 0;
        }
    }
    for i in 1..ranges.len() {
        let both = ranges[i - 1].start..ranges[i].end;
        let doubtful = cut_in_doubt(
            words,
            &heard,
            &found.squeezed,
            both.clone(),
            ranges[i].start,
        );
        // A line break of a given text is where the voice paused: the joint alignment of the
        // words around it is not asked where the pause is.
        let at_line_break = line_starts.get(ranges[i].start) == Some(&true);
        if failed[i - 1] > 0 || failed[i] > 0 || !doubtful || at_line_break {
            continue;
        }
        let kept = Kept::save(words, &found, both.clone());
        let Some(cut) = moved_cut(&mut align, samples, words, both.clone(), ranges[i].start) else {
            continue;
        };
        let (left, right) = (both.start..cut, cut..both.end);
        let again = align_range(&mut align, samples, words, left.clone(), 0, &mut found)
            + align_range(&mut align, samples, words, right.clone(), 0, &mut found);
        tracing::debug!(
            from = ranges[i].start,
            to = cut,
            failed = again,
            "a cut between alignment groups moved"
        );
        if again == 0 {
            (ranges[i - 1], ranges[i]) = (left, right);
        } else {
            // Keep the first alignment rather than half of each.
            kept.restore(words, &mut found);
        }
    }
    drop(cores);
    found.unfit.sort_unstable();
    unfit.extend(found.unfit);
    failed.iter().sum()
}

/// Aligns the groups `ranges[k]` and `ranges[k + 1]`, one of which failed, again as one, on
/// audio that reaches the aligned one's aligned times: a group's audio follows its words' rough
/// times, which can leave a word's sound in the next group's (given words whisper did not all
/// hear: "for the public" placed where whisper heard "public" on the sound of "the") or put a
/// word on the previous group's sound ("to fold the | drafts when" heard for "two photographs
/// when": "drafts" is in "photographs"). Keeps the joint times when every word fits, and says
/// so; otherwise both groups keep what they had.
fn together(
    align: &mut impl Align,
    samples: &[f32],
    words: &mut [Word],
    ranges: &[std::ops::Range<usize>],
    k: usize,
    found: &mut Found,
) -> bool {
    let both = ranges[k].start..ranges[k + 1].end;
    let kept = Kept::save(words, found, both.clone());
    // As deep as splitting goes: the two groups fit as one, or not at all.
    if align_range(align, samples, words, both.clone(), MAX_SPLIT_DEPTH, found) == 0 {
        tracing::debug!(
            words = both.len(),
            "a failed group aligned together with its neighbour"
        );
        return true;
    }
    kept.restore(words, found);
    false
}

/// What a range of words had before it was aligned again, to put back when the new alignment
/// is not kept.
struct Kept {
    range: std::ops::Range<usize>,
    /// Each word's start, end and whether it was squeezed.
    words: Vec<(f64, f64, bool)>,
    /// How many unfit words were found by then.
    unfit: usize,
}

impl Kept {
    fn save(words: &[Word], found: &Found, range: std::ops::Range<usize>) -> Self {
        Self {
            words: words[range.clone()]
                .iter()
                .zip(&found.squeezed[range.clone()])
                .map(|(w, &squeezed)| (w.start, w.end, squeezed))
                .collect(),
            range,
            unfit: found.unfit.len(),
        }
    }

    fn restore(self, words: &mut [Word], found: &mut Found) {
        for (i, (start, end, squeezed)) in self.range.zip(self.words) {
            (words[i].start, words[i].end) = (start, end);
            found.squeezed[i] = squeezed;
        }
        found.unfit.truncate(self.unfit);
    }
}

/// Words spanning at least this long (a minute) are aligned in two halves on two threads: on
/// five minutes of speech the groups took 2.3 s rather than 4.1 s, and the aligner's whole
/// pass 2.9 s rather than 4.2 s, with the same times. Shorter inputs keep one thread (a second
/// decoder costs its loading, 0.15 s, and a warm-up).
const TWO_HALVES_MIN_S: f64 = 60.0;

/// The group that starts the second half of `words` (the one starting nearest their middle),
/// or `None` when they span less than [`TWO_HALVES_MIN_S`].
fn halfway(words: &[Word], ranges: &[std::ops::Range<usize>]) -> Option<usize> {
    let (first, last) = (words.first()?, words.last()?);
    if last.end - first.start < TWO_HALVES_MIN_S || ranges.len() < 2 {
        return None;
    }
    let middle = (first.start + last.end) / 2.0;
    (1..ranges.len()).min_by(|&a, &b| {
        let off = |k: usize| (words[ranges[k].start].start - middle).abs();
        off(a).total_cmp(&off(b))
    })
}

/// The first alignment of every group, the groups before `ranges[half]` with `align` on this
/// thread and the rest with a session of their own on another, as [`align_range`] gives them in
/// order, on two cores the caller holds; `None` (nothing done) when a second decoder cannot be
/// had. The second session first aligns the groups of the [`WARM_UP_S`] before its half and
/// throws the times away, so that it starts its half with the recording's levels, as one
/// session would.
fn align_in_halves(
    aligner: &LanguageAligner<'_>,
    align: &mut impl Align,
    samples: &[f32],
    words: &mut [Word],
    ranges: &[std::ops::Range<usize>],
    half: usize,
    found: &mut Found,
) -> Option<Vec<usize>> {
    let mut second = aligner.session().ok()?;
    let mut theirs = words.to_vec();
    let mut found_there = Found::new(words.len());
    let (mut failed, failed_there) = std::thread::scope(|scope| {
        let there = scope.spawn(|| {
            let mut align = |audio: &[f32], texts: &[&str]| second.align(audio, texts);
            // The warm-up's times also bound the audio of the half's first group, as the
            // first half's would.
            let warm_up = &ranges[warm_from(&theirs, ranges, half)..half];
            let mut forgotten = Found::new(theirs.len());
            align_all(&mut align, samples, &mut theirs, warm_up, &mut forgotten);
            align_all(
                &mut align,
                samples,
                &mut theirs,
                &ranges[half..],
                &mut found_there,
            )
        });
        let here = align_all(align, samples, words, &ranges[..half], found);
        let there = there
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (here, there)
    });
    let second_half = ranges[half].start..words.len();
    for i in second_half {
        (words[i].start, words[i].end) = (theirs[i].start, theirs[i].end);
        found.squeezed[i] = found_there.squeezed[i];
    }
    found.unfit.extend(found_there.unfit);
    failed.extend(failed_there);
    Some(failed)
}

/// Aligns each of `ranges` in order with [`align_range`]; how many pieces of each failed.
fn align_all(
    align: &mut impl Align,
    samples: &[f32],
    words: &mut [Word],
    ranges: &[std::ops::Range<usize>],
    found: &mut Found,
) -> Vec<usize> {
    ranges
        .iter()
        .map(|group| align_range(align, samples, words, group.clone(), 0, found))
        .collect()
}

/// Speech the second half's session aligns (and forgets) before its half: the decoder's
/// estimates of the recording's levels follow the last several seconds of audio.
const WARM_UP_S: f64 = 15.0;

/// The first of the groups before `ranges[half]` that together span [`WARM_UP_S`] (or all).
fn warm_from(words: &[Word], ranges: &[std::ops::Range<usize>], half: usize) -> usize {
    let until = words[ranges[half].start].start - WARM_UP_S;
    (0..half)
        .rev()
        .find(|&k| words[ranges[k].start].start <= until)
        .unwrap_or(0)
}

/// What aligning groups finds besides the words' times.
struct Found {
    /// Indices of words in pieces too short for their phones.
    unfit: Vec<usize>,
    /// For each word, whether the aligner squeezed it to its shortest (see [`squeezed`]).
    squeezed: Vec<bool>,
}

impl Found {
    fn new(words: usize) -> Self {
        Self {
            unfit: Vec::new(),
            squeezed: vec![false; words],
        }
    }
}

/// Whether `span` is squeezed: within a frame of its shortest, where the audio had no sound
/// for it.
fn squeezed(span: &Span) -> bool {
    span.shortest_s > 0.0 && span.end_s - span.start_s <= span.shortest_s + SQUEEZE_SLACK_S
}

/// Whether the cut at word `cut` between two aligned groups (`both` covers them) is in doubt:
/// a word near it is squeezed, or a word beside it was put more than [`MOVED_AT_CUT_S`] from
/// whisper's time (`heard`). Only such cuts are checked: a joint alignment at every cut made
/// aligning 40 % slower, for one more of base's 123 bench clips on target.
fn cut_in_doubt(
    words: &[Word],
    heard: &[(f64, f64)],
    squeezed: &[bool],
    both: std::ops::Range<usize>,
    cut: usize,
) -> bool {
    let moved = [cut - 1, cut].into_iter().any(|j| {
        (words[j].start - heard[j].0).abs() > MOVED_AT_CUT_S
            || (words[j].end - heard[j].1).abs() > MOVED_AT_CUT_S
    });
    moved || squeezed[near_cut(both, cut)].iter().any(|&s| s)
}

/// The words [`moved_cut`] aligns together: [`CUT_CHECK_WORDS`] on each side of `cut`, within
/// `both`.
fn near_cut(both: std::ops::Range<usize>, cut: usize) -> std::ops::Range<usize> {
    both.start.max(cut.saturating_sub(CUT_CHECK_WORDS))..both.end.min(cut + CUT_CHECK_WORDS)
}

/// A word beside a cut between groups that the aligner put this far from whisper's time puts
/// the cut in doubt: under noise, whisper's pause put "to" in the group before the cut while
/// its sound came after the cut, and the aligner fitted it onto the end of "morning", 0.3 s
/// before whisper's time (base).
const MOVED_AT_CUT_S: f64 = 0.2;
/// Words on each side of a cut between groups that [`moved_cut`] aligns together.
const CUT_CHECK_WORDS: usize = 3;
/// The pause [`moved_cut`] must find elsewhere, where its words touch at the cut, to move it.
const CUT_MOVE_PAUSE_S: f64 = 0.1;
/// A word aligned within a frame (10 ms, and half a frame for rounding) of its shortest is
/// squeezed (see [`caption_align::Span::shortest_s`]).
const SQUEEZE_SLACK_S: f64 = 0.015;

/// Checks the cut at word `cut` between two aligned groups (`both` covers them): the words on
/// either side of it are aligned together, across the pause. Groups are cut at the pauses of
/// whisper's times, which can be one word off ("Tuesday | morning" cut before "morning" when
/// the pause came after it); the first group's audio then holds a word's sound it has no word
/// for, and every word of the second group lands one word late. Returns where the joint
/// alignment puts the pause instead: a boundary with at least [`CUT_MOVE_PAUSE_S`] of silence
/// where it joins the words at the cut; or the cut itself, where the joint alignment keeps a
/// pause there, or runs the words on with no pause at all, and moves a word beside it more than
/// [`MOVED_AT_CUT_S`]. The words aligned together then take its times, so that the groups are
/// aligned again on audio bounded by them.
fn moved_cut(
    align: &mut impl Align,
    samples: &[f32],
    words: &mut [Word],
    both: std::ops::Range<usize>,
    cut: usize,
) -> Option<usize> {
    let local = near_cut(both, cut);
    let (from_s, spans) = align_on_audio(align, samples, words, local.clone());
    let spans = spans.ok()?;
    let gap = |j: usize| spans[j - local.start].start_s - spans[j - 1 - local.start].end_s;
    let widest = (local.start + 1..local.end).max_by(|&a, &b| gap(a).total_cmp(&gap(b)))?;
    // A joint alignment that squeezes a word (to its shortest, where the audio has no sound
    // for it) fits the words no better: whisper misheard one ("may reach" for "they agreed"),
    // and neither side of the pause has a sound for it.
    if spans.iter().any(squeezed) {
        return None;
    }
    let moves_elsewhere = words[local.clone()].iter().zip(&spans).any(|(word, span)| {
        (from_s + span.start_s - word.start).abs() > MOVED_AT_CUT_S
            || (from_s + span.end_s - word.end).abs() > MOVED_AT_CUT_S
    });
    // The joint alignment may also keep the cut and put words beside it elsewhere: whisper
    // gave a word the sound of one it did not hear ("public" on the sound of "the" in "for
    // the public library"), the word's group followed whisper's times, and alone it had no
    // other sound to take.
    let same_cut_elsewhere = widest == cut && gap(cut) >= APART_S && moves_elsewhere;
    let moved = widest != cut && gap(cut) < APART_S && gap(widest) >= CUT_MOVE_PAUSE_S;
    // Or the words run on with no pause at all, and the joint alignment moves them: whisper's
    // times put a pause where there is none (a song's last word, held on its note, in a group
    // of its own 1.4 s late; "for" 0.17 s early under noise, its sound left to the next group).
    let run_on = gap(widest) < APART_S && moves_elsewhere;
    if !(moved || same_cut_elsewhere || run_on) {
        return None;
    }
    for (word, span) in words[local].iter_mut().zip(&spans) {
        word.start = from_s + span.start_s;
        word.end = from_s + span.end_s;
    }
    // Only a moved pause moves the cut (the three cases exclude one another).
    Some(if moved { widest } else { cut })
}

/// Aligns `words[range]` (as written) on their audio, bounded by [`audio_bounds`]: where that
/// audio starts, and the spans from there. Where the aligner puts a pause a word or two later
/// than a sentence's punctuation or the pause in the words' own times (whisper's), the words
/// are aligned again with the pause where it was expected ([`late_pause`]).
fn align_on_audio(
    align: &mut impl Align,
    samples: &[f32],
    words: &[Word],
    range: std::ops::Range<usize>,
) -> (f64, caption_align::Result<Vec<Span>>) {
    let (from_s, to_s) = audio_bounds(samples, words, range.clone());
    let mut texts: Vec<&str> = words[range.clone()]
        .iter()
        .map(|w| w.punctuated_word.as_str())
        .collect();
    let at = |t: f64| ((t * SAMPLE_RATE_HZ as f64).round() as usize).min(samples.len());
    let audio = &samples[at(from_s)..at(to_s).max(at(from_s))];
    let expected: Vec<bool> = range
        .clone()
        .map(|i| {
            let heard_pause = i + 1 < range.end
                && (HEARD_PAUSE_S..GROUP_PAUSE_S).contains(&(words[i + 1].start - words[i].end));
            heard_pause || ends_a_clause(&words[i].punctuated_word)
        })
        .collect();
    let mut unsure: Vec<bool> = words[range.clone()]
        .iter()
        .map(|w| w.confidence.is_some_and(|c| c < UNSURE_BELOW))
        .collect();
    let spans = align_leaving_room(align, audio, &texts, &unsure);
    let Some((k, late)) = spans
        .as_ref()
        .ok()
        .and_then(|spans| late_pause(&expected, spans))
    else {
        return (from_s, spans);
    };
    texts.insert(k + 1, caption_align::PAUSE);
    unsure.insert(k + 1, false);
    let moved = align_leaving_room(align, audio, &texts, &unsure)
        .ok()
        .filter(|again| {
            // The pause where it was expected now covers the middle of the late one.
            let middle = (late.0 + late.1) / 2.0;
            again.len() == texts.len() && again[k].end_s < middle && middle < again[k + 2].start_s
        });
    match moved {
        Some(mut again) => {
            tracing::debug!(
                after = texts[k],
                "the pause moved to where it was expected, from a word or two after"
            );
            again.remove(k + 1);
            (from_s, Ok(again))
        }
        None => (from_s, spans),
    }
}

/// Punctuation after which a speaker pauses: a comma, a sentence's or a clause's end.
const PAUSE_PUNCTUATION: [char; 6] = [',', '.', ';', ':', '?', '!'];
/// An aligned pause at least this long is one the speaker made.
const SPOKEN_PAUSE_S: f64 = 0.1;
/// A pause at least this long between two words' times before alignment (whisper's, on the
/// sound) is expected in the alignment. Longer than [`GROUP_PAUSE_S`], it is not: such words
/// are aligned together only to check the cut between their groups ([`moved_cut`],
/// [`together`]), which questions that very pause.
const HEARD_PAUSE_S: f64 = 0.1;
/// How many words after the expected place the aligner may have put its pause.
const LATE_PAUSE_WORDS: usize = 2;

/// Whether `text` ends in [`PAUSE_PUNCTUATION`] (before any closing quote or bracket).
fn ends_a_clause(text: &str) -> bool {
    text.trim_end_matches(['"', '\'', ')'])
        .ends_with(PAUSE_PUNCTUATION)
}

/// Where an alignment (`spans`) put a pause late: a word after which a pause is `expected`
/// joined to the next (less than [`APART_S`] apart), and the first pause after it, of at least
/// [`SPOKEN_PAUSE_S`], after one of the next [`LATE_PAUSE_WORDS`] words, none of them expected
/// to pause. Returns the word's index and that pause. The aligner's silence is optional between
/// any two words: on "debate, | they" it put the comma's pause after "they", on the second
/// syllable of "debate" ("de | bate"), both one word late; and where tiny.en heard "debate |
/// may be" for "debate | they agreed", with the pause after "debate", it put "may" on "bate"
/// and the pause after it.
fn late_pause(expected: &[bool], spans: &[Span]) -> Option<(usize, (f64, f64))> {
    let gap = |j: usize| spans[j + 1].start_s - spans[j].end_s;
    (0..spans.len().min(expected.len()).saturating_sub(1)).find_map(|k| {
        if !expected[k] || gap(k) >= APART_S {
            return None;
        }
        let late = (k + 1..(k + 1 + LATE_PAUSE_WORDS).min(spans.len() - 1))
            .take_while(|&j| !expected[j])
            .find(|&j| gap(j) >= APART_S)?;
        (gap(late) >= SPOKEN_PAUSE_S).then(|| (k, (spans[late].end_s, spans[late + 1].start_s)))
    })
}

/// The audio aligned for `words[range]`: from its first word's start to its last word's end,
/// with [`GROUP_MARGIN_S`] of the pause on each side (at most half of it).
fn audio_bounds(samples: &[f32], words: &[Word], range: std::ops::Range<usize>) -> (f64, f64) {
    let total_s = samples.len() as f64 / SAMPLE_RATE_HZ as f64;
    let (first, last) = (&words[range.start], &words[range.end - 1]);
    let before_s = if range.start == 0 {
        first.start
    } else {
        first.start - words[range.start - 1].end
    };
    let after_s = if range.end == words.len() {
        total_s - last.end
    } else {
        words[range.end].start - last.end
    };
    let from_s = (first.start - GROUP_MARGIN_S.min(before_s.max(0.0) / 2.0)).max(0.0);
    let to_s = (last.end + GROUP_MARGIN_S.min(after_s.max(0.0) / 2.0)).min(total_s);
    (from_s, to_s)
}

/// Aligns `words[range]` on its audio (with some of the silence around it) and writes the
/// times. When the aligner fails (its beam lost the path, or a word is not in the audio), the
/// range is cut at its widest pause and each half aligned on its own, so that one bad stretch
/// costs its own words only. Returns how many pieces failed and kept their old times; a piece
/// that is still too short for its words' phones has their indices added to `found.unfit`.
fn align_range(
    align: &mut impl Align,
    samples: &[f32],
    words: &mut [Word],
    range: std::ops::Range<usize>,
    depth: u32,
    found: &mut Found,
) -> usize {
    let (from_s, spans) = align_on_audio(align, samples, words, range.clone());
    let texts = || -> Vec<&str> {
        words[range.clone()]
            .iter()
            .map(|w| w.punctuated_word.as_str())
            .collect()
    };
    match spans {
        Ok(spans) => {
            for (i, span) in range.zip(spans) {
                words[i].start = round_ms(from_s + span.start_s);
                words[i].end = round_ms(from_s + span.end_s);
                found.squeezed[i] = squeezed(&span);
            }
            0
        }
        Err(error) if range.len() >= 2 * MIN_SPLIT_WORDS && depth < MAX_SPLIT_DEPTH => {
            // The widest pause between two words, the middle one among equals.
            let middle = (range.start + range.end) as f64 / 2.0;
            let cut = (range.start + MIN_SPLIT_WORDS..=range.end - MIN_SPLIT_WORDS)
                .max_by(|&a, &b| {
                    let gap = |i: usize| words[i].start - words[i - 1].end;
                    gap(a).total_cmp(&gap(b)).then_with(|| {
                        (b as f64 - middle)
                            .abs()
                            .total_cmp(&(a as f64 - middle).abs())
                    })
                })
                .unwrap_or(range.start + range.len() / 2);
            tracing::debug!(%error, words = ?texts(), cut = cut - range.start, "alignment failed; aligning both halves");
            align_range(align, samples, words, range.start..cut, depth + 1, found)
                + align_range(align, samples, words, cut..range.end, depth + 1, found)
        }
        Err(error) => {
            tracing::debug!(%error, words = ?texts(), "alignment failed; keeping DTW times");
            if matches!(error, caption_align::Error::TooShort { .. }) {
                found.unfit.extend(range);
            }
            1
        }
    }
}

/// Ranges of words between pauses of at least [`GROUP_PAUSE_S`], each at most [`MAX_GROUP_S`]
/// long when a pause allows.
fn groups(words: &[Word]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=words.len() {
        let at_end = i == words.len();
        let cut = at_end || {
            let pause_s = words[i].start - words[i - 1].end;
            pause_s >= GROUP_PAUSE_S
                || (words[i].end - words[start].start > MAX_GROUP_S && pause_s > 0.0)
        };
        if cut {
            out.push(start..i);
            start = i;
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests;
