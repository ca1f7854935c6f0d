//! Dialogues with known speakers: turns spoken by espeak-ng and Festival voices, one after
//! another with short pauses between, every word's time and speaker known exactly.

use std::path::Path;

use anyhow::ensure;

use crate::speech::{
    espeak_sentence, festival_sentence, mix_music_bed, read_wav_16k, read_wav_16k_f32,
    write_wav_16k,
};

/// A synthetic voice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Voice {
    /// An espeak-ng voice (`en-us`, `en-gb+f3`).
    Espeak(&'static str),
    /// A Festival voice (`slt`, `kal`, `kdl`).
    Festival(&'static str),
}

/// A word of a dialogue and who says it.
#[derive(Debug, Clone, PartialEq)]
pub struct SpokenWord {
    /// The word as the voice spoke it.
    pub word: String,
    /// Where its sound starts, seconds from the start of the clip.
    pub start_s: f64,
    /// Where it ends, seconds.
    pub end_s: f64,
    /// The speaker, numbered 0, 1, … in order of first speech.
    pub speaker: usize,
}

/// Lines of a conversation about an evening out, for dialogues of any number of turns.
pub const LINES: [&str; 9] = [
    "Did you get the tickets for the concert on Friday night?",
    "Yes, I bought two of them this morning, and they were cheaper than I expected.",
    "Wonderful. Where are we sitting, near the stage or up in the balcony?",
    "We are in the balcony, but the view from there is supposed to be very good.",
    "That sounds fine to me. Should we have dinner somewhere before the show starts?",
    "There is a small Italian place around the corner from the hall that I like.",
    "Perfect, let us meet there at six and walk over together afterwards.",
    "Agreed. I will bring the tickets and you can bring your appetite.",
    "See you on Friday then, and do not forget your coat this time.",
];

/// Speaks `turns` (a voice and its line each) one after another into `wav_out` (16 kHz mono
/// 16-bit): 0.3 s of silence first, each turn brought to the same peak, pauses of 0.24 to 0.56 s
/// between turns (the same each run). Returns every word with its speaker, numbered by the order
/// in which the voices first speak.
pub fn dialogue(turns: &[(Voice, &str)], wav_out: &Path) -> anyhow::Result<Vec<SpokenWord>> {
    const RATE: f64 = 16_000.0;
    ensure!(!turns.is_empty(), "a dialogue needs a turn");
    let dir = tempfile::tempdir()?;
    let mut voices: Vec<Voice> = Vec::new();
    let mut samples: Vec<i16> = vec![0; (0.3 * RATE) as usize];
    let mut words = Vec::new();
    for (i, &(voice, text)) in turns.iter().enumerate() {
        let wav = dir.path().join(format!("turn{i}.wav"));
        let spoken = match voice {
            Voice::Espeak(name) => espeak_sentence(text, name, &wav)?,
            Voice::Festival(name) => festival_sentence(text, name, &wav)?,
        };
        let speaker = voices.iter().position(|&v| v == voice).unwrap_or_else(|| {
            voices.push(voice);
            voices.len() - 1
        });
        let turn = read_wav_16k(&wav)?;
        let peak = turn
            .iter()
            .map(|s| i32::from(*s).abs())
            .max()
            .unwrap_or(0)
            .max(1);
        let offset_s = samples.len() as f64 / RATE;
        // Half of full scale at the peak: in range, so the cast cannot wrap.
        samples.extend(
            turn.iter()
                .map(|&s| (f64::from(s) * 16_384.0 / f64::from(peak)).round() as i16),
        );
        words.extend(spoken.into_iter().map(|w| SpokenWord {
            word: w.word,
            start_s: offset_s + w.start_s,
            end_s: offset_s + w.end_s,
            speaker,
        }));
        let pause_s = 0.24 + 0.08 * ((i * 7) % 5) as f64;
        samples.extend(std::iter::repeat_n(0, (pause_s * RATE) as usize));
    }
    write_wav_16k(wav_out, &samples)?;
    Ok(words)
}

/// A dialogue's audio (16 kHz mono, full scale 1) and its words.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// The samples.
    pub samples: Vec<f32>,
    /// Every word with its speaker.
    pub words: Vec<SpokenWord>,
}

impl Conversation {
    /// Writes the samples as a 16 kHz mono 16-bit WAV.
    pub fn write_wav(&self, path: &Path) -> anyhow::Result<()> {
        let pcm: Vec<i16> = self
            .samples
            .iter()
            // Read from 16-bit samples, so in range: the cast cannot wrap.
            .map(|&s| (s * 32768.0).round().clamp(-32768.0, 32767.0) as i16)
            .collect();
        write_wav_16k(path, &pcm)
    }

    /// Writes the samples as the sound of an H.264 + AAC video at `path` (a `width` × `height`
    /// gray picture at 25 fps, [`H264_FAST`](crate::media::H264_FAST)), as long as the sound.
    pub fn write_video(&self, path: &Path, width: u32, height: u32) -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let wav = dir.path().join("dialogue.wav");
        self.write_wav(&wav)?;
        let picture = format!("color=c=gray:s={width}x{height}:r=25");
        let (wav, video) = (path_str(&wav)?, path_str(path)?);
        let args = [
            &["-f", "lavfi", "-i", &picture, "-i", wav][..],
            crate::media::H264_FAST,
            &["-c:a", "aac", "-shortest", video],
        ]
        .concat();
        crate::media::ffmpeg(&args).map(drop)
    }

    /// The turns: each speaker's run of words, as (speaker, first word's start, last word's
    /// end) in seconds.
    pub fn turns(&self) -> Vec<(usize, f64, f64)> {
        let mut turns: Vec<(usize, f64, f64)> = Vec::new();
        for w in &self.words {
            match turns.last_mut() {
                Some(turn) if turn.0 == w.speaker => turn.2 = w.end_s,
                _ => turns.push((w.speaker, w.start_s, w.end_s)),
            }
        }
        turns
    }
}

/// `voices` taking turns over `turns` of [`LINES`] ([`dialogue`]), under the music bed of
/// [`mix_music_bed`] `snr_db` below the speech when one is given.
pub fn conversation(
    voices: &[Voice],
    turns: usize,
    music_snr_db: Option<f64>,
) -> anyhow::Result<Conversation> {
    ensure!(!voices.is_empty(), "a conversation needs a voice");
    let dir = tempfile::tempdir()?;
    let clean = dir.path().join("dialogue.wav");
    let script: Vec<(Voice, &str)> = (0..turns)
        .map(|i| (voices[i % voices.len()], LINES[i % LINES.len()]))
        .collect();
    let words = dialogue(&script, &clean)?;
    let wav = match music_snr_db {
        Some(snr_db) => {
            let mixed = dir.path().join("music.wav");
            mix_music_bed(&clean, &mixed, snr_db)?;
            mixed
        }
        None => clean,
    };
    let samples = read_wav_16k_f32(&wav)?;
    Ok(Conversation { samples, words })
}

/// The diarization error rate by words: the share of words whose found speaker (`labels`, one
/// a word) differs from the truth under the best one-to-one matching of found speakers to true
/// ones (every matching is tried: keep the counts small).
pub fn speaker_error_rate(truth: &[SpokenWord], labels: &[usize]) -> f64 {
    let size = truth
        .iter()
        .map(|w| w.speaker + 1)
        .chain(labels.iter().map(|l| l + 1))
        .max()
        .unwrap_or(0);
    let mut counts = vec![vec![0usize; size]; size];
    for (w, &l) in truth.iter().zip(labels) {
        counts[l][w.speaker] += 1;
    }
    let mut best = 0;
    let mut order: Vec<usize> = (0..size).collect();
    permute(&mut order, 0, &mut |matching| {
        best = best.max((0..size).map(|found| counts[found][matching[found]]).sum());
    });
    1.0 - best as f64 / truth.len().max(1) as f64
}

/// Calls `visit` with every permutation of `order[k..]` after `order[..k]`.
fn permute(order: &mut Vec<usize>, k: usize, visit: &mut impl FnMut(&[usize])) {
    if k == order.len() {
        visit(order);
        return;
    }
    for i in k..order.len() {
        order.swap(k, i);
        permute(order, k + 1, visit);
        order.swap(k, i);
    }
}

/// `path` as UTF-8, for FFmpeg's arguments.
fn path_str(path: &Path) -> anyhow::Result<&str> {
    path.to_str()
        .ok_or_else(|| anyhow::anyhow!("{} is not UTF-8", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(speaker: usize) -> SpokenWord {
        SpokenWord {
            word: "w".to_owned(),
            start_s: 0.0,
            end_s: 0.1,
            speaker,
        }
    }

    #[test]
    fn error_rate_matches_labels_to_speakers() {
        let truth: Vec<SpokenWord> = [0, 0, 1, 1, 0].into_iter().map(word).collect();
        assert_eq!(speaker_error_rate(&truth, &[1, 1, 0, 0, 1]), 0.0);
        assert!((speaker_error_rate(&truth, &[0, 0, 1, 0, 0]) - 0.2).abs() < 1e-12);
        assert!((speaker_error_rate(&truth, &[0; 5]) - 0.4).abs() < 1e-12);
    }
}
