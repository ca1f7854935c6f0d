//! Forced alignment: where each of a known sequence of words is spoken.
//!
//! Whisper decides what was said; this crate decides where. Words are turned into phones (the
//! CMU pronouncing dictionary, a grapheme-to-phoneme network for words it lacks, and spoken
//! forms for numbers and symbols) and aligned onto the audio with PocketSphinx's acoustic model.

mod aligner;
mod decoder;
mod error;
mod g2p;
mod spoken;
mod sys;

pub use aligner::{Aligner, AlignerModels, SAMPLE_RATE_HZ, Span};
pub use error::{Error, Result};
pub use g2p::G2p;
pub use spoken::spoken_words;
