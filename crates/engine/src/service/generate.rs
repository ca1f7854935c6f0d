//! Generate: words + style → a captioned video, burned by the media pipeline.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use caption_core::{
    Config, GenerateRequest, GenerateResponse, JobError, JobStatus, OutputKind, Word,
};
use caption_jobs::{JobKind, JobRecord, JobSpec, now_ms};
use caption_media::{BurnOptions, BurnReport};
use caption_store::{ObjectKey, PutOptions};

use super::slots::Slot;
use super::webhook::rfc3339;
use crate::{Engine, Error, PreviewFrame, Result, Task};

impl Engine {
    /// `None` when the font family is installed; otherwise the rule a config naming it breaks,
    /// with the closest installed families.
    pub fn missing_font_rule(&self, family: &str) -> Result<Option<String>> {
        crate::captioner::missing_font_rule(family)
    }

    /// The config a request asks for: its patch over the template it names (or the default),
    /// with every broken rule at once.
    pub fn resolve_config(&self, request: &GenerateRequest) -> Result<Config> {
        self.inner
            .captioner
            .style(request.template_id.as_deref(), &request.config)
    }

    /// Burns `words` in `config` into the local video `input`, writing `output` (H.264 in the
    /// container its extension names). Blocking: call it off the async runtime.
    pub fn burn_file(
        &self,
        input: &Path,
        output: &Path,
        words: &[Word],
        config: &Config,
        options: &BurnOptions,
    ) -> Result<BurnReport> {
        self.inner
            .captioner
            .burn_with(input, output, words, config, options, &Task::default())
    }

    /// The caption of `words` in `config` at `frame.at_s` as PNG bytes (see
    /// [`Captioner::preview_png`](crate::Captioner::preview_png)). Blocking: call it off the
    /// async runtime.
    pub fn preview_png(
        &self,
        words: &[Word],
        config: &Config,
        frame: PreviewFrame,
    ) -> Result<Vec<u8>> {
        self.inner.captioner.preview_png(words, config, frame)
    }

    /// `POST /generate`: fetches the input, burns the captions, stores the result and returns
    /// a download link. At most `generate_slots` burns run at once (background ones too); a
    /// request that finds them all running is [`Error::Busy`] with a guessed wait.
    pub async fn generate(&self, request: GenerateRequest) -> Result<GenerateResponse> {
        self.generate_with(request, None).await
    }

    /// [`Engine::generate`], announcing its end at `webhook_url` (a signed `generate.completed`
    /// or `generate.failed` event) once the input was found.
    pub async fn generate_with(
        &self,
        request: GenerateRequest,
        webhook_url: Option<&str>,
    ) -> Result<GenerateResponse> {
        // Checked before a slot is taken: a bad request gets its own error, never `busy`.
        let (key, config) = self.check_generate(&request, webhook_url).await?;
        let slot = self.inner.generate_slots.try_take()?;
        let mut options = BurnOptions::default().with_reframe(request.reframe);
        options.progress = Some(Arc::new(slot.reporter()));
        let out_key =
            ObjectKey::new_under("outputs", &output_name(key.file_name(), request.output));
        let outcome = self
            .burn_and_store(
                &key,
                &out_key,
                request.words,
                config,
                request.output,
                options,
            )
            .await;
        drop(slot);
        let outcome = match outcome {
            Ok(()) => self
                .inner
                .storage
                .download_url(&out_key)
                .await
                .map_err(Error::from),
            Err(e) => Err(e),
        };
        if let Some(url) = webhook_url {
            let now = rfc3339(now_ms());
            let event = match &outcome {
                Ok(download_url) => serde_json::json!({
                    "type": "generate.completed", "status": "COMPLETED",
                    "download_url": download_url, "created_at": now,
                }),
                Err(e) => serde_json::json!({
                    "type": "generate.failed", "status": "FAILED",
                    "error": {"code": e.code().as_str(), "message": e.public_message()}, "created_at": now,
                }),
            };
            if let Err(e) = self.queue_event(url, event).await {
                tracing::error!(error = %e, "queueing a generate event failed");
            }
        }
        Ok(GenerateResponse {
            download_url: outcome?,
        })
    }

    /// Starts a generate in the background: checks the request, queues a job and answers at
    /// once with its id and the link the video will be at ([`Engine::generate_status`] tells
    /// when it is there). Its end is announced at `webhook_url` when given.
    pub async fn generate_async(
        &self,
        request: GenerateRequest,
        webhook_url: Option<&str>,
    ) -> Result<(String, String)> {
        let (key, _) = self.check_generate(&request, webhook_url).await?;
        let out_key =
            ObjectKey::new_under("outputs", &output_name(key.file_name(), request.output));
        let download_url = self.inner.storage.download_url(&out_key).await?;
        let payload = serde_json::json!({
            "request": serde_json::to_value(&request)
                .map_err(|e| Error::Internal(format!("generate request: {e}")))?,
            "output": out_key.as_str(),
        });
        let job = self
            .inner
            .jobs
            .submit(JobSpec {
                input: key.as_str().to_owned(),
                kind: JobKind::Generate,
                payload: Some(payload),
                webhook_url: webhook_url.map(str::to_owned),
                ..JobSpec::default()
            })
            .await?;
        self.inner.generate_submitted.notify_one();
        tracing::info!(job_id = %job.id, input = %key, output = %out_key, "generate queued");
        Ok((job.id, download_url))
    }

    /// A background generate's status, progress, error and download link.
    pub async fn generate_status(&self, job_id: &str) -> Result<GenerateStatus> {
        let job = self.job_of_kind(job_id, JobKind::Generate).await?;
        let download_url = self.output_link(&job).await?;
        let completed = job.status == JobStatus::Completed;
        Ok(GenerateStatus {
            job_id: job.id,
            status: job.status,
            progress: if completed { 100 } else { job.progress },
            error: if job.status == JobStatus::Failed {
                job.error
            } else {
                None
            },
            download_url,
        })
    }

    /// Cancels a queued or running background generate (see
    /// [`Engine::cancel_transcription`]).
    pub async fn cancel_generate(&self, job_id: &str) -> Result<GenerateStatus> {
        self.job_of_kind(job_id, JobKind::Generate).await?;
        self.cancel_job(job_id).await?;
        self.generate_status(job_id).await
    }

    /// Runs a claimed background generate: the burn, then the output stored.
    pub(crate) async fn generate_stored(
        &self,
        job: &JobRecord,
        slot: &Slot,
        progress: Arc<AtomicU8>,
        cancel: Arc<AtomicBool>,
    ) -> Result<()> {
        let payload = job.spec.payload.clone().unwrap_or_default();
        let request: GenerateRequest =
            serde_json::from_value(payload.get("request").cloned().unwrap_or_default())
                .map_err(|e| Error::Internal(format!("generate job {}: request: {e}", job.id)))?;
        let output = payload
            .get("output")
            .and_then(|o| o.as_str())
            .and_then(|o| ObjectKey::parse(o).ok())
            .ok_or_else(|| Error::Internal(format!("generate job {}: no output key", job.id)))?;
        let key =
            ObjectKey::parse(&request.input).map_err(|e| Error::invalid("input", e.to_string()))?;
        let config = self.resolve_config(&request)?;
        let mut options = BurnOptions::default().with_reframe(request.reframe);
        let pace = slot.reporter();
        options.progress = Some(Arc::new(move |fraction: f64| {
            pace(fraction);
            // 100 is kept for the stored file.
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "clamped to 0..=99 first"
            )]
            let percent = (fraction * 100.0).clamp(0.0, 99.0) as u8;
            progress.fetch_max(percent, Ordering::Relaxed);
        }));
        options.cancel = Some(cancel);
        self.burn_and_store(
            &key,
            &output,
            request.words,
            config,
            request.output,
            options,
        )
        .await
    }

    /// What a generate checks before it burns or queues: the input's name, the config (its
    /// template, font, colours), that the file is stored, and the webhook URL. A service calls
    /// it before admitting the request, so a bad one gets its own error and never `busy`.
    /// Returns the input's key and the resolved config.
    pub async fn check_generate(
        &self,
        request: &GenerateRequest,
        webhook_url: Option<&str>,
    ) -> Result<(ObjectKey, Config)> {
        let key =
            ObjectKey::parse(&request.input).map_err(|e| Error::invalid("input", e.to_string()))?;
        let config = self.resolve_config(request)?;
        self.check_stored(&key, &request.input).await?;
        if let Some(url) = webhook_url {
            self.check_webhook_url(url).await?;
        }
        Ok((key, config))
    }

    /// Fetches `key`, burns `words` into it (or, for an overlay `kind`, draws them alone on a
    /// transparent background) and stores the result at `out_key`.
    async fn burn_and_store(
        &self,
        key: &ObjectKey,
        out_key: &ObjectKey,
        words: Vec<Word>,
        config: Config,
        kind: OutputKind,
        mut options: BurnOptions,
    ) -> Result<()> {
        let scratch = self.fetch_to_scratch(key).await?;
        let input = scratch.path().join(key.file_name());
        let output = scratch.path().join(output_name(key.file_name(), kind));
        let started = std::time::Instant::now();
        let (frames, warnings) = {
            let (engine, input, output) = (self.clone(), input.clone(), output.clone());
            options.encoder_threads = self.inner.options.encoder_threads;
            tokio::task::spawn_blocking(move || {
                if kind == OutputKind::Video {
                    let report = engine.burn_file(&input, &output, &words, &config, &options)?;
                    Ok::<_, Error>((report.frames, report.warnings))
                } else {
                    let report = engine.inner.captioner.burn_layer_with(
                        &input,
                        &output,
                        &words,
                        &config,
                        &options,
                        &Task::default(),
                    )?;
                    Ok((report.frames, Vec::new()))
                }
            })
            .await
            .map_err(|e| Error::Internal(format!("burn task: {e}")))??
        };
        let file = tokio::fs::File::open(&output)
            .await
            .map_err(|source| Error::Io {
                context: format!("opening {}", output.display()),
                source,
            })?;
        let body = Box::pin(tokio_util_stream(file));
        match self
            .inner
            .storage
            .put(out_key, body, PutOptions::default())
            .await
        {
            Ok(_) => {}
            // The key is this request's own (a fresh folder) and a put is whole or nothing, so
            // an object there is this job's output, stored by an earlier try whose answer was
            // lost (the bucket stored the file, then failed before it said so) or by the
            // store's own retry of the same request.
            Err(caption_store::Error::AlreadyExists { .. }) => {
                tracing::info!(output = %out_key, "the output was stored by an earlier try");
            }
            Err(e) => return Err(e.into()),
        }
        tracing::info!(
            input = %key, output = %out_key, frames,
            elapsed_s = started.elapsed().as_secs_f64(), "generated"
        );
        // The interface's answer has no place for them; the operator's log does.
        for warning in &warnings {
            tracing::warn!(input = %key, output = %out_key, warning, "damaged input");
        }
        Ok(())
    }
}

/// A background generate as a client sees it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct GenerateStatus {
    /// The background job.
    pub job_id: String,
    /// Queued, running, completed or failed.
    pub status: JobStatus,
    /// 0–100.
    pub progress: u8,
    /// Present when `FAILED`.
    pub error: Option<JobError>,
    /// Where the video is (or will be) downloaded; a fresh link on every call.
    pub download_url: String,
}

/// `clip.mov` → `clip-captioned.mp4`; its caption layer `clip-captions.mov` or `.webm`.
fn output_name(input_name: &str, kind: OutputKind) -> String {
    let stem = Path::new(input_name)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("video");
    match kind {
        OutputKind::Video => format!("{stem}-captioned.mp4"),
        OutputKind::OverlayMov => format!("{stem}-captions.mov"),
        OutputKind::OverlayWebm => format!("{stem}-captions.webm"),
    }
}

/// A file as a stream of chunks, for storage uploads.
fn tokio_util_stream(
    file: tokio::fs::File,
) -> impl futures_util::Stream<Item = std::io::Result<bytes::Bytes>> + Send {
    futures_util::stream::unfold(file, |mut file| async move {
        use tokio::io::AsyncReadExt;
        let mut buf = vec![0_u8; 1 << 20];
        match file.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok(bytes::Bytes::from(buf)), file))
            }
            Err(e) => Some((Err(e), file)),
        }
    })
}
