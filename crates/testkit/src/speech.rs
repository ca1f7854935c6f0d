//! Continuous speech with known word times, for word-timing tests.
//!
//! [`festival_sentence`] speaks a sentence with a Festival voice (Debian `festival` and
//! `festvox-us-slt-hts`, `festvox-kallpc16k`, `festvox-kdlpc16k`) through the repository's
//! `scripts/festival-words.scm`, the same script `scripts/bench-transcribe` uses, and writes a
//! 16 kHz mono 16-bit WAV. Word times follow the bench's rule: inside a run of speech a word ends
//! where the next begins (Festival's own segment boundaries); an edge next to a pause (and the
//! clip's first start and last end) is the sound's onset or offset, the first or last sample of
//! the word's span that reaches 1 % of the clip's peak.
//!
//! [`espeak_sentence`] does the same with espeak-ng in any of its languages, through the
//! repository's `scripts/espeak_words.py`, which the bench's continuous clips also come from.
//!
//! [`mix_pink_noise`] adds deterministic pink noise at a given SNR.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail, ensure};

/// One word and when it is spoken.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedWord {
    /// The word as Festival spoke it (numbers spelled out, lowercase).
    pub word: String,
    /// Where its sound starts, in seconds from the start of the clip.
    pub start_s: f64,
    /// Where it ends, in seconds.
    pub end_s: f64,
}

const SAMPLE_RATE: u32 = 16_000;
/// Of the clip's peak: where a pause ends and sound begins (the bench's `EDGE_THRESHOLD`).
const EDGE_THRESHOLD: f64 = 0.01;

/// The repository's `scripts/festival-words.scm`, found from the package cargo runs the test
/// in (at run time), else from where this crate was built: a build folder shared between two
/// checkouts may hold this crate built in the other one.
fn festival_script() -> PathBuf {
    const SCRIPT: &str = "scripts/festival-words.scm";
    let built_in = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(SCRIPT);
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .and_then(|dir| {
            dir.ancestors()
                .map(|d| d.join(SCRIPT))
                .find(|script| script.is_file())
        })
        .unwrap_or(built_in)
}

/// Festival's voice function name (without `voice_`) for a short name; full names pass through.
fn festival_voice(voice: &str) -> &str {
    match voice {
        "slt" => "cmu_us_slt_arctic_hts",
        "kal" => "kal_diphone",
        "kdl" | "ked" => "ked_diphone",
        other => other,
    }
}

/// Speaks `text` with a Festival `voice` (`slt`, `kal`, `kdl`, or a voice function's name without
/// `voice_`), writes it to `wav_out` (16 kHz mono 16-bit) and returns each word's time span.
///
/// Words are Festival's: numbers come back spelled out ("10" as "ten"), so tests that compare
/// against a transcript should avoid digits and apostrophes.
///
/// ```
/// use caption_testkit::speech::{festival_sentence, read_wav_16k};
///
/// let dir = tempfile::tempdir()?;
/// let wav = dir.path().join("speech.wav");
/// let words = festival_sentence("ten ships passed", "kal", &wav)?;
/// let spoken: Vec<&str> = words.iter().map(|w| w.word.as_str()).collect();
/// assert_eq!(spoken, ["ten", "ships", "passed"]);
/// assert!(words.windows(2).all(|w| w[0].end_s <= w[1].start_s));
/// let duration_s = read_wav_16k(&wav)?.len() as f64 / 16_000.0;
/// assert!(words[2].end_s <= duration_s);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn festival_sentence(
    text: &str,
    voice: &str,
    wav_out: &Path,
) -> anyhow::Result<Vec<TimedWord>> {
    let dir = tempfile::tempdir()?;
    let raw = dir.path().join("festival.wav");
    let out = Command::new("festival")
        .arg("--script")
        .arg(festival_script())
        .arg(festival_voice(voice))
        .arg(&raw)
        .arg(text)
        .output()
        .context("running festival (Debian package festival; run `make setup`)")?;
    festival_words(&out, &raw, voice, wav_out)
}

/// The words a Festival script printed (`word<TAB>start<TAB>end` lines, anything else being
/// Festival's own), with the audio it wrote to `raw` resampled to `wav_out`.
fn festival_words(
    out: &std::process::Output,
    raw: &Path,
    voice: &str,
    wav_out: &Path,
) -> anyhow::Result<Vec<TimedWord>> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    ensure!(
        out.status.success() && raw.is_file(),
        "festival failed for voice {voice}: {stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut spans = Vec::new();
    for line in stdout.lines() {
        let mut fields = line.split('\t');
        let (Some(word), Some(start), Some(end), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            continue; // anything Festival itself prints
        };
        let start_s: f64 = start
            .parse()
            .with_context(|| format!("start in {line:?}"))?;
        let end_s: f64 = end.parse().with_context(|| format!("end in {line:?}"))?;
        spans.push((word.to_owned(), start_s, end_s));
    }
    ensure!(
        !spans.is_empty(),
        "festival printed no words for voice {voice} (is the voice installed?): {stdout}"
    );
    resample_16k(raw, wav_out)?;
    let samples = read_wav_16k(wav_out)?;
    Ok(snap_pause_edges(&samples, &spans))
}

/// Sings `score` with a Festival diphone `voice` (`kal` or `kdl`) through the repository's
/// `scripts/festival-sing.scm` (Festival's singing mode), writes it to `wav_out` (16 kHz mono
/// 16-bit) and returns each sung word's time span, by the rule of [`festival_sentence`]: a
/// word ends where the next begins, and an edge next to a rest is the sound's onset or offset.
///
/// The score has a line a word, `WORD PITCHES SECONDS` (`day D3 0.6`; syllables apart by
/// commas, `C3,B2 0.3,0.9`; notes slurred onto one syllable by `+`), and `rest SECONDS`.
pub fn festival_song(score: &str, voice: &str, wav_out: &Path) -> anyhow::Result<Vec<TimedWord>> {
    let dir = tempfile::tempdir()?;
    let raw = dir.path().join("song.wav");
    let score_file = dir.path().join("song.txt");
    std::fs::write(&score_file, score)?;
    let out = Command::new("festival")
        .arg("--script")
        .arg(festival_script().with_file_name("festival-sing.scm"))
        .arg(festival_voice(voice))
        .arg(&raw)
        .arg(&score_file)
        .output()
        .context("running festival (Debian package festival; run `make setup`)")?;
    festival_words(&out, &raw, voice, wav_out)
}

/// `lyrics` sung by Festival's kal voice over a music bed 8 dB under it, as a song is laid
/// out: five seconds of music first, a note of a second a word on a melody of eight notes,
/// lines of ten words with 0.7 s rests between, eight seconds of music alone after the seventh
/// and fourteenth lines, three seconds after the last. Writes `wav_out` (16 kHz mono 16-bit)
/// and returns each sung word's time span ([`festival_song`]'s rule). 200 words make four
/// minutes.
pub fn song_over_music(lyrics: &[&str], wav_out: &Path) -> anyhow::Result<Vec<TimedWord>> {
    const MELODY: [&str; 8] = ["A2", "C3", "E3", "D3", "C3", "G2", "A2", "E3"];
    let mut score = String::from("rest 5.0\n");
    for (i, word) in lyrics.iter().enumerate() {
        score.push_str(&format!("{word} {} 1.0\n", MELODY[i % MELODY.len()]));
        if i % 10 == 9 {
            let line = i / 10 + 1;
            let rest = if line == 7 || line == 14 { 8.0 } else { 0.7 };
            score.push_str(&format!("rest {rest}\n"));
        }
    }
    score.push_str("rest 3.0\n");
    let dir = tempfile::tempdir()?;
    let sung = dir.path().join("sung.wav");
    let truth = festival_song(&score, "kal", &sung)?;
    ensure!(
        truth.len() == lyrics.len(),
        "Festival sang {} of {} words",
        truth.len(),
        lyrics.len()
    );
    mix_music_bed(&sung, wav_out, 8.0)?;
    Ok(truth)
}

/// Mixes a music bed under the speech or singing of `wav_in` (16 kHz mono 16-bit), `snr_db`
/// under it (speech power measured where it sounds), into `wav_out`. The bed is the same each
/// time: a chord of three notes that changes every two seconds, a bass note, a kick drum on
/// every beat (120 a minute) and a hi-hat between, so that it is never silent.
pub fn mix_music_bed(wav_in: &Path, wav_out: &Path, snr_db: f64) -> anyhow::Result<()> {
    let clean = read_wav_16k(wav_in)?;
    ensure!(!clean.is_empty(), "{} holds no samples", wav_in.display());
    write_wav_16k(wav_out, &mix_under(&clean, &music_bed(clean.len()), snr_db))
}

/// `clean` with `bed` (as long) added `snr_db` under its speech power.
fn mix_under(clean: &[i16], bed: &[f64], snr_db: f64) -> Vec<i16> {
    let bed_power = bed.iter().map(|x| x * x).sum::<f64>() / bed.len() as f64;
    let gain = (speech_power(clean) / (bed_power * 10f64.powf(snr_db / 10.0))).sqrt();
    clean
        .iter()
        .zip(bed)
        .map(|(s, x)| {
            // In range after the clamp, so the cast cannot wrap.
            (f64::from(*s) + gain * x)
                .round()
                .clamp(f64::from(i16::MIN), f64::from(i16::MAX)) as i16
        })
        .collect()
}

/// `len` samples of the bed [`mix_music_bed`] describes, at 16 kHz, peak about 1.
fn music_bed(len: usize) -> Vec<f64> {
    use std::f64::consts::TAU;
    let rate = f64::from(SAMPLE_RATE);
    // Chords of A minor, F major, C major and G major (Hz), and their bass notes.
    const CHORDS: [[f64; 3]; 4] = [
        [220.0, 261.63, 329.63],
        [174.61, 220.0, 261.63],
        [261.63, 329.63, 392.0],
        [196.0, 246.94, 293.66],
    ];
    const BASS: [f64; 4] = [110.0, 87.31, 130.81, 98.0];
    let noise = pink_noise(len, 7);
    (0..len)
        .map(|i| {
            let t = i as f64 / rate;
            let bar = (t / 2.0) as usize % CHORDS.len();
            let chord: f64 = CHORDS[bar].iter().map(|f| (TAU * f * t).sin()).sum::<f64>() / 3.0;
            let bass = (TAU * BASS[bar] * t).sin();
            let beat_t = t % 0.5;
            let kick = (TAU * 55.0 * beat_t).sin() * (-beat_t * 25.0).exp();
            let off_t = (t + 0.25) % 0.5;
            let hat = noise[i] * (-off_t * 60.0).exp();
            0.35 * chord + 0.25 * bass + 0.5 * kick + 0.3 * hat
        })
        .collect()
}

/// The repository's `scripts/espeak_words.py`, found as [`festival_script`] is.
fn espeak_script() -> PathBuf {
    festival_script().with_file_name("espeak_words.py")
}

/// Speaks `text` with an espeak-ng `voice` (any language it has: `es`, `fr+f3`, `de`, `en-us`)
/// through the repository's `scripts/espeak_words.py` (libespeak-ng's word events, the rule
/// the bench's continuous clips follow: a word ends where the next begins, and an edge next to
/// a pause is the sound's onset or offset), writes it to `wav_out` (16 kHz mono 16-bit) and
/// returns each word's time span. Words are as written in `text`, without punctuation.
///
/// ```
/// use caption_testkit::speech::espeak_sentence;
///
/// let dir = tempfile::tempdir()?;
/// let wav = dir.path().join("speech.wav");
/// let words = espeak_sentence("Hola, mundo.", "es", &wav)?;
/// let spoken: Vec<&str> = words.iter().map(|w| w.word.as_str()).collect();
/// assert_eq!(spoken, ["Hola", "mundo"]);
/// assert!(words[0].end_s < words[1].start_s, "a pause at the comma");
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn espeak_sentence(text: &str, voice: &str, wav_out: &Path) -> anyhow::Result<Vec<TimedWord>> {
    let dir = tempfile::tempdir()?;
    let raw = dir.path().join("espeak.wav");
    let out = Command::new("python3")
        .arg(espeak_script())
        .arg(voice)
        .arg(&raw)
        .arg(text)
        .output()
        .context("running python3 scripts/espeak_words.py (espeak-ng; run `make setup`)")?;
    ensure!(
        out.status.success() && raw.is_file(),
        "espeak_words.py failed for voice {voice}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout)
        .context("reading the word times espeak_words.py printed")?;
    let mut words = Vec::new();
    for word in printed["truth"].as_array().into_iter().flatten() {
        let (Some(text), Some(start_s), Some(end_s)) = (
            word["word"].as_str(),
            word["start"].as_f64(),
            word["end"].as_f64(),
        ) else {
            bail!("a word espeak_words.py printed lacks a field: {word}");
        };
        words.push(TimedWord {
            word: text.to_owned(),
            start_s,
            end_s,
        });
    }
    ensure!(!words.is_empty(), "espeak-ng said no words in {voice}");
    resample_16k(&raw, wav_out)?;
    Ok(words)
}

/// Edges next to a pause (a gap between two words' segments, or the clip's ends) move onto the
/// sound; boundaries inside a run of speech stay where Festival put them.
fn snap_pause_edges(samples: &[i16], spans: &[(String, f64, f64)]) -> Vec<TimedWord> {
    let rate = f64::from(SAMPLE_RATE);
    let peak = samples
        .iter()
        .map(|s| i32::from(*s).abs())
        .max()
        .unwrap_or(0);
    let threshold = EDGE_THRESHOLD * f64::from(peak);
    let loud = |i: usize| f64::from(i32::from(samples[i]).abs()) >= threshold;
    let index = |t: f64| ((t * rate).round().max(0.0) as usize).min(samples.len());
    spans
        .iter()
        .enumerate()
        .map(|(k, (word, start_s, end_s))| {
            let (lo, hi) = (index(*start_s), index(*end_s));
            let pause_before = k == 0 || spans[k - 1].2 < *start_s;
            let pause_after = k + 1 == spans.len() || *end_s < spans[k + 1].1;
            let start = if pause_before {
                (lo..hi).find(|&i| loud(i)).unwrap_or(lo)
            } else {
                lo
            };
            let end = if pause_after {
                (start..hi).rev().find(|&i| loud(i)).map_or(hi, |i| i + 1)
            } else {
                hi
            };
            TimedWord {
                word: word.clone(),
                start_s: if pause_before {
                    start as f64 / rate
                } else {
                    *start_s
                },
                end_s: if pause_after {
                    end as f64 / rate
                } else {
                    *end_s
                },
            }
        })
        .collect()
}

/// Writes the audio of `src` (any format ffmpeg reads) to `dst` as 16 kHz mono 16-bit PCM WAV.
pub fn resample_16k(src: &Path, dst: &Path) -> anyhow::Result<()> {
    let status = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-i"])
        .arg(src)
        .args(["-ar", "16000", "-ac", "1", "-c:a", "pcm_s16le", "-bitexact"])
        .arg(dst)
        .status()
        .context("running ffmpeg (Debian package ffmpeg; run `make setup`)")?;
    ensure!(
        status.success(),
        "ffmpeg could not resample {}",
        src.display()
    );
    Ok(())
}

/// The samples of a 16 kHz mono 16-bit PCM WAV file as floats in [-1, 1), as the engine takes
/// them.
pub fn read_wav_16k_f32(path: &Path) -> anyhow::Result<Vec<f32>> {
    Ok(read_wav_16k(path)?
        .iter()
        .map(|&s| f32::from(s) / 32768.0)
        .collect())
}

/// The samples of a 16 kHz mono 16-bit PCM WAV file.
pub fn read_wav_16k(path: &Path) -> anyhow::Result<Vec<i16>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    ensure!(
        bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WAVE",
        "{} is not a WAV file",
        path.display()
    );
    let mut at = 12;
    let mut format_ok = false;
    while at + 8 <= bytes.len() {
        let id = &bytes[at..at + 4];
        let len = u32::from_le_bytes([bytes[at + 4], bytes[at + 5], bytes[at + 6], bytes[at + 7]])
            as usize;
        let body = &bytes[at + 8..(at + 8 + len).min(bytes.len())];
        if id == b"fmt " && body.len() >= 16 {
            let u16_at = |i: usize| u16::from_le_bytes([body[i], body[i + 1]]);
            let rate = u32::from_le_bytes([body[4], body[5], body[6], body[7]]);
            format_ok = u16_at(0) == 1 && u16_at(2) == 1 && rate == SAMPLE_RATE && u16_at(14) == 16;
        } else if id == b"data" {
            ensure!(
                format_ok,
                "{} is not 16 kHz mono 16-bit PCM",
                path.display()
            );
            return Ok(body
                .chunks_exact(2)
                .map(|b| i16::from_le_bytes([b[0], b[1]]))
                .collect());
        }
        at += 8 + len + (len & 1);
    }
    bail!("{} has no data chunk", path.display())
}

/// Writes 16 kHz mono 16-bit PCM.
pub fn write_wav_16k(path: &Path, samples: &[i16]) -> anyhow::Result<()> {
    let data_len = u32::try_from(samples.len() * 2).context("WAV too long")?;
    let mut bytes = Vec::with_capacity(44 + samples.len() * 2);
    bytes.extend_from_slice(b"RIFF");
    bytes.extend_from_slice(&(36 + data_len).to_le_bytes());
    bytes.extend_from_slice(b"WAVEfmt ");
    bytes.extend_from_slice(&16u32.to_le_bytes());
    bytes.extend_from_slice(&1u16.to_le_bytes()); // PCM
    bytes.extend_from_slice(&1u16.to_le_bytes()); // mono
    bytes.extend_from_slice(&SAMPLE_RATE.to_le_bytes());
    bytes.extend_from_slice(&(SAMPLE_RATE * 2).to_le_bytes());
    bytes.extend_from_slice(&2u16.to_le_bytes());
    bytes.extend_from_slice(&16u16.to_le_bytes());
    bytes.extend_from_slice(b"data");
    bytes.extend_from_slice(&data_len.to_le_bytes());
    for s in samples {
        bytes.extend_from_slice(&s.to_le_bytes());
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// Power of the speech in `samples`: the mean square over the 10 ms frames within 30 dB of the
/// loudest frame, so pauses do not dilute it (the bench, which knows the words, measures inside
/// the true word spans instead).
fn speech_power(samples: &[i16]) -> f64 {
    let frames: Vec<f64> = samples
        .chunks(160)
        .map(|c| c.iter().map(|s| f64::from(*s).powi(2)).sum::<f64>() / c.len() as f64)
        .collect();
    let loudest = frames.iter().copied().fold(0.0, f64::max);
    let active: Vec<f64> = frames
        .into_iter()
        .filter(|p| *p >= loudest * 1e-3)
        .collect();
    active.iter().sum::<f64>() / active.len().max(1) as f64
}

/// Pink noise (Paul Kellet's refined filter over Gaussian white noise from a fixed seed).
fn pink_noise(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut uniform = move || {
        // xorshift64*: plenty for noise, and the same noise on every run.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut b = [0.0f64; 7];
    (0..n)
        .map(|_| {
            // Box-Muller
            let (u1, u2) = (uniform().max(1e-300), uniform());
            let white = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            b[0] = 0.99886 * b[0] + white * 0.055_517_9;
            b[1] = 0.99332 * b[1] + white * 0.075_075_9;
            b[2] = 0.96900 * b[2] + white * 0.153_852;
            b[3] = 0.86650 * b[3] + white * 0.310_485_6;
            b[4] = 0.55000 * b[4] + white * 0.532_952_2;
            b[5] = -0.7616 * b[5] - white * 0.016_898;
            let out = b.iter().sum::<f64>() + white * 0.5362;
            b[6] = white * 0.115_926;
            out
        })
        .collect()
}

/// Copies a 16 kHz mono 16-bit WAV with pink noise added so that the speech's power is `snr_db`
/// above the noise's. The noise is the same on every run.
pub fn mix_pink_noise(wav_in: &Path, wav_out: &Path, snr_db: f64) -> anyhow::Result<()> {
    let clean = read_wav_16k(wav_in)?;
    ensure!(!clean.is_empty(), "{} holds no samples", wav_in.display());
    write_wav_16k(
        wav_out,
        &mix_under(&clean, &pink_noise(clean.len(), 1), snr_db),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SENTENCE: &str =
        "After a long debate, they agreed to fund a bicycle path and a community garden.";

    #[test]
    fn festival_words_come_in_order_and_inside_the_audio() {
        let dir = tempfile::tempdir().unwrap();
        for voice in ["slt", "kal", "kdl"] {
            let wav = dir.path().join(format!("{voice}.wav"));
            let words = festival_sentence(SENTENCE, voice, &wav).unwrap();
            let spoken: Vec<String> = words.iter().map(|w| w.word.to_lowercase()).collect();
            let expected: Vec<String> = SENTENCE
                .split_whitespace()
                .map(|w| {
                    w.trim_matches(|c: char| !c.is_alphanumeric())
                        .to_lowercase()
                })
                .collect();
            assert_eq!(spoken, expected, "{voice}");
            for pair in words.windows(2) {
                assert!(pair[0].end_s <= pair[1].start_s, "{voice}: {pair:?}");
            }
            for w in &words {
                assert!(w.start_s < w.end_s, "{voice}: {w:?}");
            }
            let duration_s = read_wav_16k(&wav).unwrap().len() as f64 / 16_000.0;
            assert!(
                words[0].start_s > 0.0,
                "{voice}: Festival starts with a pause"
            );
            assert!(
                words.last().unwrap().end_s <= duration_s,
                "{voice}: {:?} past {duration_s}",
                words.last()
            );
            // The comma is a pause: "debate" ends before "they" starts.
            assert!(
                words[4].start_s - words[3].end_s > 0.03,
                "{voice}: {:?}",
                &words[3..5]
            );
        }
    }

    #[test]
    fn pink_noise_is_mixed_at_the_asked_snr() {
        let dir = tempfile::tempdir().unwrap();
        let (clean, noisy) = (dir.path().join("clean.wav"), dir.path().join("noisy.wav"));
        festival_sentence(SENTENCE, "kal", &clean).unwrap();
        mix_pink_noise(&clean, &noisy, 16.0).unwrap();
        let (a, b) = (read_wav_16k(&clean).unwrap(), read_wav_16k(&noisy).unwrap());
        assert_eq!(a.len(), b.len());
        let noise: Vec<i16> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
        let noise_power = noise.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>() / a.len() as f64;
        let snr_db = 10.0 * (speech_power(&a) / noise_power).log10();
        assert!((snr_db - 16.0).abs() < 0.5, "{snr_db}");
    }
}
