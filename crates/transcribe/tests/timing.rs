//! Word timing on continuous speech (Festival, whose word times are known to the sample), on
//! music and noise alone, and for a text the caller already has. Needs `make setup`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use std::path::Path;
use std::process::Command;

use caption_core::{SubtitleFormat, Word, parse_cues};
use caption_testkit::speech::{
    TimedWord, espeak_sentence, festival_sentence, festival_song, mix_music_bed, read_wav_16k_f32,
    song_over_music,
};
use caption_transcribe::{GivenText, TranscribeOptions, Transcriber};
use support::models::model;

fn norm(word: &str) -> String {
    word.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Mean boundary error and share within 50 ms over the words heard as said (in order; words
/// the model got wrong are skipped by a greedy in-order match).
fn score(truth: &[TimedWord], words: &[Word]) -> (f64, f64, usize) {
    let mut errors = Vec::new();
    let mut next = 0;
    for t in truth {
        if let Some(k) = words[next..]
            .iter()
            .position(|w| norm(&w.word) == norm(&t.word))
        {
            let w = &words[next + k];
            errors.push((w.start - t.start_s).abs());
            errors.push((w.end - t.end_s).abs());
            next += k + 1;
        }
    }
    let mean = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
    let within = errors.iter().filter(|e| **e <= 0.05).count() as f64 / errors.len().max(1) as f64;
    (mean, within, errors.len() / 2)
}

/// The words that start more than 20 ms before any true word and outside every true word (the
/// bench's rule), as "word at start".
fn starts_in_silence(truth: &[TimedWord], words: &[Word]) -> Vec<String> {
    words
        .iter()
        .filter(|w| {
            !truth
                .iter()
                .any(|t| t.start_s - 0.02 <= w.start && w.start <= t.end_s)
        })
        .map(|w| format!("{} at {:.3}", w.word, w.start))
        .collect()
}

fn festival(text: &str, voice: &str) -> (Vec<f32>, Vec<TimedWord>) {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("speech.wav");
    let truth = festival_sentence(text, voice, &wav).unwrap();
    (support::audio::decode_16k_mono(&wav).unwrap(), truth)
}

const SENTENCE: &str = "The old lighthouse keeper climbed the narrow stairs every evening to light the lamp for passing ships";

#[test]
fn continuous_speech_is_timed_by_the_aligner_with_both_models() {
    for (voice, name) in [("slt", "tiny.en"), ("kdl", "base")] {
        let (samples, truth) = festival(SENTENCE, voice);
        let transcript = model(name)
            .transcribe(&samples, &TranscribeOptions::default().threads(2))
            .unwrap();
        let (mean, within, scored) = score(&truth, &transcript.words);
        assert!(
            scored * 10 >= truth.len() * 8,
            "{name}: only {scored} words heard"
        );
        assert!(
            mean <= 0.03 && within >= 0.85,
            "{name}/{voice}: mean {mean:.3} s, {within:.2} within 50 ms"
        );
        assert!(transcript.words.iter().all(|w| w.end > w.start));
        // Each heard word says how sure whisper was of it; Festival's clear speech is mostly
        // heard with confidence.
        let confidence: Vec<f64> = transcript
            .words
            .iter()
            .map(|w| w.confidence.expect("a heard word has a confidence"))
            .collect();
        assert!(confidence.iter().all(|c| (0.0..=1.0).contains(c)));
        let sure = confidence.iter().filter(|&&c| c >= 0.5).count();
        assert!(sure * 10 >= confidence.len() * 7, "{name}: {confidence:?}");
    }
}

/// Words are aligned in groups cut at the pauses of whisper's times, and base put "to" before
/// the pause after "return" (it is said after it): the first group's audio had no sound for
/// it, and in the second "the" took the sound of "to the". Each cut is checked by aligning the
/// words around it together, and this one moves by a word.
#[test]
fn a_word_whisper_puts_on_the_wrong_side_of_a_pause_is_timed_on_its_own() {
    let text =
        "The fisherman mended his nets while the children watched the boats return to the bay.";
    let (samples, truth) = festival(text, "kal");
    let transcript = model("base")
        .transcribe(
            &samples,
            &TranscribeOptions::default().language("en").threads(2),
        )
        .unwrap();
    let words = &transcript.words;
    let (mean, within, scored) = score(&truth, words);
    assert!(scored == truth.len(), "only {scored} words heard");
    let said = |w: &str| truth.iter().rev().find(|t| t.word == w).unwrap().start_s;
    let heard = |w: &str| words.iter().rev().find(|x| x.word == w).unwrap().start;
    for word in ["to", "the"] {
        assert!(
            (heard(word) - said(word)).abs() <= 0.05,
            "{word:?} at {:.3}, said at {:.3}",
            heard(word),
            said(word)
        );
    }
    assert!(
        mean <= 0.03 && within >= 0.85,
        "mean {mean:.3} s, {within:.2} within 50 ms"
    );
}

/// tiny.en's transcript of `samples`, checked to have no word starting in silence.
fn tiny_en_without_starts_in_silence(
    samples: &[f32],
    truth: &[TimedWord],
) -> caption_transcribe::Transcript {
    let transcript = model("tiny.en")
        .transcribe(samples, &TranscribeOptions::default().threads(2))
        .unwrap();
    let in_silence = starts_in_silence(truth, &transcript.words);
    assert!(
        in_silence.is_empty(),
        "words starting in silence: {in_silence:?} (truth from {:.3})",
        truth[0].start_s
    );
    transcript
}

#[test]
fn no_word_starts_in_the_pause_before_it() {
    // Festival's slt voice pauses about 0.1 s at each comma; the aligner used to let the
    // word after it ("and", "they") start inside that pause.
    let text = "We waited by the river for an hour, and then the boats came in, they were full of fish, and the children ran to see them";
    let (samples, truth) = festival(text, "slt");
    let transcript = tiny_en_without_starts_in_silence(&samples, &truth);
    let (mean, within, _) = score(&truth, &transcript.words);
    assert!(
        mean <= 0.03 && within >= 0.85,
        "mean {mean:.3} s, {within:.2} within 50 ms"
    );
}

/// Under pink noise at 16 dB SNR the aligner let the first word take 30 ms of the noise before
/// the voice ("the" at 0.165 s, said from 0.195 s); the voice model puts it where the voice is.
/// After the comma's pause of 0.11 s, which the voice model hears as speech throughout, it let
/// "they" start in the noise; the edges read on the denoised recording put it on its sound.
#[test]
fn no_word_starts_in_the_noise_before_it() {
    for text in [
        "The committee met on Tuesday morning to discuss the new budget for the public library",
        "After a long debate, they agreed to fund a bicycle path and a community garden.",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (clean, noisy) = (dir.path().join("clean.wav"), dir.path().join("noisy.wav"));
        let truth = festival_sentence(text, "slt", &clean).unwrap();
        caption_testkit::speech::mix_pink_noise(&clean, &noisy, 16.0).unwrap();
        let samples = support::audio::decode_16k_mono(&noisy).unwrap();
        let transcript = tiny_en_without_starts_in_silence(&samples, &truth);
        let (mean, _, scored) = score(&truth, &transcript.words);
        assert!(scored * 10 >= truth.len() * 8, "only {scored} words heard");
        assert!(mean <= 0.045, "{text}: mean {mean:.3} s");
    }
}

/// Under a music bed 10 dB under the voice neither the amplitude nor the voice model hears the
/// pauses at the commas, and the aligner joined "debate" and "they" in the middle of the first
/// (tiny.en put "they" 49 ms early on the bench's music); RNNoise, taking the music out, hears
/// no voice there. The first word is not held to it: before the voice RNNoise hears this
/// tonal music as a voice too, and "We" (said from 0.195 s) starts at 0.000.
#[test]
fn no_word_starts_in_the_music_of_a_pause_before_it() {
    let text = "We waited by the river for an hour, and then the boats came in, they were full of fish, and the children ran to see them";
    let (speech, truth) = festival(text, "slt");
    let music = music_bed(speech.len());
    let power = |x: &[f32]| x.iter().map(|v| v * v).sum::<f32>() / x.len() as f32;
    let gain = (power(&speech) / power(&music) / 10.0).sqrt();
    let samples: Vec<f32> = speech
        .iter()
        .zip(&music)
        .map(|(s, m)| s + gain * m)
        .collect();
    let words = model("tiny.en")
        .transcribe(&samples, &TranscribeOptions::default().threads(2))
        .unwrap()
        .words;
    let in_pauses = starts_in_silence(&truth, &words[1..]);
    assert!(
        in_pauses.is_empty(),
        "words starting in a pause: {in_pauses:?}"
    );
    let (mean, _, scored) = score(&truth, &words);
    assert!(scored * 10 >= truth.len() * 8, "only {scored} words heard");
    assert!(mean <= 0.05, "mean {mean:.3} s");
}

/// Chords (A, C sharp, E with their octaves) struck on the beat at 100 bpm over a bass line,
/// at 16 kHz.
fn music_bed(len: usize) -> Vec<f32> {
    use std::f32::consts::TAU;
    (0..len)
        .map(|i| {
            let t = i as f32 / 16_000.0;
            let beat = (t % 0.6) / 0.6;
            let struck = (-3.0 * beat).exp();
            let chord: f32 = [220.0, 277.18, 329.63, 440.0]
                .iter()
                .map(|hz| (TAU * hz * t).sin() + 0.4 * (TAU * 2.0 * hz * t).sin())
                .sum();
            struck * 0.2 * chord + 0.3 * (TAU * 55.0 * t).sin() * (-6.0 * beat).exp()
        })
        .collect()
}

/// Words said one at a time (each by espeak-ng on its own, trimmed to its sound) with pauses
/// between them: every boundary is known to the sample.
fn spoken_one_at_a_time(voice: &str, text: &str, pauses_s: &[f64]) -> (Vec<f32>, Vec<TimedWord>) {
    let mut samples = vec![0.0f32; 8000];
    let mut truth = Vec::new();
    for (i, word) in text.split_whitespace().enumerate() {
        let sound = espeak(voice, word);
        let peak = sound.iter().fold(0f32, |m, x| m.max(x.abs()));
        let loud = |x: &f32| x.abs() > peak * 0.01;
        let first = sound.iter().position(loud).unwrap();
        let last = sound.iter().rposition(loud).unwrap();
        let start_s = samples.len() as f64 / 16_000.0;
        samples.extend_from_slice(&sound[first..=last]);
        truth.push(TimedWord {
            word: word.to_owned(),
            start_s,
            end_s: samples.len() as f64 / 16_000.0,
        });
        let pause_s = pauses_s[i % pauses_s.len()];
        samples.extend(std::iter::repeat_n(0.0, (pause_s * 16_000.0) as usize));
    }
    (samples, truth)
}

#[test]
fn words_said_one_at_a_time_are_timed_to_their_sound() {
    // Short words ("a") between pauses, which the aligner used to squeeze onto the edge of the
    // word beside them, leaving their own sound without a word; and words ending in a stop
    // ("met", "budget", "public"), whose release after the closure's silence was cut off.
    let cases = [
        (
            "en-gb+f3",
            "After a long debate they agreed to fund a bicycle path and a community garden",
        ),
        (
            "en-gb+f3",
            "The committee met on Tuesday morning to discuss the new budget for the public library",
        ),
    ];
    for (voice, text) in cases {
        let (samples, truth) = spoken_one_at_a_time(voice, text, &[0.12, 0.3, 0.55, 0.17, 0.4]);
        let transcript = model("tiny.en")
            .transcribe(&samples, &TranscribeOptions::default().threads(2))
            .unwrap();
        let (mean, within, scored) = score(&truth, &transcript.words);
        assert!(scored * 10 >= truth.len() * 8, "only {scored} words heard");
        assert!(
            mean <= 0.005 && within >= 0.95,
            "{text}: mean {mean:.3} s, {within:.2} within 50 ms: {:?}",
            transcript
                .words
                .iter()
                .map(|w| format!("{} {:.2}-{:.2}", w.word, w.start, w.end))
                .collect::<Vec<_>>()
        );
    }
}

fn lavfi_clip(filter: &str, dir: &Path) -> Vec<f32> {
    let wav = dir.join("clip.wav");
    let status = Command::new("ffmpeg")
        .args([
            "-v", "error", "-y", "-f", "lavfi", "-i", filter, "-ac", "1", "-ar", "16000",
        ])
        .arg(&wav)
        .status()
        .unwrap();
    assert!(status.success());
    support::audio::decode_16k_mono(&wav).unwrap()
}

#[test]
fn music_or_noise_alone_gives_no_words() {
    let dir = tempfile::tempdir().unwrap();
    let noise = lavfi_clip(
        "anoisesrc=color=pink:amplitude=0.3:duration=60:sample_rate=16000",
        dir.path(),
    );
    // Chords over a bass line struck twice a second: whisper alone hears "♪" or lyrics in it.
    let music = lavfi_clip(
        "aevalsrc='0.2*sin(2*PI*220*t)*(1+sin(2*PI*2*t))/2+0.15*sin(2*PI*277.18*t)\
         +0.15*sin(2*PI*329.63*t)+0.3*sin(2*PI*55*t)*exp(-8*mod(t,0.5))':s=16000:d=60",
        dir.path(),
    );
    for (what, samples) in [("noise", noise), ("music", music)] {
        assert_eq!(samples.len(), 60 * 16_000);
        for name in ["tiny.en", "base"] {
            let words = model(name)
                .transcribe(&samples, &TranscribeOptions::default().threads(2))
                .unwrap()
                .words;
            assert!(words.is_empty(), "{what} with {name}: {words:?}");
        }
    }
}

#[test]
fn a_given_text_or_subtitles_are_timed_on_the_audio() {
    let (samples, truth) = festival(SENTENCE, "kal");
    let given = SENTENCE.to_owned() + ".";
    let words = model("tiny.en")
        .align_text(
            &samples,
            &GivenText::Plain(given.clone()),
            &TranscribeOptions::default(),
        )
        .unwrap()
        .words;
    let texts: Vec<&str> = words.iter().map(|w| w.punctuated_word.as_str()).collect();
    assert_eq!(texts, given.split_whitespace().collect::<Vec<_>>());
    // A given word was not heard: it has no confidence.
    assert!(words.iter().all(|w| w.confidence.is_none()));
    let (mean, within, scored) = score(&truth, &words);
    assert_eq!(scored, truth.len());
    assert!(
        mean <= 0.03 && within >= 0.85,
        "text: mean {mean:.3}, {within:.2}"
    );

    // The same as two SRT cues with loose times (as subtitles have), CRLF and a tag.
    let split = truth.len() / 2;
    let srt = format!(
        "1\r\n00:00:00,000 --> {}\r\n<i>{}</i>\r\n\r\n2\r\n{} --> {}\r\n{}\r\n",
        timestamp(truth[split - 1].end_s + 0.2),
        SENTENCE
            .split_whitespace()
            .take(split)
            .collect::<Vec<_>>()
            .join(" "),
        timestamp(truth[split].start_s - 0.1),
        timestamp(truth.last().unwrap().end_s + 0.3),
        SENTENCE
            .split_whitespace()
            .skip(split)
            .collect::<Vec<_>>()
            .join(" "),
    );
    let cues = parse_cues(&srt, SubtitleFormat::Srt).unwrap();
    let words = model("tiny.en")
        .align_text(
            &samples,
            &GivenText::Cues(cues),
            &TranscribeOptions::default(),
        )
        .unwrap()
        .words;
    assert_eq!(words.len(), truth.len());
    let (mean, within, _) = score(&truth, &words);
    assert!(
        mean <= 0.03 && within >= 0.85,
        "srt: mean {mean:.3}, {within:.2}"
    );
}

fn timestamp(t_s: f64) -> String {
    let ms = (t_s.max(0.0) * 1000.0).round() as u64;
    format!(
        "{:02}:{:02}:{:02},{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

fn espeak(voice: &str, text: &str) -> Vec<f32> {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("speech.wav");
    let status = Command::new("espeak-ng")
        .args(["-v", voice, "-w"])
        .arg(&wav)
        .arg(text)
        .status()
        .unwrap();
    assert!(status.success());
    support::audio::decode_16k_mono(&wav).unwrap()
}

#[test]
fn chinese_and_japanese_come_out_as_words() {
    for (voice, lang, text) in [
        // Mandarin from pinyin: Debian 12's espeak-ng (1.51) reads hanzi through a pinyin whose
        // tone digits its cmn voice then says in English ("们" as "men five").
        (
            "cmn-latn-pinyin",
            "zh",
            "wo3 men5 yi4 qi3 qu4 chi1 fan4 ba5. xie4 xie4 ni3. zai4 jian4, ming2 tian1 jian4.",
        ),
        // espeak-ng reads kanji as "Chinese letter": kana only. Where base cannot make out
        // espeak-ng's Japanese it writes what it hears in katakana, and a katakana run is one
        // word to a segmenter (as a loanword is), so the sentence is one it says clearly.
        (
            "ja",
            "ja",
            "こんにちは。わたしのなまえはたなかです。よろしくおねがいします。",
        ),
    ] {
        let samples = espeak(voice, text);
        let words = model("base")
            .transcribe(
                &samples,
                &TranscribeOptions::default().language(lang).threads(2),
            )
            .unwrap()
            .words;
        let longest = words
            .iter()
            .map(|w| w.word.chars().count())
            .max()
            .unwrap_or(0);
        assert!(words.len() >= 5, "{lang}: {words:?}");
        // Whisper gives each phrase as one token run; a phrase is 6 to 12 characters here.
        assert!(
            longest <= 4,
            "{lang}: a word of {longest} characters in {words:?}"
        );
        assert!(
            words.windows(2).all(|w| w[0].end <= w[1].start),
            "{lang}: {words:?}"
        );
        assert!(words.iter().all(|w| w.end > w.start), "{lang}: {words:?}");
    }
}

/// Words for a song's lyrics: sung one a note, in lines of ten.
const LYRIC_WORDS: [&str; 40] = [
    "the", "morning", "light", "is", "on", "the", "road", "and", "I", "walk", "along", "the",
    "river", "bends", "beside", "the", "hill", "where", "birds", "are", "flying", "high", "so",
    "come", "with", "me", "and", "leave", "the", "town", "behind", "the", "sky", "is", "wide",
    "and", "blue", "we", "sing", "together",
];

/// A four-minute song of `words` words ([`song_over_music`]): samples, lyrics and each word's
/// truth.
fn four_minute_song(words: usize) -> (Vec<f32>, String, Vec<TimedWord>) {
    let lyrics: Vec<&str> = (0..words)
        .map(|i| LYRIC_WORDS[i % LYRIC_WORDS.len()])
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("song.wav");
    let truth = song_over_music(&lyrics, &wav).unwrap();
    let samples = read_wav_16k_f32(&wav).unwrap();
    (samples, lyrics.join(" "), truth)
}

#[test]
fn a_songs_lyrics_are_laid_on_the_singing_over_the_whole_song() {
    let (samples, lyrics, truth) = four_minute_song(200);
    let duration_s = samples.len() as f64 / 16_000.0;
    assert!(duration_s >= 230.0, "{duration_s} s");
    let words = model("tiny.en")
        .align_text(
            &samples,
            &GivenText::Plain(lyrics.clone()),
            &TranscribeOptions::default().threads(2),
        )
        .unwrap()
        .words;
    let texts: Vec<&str> = words.iter().map(|w| w.word.as_str()).collect();
    assert_eq!(texts, lyrics.split_whitespace().collect::<Vec<_>>());
    assert!(words.windows(2).all(|w| w[0].end <= w[1].start + 1e-9));
    // Spread over the whole song: the first word in the first line, the last in the last.
    let lines: Vec<(f64, f64)> = truth
        .chunks(10)
        .map(|line| (line[0].start_s, line[line.len() - 1].end_s))
        .collect();
    let (first, last) = (&words[0], &words[words.len() - 1]);
    let (first_line, last_line) = (lines[0], lines[lines.len() - 1]);
    assert!(
        (first_line.0 - 0.3..=first_line.1).contains(&first.start),
        "the first word at {:.2} s; the first line is sung {first_line:.2?}",
        first.start
    );
    assert!(
        (last_line.0..=last_line.1 + 0.3).contains(&last.end),
        "the last word ends at {:.2} s; the last line is sung {last_line:.2?}",
        last.end
    );
    // Every word inside the singing: its middle in a line's sung stretch, none in the music
    // before, between or after.
    for word in &words {
        let middle = (word.start + word.end) / 2.0;
        assert!(
            lines.iter().any(|&(a, b)| (a..=b).contains(&middle)),
            "{:?} at {:.2}-{:.2} s is outside the singing",
            word.word,
            word.start,
            word.end
        );
    }
    let onsets: Vec<f64> = words
        .iter()
        .zip(&truth)
        .map(|(w, t)| (w.start - t.start_s).abs())
        .collect();
    let mean = onsets.iter().sum::<f64>() / onsets.len() as f64;
    let within = onsets.iter().filter(|e| **e <= 0.3).count() as f64 / onsets.len() as f64;
    eprintln!("sung onsets: mean error {mean:.3} s, {within:.3} within 0.3 s");
    // Where singing stands today (89 % within 0.3 s, 0.108 s mean; 88 % and 0.115 s while sung
    // starts were still moved to the voice's onset, 82.5 % and 0.15 s before short notes
    // counted as voice and held notes ran through the pitch track's dropouts, 78 %
    // and 0.20 s before sung words were aligned with the music taken out, 70 % and 0.28 s before
    // held notes were cut short for the aligner): the lines whisper did not hear are laid on
    // the voice in one pass, and some words still start a note late. The target is 90 % /
    // 0.15 s.
    assert!(
        within >= 0.85 && mean <= 0.15,
        "{within:.2} of onsets within 0.3 s, mean {mean:.3} s"
    );
}

#[test]
fn each_line_of_the_lyrics_is_laid_on_its_own_sung_line() {
    // A song of four lines with rests between them, held notes and low ones (whose voice
    // Silero loses over the music), sung by Festival's male voice: whisper hears little of it,
    // and the voice found is broken inside the lines as well as between them. Given in one
    // line, six words went to the line before or after theirs (a second line's first words
    // 4 s early).
    const LINES: [&str; 4] = [
        "the ocean blue is calling",
        "a sailor on the sea",
        "the wind is in the sails again",
        "he is coming home to me",
    ];
    const RHYTHM: [f64; 4] = [1.0, 0.5, 0.5, 1.5];
    const MELODY: [&str; 6] = ["A2", "A2", "C3", "D3", "E3", "D3"];
    let mut score = String::from("rest 4.0\n");
    let mut note = 0;
    for (k, line) in LINES.iter().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        for (i, word) in words.iter().enumerate() {
            let held = if i + 1 == words.len() {
                2.0
            } else {
                RHYTHM[i % RHYTHM.len()]
            };
            score.push_str(&format!("{word} {} {held}\n", MELODY[note % MELODY.len()]));
            note += 1;
        }
        score.push_str(&format!("rest {}\n", [3.0, 6.0, 3.0, 3.0][k]));
    }
    let dir = tempfile::tempdir().unwrap();
    let (sung, wav) = (dir.path().join("sung.wav"), dir.path().join("song.wav"));
    let truth = festival_song(&score, "ked", &sung).unwrap();
    mix_music_bed(&sung, &wav, 8.0).unwrap();
    let samples = read_wav_16k_f32(&wav).unwrap();
    let words = model("tiny.en")
        .align_text(
            &samples,
            &GivenText::Plain(LINES.join("\n")),
            &TranscribeOptions::default().threads(2),
        )
        .unwrap()
        .words;
    assert_eq!(words.len(), truth.len());
    // Each word's middle in its own line's singing (0.3 s of slack).
    let mut first = 0;
    for line in LINES {
        let n = line.split_whitespace().count();
        let (from_s, to_s) = (truth[first].start_s, truth[first + n - 1].end_s);
        for word in &words[first..first + n] {
            let middle = (word.start + word.end) / 2.0;
            assert!(
                (from_s - 0.3..=to_s + 0.3).contains(&middle),
                "{:?} at {:.2}-{:.2} s; its line {line:?} is sung {from_s:.2}-{to_s:.2} s",
                word.word,
                word.start,
                word.end
            );
        }
        first += n;
    }
}

/// Whether `c` leans on the character before it (a small kana, the long-vowel mark, a voicing or
/// combining mark): no word may begin with one.
fn leans(c: char) -> bool {
    "ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮー゛゜".contains(c)
        || ('\u{0300}'..='\u{036F}').contains(&c)
        || ('\u{3099}'..='\u{309A}').contains(&c)
}

#[test]
fn japanese_and_chinese_words_are_timed_by_the_aligner() {
    // espeak-ng speaks kana (Japanese) and pinyin (Mandarin, one word event a syllable, so a
    // hanzi each); whisper writes kanji and hanzi. Where a word whisper wrote starts, a word
    // (or character) was said to start.
    for (voice, language, spoken) in [
        (
            "ja",
            "ja",
            "きょう わ てんき が いい です。 わたし の なまえ わ たなか です。 よろしく おねがい します。",
        ),
        (
            "cmn-latn-pinyin",
            "zh",
            "wo3 men5 jin1 tian1 qu4 gong1 yuan2 san4 bu4. wo3 men5 yi4 qi3 qu4 chi1 fan4 ba5. xie4 xie4 ni3, ming2 tian1 jian4.",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let wav = dir.path().join("speech.wav");
        let truth = espeak_sentence(spoken, voice, &wav).unwrap();
        let samples = read_wav_16k_f32(&wav).unwrap();
        let words = model("base")
            .transcribe(
                &samples,
                &TranscribeOptions::default().language(language).threads(2),
            )
            .unwrap()
            .words;
        assert!(words.len() >= 10, "{language}: {words:?}");
        for word in &words {
            assert!(
                !word.punctuated_word.contains('\u{FFFD}'),
                "{language}: {word:?}"
            );
            assert!(
                !word.word.chars().next().is_some_and(leans),
                "{language}: a word opens on a character that leans on the one before: {word:?}"
            );
            // Not inside a silence: its middle is in a word that was said. (Base once wrote
            // "到雙頭" three times over the Mandarin clip's last six syllables, one of them in
            // the pause at the comma; a decoder caught in a loop now stops when it shows.)
            let middle = (word.start + word.end) / 2.0;
            assert!(
                truth
                    .iter()
                    .any(|t| (t.start_s..=t.end_s).contains(&middle)),
                "{language}: {word:?} lies in a silence"
            );
        }
        let starts_on_a_start = words
            .iter()
            .filter(|w| truth.iter().any(|t| (w.start - t.start_s).abs() <= 0.05))
            .count() as f64
            / words.len() as f64;
        eprintln!("{language}: {starts_on_a_start:.2} of word starts within 50 ms of a said start");
        assert!(
            starts_on_a_start >= 0.8,
            "{language}: {starts_on_a_start:.2} of starts on a said start: {words:?} for {truth:?}"
        );
    }
}
