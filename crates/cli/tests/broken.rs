//! Bad and broken inputs through `captions transcribe` and `captions burn`, as a user meets
//! them: each fails with exit code 1 and a line `error[<code>]: ...` naming the problem (or,
//! for damage in the middle, burns over what decodes and says so in a warning), never panics,
//! and never leaves an output file, whole or partial. The corpus is made here with ffmpeg and
//! dd.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

mod support;

use support::{captions_binary, duration_s, ffmpeg, h264_fast, run};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The shared clips every broken file is cut from, made once: `indexed_last.mp4` (an MP4 as
/// a camera writes it, its index after the media), `faststart.mp4` (index first, as uploads
/// are), `matroska.mkv` (no index needed, its length in the header), each 6 s of a 320x240
/// test pattern with a tone; and the words to burn.
fn corpus() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        for (name, extra) in [
            ("indexed_last.mp4", &[][..]),
            ("faststart.mp4", &["-movflags", "+faststart"][..]),
            ("matroska.mkv", &[][..]),
        ] {
            make(
                &dir.path().join(name),
                &[
                    "testsrc2=s=320x240:r=25:d=6",
                    "sine=frequency=440:duration=6",
                ],
                &[&["-c:a", "aac", "-shortest"][..], extra].concat(),
            );
        }
        std::fs::write(
            dir.path().join("words.json"),
            r#"[{"word":"hello","punctuated_word":"Hello","start":0.2,"end":0.8},
                {"word":"world","punctuated_word":"world.","start":0.9,"end":5.5}]"#,
        )
        .unwrap();
        dir
    })
    .path()
}

/// Makes `out` with ffmpeg from lavfi `sources` (a picture, a sound), `options` and a quick
/// H.264 encoder.
fn make(out: &Path, sources: &[&str], options: &[&str]) {
    let mut args = Vec::new();
    for source in sources {
        args.extend_from_slice(&["-f", "lavfi", "-i", source]);
    }
    args.extend_from_slice(options);
    args.extend(h264_fast());
    args.push(s(out));
    ffmpeg(&args);
}

fn clip(name: &str) -> PathBuf {
    corpus().join(name)
}

/// A copy of `from` at `to`, cut to `bytes` with dd.
fn dd_cut(from: &Path, to: &Path, bytes: u64) {
    run(
        "dd",
        &[
            &format!("if={}", s(from)),
            &format!("of={}", s(to)),
            "bs=64K",
            &format!("count={bytes}"),
            "iflag=count_bytes",
            "status=none",
        ],
    );
}

/// Overwrites `len` bytes of `file` at `offset` with those of `with`, in place, with dd.
fn dd_overwrite(file: &Path, offset: u64, len: u64, with: &Path) {
    run(
        "dd",
        &[
            &format!("if={}", s(with)),
            &format!("of={}", s(file)),
            "bs=64K",
            &format!("seek={offset}"),
            &format!("count={len}"),
            "iflag=count_bytes",
            "oflag=seek_bytes",
            "conv=notrunc",
            "status=none",
        ],
    );
}

fn size(file: &Path) -> u64 {
    std::fs::metadata(file).unwrap().len()
}

/// What a command said, its peak resident memory, and the folder its output was to go to.
struct Run {
    output: Output,
    peak_rss_kib: u64,
    out_dir: tempfile::TempDir,
    out: PathBuf,
}

impl Run {
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Exit code 1 (not a panic's 101, not a signal), `error[code]` and `says` on stderr,
    /// and nothing in the output folder: no output, no partial file.
    fn failed_with(&self, code: &str, says: &str) {
        let stderr = self.stderr();
        assert_eq!(self.output.status.code(), Some(1), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(stderr.contains(&format!("error[{code}]: ")), "{stderr}");
        assert!(stderr.contains(says), "{says:?} in {stderr}");
        assert!(!self.out.exists(), "{} was written", self.out.display());
        let left: Vec<_> = std::fs::read_dir(self.out_dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }

    fn succeeded(&self) -> String {
        let stderr = self.stderr();
        assert!(self.output.status.success(), "{stderr}");
        assert!(self.out.exists(), "{stderr}");
        stderr
    }
}

/// `captions` with `args`, under GNU time for its peak memory (time passes the exit status
/// on).
fn captions(args: &[&str], out: PathBuf, out_dir: tempfile::TempDir) -> Run {
    let rss = tempfile::NamedTempFile::new().unwrap();
    let output = Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o", s(rss.path())])
        .arg(captions_binary())
        .args(args)
        .env("CAPTIONS_MODEL", "tiny.en")
        .env("CAPTIONS_THREADS", "2")
        .output()
        .expect("GNU time (scripts/system-packages.txt)");
    let report = std::fs::read_to_string(rss.path()).unwrap();
    let peak_rss_kib = report
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .next_back()
        .unwrap_or_else(|| panic!("no peak memory in {report:?}"));
    Run {
        output,
        peak_rss_kib,
        out_dir,
        out,
    }
}

fn burn(input: &Path) -> Run {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("captioned.mp4");
    let words = clip("words.json");
    let args = [
        "burn",
        s(input),
        "--words",
        s(&words),
        "--preset",
        "ultrafast",
        "-o",
        s(&out),
    ];
    captions(&args, out.clone(), out_dir)
}

fn transcribe(input: &Path) -> Run {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("words.json");
    captions(
        &["transcribe", s(input), "-o", s(&out)],
        out.clone(),
        out_dir,
    )
}

#[test]
fn a_file_cut_off_mid_way_is_truncated() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["faststart.mp4", "matroska.mkv"] {
        let cut = dir.path().join(format!("cut-{name}"));
        let whole = clip(name);
        dd_cut(&whole, &cut, size(&whole) * 3 / 4);
        let transcribed = transcribe(&cut);
        for run in [burn(&cut), transcribed] {
            run.failed_with("unreadable_input", "the file is truncated");
            assert!(run.stderr().contains("of the 6.0 s its header states"));
            if name.ends_with(".mp4") {
                // The MP4's index points past the end of the file: refused on opening, before
                // the speech model (some 150 MB with its buffers) is loaded.
                assert!(run.peak_rss_kib < 120 * 1024, "{} KiB", run.peak_rss_kib);
            }
        }
    }
}

#[test]
fn an_mp4_cut_off_before_its_moov_is_missing_its_index() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.mp4");
    let whole = clip("indexed_last.mp4");
    dd_cut(&whole, &cut, size(&whole) / 2);
    for run in [burn(&cut), transcribe(&cut)] {
        run.failed_with("unreadable_input", "(moov atom) is missing");
        assert!(run.stderr().contains("cut off before its end"));
    }
}

#[test]
fn an_mp4_whose_moov_is_overwritten_is_missing_its_index() {
    let dir = tempfile::tempdir().unwrap();
    let damaged = dir.path().join("damaged.mp4");
    std::fs::copy(clip("indexed_last.mp4"), &damaged).unwrap();
    let bytes = std::fs::read(&damaged).unwrap();
    let moov = bytes.windows(4).position(|w| w == b"moov").unwrap() as u64 - 4;
    dd_overwrite(
        &damaged,
        moov,
        size(&damaged) - moov,
        Path::new("/dev/zero"),
    );
    assert_eq!(std::fs::read(&damaged).unwrap().len(), bytes.len());
    for run in [burn(&damaged), transcribe(&damaged)] {
        run.failed_with("unreadable_input", "(moov atom) is missing");
        assert!(run.stderr().contains("overwritten"));
    }
}

/// A copy of the faststart clip in `dir` with noise in its middle.
fn with_noise_in_the_middle(dir: &Path) -> PathBuf {
    let damaged = dir.join("damaged.mp4");
    std::fs::copy(clip("faststart.mp4"), &damaged).unwrap();
    // 5 % of the file, from its middle, overwritten with noise (a fixed sequence, so that
    // every run meets the same damage).
    let len = size(&damaged) / 20;
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let noise: Vec<u8> = (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect();
    let noise_file = dir.join("noise.bin");
    std::fs::write(&noise_file, noise).unwrap();
    dd_overwrite(&damaged, size(&damaged) / 2, len, &noise_file);
    std::fs::remove_file(&noise_file).unwrap();
    damaged
}

#[test]
fn garbage_in_the_middle_is_burned_over_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let damaged = with_noise_in_the_middle(dir.path());

    let burned = burn(&damaged);
    let stderr = burned.succeeded();
    assert!(
        stderr.contains("warning: ")
            && stderr.contains("the video stream is damaged between")
            && stderr.contains("captions are burned over the frames that decoded"),
        "{stderr}"
    );
    // The picture keeps its length: the frames around the damage stand in for it.
    let duration_s = duration_s(&burned.out);
    assert!((duration_s - 6.0).abs() < 0.2, "{duration_s}");
    // What decodes of the sound is transcribed (a tone: no words).
    transcribe(&damaged).succeeded();
}

#[test]
fn batch_lists_each_failure_with_its_code_and_each_warning() {
    let videos = tempfile::tempdir().unwrap();
    with_noise_in_the_middle(videos.path());
    let whole = clip("faststart.mp4");
    dd_cut(&whole, &videos.path().join("cut.mp4"), size(&whole) * 3 / 4);
    let out = tempfile::tempdir().unwrap();
    let output = Command::new(captions_binary())
        .args(["batch", s(videos.path()), "--out", s(out.path())])
        .env("CAPTIONS_MODEL", "tiny.en")
        .env("CAPTIONS_THREADS", "2")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("2 videos: 1 captioned"), "{stderr}");
    let cut = videos.path().join("cut.mp4");
    assert!(
        stderr.contains(&format!(
            "error[unreadable_input]: {}: the file is truncated",
            cut.display()
        )),
        "{stderr}"
    );
    assert_eq!(stderr.matches("cut.mp4").count(), 1, "said once: {stderr}");
    assert!(
        stderr.contains("warning: ") && stderr.contains("damaged.mp4: the video stream is damaged"),
        "{stderr}"
    );
    assert!(out.path().join("damaged.mp4").is_file());
    assert!(!out.path().join("cut.mp4").exists());
}

#[test]
fn an_audio_track_without_samples_has_no_audio_to_transcribe_and_burns_silent() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("silent-track.mkv");
    make(
        &input,
        &["testsrc2=s=320x240:r=25:d=3", "anullsrc=r=48000:cl=mono"],
        &[
            "-map",
            "0:v",
            "-map",
            "1:a",
            "-af",
            "atrim=end_sample=0",
            "-c:a",
            "aac",
        ],
    );
    let streams = run(
        "ffprobe",
        &[
            "-v",
            "error",
            "-show_entries",
            "stream=codec_type",
            "-of",
            "csv=p=0",
            s(&input),
        ],
    );
    assert_eq!(String::from_utf8_lossy(&streams).trim(), "video\naudio");

    transcribe(&input).failed_with("no_audio", "the audio stream is empty (no samples");
    let stderr = burn(&input).succeeded();
    assert!(
        stderr.contains("warning: ")
            && stderr.contains("the audio stream is empty (no samples): the output is silent"),
        "{stderr}"
    );
}

#[test]
fn a_zero_second_input_has_nothing_to_burn_or_transcribe() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("zero.mp4");
    // Fragmented, so that the tracks are written though they hold nothing.
    make(
        &input,
        &["testsrc2=s=320x240:r=25", "sine"],
        &[
            "-t",
            "0",
            "-c:a",
            "aac",
            "-movflags",
            "frag_keyframe+empty_moov",
        ],
    );
    burn(&input).failed_with(
        "no_video",
        "the video stream is empty (no frames: a 0-second",
    );
    transcribe(&input).failed_with(
        "no_audio",
        "the audio stream is empty (no samples: a 0-second",
    );
}

#[test]
fn an_empty_file_is_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("empty.mp4");
    std::fs::write(&input, b"").unwrap();
    for run in [burn(&input), transcribe(&input)] {
        run.failed_with("unreadable_input", "the file is empty (0 bytes)");
    }
}

#[test]
fn images_renamed_mp4_are_not_videos() {
    let dir = tempfile::tempdir().unwrap();
    for ext in ["png", "jpg"] {
        let image = dir.path().join(format!("photo.{ext}"));
        let args = [
            "-f",
            "lavfi",
            "-i",
            "testsrc2=s=320x240",
            "-frames:v",
            "1",
            s(&image),
        ];
        ffmpeg(&args);
        let renamed = dir.path().join(format!("photo-{ext}.mp4"));
        std::fs::rename(&image, &renamed).unwrap();
        burn(&renamed).failed_with("not_a_video", "is a still image, not a video");
        transcribe(&renamed).failed_with("no_audio", "has no audio stream");
    }
}

#[test]
fn a_16k_header_is_refused_before_a_frame_is_decoded() {
    // A PNG-in-MOV video whose headers claim 16384x16384: a frame of that size would be
    // 805 MB of RGB (FFmpeg itself refuses to allocate one).
    let dir = tempfile::tempdir().unwrap();
    let mov =
        caption_testkit::media::claimed_size_video(&dir.path().join("huge.mp4"), 16_384).unwrap();
    // A raw YUV4MPEG2 stream whose header claims as much, then one frame's worth of nothing.
    let raw = dir.path().join("huge.y4m");
    let mut y4m = b"YUV4MPEG2 W16384 H16384 F25:1 Ip A1:1 C420jpeg\nFRAME\n".to_vec();
    y4m.resize(y4m.len() + 65_536, 0);
    std::fs::write(&raw, y4m).unwrap();
    let runs = [burn(&mov), transcribe(&mov), burn(&raw), transcribe(&raw)];
    for run in runs {
        run.failed_with(
            "input_too_large",
            "the picture is 16384x16384, over the limit",
        );
        // Refused from the header: the process never held anything near one such frame.
        assert!(
            run.peak_rss_kib < 300 * 1024,
            "peak RSS {} KiB",
            run.peak_rss_kib
        );
    }
}

#[test]
fn large_cover_art_does_not_stop_a_transcription() {
    // An MP3 whose cover art is 6400x6400 (over the limit of a video frame): the picture is
    // not a video, and the transcription does not need it.
    let dir = tempfile::tempdir().unwrap();
    let cover = dir.path().join("cover.jpg");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "color=c=red:s=6400x6400",
        "-frames:v",
        "1",
        s(&cover),
    ]);
    let song = dir.path().join("song.mp3");
    let args = [
        "-f",
        "lavfi",
        "-i",
        "sine=duration=3",
        "-i",
        s(&cover),
        "-map",
        "0",
        "-map",
        "1",
        "-c:a",
        "libmp3lame",
        "-c:v",
        "copy",
        "-disposition:v",
        "attached_pic",
        s(&song),
    ];
    ffmpeg(&args);
    transcribe(&song).succeeded();
    burn(&song).failed_with("not_a_video", "is a still image, not a video");
}

/// A burn's memory does not grow with the input's length: the peak resident memory of a
/// 5-minute burn stays within a few MB of a 10-second one's. (Were decoded frames kept, the
/// 7,500 frames of 160x96 would add 170 MB.) The hour-long run is `scripts/bench-long-input`.
#[test]
fn a_long_input_burns_in_flat_memory() {
    let dir = tempfile::tempdir().unwrap();
    let long = dir.path().join("long.mp4");
    make(
        &long,
        &[
            "testsrc2=s=160x96:r=25:d=300",
            "sine=frequency=440:duration=300",
        ],
        &["-c:a", "aac", "-b:a", "32k", "-shortest"],
    );
    let short = dir.path().join("short.mp4");
    ffmpeg(&["-i", s(&long), "-t", "10", "-c", "copy", s(&short)]);

    let peak = |input: &Path| {
        let run = burn(input);
        run.succeeded();
        run.peak_rss_kib
    };
    let short_kib = peak(&short);
    let long_kib = peak(&long);
    assert!(
        long_kib < short_kib + 24 * 1024,
        "peak RSS {short_kib} KiB for 10 s, {long_kib} KiB for 300 s"
    );
}
