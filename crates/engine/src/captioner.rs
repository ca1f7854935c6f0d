//! The front door: transcribe, align, burn and preview local files, with nothing else running.

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use caption_core::{
    Catalog, Config, ConfigPatch, CutPlan, CutRules, Span as CutSpan, Template, TemplateSummary,
    Word,
};
use caption_media::{BurnOptions, BurnReport, LayerReport};
use caption_render::{CaptionRenderer, FrameSize, SystemFonts};
use caption_transcribe::{GivenText, TranscribeOptions, Transcriber, WhisperTranscriber};

use crate::audio::DecodedAudio;
use crate::overlay::{CaptionSource, caption_error};
use crate::task::{Stage, Task};
use crate::{Error, Result};

/// Where the speech model comes from.
#[derive(Clone)]
enum Model {
    /// Installed by name (`tiny.en`, `base`) in the models folder.
    Installed(String),
    /// A ggml model file.
    File(PathBuf),
    /// Given ready to use.
    Given(Arc<dyn Transcriber>),
}

impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Installed(name) => write!(f, "Installed({name:?})"),
            Self::File(path) => write!(f, "File({})", path.display()),
            Self::Given(_) => f.write_str("Given"),
        }
    }
}

impl Model {
    fn name(&self) -> String {
        match self {
            Self::Installed(name) => name.clone(),
            Self::File(path) => path.display().to_string(),
            Self::Given(_) => "given".to_owned(),
        }
    }
}

/// Settings of a [`Captioner`]; made by [`Captioner::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct CaptionerBuilder {
    model: Model,
    threads: usize,
    encoder_threads: usize,
    short_window: bool,
    beam_size: usize,
    templates_dir: Option<PathBuf>,
}

impl Default for CaptionerBuilder {
    fn default() -> Self {
        Self {
            model: Model::Installed("base".to_owned()),
            threads: 0,
            encoder_threads: 0,
            short_window: true,
            beam_size: 0,
            templates_dir: None,
        }
    }
}

impl CaptionerBuilder {
    /// The installed whisper model to transcribe with, by name: `base` (the default) or
    /// `tiny.en`. The models folder is `$CAPTION_MODELS_DIR`, else
    /// `~/.cache/caption-engine/models`.
    pub fn model(mut self, name: impl Into<String>) -> Self {
        self.model = Model::Installed(name.into());
        self
    }

    /// A whisper.cpp (ggml) model file to transcribe with, in place of an installed model.
    pub fn model_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.model = Model::File(path.into());
        self
    }

    /// A speech recogniser to use as it is, in place of loading a model.
    pub fn transcriber(mut self, transcriber: Arc<dyn Transcriber>) -> Self {
        self.model = Model::Given(transcriber);
        self
    }

    /// Threads a transcription uses; 0 (the default) takes every core, shared with other
    /// transcriptions on the machine so that two never oversubscribe it.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// x264 threads of a burn; 0 (the default) lets x264 choose.
    pub fn encoder_threads(mut self, threads: usize) -> Self {
        self.encoder_threads = threads;
        self
    }

    /// `true` (the default) to show whisper's encoder a short English piece with 8 s of silence
    /// instead of its whole 30 s window; `false` for the whole window, about 1.75x slower on a
    /// short clip at the same word error rate (see [`TranscribeOptions::short_window`]).
    pub fn short_window(mut self, short: bool) -> Self {
        self.short_window = short;
        self
    }

    /// Hypotheses whisper keeps while decoding: 0 (the default) for 5, 1 for greedy decoding,
    /// faster but liable to skip stretches of speech (see [`TranscribeOptions::beam_size`]).
    pub fn beam_size(mut self, beams: usize) -> Self {
        self.beam_size = beams;
        self
    }

    /// A folder of `*.json` templates that add to or replace the built-in ones.
    pub fn templates_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.templates_dir = Some(dir.into());
        self
    }

    /// The captioner. Reads the templates; the speech model is loaded on first use.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidRequest`](crate::ErrorCode::InvalidRequest) when a template in the
    /// templates folder is not valid.
    pub fn build(self) -> Result<Captioner> {
        let catalog = Catalog::builtin().map_err(|e| Error::Internal(e.to_string()))?;
        let catalog = match &self.templates_dir {
            Some(dir) => catalog
                .with_folder(dir)
                .map_err(|e| Error::invalid("templates", e.to_string()))?,
            None => catalog,
        };
        let transcriber = OnceLock::new();
        if let Model::Given(given) = &self.model {
            // A fresh lock: setting it cannot fail.
            let _ = transcriber.set(Arc::clone(given));
        }
        Ok(Captioner {
            inner: Arc::new(Inner {
                model: self.model,
                threads: self.threads,
                encoder_threads: self.encoder_threads,
                short_window: self.short_window,
                beam_size: self.beam_size,
                catalog,
                transcriber,
                diarizer: OnceLock::new(),
                face_detector: OnceLock::new(),
            }),
        })
    }
}

struct Inner {
    model: Model,
    threads: usize,
    encoder_threads: usize,
    short_window: bool,
    beam_size: usize,
    catalog: Catalog,
    transcriber: OnceLock<Arc<dyn Transcriber>>,
    diarizer: OnceLock<Arc<caption_speakers::Diarizer>>,
    face_detector: OnceLock<Arc<caption_faces::FaceDetector>>,
}

/// Captions for local files: words from speech, words timed on a given text, captions burned
/// into a video, a caption frame as a picture. No storage, job store, async runtime or network:
/// every call is blocking and works on paths. Cheap to clone; share it between threads.
///
/// ```no_run
/// use caption_engine::{Captioner, Task};
///
/// let captioner = Captioner::builder().model("tiny.en").build()?;
/// let words = captioner.transcribe("talk.mp4", &Task::default())?;
/// let style = captioner.template("bold-highlight")?.config;
/// captioner.burn("talk.mp4", "talk-captioned.mp4", &words, &style, &Task::default())?;
/// # Ok::<(), caption_engine::Error>(())
/// ```
#[derive(Clone)]
pub struct Captioner {
    inner: Arc<Inner>,
}

impl fmt::Debug for Captioner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Captioner")
            .field("model", &self.inner.model)
            .field("threads", &self.inner.threads)
            .field("encoder_threads", &self.inner.encoder_threads)
            .field("short_window", &self.inner.short_window)
            .field("beam_size", &self.inner.beam_size)
            .field("templates", &self.inner.catalog.templates().len())
            .finish_non_exhaustive()
    }
}

impl Captioner {
    /// Settings to build a captioner from; every one has a default.
    ///
    /// ```
    /// let captioner = caption_engine::Captioner::builder().model("tiny.en").threads(2).build()?;
    /// assert!(captioner.template("karaoke").is_ok());
    /// # Ok::<(), caption_engine::Error>(())
    /// ```
    pub fn builder() -> CaptionerBuilder {
        CaptionerBuilder::default()
    }

    /// The template list: the id and name of each.
    ///
    /// ```
    /// let captioner = caption_engine::Captioner::builder().build()?;
    /// assert!(captioner.templates().iter().any(|t| t.id == "bold-highlight"));
    /// # Ok::<(), caption_engine::Error>(())
    /// ```
    pub fn templates(&self) -> Vec<TemplateSummary> {
        self.inner.catalog.summaries()
    }

    /// One template with its full style.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::NotFound`](crate::ErrorCode::NotFound) for an unknown id.
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

    /// The template catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.inner.catalog
    }

    /// A style: `patch` over the template `template_id` (or over the default template), checked
    /// as a whole: every broken rule at once, and the font must be installed.
    ///
    /// ```
    /// use caption_engine::{Captioner, ConfigPatch};
    ///
    /// let captioner = Captioner::builder().build()?;
    /// let patch: ConfigPatch = serde_json::from_str(r#"{"linesCount": 1}"#).unwrap();
    /// let style = captioner.style(Some("karaoke"), &patch)?;
    /// assert_eq!(style.lines_count, 1);
    /// # Ok::<(), caption_engine::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidRequest`](crate::ErrorCode::InvalidRequest) naming every field and
    /// rule broken; [`ErrorCode::NotFound`](crate::ErrorCode::NotFound) for an unknown template.
    pub fn style(&self, template_id: Option<&str>, patch: &ConfigPatch) -> Result<Config> {
        let base = match template_id {
            Some(id) => &self.template(id)?.config,
            None => self.inner.catalog.default_config(),
        };
        let config = patch.apply(base);
        // Every problem at once: the config's rules, then whether its font is installed (a
        // missing font is the caller's mistake, not a quiet fallback at render time).
        let mut problems = config.validate().err().unwrap_or_default();
        if let Some(rule) = missing_font_rule(&config.font)? {
            problems.push("config.font", rule);
        }
        if !problems.is_empty() {
            return Err(Error::Invalid(problems));
        }
        Ok(config)
    }

    /// Installed font families, optionally only those covering the language `lang` (an ISO
    /// 639-1 code or a tag such as `zh-cn`).
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidRequest`](crate::ErrorCode::InvalidRequest) for an unknown language.
    pub fn fonts(&self, lang: Option<&str>) -> Result<Vec<String>> {
        if let Some(code) = lang.filter(|code| !is_language_tag(code)) {
            return Err(Error::invalid(
                "lang",
                format!(
                    "{code:?} is not a language code: two or three letters (\"en\"), then any subtags of 2-8 letters or digits after '-' (\"zh-cn\")"
                ),
            ));
        }
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

    /// The speech model, loaded on first use and kept.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::ModelMissing`](crate::ErrorCode::ModelMissing) when it is not installed.
    pub fn transcriber(&self) -> Result<Arc<dyn Transcriber>> {
        if let Some(loaded) = self.inner.transcriber.get() {
            return Ok(Arc::clone(loaded));
        }
        let loaded: Arc<dyn Transcriber> = match &self.inner.model {
            Model::Installed(name) => Arc::new(WhisperTranscriber::open_installed(name)?),
            Model::File(path) => Arc::new(WhisperTranscriber::open(path)?),
            Model::Given(given) => Arc::clone(given),
        };
        Ok(Arc::clone(self.inner.transcriber.get_or_init(|| loaded)))
    }

    /// Where the voice encoder is kept once loaded (see `speakers.rs`).
    pub(crate) fn diarizer_lock(&self) -> &OnceLock<Arc<caption_speakers::Diarizer>> {
        &self.inner.diarizer
    }

    /// Where the face detector is kept once loaded (see `reframe.rs`).
    pub(crate) fn face_detector_lock(&self) -> &OnceLock<Arc<caption_faces::FaceDetector>> {
        &self.inner.face_detector
    }

    /// Checks `lang` against the model without loading it where the name tells: English-only
    /// models (`*.en`) take only `auto` and `en`.
    pub(crate) fn check_language(&self, lang: &str, translate: bool) -> Result<()> {
        let english_only = match (self.inner.transcriber.get(), &self.inner.model) {
            (Some(loaded), _) => !loaded.is_multilingual(),
            (None, Model::Installed(name)) => name.ends_with(".en"),
            (None, _) => !self.transcriber()?.is_multilingual(),
        };
        if english_only && !matches!(lang, "auto" | "en" | "") {
            return Err(Error::invalid(
                "lang",
                format!(
                    "language {lang:?} needs a multilingual model; the model ({}) transcribes English only",
                    self.inner.model.name()
                ),
            ));
        }
        if english_only && translate {
            return Err(Error::invalid(
                "task",
                format!(
                    "translation into English needs a multilingual model such as base; the model ({}) transcribes English only",
                    self.inner.model.name()
                ),
            ));
        }
        Ok(())
    }

    /// The transcriber's options for `task` at `stage`.
    pub(crate) fn transcribe_options(&self, task: &Task, stage: Stage) -> TranscribeOptions {
        let mut options = TranscribeOptions::default()
            .language(task.language_code())
            .translate(task.translates())
            .keep_fillers(task.keeps_fillers())
            .threads(self.inner.threads)
            .short_window(self.inner.short_window)
            .beam_size(self.inner.beam_size);
        if let Some(report) = task.reporter(stage) {
            options = options.progress(report);
        }
        if let Some(cancel) = task.cancel_flag() {
            options = options.cancel(cancel);
        }
        options
    }

    /// The words spoken in a video or audio file, each with its start and end in seconds.
    /// Decodes as it goes: an hour-long input is never held whole.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InputNotFound`](crate::ErrorCode::InputNotFound),
    /// [`NoAudio`](crate::ErrorCode::NoAudio) (also for an audio track with no samples),
    /// [`UnreadableInput`](crate::ErrorCode::UnreadableInput) (also for a truncated file),
    /// [`InputTooLarge`](crate::ErrorCode::InputTooLarge) (a video whose picture is over
    /// [`MAX_PICTURE_PIXELS`](caption_media::MAX_PICTURE_PIXELS)),
    /// [`UnsupportedLanguage`](crate::ErrorCode::UnsupportedLanguage),
    /// [`ModelMissing`](crate::ErrorCode::ModelMissing),
    /// [`Cancelled`](crate::ErrorCode::Cancelled).
    pub fn transcribe(&self, media: impl AsRef<Path>, task: &Task) -> Result<Vec<Word>> {
        self.check_language(task.language_code(), task.translates())?;
        let transcriber = self.transcriber()?;
        let options = self.transcribe_options(task, Stage::Transcribing);
        let mut words = DecodedAudio::open(media.as_ref())?
            .transcribe(transcriber.as_ref(), &options)?
            .words;
        self.label_speakers(media.as_ref(), &mut words, task)?;
        Ok(words)
    }

    /// The words of a text you have (a script, or subtitle cues) timed on the speech of a
    /// video or audio file: the text decides the words, the speech their times.
    ///
    /// ```
    /// use caption_engine::{Captioner, GivenText, Task};
    ///
    /// let speech = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/audio/jfk.wav");
    /// let script = GivenText::Plain(
    ///     "And so, my fellow Americans: ask not what your country can do for you, \
    ///      ask what you can do for your country."
    ///         .to_owned(),
    /// );
    /// let captioner = Captioner::builder().model("tiny.en").build()?;
    /// let words = captioner.align(speech, &script, &Task::default())?;
    /// assert_eq!(words.len(), 22);
    /// assert_eq!(words[4].punctuated_word, "Americans:");
    /// // In order, each with a real span, within the 11 s recording.
    /// assert!(words.windows(2).all(|w| w[0].end <= w[1].start + 1e-6));
    /// assert!(words.iter().all(|w| w.end > w.start && w.end <= 11.1));
    /// # Ok::<(), caption_engine::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Captioner::transcribe`].
    pub fn align(
        &self,
        media: impl AsRef<Path>,
        text: &GivenText,
        task: &Task,
    ) -> Result<Vec<Word>> {
        self.check_language(task.language_code(), task.translates())?;
        let transcriber = self.transcriber()?;
        let options = self.transcribe_options(task, Stage::Aligning);
        // A given text is matched against what is heard in the whole input at once.
        let samples = caption_media::decode_audio_16k_mono(media.as_ref())?;
        let mut words = transcriber.align_text(&samples, text, &options)?.words;
        self.label_speakers_in(&samples, &mut words, task)?;
        Ok(words)
    }

    /// Burns `words` in `style` into the video `input`, writing `output` (H.264 in the
    /// container its extension names; the audio is kept). The output appears whole or not at
    /// all: a failed or cancelled burn leaves no partial file. Damage in the middle of the
    /// input is burned over and listed in the report's `warnings`.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InputNotFound`](crate::ErrorCode::InputNotFound),
    /// [`NoVideo`](crate::ErrorCode::NoVideo) (also for a 0-second video),
    /// [`NotAVideo`](crate::ErrorCode::NotAVideo),
    /// [`UnreadableInput`](crate::ErrorCode::UnreadableInput) (also for a truncated file),
    /// [`InputTooLarge`](crate::ErrorCode::InputTooLarge),
    /// [`InvalidRequest`](crate::ErrorCode::InvalidRequest) for a style that cannot be drawn,
    /// [`Cancelled`](crate::ErrorCode::Cancelled).
    pub fn burn(
        &self,
        input: impl AsRef<Path>,
        output: impl AsRef<Path>,
        words: &[Word],
        style: &Config,
        task: &Task,
    ) -> Result<BurnReport> {
        self.burn_with(input, output, words, style, &BurnOptions::default(), task)
    }

    /// [`Captioner::burn`] with encoder settings (x264 preset, quality) and, with
    /// [`BurnOptions::reframe`], at another aspect ratio: the window of each frame kept follows
    /// the face of whoever speaks ([`Captioner::plan_reframe`]), and the captions are laid out
    /// for the window.
    ///
    /// # Errors
    ///
    /// As [`Captioner::burn`].
    pub fn burn_with(
        &self,
        input: impl AsRef<Path>,
        output: impl AsRef<Path>,
        words: &[Word],
        style: &Config,
        options: &BurnOptions,
        task: &Task,
    ) -> Result<BurnReport> {
        let input = input.as_ref();
        let mut options = Cow::Borrowed(options);
        if let Some(reframe) = options.reframe
            && options.crop.is_none()
        {
            let cancel = task.cancel_flag().or_else(|| options.cancel.clone());
            let crop = self.reframe_path(input, words, reframe, cancel)?;
            options = Cow::Owned(options.into_owned().with_crop(crop));
        }
        let plan = self.plan_cuts(input, words, style)?;
        let (words, options) = if plan.is_empty() {
            (Cow::Borrowed(words), options)
        } else {
            let cuts = plan.cuts().iter().map(|c| (c.start_s, c.end_s));
            let options = options.into_owned().with_cuts(cuts);
            (Cow::Owned(plan.retime(words)), Cow::Owned(options))
        };
        let window = options.crop.as_ref().map(|c| (c.width(), c.height()));
        let source = self.caption_source(input, &words, style, window)?;
        let options = self.media_options(&options, task);
        Ok(caption_media::burn(
            input,
            output.as_ref(),
            &source,
            &options,
        )?)
    }

    /// What `style`'s `cutPausesS` and `cutFillers` cut out of `input`, given its `words`:
    /// the pauses are measured between the words and the voice the transcriber hears, and the
    /// cuts fall on the video's frame boundaries. Empty when the style cuts nothing.
    ///
    /// # Errors
    ///
    /// As [`Captioner::burn`]; [`ModelMissing`](crate::ErrorCode::ModelMissing) when pauses
    /// are cut and no model is installed (its voice detection finds them).
    pub fn plan_cuts(
        &self,
        input: impl AsRef<Path>,
        words: &[Word],
        style: &Config,
    ) -> Result<CutPlan> {
        let rules = CutRules::from_config(style);
        if rules.is_empty() {
            return Ok(CutPlan::default());
        }
        let input = input.as_ref();
        let info = caption_media::probe(input)?;
        let frame_s = info
            .video
            .as_ref()
            .map(|v| v.frame_rate_fps)
            .filter(|fps| *fps > 0.0)
            .map_or(0.0, |fps| 1.0 / fps);
        let voice = if rules.pause_s.is_some() && info.audio.is_some() {
            self.voice_regions(input)?
        } else {
            Vec::new()
        };
        Ok(CutPlan::plan(
            words,
            &voice,
            &rules,
            frame_s,
            info.duration_s,
        ))
    }

    /// The captions alone on a transparent background, at `input`'s size (upright), frame
    /// times and length, for an editor to lay over the video: ProRes 4444 with alpha for a
    /// `.mov` output, VP9 with alpha for `.webm`, a new folder of RGBA PNGs for a name without
    /// an extension. Laid over the input, it gives what [`Captioner::burn`] gives.
    ///
    /// # Errors
    ///
    /// As [`Captioner::burn`]; [`InvalidRequest`](crate::ErrorCode::InvalidRequest) for
    /// another extension or an existing folder.
    pub fn burn_layer(
        &self,
        input: impl AsRef<Path>,
        output: impl AsRef<Path>,
        words: &[Word],
        style: &Config,
        task: &Task,
    ) -> Result<LayerReport> {
        self.burn_layer_with(input, output, words, style, &BurnOptions::default(), task)
    }

    /// [`Captioner::burn_layer`] with `options`' progress and cancel hooks (its encoder
    /// settings are x264's and do not apply).
    ///
    /// # Errors
    ///
    /// As [`Captioner::burn_layer`].
    pub fn burn_layer_with(
        &self,
        input: impl AsRef<Path>,
        output: impl AsRef<Path>,
        words: &[Word],
        style: &Config,
        options: &BurnOptions,
        task: &Task,
    ) -> Result<LayerReport> {
        let input = input.as_ref();
        caption_media::LayerFormat::for_output(output.as_ref())?;
        if !CutRules::from_config(style).is_empty() {
            let field = if style.cut_fillers {
                "config.cutFillers"
            } else {
                "config.cutPausesS"
            };
            return Err(Error::invalid(
                field,
                "a caption layer keeps the input's timeline for an editor, so it cannot cut; \
                 burn the captions instead, or cut in the editor",
            ));
        }
        if options.reframe.is_some() || options.crop.is_some() {
            return Err(Error::invalid(
                "reframe",
                "a caption layer keeps the input's frame for an editor; burn the captions to reframe",
            ));
        }
        let source = self.caption_source(input, words, style, None)?;
        let options = self.media_options(options, task);
        Ok(caption_media::write_layer(
            input,
            output.as_ref(),
            &source,
            &options,
        )?)
    }

    /// Where `input`'s audio has a voice, found window by window as it is decoded, so that an
    /// hour-long input is never held whole. Regions that meet at a window's edge touch, and the
    /// cut planner joins them.
    fn voice_regions(&self, input: &Path) -> Result<Vec<CutSpan>> {
        /// Five minutes of 16 kHz samples: 19 MB.
        const WINDOW_SAMPLES: usize = 300 * caption_transcribe::SAMPLE_RATE_HZ as usize;
        let transcriber = self.transcriber()?;
        let rate = f64::from(caption_transcribe::SAMPLE_RATE_HZ);
        let mut reader = caption_media::AudioReader::open(input)?;
        let mut regions = Vec::new();
        let mut window: Vec<f32> = Vec::with_capacity(WINDOW_SAMPLES);
        let mut offset_samples = 0_usize;
        let mut flush = |window: &mut Vec<f32>, offset_samples: &mut usize| -> Result<()> {
            #[allow(
                clippy::cast_precision_loss,
                reason = "a sample count far below 2^52 is exact in f64"
            )]
            let offset_s = *offset_samples as f64 / rate;
            for region in transcriber.voice_regions(window)? {
                regions.push(CutSpan::new(
                    region.start_s + offset_s,
                    region.end_s + offset_s,
                ));
            }
            *offset_samples += window.len();
            window.clear();
            Ok(())
        };
        while let Some(chunk) = reader.next_chunk()? {
            let mut rest = &chunk[..];
            while !rest.is_empty() {
                let take = rest.len().min(WINDOW_SAMPLES - window.len());
                window.extend_from_slice(&rest[..take]);
                rest = &rest[take..];
                if window.len() == WINDOW_SAMPLES {
                    flush(&mut window, &mut offset_samples)?;
                }
            }
        }
        if !window.is_empty() {
            flush(&mut window, &mut offset_samples)?;
        }
        Ok(regions)
    }

    /// The renderer of `words` in `style` for `input`'s display size, or for `window`'s (width,
    /// height) when the burn keeps a window of each frame.
    fn caption_source(
        &self,
        input: &Path,
        words: &[Word],
        style: &Config,
        window: Option<(u32, u32)>,
    ) -> Result<CaptionSource> {
        let info = caption_media::probe(input)?;
        let video = match &info.video {
            Some(v) if v.is_still_image => {
                return Err(caption_media::Error::StillImage {
                    path: input.to_owned(),
                }
                .into());
            }
            Some(v) => v,
            None => {
                return Err(caption_media::Error::NoVideo {
                    path: input.to_owned(),
                }
                .into());
            }
        };
        if video.width == 0 || video.height == 0 {
            return Err(caption_media::Error::Unreadable {
                path: input.to_owned(),
                reason: "the video stream has no picture size (its frames do not decode)"
                    .to_owned(),
            }
            .into());
        }
        let (width, height) = window.unwrap_or((video.display_width, video.display_height));
        let frame = FrameSize::new(width, height);
        let fonts = Arc::new(SystemFonts::new().map_err(caption_error)?);
        let renderer = CaptionRenderer::new(words, style, frame, fonts).map_err(caption_error)?;
        Ok(CaptionSource::new(renderer))
    }

    /// `options` with this captioner's encoder threads and `task`'s progress and cancel.
    fn media_options(&self, options: &BurnOptions, task: &Task) -> BurnOptions {
        let mut options = options.clone();
        if options.encoder_threads == 0 {
            options.encoder_threads = self.inner.encoder_threads;
        }
        if let Some(report) = task.reporter(Stage::Burning) {
            options.progress = Some(Arc::new(move |fraction: f64| {
                #[allow(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "clamped to 0..=100 first"
                )]
                report((fraction * 100.0).clamp(0.0, 100.0) as u8);
            }));
        }
        if let Some(cancel) = task.cancel_flag() {
            options.cancel = Some(cancel);
        }
        options
    }
}

/// The model kept in `lock`, loaded by `load` on first use (two threads may both load it the
/// first time; one copy is kept).
pub(crate) fn loaded_once<T>(
    lock: &OnceLock<Arc<T>>,
    load: impl FnOnce() -> Result<T>,
) -> Result<Arc<T>> {
    if let Some(loaded) = lock.get() {
        return Ok(Arc::clone(loaded));
    }
    let loaded = Arc::new(load()?);
    Ok(Arc::clone(lock.get_or_init(|| loaded)))
}

/// `None` when the font family is installed; otherwise the rule a style naming it breaks, with
/// the closest installed families.
pub(crate) fn missing_font_rule(family: &str) -> Result<Option<String>> {
    Ok(caption_fonts::FontLibrary::new()?.missing_family_rule(family)?)
}

/// Whether `code` has the form of a language tag the font list takes: empty (every font), or
/// two or three letters then subtags of 2-8 letters or digits, each after `-` or `_`, in any
/// case (the form `GET /v1/fonts` documents for `lang`).
fn is_language_tag(code: &str) -> bool {
    let mut parts = code.split(['-', '_']);
    let primary = parts.next().unwrap_or_default();
    code.is_empty()
        || ((2..=3).contains(&primary.len())
            && primary.chars().all(|c| c.is_ascii_alphabetic())
            && parts.all(|p| {
                (2..=8).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphanumeric())
            }))
}
