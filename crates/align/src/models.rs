//! Where the models are installed.

/// The models folder: `$CAPTIONS_MODELS`, else `~/.cache/caption-engine/models` (where the
/// whisper models are too).
pub(crate) use caption_core::models_dir;
