//! Media for tests, made with Debian's `espeak-ng` and `ffmpeg`: a video whose audio is
//! spoken text, and the pixels of one of its frames.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, ensure};

/// Runs `program` with `args` and returns its standard output; fails with its standard error.
pub fn run(program: &str, args: &[&str]) -> anyhow::Result<Vec<u8>> {
    let out = Command::new(program)
        .args(args)
        .output()
        .with_context(|| format!("{program} must be installed (scripts/setup-system)"))?;
    ensure!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(out.stdout)
}

/// The duration of the media file at `path` by ffprobe, in seconds.
pub fn duration_s(path: &Path) -> anyhow::Result<f64> {
    let out = run(
        "ffprobe",
        &[
            "-v",
            "error",
            "-show_entries",
            "format=duration",
            "-of",
            "csv=p=0",
            utf8(path)?,
        ],
    )?;
    let text = String::from_utf8_lossy(&out);
    text.trim()
        .parse()
        .with_context(|| format!("ffprobe gave no duration for {}: {text:?}", path.display()))
}

fn utf8(path: &Path) -> anyhow::Result<&str> {
    path.to_str()
        .with_context(|| format!("{} is not UTF-8", path.display()))
}

/// Runs the ffmpeg CLI quietly (`-hide_banner -loglevel error -nostdin`), overwriting its
/// output (`-y`), with `args`; returns its standard output.
pub fn ffmpeg(args: &[&str]) -> anyhow::Result<Vec<u8>> {
    let mut all = vec!["-hide_banner", "-loglevel", "error", "-nostdin", "-y"];
    all.extend_from_slice(args);
    run("ffmpeg", &all)
}

/// FFmpeg's output arguments for raw RGB24 pictures on standard output.
pub const RGB24_TO_STDOUT: &[&str] = &["-f", "rawvideo", "-pix_fmt", "rgb24", "-"];

/// FFmpeg's output arguments for a small H.264 picture, quickly made.
pub const H264_FAST: &[&str] = &[
    "-c:v",
    "libx264",
    "-preset",
    "ultrafast",
    "-pix_fmt",
    "yuv420p",
];

/// An H.264/AAC MP4 at `video`, `seconds` long: the picture of ffmpeg's lavfi source `picture`
/// (for example `color=c=gray:s=320x240:r=25`) with a 440 Hz tone. Quick to make and to burn.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let video = caption_testkit::media::tone_video(
///     &dir.path().join("tone.mp4"),
///     "color=c=white:s=64x36:r=25",
///     1.0,
/// )?;
/// assert!(video.metadata()?.len() > 0);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn tone_video(video: &Path, picture: &str, seconds: f64) -> anyhow::Result<PathBuf> {
    let duration = seconds.to_string();
    let mut args = vec![
        "-f",
        "lavfi",
        "-i",
        picture,
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=440:sample_rate=16000",
        "-t",
        &duration,
    ];
    args.extend_from_slice(H264_FAST);
    args.extend_from_slice(&["-c:a", "aac", "-shortest", utf8(video)?]);
    ffmpeg(&args)?;
    Ok(video.to_owned())
}

/// Writes `text` spoken by espeak-ng's American English voice at `words_per_minute` to `wav`.
pub fn espeak_wav(wav: &Path, words_per_minute: u32, text: &str) -> anyhow::Result<()> {
    espeak_voice_wav(wav, "en-us", words_per_minute, text)
}

/// Two Spanish sentences: "The train leaves the central station at eight in the morning. My
/// brother buys bread and milk at the market."
pub const SPANISH_TEXT: &str = "El tren sale de la estación central a las ocho de la mañana. \
                                Mi hermano compra pan y leche en el mercado.";

/// Content words of [`SPANISH_TEXT`], which a transcript in Spanish has and a translation lacks.
pub const SPANISH_WORDS: &[&str] = &[
    "tren",
    "sale",
    "estación",
    "ocho",
    "mañana",
    "hermano",
    "pan",
    "leche",
    "mercado",
];

/// English words a translation of [`SPANISH_TEXT`] may give.
pub const SPANISH_TEXT_IN_ENGLISH: &[&str] = &[
    "train", "leaves", "station", "central", "eight", "morning", "brother", "buys", "bread",
    "milk", "market",
];

/// [`SPANISH_TEXT`] spoken by espeak-ng's Spanish voice at 175 words a minute.
pub fn spanish_wav(wav: &Path) -> anyhow::Result<()> {
    espeak_voice_wav(wav, "es", 175, SPANISH_TEXT)
}

/// [`espeak_wav`] in espeak-ng's `voice` (`es` for Spanish, `de`, `en-gb`, ...).
pub fn espeak_voice_wav(
    wav: &Path,
    voice: &str,
    words_per_minute: u32,
    text: &str,
) -> anyhow::Result<()> {
    let rate = words_per_minute.to_string();
    run(
        "espeak-ng",
        &["-v", voice, "-s", &rate, "-w", utf8(wav)?, text],
    )?;
    Ok(())
}

/// An H.264/AAC MP4 at `video`: the picture of ffmpeg's lavfi source `picture` (for example
/// `color=c=gray:s=640x360:r=25`), the audio `text` spoken at 140 words a minute, as long as
/// the speech.
///
/// ```
/// use caption_testkit::media::{frame_rgb_at, speech_video};
///
/// let dir = tempfile::tempdir()?;
/// let video = speech_video(&dir.path().join("talk.mp4"), "color=c=white:s=64x36:r=25", "hello")?;
/// let rgb = frame_rgb_at(&video, 0.2)?;
/// assert_eq!(rgb.len(), 64 * 36 * 3);
/// assert!(rgb.iter().all(|&channel| channel > 240), "a white picture");
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn speech_video(video: &Path, picture: &str, text: &str) -> anyhow::Result<PathBuf> {
    let wav = video.with_extension("wav");
    espeak_wav(&wav, 140, text)?;
    run(
        "ffmpeg",
        &[
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            picture,
            "-i",
            utf8(&wav)?,
            "-shortest",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
            utf8(video)?,
        ],
    )?;
    Ok(video.to_owned())
}

/// The frame a player shows at `t_s`, as packed RGB24 rows.
pub fn frame_rgb_at(video: &Path, t_s: f64) -> anyhow::Result<Vec<u8>> {
    run(
        "ffmpeg",
        &[
            "-hide_banner",
            "-loglevel",
            "error",
            "-ss",
            &format!("{t_s:.3}"),
            "-i",
            utf8(video)?,
            "-frames:v",
            "1",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgb24",
            "-",
        ],
    )
}

/// A 2-second PNG-in-MOV video with a tone at `video` whose sample description and every
/// frame's PNG header claim `side` x `side` pixels (each frame really holds 64x64): a picture
/// size a program must refuse from the header, before decoding a frame that large.
pub fn claimed_size_video(video: &Path, side: u16) -> anyhow::Result<PathBuf> {
    let small = video.with_extension("small.mov");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc2=s=64x64:r=5:d=2",
        "-f",
        "lavfi",
        "-i",
        "sine=duration=2",
        "-c:v",
        "png",
        "-c:a",
        "aac",
        "-shortest",
        utf8(&small)?,
    ])?;
    let mut bytes = std::fs::read(&small)?;
    std::fs::remove_file(&small)?;
    // The `png ` sample entry: size, type, 6 reserved bytes, a data reference index, 16 bytes
    // of version and vendor fields, then width and height as 16-bit numbers.
    let entry = bytes
        .windows(4)
        .position(|w| w == b"png ")
        .context("no png sample entry")?;
    let at = entry + 4 + 6 + 2 + 16;
    ensure!(
        bytes.get(at..at + 4) == Some(&[0, 64, 0, 64][..]),
        "unexpected sample entry"
    );
    for offset in [at, at + 2] {
        bytes[offset..offset + 2].copy_from_slice(&side.to_be_bytes());
    }
    let mut headers = 0;
    let mut from = 0;
    while let Some(found) = bytes[from..].windows(4).position(|w| w == b"IHDR") {
        let at = from + found + 4;
        let side = u32::from(side).to_be_bytes();
        bytes[at..at + 4].copy_from_slice(&side);
        bytes[at + 4..at + 8].copy_from_slice(&side);
        headers += 1;
        from = at;
    }
    ensure!(
        headers == 10,
        "{headers} PNG headers, not one for each of the 10 frames"
    );
    std::fs::write(video, bytes)?;
    Ok(video.to_owned())
}
