//! Who speaks each word.
//!
//! [`VoiceEncoder`] is the GE2E voice encoder of resemblyzer 0.1.4 (Apache-2.0), run in plain
//! Rust on the weights `scripts/setup-wheel-models` converts from the wheel's `pretrained.pt`.
//! [`Diarizer`] cuts timed words into segments at pauses, embeds each segment's voice and
//! clusters the segments into speakers, numbered in order of first speech; the number of
//! speakers is estimated unless given ([`SpeakerCount`]).

#![warn(missing_docs)]

mod cluster;
mod diarize;
mod encoder;
mod error;
mod mel;

pub use caption_core::SpeakerCount;
pub use diarize::{Diarizer, WordSpan};
pub use encoder::{EMBEDDING_DIM, Embedding, VoiceEncoder, WEIGHTS_FILE_NAME};
pub use error::{Error, Result};
