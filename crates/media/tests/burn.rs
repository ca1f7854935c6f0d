#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use caption_media::{
    AudioOutcome, BurnOptions, Error, NoOverlay, Overlay, OverlaySource, burn, probe,
};
use common::{VFR_30_THEN_15, ffmpeg, ffprobe, frame_pts, path, rotated_phone_clip, s, tmp};

/// Box colour, opaque: a saturated purple that testsrc does not contain.
const BOX_RGB: [u8; 3] = [150, 40, 200];

/// Paints a solid box over the middle band of the display during [1.0, 2.0) s.
struct TimedBox;

impl TimedBox {
    fn rect(w: u32, h: u32) -> (u32, u32, u32, u32) {
        (w / 4, h / 2, (w / 2).max(16), (h / 8).max(16))
    }
}

impl OverlaySource for TimedBox {
    fn overlay_at(&self, t_s: f64, w: u32, h: u32) -> Option<Arc<Overlay>> {
        if !(1.0..2.0).contains(&t_s) {
            return None;
        }
        let (x, y, bw, bh) = Self::rect(w, h);
        let [r, g, b] = BOX_RGB;
        Some(Arc::new(Overlay::solid(
            x as i32,
            y as i32,
            bw,
            bh,
            [r, g, b, 255],
        )))
    }
}

/// The mean RGB of the box's inner half in the frame shown at `t_s`, decoded (and rotated for
/// display) by the ffmpeg CLI: an independent decoder. The picture is cropped to `w` x `h`
/// from its top left corner first, as a burn makes an odd size even.
fn box_mean_rgb(file: &Path, t_s: f64, w: u32, h: u32) -> [f64; 3] {
    let out = std::process::Command::new("ffmpeg")
        .args([
            "-hide_banner",
            "-loglevel",
            "error",
            "-ss",
            &format!("{t_s}"),
            "-i",
            s(file),
            "-vf",
            &format!("crop={w}:{h}:0:0"),
        ])
        .args(["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        out.stdout.len(),
        (w * h * 3) as usize,
        "decoded frame size of {file:?}"
    );
    let (x, y, bw, bh) = TimedBox::rect(w, h);
    let mut sum = [0.0; 3];
    let mut n = 0.0;
    for yy in (y + bh / 4)..(y + bh * 3 / 4) {
        for xx in (x + bw / 4)..(x + bw * 3 / 4) {
            let i = ((yy * w + xx) * 3) as usize;
            for (c, total) in sum.iter_mut().enumerate() {
                *total += f64::from(out.stdout[i + c]);
            }
            n += 1.0;
        }
    }
    sum.map(|v| v / n)
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn stream_field(file: &Path, stream: &str, field: &str) -> String {
    ffprobe(&[
        "-select_streams",
        stream,
        "-show_entries",
        &format!("stream={field}"),
        "-of",
        "csv=p=0",
        s(file),
    ])
    .trim()
    .to_owned()
}

/// The md5 of the first audio stream's packets, as ffmpeg's md5 muxer computes it on a copy.
fn audio_packets_md5(file: &Path) -> String {
    let out = std::process::Command::new("ffmpeg")
        .args([
            "-hide_banner",
            "-loglevel",
            "error",
            "-i",
            s(file),
            "-map",
            "0:a:0",
            "-c",
            "copy",
            "-f",
            "md5",
            "-",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Burns `input` into `output` with [`TimedBox`] and checks what every output must keep:
/// duration within a frame, frame rate, display size, the box at 1.5 s and not at 0.5 s.
fn burn_and_check(input: &Path, output: &Path) -> caption_media::BurnReport {
    let before = probe(input).unwrap();
    let report = burn(
        input,
        output,
        &TimedBox,
        &BurnOptions::default().with_preset("ultrafast"),
    )
    .unwrap();
    let after = probe(output).unwrap();
    let (vin, vout) = (before.video.unwrap(), after.video.clone().unwrap());
    let frame_s = 1.0 / vin.frame_rate_fps;
    assert!(
        (after.duration_s - before.duration_s).abs() <= frame_s + 1e-3,
        "{input:?}: duration {} -> {}",
        before.duration_s,
        after.duration_s
    );
    assert!(
        (vout.frame_rate_fps - vin.frame_rate_fps).abs() < 0.01,
        "{input:?}: {vin:?} -> {vout:?}"
    );
    // An odd size loses its last row or column: H.264 4:2:0 needs even sizes.
    assert_eq!(
        (vout.display_width, vout.display_height),
        (vin.display_width & !1, vin.display_height & !1)
    );
    assert_eq!((vout.width, vout.height), (vin.width & !1, vin.height & !1));
    assert_eq!(vout.codec, "h264");
    assert_eq!(
        report.frames_with_overlay as f64,
        (1.0 / frame_s).round(),
        "{input:?}: one second of frames"
    );
    let (w, h) = (vout.display_width, vout.display_height);
    let target = BOX_RGB.map(f64::from);
    let inside = box_mean_rgb(output, 1.5, w, h);
    assert!(
        distance(inside, target) < 10.0,
        "{input:?}: box at 1.5 s is {inside:?}, want {target:?}"
    );
    let early = box_mean_rgb(output, 0.5, w, h);
    let early_in = box_mean_rgb(input, 0.5, w, h);
    assert!(
        distance(early, target) > 40.0,
        "{input:?}: box already at 0.5 s: {early:?}"
    );
    assert!(
        distance(early, early_in) < 12.0,
        "{input:?}: picture changed at 0.5 s: {early_in:?} -> {early:?}"
    );
    // After the box: a blend that leaked into the decoder's reference pictures would show
    // here, in frames predicted from the ones that had the box.
    let late_s = (before.duration_s - 0.1).min(2.5);
    let late = box_mean_rgb(output, late_s, w, h);
    let late_in = box_mean_rgb(input, late_s, w, h);
    assert!(
        distance(late, late_in) < 12.0,
        "{input:?}: picture changed at {late_s} s, after the box: {late_in:?} -> {late:?}"
    );
    report
}

#[test]
fn mp4_h264_aac_keeps_everything_and_copies_audio_bit_exact() {
    let dir = tmp();
    let input = path(dir.path(), "in.mp4");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=640x360:rate=30:duration=3",
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=500:sample_rate=48000:duration=3",
        "-c:v",
        "libx264",
        "-pix_fmt",
        "yuv420p",
        "-c:a",
        "aac",
        s(&input),
    ]);
    let output = path(dir.path(), "out.mp4");
    let report = burn_and_check(&input, &output);
    assert_eq!(
        report.audio,
        AudioOutcome::Copied {
            codec: "aac".into()
        }
    );
    assert_eq!(audio_packets_md5(&input), audio_packets_md5(&output));
    assert_eq!(report.pixel_format, "yuv420p");
}

#[test]
fn mov_in_mov_out() {
    let dir = tmp();
    let input = path(dir.path(), "in.mov");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=480x270:rate=25:duration=3",
        "-f",
        "lavfi",
        "-i",
        "sine=duration=3",
        "-c:v",
        "libx264",
        "-pix_fmt",
        "yuv420p",
        "-c:a",
        "aac",
        s(&input),
    ]);
    let output = path(dir.path(), "out.mov");
    let report = burn_and_check(&input, &output);
    assert_eq!(audio_packets_md5(&input), audio_packets_md5(&output));
    assert!(matches!(report.audio, AudioOutcome::Copied { .. }));
}

#[test]
fn mkv_vp9_opus_to_mp4_copies_the_opus() {
    let dir = tmp();
    let input = path(dir.path(), "in.mkv");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=320x240:rate=24:duration=3",
        "-f",
        "lavfi",
        "-i",
        "sine=sample_rate=48000:duration=3",
        "-c:v",
        "libvpx-vp9",
        "-deadline",
        "realtime",
        "-cpu-used",
        "8",
        "-b:v",
        "1M",
        "-c:a",
        "libopus",
        s(&input),
    ]);
    let output = path(dir.path(), "out.mp4");
    let report = burn_and_check(&input, &output);
    assert_eq!(
        report.audio,
        AudioOutcome::Copied {
            codec: "opus".into()
        }
    );
    assert_eq!(audio_packets_md5(&input), audio_packets_md5(&output));
}

#[test]
fn webm_vp9_vorbis_to_mp4_reencodes_audio_to_aac() {
    let dir = tmp();
    let input = path(dir.path(), "in.webm");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=320x240:rate=30:duration=3",
        "-f",
        "lavfi",
        "-i",
        "sine=sample_rate=44100:duration=3",
        "-c:v",
        "libvpx-vp9",
        "-deadline",
        "realtime",
        "-cpu-used",
        "8",
        "-b:v",
        "1M",
        "-c:a",
        "libvorbis",
        s(&input),
    ]);
    let output = path(dir.path(), "out.mp4");
    let report = burn_and_check(&input, &output);
    assert_eq!(
        report.audio,
        AudioOutcome::Reencoded {
            from_codec: "vorbis".into()
        }
    );
    assert_eq!(stream_field(&output, "a:0", "codec_name"), "aac");
    let audio_s: f64 = stream_field(&output, "a:0", "duration").parse().unwrap();
    assert!(
        (audio_s - 3.0).abs() < 0.05,
        "re-encoded audio lasts {audio_s} s"
    );
    // The re-encoded audio still carries the tone.
    let samples = caption_media::decode_audio_16k_mono(&output).unwrap();
    let peak = samples.iter().fold(0.0_f32, |m, v| m.max(v.abs()));
    assert!(peak > 0.05, "peak {peak}");
}

#[test]
fn rotated_phone_clip_keeps_its_rotation_and_gets_the_box_upright() {
    let dir = tmp();
    let input = rotated_phone_clip(dir.path(), "testsrc=size=640x360:rate=30:duration=3", 3.0);
    let output = path(dir.path(), "out.mp4");
    let report = burn_and_check(&input, &output);
    assert_eq!((report.display_width, report.display_height), (360, 640));
    let info = probe(&output).unwrap().video.unwrap();
    assert_eq!(
        info.rotation_cw_deg,
        probe(&input).unwrap().video.unwrap().rotation_cw_deg
    );
}

#[test]
fn clip_without_audio() {
    let dir = tmp();
    let input = path(dir.path(), "silent.mp4");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=320x180:rate=30:duration=3",
        "-c:v",
        "libx264",
        "-pix_fmt",
        "yuv420p",
        s(&input),
    ]);
    let output = path(dir.path(), "out.mp4");
    let report = burn_and_check(&input, &output);
    assert_eq!(report.audio, AudioOutcome::None);
    assert_eq!(stream_field(&output, "a", "codec_name"), "");
}

#[test]
fn odd_dimensions_lose_one_row_and_column_into_yuv420p() {
    let dir = tmp();
    let input = path(dir.path(), "odd.webm");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=721x405:rate=30:duration=3",
        "-f",
        "lavfi",
        "-i",
        "sine=duration=3",
        "-c:v",
        "libvpx-vp9",
        "-deadline",
        "realtime",
        "-cpu-used",
        "8",
        "-b:v",
        "1M",
        "-c:a",
        "libopus",
        s(&input),
    ]);
    let output = path(dir.path(), "out.mp4");
    let report = burn_and_check(&input, &output);
    assert_eq!((report.display_width, report.display_height), (720, 404));
    assert_eq!(report.pixel_format, "yuv420p");
    assert_eq!(stream_field(&output, "v:0", "pix_fmt"), "yuv420p");
}

#[test]
fn short_4k_60fps_clip() {
    let dir = tmp();
    let input = path(dir.path(), "uhd.mp4");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=3840x2160:rate=60:duration=2.2",
        "-f",
        "lavfi",
        "-i",
        "sine=duration=2.2",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
        "-colorspace",
        "bt709",
        "-color_primaries",
        "bt709",
        "-color_trc",
        "bt709",
        "-c:a",
        "aac",
        s(&input),
    ]);
    let output = path(dir.path(), "out.mp4");
    let report = burn_and_check(&input, &output);
    assert_eq!(report.frames, 132);
    assert_eq!(stream_field(&output, "v:0", "color_space"), "bt709");
}

#[test]
fn variable_frame_rate_timestamps_are_kept() {
    let dir = tmp();
    let input = path(dir.path(), "vfr.mkv");
    // 30 frames at 30 fps, then 30 at 15 fps.
    let source = [
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=320x240:rate=30:duration=2",
    ];
    let codec = ["-c:v", "libx264", "-pix_fmt", "yuv420p", s(&input)];
    ffmpeg(&[&source[..], VFR_30_THEN_15, &codec].concat());
    let output = path(dir.path(), "out.mkv");
    burn(
        &input,
        &output,
        &NoOverlay,
        &BurnOptions::default().with_preset("ultrafast"),
    )
    .unwrap();
    let (a, b) = (frame_pts(&input), frame_pts(&output));
    assert!(a.len() >= 59, "{} frames", a.len());
    assert_eq!(a, b);
}

#[test]
fn progress_rises_to_one() {
    let dir = tmp();
    let input = path(dir.path(), "in.mp4");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=160x120:rate=30:duration=2",
        "-c:v",
        "libx264",
        s(&input),
    ]);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let options = BurnOptions::default().with_progress(move |p| sink.lock().unwrap().push(p));
    burn(&input, path(dir.path(), "out.mp4"), &NoOverlay, &options).unwrap();
    let seen = seen.lock().unwrap();
    assert!(seen.len() > 3);
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    assert_eq!(seen.last().copied(), Some(1.0));
}

/// Only the inputs remain in `dir`: no output and no partial file.
fn assert_only(dir: &Path, inputs: &[&str]) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut want: Vec<String> = inputs.iter().map(|s| (*s).to_owned()).collect();
    want.sort();
    assert_eq!(names, want);
}

#[test]
fn bad_inputs_are_clear_errors_and_leave_nothing_behind() {
    let dir = tmp();
    let d = dir.path();
    let whole = path(d, "whole.mp4");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=320x240:rate=30:duration=2",
        "-f",
        "lavfi",
        "-i",
        "sine=duration=2",
        "-c:v",
        "libx264",
        "-c:a",
        "aac",
        s(&whole),
    ]);
    let bytes = std::fs::read(&whole).unwrap();
    std::fs::write(path(d, "truncated.mp4"), &bytes[..bytes.len() / 2]).unwrap();
    std::fs::remove_file(&whole).unwrap();
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "sine=duration=2",
        "-c:a",
        "aac",
        s(&path(d, "audio.m4a")),
    ]);
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=64x48",
        "-frames:v",
        "1",
        s(&path(d, "image.png")),
    ]);
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=64x48",
        "-frames:v",
        "1",
        s(&path(d, "photo.jpg")),
    ]);
    std::fs::write(path(d, "garbage.mp4"), vec![0x42_u8; 100_000]).unwrap();
    let inputs = [
        "truncated.mp4",
        "audio.m4a",
        "image.png",
        "photo.jpg",
        "garbage.mp4",
    ];
    let out = path(d, "out.mp4");
    let burn_file =
        |name: &str| burn(path(d, name), &out, &TimedBox, &BurnOptions::default()).unwrap_err();
    assert!(matches!(
        burn_file("truncated.mp4"),
        Error::Unreadable { .. }
    ));
    assert!(matches!(burn_file("audio.m4a"), Error::NoVideo { .. }));
    assert!(matches!(burn_file("image.png"), Error::StillImage { .. }));
    assert!(matches!(burn_file("photo.jpg"), Error::StillImage { .. }));
    assert!(matches!(burn_file("garbage.mp4"), Error::Unreadable { .. }));
    let err = burn_file("missing.mp4");
    assert!(
        matches!(err, Error::NotFound { .. })
            && err.to_string().ends_with("missing.mp4: file not found"),
        "{err}"
    );
    assert_only(d, &inputs);
}

#[test]
fn an_output_container_without_h264_is_refused_up_front() {
    let dir = tmp();
    let input = path(dir.path(), "in.mp4");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=160x120:rate=30:duration=1",
        "-c:v",
        "libx264",
        s(&input),
    ]);
    let err = burn(
        &input,
        path(dir.path(), "out.webm"),
        &NoOverlay,
        &BurnOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, Error::UnsupportedOutput { .. }), "{err}");
    assert_only(dir.path(), &["in.mp4"]);
}

#[test]
fn cancellation_removes_the_partial_output() {
    let dir = tmp();
    let input = path(dir.path(), "in.mp4");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=320x240:rate=30:duration=3",
        "-c:v",
        "libx264",
        s(&input),
    ]);
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    // Raise the flag from inside the pipeline, once it is well under way.
    let options = BurnOptions::default()
        .with_cancel(Arc::clone(&cancel))
        .with_progress(move |p| {
            if p > 0.3 {
                flag.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        });
    let err = burn(&input, path(dir.path(), "out.mp4"), &NoOverlay, &options).unwrap_err();
    assert!(matches!(err, Error::Cancelled { .. }), "{err}");
    assert_only(dir.path(), &["in.mp4"]);
}
