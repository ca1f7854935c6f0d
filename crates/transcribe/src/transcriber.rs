//! The boundary trait and its options.

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use caption_core::Word;

use crate::error::Result;
use crate::given::GivenText;

/// Sample rate of the audio every [`Transcriber`] takes.
pub const SAMPLE_RATE_HZ: u32 = 16_000;

/// Receives progress in percent (0 to 100, never decreasing) from a running transcription.
pub type ProgressFn = Arc<dyn Fn(u8) + Send + Sync>;

/// A backend's working state carried from one window of an input to the next (see
/// [`transcribe_source`](crate::transcribe_source)), so that a long input does not make and
/// drop it window after window.
pub(crate) type Carry = Arc<Mutex<Option<Box<dyn Any + Send>>>>;

/// What a transcription produced.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Transcript {
    /// The spoken words in time order.
    pub words: Vec<Word>,
    /// ISO 639-1 code of the language transcribed: the one asked for, or the detected one.
    /// `None` when there was no speech to detect it from.
    pub language: Option<String>,
}

/// Speech to timed words.
///
/// Contract, for every implementation:
/// - input: mono samples at [`SAMPLE_RATE_HZ`], nominally in [-1, 1]; any length (an empty or
///   silent input gives no words, not an error); non-finite samples are an error;
/// - output words are in time order and do not overlap; `0 <= start < end <= input duration`;
///   `word` is the bare word, `punctuated_word` carries the punctuation written around it;
/// - language: `"auto"` (or empty) detects it when the model can; an ISO 639-1 code forces it;
///   a language the model cannot transcribe is an error, never a transcript in another language;
/// - [`TranscribeOptions::cancel`] is honoured within a few seconds with [`crate::Error::Cancelled`];
/// - no panic on any input; an implementation is shared across threads (`Arc<dyn Transcriber>`)
///   and may run several transcriptions at once.
pub trait Transcriber: Send + Sync + fmt::Debug {
    /// Transcribes `samples_16k_mono`.
    fn transcribe(
        &self,
        samples_16k_mono: &[f32],
        options: &TranscribeOptions,
    ) -> Result<Transcript>;

    /// Times a text the caller already has (a script, subtitles) on `samples_16k_mono`: the
    /// words come out as given, in order, each with the time it is spoken. The same contract
    /// as [`Transcriber::transcribe`] for the audio, language, progress and cancellation.
    fn align_text(
        &self,
        samples_16k_mono: &[f32],
        text: &GivenText,
        options: &TranscribeOptions,
    ) -> Result<Transcript>;

    /// Where `samples_16k_mono` has a voice, in time order: the regions a transcription looks
    /// for words in. Pauses are what lies between them.
    fn voice_regions(&self, samples_16k_mono: &[f32]) -> Result<Vec<caption_core::Span>>;

    /// Whether languages other than English can be transcribed.
    fn is_multilingual(&self) -> bool;

    /// A short name of the model, for logs and job records.
    fn model_name(&self) -> &str;
}

/// Options of one transcription; build with `TranscribeOptions::default().language("es")…`.
#[derive(Clone)]
#[non_exhaustive]
pub struct TranscribeOptions {
    /// `"auto"` (the default, also when empty) or an ISO 639-1 code such as `"es"`.
    pub language: String,
    /// Worker threads; 0 (the default) uses every available core.
    pub threads: usize,
    /// Called with the progress in percent.
    pub progress: Option<ProgressFn>,
    /// Set to `true` to stop the transcription early.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Translate the speech into English words (a multilingual model is needed).
    pub translate: bool,
    /// Keep the "um"s and "uh"s of English speech as words (whisper leaves most out).
    pub keep_fillers: bool,
    /// Show whisper's encoder a short piece with 8 s of silence instead of a 30 s window (the
    /// default; see [`TranscribeOptions::short_window`]).
    pub short_window: bool,
    /// Hypotheses whisper keeps while decoding: 1 decodes greedily, 0 (the default) means
    /// [`DEFAULT_BEAM_SIZE`](crate::DEFAULT_BEAM_SIZE).
    pub beam_size: usize,
    /// Set by `transcribe_source` for the windows of one input.
    pub(crate) carry: Option<Carry>,
}

impl Default for TranscribeOptions {
    fn default() -> Self {
        Self {
            language: String::new(),
            threads: 0,
            progress: None,
            cancel: None,
            translate: false,
            keep_fillers: false,
            short_window: true,
            beam_size: 0,
            carry: None,
        }
    }
}

impl fmt::Debug for TranscribeOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TranscribeOptions")
            .field("language", &self.language)
            .field("threads", &self.threads)
            .field("translate", &self.translate)
            .field("keep_fillers", &self.keep_fillers)
            .field("short_window", &self.short_window)
            .field("beam_size", &self.beam_size)
            .field("progress", &self.progress.as_ref().map(|_| "Fn(u8)"))
            .field("cancel", &self.cancel)
            .finish()
    }
}

impl TranscribeOptions {
    /// `"auto"` to detect the language, or an ISO 639-1 code such as `"es"` to force it.
    pub fn language(mut self, language: impl Into<String>) -> Self {
        self.language = language.into();
        self
    }

    /// `true` to get English words whatever the language spoken (whisper's translation; a
    /// multilingual model is needed). The words are timed by whisper alone: the forced aligner
    /// cannot place English words on speech in another language.
    pub fn translate(mut self, translate: bool) -> Self {
        self.translate = translate;
        self
    }

    /// `true` to keep the fillers ("um", "uh") of English speech as words, marked `filler`,
    /// so that they can be cut. Whisper writes clean text and leaves most of them out; asked
    /// to keep them, it is steered towards verbatim text, which costs a little accuracy on the
    /// other words.
    pub fn keep_fillers(mut self, keep: bool) -> Self {
        self.keep_fillers = keep;
        self
    }

    /// `true` (the default) to let whisper's encoder see a piece shorter than 22 s with 8 s of
    /// silence after it, instead of padded to the whole 30 s window it learnt on; `false` for
    /// the whole window. On the word-timing bench (123 English clips of 2–17 s, tiny.en) the
    /// median clip is transcribed 1.75x faster than with the whole window, at the same word
    /// error rate (0.110 against 0.111; lower on clean speech, higher under noise, with single
    /// words differing either way); on its espeak-ng clips in Spanish, French, Italian,
    /// Portuguese and Dutch (base) in about half the time at the same or a lower word error
    /// rate. Those languages and Japanese, where it was measured, take it; pieces of 22 s and
    /// more, other languages (German lost words with it), a language left to detection, and
    /// translation keep the whole window.
    pub fn short_window(mut self, short: bool) -> Self {
        self.short_window = short;
        self
    }

    /// How many hypotheses whisper keeps while decoding: 1 decodes greedily, 0 uses
    /// [`DEFAULT_BEAM_SIZE`](crate::DEFAULT_BEAM_SIZE) (5). Values above 8 are taken as 8.
    ///
    /// Fewer is faster and riskier. On five minutes of read speech (tiny.en, 2 threads) greedy
    /// decoding took 19 s instead of 30 s, but it skipped two 15 s stretches of speech whole
    /// (726 words heard instead of 816); 2 and 3 hypotheses skipped the same stretches.
    pub fn beam_size(mut self, beams: usize) -> Self {
        self.beam_size = beams;
        self
    }

    /// Worker threads; 0 uses every available core.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Calls `progress` with the percent done (0 to 100, never decreasing), from the
    /// transcribing thread.
    pub fn progress(mut self, progress: impl Fn(u8) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// Stops the transcription within a few seconds of `cancel` being raised, with
    /// [`Error::Cancelled`](crate::Error::Cancelled).
    pub fn cancel(mut self, cancel: Arc<AtomicBool>) -> Self {
        self.cancel = Some(cancel);
        self
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }

    pub(crate) fn effective_beam_size(&self) -> usize {
        match self.beam_size {
            0 => crate::DEFAULT_BEAM_SIZE,
            n => n.min(8),
        }
    }

    pub(crate) fn effective_threads(&self) -> usize {
        if self.threads > 0 {
            self.threads
        } else {
            std::thread::available_parallelism().map_or(1, usize::from)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beam_size_zero_is_the_default_and_large_ones_are_capped() {
        let beams = |n| {
            TranscribeOptions::default()
                .beam_size(n)
                .effective_beam_size()
        };
        assert_eq!(beams(0), crate::DEFAULT_BEAM_SIZE);
        assert_eq!(beams(1), 1);
        assert_eq!(beams(3), 3);
        assert_eq!(beams(50), 8);
    }
}
