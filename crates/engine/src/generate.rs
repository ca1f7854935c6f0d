//! Generate: words + style → a captioned video, burned by the media pipeline.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

use caption_core::{Config, GenerateRequest, GenerateResponse, ValidationErrors, Word};
use caption_media::{BurnOptions, BurnReport, Overlay as FrameOverlay, OverlaySource};
use caption_render::{CaptionRenderer, FrameSize, FrameState, SystemFonts};
use caption_store::{ObjectKey, PutOptions};

use crate::{Engine, Error, Result};

/// Adapts the caption renderer to the video pipeline. Frames come in time order (a few at a
/// time, in parallel), so only the last few distinct states can repeat: they are kept here, and
/// each new state is drawn without the renderer's own overlay cache, straight into the
/// pipeline's type (its pixels moved, not copied). A long video's memory then stays that of a
/// few overlays, whatever the number of distinct states.
struct CaptionSource {
    renderer: CaptionRenderer,
    recent: Mutex<VecDeque<(FrameState, Option<Arc<FrameOverlay>>)>>,
}

/// Distinct states kept: more than the frames the pipeline blends at once.
const RECENT_STATES: usize = 3;

impl OverlaySource for CaptionSource {
    fn overlay_at(&self, t_s: f64, _frame_w: u32, _frame_h: u32) -> Option<Arc<FrameOverlay>> {
        let mut state = self.renderer.timeline().state_at(t_s);
        if state.is_empty() {
            return None;
        }
        // The layout reports each word's effect progress even when no effect uses it, which
        // would make every frame of an effect's duration a new state; the renderer draws from
        // the transforms alone, so the progress is left out of the state's identity. (Measured
        // on the bench clip's 1800 frames with bold-highlight: 734 renders -> 300.)
        for word in &mut state.words {
            word.effect_milli = 0;
        }
        let lock = || {
            self.recent
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some((_, overlay)) = lock().iter().find(|(s, _)| *s == state) {
            return overlay.clone();
        }
        // Drawn outside the lock: frames of another state need not wait.
        let overlay = self.renderer.render_state(&state).and_then(|caption| {
            let (x, y, width, height, rgba) = caption.into_parts();
            FrameOverlay::new(x, y, width, height, rgba)
                .ok()
                .map(Arc::new)
        });
        let mut recent = lock();
        if recent.len() >= RECENT_STATES {
            recent.pop_front();
        }
        recent.push_back((state, overlay.clone()));
        overlay
    }
}

fn caption_error(e: caption_render::Error) -> Error {
    match e {
        caption_render::Error::InvalidConfig(errors) => Error::Invalid(errors),
        caption_render::Error::Fonts(caption_layout_error) => {
            Error::Invalid(ValidationErrors::one(
                "config.font",
                format!("{caption_layout_error}; list installed families with GET /fonts"),
            ))
        }
        other => Error::Internal(other.to_string()),
    }
}

impl Engine {
    /// The config a request asks for: its patch over the template it names (or the default).
    pub fn resolve_config(&self, request: &GenerateRequest) -> Result<Config> {
        let base = match &request.template_id {
            Some(id) => &self.template(id)?.config,
            None => self.inner.catalog.default_config(),
        };
        let config = request.config.apply(base);
        config.validate().map_err(Error::Invalid)?;
        Ok(config)
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
        let frame = FrameSize::new(video.display_width, video.display_height);
        let fonts = Arc::new(SystemFonts::new().map_err(caption_error)?);
        let renderer = CaptionRenderer::new(words, config, frame, fonts).map_err(caption_error)?;
        let source = CaptionSource {
            renderer,
            recent: Mutex::new(VecDeque::with_capacity(RECENT_STATES)),
        };
        Ok(caption_media::burn(input, output, &source, options)?)
    }

    /// `POST /generate`: fetches the input, burns the captions, stores the result and returns
    /// a download link. At most `generate_slots` run at once; beyond that it is [`Error::Busy`].
    pub async fn generate(&self, request: GenerateRequest) -> Result<GenerateResponse> {
        let key =
            ObjectKey::parse(&request.input).map_err(|e| Error::invalid("input", e.to_string()))?;
        let config = self.resolve_config(&request)?;
        let _slot = self
            .inner
            .generate_slots
            .clone()
            .try_acquire_owned()
            .map_err(|_| {
                Error::Busy("every generate slot is busy; retry in a few seconds".to_owned())
            })?;
        match self.inner.storage.head(&key).await {
            Err(caption_store::Error::NotFound { .. }) => {
                return Err(Error::NotFound {
                    what: "file",
                    id: request.input.clone(),
                });
            }
            other => other?,
        };
        let scratch = self.fetch_to_scratch(&key).await?;
        let input = scratch.path().join(key.file_name());
        let output = scratch.path().join(output_name(key.file_name()));
        let started = std::time::Instant::now();
        let report = {
            let (engine, input, output) = (self.clone(), input.clone(), output.clone());
            let words = request.words;
            let mut options = BurnOptions::default();
            options.encoder_threads = self.inner.options.encoder_threads;
            tokio::task::spawn_blocking(move || {
                engine.burn_file(&input, &output, &words, &config, &options)
            })
            .await
            .map_err(|e| Error::Internal(format!("burn task: {e}")))??
        };
        let out_key = ObjectKey::new_under("outputs", &output_name(key.file_name()));
        let file = tokio::fs::File::open(&output)
            .await
            .map_err(|source| Error::Io {
                context: format!("opening {}", output.display()),
                source,
            })?;
        let body = Box::pin(tokio_util_stream(file));
        self.inner
            .storage
            .put(&out_key, body, PutOptions::default())
            .await?;
        let download_url = self.inner.storage.download_url(&out_key).await?;
        tracing::info!(
            input = %key, output = %out_key, frames = report.frames,
            elapsed_s = started.elapsed().as_secs_f64(), "generated"
        );
        Ok(GenerateResponse { download_url })
    }
}

/// `clip.mov` → `clip-captioned.mp4`.
fn output_name(input_name: &str) -> String {
    let stem = Path::new(input_name)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("video");
    format!("{stem}-captioned.mp4")
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
