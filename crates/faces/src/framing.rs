//! A crop window at another aspect ratio for every frame of a video, following the face of the
//! person speaking the way a camera operator would: the window holds still while the face stays
//! inside a dead zone around its centre, eases to the face when it leaves it (speed and
//! acceleration limited, so it never jumps or jitters), and cuts straight to the face when the
//! face jumps (a new shot) or the speaker changes to someone else.

use crate::error::{Error, Result};

/// An output shape, width to height (`9:16` is vertical video).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aspect {
    /// Width part of the ratio.
    pub width: u32,
    /// Height part.
    pub height: u32,
}

/// The crop window's size in a `frame_width` x `frame_height` video: the largest window of
/// `aspect` inside the frame (the frame's height kept when the aspect is narrower than the
/// frame's, its width otherwise), both sides even as 4:2:0 video needs.
///
/// ```
/// use caption_faces::{Aspect, crop_size};
///
/// let vertical = Aspect { width: 9, height: 16 };
/// assert_eq!(crop_size(1920, 1080, vertical)?, (608, 1080));
/// assert_eq!(crop_size(1920, 1080, Aspect { width: 1, height: 1 })?, (1080, 1080));
/// assert_eq!(crop_size(1080, 1920, Aspect { width: 1, height: 1 })?, (1080, 1080));
/// # Ok::<(), caption_faces::Error>(())
/// ```
///
/// # Errors
/// [`Error::BadFraming`] when a side or a part of the aspect is 0, or the window would be
/// smaller than 2 x 2 pixels.
pub fn crop_size(frame_width: u32, frame_height: u32, aspect: Aspect) -> Result<(u32, u32)> {
    let bad = |detail: &str| Error::BadFraming {
        frame_width,
        frame_height,
        detail: detail.to_owned(),
    };
    if aspect.width == 0 || aspect.height == 0 {
        return Err(bad("the aspect ratio has a 0 part"));
    }
    let (fw, fh) = (u64::from(frame_width & !1), u64::from(frame_height & !1));
    let (aw, ah) = (u64::from(aspect.width), u64::from(aspect.height));
    // Rounded to the nearest even number, never past the frame.
    let even = |num: u64, den: u64, limit: u64| ((num + den) / (2 * den) * 2).min(limit);
    let (w, h) = if fw * ah >= fh * aw {
        (even(fh * aw, ah, fw), fh)
    } else {
        (fw, even(fw * ah, aw, fh))
    };
    if w < 2 || h < 2 {
        return Err(bad("the crop window would be smaller than 2 x 2 pixels"));
    }
    Ok((
        u32::try_from(w).unwrap_or(frame_width),
        u32::try_from(h).unwrap_or(frame_height),
    ))
}

/// A face seen in a sampled frame, in the frame's pixels.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SeenFace {
    /// Centre of the face's box, from the left.
    pub centre_x: f64,
    /// Centre of the face's box, from the top.
    pub centre_y: f64,
    /// The box's width.
    pub width: f64,
    /// The box's height.
    pub height: f64,
    /// How much the mouth's pixels changed since the previous sample (mean absolute
    /// difference, 0 to 255; 0 when unknown): whose face it is when a speaker talks.
    pub mouth_motion: f64,
}

/// The faces of one sampled frame.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FaceSample {
    /// The frame's time, seconds from the video's start.
    pub t_s: f64,
    /// The faces seen, in any order.
    pub faces: Vec<SeenFace>,
    /// Who is talking then, when the words carry speakers (the same number for the same
    /// speaker throughout).
    pub speaker: Option<u32>,
}

/// How the window moves; the defaults are those the tests measure.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FramingOptions {
    /// The window stays still while the face's centre is within this fraction of the window's
    /// width (or height) of the window's centre.
    pub dead_zone: f64,
    /// The most the window moves between two frames, as a fraction of its width (or height).
    pub max_step: f64,
    /// Frames the window takes to reach its full speed, and to stop.
    pub ease_frames: f64,
    /// The fraction of the distance to the face the window covers a frame while moving,
    /// before the speed limit.
    pub follow_gain: f64,
    /// A face that moves by more than this fraction of the window between two samples has
    /// jumped (a new shot): the window cuts to it.
    pub jump: f64,
}

impl Default for FramingOptions {
    fn default() -> Self {
        Self {
            dead_zone: 0.08,
            // 2 % a frame is the most a viewer takes for a steady pan; even rounding of the
            // window's edge adds up to 2 pixels, hence the margin.
            max_step: 0.015,
            ease_frames: 10.0,
            follow_gain: 0.1,
            jump: 0.5,
        }
    }
}

/// The crop window at one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Left edge, pixels (even).
    pub x: u32,
    /// Top edge, pixels (even).
    pub y: u32,
    /// The window cut here (a jump the viewer sees as a new shot) instead of moving smoothly.
    pub cut: bool,
}

/// A window of one size for every frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Framing {
    /// The window's width, pixels (even).
    pub width: u32,
    /// The window's height, pixels (even).
    pub height: u32,
    /// One window for each of the frame times asked for, in their order.
    pub windows: Vec<Window>,
}

/// Plans the crop window of `aspect` for each of `frame_times_s` in a `frame_width` x
/// `frame_height` video, from the faces of the sampled frames `samples` (in time order). With
/// several faces, the face of whoever is talking is followed when the samples say who talks and
/// the mouths tell whose face that is; otherwise the largest and most central face. With none,
/// the window holds where it was (the centre before any face is seen).
///
/// # Errors
/// As [`crop_size`].
pub fn plan_framing(
    frame_width: u32,
    frame_height: u32,
    aspect: Aspect,
    samples: &[FaceSample],
    frame_times_s: &[f64],
    options: &FramingOptions,
) -> Result<Framing> {
    let (width, height) = crop_size(frame_width, frame_height, aspect)?;
    let frame = (f64::from(frame_width & !1), f64::from(frame_height & !1));
    let crop = (f64::from(width), f64::from(height));
    let chosen = choose_faces(samples, frame.0);
    let targets = sample_targets(samples, &chosen, frame);
    let cuts = sample_cuts(samples, &chosen, &targets, crop, options);
    let axis = |along: fn(&(f64, f64)) -> f64| {
        let targets: Vec<f64> = targets.iter().map(along).collect();
        let sizes = (along(&frame), along(&crop));
        follow(&targets, samples, &cuts, frame_times_s, sizes, options)
    };
    let windows = axis(|p| p.0)
        .into_iter()
        .zip(axis(|p| p.1))
        .map(|((x, cut_x), (y, cut_y))| Window {
            x: edge(x, crop.0, frame.0),
            y: edge(y, crop.1, frame.1),
            cut: cut_x || cut_y,
        })
        .collect();
    Ok(Framing {
        width,
        height,
        windows,
    })
}

/// The window's left (or top) edge for a centre at `centre`: even, inside the frame.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "clamped to the frame, which a u32 holds"
)]
fn edge(centre: f64, crop: f64, frame: f64) -> u32 {
    let max = (frame - crop).max(0.0);
    let left = (centre - crop / 2.0).clamp(0.0, max);
    ((left / 2.0).round() * 2.0).min(max - max % 2.0) as u32
}

/// The face each sample follows (an index into its faces) and the track it belongs to.
#[derive(Debug, Clone, Copy)]
struct Chosen {
    face: usize,
    track: usize,
}

/// Faces linked across samples by position (a face belongs to the track whose last centre is
/// nearest, within its own width), so that "the same person" has a number.
fn tracks(samples: &[FaceSample], frame_width: f64) -> Vec<Vec<usize>> {
    let mut centres: Vec<f64> = Vec::new();
    samples
        .iter()
        .map(|sample| {
            sample
                .faces
                .iter()
                .map(|face| {
                    let reach = face.width.max(0.05 * frame_width);
                    let nearest = centres
                        .iter()
                        .enumerate()
                        .map(|(i, c)| (i, (c - face.centre_x).abs()))
                        .filter(|&(_, d)| d <= reach)
                        .min_by(|a, b| a.1.total_cmp(&b.1));
                    match nearest {
                        Some((i, _)) => {
                            centres[i] = face.centre_x;
                            i
                        }
                        None => {
                            centres.push(face.centre_x);
                            centres.len() - 1
                        }
                    }
                })
                .collect()
        })
        .collect()
}

/// Each speaker's face: the track whose mouth moves most while that speaker talks, among the
/// samples with more than one face. Speakers whose mouths never moved have none.
fn speaker_tracks(samples: &[FaceSample], track_of: &[Vec<usize>]) -> Vec<(u32, usize)> {
    let mut motion: Vec<((u32, usize), f64, usize)> = Vec::new();
    for (sample, tracks) in samples.iter().zip(track_of) {
        let Some(speaker) = sample.speaker else {
            continue;
        };
        if sample.faces.len() < 2 {
            continue;
        }
        for (face, &track) in sample.faces.iter().zip(tracks) {
            match motion
                .iter_mut()
                .find(|(key, _, _)| *key == (speaker, track))
            {
                Some((_, sum, n)) => {
                    *sum += face.mouth_motion;
                    *n += 1;
                }
                None => motion.push(((speaker, track), face.mouth_motion, 1)),
            }
        }
    }
    let mut best: Vec<(u32, usize, f64)> = Vec::new();
    for ((speaker, track), sum, n) in motion {
        #[allow(clippy::cast_precision_loss, reason = "a count of samples")]
        let mean = sum / n as f64;
        match best.iter_mut().find(|(s, _, _)| *s == speaker) {
            Some(entry) if mean > entry.2 => *entry = (speaker, track, mean),
            Some(_) => {}
            None => best.push((speaker, track, mean)),
        }
    }
    best.into_iter()
        .filter(|&(_, _, mean)| mean > 0.0)
        .map(|(speaker, track, _)| (speaker, track))
        .collect()
}

fn choose_faces(samples: &[FaceSample], frame_width: f64) -> Vec<Option<Chosen>> {
    let track_of = tracks(samples, frame_width);
    let speakers = speaker_tracks(samples, &track_of);
    let mut previous: Option<usize> = None;
    samples
        .iter()
        .zip(&track_of)
        .map(|(sample, tracks)| {
            let speaking = sample
                .speaker
                .and_then(|s| speakers.iter().find(|(sp, _)| *sp == s))
                .and_then(|&(_, track)| tracks.iter().position(|&t| t == track));
            // The largest, most central face; the one followed so far while it stays close to
            // that, so that two similar faces do not take turns.
            let prominence =
                |f: &SeenFace| f.width * f.height * (1.0 - (f.centre_x / frame_width - 0.5).abs());
            let best = sample
                .faces
                .iter()
                .enumerate()
                .max_by(|a, b| prominence(a.1).total_cmp(&prominence(b.1)))
                .map(|(i, f)| (i, prominence(f)));
            let kept = previous
                .and_then(|track| tracks.iter().position(|&t| t == track))
                .filter(|&i| best.is_some_and(|(_, p)| prominence(&sample.faces[i]) >= 0.7 * p));
            let face = speaking.or(kept).or(best.map(|(i, _)| i))?;
            previous = Some(tracks[face]);
            Some(Chosen {
                face,
                track: tracks[face],
            })
        })
        .collect()
}

/// Where each sample wants the window's centre: on its chosen face, else where the last one
/// was (the first one seen before any, the frame's centre when there is none); then a median of
/// three, which drops a single wrong detection but keeps a jump where it is.
fn sample_targets(
    samples: &[FaceSample],
    chosen: &[Option<Chosen>],
    frame: (f64, f64),
) -> Vec<(f64, f64)> {
    let seen: Vec<Option<(f64, f64)>> = samples
        .iter()
        .zip(chosen)
        .map(|(sample, c)| {
            c.map(|c| {
                let face = &sample.faces[c.face];
                (face.centre_x, face.centre_y)
            })
        })
        .collect();
    let mut last = seen
        .iter()
        .flatten()
        .next()
        .copied()
        .unwrap_or((frame.0 / 2.0, frame.1 / 2.0));
    let held: Vec<(f64, f64)> = seen
        .iter()
        .map(|s| {
            if let Some(p) = s {
                last = *p;
            }
            last
        })
        .collect();
    let median = |a: f64, b: f64, c: f64| a.max(b).min(a.min(b).max(c));
    (0..held.len())
        .map(|i| {
            if i == 0 || i + 1 == held.len() {
                return held[i];
            }
            let (a, b, c) = (held[i - 1], held[i], held[i + 1]);
            (median(a.0, b.0, c.0), median(a.1, b.1, c.1))
        })
        .collect()
}

/// When the window cuts instead of moving: halfway between two samples whose targets are more
/// than `jump` of the window apart, or whose speakers differ with the followed face changing
/// beyond the dead zone.
fn sample_cuts(
    samples: &[FaceSample],
    chosen: &[Option<Chosen>],
    targets: &[(f64, f64)],
    crop: (f64, f64),
    options: &FramingOptions,
) -> Vec<f64> {
    (1..samples.len())
        .filter(|&i| {
            let (a, b) = (targets[i - 1], targets[i]);
            let moved = ((b.0 - a.0) / crop.0)
                .abs()
                .max(((b.1 - a.1) / crop.1).abs());
            let new_speaker = samples[i].speaker.is_some()
                && samples[i - 1].speaker.is_some()
                && samples[i].speaker != samples[i - 1].speaker;
            let new_face = match (chosen[i - 1], chosen[i]) {
                (Some(x), Some(y)) => x.track != y.track,
                _ => false,
            };
            moved > options.jump || (new_speaker && new_face && moved > options.dead_zone)
        })
        .map(|i| (samples[i - 1].t_s + samples[i].t_s) / 2.0)
        .collect()
}

/// The window's centre along one axis at each frame, and whether it cut there.
fn follow(
    targets: &[f64],
    samples: &[FaceSample],
    cuts: &[f64],
    frame_times_s: &[f64],
    (frame, crop): (f64, f64),
    options: &FramingOptions,
) -> Vec<(f64, bool)> {
    let (lo, hi) = (crop / 2.0, frame - crop / 2.0);
    if hi <= lo || samples.is_empty() {
        let centre = frame / 2.0;
        return frame_times_s.iter().map(|_| (centre, false)).collect();
    }
    let target_at = |t: f64| -> f64 {
        let k = samples.partition_point(|s| s.t_s <= t);
        let value = if k == 0 {
            targets[0]
        } else if k == samples.len() {
            targets[k - 1]
        } else {
            let (t0, t1) = (samples[k - 1].t_s, samples[k].t_s);
            match cuts.iter().find(|&&c| c > t0 && c <= t1) {
                Some(&c) if t < c => targets[k - 1],
                Some(_) => targets[k],
                None if t1 > t0 => {
                    let f = ((t - t0) / (t1 - t0)).clamp(0.0, 1.0);
                    targets[k - 1] + f * (targets[k] - targets[k - 1])
                }
                None => targets[k],
            }
        };
        value.clamp(lo, hi)
    };
    let max_speed = options.max_step * crop;
    let max_accel = max_speed / options.ease_frames.max(1.0);
    let dead_zone = options.dead_zone * crop;
    let settle = dead_zone / 4.0;
    let mut out = Vec::with_capacity(frame_times_s.len());
    let mut position: Option<f64> = None;
    let mut speed = 0.0;
    let mut moving = false;
    let mut previous_t = f64::NEG_INFINITY;
    for &t in frame_times_s {
        let target = target_at(t);
        let cut = cuts.iter().any(|&c| c > previous_t && c <= t);
        previous_t = t;
        let Some(p) = position.filter(|_| !cut) else {
            position = Some(target);
            speed = 0.0;
            moving = false;
            out.push((target, cut));
            continue;
        };
        let error = target - p;
        if !moving && error.abs() > dead_zone {
            moving = true;
        }
        if moving {
            let wanted = (options.follow_gain * error).clamp(-max_speed, max_speed);
            speed += (wanted - speed).clamp(-max_accel, max_accel);
            if error.abs() < settle && speed.abs() <= max_accel {
                moving = false;
                speed = 0.0;
            }
        }
        let next = (p + speed).clamp(lo, hi);
        if next <= lo || next >= hi {
            speed = 0.0;
        }
        position = Some(next);
        out.push((next, false));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERTICAL: Aspect = Aspect {
        width: 9,
        height: 16,
    };

    fn face_at(x: f64) -> SeenFace {
        SeenFace {
            centre_x: x,
            centre_y: 300.0,
            width: 200.0,
            height: 200.0,
            mouth_motion: 0.0,
        }
    }

    /// Samples every third of a second of one face at `x(t)` (none where it gives `None`).
    fn samples(seconds: f64, x: impl Fn(f64) -> Option<f64>) -> Vec<FaceSample> {
        (0..)
            .map(|i| f64::from(i) / 3.0)
            .take_while(|&t| t < seconds)
            .map(|t| FaceSample {
                t_s: t,
                faces: x(t).map(face_at).into_iter().collect(),
                speaker: None,
            })
            .collect()
    }

    fn frames(seconds: f64) -> Vec<f64> {
        (0..)
            .map(|i| f64::from(i) / 30.0)
            .take_while(|&t| t < seconds)
            .collect()
    }

    fn plan(samples: &[FaceSample], times: &[f64]) -> Framing {
        plan_framing(
            1920,
            1080,
            VERTICAL,
            samples,
            times,
            &FramingOptions::default(),
        )
        .expect("a 1920x1080 frame has room for 9:16")
    }

    fn largest_step(framing: &Framing) -> u32 {
        framing
            .windows
            .windows(2)
            .filter(|w| !w[1].cut)
            .map(|w| w[0].x.abs_diff(w[1].x))
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn a_still_face_gives_a_still_window_around_it() {
        let framing = plan(&samples(4.0, |_| Some(1500.0)), &frames(4.0));
        assert_eq!((framing.width, framing.height), (608, 1080));
        assert!(framing.windows.iter().all(|w| *w == framing.windows[0]));
        assert_eq!(framing.windows[0].x, 1500 - 304);
    }

    #[test]
    fn a_moving_face_is_followed_smoothly_and_kept_in_the_middle_third() {
        // 150 px/s from x = 400 for 8 s.
        let x = |t: f64| 400.0 + 150.0 * t;
        let times = frames(8.0);
        let framing = plan(&samples(8.0, |t| Some(x(t))), &times);
        let limit = 608 / 50;
        assert!(
            largest_step(&framing) <= limit,
            "{}",
            largest_step(&framing)
        );
        assert!(framing.windows.iter().all(|w| !w.cut));
        for (w, &t) in framing.windows.iter().zip(&times) {
            let inside = x(t) - f64::from(w.x);
            assert!(
                (608.0 / 3.0..=2.0 * 608.0 / 3.0).contains(&inside),
                "at {t}: {inside}"
            );
        }
    }

    #[test]
    fn a_small_wobble_inside_the_dead_zone_does_not_move_the_window() {
        let framing = plan(
            &samples(4.0, |t| Some(960.0 + 20.0 * (t * 7.0).sin())),
            &frames(4.0),
        );
        assert!(framing.windows.iter().all(|w| w.x == framing.windows[0].x));
    }

    #[test]
    fn a_jump_is_a_cut_and_a_lost_face_holds_the_window() {
        let x = |t: f64| match t {
            t if t < 2.0 => Some(300.0),
            t if t < 3.0 => None,
            _ => Some(1600.0),
        };
        let times = frames(5.0);
        let framing = plan(&samples(5.0, x), &times);
        let cuts: Vec<f64> = framing
            .windows
            .iter()
            .zip(&times)
            .filter(|(w, _)| w.cut)
            .map(|(_, &t)| t)
            .collect();
        assert_eq!(cuts.len(), 1, "{cuts:?}");
        assert!((2.8..3.2).contains(&cuts[0]), "{cuts:?}");
        assert_eq!(
            framing.windows[70].x, framing.windows[0].x,
            "held while no face"
        );
        assert_eq!(framing.windows.last().map(|w| w.x), Some(1600 - 304));
        assert!(largest_step(&framing) <= 608 / 50);
    }

    #[test]
    fn no_face_keeps_the_centre() {
        let framing = plan(&samples(2.0, |_| None), &frames(2.0));
        assert!(framing.windows.iter().all(|w| w.x == 960 - 304 && !w.cut));
    }

    #[test]
    fn the_talking_face_is_followed() {
        // Two faces; speaker 0 talks for 3 s, then speaker 1. The left mouth moves while 0
        // talks, the right one while 1 does.
        let sample = |t: f64| {
            let speaker = u32::from(t >= 3.0);
            let motion = |mine: u32| if mine == speaker { 12.0 } else { 1.0 };
            FaceSample {
                t_s: t,
                faces: vec![
                    SeenFace {
                        mouth_motion: motion(0),
                        ..face_at(400.0)
                    },
                    SeenFace {
                        mouth_motion: motion(1),
                        ..face_at(1500.0)
                    },
                ],
                speaker: Some(speaker),
            }
        };
        let samples: Vec<FaceSample> = (0..18).map(|i| sample(f64::from(i) / 3.0)).collect();
        let times = frames(6.0);
        let framing = plan(&samples, &times);
        assert_eq!(framing.windows[30].x, 400 - 304);
        assert_eq!(framing.windows[150].x, 1500 - 304);
        assert_eq!(framing.windows.iter().filter(|w| w.cut).count(), 1);
    }

    #[test]
    fn crop_sizes_are_even_and_fit() {
        let size = |w, h, a, b| {
            crop_size(
                w,
                h,
                Aspect {
                    width: a,
                    height: b,
                },
            )
            .ok()
        };
        assert_eq!(size(1920, 1080, 4, 5), Some((864, 1080)));
        assert_eq!(size(1921, 1081, 9, 16), Some((608, 1080)));
        assert_eq!(size(640, 360, 9, 16), Some((202, 360)));
        assert_eq!(size(1, 1, 9, 16), None);
        assert_eq!(size(1920, 1080, 0, 16), None);
    }
}
