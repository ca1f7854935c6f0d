//! The caption engine: words from speech, and captions that light up word by word, burned into
//! video.
//!
//! [`Captioner`] is the front door. It works on local files with nothing else running: it
//! transcribes speech into timed [`Word`]s (whisper.cpp decides the words, a forced aligner
//! where they start and end), times a text you have on the speech ([`Captioner::align`]), burns
//! captions in a template's style into a video ([`Captioner::burn`]) and draws one caption frame
//! ([`Captioner::preview_png`]) and reads and writes SRT, WebVTT and ASS subtitles
//! ([`Captioner::import_subtitles`], [`Captioner::export_subtitles`]). Long calls take a [`Task`]: the language, a progress callback
//! ([`Progress`]: a [`Stage`] and 0–100) and a [`Cancel`] flag. Every error has a typed
//! [`ErrorCode`].
//!
//! ```no_run
//! use caption_engine::{Captioner, Task};
//!
//! let captioner = Captioner::builder().model("tiny.en").build()?;
//! let task = Task::default().on_progress(|p| eprintln!("{} {}%", p.stage, p.percent));
//! let words = captioner.transcribe("talk.mp4", &task)?;
//! let style = captioner.template("bold-highlight")?.config;
//! captioner.burn("talk.mp4", "talk-captioned.mp4", &words, &style, &task)?;
//! # Ok::<(), caption_engine::Error>(())
//! ```
//!
//! With the `service` feature, [`Engine`] adds what a server needs on top of the same front
//! door: object storage (`caption-store`), persistent jobs (`caption-jobs`) worked by a bounded
//! pool ([`Engine::spawn_workers`]), generates as background jobs and signed webhook events
//! ([`WebhookOptions`]). The command line and the HTTP service are built on it.

#![warn(missing_docs)]

mod audio;
mod captioner;
mod error;
mod overlay;
mod preview;
mod reframe;
#[cfg(feature = "service")]
mod service;
mod speakers;
mod subtitles;
mod task;

pub use captioner::{Captioner, CaptionerBuilder};
pub use error::{Error, Result};
pub use preview::PreviewFrame;
#[cfg(feature = "service")]
pub use service::{
    EVENT_ID_HEADER, Engine, EngineOptions, GenerateStatus, SIGNATURE_HEADER, TranscriptionStatus,
    WebhookOptions, WorkerPool, cap_arenas, is_public_address, sign, verify_signature,
};
pub use task::{Cancel, Progress, Stage, Task};

pub use caption_core::Span as CutSpan;
pub use caption_core::{
    Color, Config, ConfigPatch, Cue, CutPlan, CutRules, ErrorCode, ExportOptions, Reframe,
    SpeakerCount, SubtitleError, SubtitleFormat, Template, TemplateSummary, ValidationErrors, Word,
    cues_to_words, export_words, import_words, parse_cues,
};
pub use caption_media::{BurnOptions, BurnReport, CropKey, CropPath, LayerFormat, LayerReport};
pub use caption_transcribe::{GivenText, Transcriber, return_large_blocks_when_freed};
