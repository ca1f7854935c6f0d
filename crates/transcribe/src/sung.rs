//! Sung input: told from speech by its held notes, and its voice widened over them.
//!
//! Silero hears the first syllables of a sung line over a music bed and loses the notes held
//! after them; the words of those notes were then never shown to whisper, and the voice the
//! aligner's words are kept to ended in the middle of a word. A held note as loud as the voice
//! Silero heard is taken for voice too, and so is any periodic run as loud (a short note).
//! Only an input whose voice holds notes is sung: speech glides, and keeps its path untouched.

use caption_align::{PITCH_HOP_S, Pitch};

use crate::speech::{Region, SAMPLE_RATE_HZ};
use crate::vad::Voice;

/// An input is sung when held notes as loud as its voice fill at least this share of the time
/// it has a voice (where Silero hears one, and those notes). Measured: the bench's fifteen
/// songs (Festival kal and ked over a music bed 8 dB under) 0.21-0.60, the same songs without
/// the bed 0.35-0.73; the bench's read speech (231 clips: espeak-ng and Festival voices in seven
/// languages; clean, pink noise, music bed, gapped) 0-0.124.
const SUNG_SHARE: f64 = 0.17;
/// A held note is voice when it is at most this far under the median loudness of the frames
/// Silero calls speech, dB: a music bed's own notes lie further under the voice. On the
/// bench's songs (a bed 8 dB under the voice) 6 dB let the bed's notes be 5-8 % of the notes
/// taken, 4 dB none.
const NOTE_UNDER_VOICE_DB: f64 = 4.0;
/// Kept around a held note or periodic run: the consonants before and after its vowel.
const NOTE_PAD_S: f64 = 0.1;

/// A periodic run at least this long is voice when it is as loud as the voice: a sung
/// syllable's vowel on a short note. The held notes alone left a line's short notes
/// between them to the music: on the bench's tuning songs the voiced stretches covered 91.5 %
/// of the sung time (ked's low lines 65-85 %), with these runs 94.2 %, for 0.05 s more taken
/// for voice outside the singing.
const PERIODIC_MIN_S: f64 = 0.1;

/// What the pitch track says of an input.
#[derive(Debug, Clone, Default)]
pub(crate) struct Singing {
    /// Whether the input is sung (see [`SUNG_SHARE`]).
    pub(crate) sung: bool,
    /// The held notes and periodic runs as loud as the voice, padded by [`NOTE_PAD_S`], in
    /// time order.
    notes: Vec<Region>,
}

/// Where 16 kHz samples are periodic, voice or not: the part of [`singing`] that does not
/// need Silero's voice, so it can run beside it ([`pitched`]).
#[derive(Debug)]
pub(crate) struct Pitched {
    /// The held notes ([`Pitch::held_notes`]).
    held: Vec<Region>,
    /// The periodic runs of at least [`PERIODIC_MIN_S`] ([`Pitch::periodic_runs`]).
    runs: Vec<Region>,
}

/// The held notes and periodic runs of 16 kHz `samples`.
pub(crate) fn pitched(samples: &[f32]) -> Pitched {
    let pitch = Pitch::track(samples);
    let regions = |ranges: Vec<std::ops::Range<f64>>| -> Vec<Region> {
        ranges
            .into_iter()
            .map(|r| Region {
                start_s: r.start,
                end_s: r.end,
            })
            .collect()
    };
    Pitched {
        held: regions(pitch.held_notes()),
        runs: regions(pitch.periodic_runs(PERIODIC_MIN_S)),
    }
}

/// Whether 16 kHz `samples`, whose `voice` Silero found and whose periodic parts are
/// `pitched` ([`pitched`]), are sung: held notes as loud as that voice. Without a voice,
/// nothing is sung.
pub(crate) fn singing(samples: &[f32], pitched: Pitched, voice: &Voice) -> Singing {
    let Some(voice_db) = speech_level_db(samples, voice) else {
        return Singing::default();
    };
    let total_s = samples.len() as f64 / SAMPLE_RATE_HZ as f64;
    let as_loud = |regions: Vec<Region>| -> Vec<Region> {
        regions
            .into_iter()
            .filter(|note| level_db(samples, note) >= voice_db - NOTE_UNDER_VOICE_DB)
            .collect()
    };
    let pad = |note: &Region| Region {
        start_s: (note.start_s - NOTE_PAD_S).max(0.0),
        end_s: (note.end_s + NOTE_PAD_S).min(total_s),
    };
    let held = as_loud(pitched.held);
    let held_s: f64 = held.iter().map(Region::duration_s).sum();
    let padded: Vec<Region> = held.iter().map(pad).collect();
    let mut widened = voice.clone();
    widened.widen(&padded);
    let voice_s: f64 = widened.regions.iter().map(Region::duration_s).sum();
    let share = held_s / voice_s.max(f64::EPSILON);
    let sung = share >= SUNG_SHARE;
    let runs = as_loud(pitched.runs);
    tracing::debug!(
        share,
        sung,
        notes = held.len(),
        runs = runs.len(),
        "held notes and periodic runs as loud as the voice"
    );
    let mut notes = padded;
    notes.extend(runs.iter().map(pad));
    notes.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    Singing { sung, notes }
}

impl Singing {
    /// Widens `voice` over the held notes and periodic runs as loud as the voice, when the
    /// input is sung.
    pub(crate) fn widen_voice(&self, voice: &mut Voice) {
        if self.sung {
            voice.widen(&self.notes);
        }
    }
}

/// Mean power of `samples` over `region`, dB.
fn level_db(samples: &[f32], region: &Region) -> f64 {
    let index = |t: f64| ((t * SAMPLE_RATE_HZ as f64) as usize).min(samples.len());
    let part = &samples[index(region.start_s)..index(region.end_s)];
    let power = part.iter().map(|&x| f64::from(x * x)).sum::<f64>() / part.len().max(1) as f64;
    10.0 * power.max(1e-12).log10()
}

/// The median level of the 10 ms frames Silero calls speech, dB.
fn speech_level_db(samples: &[f32], voice: &Voice) -> Option<f64> {
    let mut levels: Vec<f64> = (0..samples.len() / (SAMPLE_RATE_HZ / 100))
        .map(|k| k as f64 * PITCH_HOP_S)
        .filter(|&t| voice.speech_at(t))
        .map(|t| {
            level_db(
                samples,
                &Region {
                    start_s: t,
                    end_s: t + PITCH_HOP_S,
                },
            )
        })
        .collect();
    if levels.is_empty() {
        return None;
    }
    levels.sort_unstable_by(f64::total_cmp);
    Some(levels[levels.len() / 2])
}

#[cfg(test)]
mod tests {
    use super::*;
    use caption_testkit::speech::{festival_sentence, festival_song, mix_music_bed, read_wav_16k};

    fn samples(wav: &std::path::Path) -> Vec<f32> {
        read_wav_16k(wav)
            .unwrap()
            .iter()
            .map(|&s| f32::from(s) / 32768.0)
            .collect()
    }

    /// Whether `samples` are sung, by Silero's voice and their held notes.
    fn held(samples: &[f32]) -> bool {
        let models = crate::models::models_dir().unwrap();
        let vad = crate::vad::Vad::open(&models.join(crate::vad::VAD_MODEL_FILE)).unwrap();
        singing(samples, pitched(samples), &vad.voice(samples).unwrap()).sung
    }

    #[test]
    #[allow(clippy::unwrap_used, reason = "a test fails loudly")]
    fn singing_over_music_is_sung_and_speech_over_music_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let (sung, spoken) = (dir.path().join("sung.wav"), dir.path().join("spoken.wav"));
        let score = "rest 1.0\nthe A2 0.5\nriver C3 0.5\nflows E3 1.5\nrest 0.6\n\
                     down D3 0.5\nto C3 0.5\nthe G2 0.5\nsea A2 2.0\nrest 1.0\n";
        let lyrics = "the river flows down to the sea";
        for (voice, wav) in [("kal", &sung), ("ked", &sung)] {
            festival_song(score, voice, &dir.path().join("clean.wav")).unwrap();
            mix_music_bed(&dir.path().join("clean.wav"), wav, 8.0).unwrap();
            assert!(held(&samples(wav)), "{voice} sung");
        }
        for voice in ["kal", "slt"] {
            festival_sentence(lyrics, voice, &dir.path().join("clean.wav")).unwrap();
            mix_music_bed(&dir.path().join("clean.wav"), &spoken, 10.0).unwrap();
            assert!(!held(&samples(&spoken)), "{voice} spoken");
        }
    }
}
