#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use caption_media::{AUDIO_SAMPLE_RATE_HZ, AudioReader, Error, decode_audio_16k_mono, probe};
use common::{ffmpeg, path, s, tmp};

/// Rising zero crossings per second over the middle of the signal: the frequency of a sine.
fn frequency_hz(samples: &[f32]) -> f64 {
    let start = samples.len() / 4;
    let end = samples.len() * 3 / 4;
    let window = &samples[start..end];
    let rising = window
        .windows(2)
        .filter(|w| w[0] < 0.0 && w[1] >= 0.0)
        .count();
    rising as f64 * f64::from(AUDIO_SAMPLE_RATE_HZ) / window.len() as f64
}

#[test]
fn sine_in_mp4_aac_stereo_48k_decodes_to_16k_mono_with_its_length_and_pitch() {
    let dir = tmp();
    let input = path(dir.path(), "sine.mp4");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=440:sample_rate=48000:duration=3",
        "-ac",
        "2",
        "-c:a",
        "aac",
        "-b:a",
        "128k",
        s(&input),
    ]);
    let samples = decode_audio_16k_mono(&input).unwrap();
    let seconds = samples.len() as f64 / 16_000.0;
    assert!((seconds - 3.0).abs() < 0.03, "decoded {seconds} s");
    let hz = frequency_hz(&samples);
    assert!((hz - 440.0).abs() < 2.0, "measured {hz} Hz");
    let peak = samples.iter().fold(0.0_f32, |m, x| m.max(x.abs()));
    assert!(peak > 0.05 && peak <= 1.0, "peak {peak}");
}

#[test]
fn wav_mkv_opus_and_mp3_all_decode_with_the_right_pitch() {
    let dir = tmp();
    let cases = [
        ("a.wav", vec!["-c:a", "pcm_s16le", "-ar", "44100"]),
        ("a.mkv", vec!["-c:a", "libopus", "-b:a", "64k"]),
        ("a.mp3", vec!["-c:a", "libmp3lame", "-ar", "22050"]),
    ];
    for (name, codec) in cases {
        let file = path(dir.path(), name);
        let mut args = vec![
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=1000:sample_rate=48000:duration=2",
        ];
        args.extend(codec);
        args.push(s(&file));
        ffmpeg(&args);
        let samples = decode_audio_16k_mono(&file).unwrap();
        let seconds = samples.len() as f64 / 16_000.0;
        assert!((seconds - 2.0).abs() < 0.06, "{name}: decoded {seconds} s");
        let hz = frequency_hz(&samples);
        assert!((hz - 1000.0).abs() < 3.0, "{name}: measured {hz} Hz");
    }
}

#[test]
fn streamed_chunks_add_up_to_the_whole() {
    let dir = tmp();
    let input = path(dir.path(), "speechlike.mka");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=300:duration=5",
        "-c:a",
        "libopus",
        s(&input),
    ]);
    let mut reader = AudioReader::open(&input).unwrap();
    assert!((reader.duration_s() - 5.0).abs() < 0.1);
    let mut chunks = 0;
    let mut total = 0;
    while let Some(chunk) = reader.next_chunk().unwrap() {
        chunks += 1;
        total += chunk.len();
    }
    assert!(chunks > 10, "expected streaming, got {chunks} chunks");
    assert_eq!(total as u64, reader.samples_read());
    assert_eq!(total, decode_audio_16k_mono(&input).unwrap().len());
}

#[test]
fn video_without_audio_is_no_audio() {
    let dir = tmp();
    let input = path(dir.path(), "silent.mp4");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=160x120:rate=10:duration=1",
        "-c:v",
        "libx264",
        s(&input),
    ]);
    let err = decode_audio_16k_mono(&input).unwrap_err();
    assert!(
        matches!(err, Error::NoAudio { ref path } if path == &input),
        "{err:?}"
    );
    assert!(err.to_string().contains("silent.mp4"));
}

#[test]
fn garbage_and_truncated_files_are_unreadable_and_missing_ones_not_found() {
    let dir = tmp();
    let garbage = path(dir.path(), "garbage.mp4");
    std::fs::write(&garbage, vec![0x5a_u8; 64 * 1024]).unwrap();
    let missing = path(dir.path(), "missing.wav");
    let whole = path(dir.path(), "whole.m4a");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "sine=duration=4",
        "-c:a",
        "aac",
        s(&whole),
    ]);
    let bytes = std::fs::read(&whole).unwrap();
    let truncated = path(dir.path(), "truncated.m4a");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    for file in [&garbage, &truncated] {
        let err = decode_audio_16k_mono(file).unwrap_err();
        assert!(
            matches!(err, Error::Unreadable { ref path, .. } if path == file),
            "{file:?}: {err:?}"
        );
        assert!(matches!(probe(file), Err(Error::Unreadable { .. })));
    }
    // A missing file is said to be missing, not unreadable.
    let err = decode_audio_16k_mono(&missing).unwrap_err();
    assert!(
        matches!(err, Error::NotFound { ref path } if path == &missing),
        "{err:?}"
    );
    assert!(matches!(probe(&missing), Err(Error::NotFound { .. })));
}

#[test]
fn probe_reports_streams_rotation_and_duration() {
    let dir = tmp();
    let upright = path(dir.path(), "upright.mp4");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=320x180:rate=30:duration=2",
        "-f",
        "lavfi",
        "-i",
        "sine=sample_rate=44100:duration=2",
        "-c:v",
        "libx264",
        "-pix_fmt",
        "yuv420p",
        "-c:a",
        "aac",
        "-ac",
        "2",
        "-shortest",
        s(&upright),
    ]);
    // FFmpeg 5.1 writes the rotate tag as a display matrix only when stream-copying.
    let input = path(dir.path(), "phone.mp4");
    ffmpeg(&[
        "-i",
        s(&upright),
        "-c",
        "copy",
        "-metadata:s:v:0",
        "rotate=90",
        s(&input),
    ]);
    let info = probe(&input).unwrap();
    assert!((info.duration_s - 2.0).abs() < 0.1, "{info:?}");
    let video = info.video.unwrap();
    assert_eq!((video.width, video.height), (320, 180));
    assert_eq!(video.rotation_cw_deg % 180, 90, "{video:?}");
    assert_eq!((video.display_width, video.display_height), (180, 320));
    assert!((video.frame_rate_fps - 30.0).abs() < 0.01);
    assert_eq!(video.pixel_format, "yuv420p");
    assert_eq!(video.codec, "h264");
    assert!(!video.is_still_image);
    let audio = info.audio.unwrap();
    assert_eq!(
        (audio.codec.as_str(), audio.sample_rate_hz, audio.channels),
        ("aac", 44_100, 2)
    );
}

#[test]
fn probe_flags_a_still_image() {
    let dir = tmp();
    let image = path(dir.path(), "frame.png");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=64x48",
        "-frames:v",
        "1",
        s(&image),
    ]);
    let info = probe(&image).unwrap();
    assert!(info.video.unwrap().is_still_image);
    assert!(info.audio.is_none());
}
