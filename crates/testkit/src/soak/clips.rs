//! The soak's clips (espeak-ng speech over ffmpeg-made pictures, in four containers) and the
//! check of an output: ffprobe's view of it, and caption pixels on the frames where a word is
//! spoken.

use std::path::Path;

use anyhow::{Context as _, ensure};
use serde_json::Value;

use crate::media::{H264_FAST, espeak_wav, ffmpeg, run};

/// Frames per second at which sources and outputs are compared.
const COMPARE_FPS: f64 = 10.0;
/// A pixel is a caption pixel when one of its channels differs from the source's by more than
/// this: re-encoding moves the test pictures' pixels by far less (0 such pixels measured on a
/// frame without captions), drawn text and its outline by far more.
const CAPTION_DELTA: u8 = 60;
/// Share of a frame's pixels that must be caption pixels while a word is spoken: the smallest
/// seen over about 7,000 word frames of these clips in the templates below was 0.4 %, and the
/// report gives each run's smallest.
pub(crate) const MIN_CAPTION_SHARE: f64 = 0.002;
/// Words shorter than this are not checked: the 10 fps comparison may miss them.
const MIN_CHECKED_WORD_S: f64 = 0.25;

/// How one clip is made.
struct Recipe {
    name: &'static str,
    mime: &'static str,
    text: &'static str,
    picture: &'static str,
    /// FFmpeg's video codec arguments.
    video: &'static [&'static str],
    /// FFmpeg's audio encoder.
    audio: &'static str,
}

const RECIPES: &[Recipe] = &[
    Recipe {
        name: "talk.mp4",
        mime: "video/mp4",
        text: "Good morning. Thank you all for coming today.",
        picture: "testsrc2=s=320x240:r=25",
        video: H264_FAST,
        audio: "aac",
    },
    Recipe {
        name: "portrait.mov",
        mime: "video/quicktime",
        text: "The train leaves the central station at eight.",
        picture: "testsrc=s=240x320:r=24",
        video: H264_FAST,
        audio: "aac",
    },
    Recipe {
        name: "wide.webm",
        mime: "video/webm",
        text: "Please read the next page carefully.",
        picture: "testsrc2=s=320x180:r=30",
        video: &[
            "-c:v",
            "libvpx-vp9",
            "-deadline",
            "realtime",
            "-cpu-used",
            "8",
            "-b:v",
            "400k",
            "-pix_fmt",
            "yuv420p",
        ],
        audio: "libopus",
    },
    Recipe {
        name: "story.mkv",
        mime: "video/x-matroska",
        text: "It was a bright cold day in April, and the clocks were striking thirteen.",
        picture: "cellauto=s=256x144:r=25:rule=110",
        video: H264_FAST,
        audio: "libmp3lame",
    },
];

/// A clip the clients upload, with its source frames for the caption check.
#[derive(Debug)]
pub(crate) struct Clip {
    pub(crate) name: &'static str,
    pub(crate) mime: &'static str,
    /// What is said in it.
    pub(crate) text: &'static str,
    pub(crate) bytes: Vec<u8>,
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) duration_s: f64,
    /// The picture at [`COMPARE_FPS`], RGB24 frames.
    frames: Vec<Vec<u8>>,
}

/// Makes every clip in `dir`: the text spoken by espeak-ng after half a second of silence and
/// followed by half a second more, over a moving ffmpeg test picture.
pub(crate) fn make_clips(dir: &Path) -> anyhow::Result<Vec<Clip>> {
    RECIPES
        .iter()
        .map(|recipe| make_clip(dir, recipe))
        .collect()
}

fn make_clip(dir: &Path, recipe: &Recipe) -> anyhow::Result<Clip> {
    let wav = dir.join(format!("{}.wav", recipe.name));
    espeak_wav(&wav, 160, recipe.text)?;
    let path = dir.join(recipe.name);
    let mut args = vec![
        "-f",
        "lavfi",
        "-i",
        recipe.picture,
        "-i",
        utf8(&wav)?,
        "-af",
        "adelay=500:all=1,apad=pad_dur=0.5",
        "-shortest",
    ];
    args.extend_from_slice(recipe.video);
    args.extend_from_slice(&["-c:a", recipe.audio]);
    args.push(utf8(&path)?);
    ffmpeg(&args)?;
    let probe = probe(&path)?;
    let video = probe
        .video
        .with_context(|| format!("{}: no video stream", recipe.name))?;
    ensure!(
        (2.0..=6.5).contains(&probe.duration_s),
        "{} lasts {:.1} s, not 2 to 6 s",
        recipe.name,
        probe.duration_s
    );
    let frames = frames(&path, video.width, video.height)?;
    Ok(Clip {
        name: recipe.name,
        mime: recipe.mime,
        text: recipe.text,
        bytes: std::fs::read(&path)?,
        width: video.width,
        height: video.height,
        duration_s: probe.duration_s,
        frames,
    })
}

fn utf8(path: &Path) -> anyhow::Result<&str> {
    path.to_str()
        .with_context(|| format!("{} is not UTF-8", path.display()))
}

/// The streams and length ffprobe finds in a file.
#[derive(Debug)]
struct Probe {
    format: String,
    duration_s: f64,
    video: Option<VideoStream>,
    audio_codec: Option<String>,
}

#[derive(Debug)]
struct VideoStream {
    codec: String,
    width: u32,
    height: u32,
}

fn probe(path: &Path) -> anyhow::Result<Probe> {
    let out = run(
        "ffprobe",
        &[
            "-v",
            "error",
            "-show_entries",
            "format=format_name,duration:stream=codec_type,codec_name,width,height",
            "-of",
            "json",
            utf8(path)?,
        ],
    )?;
    let json: Value = serde_json::from_slice(&out).context("ffprobe's JSON")?;
    let streams = json["streams"].as_array().cloned().unwrap_or_default();
    let of_type = |kind: &str| streams.iter().find(|s| s["codec_type"] == kind).cloned();
    let dimension = |s: &Value, name: &str| {
        s[name]
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(0)
    };
    Ok(Probe {
        format: json["format"]["format_name"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        duration_s: json["format"]["duration"]
            .as_str()
            .and_then(|d| d.parse().ok())
            .unwrap_or(0.0),
        video: of_type("video").map(|s| VideoStream {
            codec: s["codec_name"].as_str().unwrap_or_default().to_owned(),
            width: dimension(&s, "width"),
            height: dimension(&s, "height"),
        }),
        audio_codec: of_type("audio")
            .map(|s| s["codec_name"].as_str().unwrap_or_default().to_owned()),
    })
}

/// Every frame of `path` at [`COMPARE_FPS`] as RGB24.
fn frames(path: &Path, width: u32, height: u32) -> anyhow::Result<Vec<Vec<u8>>> {
    let fps = format!("fps={COMPARE_FPS}");
    let raw = ffmpeg(&[
        "-i",
        utf8(path)?,
        "-vf",
        &fps,
        "-f",
        "rawvideo",
        "-pix_fmt",
        "rgb24",
        "-",
    ])?;
    let size = usize::try_from(u64::from(width) * u64::from(height) * 3)?;
    ensure!(size > 0, "{}: a picture of no pixels", path.display());
    Ok(raw.chunks_exact(size).map(<[u8]>::to_vec).collect())
}

/// What the check of a sound output saw.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CaptionCheck {
    /// Frames where a word is spoken that were compared with the source.
    pub(crate) word_frames: usize,
    /// The smallest share of caption pixels among them.
    pub(crate) least_share: f64,
}

/// Why an output failed its check.
#[derive(Debug)]
pub(crate) enum OutputFault {
    /// ffprobe finds no readable video of the source's size and length.
    Probe(String),
    /// A frame where a word is spoken shows no captions.
    Pixels(String),
}

/// Checks the output of a generate of `clip` with `words`: by ffprobe, an MP4 with an H.264
/// picture of the source's size, an audio stream and the source's length (within 0.5 s); by its
/// pixels, each word's middle frame differs from the source's by caption pixels.
pub(crate) fn check_output(
    clip: &Clip,
    output: &Path,
    words: &[Value],
) -> Result<CaptionCheck, OutputFault> {
    let probe = probe(output).map_err(|e| OutputFault::Probe(format!("{e:#}")))?;
    let problem = |what: String| Err(OutputFault::Probe(what));
    if !probe.format.contains("mp4") {
        return problem(format!("container {:?}, not MP4", probe.format));
    }
    let Some(video) = &probe.video else {
        return problem("no video stream".to_owned());
    };
    if video.codec != "h264" || (video.width, video.height) != (clip.width, clip.height) {
        return problem(format!(
            "video {} {}x{}, not h264 {}x{}",
            video.codec, video.width, video.height, clip.width, clip.height
        ));
    }
    if probe.audio_codec.is_none() {
        return problem("no audio stream".to_owned());
    }
    if (probe.duration_s - clip.duration_s).abs() > 0.5 {
        return problem(format!(
            "{:.2} s long, the source {:.2} s",
            probe.duration_s, clip.duration_s
        ));
    }
    let frames = frames(output, clip.width, clip.height)
        .map_err(|e| OutputFault::Probe(format!("{e:#}")))?;
    let pixels = f64::from(clip.width) * f64::from(clip.height);
    let mut checked = 0;
    let mut least_share = f64::INFINITY;
    let mut bare = Vec::new();
    for word in words {
        let (Some(start_s), Some(end_s)) = (word["start"].as_f64(), word["end"].as_f64()) else {
            continue;
        };
        if end_s - start_s < MIN_CHECKED_WORD_S {
            continue;
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "times of a clip of seconds"
        )]
        let index = ((start_s + end_s) / 2.0 * COMPARE_FPS).round().max(0.0) as usize;
        let (Some(source), Some(captioned)) = (clip.frames.get(index), frames.get(index)) else {
            continue;
        };
        checked += 1;
        let differing = source
            .chunks_exact(3)
            .zip(captioned.chunks_exact(3))
            .filter(|(a, b)| {
                a.iter()
                    .zip(b.iter())
                    .any(|(x, y)| x.abs_diff(*y) > CAPTION_DELTA)
            })
            .count();
        #[allow(clippy::cast_precision_loss, reason = "pixel counts of small frames")]
        let share = differing as f64 / pixels;
        least_share = least_share.min(share);
        if share < MIN_CAPTION_SHARE {
            bare.push(format!(
                "{:?} at {:.2} s: {:.2} % caption pixels",
                word["word"].as_str().unwrap_or_default(),
                (start_s + end_s) / 2.0,
                share * 100.0
            ));
        }
    }
    if checked == 0 {
        return Err(OutputFault::Pixels(
            "no word long enough to check".to_owned(),
        ));
    }
    if !bare.is_empty() {
        return Err(OutputFault::Pixels(format!(
            "frames without captions where words are spoken: {}",
            bare.join("; ")
        )));
    }
    Ok(CaptionCheck {
        word_frames: checked,
        least_share,
    })
}

/// The share of `text`'s words that `words` (a transcript's) contain, ignoring case and
/// punctuation.
pub(crate) fn heard_share(text: &str, words: &[Value]) -> f64 {
    let normal = |w: &str| -> String {
        w.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let heard: Vec<String> = words
        .iter()
        .filter_map(|w| w["word"].as_str())
        .map(normal)
        .collect();
    let said: Vec<String> = text.split_whitespace().map(normal).collect();
    let found = said.iter().filter(|w| heard.contains(w)).count();
    #[allow(clippy::cast_precision_loss, reason = "a handful of words")]
    let share = found as f64 / said.len().max(1) as f64;
    share
}
