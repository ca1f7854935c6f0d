//! Caption layers (`write_layer`): ProRes 4444 and VP9 with alpha, and PNG sequences, checked
//! by decoding them with the ffmpeg CLI: format, size, frame times, the alpha plane, and the
//! layer laid over the input against the burn of the same overlay.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use caption_media::{BurnOptions, LayerFormat, Overlay, OverlaySource, burn, write_layer};
use common::{ffprobe, frame_pts, path, rotated_phone_clip, s, tmp};

/// A caption-like overlay from 0.5 s to 1.5 s: a white box with a black border (premultiplied,
/// half-transparent edge) in the lower middle of the frame, sized by the frame.
struct BoxCaption;

const SHOWN_S: (f64, f64) = (0.5, 1.5);

impl BoxCaption {
    fn rect(w: u32, h: u32) -> (i32, i32, u32, u32) {
        ((w / 4) as i32, (h * 2 / 3) as i32, w / 2, (h / 8).max(8))
    }
}

impl OverlaySource for BoxCaption {
    fn overlay_at(&self, t_s: f64, w: u32, h: u32) -> Option<Arc<Overlay>> {
        if !(SHOWN_S.0..SHOWN_S.1).contains(&t_s) {
            return None;
        }
        let (x, y, bw, bh) = Self::rect(w, h);
        let mut rgba = Vec::with_capacity((bw * bh * 4) as usize);
        for row in 0..bh {
            for col in 0..bw {
                let edge = row < 2 || col < 2 || row >= bh - 2 || col >= bw - 2;
                let border = row < 4 || col < 4 || row >= bh - 4 || col >= bw - 4;
                rgba.extend_from_slice(if edge {
                    &[0, 0, 0, 128]
                } else if border {
                    &[0, 0, 0, 255]
                } else {
                    &[255, 255, 255, 255]
                });
            }
        }
        Some(Arc::new(Overlay::new(x, y, bw, bh, rgba).unwrap()))
    }
}

/// One frame of `file` at `t_s` in `pix_fmt` (`gray` after `alphaextract` for the alpha
/// plane); VP9 alpha needs libvpx's decoder, which keeps it.
fn frame_at(file: &Path, t_s: f64, filter: &str, pix_fmt: &str) -> Vec<u8> {
    let mut command = Command::new("ffmpeg");
    command.args(["-hide_banner", "-loglevel", "error"]);
    if file.extension().is_some_and(|e| e == "webm") {
        command.args(["-c:v", "libvpx-vp9"]);
    }
    let out = command
        .args(["-ss", &format!("{t_s:.3}"), "-i", s(file), "-frames:v", "1"])
        .args(["-vf", filter, "-f", "rawvideo", "-pix_fmt", pix_fmt, "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Each video frame's time, as ffprobe prints it.
fn times(file: &Path) -> Vec<String> {
    frame_pts(file)
        .iter()
        .map(|t| t.trim_end_matches(',').to_owned())
        .filter(|t| !t.is_empty())
        .collect()
}

fn probe_stream(file: &Path, entries: &str) -> String {
    ffprobe(&[
        "-select_streams",
        "v:0",
        "-show_entries",
        &format!("stream={entries}"),
        "-of",
        "csv=p=0",
        s(file),
    ])
    .trim()
    .to_owned()
}

/// The alpha of `shown` (a frame with the caption: a file and a time in it) and `before` (one
/// without).
fn check_alpha(shown: (&Path, f64), before: (&Path, f64), w: u32, h: u32) {
    let (x, y, bw, bh) = BoxCaption::rect(w, h);
    let at = |plane: &[u8], px: i32, py: i32| plane[(py as u32 * w + px as u32) as usize];
    let shown = frame_at(shown.0, shown.1, "alphaextract", "gray");
    assert_eq!(shown.len(), (w * h) as usize);
    // Opaque inside the box, transparent away from it, half at its soft edge.
    let inside = at(&shown, x + bw as i32 / 2, y + bh as i32 / 2);
    let outside = at(&shown, 2, 2);
    let edge = at(&shown, x, y + bh as i32 / 2);
    assert!(inside >= 250, "alpha {inside} on the caption");
    assert!(outside <= 2, "alpha {outside} away from it");
    assert!((100..=156).contains(&edge), "alpha {edge} at the soft edge");
    let away = shown.iter().enumerate().filter(|&(i, &a)| {
        let (px, py) = ((i as u32 % w) as i32, (i as u32 / w) as i32);
        let far = px < x - 8 || px > x + bw as i32 + 8 || py < y - 8 || py > y + bh as i32 + 8;
        far && a > 2
    });
    assert_eq!(
        away.count(),
        0,
        "pixels away from the caption are transparent"
    );
    // Before the caption shows, every pixel is transparent.
    let before = frame_at(before.0, before.1, "alphaextract", "gray");
    assert_eq!(before.len(), (w * h) as usize);
    assert!(before.iter().all(|&a| a <= 2));
}

/// The layer laid over `input` by ffmpeg's overlay filter, against the burn, at 1.0 s:
/// mean and 99th percentile of the absolute difference per RGB channel.
fn overlay_against_burn(dir: &Path, input: &Path, layer: &Path) -> (f64, u8) {
    let burned = path(dir, "burned.mp4");
    burn(
        input,
        &burned,
        &BoxCaption,
        &BurnOptions::default().with_crf(1.0),
    )
    .unwrap();
    let laid = path(dir, "laid.mp4");
    let mut command = Command::new("ffmpeg");
    command.args(["-hide_banner", "-loglevel", "error", "-y", "-i", s(input)]);
    if layer.extension().is_some_and(|e| e == "webm") {
        command.args(["-c:v", "libvpx-vp9"]);
    }
    let status = command
        .args([
            "-i",
            s(layer),
            "-filter_complex",
            "[0:v][1:v]overlay=format=auto",
        ])
        .args([
            "-c:v",
            "libx264",
            "-crf",
            "1",
            "-pix_fmt",
            "yuv420p",
            s(&laid),
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let a = frame_at(&burned, 1.0, "null", "rgb24");
    let b = frame_at(&laid, 1.0, "null", "rgb24");
    assert_eq!(a.len(), b.len());
    let mut diffs: Vec<u8> = a.iter().zip(&b).map(|(x, y)| x.abs_diff(*y)).collect();
    let mean = diffs.iter().map(|&d| f64::from(d)).sum::<f64>() / diffs.len() as f64;
    diffs.sort_unstable();
    let p99 = diffs[diffs.len() * 99 / 100];
    (mean, p99)
}

#[test]
fn prores_and_vp9_layers_carry_alpha_and_match_the_burn() {
    let dir = tmp();
    let input = path(dir.path(), "input.mp4");
    common::clip_with_tone(
        &input,
        "testsrc2=s=320x240:r=25:d=2",
        2.0,
        &["-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac"],
    );
    for (name, codec, pix_fmts) in [
        ("layer.mov", "prores", &["yuva444p10le", "yuva444p12le"][..]),
        ("layer.webm", "vp9", &["yuv420p", "yuva420p"][..]),
    ] {
        let layer = path(dir.path(), name);
        let report = write_layer(&input, &layer, &BoxCaption, &BurnOptions::default()).unwrap();
        assert_eq!((report.width, report.height), (320, 240));
        assert_eq!(report.frames, 50);
        assert_eq!(report.frames_with_captions, 25);
        let stream = probe_stream(&layer, "codec_name,width,height,pix_fmt");
        let fields: Vec<&str> = stream.split(',').collect();
        assert_eq!(fields[0], codec, "{stream}");
        assert_eq!(&fields[1..3], ["320", "240"], "{stream}");
        assert!(pix_fmts.contains(&fields[3]), "{stream}");
        // The input's frame times, one for one.
        assert_eq!(times(&layer), times(&input), "{name}");
        check_alpha((&layer, 1.0), (&layer, 0.2), 320, 240);
        let (mean, p99) = overlay_against_burn(dir.path(), &input, &layer);
        eprintln!("{name}: overlaid against burned, mean {mean:.3}, p99 {p99}");
        assert!(mean < 2.0 && p99 <= 16, "{name}: mean {mean}, p99 {p99}");
    }
    // ProRes 4444 is tagged as such, with its alpha.
    let tag = probe_stream(&path(dir.path(), "layer.mov"), "codec_tag_string,profile");
    assert!(tag.contains("ap4h") && tag.contains("4444"), "{tag}");
}

#[test]
fn a_png_sequence_is_upright_for_a_rotated_phone_clip() {
    let dir = tmp();
    let input = rotated_phone_clip(dir.path(), "testsrc2=s=320x180:r=10", 2.0);
    let frames = path(dir.path(), "frames");
    let report = write_layer(&input, &frames, &BoxCaption, &BurnOptions::default()).unwrap();
    assert_eq!(report.format, LayerFormat::PngSequence);
    // The phone shows the 320x180 picture turned: 180x320, and so is the layer.
    assert_eq!((report.width, report.height), (180, 320));
    let mut names: Vec<String> = std::fs::read_dir(&frames)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), times(&input).len());
    assert_eq!(report.frames, names.len() as u64);
    assert_eq!(names[0], "000001.png");
    let shown = path(dir.path(), "frames/000011.png");
    assert_eq!(probe_stream(&shown, "width,height,pix_fmt"), "180,320,rgba");
    let before = path(dir.path(), "frames/000003.png");
    check_alpha((&shown, 0.0), (&before, 0.0), 180, 320);
    // A sequence goes into a new folder: an existing one is refused, and left as it was.
    let err = write_layer(&input, &frames, &BoxCaption, &BurnOptions::default()).unwrap_err();
    assert!(err.to_string().contains("exists"), "{err}");
    assert_eq!(std::fs::read_dir(&frames).unwrap().count(), names.len());
}

#[test]
fn other_outputs_and_inputs_are_refused_leaving_nothing() {
    let dir = tmp();
    let input = path(dir.path(), "input.mp4");
    common::clip_with_tone(
        &input,
        "testsrc2=s=64x48:r=10:d=1",
        1.0,
        &["-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac"],
    );
    let err = write_layer(
        &input,
        path(dir.path(), "layer.mp4"),
        &BoxCaption,
        &BurnOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains(".mov"), "{err}");
    let audio = path(dir.path(), "tone.m4a");
    common::ffmpeg(&["-f", "lavfi", "-i", "sine=duration=1", s(&audio)]);
    let err = write_layer(
        &audio,
        path(dir.path(), "layer.mov"),
        &BoxCaption,
        &BurnOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.code().as_str(), "no_video", "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}
