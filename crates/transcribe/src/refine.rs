//! Word times from a forced aligner, after whisper decided the words.
//!
//! DTW's boundaries are off by 80-100 ms on connected speech; an acoustic model that knows which
//! words were said puts them within a few tens of milliseconds. The words of a piece are aligned
//! in groups between pauses (see [`crate::groups`]), and a group whose alignment fails keeps the
//! times it had: a transcription never fails because alignment did. Edges next to a pause are
//! then put on the sound itself: in a noisy recording, on the sound of the recording with the
//! noise taken out, when taking it out leaves the pauses as quiet as a clean recording's.

use caption_align::LanguageAligner;
use caption_core::Word;

use crate::denoise;
use crate::groups::{APART_S, align_groups};
use crate::speech::{self, GateParams, Region, SAMPLE_RATE_HZ, round_ms};
use crate::sung::Singing;
use crate::vad::Voice;

/// What the signal itself says about an input: where there is sound (the amplitude gate, exact
/// to the millisecond) and, when voice activity is known, where someone speaks.
pub(crate) struct Signal {
    pub(crate) sound: Vec<Region>,
    /// Silero's voice, widened over the held notes when the input is sung: Silero loses the
    /// notes held after a sung line's first syllables, and the words sung on them are voice
    /// too.
    pub(crate) voice: Option<Voice>,
    /// Whether the input is sung, and its held notes ([`crate::sung`]): sung words are aligned
    /// as sung.
    pub(crate) singing: Singing,
}

/// Whose words [`refine`] times.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Source<'a> {
    /// Whisper's: a word the aligner finds no room for was never said.
    Heard,
    /// A text the caller gave: every word is kept. For each word, whether it begins a line
    /// ([`crate::lines::line_starts`]; empty for a subtitle file's cues).
    Given { line_starts: &'a [bool] },
}

/// A snap never leaves a word shorter than this: the aligner's shortest word (one phone of
/// three 10 ms states).
pub(crate) const MIN_WORD_S: f64 = 0.03;
/// Word edges are snapped onto the signal only where the aligned words leave a pause between
/// them (see [`snap_to_pauses`]).
const SNAP_GAP_S: f64 = APART_S;

/// Replaces the times of `words` (already in time order, covering `samples` from `0`) by the
/// aligner's, group by group, then puts edges next to a pause exactly on the sound (the
/// signal's: the amplitude gate's regions, in time order) where that sound's edge is in
/// someone's speech (the signal's voice, when known: the onset of a music bed is no word's
/// start). In a noisy recording whose noise [`cleared`] can take out, the sound is the gate's
/// (with `gate`) on the cleared recording instead. Whisper's own words (`source`) that the
/// aligner finds no room for in the audio (its hallucinations: "Thank you for watching" three
/// times over a second of speech) are removed; a given text's words are all kept, and no cut
/// between alignment groups at one of its line breaks is moved. Sung words are aligned on the
/// recording with its noise or music taken out. The aligner and the denoiser use up to
/// `threads` threads. Returns how many groups fell back to the old times.
pub(crate) fn refine(
    aligner: &LanguageAligner<'_>,
    samples: &[f32],
    words: &mut Vec<Word>,
    signal: &Signal,
    gate: &GateParams,
    source: Source<'_>,
    threads: usize,
) -> usize {
    // The edges of words sung on held notes are no pause: the voice is widened over them.
    // (Measured on the bench's tuning songs, lyrics given: onsets within 0.3 s 90 % / mean
    // 0.16 s on Silero's voice, 91 % / 0.11 s widened.)
    let voice = signal.voice.as_ref();
    let mut unfit = Vec::new();
    let line_starts = match source {
        Source::Heard => &[][..],
        Source::Given { line_starts } => line_starts,
    };
    let quiet = QuietTest::new(samples);
    let denoised = voice
        .filter(|_| !quiet.clean)
        .map(|_| denoise::denoised(samples, threads));
    // Sung words are aligned with the music under them taken out: the acoustic model knows
    // speech, not a band, and over the bed it put words that start a held note 0.3-0.5 s late
    // (tuning songs, lyrics given: onsets within 0.3 s 87.2 -> 88.6 %; held out 80.0 -> 83.3 %,
    // mean 0.27 -> 0.23 s).
    let aligned_on = match &denoised {
        Some(denoised) if signal.singing.sung => &denoised.samples[..],
        _ => samples,
    };
    let failed = align_groups(aligner, aligned_on, words, line_starts, &mut unfit, threads);
    if matches!(source, Source::Heard) && !unfit.is_empty() {
        tracing::debug!(
            words = ?unfit.iter().map(|&i| words[i].word.as_str()).collect::<Vec<_>>(),
            "words with no room in the audio dropped"
        );
        let mut index = 0;
        words.retain(|_| {
            index += 1;
            unfit.binary_search(&(index - 1)).is_err()
        });
    }
    let in_voice = |t: f64| {
        voice.is_none_or(|voice| {
            let voice = &voice.regions;
            let i = voice.partition_point(|r| r.end_s < t);
            i < voice.len() && voice[i].start_s <= t
        })
    };
    let cleared = denoised
        .as_ref()
        .zip(voice)
        .and_then(|(denoised, voice)| cleared(&denoised.samples, voice, gate));
    let (regions, edges) = match &cleared {
        Some((regions, edges)) => (&regions[..], edges),
        None => (&signal.sound[..], &quiet),
    };
    // On the cleared copy, an edge must also be near a frame of voice, not only inside the
    // voice's padded stretch: what RNNoise leaves of a music bed before the first word made a
    // sound of its own there, and the first word was moved onto it (base, "The" at 0.000 s
    // before "Every" at 0.225 s).
    let trusted = |t: f64| {
        in_voice(t) && (cleared.is_none() || voice.is_some_and(|voice| voice.speech_near(t)))
    };
    claim_lone_sounds(words, regions, trusted, |a, b| edges.is_quiet(a, b));
    snap_to_pauses(
        words,
        regions,
        trusted,
        |a, b| edges.is_quiet(a, b),
        |word| aligner.opens_on_voice(word),
    );
    // A sung word's start stays where the aligner put it: the two moves below are for speech
    // over noise, where a word after a pause takes some of the noise before it. On the bench's
    // songs they moved starts later, onto a note's louder part (lyrics given, onsets within
    // 0.3 s / mean: tuning 92.9 % / 0.095 s with them, 93.8 % / 0.087 s without; held out, 10
    // clips, 87.1 % / 0.164 s and 87.5 % / 0.156 s).
    let sung = signal.singing.sung;
    if let Some(voice) = voice
        && !quiet.clean
        && !sung
    {
        start_at_the_voice(words, voice);
    }
    if let Some(denoised) = denoised.as_ref().filter(|_| cleared.is_none() && !sung) {
        start_at_the_denoisers_voice(words, &denoised.voice, |word| aligner.opens_on_voice(word));
    }
    failed
}

/// A denoised recording's bed must lie this far under its voice for its pauses to be read as a
/// clean recording's. Pink noise 16 dB under the speech ends 38-48 dB under it once RNNoise
/// took it out; a music bed 10 dB under, which RNNoise keeps in part, mostly 9-38 dB under.
/// Measured on the bench's noise and music clips: at -40 dB the unit test's noise (38.5 dB
/// under) was left as it was; -35 dB changed no music clip for the worse; at -30 dB music
/// clips were taken for clean and their first words moved onto the music before them.
const CLEARED_BED_DB: f64 = -35.0;

/// The sound regions (the gate's, with `gate`) and the pause test of `clean`, a recording with
/// the noise taken out ([`denoise::denoised`]), when that leaves its bed at least
/// [`CLEARED_BED_DB`] under the voice; else `None`.
fn cleared(clean: &[f32], voice: &Voice, gate: &GateParams) -> Option<(Vec<Region>, QuietTest)> {
    let bed_db = voice.bed_under_voice_db(clean)?;
    tracing::debug!(bed_db, "noise taken out for the edges of sounds");
    if bed_db > CLEARED_BED_DB {
        return None;
    }
    Some((
        speech::speech_regions(clean, gate),
        QuietTest::cleared(clean),
    ))
}

/// Moves the start of a word that begins in a pause to where the voice begins, in a recording
/// with noise or music under the speech. There the acoustic model lets a word after a pause
/// take some of the noise before it (20-190 ms on the bench's noise and music rows), and the
/// amplitude gate cannot tell the noise from the voice; the voice model can. A start moves
/// only later: from a frame (32 ms) the voice model finds no speech in, after another such
/// frame, to the first frame it does (see [`Voice::onset_after`]).
fn start_at_the_voice(words: &mut [Word], voice: &Voice) {
    for word in words.iter_mut() {
        let (start, end) = (word.start, word.end);
        if let Some(onset) = voice.onset_after(start, end)
            && onset > start
            && end - onset >= MIN_WORD_S
        {
            word.start = round_ms(onset);
        }
    }
}

/// Frames of 10 ms RNNoise hears no voice in that make a pause: longer than most closures of
/// stops, shorter than the pauses of read speech (80 and 60 ms gave the same on the bench).
const DENOISER_PAUSE_FRAMES: usize = 8;
/// RNNoise's voice probability above which a frame holds a voice.
const DENOISER_VOICE: f32 = 0.5;
/// How far before the first frame RNNoise hears a voice in a moved start is put: that frame's
/// 20 ms window begins 10 ms before it, and the voice is somewhere in that window.
const DENOISER_LEAD_S: f64 = 0.01;

/// Moves the start of a word that begins in a pause to where the voice begins, as RNNoise
/// hears it while it takes the noise out, for words that open on the voice (`opens_on_voice`:
/// "and", "in", "they"). Under a music bed neither the amplitude nor the voice model hears the
/// pause after "debate," (Silero's probability stays above 0.85 through it), and the aligner
/// joins the two words in its middle; RNNoise hears no voice there, and its 10 ms frames are
/// three times as fine as Silero's. A word that opens on a stop, an "h" or a voiceless
/// fricative is left alone: RNNoise hears those as no voice (on the bench, "peppers" moved
/// 100 ms late).
fn start_at_the_denoisers_voice(
    words: &mut [Word],
    voice: &[f32],
    opens_on_voice: impl Fn(&str) -> bool,
) {
    let silent = |f: usize| voice[f] < DENOISER_VOICE;
    for word in words.iter_mut() {
        let frame = (word.start / denoise::VOICE_FRAME_S).floor().max(0.0) as usize;
        if frame >= voice.len() || !silent(frame) {
            continue;
        }
        let first = (0..frame)
            .rev()
            .take_while(|&f| silent(f))
            .last()
            .unwrap_or(frame);
        let Some(onset) = (frame..voice.len()).find(|&f| !silent(f)) else {
            continue;
        };
        let start = onset as f64 * denoise::VOICE_FRAME_S - DENOISER_LEAD_S;
        if onset - first >= DENOISER_PAUSE_FRAMES
            && start > word.start
            && word.end - start >= MIN_WORD_S
            && opens_on_voice(&word.word)
        {
            word.start = round_ms(start);
        }
    }
}

/// A silence of the signal at least this long where the aligner joins two words is a pause
/// all the same, in a clean recording (see [`QuietTest`]).
const JOINED_PAUSE_S: f64 = 0.06;
/// The same for the start of a word that opens on the voice (a vowel, nasal, liquid, glide or
/// "th"): no closure of its own is in front of it (a 41 ms pause of a gapped clip, "embassy |
/// on", where the aligner started "on" 25 ms into it). The word before keeps its end: the
/// silence may be its final stop's closure ("sleep | in", "met | on": moving those ends to the
/// silence made them 20-40 ms early on the bench's continuous clips).
const JOINED_PAUSE_BEFORE_VOICE_S: f64 = 0.03;
/// A recording is clean when its noise floor is this far under its loud level (-48 dB): the
/// amplitude gate's edges are then the sound's own (at 16 dB SNR they fall inside the soft
/// onsets and offsets, and moving joined words' boundaries onto them made the mean error 50 %
/// worse on the bench).
const CLEAN_FLOOR_FRACTION: f32 = 0.015 / 4.0;
/// A pause is quiet when the median of its 1 ms peaks is at most this multiple of the floor.
const QUIET_FLOOR_MULTIPLE: f32 = 2.0;

/// Whether stretches of a recording are as quiet as its floor, in a clean recording only.
struct QuietTest {
    /// Peak of each 1 ms block.
    peaks: Vec<f32>,
    floor: f32,
    clean: bool,
}

impl QuietTest {
    fn new(samples: &[f32]) -> Self {
        let peaks: Vec<f32> = samples
            .chunks(SAMPLE_RATE_HZ / 1000)
            .map(|b| b.iter().fold(0f32, |m, &x| m.max(x.abs())))
            .collect();
        let mut sorted = peaks.clone();
        sorted.sort_unstable_by(f32::total_cmp);
        let at = |fraction: f64| {
            let i = ((sorted.len().saturating_sub(1)) as f64 * fraction).round() as usize;
            sorted.get(i).copied().unwrap_or(0.0)
        };
        // The same levels as the amplitude gate's (`speech::speech_regions`).
        let (floor, loud) = (at(0.10), at(0.995));
        Self {
            clean: loud > 0.0 && floor <= loud * CLEAN_FLOOR_FRACTION,
            floor: floor.max(1e-5),
            peaks,
        }
    }

    /// The test on a recording whose noise was taken out down to a clean one's level (see
    /// [`CLEARED_BED_DB`]), which its floor alone may not show.
    fn cleared(samples: &[f32]) -> Self {
        Self {
            clean: true,
            ..Self::new(samples)
        }
    }

    /// Whether `start_s..end_s` is a quiet pause of a clean recording.
    fn is_quiet(&self, start_s: f64, end_s: f64) -> bool {
        let from = ((start_s * 1000.0).ceil().max(0.0) as usize).min(self.peaks.len());
        let to = ((end_s * 1000.0).floor().max(0.0) as usize).clamp(from, self.peaks.len());
        let mut inside = self.peaks[from..to].to_vec();
        if !self.clean || inside.is_empty() {
            return false;
        }
        inside.sort_unstable_by(f32::total_cmp);
        inside[inside.len() / 2] <= self.floor * QUIET_FLOOR_MULTIPLE
    }
}

/// The longest silence inside a word: a stop consonant's closure (50-100 ms in read English).
const MAX_CLOSURE_S: f64 = 0.1;

/// Puts a short word on a sound of its own that no word was put on. Between quiet pauses of a
/// clean recording, a sound is somebody's word; when the aligner left it empty and squeezed the
/// word beside it ("a", "the") onto the edge of its neighbour's sound instead, that word moves
/// onto the lone sound (the edges are then snapped as any others). Only a word joined to its
/// other neighbour, shorter than the lone sound, across a pause `quiet` finds quiet, and only
/// onto sound `trusted` holds for. A lone sound no such word takes goes to the word it follows
/// or precedes across a closure's silence.
fn claim_lone_sounds(
    words: &mut [Word],
    regions: &[Region],
    trusted: impl Fn(f64) -> bool,
    quiet: impl Fn(f64, f64) -> bool,
) {
    for (k, region) in regions.iter().enumerate() {
        let length = region.end_s - region.start_s;
        if length < MIN_WORD_S || !trusted(region.start_s) {
            continue;
        }
        // The first word that ends inside or after the region.
        let i = words.partition_point(|w| w.end <= region.start_s);
        if i < words.len() && words[i].start < region.end_s {
            continue;
        }
        let squeezed = |w: &Word| w.end - w.start < length;
        // The word before, at the end of its neighbour's sound, across a quiet pause.
        let before = (i >= 2
            && k >= 1
            && words[i - 1].start - words[i - 2].end < SNAP_GAP_S
            && squeezed(&words[i - 1])
            && quiet(regions[k - 1].end_s, region.start_s))
        .then(|| i - 1);
        // Or the word after, at the start of its neighbour's sound.
        let after = (i + 1 < words.len()
            && k + 1 < regions.len()
            && words[i + 1].start - words[i].end < SNAP_GAP_S
            && squeezed(&words[i])
            && quiet(region.end_s, regions[k + 1].start_s))
        .then_some(i);
        if let Some(j) = before.or(after) {
            words[j].start = round_ms(region.start_s);
            words[j].end = round_ms(region.end_s);
            continue;
        }
        // Otherwise a lone sound just after a word (or just before one), nearer to it than to
        // the other word, across a quiet gap no longer than a stop's closure, is that word's
        // own: the release of its final "t" or "k", or its last syllable after a dip.
        let gap_before = (i >= 1).then(|| region.start_s - words[i - 1].end);
        let gap_after = (i < words.len()).then(|| words[i].start - region.end_s);
        let near = |gap: Option<f64>, other: Option<f64>| {
            gap.is_some_and(|g| g <= MAX_CLOSURE_S && other.is_none_or(|o| g < o))
        };
        if near(gap_before, gap_after) && quiet(words[i - 1].end, region.start_s) {
            words[i - 1].end = round_ms(region.end_s);
        } else if near(gap_after, gap_before) && quiet(region.end_s, words[i].start) {
            words[i].start = round_ms(region.start_s);
        }
    }
}

/// Moves word edges that touch a pause onto the sound's edges. The acoustic model is vague
/// about where silence ends ("the" or "and" after a pause often starts inside it), while the
/// signal is exact: a start in silence moves to the next onset, an end in silence back to the
/// last offset, and sound that would belong to no word (between a pause and an edge) is given to
/// the word beside it. Only edges where the aligned words leave a pause of at least
/// [`SNAP_GAP_S`], or that it joins across a silence of [`JOINED_PAUSE_S`] that `quiet` finds
/// as quiet as a clean recording's floor (function words after a comma: the aligner lets "and"
/// swallow the pause before it), are moved: elsewhere between words the aligner joins, the amplitude gate's pauses are
/// a stop's closure or a dip in noise or music, and the aligner's boundary is the better one
/// (measured: snapping those doubled the mean error with pink noise or a music bed).
/// Before a word that opens on the voice (`opens_on_voice`), the silence is no closure of that
/// word's, and [`JOINED_PAUSE_BEFORE_VOICE_S`] of it moves the word's start. Only edges for
/// which `trusted` holds are snapped onto.
fn snap_to_pauses(
    words: &mut [Word],
    regions: &[Region],
    trusted: impl Fn(f64) -> bool,
    quiet: impl Fn(f64, f64) -> bool,
    opens_on_voice: impl Fn(&str) -> bool,
) {
    if regions.is_empty() {
        return;
    }
    // Index of the region containing `t`, or of the first region after it (`Err`).
    let locate = |t: f64| -> Result<usize, usize> {
        let i = regions.partition_point(|r| r.end_s <= t);
        if i < regions.len() && regions[i].start_s <= t {
            Ok(i)
        } else {
            Err(i)
        }
    };
    // The aligner's own pauses, before any edge moves: for the boundary before each word,
    // whether it is a pause for the edge before it (the previous word's end) and for the edge
    // after it (the word's start). Where the aligner joins two words across a silence of the
    // signal, the silence is a pause all the same; before a word that opens on the voice, a
    // shorter one is a pause for that word's start only, since the word before may end in a
    // stop whose closure it is ("sleep | in": the end stays the aligner's).
    let pauses: Vec<(bool, bool)> = (0..=words.len())
        .map(|i| {
            if i == 0 || i == words.len() || words[i].start - words[i - 1].end >= SNAP_GAP_S {
                return (true, true);
            }
            let k = match locate(words[i].start) {
                Err(k) if 0 < k && k < regions.len() => k,
                _ => return (false, false),
            };
            let silence = regions[k].start_s - regions[k - 1].end_s;
            let is_quiet = || quiet(regions[k - 1].end_s, regions[k].start_s);
            if silence >= JOINED_PAUSE_S && is_quiet() {
                (true, true)
            } else if silence >= JOINED_PAUSE_BEFORE_VOICE_S
                && opens_on_voice(&words[i].word)
                && is_quiet()
            {
                (false, true)
            } else {
                (false, false)
            }
        })
        .collect();
    for i in 0..words.len() {
        let previous_end = if i == 0 { 0.0 } else { words[i - 1].end };
        let next_start = words.get(i + 1).map_or(f64::INFINITY, |w| w.start);
        let (start, end) = (words[i].start, words[i].end);
        let new_start = match locate(start) {
            // In silence: the word's sound starts at the next onset (if it is still the word's).
            Err(k) if k < regions.len() && regions[k].start_s < end => regions[k].start_s,
            // Inside sound that began after the previous word ended: all of it is this word's.
            Ok(k) if regions[k].start_s >= previous_end => regions[k].start_s,
            _ => start,
        };
        let new_start = if trusted(new_start) && pauses[i].1 {
            new_start
        } else {
            start
        };
        let new_end = match locate(end) {
            Err(k) if k > 0 && regions[k - 1].end_s > new_start => regions[k - 1].end_s,
            Ok(k) if regions[k].end_s <= next_start => regions[k].end_s,
            _ => end,
        };
        let new_end = if trusted(new_end) && pauses[i + 1].0 {
            new_end
        } else {
            end
        };
        if new_end - new_start >= MIN_WORD_S {
            words[i].start = round_ms(new_start);
            words[i].end = round_ms(new_end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groups::tests::word;

    fn region(start_s: f64, end_s: f64) -> Region {
        Region { start_s, end_s }
    }

    #[test]
    fn starts_in_a_pause_move_to_the_first_frame_of_voice() {
        // 32 ms frames: a voice from frame 6 (0.192 s) to 15, a pause, a voice from frame 20.
        let mut frames = vec![0.05_f32; 30];
        frames[6..16].fill(0.9);
        frames[20..].fill(0.9);
        let voice = Voice {
            regions: Vec::new(),
            frames,
        };
        // The first word took 30 ms of the noise before the voice; the second starts in the
        // voice; the third starts in the pause, but its voice would leave it under 30 ms.
        let mut words = [word(0.162, 0.40), word(0.40, 0.50), word(0.60, 0.65)];
        start_at_the_voice(&mut words, &voice);
        assert_eq!(words[0].start, 0.192);
        assert_eq!(words[1].start, 0.40);
        assert_eq!(words[2].start, 0.60);
    }

    #[test]
    fn starts_in_a_pause_the_denoiser_hears_move_to_its_voice() {
        // 10 ms frames: a voice to 1.30 s, a pause of 0.12 s, a voice from 1.42 s; a closure
        // of 50 ms before 2.05 s.
        let mut voice = vec![0.99_f32; 300];
        voice[130..142].fill(0.01);
        voice[200..205].fill(0.01);
        let opens = |word: &str| word != "peppers";
        // "they" joined to the word before in the pause moves to the voice: to the start of
        // the window of the first frame that hears it (frame 142 hears 1.41-1.43 s), never
        // into the window of the frame before, which heard none.
        let mut words = [word(0.5, 1.36), word(1.36, 1.6)];
        start_at_the_denoisers_voice(&mut words, &voice, opens);
        assert_eq!(words[1].start, 1.41);
        // Not a word opening on a stop, and not after a closure's silence.
        let mut words = [word(1.36, 1.6)];
        words[0].word = "peppers".into();
        start_at_the_denoisers_voice(&mut words, &voice, opens);
        assert_eq!(words[0].start, 1.36);
        let mut words = [word(2.01, 2.3)];
        start_at_the_denoisers_voice(&mut words, &voice, opens);
        assert_eq!(words[0].start, 2.01);
    }

    #[test]
    fn edges_next_to_pauses_move_onto_the_sound() {
        // Sound 0.50-1.20 and 1.60-2.40; the aligner let "the" start in the pause and left a
        // sliver of the first sound before the first word.
        let regions = [region(0.5, 1.2), region(1.6, 2.4)];
        let mut words = [word(0.53, 1.25), word(1.45, 1.8), word(1.8, 2.38)];
        snap_to_pauses(&mut words, &regions, |_| true, |_, _| false, |_| false);
        assert_eq!((words[0].start, words[0].end), (0.5, 1.2));
        assert_eq!((words[1].start, words[1].end), (1.6, 1.8));
        // The boundary inside continuous sound stays the aligner's; the last end reaches the
        // offset because no word follows in that sound.
        assert_eq!((words[2].start, words[2].end), (1.8, 2.4));
    }

    #[test]
    fn edges_between_joined_words_stay_the_aligners() {
        // The gate hears a dip at 1.00-1.06 (a stop's closure, or noise) where the aligner
        // joined two words at 1.02: that boundary is not moved onto the dip's edges. The
        // aligner's pause before the third word is real, and its start moves onto the onset.
        let regions = [region(0.5, 1.0), region(1.06, 1.5), region(1.8, 2.2)];
        let mut words = [word(0.5, 1.02), word(1.02, 1.5), word(1.7, 2.2)];
        snap_to_pauses(&mut words, &regions, |_| true, |_, _| false, |_| false);
        assert_eq!((words[0].start, words[0].end), (0.5, 1.02));
        assert_eq!((words[1].start, words[1].end), (1.02, 1.5));
        assert_eq!((words[2].start, words[2].end), (1.8, 2.2));
    }

    #[test]
    fn edges_outside_the_voice_are_not_snapped_onto() {
        // A music bed sounds from 0 s; the voice starts at 1.0 s. The music's onset is no
        // word's start, and its end no word's end.
        let regions = [region(0.0, 3.0)];
        let mut words = [word(1.02, 1.5), word(1.5, 2.1)];
        snap_to_pauses(
            &mut words,
            &regions,
            |t| (0.9..=2.3).contains(&t),
            |_, _| false,
            |_| false,
        );
        assert_eq!((words[0].start, words[0].end), (1.02, 1.5));
        assert_eq!((words[1].start, words[1].end), (1.5, 2.1));
    }

    #[test]
    fn joined_words_across_a_quiet_pause_move_onto_its_edges() {
        // "...fields, and": the aligner joins the two words at 1.40, inside a 90 ms silence
        // from 1.35 to 1.44. A quiet pause of a clean recording is a pause; a dip that is not
        // quiet, or shorter than 60 ms, is not.
        let regions = [region(0.5, 1.35), region(1.44, 2.0)];
        let joined = [word(0.5, 1.4), word(1.4, 2.0)];
        let mut words = joined.clone();
        snap_to_pauses(&mut words, &regions, |_| true, |_, _| true, |_| false);
        assert_eq!((words[0].end, words[1].start), (1.35, 1.44));
        let mut words = joined.clone();
        snap_to_pauses(&mut words, &regions, |_| true, |_, _| false, |_| false);
        assert_eq!((words[0].end, words[1].start), (1.4, 1.4));
        let short = [region(0.5, 1.37), region(1.42, 2.0)];
        let mut words = joined.clone();
        snap_to_pauses(&mut words, &short, |_| true, |_, _| true, |_| false);
        assert_eq!((words[0].end, words[1].start), (1.4, 1.4));
        // Before a word that opens on the voice, 50 ms of quiet silence is a pause for its
        // start ("embassy | on"); the word before keeps its end, which may be a stop's closure
        // ("sleep | in"). Not 20 ms.
        let mut words = joined.clone();
        snap_to_pauses(&mut words, &short, |_| true, |_, _| true, |_| true);
        assert_eq!((words[0].end, words[1].start), (1.4, 1.42));
        let shorter = [region(0.5, 1.39), region(1.41, 2.0)];
        let mut words = joined;
        snap_to_pauses(&mut words, &shorter, |_| true, |_, _| true, |_| true);
        assert_eq!((words[0].end, words[1].start), (1.4, 1.4));
    }

    #[test]
    fn only_a_clean_recordings_floor_is_quiet() {
        let tone = |i: usize, amplitude: f32| amplitude * (i as f32 * 0.3).sin();
        // Near silence around 1 s of speech-like tone, a 0.1 s pause, and 1 s of tone.
        let mut clean: Vec<f32> = (0..8_000).map(|i| tone(i, 1e-4)).collect();
        clean.extend((0..16_000).map(|i| tone(i, 0.5)));
        clean.extend((0..1_600).map(|i| tone(i, 1e-4)));
        clean.extend((0..16_000).map(|i| tone(i, 0.5)));
        clean.extend((0..8_000).map(|i| tone(i, 1e-4)));
        let test = QuietTest::new(&clean);
        assert!(test.is_quiet(1.51, 1.59));
        assert!(!test.is_quiet(1.0, 1.1), "the tone is not quiet");
        // The same with noise at a fifth of the level throughout: not a clean recording.
        let noisy: Vec<f32> = clean
            .iter()
            .enumerate()
            .map(|(i, x)| x + 0.1 * (((i * 7919) % 101) as f32 / 50.0 - 1.0))
            .collect();
        assert!(!QuietTest::new(&noisy).is_quiet(1.51, 1.59));
    }

    #[test]
    fn a_squeezed_word_moves_onto_a_lone_sound() {
        // "After a long": sounds 0.50-0.88, 1.00-1.23 and 1.53-1.90. The aligner put "a" at the
        // end of "After" and nothing on the second sound.
        let regions = [region(0.5, 0.88), region(1.0, 1.23), region(1.53, 1.9)];
        let mut words = [word(0.5, 0.81), word(0.81, 0.88), word(1.53, 1.9)];
        claim_lone_sounds(&mut words, &regions, |_| true, |_, _| true);
        assert_eq!((words[1].start, words[1].end), (1.0, 1.23));
        snap_to_pauses(&mut words, &regions, |_| true, |_, _| true, |_| false);
        assert_eq!((words[0].start, words[0].end), (0.5, 0.88));

        // "fund a bicycle": "a" squeezed onto the start of "bicycle".
        let regions = [region(5.31, 5.67), region(5.84, 6.08), region(6.3, 6.86)];
        let mut words = [word(5.31, 5.67), word(6.3, 6.34), word(6.34, 6.86)];
        claim_lone_sounds(&mut words, &regions, |_| true, |_, _| true);
        assert_eq!((words[1].start, words[1].end), (5.84, 6.08));
    }

    #[test]
    fn a_stops_release_after_its_closure_belongs_to_the_word() {
        // "met | on": the "t" is released 30 ms after the vowel stops, then a pause.
        let regions = [region(1.83, 2.05), region(2.08, 2.13), region(2.55, 2.81)];
        let mut words = [word(1.83, 2.05), word(2.55, 2.81)];
        claim_lone_sounds(&mut words, &regions, |_| true, |_, _| true);
        assert_eq!((words[0].start, words[0].end), (1.83, 2.13));
        // Not across a pause longer than a closure, and not in a noisy pause.
        let regions = [region(1.83, 2.05), region(2.2, 2.25), region(2.55, 2.81)];
        let mut words = [word(1.83, 2.05), word(2.55, 2.81)];
        claim_lone_sounds(&mut words, &regions, |_| true, |_, _| true);
        assert_eq!(words[0].end, 2.05);
        let regions = [region(1.83, 2.05), region(2.08, 2.13), region(2.55, 2.81)];
        claim_lone_sounds(&mut words, &regions, |_| true, |_, _| false);
        assert_eq!(words[0].end, 2.05);
    }

    #[test]
    fn a_lone_sound_stays_empty_unless_a_pause_is_quiet_and_a_word_squeezed() {
        let regions = [region(0.5, 0.88), region(1.0, 1.23), region(1.53, 1.9)];
        let words = [word(0.5, 0.81), word(0.81, 0.88), word(1.53, 1.9)];
        // Noise in the pause: a dip of the music or noise, not a word.
        let mut noisy = words.clone();
        claim_lone_sounds(&mut noisy, &regions, |_| true, |_, _| false);
        assert_eq!(noisy, words);
        // A word as long as the sound is not squeezed.
        let mut long = [word(0.5, 0.6), word(0.6, 0.88), word(1.53, 1.9)];
        let before = long.clone();
        claim_lone_sounds(&mut long, &regions, |_| true, |_, _| true);
        assert_eq!(long, before);
    }
}
