use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use caption_core::{Catalog, JobStatus, Template, TemplateSummary, TranscriptResult, Word};
use caption_jobs::{JobKind, JobRecord, JobSpec, JobStore};
use caption_store::{GetOptions, ObjectKey, Storage};
use caption_transcribe::{GivenText, TranscribeOptions, Transcriber, WhisperTranscriber};
use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;

use crate::{Error, Result, WebhookOptions};

/// How an [`Engine`] runs.
#[derive(Debug, Clone)]
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

pub(crate) struct Inner {
    pub(crate) options: EngineOptions,
    pub(crate) catalog: Catalog,
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) jobs: Arc<dyn JobStore>,
    transcriber: OnceLock<Arc<dyn Transcriber>>,
    pub(crate) job_submitted: tokio::sync::Notify,
    pub(crate) generate_submitted: tokio::sync::Notify,
    pub(crate) webhook_submitted: tokio::sync::Notify,
    /// Stop flags of the jobs this process is running, by job id: a cancel made here stops
    /// its worker at once (one made in another process is seen at the next heartbeat).
    pub(crate) running: Mutex<HashMap<String, Arc<AtomicBool>>>,
    pub(crate) generate_slots: Arc<tokio::sync::Semaphore>,
    /// Unique per process, so a restarted process can tell its predecessor's claims apart.
    pub(crate) instance: String,
}

/// The caption engine: cheap to clone, shareable across threads and tasks.
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
        let catalog = Catalog::builtin().map_err(|e| Error::Internal(e.to_string()))?;
        let catalog = match &options.templates_dir {
            Some(dir) => catalog
                .with_folder(dir)
                .map_err(|e| Error::invalid("templates", e.to_string()))?,
            None => catalog,
        };
        let instance = format!("{}-{}", std::process::id(), uuid::Uuid::new_v4().simple());
        let generate_slots = Arc::new(tokio::sync::Semaphore::new(options.generate_slots.max(1)));
        Ok(Self {
            inner: Arc::new(Inner {
                generate_slots,
                options,
                catalog,
                storage,
                jobs,
                transcriber: OnceLock::new(),
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

    /// Uses `transcriber` instead of loading the configured whisper model.
    pub fn with_transcriber(self, transcriber: Arc<dyn Transcriber>) -> Self {
        // A fresh engine has no transcriber yet, so `set` succeeds; if one was already loaded it
        // stays, which keeps jobs in flight consistent.
        let _ = self.inner.transcriber.set(transcriber);
        self
    }

    pub fn options(&self) -> &EngineOptions {
        &self.inner.options
    }

    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.inner.storage
    }

    pub fn catalog(&self) -> &Catalog {
        &self.inner.catalog
    }

    /// The template list: id and name of each.
    pub fn templates(&self) -> Vec<TemplateSummary> {
        self.inner.catalog.summaries()
    }

    /// One template with its full config.
    pub fn template(&self, id: &str) -> Result<Template> {
        self.inner
            .catalog
            .get(id)
            .cloned()
            .ok_or_else(|| Error::NotFound {
                what: "template",
                id: id.to_owned(),
            })
    }

    /// Installed font families, optionally only those covering `lang`.
    pub fn fonts(&self, lang: Option<&str>) -> Result<Vec<String>> {
        let library = caption_fonts::FontLibrary::new()?;
        match library.families(lang) {
            Err(caption_fonts::Error::UnknownLanguage { code }) => Err(Error::invalid(
                "lang",
                format!(
                    "unknown language code {code:?}: use an ISO 639-1 code such as \"en\" or a tag such as \"zh-cn\""
                ),
            )),
            other => Ok(other?),
        }
    }

    /// The speech model, loaded once.
    pub fn transcriber(&self) -> Result<Arc<dyn Transcriber>> {
        if let Some(t) = self.inner.transcriber.get() {
            return Ok(Arc::clone(t));
        }
        let loaded: Arc<dyn Transcriber> = Arc::new(WhisperTranscriber::open_installed(
            &self.inner.options.model,
        )?);
        Ok(Arc::clone(self.inner.transcriber.get_or_init(|| loaded)))
    }

    /// Checks `lang` against the configured model without loading it: English-only models
    /// (`*.en`) take only `auto` and `en`.
    fn check_language(&self, lang: &str) -> Result<()> {
        let english_only = match self.inner.transcriber.get() {
            Some(t) => !t.is_multilingual(),
            None => self.inner.options.model.ends_with(".en"),
        };
        if english_only && !matches!(lang, "auto" | "en" | "") {
            return Err(Error::invalid(
                "lang",
                format!(
                    "language {lang:?} needs a multilingual model; the model ({}) transcribes English only",
                    self.inner.options.model
                ),
            ));
        }
        Ok(())
    }

    /// Queues the transcription of a stored file; returns the job id. The file must exist.
    pub async fn submit_transcription(&self, input: &str, lang: &str) -> Result<String> {
        self.submit_transcription_with(input, lang, None).await
    }

    /// [`Engine::submit_transcription`], announcing the job's end at `webhook_url` (a signed
    /// event; the URL is checked first, see [`Engine::check_webhook_url`]).
    pub async fn submit_transcription_with(
        &self,
        input: &str,
        lang: &str,
        webhook_url: Option<&str>,
    ) -> Result<String> {
        let key = ObjectKey::parse(input).map_err(|e| Error::invalid("input", e.to_string()))?;
        self.check_language(lang)?;
        match self.inner.storage.head(&key).await {
            Err(caption_store::Error::NotFound { .. }) => {
                return Err(Error::NotFound {
                    what: "file",
                    id: input.to_owned(),
                });
            }
            other => other?,
        };
        if let Some(url) = webhook_url {
            self.check_webhook_url(url).await?;
        }
        let job = self
            .inner
            .jobs
            .submit(
                JobSpec::transcribe(key.as_str(), lang)
                    .with_webhook(webhook_url.map(str::to_owned)),
            )
            .await?;
        self.inner.job_submitted.notify_one();
        tracing::info!(job_id = %job.id, input, lang, webhook = webhook_url.is_some(), "transcription queued");
        Ok(job.id)
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

    /// Transcribes a local media file directly (no job), reporting progress in percent.
    pub async fn transcribe_file(
        &self,
        path: &Path,
        lang: &str,
        progress: impl Fn(u8) + Send + Sync + 'static,
    ) -> Result<Vec<Word>> {
        self.words_of_file(path, None, lang, progress).await
    }

    /// Times the words of `text` (a script or subtitle cues) on the speech of a local file.
    pub async fn align_file(
        &self,
        path: &Path,
        text: GivenText,
        lang: &str,
        progress: impl Fn(u8) + Send + Sync + 'static,
    ) -> Result<Vec<Word>> {
        self.words_of_file(path, Some(text), lang, progress).await
    }

    /// The words of a local file: transcribed, or `text` timed on it.
    async fn words_of_file(
        &self,
        path: &Path,
        text: Option<GivenText>,
        lang: &str,
        progress: impl Fn(u8) + Send + Sync + 'static,
    ) -> Result<Vec<Word>> {
        self.check_language(lang)?;
        let transcriber = self.transcriber()?;
        let path = path.to_owned();
        let options = TranscribeOptions::default()
            .language(lang)
            .threads(self.inner.options.threads_per_job)
            .progress(progress);
        tokio::task::spawn_blocking(move || {
            let transcript = match &text {
                // A given text is matched against what is heard in the whole input at once.
                Some(text) => {
                    let samples = caption_media::decode_audio_16k_mono(&path)?;
                    transcriber.align_text(&samples, text, &options)?
                }
                None => DecodedAudio::open(&path)?.transcribe(transcriber.as_ref(), &options)?,
            };
            Ok(transcript.words)
        })
        .await
        .map_err(|e| Error::Internal(format!("transcription task: {e}")))?
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
            let chunk = chunk.map_err(|source| Error::Io {
                context: format!("reading {key}"),
                source,
            })?;
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
        self.check_language(&spec.lang)?;
        let transcriber = self.transcriber()?;
        let options = TranscribeOptions::default()
            .language(spec.lang.clone())
            .threads(self.inner.options.threads_per_job)
            .progress(move |p| progress.store(p, Ordering::Relaxed))
            .cancel(cancel);
        let words = tokio::task::spawn_blocking(move || {
            let mut audio = DecodedAudio::open(&path)?;
            if audio.reader.duration_s() > 0.0 {
                duration_bits.store(audio.reader.duration_s().to_bits(), Ordering::Relaxed);
            }
            let transcript = audio.transcribe(transcriber.as_ref(), &options)?;
            // The decoded length is exact where the container's may be missing or rounded.
            duration_bits.store(audio.decoded_s().to_bits(), Ordering::Relaxed);
            Ok::<_, Error>(transcript.words)
        })
        .await
        .map_err(|e| Error::Internal(format!("transcription task: {e}")))?;
        drop(scratch);
        words
    }
}

/// A file's audio fed to the transcriber as it is decoded, so that long inputs are never held
/// whole; a decoding failure keeps its own error (and so its code).
struct DecodedAudio {
    reader: caption_media::AudioReader,
    failure: Option<caption_media::Error>,
}

impl DecodedAudio {
    fn open(path: &Path) -> Result<Self> {
        Ok(Self {
            reader: caption_media::AudioReader::open(path)?,
            failure: None,
        })
    }

    fn transcribe(
        &mut self,
        transcriber: &dyn Transcriber,
        options: &TranscribeOptions,
    ) -> Result<caption_transcribe::Transcript> {
        caption_transcribe::transcribe_source(transcriber, self, options)
            .map_err(|e| self.failure.take().map_or_else(|| e.into(), Error::from))
    }

    fn decoded_s(&self) -> f64 {
        #[allow(
            clippy::cast_precision_loss,
            reason = "a sample count far below 2^52 is exact in f64"
        )]
        let samples = self.reader.samples_read() as f64;
        samples / f64::from(caption_transcribe::SAMPLE_RATE_HZ)
    }
}

impl caption_transcribe::AudioSource for DecodedAudio {
    fn next_samples(&mut self) -> caption_transcribe::Result<Option<Vec<f32>>> {
        self.reader.next_chunk().map_err(|e| {
            let detail = e.to_string();
            self.failure = Some(e);
            caption_transcribe::Error::AudioSource { detail }
        })
    }

    fn duration_s(&self) -> Option<f64> {
        Some(self.reader.duration_s())
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
