//! Reframing: before a burn at another aspect ratio, a few frames a second are looked at for
//! faces, and a crop window is planned for every frame that follows the face of whoever speaks.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use caption_core::{Reframe, Word};
use caption_faces::{Aspect, Face, FaceDetector, FaceSample, FramingOptions, SeenFace};
use caption_media::{CropKey, CropPath, SampledFrame};
use rayon::prelude::*;

use crate::Result;
use crate::captioner::{Captioner, loaded_once};
use crate::task::Task;

/// Frames a second the detector looks at: enough for a window that eases over a second or
/// more, and a small share of a burn's time.
const SAMPLES_PER_S: f64 = 3.0;
/// Sampled frames detected at once, one per core and a few more.
const BATCH_FRAMES: usize = 8;
/// A word's speaker still counts as talking this long (seconds) after the word ends.
const SPEAKER_HOLD_S: f64 = 0.5;

impl Captioner {
    /// The face detector, loaded on first use and kept.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::ModelMissing`](crate::ErrorCode::ModelMissing) when it is not installed.
    pub(crate) fn face_detector(&self) -> Result<Arc<FaceDetector>> {
        loaded_once(self.face_detector_lock(), || {
            Ok(FaceDetector::open_installed()?)
        })
    }

    /// The crop window of `reframe`'s shape for every frame of the video `input`, following
    /// the face of whoever speaks in `words` (their `speaker`s, when they have them, say who
    /// that is; otherwise the largest, most central face), planned on the input's timeline.
    /// A video with no face keeps the window at the centre.
    ///
    /// # Errors
    ///
    /// As [`Captioner::burn`]; [`ModelMissing`](crate::ErrorCode::ModelMissing) when the face
    /// detector is not installed.
    pub fn plan_reframe(
        &self,
        input: impl AsRef<Path>,
        words: &[Word],
        reframe: Reframe,
        task: &Task,
    ) -> Result<CropPath> {
        self.reframe_path(input.as_ref(), words, reframe, task.cancel_flag())
    }

    /// [`Captioner::plan_reframe`], stopping soon after `cancel` is raised.
    pub(crate) fn reframe_path(
        &self,
        input: &Path,
        words: &[Word],
        reframe: Reframe,
        cancel: Option<Arc<AtomicBool>>,
    ) -> Result<CropPath> {
        let info = caption_media::probe(input)?;
        let Some(video) = info.video.as_ref() else {
            return Err(caption_media::Error::NoVideo {
                path: input.to_owned(),
            }
            .into());
        };
        let (width, height) = (video.display_width & !1, video.display_height & !1);
        let detector = self.face_detector()?;
        let speakers = SpeakerTimes::of(words);
        let mut looker = Looker {
            detector: &detector,
            scale: 1.0,
            previous: None,
            batch: Vec::with_capacity(BATCH_FRAMES),
            samples: Vec::new(),
            speakers: &speakers,
        };
        caption_media::sample_frames(
            input,
            1.0 / SAMPLES_PER_S,
            detector.input_side(),
            |frame: SampledFrame| -> Result<()> {
                if cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)) {
                    return Err(caption_media::Error::Cancelled {
                        path: input.to_owned(),
                    }
                    .into());
                }
                looker.scale = f64::from(width) / f64::from(frame.width.max(1));
                looker.push(frame)
            },
        )?;
        looker.flush()?;
        let fps = if video.frame_rate_fps.is_finite() && video.frame_rate_fps > 0.0 {
            video.frame_rate_fps
        } else {
            30.0
        };
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a frame count of a video, positive and far below 2^52"
        )]
        let frames = (info.duration_s.max(0.0) * fps).ceil() as usize + 1;
        #[allow(clippy::cast_precision_loss, reason = "a frame index")]
        let times: Vec<f64> = (0..frames).map(|i| i as f64 / fps).collect();
        let (aspect_w, aspect_h) = reframe.ratio();
        let aspect = Aspect {
            width: aspect_w,
            height: aspect_h,
        };
        let framing = caption_faces::plan_framing(
            width,
            height,
            aspect,
            &looker.samples,
            &times,
            &FramingOptions::default(),
        )?;
        let keys = framing
            .windows
            .iter()
            .zip(&times)
            .map(|(w, &t_s)| CropKey {
                t_s,
                x: w.x,
                y: w.y,
            })
            .collect();
        Ok(CropPath::new(framing.width, framing.height, keys)?)
    }
}

/// Who talks when: each word's span with its speaker's number (in order of first speech).
struct SpeakerTimes {
    spans: Vec<(f64, f64, u32)>,
}

impl SpeakerTimes {
    fn of(words: &[Word]) -> Self {
        let mut names: Vec<&str> = Vec::new();
        let mut spans = Vec::new();
        for word in words {
            let Some(name) = word.speaker.as_deref() else {
                continue;
            };
            let id = names.iter().position(|n| *n == name).unwrap_or_else(|| {
                names.push(name);
                names.len() - 1
            });
            spans.push((word.start, word.end, u32::try_from(id).unwrap_or(u32::MAX)));
        }
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        Self { spans }
    }

    /// The speaker of the word being said at `t_s`, or of the one just said.
    fn at(&self, t_s: f64) -> Option<u32> {
        let started = self.spans.partition_point(|s| s.0 <= t_s);
        let (_, end, id) = *self.spans.get(started.checked_sub(1)?)?;
        (t_s <= end + SPEAKER_HOLD_S).then_some(id)
    }
}

/// Looks at sampled frames in batches: their faces, in the video's pixels, and how much each
/// mouth moved since the previous sample.
struct Looker<'a> {
    detector: &'a FaceDetector,
    /// Video pixels per sampled pixel.
    scale: f64,
    previous: Option<SampledFrame>,
    batch: Vec<SampledFrame>,
    samples: Vec<FaceSample>,
    speakers: &'a SpeakerTimes,
}

impl Looker<'_> {
    fn push(&mut self, frame: SampledFrame) -> Result<()> {
        self.batch.push(frame);
        if self.batch.len() >= BATCH_FRAMES {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        let batch = std::mem::take(&mut self.batch);
        let detector = self.detector;
        let found = batch
            .par_iter()
            .map(|f| detector.detect(f.width, f.height, &f.rgb))
            .collect::<Result<Vec<_>, _>>()?;
        for (frame, faces) in batch.into_iter().zip(found) {
            let seen = faces
                .iter()
                .map(|face| SeenFace {
                    centre_x: f64::from(face.centre().0) * self.scale,
                    centre_y: f64::from(face.centre().1) * self.scale,
                    width: f64::from(face.width()) * self.scale,
                    height: f64::from(face.height()) * self.scale,
                    mouth_motion: self
                        .previous
                        .as_ref()
                        .map_or(0.0, |before| mouth_motion(face, &frame, before)),
                })
                .collect();
            let t_s = frame.t_s();
            self.samples.push(FaceSample {
                t_s,
                faces: seen,
                speaker: self.speakers.at(t_s),
            });
            self.previous = Some(frame);
        }
        Ok(())
    }
}

/// The mean absolute difference of the pixels around `face`'s mouth between `now` and
/// `before` (0 to 255): a talking mouth changes between samples, a listening one much less.
fn mouth_motion(face: &Face, now: &SampledFrame, before: &SampledFrame) -> f64 {
    if (now.width, now.height) != (before.width, before.height) {
        return 0.0;
    }
    let (mx, my) = face.mouth();
    let radius = (face.width() * 0.15).max(1.0);
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "clamped to the picture"
    )]
    let bound = |v: f32, size: u32| v.clamp(0.0, size.saturating_sub(1) as f32) as usize;
    let (x0, x1) = (bound(mx - radius, now.width), bound(mx + radius, now.width));
    let (y0, y1) = (
        bound(my - radius, now.height),
        bound(my + radius, now.height),
    );
    let stride = now.width as usize * 3;
    let (mut sum, mut count) = (0_u64, 0_u64);
    for y in y0..=y1 {
        let row = y * stride;
        for i in row + x0 * 3..row + (x1 + 1) * 3 {
            sum += u64::from(now.rgb[i].abs_diff(before.rgb[i]));
            count += 1;
        }
    }
    #[allow(clippy::cast_precision_loss, reason = "pixel sums of a small patch")]
    let (sum, count) = (sum as f64, count.max(1) as f64);
    sum / count
}
