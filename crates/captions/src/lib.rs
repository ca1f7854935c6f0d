//! Captions that light up word by word.
//!
//! Transcribe the speech of a video into timed words (whisper.cpp decides the words, a forced
//! aligner where each starts and ends), and burn animated captions in a template's style into the
//! video, locally. This is the one crate to depend on; everything a program needs is here.
//!
//! ```no_run
//! use captions::{Captioner, Task};
//!
//! fn main() -> Result<(), captions::Error> {
//!     let captioner = Captioner::builder().model("tiny.en").build()?;
//!     let task = Task::default().on_progress(|p| eprintln!("{} {}%", p.stage, p.percent));
//!     let words = captioner.transcribe("talk.mp4", &task)?;
//!     let style = captioner.template("bold-highlight")?.config;
//!     captioner.burn("talk.mp4", "talk-captioned.mp4", &words, &style, &task)?;
//!     Ok(())
//! }
//! ```
//!
//! [`Captioner`] needs no storage, job store, async runtime or network. Every long call takes a
//! [`Task`]: the spoken language, a progress callback ([`Progress`]: a [`Stage`] and 0–100) and
//! a [`Cancel`] flag; every error has a typed [`ErrorCode`].
//!
//! The same on a clip made here (espeak-ng and ffmpeg, as `make setup` installs them), checked:
//!
//! ```
//! use captions::{Captioner, Stage, Task};
//!
//! let dir = tempfile::tempdir()?;
//! let video = caption_testkit::media::speech_video(
//!     &dir.path().join("talk.mp4"),
//!     "color=c=gray:s=320x240:r=25",
//!     "Good morning everyone, this is a test of the captions.",
//! )?;
//! let captioner = Captioner::builder().model("tiny.en").build()?;
//! let burned = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
//! let seen = burned.clone();
//! let task = Task::default().on_progress(move |p| {
//!     if p.stage == Stage::Burning && p.percent == 100 {
//!         seen.store(true, std::sync::atomic::Ordering::Relaxed);
//!     }
//! });
//! let words = captioner.transcribe(&video, &task)?;
//! let text: String = words.iter().map(|w| w.word.to_lowercase() + " ").collect();
//! assert!(text.contains("morning") && text.contains("test"), "heard {text:?}");
//! assert!(words.windows(2).all(|w| w[0].end <= w[1].start), "in order, not overlapping");
//!
//! let style = captioner.template("bold-highlight")?.config;
//! let output = dir.path().join("talk-captioned.mp4");
//! let report = captioner.burn(&video, &output, &words, &style, &task)?;
//! assert!(report.frames_with_overlay > 0 && output.is_file());
//! assert!(burned.load(std::sync::atomic::Ordering::Relaxed), "progress reached 100 %");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! With none (the default), this crate links whisper.cpp, FFmpeg, fontconfig and the drawing
//! crates, nothing of a server.
//!
//! - `service`: `service::Engine`, object storage on local disk, persistent jobs in an
//!   embedded database (redb) worked by a bounded pool, background generates and signed
//!   webhooks.
//! - `s3`: S3-compatible buckets for the service's objects (`service::storage::S3Storage`,
//!   object_store's `aws` backend), on top of `service`.
//! - `postgres`: jobs in PostgreSQL shared by several machines
//!   (`service::jobs::PostgresJobStore`, tokio-postgres), on top of `service`.
//! - `http`: the HTTP service of the seven endpoints (the `http` module), on top of `service`,
//!   `s3` and `postgres` (its configuration may name either).

#![warn(missing_docs)]

pub use caption_engine::{
    BurnOptions, BurnReport, Cancel, Captioner, CaptionerBuilder, Color, Config, ConfigPatch,
    CropKey, CropPath, Error, ErrorCode, GivenText, LayerFormat, LayerReport, PreviewFrame,
    Progress, Reframe, Result, SpeakerCount, Stage, Task, Template, TemplateSummary, Transcriber,
    ValidationErrors, Word, return_large_blocks_when_freed,
};

/// Subtitle files: SRT, WebVTT and ASS in and out, by subtitle practice
/// ([`Captioner::import_subtitles`] and [`Captioner::export_subtitles`] work on files;
/// [`Captioner::subtitles`] writes ASS as the burn lays captions out, with the system's fonts).
pub mod subtitles {
    pub use caption_engine::{
        Cue, ExportOptions, SubtitleError, SubtitleFormat, cues_to_words, export_words,
        import_words, parse_cues,
    };
}

/// What a server adds to the front door: object storage, persistent jobs, workers, webhooks.
#[cfg(feature = "service")]
pub mod service {
    pub use caption_engine::{
        EVENT_ID_HEADER, Engine, EngineOptions, GenerateStatus, SIGNATURE_HEADER,
        TranscriptionStatus, WebhookOptions, WorkerPool, is_public_address, sign, verify_signature,
    };
    /// Persistent jobs: the job store trait, its embedded store and (feature `postgres`) its
    /// PostgreSQL store.
    pub use caption_jobs as jobs;
    /// Object storage: local disk or (feature `s3`) S3, upload descriptors and download links.
    pub use caption_store as storage;
}

/// The HTTP service: the seven endpoints behind an `x-api-key` header, the studio page and
/// the OpenAPI document.
#[cfg(feature = "http")]
pub use caption_http as http;
