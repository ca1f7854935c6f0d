//! What a server adds to the front door: storage, persistent jobs, workers, webhooks.

mod engine;
mod generate;
mod memory;
mod slots;
mod webhook;
mod workers;

pub use engine::{Engine, EngineOptions, TranscriptionStatus};
pub use generate::GenerateStatus;
pub use memory::cap_arenas;
pub use webhook::{
    EVENT_ID_HEADER, SIGNATURE_HEADER, WebhookOptions, is_public_address, sign, verify_signature,
};
pub use workers::WorkerPool;
