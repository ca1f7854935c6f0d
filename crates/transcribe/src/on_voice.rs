//! A given text whisper heard little of, laid on the voice of the whole input at once.
//!
//! A text is normally placed on whisper's own words ([`crate::given`]): the words whisper heard
//! are anchors, and the others fill the time between them. Over music, in a song, or in a
//! language the model hears badly, whisper may hear a handful of the text's words, or none:
//! the anchors are then few, sometimes wrong, and the text piles up around them (a four-minute
//! song's 189 words were once put inside nine seconds). Here the text is aligned by the
//! acoustic model in one pass over the stretches of the input where someone sings or speaks,
//! joined end to end, so that every word lands on voice, in order, spread over the whole
//! input; where that alignment cannot be made, the words share the voiced time by length.

use caption_align::LanguageAligner;
use caption_core::Word;

use crate::given::{letters, runs_matching};
use crate::speech::{Region, SAMPLE_RATE_HZ, round_ms};

/// Under this share of a text's words heard by whisper, the text is laid on the voice
/// ([`lay_on_voice`]) rather than on whisper's words. On the bench's read speech whisper hears
/// 85-95 % of a true text; over a music bed in a song, 0-40 %.
pub(crate) const HEARD_LITTLE: f64 = 0.5;

/// Silence put between two voiced stretches joined end to end: a pause the aligner can end a
/// word in, without taking time from either stretch.
const JOIN_SILENCE_S: f64 = 0.3;
/// Voiced stretches this close are one.
const MERGE_GAP_S: f64 = 0.3;
/// Sound kept on each side of a voiced stretch: Silero's regions are padded already, a
/// word's first consonant may lie just before.
const VOICE_MARGIN_S: f64 = 0.05;

/// A voice detector's regions must hold at least this much time a word of a text for the
/// text to be laid on them; less, and the sound is taken instead. Silero hears a voice in 30 s
/// of a four-minute song of 200 words sung over a music bed (0.15 s a word); read speech gives
/// 0.3-0.5 s a word.
const VOICE_S_PER_WORD: f64 = 0.3;

/// The voiced stretches of an input of `total_s` for a text of `words` words: `voice` (where
/// a voice detector heard someone) when known and long enough for the words (see
/// [`VOICE_S_PER_WORD`]), else `sound`, widened by [`VOICE_MARGIN_S`] and merged across gaps
/// under [`MERGE_GAP_S`].
pub(crate) fn voiced_stretches(
    voice: Option<&[Region]>,
    sound: &[Region],
    total_s: f64,
    words: usize,
) -> Vec<Region> {
    let enough = |v: &&[Region]| {
        v.iter().map(Region::duration_s).sum::<f64>() >= VOICE_S_PER_WORD * words as f64
    };
    let source = voice
        .filter(|v| !v.is_empty())
        .filter(enough)
        .unwrap_or(sound);
    let mut out: Vec<Region> = Vec::new();
    for region in source {
        let start_s = (region.start_s - VOICE_MARGIN_S).max(0.0);
        let end_s = (region.end_s + VOICE_MARGIN_S).min(total_s);
        if end_s <= start_s {
            continue;
        }
        match out.last_mut() {
            Some(last) if start_s - last.end_s < MERGE_GAP_S => last.end_s = last.end_s.max(end_s),
            _ => out.push(Region { start_s, end_s }),
        }
    }
    out
}

/// Stretches of an input joined end to end, with [`JOIN_SILENCE_S`] of silence between two.
struct Joined {
    samples: Vec<f32>,
    /// For each stretch, where it begins in the joined samples (seconds) and in the input.
    starts: Vec<(f64, Region)>,
}

impl Joined {
    fn new(samples: &[f32], stretches: &[Region]) -> Self {
        let rate = SAMPLE_RATE_HZ as f64;
        let index = |t: f64| ((t * rate).round().max(0.0) as usize).min(samples.len());
        let silence = vec![0.0; (JOIN_SILENCE_S * rate) as usize];
        let mut joined = Vec::new();
        let mut starts = Vec::with_capacity(stretches.len());
        for (k, stretch) in stretches.iter().enumerate() {
            if k > 0 {
                joined.extend_from_slice(&silence);
            }
            starts.push((joined.len() as f64 / rate, *stretch));
            joined.extend_from_slice(&samples[index(stretch.start_s)..index(stretch.end_s)]);
        }
        Self {
            samples: joined,
            starts,
        }
    }

    /// The input's time for `t_s` of the joined samples. A time in the silence between two
    /// stretches goes to the end of the stretch before (`ending`: a word's end) or the start
    /// of the one after (a start).
    fn input_time(&self, t_s: f64, ending: bool) -> f64 {
        let k = self
            .starts
            .partition_point(|(at_s, _)| *at_s <= t_s)
            .saturating_sub(1);
        let (at_s, stretch) = self.starts[k];
        let inside = stretch.start_s + (t_s - at_s);
        if inside <= stretch.end_s {
            return inside;
        }
        match (ending, self.starts.get(k + 1)) {
            (false, Some((_, next))) => next.start_s,
            _ => stretch.end_s,
        }
    }
}

/// Lays `words` (a given text, in order; `line_starts` says which begin a line, see
/// [`crate::lines::line_starts`]) on the voiced `stretches` of `samples`: aligned in one pass
/// by `aligner` on the stretches joined end to end when it can; else, for a text in lines, each
/// line on its own run of stretches ([`lines_on_stretches`]), aligned there or sharing it by
/// letters; else the words share the stretches' time by their letters, and then each run of
/// stretches of up to [`CHUNK_S`] is aligned with the words that fell in it. Every word then
/// lies inside a stretch, in order. Returns whether the aligner placed them all (`false`: some
/// or all kept their share by length; with no stretch at all, the words are left as they were).
pub(crate) fn lay_on_voice(
    aligner: Option<&LanguageAligner<'_>>,
    samples: &[f32],
    words: &mut [Word],
    line_starts: &[bool],
    stretches: &[Region],
) -> bool {
    if words.is_empty() || stretches.is_empty() {
        return false;
    }
    let started = std::time::Instant::now();
    let Some(aligner) = aligner else {
        share_by_letters(words, stretches);
        return false;
    };
    if align_joined(aligner, samples, words, stretches) {
        tracing::debug!(
            words = words.len(),
            elapsed_s = started.elapsed().as_secs_f64(),
            "a text whisper heard little of, aligned on the voice at once"
        );
        return true;
    }
    if let Some(lines) = lines_on_stretches(words, line_starts, stretches) {
        let mut all = true;
        for (line, runs) in lines {
            let (words, stretches) = (&mut words[line], &stretches[runs]);
            if !align_joined(aligner, samples, words, stretches) {
                share_by_letters(words, stretches);
                all = false;
            }
        }
        tracing::debug!(
            words = words.len(),
            all,
            elapsed_s = started.elapsed().as_secs_f64(),
            "a text whisper heard little of, aligned on the voice line by line"
        );
        return all;
    }
    // A long search over music can lose its way (a four-minute song's search ended with no
    // word); shorter ones, each on its own words, do not, and a word misplaced between two
    // of them costs those two only.
    share_by_letters(words, stretches);
    let mut all = true;
    let mut first_stretch = 0;
    while first_stretch < stretches.len() {
        let mut last = first_stretch + 1;
        let mut voiced_s = stretches[first_stretch].duration_s();
        while last < stretches.len() && voiced_s + stretches[last].duration_s() <= CHUNK_S {
            voiced_s += stretches[last].duration_s();
            last += 1;
        }
        let chunk = &stretches[first_stretch..last];
        let (from_s, to_s) = (chunk[0].start_s, chunk[chunk.len() - 1].end_s);
        let inside: Vec<usize> = (0..words.len())
            .filter(|&i| (from_s..=to_s).contains(&((words[i].start + words[i].end) / 2.0)))
            .collect();
        if let (Some(&a), Some(&b)) = (inside.first(), inside.last()) {
            all &= align_joined(aligner, samples, &mut words[a..=b], chunk);
        }
        first_stretch = last;
    }
    tracing::debug!(
        words = words.len(),
        all,
        elapsed_s = started.elapsed().as_secs_f64(),
        "a text whisper heard little of, aligned on the voice in runs of stretches"
    );
    all
}

/// Each line of `words` (`line_starts`: which begin one) with the run of `stretches` it is sung
/// or said on: the stretches cut into as many runs as there are lines, each run's voiced time
/// as near as can be to its line's share of the whole by letters ([`runs_matching`]). A line
/// ends where the voice pauses, and over music the voice found is broken inside lines too
/// (Silero loses a held low note): sharing the words out by letters across every stretch put
/// a song's second line in the rest of its first line's stretch, 4 s early. `None` for a text
/// of one line, or with fewer stretches than lines.
#[allow(clippy::type_complexity, reason = "pairs of ranges, named by the doc")]
fn lines_on_stretches(
    words: &[Word],
    line_starts: &[bool],
    stretches: &[Region],
) -> Option<Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>> {
    let mut lines: Vec<std::ops::Range<usize>> = Vec::new();
    for i in 0..words.len() {
        match lines.last_mut() {
            Some(line) if line_starts.get(i) != Some(&true) => line.end = i + 1,
            _ => lines.push(i..i + 1),
        }
    }
    if lines.len() < 2 {
        return None;
    }
    let letters: Vec<f64> = lines
        .iter()
        .map(|line| {
            words[line.clone()]
                .iter()
                .map(|w| letters(&w.word))
                .sum::<usize>() as f64
        })
        .collect();
    let voiced_s: Vec<f64> = stretches.iter().map(Region::duration_s).collect();
    let pace_s = voiced_s.iter().sum::<f64>() / letters.iter().sum::<f64>();
    let targets: Vec<f64> = letters.iter().map(|l| l * pace_s).collect();
    let gap_before = |k: usize| stretches[k].start_s - stretches[k - 1].end_s;
    let cuts = runs_matching(&voiced_s, &targets, gap_before)?;
    Some(
        lines
            .into_iter()
            .enumerate()
            .map(|(j, line)| (line, cuts[j]..cuts[j + 1]))
            .collect(),
    )
}

/// Voiced time aligned in one search when the whole input could not be (see [`lay_on_voice`]).
const CHUNK_S: f64 = 20.0;

/// Aligns `words` on `stretches` joined end to end and writes their times; `false` (words
/// untouched) when the aligner cannot.
fn align_joined(
    aligner: &LanguageAligner<'_>,
    samples: &[f32],
    words: &mut [Word],
    stretches: &[Region],
) -> bool {
    let joined = Joined::new(samples, stretches);
    let texts: Vec<&str> = words.iter().map(|w| w.punctuated_word.as_str()).collect();
    match aligner.align(&joined.samples, &texts) {
        Ok(spans) => {
            for (word, span) in words.iter_mut().zip(spans) {
                let start_s = joined.input_time(span.start_s, false);
                let end_s = joined.input_time(span.end_s, true).max(start_s);
                word.start = round_ms(start_s);
                word.end = round_ms(end_s);
            }
            true
        }
        Err(error) => {
            tracing::debug!(%error, words = words.len(), "no alignment on the joined voice");
            false
        }
    }
}

/// Spreads `words` over the time of `stretches` (none between them) by their letters. A word
/// never straddles two stretches: it takes what is left of one when that is at least half its
/// share, else it starts the next.
fn share_by_letters(words: &mut [Word], stretches: &[Region]) {
    let letters = |w: &Word| letters(&w.word);
    let total_letters: usize = words.iter().map(letters).sum();
    let voiced_s: f64 = stretches.iter().map(Region::duration_s).sum();
    let per_letter_s = voiced_s / total_letters as f64;
    // Where the voiced time is taken up to: stretch `k`, `used_s` into it.
    let (mut k, mut used_s) = (0, 0.0);
    for word in words.iter_mut() {
        let share_s = letters(word) as f64 * per_letter_s;
        loop {
            let room_s = stretches[k].duration_s() - used_s;
            let last = k + 1 == stretches.len();
            if share_s <= room_s + 1e-9 || room_s >= share_s / 2.0 || last {
                let start_s = stretches[k].start_s + used_s;
                used_s += share_s.min(room_s.max(0.0));
                word.start = round_ms(start_s);
                word.end = round_ms(stretches[k].start_s + used_s);
                break;
            }
            k += 1;
            used_s = 0.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `words` sung over a music bed ([`caption_testkit::speech::song_over_music`]): samples
    /// and each word's truth.
    fn song(words: &[&str]) -> (Vec<f32>, Vec<caption_testkit::speech::TimedWord>) {
        use caption_testkit::speech::{read_wav_16k_f32, song_over_music};
        let dir = tempfile::tempdir().unwrap();
        let wav = dir.path().join("song.wav");
        let truth = song_over_music(words, &wav).unwrap();
        let samples = read_wav_16k_f32(&wav).unwrap();
        (samples, truth)
    }

    #[test]
    #[allow(clippy::unwrap_used, reason = "a test fails loudly")]
    fn lyrics_whisper_did_not_hear_are_laid_in_order_over_the_whole_song() {
        // The path a given text takes when whisper's transcript of a song is nearly empty:
        // 200 words, four minutes, nothing heard.
        const LYRICS: [&str; 20] = [
            "the", "morning", "light", "is", "on", "the", "road", "and", "I", "walk", "along",
            "the", "river", "where", "birds", "are", "flying", "high", "we", "sing",
        ];
        let lyrics: Vec<&str> = (0..200).map(|i| LYRICS[i % LYRICS.len()]).collect();
        let (samples, truth) = song(&lyrics);
        let total_s = samples.len() as f64 / SAMPLE_RATE_HZ as f64;
        assert!(total_s >= 230.0, "{total_s} s");
        let models = crate::models::models_dir().unwrap();
        let vad = crate::vad::Vad::open(&models.join(crate::vad::VAD_MODEL_FILE)).unwrap();
        let voice = vad.voice(&samples).unwrap();
        let sound = crate::speech::speech_regions(&samples, &crate::speech::GateParams::default());
        // Silero hears a voice in a seventh of this song: the sound is taken instead.
        let stretches = voiced_stretches(Some(&voice.regions), &sound, total_s, lyrics.len());
        // As a transcription finds it: the song is sung, and its words aligned as sung.
        assert!(crate::sung::singing(&samples, crate::sung::pitched(&samples), &voice).sung);
        let aligner = caption_align::Aligner::open_installed().unwrap();
        let english = aligner.language("en").unwrap().sung();
        // What placing the words on whisper's (empty) transcript gives: all over the input.
        let mut words: Vec<Word> = lyrics.iter().map(|&w| Word::new(0.0, 0.0, w)).collect();
        assert!(lay_on_voice(
            Some(&english),
            &samples,
            &mut words,
            &[],
            &stretches
        ));
        assert!(words.windows(2).all(|w| w[0].end <= w[1].start + 1e-9));
        let lines: Vec<(f64, f64)> = truth
            .chunks(10)
            .map(|line| (line[0].start_s, line[line.len() - 1].end_s))
            .collect();
        // Spread over the whole song, every word inside the singing.
        assert!(
            (words[0].start - lines[0].0).abs() <= 1.0,
            "first word at {:.2} s, sung from {:.2} s",
            words[0].start,
            lines[0].0
        );
        let last = lines[lines.len() - 1];
        assert!(
            (words[199].end - last.1).abs() <= 1.0,
            "last word ends at {:.2} s, sung to {:.2} s",
            words[199].end,
            last.1
        );
        for word in &words {
            let middle = (word.start + word.end) / 2.0;
            assert!(
                lines
                    .iter()
                    .any(|&(a, b)| (a - 0.3..=b + 0.3).contains(&middle)),
                "{word:?} outside the singing"
            );
        }
        let onsets: Vec<f64> = words
            .iter()
            .zip(&truth)
            .map(|(w, t)| (w.start - t.start_s).abs())
            .collect();
        let within = onsets.iter().filter(|e| **e <= 0.3).count() as f64 / onsets.len() as f64;
        let mean = onsets.iter().sum::<f64>() / onsets.len() as f64;
        eprintln!("laid on the voice: onsets {within:.2} within 0.3 s, mean {mean:.3} s");
        // 82 % within 0.3 s and 0.24 s mean aligned as sung (80 % and 0.21 s as speech).
        assert!(within >= 0.75, "{within:.2} within 0.3 s, mean {mean:.3} s");
    }

    fn region(start_s: f64, end_s: f64) -> Region {
        Region { start_s, end_s }
    }

    #[test]
    fn stretches_are_the_voice_widened_and_merged() {
        let voice = [region(1.0, 2.0), region(2.2, 3.0), region(6.0, 7.0)];
        let got = voiced_stretches(Some(&voice), &[], 6.5, 4);
        assert_eq!(got, vec![region(0.95, 3.05), region(5.95, 6.5)]);
        // No voice known, or too little for the words: the sound.
        let got = voiced_stretches(None, &[region(0.0, 1.0)], 10.0, 4);
        assert_eq!(got, vec![region(0.0, 1.05)]);
        let got = voiced_stretches(Some(&voice), &[region(0.0, 1.0)], 10.0, 20);
        assert_eq!(got, vec![region(0.0, 1.05)]);
    }

    #[test]
    fn joined_times_map_back_into_their_stretches() {
        let samples = vec![0.0; 16_000 * 10];
        let joined = Joined::new(&samples, &[region(1.0, 2.0), region(5.0, 6.5)]);
        // 1 s of the first stretch, 0.3 s of silence, 1.5 s of the second.
        assert_eq!(joined.samples.len(), 16_000 * 28 / 10);
        assert!((joined.input_time(0.5, false) - 1.5).abs() < 1e-9);
        assert!((joined.input_time(1.5, false) - 5.2).abs() < 1e-9);
        // In the joining silence: an end stays in the stretch before, a start goes on.
        assert!((joined.input_time(1.1, true) - 2.0).abs() < 1e-9);
        assert!((joined.input_time(1.1, false) - 5.0).abs() < 1e-9);
    }

    #[test]
    fn words_shared_by_letters_stay_on_the_voice_in_order() {
        let mut words: Vec<Word> = ["aa", "bbbb", "cc", "dddd"]
            .iter()
            .map(|&w| Word::new(0.0, 0.0, w))
            .collect();
        let stretches = [region(1.0, 2.0), region(10.0, 12.0)];
        share_by_letters(&mut words, &stretches);
        let times: Vec<(f64, f64)> = words.iter().map(|w| (w.start, w.end)).collect();
        // 12 letters over 3 s: 0.25 s a letter; "bbbb" has half its share left in the first
        // stretch and is squeezed into it.
        assert_eq!(
            times,
            vec![(1.0, 1.5), (1.5, 2.0), (10.0, 10.5), (10.5, 11.5)]
        );
        let mut words: Vec<Word> = ["aaaaaa", "b", "cccccc"]
            .iter()
            .map(|&w| Word::new(0.0, 0.0, w))
            .collect();
        share_by_letters(&mut words, &[region(0.0, 1.0), region(5.0, 6.3)]);
        // 13 letters over 2.3 s; "aaaaaa" fills the first stretch and "b" starts the second.
        assert_eq!(
            (words[0].start, words[0].end, words[1].start),
            (0.0, 1.0, 5.0)
        );
        assert!(words.iter().all(|w| w.end <= 1.0 || w.start >= 5.0));
    }

    #[test]
    fn each_line_takes_the_run_of_stretches_nearest_its_share_and_cut_at_rests() {
        let words: Vec<Word> = ["aaaa", "bbbb", "cccc", "dddd", "eeee", "ffff"]
            .iter()
            .map(|&w| Word::new(0.0, 0.0, w))
            .collect();
        let lines = [false, false, true, false, false, false];
        // The first line (8 letters) sung on 1-3 s and 3.6-4.6 s, a rest, the second (16
        // letters) on 8-9 s and 9.5-12 s. By voiced time alone the first line would end after
        // 1-3 s (2 s against its share of 2.17 s); the rest after 4.6 s is where it ends.
        let stretches = [
            region(1.0, 3.0),
            region(3.6, 4.6),
            region(8.0, 9.0),
            region(9.5, 12.0),
        ];
        let got = lines_on_stretches(&words, &lines, &stretches).unwrap();
        assert_eq!(got, vec![(0..2, 0..2), (2..6, 2..4)]);
        // One line, or more lines than stretches: nothing to cut.
        assert_eq!(lines_on_stretches(&words, &[], &stretches), None);
        let every = [false, true, true, true, true, true];
        assert_eq!(lines_on_stretches(&words, &every, &stretches), None);
    }
}
