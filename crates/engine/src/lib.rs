//! The caption engine, as one facade.
//!
//! [`Engine`] ties the parts together: the template catalog and installed fonts, object storage
//! (`caption-store`), persistent transcription jobs (`caption-jobs`) worked by a bounded pool
//! ([`Engine::spawn_workers`]), audio decoding (`caption-media`) and speech recognition
//! (`caption-transcribe`). Generates can also run as background jobs, and the end of any job
//! can be announced by a signed webhook event, delivered by the same job store
//! ([`WebhookOptions`]). [`Engine::preview_png`] draws one caption
//! frame for choosing a style. The command line and the HTTP service are thin layers over it.

mod engine;
mod error;
mod generate;
mod preview;
mod webhook;
mod workers;

pub use engine::{Engine, EngineOptions, TranscriptionStatus};
pub use error::{Error, Result};
pub use generate::GenerateStatus;
pub use preview::PreviewFrame;
pub use webhook::{
    EVENT_ID_HEADER, SIGNATURE_HEADER, WebhookOptions, is_public_address, sign, verify_signature,
};
pub use workers::WorkerPool;

pub use caption_media::{BurnOptions, BurnReport};
