//! Where the model files are installed.

use std::path::PathBuf;

/// The models folder: `$CAPTIONS_MODELS`, else `~/.cache/caption-engine/models`, where
/// `make setup` installs the speech, voice and face models; `None` when neither variable is
/// set.
pub fn models_dir() -> Option<PathBuf> {
    let non_empty = |name| std::env::var_os(name).filter(|value| !value.is_empty());
    match non_empty("CAPTIONS_MODELS") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => Some(PathBuf::from(non_empty("HOME")?).join(".cache/caption-engine/models")),
    }
}
