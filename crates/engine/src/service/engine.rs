use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use caption_core::{
    Catalog, JobStatus, SpeakerCount, Template, TemplateSummary, TranscriptRequest,
    TranscriptResult, TranscriptTask, Word,
};
use caption_jobs::{JobKind, JobRecord, JobSpec, JobStore};
use caption_store::{GetOptions, ObjectKey, Storage};
use caption_transcribe::Transcriber;
use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;

use super::WebhookOptions;
use crate::audio::DecodedAudio;
use crate::{Captioner, Error, Result, Stage, Task};

/// How an [`Engine`] runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EngineOptions {
    /// Scratch files (inputs fetched from storage for decoding) live under `data_dir/tmp`.
    pub data_dir: PathBuf,
    /// Installed whisper model used for transcription jobs (`base` or `tiny.en`).
    pub model: String,
    /// Transcription jobs run at once.
    pub workers: usize,
    /// Threads each transcription uses; 0 = every core.
    pub threads_per_job: usize,
    /// A claimed job is queued again when its worker sends no heartbeat for this long.
    pub lease: Duration,
    /// Claims a job may have (crashes, restarts) before it fails for good.
    pub max_attempts: u32,
    /// A folder of extra templates that add to or replace the built-in ones.
    pub templates_dir: Option<PathBuf>,
    /// Generate requests burned at once; more are refused as busy (HTTP 429).
    pub generate_slots: usize,
    /// x264 threads per burn; 0 lets x264 choose.
    pub encoder_threads: usize,
    /// Signing and delivery of webhook events.
    pub webhooks: WebhookOptions,
    /// Webhook deliveries made at once by this process.
    pub webhook_workers: usize,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            data_dir: PathBuf::from("data"),
            model: "base".to_owned(),
            workers: 1,
            threads_per_job: 0,
            lease: Duration::from_secs(30),
            max_attempts: 3,
            templates_dir: None,
            generate_slots: 2,
            encoder_threads: 0,
            webhooks: WebhookOptions::default(),
            webhook_workers: 2,
        }
    }
}

impl EngineOptions {
    /// Scratch files (inputs fetched from storage for decoding) live under `data_dir/tmp`.
    #[must_use]
    pub fn data_dir(mut self, data_dir: impl Into<PathBuf>) -> Self {
        self.data_dir = data_dir.into();
        self
    }

    /// The installed whisper model used for transcription jobs (`base` or `tiny.en`).
    #[must_use]
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// Transcription jobs run at once.
    #[must_use]
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = workers;
        self
    }

    /// Threads each transcription uses; 0 = every core.
    #[must_use]
    pub fn threads_per_job(mut self, threads_per_job: usize) -> Self {
        self.threads_per_job = threads_per_job;
        self
    }

    /// A claimed job is queued again when its worker sends no heartbeat for this long.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Claims a job may have before it fails for good.
    #[must_use]
    pub fn max_attempts(mut self, max_attempts: u32) -> Self {
        self.max_attempts = max_attempts;
        self
    }

    /// A folder of extra templates that add to or replace the built-in ones.
    #[must_use]
    pub fn templates_dir(mut self, templates_dir: Option<PathBuf>) -> Self {
        self.templates_dir = templates_dir;
        self
    }

    /// Generate requests burned at once; more are refused as busy.
    #[must_use]
    pub fn generate_slots(mut self, generate_slots: usize) -> Self {
        self.generate_slots = generate_slots;
        self
    }

    /// x264 threads per burn; 0 lets x264 choose.
    #[must_use]
    pub fn encoder_threads(mut self, encoder_threads: usize) -> Self {
        self.encoder_threads = encoder_threads;
        self
    }

    /// Signing and delivery of webhook events.
    #[must_use]
    pub fn webhooks(mut self, webhooks: WebhookOptions) -> Self {
        self.webhooks = webhooks;
        self
    }

    /// Webhook deliveries made at once by this process.
    #[must_use]
    pub fn webhook_workers(mut self, webhook_workers: usize) -> Self {
        self.webhook_workers = webhook_workers;
        self
    }
}

pub(crate) struct Inner {
    pub(crate) options: EngineOptions,
    /// The front door every file operation goes through.
    pub(crate) captioner: Captioner,
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) jobs: Arc<dyn JobStore>,
    pub(crate) job_submitted: tokio::sync::Notify,
    pub(crate) generate_submitted: tokio::sync::Notify,
    pub(crate) webhook_submitted: tokio::sync::Notify,
    /// Stop flags of the jobs this process is running, by job id: a cancel made here stops
    /// its worker at once (one made in another process is seen at the next heartbeat).
    pub(crate) running: Mutex<HashMap<String, Arc<AtomicBool>>>,
    pub(crate) generate_slots: Arc<super::slots::Slots>,
    /// Unique per process, so a restarted process can tell its predecessor's claims apart.
    pub(crate) instance: String,
}

/// The caption engine: cheap to clone, shareable across threads and tasks.
///
/// ```
/// use std::time::Duration;
///
/// use bytes::Bytes;
/// use caption_engine::{Engine, EngineOptions};
/// use caption_store::{ObjectKey, PutOptions};
/// use futures_util::StreamExt;
///
/// # tokio::runtime::Runtime::new()?.block_on(async {
/// let dir = tempfile::tempdir()?;
/// let options = EngineOptions::default().data_dir(dir.path()).model("tiny.en").workers(1);
/// let engine = Engine::open_local(options, "http://127.0.0.1:8080")?;
///
/// // An upload, stored as the service's upload route would: President Kennedy, 11 s.
/// let wav = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/audio/jfk.wav"))?;
/// let key = ObjectKey::new_upload("jfk.wav");
/// let body = futures_util::stream::once(async move { Ok(Bytes::from(wav)) });
/// engine.storage().put(&key, body.boxed(), PutOptions::default()).await?;
/// assert!(engine.submit_transcription("uploads/0/missing.wav", "en").await.is_err());
///
/// let workers = engine.spawn_workers(true).await?;
/// let job_id = engine.submit_transcription(key.as_str(), "en").await?;
/// let result = loop {
///     let result = engine.transcription(&job_id).await?;
///     if result.status.is_final() {
///         break result;
///     }
///     tokio::time::sleep(Duration::from_millis(200)).await;
/// };
/// workers.shutdown().await;
/// let words = result.words.expect("completed with words");
/// assert_eq!(words.last().map(|w| w.punctuated_word.as_str()), Some("country."));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("options", &self.inner.options)
            .field("storage", &self.inner.storage)
            .field("jobs", &self.inner.jobs)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine over the given storage and job store; the whisper model is loaded on first use.
    pub fn new(
        options: EngineOptions,
        storage: Arc<dyn Storage>,
        jobs: Arc<dyn JobStore>,
    ) -> Result<Self> {
        let mut captioner = Captioner::builder()
            .model(options.model.clone())
            .threads(options.threads_per_job)
            .encoder_threads(options.encoder_threads);
        if let Some(dir) = &options.templates_dir {
            captioner = captioner.templates_dir(dir.clone());
        }
        let captioner = captioner.build()?;
        let instance = format!("{}-{}", std::process::id(), uuid::Uuid::new_v4().simple());
        let generate_slots = super::slots::Slots::new(options.generate_slots);
        Ok(Self {
            inner: Arc::new(Inner {
                generate_slots,
                options,
                captioner,
                storage,
                jobs,
                job_submitted: tokio::sync::Notify::new(),
                generate_submitted: tokio::sync::Notify::new(),
                webhook_submitted: tokio::sync::Notify::new(),
                running: Mutex::new(HashMap::new()),
                instance,
            }),
        })
    }

    /// An engine for one machine: local-disk storage under `data_dir/objects` (links pointing at
    /// `public_base_url`) and the embedded job store at `data_dir/jobs.redb`.
    pub fn open_local(options: EngineOptions, public_base_url: &str) -> Result<Self> {
        let storage = caption_store::LocalStorage::open(
            &options.data_dir.join("objects"),
            public_base_url,
            caption_store::LinkOptions::default(),
        )?;
        let jobs = caption_jobs::EmbeddedJobStore::open(options.data_dir.join("jobs.redb"))?;
        Self::new(options, Arc::new(storage), Arc::new(jobs))
    }

    /// Uses `transcriber` instead of loading the configured whisper model. Call it before the
    /// engine is shared: jobs in flight keep the one they started with.
    #[must_use]
    pub fn with_transcriber(self, transcriber: Arc<dyn Transcriber>) -> Self {
        let mut captioner = Captioner::builder()
            .transcriber(transcriber)
            .threads(self.inner.options.threads_per_job)
            .encoder_threads(self.inner.options.encoder_threads);
        if let Some(dir) = &self.inner.options.templates_dir {
            captioner = captioner.templates_dir(dir.clone());
        }
        let Ok(captioner) = captioner.build() else {
            // The same templates were read when this engine was made.
            return self;
        };
        match Arc::try_unwrap(self.inner) {
            Ok(mut inner) => {
                inner.captioner = captioner;
                Self {
                    inner: Arc::new(inner),
                }
            }
            Err(inner) => Self { inner },
        }
    }

    /// How this engine runs.
    pub fn options(&self) -> &EngineOptions {
        &self.inner.options
    }

    /// Where files are stored.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.inner.storage
    }

    /// The front door this engine works local files through.
    pub fn captioner(&self) -> &Captioner {
        &self.inner.captioner
    }

    /// The template catalog.
    pub fn catalog(&self) -> &Catalog {
        self.inner.captioner.catalog()
    }

    /// The template list: id and name of each.
    pub fn templates(&self) -> Vec<TemplateSummary> {
        self.inner.captioner.templates()
    }

    /// One template with its full config.
    pub fn template(&self, id: &str) -> Result<Template> {
        self.inner.captioner.template(id)
    }

    /// Installed font families, optionally only those covering `lang`.
    pub fn fonts(&self, lang: Option<&str>) -> Result<Vec<String>> {
        self.inner.captioner.fonts(lang)
    }

    /// The speech model, loaded once.
    pub fn transcriber(&self) -> Result<Arc<dyn Transcriber>> {
        self.inner.captioner.transcriber()
    }

    fn check_language(&self, lang: &str, task: TranscriptTask) -> Result<()> {
        self.inner
            .captioner
            .check_language(lang, task == TranscriptTask::Translate)
    }

    /// Queues the transcription of a stored file; returns the job id. The file must exist.
    pub async fn submit_transcription(&self, input: &str, lang: &str) -> Result<String> {
        let request = TranscriptRequest {
            input: input.to_owned(),
            lang: lang.to_owned(),
            task: TranscriptTask::Transcribe,
            keep_fillers: false,
            speakers: None,
        };
        self.submit_transcription_with(&request, None).await
    }

    /// [`Engine::submit_transcription`] with the rest of a `POST /transcript` request (its
    /// `task`: `translate` gives English words, with a multilingual model; `keepFillers`),
    /// announcing the job's end at `webhook_url` (a signed event; the URL is checked first, see
    /// [`Engine::check_webhook_url`]).
    pub async fn submit_transcription_with(
        &self,
        request: &TranscriptRequest,
        webhook_url: Option<&str>,
    ) -> Result<String> {
        let (input, lang, task) = (request.input.as_str(), request.lang.as_str(), request.task);
        let key = self.check_transcription(request, webhook_url).await?;
        let job = self
            .inner
            .jobs
            .submit(
                JobSpec::transcribe(key.as_str(), lang)
                    .with_payload(task_payload(task, request.keep_fillers, request.speakers))
                    .with_webhook(webhook_url.map(str::to_owned)),
            )
            .await?;
        self.inner.job_submitted.notify_one();
        tracing::info!(job_id = %job.id, input, lang, webhook = webhook_url.is_some(), "transcription queued");
        Ok(job.id)
    }

    /// What [`Engine::submit_transcription_with`] checks before it queues a job: the input's
    /// name, the language (and task) for the model, that the file is stored, and the webhook
    /// URL. A service calls it before admitting the request, so a bad one gets its own error
    /// and never `busy`. Returns the input's key.
    pub async fn check_transcription(
        &self,
        request: &TranscriptRequest,
        webhook_url: Option<&str>,
    ) -> Result<ObjectKey> {
        let input = request.input.as_str();
        let key = ObjectKey::parse(input).map_err(|e| Error::invalid("input", e.to_string()))?;
        self.check_language(&request.lang, request.task)?;
        if request.speakers.is_some() {
            // The voice encoder's absence is the server's to fix: refused now, not as a job.
            self.inner.captioner.diarizer()?;
        }
        self.check_stored(&key, input).await?;
        if let Some(url) = webhook_url {
            self.check_webhook_url(url).await?;
        }
        Ok(key)
    }

    /// That the input `key` (named `input` by the caller) is stored: [`Error::NotFound`] of a
    /// file otherwise.
    pub(crate) async fn check_stored(&self, key: &ObjectKey, input: &str) -> Result<()> {
        match self.inner.storage.head(key).await {
            Err(caption_store::Error::NotFound { .. }) => Err(Error::NotFound {
                what: "file",
                id: input.to_owned(),
            }),
            other => other.map(|_| ()).map_err(Error::from),
        }
    }

    /// A job of `kind`, or not found.
    pub(crate) async fn job_of_kind(&self, job_id: &str, kind: JobKind) -> Result<JobRecord> {
        self.inner
            .jobs
            .get(job_id)
            .await?
            .filter(|job| job.spec.kind == kind)
            .ok_or_else(|| Error::NotFound {
                what: "job",
                id: job_id.to_owned(),
            })
    }

    /// A job's status, and its words once completed.
    pub async fn transcription(&self, job_id: &str) -> Result<TranscriptResult> {
        Ok(self.transcription_status(job_id).await?.result)
    }

    /// A job's status, its words once completed, and the input's length once known.
    pub async fn transcription_status(&self, job_id: &str) -> Result<TranscriptionStatus> {
        let job = self.job_of_kind(job_id, JobKind::Transcribe).await?;
        Ok(TranscriptionStatus::of(&job))
    }

    /// Cancels a queued or running transcription: it fails with code `cancelled` and its
    /// worker stops. A finished job is [`Error::Finished`].
    pub async fn cancel_transcription(&self, job_id: &str) -> Result<TranscriptionStatus> {
        self.job_of_kind(job_id, JobKind::Transcribe).await?;
        let job = self.cancel_job(job_id).await?;
        Ok(TranscriptionStatus::of(&job))
    }

    /// Cancels any job; see [`Engine::cancel_transcription`].
    pub(crate) async fn cancel_job(&self, job_id: &str) -> Result<JobRecord> {
        let job = self
            .inner
            .jobs
            .cancel(job_id)
            .await?
            .ok_or_else(|| Error::NotFound {
                what: "job",
                id: job_id.to_owned(),
            })?;
        let cancelled = job.status == JobStatus::Failed
            && job.error.as_ref().is_some_and(|e| e.code == "cancelled");
        if !cancelled {
            return Err(Error::Finished {
                id: job_id.to_owned(),
                status: job.status.as_str(),
            });
        }
        let flag = self
            .inner
            .running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(job_id)
            .cloned();
        if let Some(flag) = flag {
            flag.store(true, Ordering::Relaxed);
        }
        self.inner.webhook_submitted.notify_one();
        tracing::info!(job_id, "job cancelled");
        Ok(job)
    }

    /// Copies a stored object into a scratch file (kept until the returned guard drops), with
    /// the key's file name so FFmpeg can use its extension as a hint.
    pub(crate) async fn fetch_to_scratch(&self, key: &ObjectKey) -> Result<tempfile::TempDir> {
        let scratch = self.inner.options.data_dir.join("tmp");
        tokio::fs::create_dir_all(&scratch)
            .await
            .map_err(|source| Error::Io {
                context: format!("creating {}", scratch.display()),
                source,
            })?;
        let dir = tempfile::Builder::new()
            .prefix("input-")
            .tempdir_in(&scratch)
            .map_err(|source| Error::Io {
                context: format!("creating a folder in {}", scratch.display()),
                source,
            })?;
        let path = dir.path().join(key.file_name());
        let mut object = self.inner.storage.get(key, GetOptions::default()).await?;
        let mut file = tokio::fs::File::create(&path)
            .await
            .map_err(|source| Error::Io {
                context: format!("creating {}", path.display()),
                source,
            })?;
        while let Some(chunk) = object.body.next().await {
            let chunk = chunk.map_err(|source| body_failed(key, source))?;
            file.write_all(&chunk).await.map_err(|source| Error::Io {
                context: format!("writing {}", path.display()),
                source,
            })?;
        }
        file.flush().await.map_err(|source| Error::Io {
            context: format!("writing {}", path.display()),
            source,
        })?;
        Ok(dir)
    }

    /// Runs one claimed job's transcription: fetch, decode (the input's length then goes into
    /// `duration_bits` as `f64` bits), transcribe.
    pub(crate) async fn transcribe_stored(
        &self,
        spec: &JobSpec,
        progress: Arc<AtomicU8>,
        cancel: Arc<AtomicBool>,
        duration_bits: Arc<AtomicU64>,
    ) -> Result<Vec<Word>> {
        let key =
            ObjectKey::parse(&spec.input).map_err(|e| Error::invalid("input", e.to_string()))?;
        let scratch = self.fetch_to_scratch(&key).await?;
        let path = scratch.path().join(key.file_name());
        let translate = spec_task(spec) == TranscriptTask::Translate;
        self.check_language(&spec.lang, spec_task(spec))?;
        let transcriber = self.transcriber()?;
        let mut task = Task::default()
            .language(spec.lang.clone())
            .translate(translate)
            .keep_fillers(spec_keeps_fillers(spec))
            .on_progress(move |p| progress.store(p.percent, Ordering::Relaxed))
            .cancel_with(crate::Cancel::from_flag(cancel));
        if let Some(count) = spec_speakers(spec) {
            task = task.speakers(count);
        }
        let captioner = self.inner.captioner.clone();
        let options = self
            .inner
            .captioner
            .transcribe_options(&task, Stage::Transcribing);
        let words = tokio::task::spawn_blocking(move || {
            let mut audio = DecodedAudio::open(&path)?;
            if audio.reader.duration_s() > 0.0 {
                duration_bits.store(audio.reader.duration_s().to_bits(), Ordering::Relaxed);
            }
            let mut words = audio.transcribe(transcriber.as_ref(), &options)?.words;
            // The decoded length is exact where the container's may be missing or rounded.
            duration_bits.store(audio.decoded_s().to_bits(), Ordering::Relaxed);
            captioner.label_speakers(&path, &mut words, &task)?;
            Ok::<_, Error>(words)
        })
        .await
        .map_err(|e| Error::Internal(format!("transcription task: {e}")))?;
        drop(scratch);
        words
    }
}

/// A transcription job as a client sees it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TranscriptionStatus {
    /// Status, words once completed, progress, error once failed.
    pub result: TranscriptResult,
    /// Length of the input in seconds, once a worker has read it.
    pub duration_s: Option<f64>,
}

impl TranscriptionStatus {
    fn of(job: &JobRecord) -> Self {
        Self {
            result: job.result(),
            duration_s: job.duration_s,
        }
    }
}

/// What a transcription job's payload says of its task: `{"task": "translate"}`,
/// `{"keepFillers": true}`, or nothing for a plain transcription (so records written before
/// either existed read as one).
fn task_payload(
    task: TranscriptTask,
    keep_fillers: bool,
    speakers: Option<SpeakerCount>,
) -> Option<serde_json::Value> {
    let mut payload = serde_json::Map::new();
    if task != TranscriptTask::Transcribe {
        payload.insert("task".to_owned(), task.as_str().into());
    }
    if keep_fillers {
        payload.insert("keepFillers".to_owned(), true.into());
    }
    if let Some(count) = speakers.and_then(|c| serde_json::to_value(c).ok()) {
        payload.insert("speakers".to_owned(), count);
    }
    (!payload.is_empty()).then_some(serde_json::Value::Object(payload))
}

/// Whether a transcription job's payload asks for the fillers ([`task_payload`]).
fn spec_keeps_fillers(spec: &JobSpec) -> bool {
    spec.payload
        .as_ref()
        .and_then(|payload| payload.get("keepFillers"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

/// How many speakers a transcription job's payload asks to tell apart ([`task_payload`]).
fn spec_speakers(spec: &JobSpec) -> Option<SpeakerCount> {
    spec.payload
        .as_ref()
        .and_then(|payload| payload.get("speakers"))
        .and_then(|count| serde_json::from_value(count.clone()).ok())
}

/// The task a transcription job's payload names ([`task_payload`]).
fn spec_task(spec: &JobSpec) -> TranscriptTask {
    spec.payload
        .as_ref()
        .and_then(|payload| payload.get("task"))
        .and_then(serde_json::Value::as_str)
        .and_then(TranscriptTask::from_wire)
        .unwrap_or_default()
}

/// The stored object's body failing mid-stream (a bucket gone away while it is read): the
/// backend's failure, `storage_unavailable` (503, jobs retried), not this process's.
fn body_failed(key: &ObjectKey, source: std::io::Error) -> Error {
    Error::Storage(caption_store::Error::Backend {
        key: key.to_string(),
        source: Box::new(source),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;
    use crate::ErrorCode;

    #[test]
    fn a_body_failing_mid_stream_is_the_storage_being_unavailable() {
        let key = ObjectKey::parse("uploads/a/talk.mp4").unwrap();
        let reset =
            std::io::Error::new(std::io::ErrorKind::ConnectionReset, "error sending request");
        let error = body_failed(&key, reset);
        assert_eq!(error.code(), ErrorCode::StorageUnavailable, "{error}");
    }
}
