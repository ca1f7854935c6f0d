//! Reframing on a real picture: scikit-image's astronaut moved across a 1920 x 1080 clip by
//! ffmpeg (still, panning, a jump across the frame, panning back), burned at 9:16. Where the
//! face is in every frame is known from the clip's path, so the crop window's path is measured
//! against it, and the burned frames are looked at for the face and the captions.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use caption_core::{Catalog, Config, Reframe, Word, parse_config_patch};
use caption_engine::{BurnOptions, Captioner, ErrorCode, Task};
use caption_faces::FaceDetector;
use caption_testkit::faces::MovingFace;
use caption_testkit::media::{frame_rgb_at, tone_video};
use serde_json::json;

/// A word a second, in magenta, over the bold-highlight template.
fn words_and_style(seconds: u32) -> (Vec<Word>, Config) {
    let words = (0..seconds)
        .map(|s| Word::new(f64::from(s) + 0.1, f64::from(s) + 0.9, format!("word{s}")))
        .collect();
    let magenta = json!({"colors": [{"r": 255, "g": 0, "b": 255}]});
    let style = parse_config_patch(
        &json!({"colors": {"defaultColor": magenta, "spokenColor": magenta, "hilightColor": magenta}}),
        "config",
    )
    .unwrap()
    .apply(&Catalog::builtin().unwrap().get("bold-highlight").unwrap().config);
    (words, style)
}

fn magenta(p: &[u8]) -> bool {
    p[0] > 190 && p[1] < 80 && p[2] > 190
}

#[test]
fn a_moving_face_stays_in_the_middle_third_of_a_vertical_crop() {
    let dir = tempfile::tempdir().unwrap();
    let clip = MovingFace::landscape();
    let video = clip.write(&dir.path().join("face.mp4")).unwrap();
    let captioner = Captioner::builder().build().unwrap();
    let (words, style) = words_and_style(12);

    let path = captioner
        .plan_reframe(&video, &words, Reframe::Vertical, &Task::default())
        .unwrap();
    assert_eq!((path.width(), path.height()), (608, 1080));
    let width = f64::from(path.width());
    let frames = 360;
    let mut inside = 0;
    let mut largest_step = 0;
    let mut cuts = Vec::new();
    let mut previous: Option<u32> = None;
    for k in 0..frames {
        let t_s = f64::from(k) / 30.0;
        let (x, y) = path.origin_at(t_s).unwrap();
        assert_eq!(y, 0, "the height is kept");
        let face_x = clip.face_centre_at(t_s).0 - f64::from(x);
        if (width / 3.0..=2.0 * width / 3.0).contains(&face_x) {
            inside += 1;
        }
        if let Some(before) = previous {
            let step = x.abs_diff(before);
            if f64::from(step) > 0.02 * width {
                cuts.push(t_s);
            } else {
                largest_step = largest_step.max(step);
            }
        }
        previous = Some(x);
    }
    let share = f64::from(inside) / f64::from(frames);
    eprintln!(
        "face in the middle third in {:.1} % of frames; largest step {largest_step} px \
         ({:.2} % of the width); cuts at {cuts:?}",
        100.0 * share,
        100.0 * f64::from(largest_step) / width
    );
    assert!(share >= 0.95, "{share:.3} of frames");
    // The only jump is the cut to the face where it jumped: at 7 s, placed halfway between
    // the samples (a third of a second apart) on either side.
    assert_eq!(cuts.len(), 1, "{cuts:?}");
    assert!((cuts[0] - 7.0).abs() <= 0.2, "{cuts:?}");

    let burned = dir.path().join("vertical.mp4");
    let options = BurnOptions::default().with_reframe(Some(Reframe::Vertical));
    let report = captioner
        .burn_with(&video, &burned, &words, &style, &options, &Task::default())
        .unwrap();
    assert_eq!((report.display_width, report.display_height), (608, 1080));
    assert_eq!(report.frames, 360);

    // The burned frames show the face in their middle third, and the captions inside them.
    let detector = FaceDetector::open_installed().unwrap();
    for t_s in [1.5, 3.5, 6.5, 8.5, 10.5] {
        let frame = frame_rgb_at(&burned, t_s).unwrap();
        assert_eq!(frame.len(), 608 * 1080 * 3);
        let faces = detector.detect(608, 1080, &frame).unwrap();
        let face = faces
            .first()
            .unwrap_or_else(|| panic!("no face at {t_s} s"));
        let x = f64::from(face.centre().0);
        assert!(
            (width / 3.0..=2.0 * width / 3.0).contains(&x),
            "at {t_s} s the face is at x = {x:.0} of 608"
        );
        let caption: Vec<usize> = frame
            .chunks_exact(3)
            .enumerate()
            .filter(|(_, p)| magenta(p))
            .map(|(i, _)| i % 608)
            .collect();
        assert!(
            caption.len() > 300,
            "at {t_s} s: {} caption pixels",
            caption.len()
        );
        let (left, right) = (caption.iter().min().unwrap(), caption.iter().max().unwrap());
        assert!(
            *left >= 8 && *right < 600,
            "at {t_s} s the caption spans x {left}..{right} of 608"
        );
    }
}

/// A grey clip of `size` (WIDTHxHEIGHT), 25 fps, with a tone.
fn grey_clip(dir: &tempfile::TempDir, size: &str, seconds: f64) -> std::path::PathBuf {
    let picture = format!("color=c=gray:s={size}:r=25");
    tone_video(&dir.path().join("grey.mp4"), &picture, seconds).unwrap()
}

#[test]
fn a_clip_without_a_face_keeps_the_centre() {
    let dir = tempfile::tempdir().unwrap();
    let video = grey_clip(&dir, "640x360", 2.0);
    let captioner = Captioner::builder().build().unwrap();
    let path = captioner
        .plan_reframe(&video, &[], Reframe::Square, &Task::default())
        .unwrap();
    assert_eq!((path.width(), path.height()), (360, 360));
    for k in 0..50 {
        assert_eq!(path.origin_at(f64::from(k) / 25.0), Some((140, 0)));
    }
    let burned = dir.path().join("square.mp4");
    let options = BurnOptions::default().with_reframe(Some(Reframe::Square));
    let report = captioner
        .burn_with(
            &video,
            &burned,
            &[],
            &words_and_style(0).1,
            &options,
            &Task::default(),
        )
        .unwrap();
    assert_eq!((report.display_width, report.display_height), (360, 360));
}

#[test]
fn a_caption_layer_is_not_reframed() {
    let dir = tempfile::tempdir().unwrap();
    let video = grey_clip(&dir, "320x240", 1.0);
    let captioner = Captioner::builder().build().unwrap();
    let options = BurnOptions::default().with_reframe(Some(Reframe::Vertical));
    let error = captioner
        .burn_layer_with(
            &video,
            dir.path().join("layer.mov"),
            &[],
            &words_and_style(0).1,
            &options,
            &Task::default(),
        )
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidRequest);
    assert!(error.to_string().contains("reframe"), "{error}");
}
