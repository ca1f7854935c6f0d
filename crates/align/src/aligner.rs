//! The aligner: written words in, their times on the audio out.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::SAMPLE_RATE_HZ;
use crate::decoder::{Decoder, FRAMES_PER_S, Search};
use crate::error::{Error, Result};
use crate::g2p::G2p;
use crate::models::models_dir;
use crate::pronounce::{English, Espeak, Japanese, Mandarin, Pronounce, espeak_voice};
use crate::squeeze::Squeezed;

/// A token of [`Aligner::align`]'s words that asks for a pause: the acoustic model's silence,
/// at least 30 ms, between the words around it (elsewhere a silence is optional). Its span is
/// the pause it got.
pub const PAUSE: &str = "<sil>";

/// A token of [`Aligner::align`]'s words that allows a pause: the acoustic model's silence,
/// at no cost, where it explains the sound better than the words around it do, or nothing.
/// Put before a word that may have been misheard, it lets the sound the word does not match
/// go to a pause rather than to its neighbours ("fund a medical" for "fund a bicycle" otherwise
/// stretches "fund" and "a" over "bi"). Its span runs from the word before to the word after
/// (empty where no pause was taken). The silence the aligner allows between any two words
/// costs something, so that it does not break into words; this one does not.
pub const MAYBE_PAUSE: &str = "<sil>?";

/// Silence added before and after the audio of each alignment: the model's silence state then
/// has frames to sit in, and words at the edges are placed better.
const EDGE_PAD_S: f64 = 0.25;
/// The acoustic model's phones are three HMM states of at least one frame each.
const STATES_PER_PHONE: f64 = 3.0;

/// The en-us model's phones a word can open on that a voice detector hears begin with the
/// voice (see [`Aligner::opens_on_voice`]): its vowels, nasals, liquids, glides and DH.
const VOICE_ONSETS: [&str; 22] = [
    "AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW", "OY", "UH", "UW", "M",
    "N", "L", "R", "W", "Y", "DH",
];

/// Name of the folder, inside the models folder, that `scripts/setup-pocketsphinx` fills.
const MODEL_FOLDER: &str = "pocketsphinx-en-us";

/// Where the aligner's model files are.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AlignerModels {
    /// The acoustic model folder (`mdef`, `means`, ...).
    pub acoustic_model: PathBuf,
    /// The pronouncing dictionary (CMUdict in PocketSphinx's format).
    pub dictionary: PathBuf,
    /// The grapheme-to-phoneme weights for words missing from the dictionary; without them such
    /// a word cannot be aligned.
    pub g2p: Option<PathBuf>,
}

impl AlignerModels {
    /// The models as `make setup` installs them in `models_dir` (by default
    /// `~/.cache/caption-engine/models`, or `$CAPTIONS_MODELS`).
    pub fn in_folder(models_dir: &Path) -> Self {
        let root = models_dir.join(MODEL_FOLDER);
        let g2p = models_dir.join(crate::g2p::FILE_NAME);
        Self {
            acoustic_model: root.join("en-us"),
            dictionary: root.join("cmudict-en-us.dict"),
            g2p: g2p.is_file().then_some(g2p),
        }
    }

    /// The models in the default models folder.
    pub fn installed() -> Result<Self> {
        let dir = models_dir().ok_or(Error::NoModelsDir)?;
        Ok(Self::in_folder(&dir))
    }
}

/// A word's time in seconds from the start of the samples aligned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// When the word starts.
    pub start_s: f64,
    /// When it ends (after `start_s`, except for a token that is not spoken at all, which gets
    /// the instant between its neighbours).
    pub end_s: f64,
    /// The shortest the word can be: each of its phones' states one frame long. A word this
    /// short was squeezed in where the audio had no sound for it.
    pub shortest_s: f64,
}

/// Forced alignment of words onto speech: English with its own dictionary, other languages
/// with espeak-ng's phones said as English ones ([`Aligner::language`]).
///
/// Loading takes a fraction of a second (the acoustic model and a 134,000-word dictionary);
/// keep one aligner and share it: calls on several threads each use a decoder of their own,
/// kept for the next call.
#[derive(Debug)]
pub struct Aligner {
    models: AlignerModels,
    g2p: Option<G2p>,
    /// Decoders waiting for a call: for speech, and for songs.
    idle: Mutex<Vec<Decoder>>,
    idle_sung: Mutex<Vec<Decoder>>,
}

impl Aligner {
    /// Loads the models (a fraction of a second).
    ///
    /// # Errors
    ///
    /// [`Error::ModelMissing`] when a file is not there, [`Error::Io`] when it cannot be read,
    /// [`Error::Model`] or [`Error::Decoder`] when it is not a model the aligner understands.
    pub fn open(models: &AlignerModels) -> Result<Self> {
        let decoder = Decoder::open(&models.acoustic_model, &models.dictionary, Search::Speech)?;
        let g2p = models.g2p.as_deref().map(G2p::open).transpose()?;
        Ok(Self {
            models: models.clone(),
            g2p,
            idle: Mutex::new(vec![decoder]),
            idle_sung: Mutex::new(Vec::new()),
        })
    }

    /// Loads the models `make setup` installs, from [`AlignerModels::installed`].
    ///
    /// # Errors
    ///
    /// As [`Aligner::open`], and [`Error::NoModelsDir`] when there is no models folder.
    pub fn open_installed() -> Result<Self> {
        Self::open(&AlignerModels::installed()?)
    }

    fn idle(&self, search: Search) -> &Mutex<Vec<Decoder>> {
        match search {
            Search::Speech => &self.idle,
            Search::Song => &self.idle_sung,
        }
    }

    fn take_decoder(&self, search: Search) -> Result<Decoder> {
        let idle = self
            .idle(search)
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        match idle {
            Some(decoder) => Ok(decoder),
            None => Decoder::open(&self.models.acoustic_model, &self.models.dictionary, search),
        }
    }

    fn give_back(&self, decoder: Decoder, search: Search) {
        self.idle(search)
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(decoder);
    }

    /// Whether `word` (as written: "and", "Eight,", "$25") opens on a sound a voice detector
    /// hears begin with the voice: a vowel, a nasal, a liquid, a glide, or the voiced "th" of
    /// "they". A stop's closure, an "h" or a voiceless fricative ("peppers", "to", "for",
    /// "his") is heard as no voice for up to 120 ms before the voice sets in, so where such a
    /// word starts cannot be read from a voice detector. `false` when the word cannot be
    /// pronounced or its decoder not made.
    pub fn opens_on_voice(&self, word: &str) -> bool {
        self.english().opens_on_voice(word)
    }

    /// The aligner for words of `language` (whisper's code: `en`, `es`, `de`, `zh`, ...), or
    /// `None` when it cannot align that language: espeak-ng has no voice for it, or its script
    /// is written without spaces and has no reading here by the character (Thai, Lao, Khmer,
    /// Burmese, Tibetan, Cantonese).
    ///
    /// English words are said by the CMU dictionary (and a g2p network for the words it
    /// lacks); another language's by espeak-ng, each phone said as the nearest English one;
    /// Mandarin's by the pinyin of each hanzi, and Japanese by MeCab's katakana
    /// pronunciation, said the same way.
    pub fn language(&self, language: &str) -> Option<LanguageAligner<'_>> {
        let speech = match language {
            "en" => Speech::English,
            "zh" => Speech::Mandarin,
            "ja" => Speech::Japanese,
            other => Speech::Espeak(espeak_voice(other)?),
        };
        Some(LanguageAligner {
            aligner: self,
            speech,
            search: Search::Speech,
        })
    }

    fn english(&self) -> LanguageAligner<'_> {
        LanguageAligner {
            aligner: self,
            speech: Speech::English,
            search: Search::Speech,
        }
    }

    /// Aligns `words` (as written: "$25", "3rd", "Hello,") onto `samples_16k_mono`, which must
    /// hold them all and little else (a few seconds to half a minute of speech). Returns one span
    /// per word, in order, never overlapping, within the samples.
    ///
    /// Fails when the words cannot be fitted to the audio (they were not all said, or the audio
    /// is not speech); callers fall back to coarser timings then.
    pub fn align(&self, samples_16k_mono: &[f32], words: &[&str]) -> Result<Vec<Span>> {
        self.english().align(samples_16k_mono, words)
    }

    /// One decoder held for a run of calls: what it learns of the recording's levels (its
    /// running noise and loudness estimate) carries from one call to the next, as for calls of
    /// [`Aligner::align`] on one thread, but no other thread's call comes between: two halves
    /// of a recording can be aligned at once, each on a session of its own, without their
    /// estimates mixing.
    ///
    /// # Errors
    ///
    /// [`Error::Decoder`] when a new decoder is needed and cannot be made.
    pub fn session(&self) -> Result<Session<'_>> {
        self.english().session()
    }

    fn align_with(
        &self,
        decoder: &mut Decoder,
        speech: Speech,
        samples: &[f32],
        words: &[&str],
    ) -> Result<Vec<Span>> {
        let pronouncer = speech.pronouncer(self);
        let mut dictionary_words: Vec<String> = Vec::new();
        // Whether each of `dictionary_words` may be left out by the search.
        let mut optional: Vec<bool> = Vec::new();
        // For each written token, the range of its spoken words among the segments the decoder
        // returns (the words that are not optional).
        let mut tokens: Vec<std::ops::Range<usize>> = Vec::with_capacity(words.len());
        // Phones of each token.
        let mut token_phones = Vec::with_capacity(words.len());
        let mut reported = 0;
        for token in words {
            let first = reported;
            if *token == MAYBE_PAUSE {
                dictionary_words.push(PAUSE.to_owned());
                optional.push(true);
                tokens.push(first..first);
                token_phones.push(0);
                continue;
            }
            if *token == PAUSE {
                dictionary_words.push(PAUSE.to_owned());
                optional.push(false);
                reported += 1;
                tokens.push(first..reported);
                token_phones.push(1);
                continue;
            }
            let mut phones = 0;
            for (word, said) in pronouncer.pronounce(decoder, token)? {
                phones += said;
                dictionary_words.push(word);
                optional.push(false);
                reported += 1;
            }
            tokens.push(first..reported);
            token_phones.push(phones);
        }
        let phones: usize = token_phones.iter().sum();
        if reported == 0 {
            return Err(Error::NothingToAlign);
        }
        let duration_s = samples.len() as f64 / f64::from(SAMPLE_RATE_HZ);
        let shortest_s = |phones: usize| phones as f64 * STATES_PER_PHONE / FRAMES_PER_S;
        let needed_s = shortest_s(phones);
        if needed_s > duration_s {
            return Err(Error::TooShort {
                phones,
                needed_s,
                audio_s: duration_s,
            });
        }
        let pad = (EDGE_PAD_S * f64::from(SAMPLE_RATE_HZ)) as usize;
        let mut pcm = vec![0i16; samples.len() + 2 * pad];
        for (out, &x) in pcm[pad..].iter_mut().zip(samples) {
            *out = (x.clamp(-1.0, 1.0) * f32::from(i16::MAX)).round() as i16;
        }
        if speech != Speech::English {
            let (edges, inside) = pcm.split_at_mut(pad);
            let (inside, after) = inside.split_at_mut(samples.len());
            fill_digital_silence(inside, ROOM_NOISE_STEPS);
            // The added edges get a fainter floor: as loud as the room's, they became room
            // for a first word ("El" at 0.000-0.000 s, inside the edge); left zeros, the
            // search failed on two clips of 108.
            fill_digital_silence(edges, EDGE_NOISE_STEPS);
            fill_digital_silence(after, EDGE_NOISE_STEPS);
        }
        let segments = decoder.align(&pcm, &dictionary_words, &optional)?;

        let at = |frame: u32| (f64::from(frame) / FRAMES_PER_S - EDGE_PAD_S).clamp(0.0, duration_s);
        let mut spans = Vec::with_capacity(tokens.len());
        let mut previous_end_s = 0.0;
        for (token, &phones) in tokens.iter().zip(&token_phones) {
            let span = if token.is_empty() {
                // Not spoken ("—", an emoji): the instant where the previous word ended.
                Span {
                    start_s: previous_end_s,
                    end_s: previous_end_s,
                    shortest_s: 0.0,
                }
            } else {
                let first = &segments[token.start];
                let last = &segments[token.end - 1];
                Span {
                    start_s: at(first.start_frame).max(previous_end_s),
                    end_s: at(last.end_frame),
                    shortest_s: shortest_s(phones),
                }
            };
            previous_end_s = span.end_s.max(span.start_s);
            spans.push(span);
        }
        // A maybe-pause runs on to where the next spoken word starts.
        let mut next_start_s = duration_s;
        for ((span, token), word) in spans.iter_mut().zip(&tokens).zip(words).rev() {
            if *word == MAYBE_PAUSE {
                span.end_s = next_start_s.max(span.start_s);
            } else if !token.is_empty() {
                next_start_s = span.start_s;
            }
        }
        Ok(spans)
    }
}

/// A decoder of an [`Aligner`] held for a run of alignments ([`Aligner::session`]); it goes back
/// to the aligner when dropped.
#[derive(Debug)]
pub struct Session<'a> {
    aligner: &'a Aligner,
    speech: Speech,
    search: Search,
    /// `Some` until dropped.
    decoder: Option<Decoder>,
}

impl Session<'_> {
    /// As [`Aligner::align`], on this session's decoder.
    ///
    /// # Errors
    ///
    /// As [`Aligner::align`].
    pub fn align(&mut self, samples_16k_mono: &[f32], words: &[&str]) -> Result<Vec<Span>> {
        let Some(decoder) = self.decoder.as_mut().filter(|_| !words.is_empty()) else {
            return Ok(Vec::new());
        };
        if self.search == Search::Speech {
            return self
                .aligner
                .align_with(decoder, self.speech, samples_16k_mono, words);
        }
        let squeezed = Squeezed::new(samples_16k_mono);
        let mut spans = self
            .aligner
            .align_with(decoder, self.speech, &squeezed.samples, words)?;
        for span in &mut spans {
            span.start_s = squeezed.original_s(span.start_s, false);
            span.end_s = squeezed.original_s(span.end_s, true).max(span.start_s);
        }
        Ok(spans)
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        if let Some(decoder) = self.decoder.take() {
            self.aligner.give_back(decoder, self.search);
        }
    }
}

/// Runs of exact zeros at least this long are digital silence (see [`fill_digital_silence`]).
const DIGITAL_SILENCE_SAMPLES: usize = 160;
/// The standard deviation of the noise put in digital silence, in 16-bit steps: -50 dBFS, a
/// quiet room's floor. Measured on espeak-ng clips in six languages: 3 steps still failed one
/// clip in two; 30 and 100 aligned them all, 100 the closest (12 ms against 13 mean).
const ROOM_NOISE_STEPS: f64 = 100.0;

/// The noise put in the silence added at the edges of the audio (see [`EDGE_PAD_S`]).
const EDGE_NOISE_STEPS: f64 = 10.0;

/// Fills the runs of exact zeros in `pcm` (an edited video's muted stretch, a synthesiser's
/// pauses) with noise of `steps` standard deviation, the same each time. In a
/// stretch of zeros the acoustic model's features are the logarithm of nothing, and its search
/// for the words (with phones of another language said as English ones) then ended off the
/// grammar on half the espeak-ng clips of the bench; over a noise floor it ends on it.
fn fill_digital_silence(pcm: &mut [i16], steps: f64) {
    // xorshift64*, seeded alike on every call: the same audio aligns the same way.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut uniform = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut at = 0;
    while at < pcm.len() {
        if pcm[at] != 0 {
            at += 1;
            continue;
        }
        let end = pcm[at..]
            .iter()
            .position(|&x| x != 0)
            .map_or(pcm.len(), |n| at + n);
        if end - at >= DIGITAL_SILENCE_SAMPLES {
            for x in &mut pcm[at..end] {
                // The sum of twelve uniforms less six: near enough a unit normal.
                let normal: f64 = (0..12).map(|_| uniform()).sum::<f64>() - 6.0;
                *x = (normal * steps).round() as i16;
            }
        }
        at = end;
    }
}

/// Who says a language's words: the part of alignment that knows the language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Speech {
    /// The CMU dictionary, the g2p network, and English spoken forms of numbers and symbols.
    English,
    /// espeak-ng in this voice, its phones said as English ones.
    Espeak(&'static str),
    /// Pinyin, said by espeak-ng's pinyin voice, its phones said as English ones.
    Mandarin,
    /// MeCab's katakana, said by espeak-ng's Japanese voice, its phones said as English ones.
    Japanese,
}

impl Speech {
    fn pronouncer(self, aligner: &Aligner) -> Box<dyn Pronounce + '_> {
        match self {
            Self::English => Box::new(English {
                g2p: aligner.g2p.as_ref(),
            }),
            Self::Espeak(voice) => Box::new(Espeak { voice }),
            Self::Mandarin => Box::new(Mandarin),
            Self::Japanese => Box::new(Japanese),
        }
    }
}

/// An [`Aligner`] for the words of one language ([`Aligner::language`]).
#[derive(Debug, Clone, Copy)]
pub struct LanguageAligner<'a> {
    aligner: &'a Aligner,
    speech: Speech,
    search: Search,
}

impl<'a> LanguageAligner<'a> {
    /// As [`Aligner::align`], for words of this language.
    ///
    /// # Errors
    ///
    /// As [`Aligner::align`].
    pub fn align(&self, samples_16k_mono: &[f32], words: &[&str]) -> Result<Vec<Span>> {
        if words.is_empty() {
            return Ok(Vec::new());
        }
        self.session()?.align(samples_16k_mono, words)
    }

    /// As [`Aligner::session`], for words of this language.
    ///
    /// # Errors
    ///
    /// As [`Aligner::session`].
    pub fn session(&self) -> Result<Session<'a>> {
        Ok(Session {
            aligner: self.aligner,
            speech: self.speech,
            search: self.search,
            decoder: Some(self.aligner.take_decoder(self.search)?),
        })
    }

    /// This aligner for sung words: the middle of each note held on a vowel is cut out before
    /// the words are aligned (the acoustic model, trained on read speech, took held vowels for
    /// pauses), and a pause between two words costs more (a sung line runs on without one).
    /// Times are on the audio as given.
    #[must_use]
    pub fn sung(self) -> Self {
        Self {
            search: Search::Song,
            ..self
        }
    }

    /// As [`Aligner::opens_on_voice`], for a word of this language: whether its first phone,
    /// said as an English one, is a vowel, a nasal, a liquid, a glide or DH.
    pub fn opens_on_voice(&self, word: &str) -> bool {
        let Ok(mut decoder) = self.aligner.take_decoder(Search::Speech) else {
            return false;
        };
        let pronounce = self.speech.pronouncer(self.aligner);
        let first = pronounce.first_phone(&mut decoder, word);
        self.aligner.give_back(decoder, Search::Speech);
        first.is_some_and(|phone| VOICE_ONSETS.contains(&phone.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digital_silence_gets_a_quiet_noise_floor_and_sound_is_kept() {
        let mut pcm = vec![0i16; 1000];
        pcm[400..600].fill(1234);
        // Too short a run of zeros to be silence.
        pcm[500..550].fill(0);
        let mut filled = pcm.clone();
        fill_digital_silence(&mut filled, ROOM_NOISE_STEPS);
        assert_eq!(filled[400..500], pcm[400..500]);
        assert!(filled[500..550].iter().all(|&x| x == 0));
        let noise: Vec<f64> = filled[..400].iter().map(|&x| f64::from(x)).collect();
        let rms = (noise.iter().map(|x| x * x).sum::<f64>() / noise.len() as f64).sqrt();
        assert!((60.0..140.0).contains(&rms), "{rms}");
        // The same each time.
        let mut again = pcm.clone();
        fill_digital_silence(&mut again, ROOM_NOISE_STEPS);
        assert_eq!(again, filled);
    }
}
