//! The caption engine, as one facade.
//!
//! [`Engine`] ties the parts together: the template catalog and installed fonts, object storage
//! (`caption-store`), persistent transcription jobs (`caption-jobs`) worked by a bounded pool
//! ([`Engine::spawn_workers`]), audio decoding (`caption-media`) and speech recognition
//! (`caption-transcribe`). The command line and the HTTP service are thin layers over it.

mod engine;
mod error;
mod generate;
mod workers;

pub use engine::{Engine, EngineOptions};
pub use error::{Error, Result};
pub use workers::WorkerPool;

pub use caption_media::{BurnOptions, BurnReport};
