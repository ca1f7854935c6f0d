//! Fixture helpers shared by the integration tests: real media files made by the ffmpeg CLI
//! in a temporary directory. A missing ffmpeg fails the test; nothing is skipped.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs the ffmpeg CLI with `args` (quiet and overwriting), panicking with its stderr when it
/// fails.
pub fn ffmpeg(args: &[&str]) {
    caption_testkit::media::ffmpeg(args).unwrap_or_else(|e| panic!("{e:#}"));
}

/// Runs ffprobe and returns its stdout.
pub fn ffprobe(args: &[&str]) -> String {
    let output = Command::new("ffprobe")
        .args(["-hide_banner", "-loglevel", "error"])
        .args(args)
        .output()
        .expect("ffprobe must be installed");
    assert!(
        output.status.success(),
        "ffprobe {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Makes `file`: the lavfi `video` source with a sine tone of `duration_s`, encoded with
/// `codec_args` (video and audio codecs, pixel format, tags).
pub fn clip_with_tone(file: &Path, video: &str, duration_s: f64, codec_args: &[&str]) {
    let sine = format!("sine=duration={duration_s}");
    let mut args = vec!["-f", "lavfi", "-i", video, "-f", "lavfi", "-i", &sine];
    args.extend_from_slice(codec_args);
    args.push(s(file));
    ffmpeg(&args);
}

/// A phone-style clip in `dir`: the lavfi `picture` with a tone as H.264 and AAC, turned 90°
/// for display by its rotate tag (which FFmpeg 5.1 makes a display matrix when
/// stream-copying).
pub fn rotated_phone_clip(dir: &Path, picture: &str, seconds: f64) -> PathBuf {
    let coded = path(dir, "coded.mp4");
    caption_testkit::media::tone_video(&coded, picture, seconds).unwrap();
    let input = path(dir, "phone.mp4");
    let tag = ["-metadata:s:v:0", "rotate=90"];
    ffmpeg(&[&["-i", s(&coded), "-c", "copy"], &tag[..], &[s(&input)]].concat());
    input
}

/// Output arguments that retime a 30 fps source: its first 30 frames at 30 fps, the rest at
/// 15 fps (variable frame rate, each frame's time kept by the muxer).
pub const VFR_30_THEN_15: &[&str] = &[
    "-vf",
    "settb=1/1000,setpts='if(lt(N,30),N*1000/30,1000+(N-30)*1000/15)/TB/1000'",
    "-fps_mode",
    "passthrough",
];

/// Each video frame's presentation time as ffprobe prints it.
pub fn frame_pts(file: &Path) -> Vec<String> {
    ffprobe(&[
        "-select_streams",
        "v:0",
        "-show_entries",
        "frame=pts_time",
        "-of",
        "csv=p=0",
        s(file),
    ])
    .lines()
    .map(str::to_owned)
    .collect()
}

pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

pub fn path(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}
