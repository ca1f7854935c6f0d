//! The installed whisper models, for the tests.

use std::sync::{Arc, Mutex, OnceLock};

use caption_transcribe::WhisperTranscriber;

type Loaded = Mutex<Vec<(&'static str, Arc<WhisperTranscriber>)>>;

/// Each model is loaded once per test binary and shared, as the engine would.
pub fn model(name: &'static str) -> Arc<WhisperTranscriber> {
    static MODELS: OnceLock<Loaded> = OnceLock::new();
    let mut loaded = MODELS.get_or_init(Default::default).lock().unwrap();
    if let Some((_, m)) = loaded.iter().find(|(n, _)| *n == name) {
        return m.clone();
    }
    let transcriber = WhisperTranscriber::open_installed(name)
        .unwrap_or_else(|e| panic!("{e}\n(run scripts/setup-models, or set CAPTIONS_MODELS to a folder holding ggml-{name}.bin)"));
    let transcriber = Arc::new(transcriber);
    loaded.push((name, transcriber.clone()));
    transcriber
}
