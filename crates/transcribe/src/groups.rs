//! Alignment groups: the words of a piece cut at pauses, each aligned on its own audio.
//!
//! The groups are cut where whisper's times pause (at least [`GROUP_PAUSE_S`]); each group is
//! aligned with a little of the silence around it, a group whose alignment fails is aligned
//! again in halves, and each cut is then checked by aligning the words around it together (a
//! cut one word off moves).

use caption_align::{Aligner, Span};
use caption_core::Word;

use crate::cores::Cores;
use crate::speech::{SAMPLE_RATE_HZ, round_ms};

/// An aligner's call: audio and written words in, one span per word out
/// ([`Aligner::align`]; tests give scripted ones).
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
/// two groups are aligned again. With `threads` of 2 or more, words spanning at least
/// [`TWO_HALVES_MIN_S`] are aligned in two halves at once (see [`align_in_halves`]).
pub(crate) fn align_groups(
    aligner: &Aligner,
    samples: &[f32],
    words: &mut [Word],
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
    for i in 1..ranges.len() {
        if failed[i - 1] > 0
            && failed[i] == 0
            && with_the_next(&mut align, samples, words, &ranges, i - 1, &mut found)
        {
            failed[i - 1] = 0;
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
        if failed[i - 1] > 0 || failed[i] > 0 || !doubtful {
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

/// Aligns the failed group `ranges[k]` again together with the aligned group after it, on
/// audio that reaches that group's aligned end: a group's audio follows its words' rough
/// times, which can leave a word's sound beyond it (given words whisper did not all hear:
/// "for the public" placed where whisper heard "public" on the sound of "the"). Keeps the
/// joint times when every word fits, and says so; otherwise both groups keep what they had.
fn with_the_next(
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
            "a failed group aligned together with the group after it"
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
    aligner: &Aligner,
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
/// where it joins the words at the cut. The words aligned together then take its times, so
/// that the groups are aligned again on audio bounded by them.
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
    if widest == cut
        || gap(cut) >= APART_S
        || gap(widest) < CUT_MOVE_PAUSE_S
        || spans.iter().any(squeezed)
    {
        return None;
    }
    for (word, span) in words[local].iter_mut().zip(&spans) {
        word.start = from_s + span.start_s;
        word.end = from_s + span.end_s;
    }
    Some(widest)
}

/// Aligns `words[range]` (as written) on their audio, bounded by [`audio_bounds`]: where that
/// audio starts, and the spans from there.
fn align_on_audio(
    align: &mut impl Align,
    samples: &[f32],
    words: &[Word],
    range: std::ops::Range<usize>,
) -> (f64, caption_align::Result<Vec<Span>>) {
    let (from_s, to_s) = audio_bounds(samples, words, range.clone());
    let texts: Vec<&str> = words[range]
        .iter()
        .map(|w| w.punctuated_word.as_str())
        .collect();
    let at = |t: f64| ((t * SAMPLE_RATE_HZ as f64).round() as usize).min(samples.len());
    let audio = &samples[at(from_s)..at(to_s).max(at(from_s))];
    (from_s, align(audio, &texts))
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
pub(crate) mod tests {
    use super::*;

    /// A word "w" from `start` to `end`.
    pub(crate) fn word(start: f64, end: f64) -> Word {
        Word {
            start,
            end,
            word: "w".into(),
            punctuated_word: "w".into(),
            ..Default::default()
        }
    }

    /// An aligner that fails on more than `max_words` words and otherwise spreads the words
    /// evenly over the audio; it records the words of every call.
    fn aligner_up_to(max_words: usize, calls: &mut Vec<Vec<String>>) -> impl Align + '_ {
        move |audio: &[f32], texts: &[&str]| {
            calls.push(texts.iter().map(|t| (*t).to_owned()).collect());
            if texts.len() > max_words {
                return Err(caption_align::Error::Decoder {
                    detail: format!("{} words: the beam lost the path", texts.len()),
                });
            }
            Ok(spread(audio, texts.len()))
        }
    }

    /// `words` spans, each as long, over all of `audio`.
    fn spread(audio: &[f32], words: usize) -> Vec<Span> {
        let each_s = audio.len() as f64 / SAMPLE_RATE_HZ as f64 / words as f64;
        (0..words)
            .map(|i| Span {
                start_s: i as f64 * each_s,
                end_s: (i + 1) as f64 * each_s,
                shortest_s: 0.03,
            })
            .collect()
    }

    fn spoken(starts: &[f64]) -> Vec<Word> {
        starts
            .iter()
            .enumerate()
            .map(|(i, &start)| Word {
                punctuated_word: format!("w{i}"),
                ..word(start, start + 0.25)
            })
            .collect()
    }

    /// An aligner that lays the words 0.2 s long from the start of the audio, with a pause of
    /// `pause_s` before the `pause_before`-th; each word is `shortest_s` at the least.
    fn aligner_with_pause(pause_before: usize, pause_s: f64, shortest_s: f64) -> impl Align {
        move |_: &[f32], texts: &[&str]| {
            let mut t = 0.0;
            Ok((0..texts.len())
                .map(|i| {
                    if i == pause_before {
                        t += pause_s;
                    }
                    t += 0.2;
                    Span {
                        start_s: t - 0.2,
                        end_s: t,
                        shortest_s,
                    }
                })
                .collect())
        }
    }

    /// A minute and more of read speech (Festival, whose word times are exact).
    const PASSAGE: &str = "The fisherman mended his nets while the children watched the boats \
        return to the bay. Every morning the baker opened his shop before the sun came up. The \
        committee met on Tuesday morning to discuss the new budget for the public library. \
        Please remember to bring your passport when you visit the embassy on Friday afternoon. \
        The old lighthouse keeper climbed the narrow stairs to light the lamp at dusk. A strong \
        wind blew across the valley and bent the tall grass toward the river. The students \
        gathered in the hall to hear the visiting scientist talk about the stars. She planted \
        tomatoes and beans in the garden behind the house last spring. The train to the coast \
        leaves early, so we packed our bags the night before. After the storm the villagers \
        worked together to clear the fallen trees from the road. The museum opened a new room \
        for paintings from the northern islands. He wrote a long letter to his sister and \
        walked to the post office before dinner.";

    #[test]
    fn two_halves_on_two_threads_time_the_words_as_one_thread_does() {
        let dir = tempfile::tempdir().unwrap();
        let wav = dir.path().join("passage.wav");
        let truth = caption_testkit::speech::festival_sentence(PASSAGE, "kal", &wav).unwrap();
        let samples: Vec<f32> = caption_testkit::speech::read_wav_16k(&wav)
            .unwrap()
            .iter()
            .map(|&s| f32::from(s) / 32768.0)
            .collect();
        // Times as whisper's would be: each word 40 ms late.
        let heard: Vec<Word> = truth
            .iter()
            .map(|t| Word {
                start: t.start_s + 0.04,
                end: t.end_s + 0.04,
                word: t.word.clone(),
                punctuated_word: t.word.clone(),
                ..Default::default()
            })
            .collect();
        assert!(
            halfway(&heard, &groups(&heard)).is_some(),
            "not long enough to halve"
        );
        let timed = |threads: usize| {
            // A new aligner each: a decoder's noise estimate carries over from its last call.
            let aligner = Aligner::open_installed().unwrap();
            let mut words = heard.clone();
            let mut unfit = Vec::new();
            let failed = align_groups(&aligner, &samples, &mut words, &mut unfit, threads);
            assert_eq!((failed, unfit.len()), (0, 0), "{threads} threads");
            words
        };
        let (one, two) = (timed(1), timed(2));
        for (a, b) in one.iter().zip(&two) {
            assert!(
                (a.start - b.start).abs() <= 0.01 && (a.end - b.end).abs() <= 0.01,
                "{:?}: {:.3}-{:.3} on one thread, {:.3}-{:.3} on two",
                a.word,
                a.start,
                a.end,
                b.start,
                b.end
            );
        }
        let mean_error = |words: &[Word]| {
            let sum: f64 = words
                .iter()
                .zip(&truth)
                .map(|(w, t)| (w.start - t.start_s).abs() + (w.end - t.end_s).abs())
                .sum();
            sum / (2 * words.len()) as f64
        };
        assert!(
            mean_error(&two) <= 0.03,
            "mean error {:.3} s",
            mean_error(&two)
        );
    }

    #[test]
    fn a_cut_moves_where_the_words_around_it_aligned_together_pause() {
        // Whisper paused before w3, so the groups were cut there; aligned together, the words
        // pause before w4 and join w2 to w3.
        let samples = vec![0.0f32; 4 * SAMPLE_RATE_HZ];
        let spoken_at = [0.5, 0.75, 1.0, 1.75, 2.0, 2.25];
        let mut words = spoken(&spoken_at);
        let mut align = aligner_with_pause(4, 0.3, 0.06);
        assert_eq!(
            moved_cut(&mut align, &samples, &mut words, 0..6, 3),
            Some(4)
        );
        // The words took the joint times, from the audio's start: half of the 0.5 s before w0.
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(near(words[0].start, 0.25) && near(words[3].end, 1.05));
        assert!(near(words[4].start, 1.35) && near(words[5].end, 1.75));

        // A joint pause at the cut itself, or one too short to be a pause, moves nothing; nor
        // does a joint alignment that squeezes a word to its shortest.
        for (pause_before, pause_s, shortest_s) in [(3, 0.3, 0.06), (4, 0.05, 0.06), (4, 0.3, 0.19)]
        {
            let mut words = spoken(&spoken_at);
            let mut align = aligner_with_pause(pause_before, pause_s, shortest_s);
            assert_eq!(moved_cut(&mut align, &samples, &mut words, 0..6, 3), None);
            assert_eq!(words, spoken(&spoken_at));
        }
    }

    #[test]
    fn a_cut_is_in_doubt_beside_a_squeezed_word_or_a_word_moved_far() {
        // "morning to | discuss": whisper heard "to" at 2.28-2.38.
        let heard = [(1.59, 2.1), (2.28, 2.38), (2.38, 2.9), (2.9, 3.0)];
        let aligned = |to: (f64, f64)| {
            [
                word(1.59, to.0),
                word(to.0, to.1),
                word(2.38, 2.9),
                word(2.9, 3.0),
            ]
        };
        let none = [false; 4];
        // The aligner fitted "to" onto the end of "morning", 0.3 s early: in doubt.
        assert!(cut_in_doubt(&aligned((1.98, 2.1)), &heard, &none, 0..4, 2));
        // Within 0.2 s of whisper's time, nothing squeezed: not in doubt.
        assert!(!cut_in_doubt(
            &aligned((2.27, 2.37)),
            &heard,
            &none,
            0..4,
            2
        ));
        // A squeezed word near the cut: in doubt.
        let squeezed = [false, false, false, true];
        assert!(cut_in_doubt(
            &aligned((2.27, 2.37)),
            &heard,
            &squeezed,
            0..4,
            2
        ));
    }

    #[test]
    fn a_failed_group_is_aligned_again_in_halves_cut_at_its_widest_pause() {
        // Eight words with pauses of 0.25 s, the widest (0.5 s) before the sixth.
        let mut words = spoken(&[0.5, 1.0, 1.5, 2.0, 2.5, 3.25, 3.75, 4.25]);
        let samples = vec![0.0f32; 5 * SAMPLE_RATE_HZ];
        let mut calls = Vec::new();
        let failed = align_range(
            &mut aligner_up_to(5, &mut calls),
            &samples,
            &mut words,
            0..8,
            0,
            &mut Found::new(8),
        );
        assert_eq!(failed, 0);
        let sizes: Vec<usize> = calls.iter().map(Vec::len).collect();
        assert_eq!(sizes, [8, 5, 3]);
        assert_eq!(calls[1], ["w0", "w1", "w2", "w3", "w4"]);
        // Every word got the aligner's time. The first piece took half the widest pause (up to
        // 3.0 s); the second begins half of what is left before w5.
        assert_eq!(words[4].end, 3.0);
        assert_eq!(words[5].start, 3.125);
        assert!(words.windows(2).all(|w| w[0].end <= w[1].start));
    }

    /// An aligner that needs `per_word_s` of audio a word, and spreads the words evenly.
    fn aligner_needing(per_word_s: f64) -> impl Align {
        move |audio: &[f32], texts: &[&str]| {
            let audio_s = audio.len() as f64 / SAMPLE_RATE_HZ as f64;
            if audio_s < per_word_s * texts.len() as f64 {
                return Err(caption_align::Error::Decoder {
                    detail: "a word's sound is not in the audio".into(),
                });
            }
            Ok(spread(audio, texts.len()))
        }
    }

    #[test]
    fn a_failed_group_is_aligned_again_with_the_next() {
        // Three words placed roughly in 0.6 s, their audio 1.1 s with its margins: too short
        // for an aligner that needs 0.45 s a word. The next group (two words) fits.
        let rough = [
            word(1.0, 1.2),
            word(1.2, 1.4),
            word(1.4, 1.6),
            word(2.4, 2.65),
            word(2.65, 2.9),
        ];
        let samples = vec![0.0f32; 4 * SAMPLE_RATE_HZ];
        let ranges = groups(&rough);
        assert_eq!(ranges, vec![0..3, 3..5]);
        let mut words = rough.clone();
        let mut found = Found::new(5);
        let mut align = aligner_needing(0.45);
        let failed = align_all(&mut align, &samples, &mut words, &ranges, &mut found);
        assert_eq!(failed, [1, 0]);
        let alone = words.clone();
        // Together, on 0.75-3.4 s (the next group aligned to 3.15 s, and its margin): every
        // word fits, spread over the joint audio.
        assert!(with_the_next(
            &mut align, &samples, &mut words, &ranges, 0, &mut found
        ));
        assert_eq!((words[0].start, words[4].end), (0.75, 3.4));
        // An aligner that needs more keeps both groups as they were.
        let mut words = alone.clone();
        assert!(!with_the_next(
            &mut aligner_needing(0.6),
            &samples,
            &mut words,
            &ranges,
            0,
            &mut found
        ));
        assert_eq!(words, alone);
    }

    #[test]
    fn pieces_that_still_fail_keep_their_times() {
        let starts = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0];
        let mut words = spoken(&starts);
        let samples = vec![0.0f32; 5 * SAMPLE_RATE_HZ];
        let mut calls = Vec::new();
        let mut found = Found::new(8);
        let failed = align_range(
            &mut aligner_up_to(0, &mut calls),
            &samples,
            &mut words,
            0..8,
            0,
            &mut found,
        );
        assert!(found.unfit.is_empty(), "{:?}", found.unfit);
        // Equal pauses: cut in the middle. 8 words, then 4 + 4, then four pieces of 2 that are
        // not cut again.
        assert_eq!(failed, 4);
        assert_eq!(calls.len(), 7);
        let kept: Vec<f64> = words.iter().map(|w| w.start).collect();
        assert_eq!(kept, starts);
    }

    #[test]
    fn pieces_too_short_for_their_phones_are_unfit() {
        // Whisper's "Thank you for watching" twice over, in two seconds: the whole group and
        // every piece of it are too short for their phones.
        let mut words = spoken(&[0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75]);
        let samples = vec![0.0f32; 2 * SAMPLE_RATE_HZ];
        let mut too_short = |audio: &[f32], texts: &[&str]| {
            Err(caption_align::Error::TooShort {
                phones: 4 * texts.len(),
                needed_s: 0.12 * texts.len() as f64,
                audio_s: audio.len() as f64 / SAMPLE_RATE_HZ as f64,
            })
        };
        let mut found = Found::new(8);
        let failed = align_range(&mut too_short, &samples, &mut words, 0..8, 0, &mut found);
        assert_eq!(failed, 4);
        assert_eq!(found.unfit, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn groups_break_at_pauses() {
        let words = [
            word(0.0, 0.3),
            word(0.3, 0.6),
            word(1.0, 1.2),
            word(1.3, 1.5),
            word(1.5, 1.9),
        ];
        assert_eq!(groups(&words), vec![0..2, 2..5]);
        assert_eq!(groups(&[]), Vec::<std::ops::Range<usize>>::new());
    }
}
