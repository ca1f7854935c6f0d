//! The output plays everywhere: whatever the input (10-bit HLG and PQ HEVC, 4:2:2 ProRes, an
//! odd-sized 4:4:4 H.264, variable frame rate, a rotated phone clip), a burn gives H.264
//! High, 8-bit 4:2:0, BT.709 limited range, even-sized, `faststart`, with audio; HDR is
//! tone-mapped like FFmpeg's own zscale + tonemap filters do it, and kept (HEVC 10-bit, the
//! input's tags) on request. ffprobe and the ffmpeg CLI check the outputs: independent tools.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use caption_media::{BurnOptions, Overlay, OverlaySource, burn, probe};
use common::{
    VFR_30_THEN_15, clip_with_tone, ffprobe, frame_pts, path, rotated_phone_clip, s, tmp,
};

/// Colours of the caption box's two halves, opaque: white text and a purple box.
const WHITE: [u8; 3] = [255, 255, 255];
const PURPLE: [u8; 3] = [150, 40, 200];

/// The same tone mapping the output's is checked against (FFmpeg's documented chain).
const REFERENCE_TONE_MAP: &str = "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,\
     tonemap=tonemap=hable:desat=0,zscale=t=bt709:m=bt709:r=tv,format=yuv420p";

/// A caption box over the middle band of the display during [1.0, 2.0) s: its left half
/// white, its right half purple.
struct Caption;

impl Caption {
    fn rect(w: u32, h: u32) -> (u32, u32, u32, u32) {
        (w / 4, h / 2, (w / 2).max(16) & !1, (h / 8).max(16))
    }
}

impl OverlaySource for Caption {
    fn overlay_at(&self, t_s: f64, w: u32, h: u32) -> Option<Arc<Overlay>> {
        if !(1.0..2.0).contains(&t_s) {
            return None;
        }
        let (x, y, bw, bh) = Self::rect(w, h);
        let mut rgba = Vec::with_capacity((bw * bh * 4) as usize);
        for _ in 0..bh {
            for col in 0..bw {
                let [r, g, b] = if col < bw / 2 { WHITE } else { PURPLE };
                rgba.extend_from_slice(&[r, g, b, 255]);
            }
        }
        Some(Arc::new(
            Overlay::new(x as i32, y as i32, bw, bh, rgba).unwrap(),
        ))
    }
}

/// ffprobe's `key=value` lines for the stream `select` picks (display rotation included).
fn stream_fields(file: &Path, select: &str) -> HashMap<String, String> {
    ffprobe(&[
        "-select_streams",
        select,
        "-show_entries",
        "stream=codec_name,codec_tag_string,profile,pix_fmt,bits_per_raw_sample,width,height,\
         color_space,color_transfer,color_primaries,color_range:stream_side_data=rotation",
        "-of",
        "default=nw=1",
        s(file),
    ])
    .lines()
    .filter_map(|l| l.split_once('='))
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

/// The display size ffprobe reports: coded size, turned by the display matrix.
fn display_size(fields: &HashMap<String, String>) -> (u32, u32) {
    let w: u32 = fields["width"].parse().unwrap();
    let h: u32 = fields["height"].parse().unwrap();
    let rotation: i32 = fields.get("rotation").map_or(0, |r| r.parse().unwrap());
    if rotation.rem_euclid(180) == 90 {
        (h, w)
    } else {
        (w, h)
    }
}

/// Raw pictures of the frame shown at `t_s`, decoded (and rotated for display) by the ffmpeg
/// CLI, through `filter` first when given, as `pix_fmt`.
fn frame_at(file: &Path, t_s: f64, filter: Option<&str>, pix_fmt: &str) -> Vec<u8> {
    let t = format!("{t_s}");
    let mut args = vec!["-ss", &t, "-i", s(file)];
    if let Some(filter) = filter {
        args.extend(["-vf", filter]);
    }
    args.extend(["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", pix_fmt, "-"]);
    caption_testkit::media::ffmpeg(&args).unwrap()
}

/// Mean luma code value of a yuv420p frame `w` x `h` (its Y plane).
fn mean_luma(yuv: &[u8], w: u32, h: u32) -> f64 {
    let plane = &yuv[..(w * h) as usize];
    plane.iter().map(|&v| f64::from(v)).sum::<f64>() / plane.len() as f64
}

/// Mean RGB of the rectangle (x, y, w, h) of an RGB24 frame `width` pixels wide.
fn mean_rgb(rgb: &[u8], width: u32, (x, y, w, h): (u32, u32, u32, u32)) -> [f64; 3] {
    let mut sum = [0.0; 3];
    for yy in y..y + h {
        for xx in x..x + w {
            let i = ((yy * width + xx) * 3) as usize;
            for (c, total) in sum.iter_mut().enumerate() {
                *total += f64::from(rgb[i + c]);
            }
        }
    }
    sum.map(|v| v / f64::from(w * h))
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// The top-level MP4 boxes' types, in file order.
fn mp4_boxes(file: &Path) -> Vec<String> {
    let bytes = std::fs::read(file).unwrap();
    let mut boxes = Vec::new();
    let mut at = 0_usize;
    while at + 8 <= bytes.len() {
        let size = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        boxes.push(String::from_utf8_lossy(&bytes[at + 4..at + 8]).into_owned());
        let size = if size == 1 {
            u64::from_be_bytes(bytes[at + 8..at + 16].try_into().unwrap()) as usize
        } else {
            size
        };
        if size < 8 {
            break;
        }
        at += size;
    }
    boxes
}

/// Burns `input` with [`Caption`] into an MP4 and checks what every default output must be:
/// H.264 High, yuv420p 8-bit, BT.709 limited-range tags, the input's display size within a
/// pixel, `moov` before `mdat`, AAC or copied audio, and the caption's colours in its pixels.
/// Returns the output and its display size.
fn burn_and_check(dir: &Path, input: &Path) -> (std::path::PathBuf, u32, u32) {
    let output = path(dir, "out.mp4");
    let before = probe(input).unwrap().video.unwrap();
    // The default preset (veryfast): ultrafast would make Constrained Baseline.
    burn(input, &output, &Caption, &BurnOptions::default()).unwrap();
    let v = stream_fields(&output, "v:0");
    let expect = [
        ("codec_name", "h264"),
        ("profile", "High"),
        ("pix_fmt", "yuv420p"),
        ("bits_per_raw_sample", "8"),
        ("color_space", "bt709"),
        ("color_transfer", "bt709"),
        ("color_primaries", "bt709"),
        ("color_range", "tv"),
    ];
    for (key, want) in expect {
        assert_eq!(
            v.get(key).map(String::as_str),
            Some(want),
            "{input:?}: {key} in {v:?}"
        );
    }
    let (w, h) = display_size(&v);
    assert!(
        before.display_width.abs_diff(w) <= 1 && before.display_height.abs_diff(h) <= 1,
        "{input:?}: display {}x{} became {w}x{h}",
        before.display_width,
        before.display_height
    );
    assert!(w % 2 == 0 && h % 2 == 0, "{input:?}: {w}x{h} is not even");
    let a = stream_fields(&output, "a:0");
    assert!(
        a.get("codec_name").is_some_and(|c| !c.is_empty()),
        "{input:?}: no audio in the output"
    );
    let boxes = mp4_boxes(&output);
    let moov = boxes.iter().position(|b| b == "moov");
    let mdat = boxes.iter().position(|b| b == "mdat");
    assert!(
        moov.is_some() && mdat.is_some() && moov < mdat,
        "{input:?}: not faststart: {boxes:?}"
    );
    // The caption, in the output's pixels as ffmpeg decodes them for display.
    let rgb = frame_at(&output, 1.5, None, "rgb24");
    assert_eq!(
        rgb.len(),
        (w * h * 3) as usize,
        "{input:?}: decoded frame size"
    );
    let (x, y, bw, bh) = Caption::rect(w, h);
    let white = mean_rgb(&rgb, w, (x + bw / 8, y + bh / 4, bw / 4, bh / 2));
    let purple = mean_rgb(&rgb, w, (x + bw * 5 / 8, y + bh / 4, bw / 4, bh / 2));
    assert!(
        distance(white, WHITE.map(f64::from)) < 6.0,
        "{input:?}: white text came out {white:?}"
    );
    assert!(
        distance(purple, PURPLE.map(f64::from)) < 10.0,
        "{input:?}: purple box came out {purple:?}"
    );
    (output, w, h)
}

/// The frame at 0.5 s (before the caption) of the output against the input's, both decoded
/// for display by ffmpeg: the conversion to BT.709 must not shift the picture's colours.
fn assert_picture_kept(input: &Path, output: &Path, w: u32, h: u32) {
    let ours = frame_at(output, 0.5, None, "rgb24");
    // The input at the output's (even) size: the crop takes the last row or column.
    let crop = format!("crop={w}:{h}:0:0");
    let theirs = frame_at(input, 0.5, Some(&crop), "rgb24");
    let (ours, theirs) = (
        mean_rgb(&ours, w, (0, 0, w, h)),
        mean_rgb(&theirs, w, (0, 0, w, h)),
    );
    assert!(
        distance(ours, theirs) < 3.0,
        "{input:?}: picture changed colour: {theirs:?} -> {ours:?}"
    );
}

/// A 10-bit BT.2020 HEVC clip with `transfer` (`arib-std-b67` or `smpte2084`) and AAC sound.
/// Mandelbrot's picture (dark field, bright detail) is where tone mapping shows: shown as
/// SDR without it, its mean luma is 40 % above the tone-mapped one.
fn hdr_clip(file: &Path, transfer: &str) {
    let codecs = [
        "-pix_fmt",
        "yuv420p10le",
        "-c:v",
        "libx265",
        "-preset",
        "ultrafast",
        "-x265-params",
        "log-level=error",
        "-color_primaries",
        "bt2020",
        "-color_trc",
        transfer,
        "-colorspace",
        "bt2020nc",
        "-c:a",
        "aac",
    ];
    clip_with_tone(
        file,
        "mandelbrot=size=640x360:rate=30,trim=duration=2.5",
        2.5,
        &codecs,
    );
}

/// The HDR input's tone mapping against FFmpeg's: mean luma of the frame at 0.5 s within 10 %.
fn assert_tone_mapped_like_ffmpeg(input: &Path, output: &Path, w: u32, h: u32) -> f64 {
    let ours = mean_luma(&frame_at(output, 0.5, None, "yuv420p"), w, h);
    let reference = mean_luma(
        &frame_at(input, 0.5, Some(REFERENCE_TONE_MAP), "yuv420p"),
        w,
        h,
    );
    let ratio = ours / reference;
    eprintln!("{input:?}: mean luma ours {ours:.2}, reference {reference:.2}, ratio {ratio:.4}");
    assert!(
        (ratio - 1.0).abs() <= 0.10,
        "{input:?}: mean luma {ours:.1} against ffmpeg's tone mapping {reference:.1}"
    );
    ratio
}

/// An HDR clip with `transfer` burned with the defaults: checked, and tone-mapped like FFmpeg.
fn burn_hdr_clip(transfer: &str) {
    let dir = tmp();
    let input = path(dir.path(), &format!("{transfer}.mp4"));
    hdr_clip(&input, transfer);
    let (output, w, h) = burn_and_check(dir.path(), &input);
    assert_tone_mapped_like_ffmpeg(&input, &output, w, h);
}

#[test]
fn hlg_hevc_is_tone_mapped_to_sdr_h264() {
    burn_hdr_clip("arib-std-b67");
}

#[test]
fn pq_hevc_is_tone_mapped_to_sdr_h264() {
    burn_hdr_clip("smpte2084");
}

#[test]
fn keep_hdr_gives_hevc_10_bit_with_the_inputs_colour_tags() {
    let dir = tmp();
    // White text's 8-bit signal at graphics white (ITU-R BT.2408): 75 % for HLG, 203 cd/m²
    // (0.58) for PQ. Blended as SDR code values it would be 255: PQ's 10,000 cd/m² peak.
    for (transfer, white_signal) in [("arib-std-b67", 191.0), ("smpte2084", 148.0)] {
        let input = path(dir.path(), &format!("{transfer}.mp4"));
        hdr_clip(&input, transfer);
        let output = path(dir.path(), &format!("{transfer}-kept.mp4"));
        burn(
            &input,
            &output,
            &Caption,
            &BurnOptions::default()
                .with_preset("ultrafast")
                .with_keep_hdr(true),
        )
        .unwrap();
        let v = stream_fields(&output, "v:0");
        let expect = [
            ("codec_name", "hevc"),
            ("codec_tag_string", "hvc1"),
            ("profile", "Main 10"),
            ("pix_fmt", "yuv420p10le"),
            ("color_space", "bt2020nc"),
            ("color_transfer", transfer),
            ("color_primaries", "bt2020"),
            ("width", "640"),
            ("height", "360"),
        ];
        for (key, want) in expect {
            assert_eq!(v.get(key).map(String::as_str), Some(want), "{key} in {v:?}");
        }
        assert!(stream_fields(&output, "a:0").contains_key("codec_name"));
        let raw = frame_at(&output, 1.5, None, "yuv420p10le");
        let (x, y, bw, bh) = Caption::rect(640, 360);
        let luma = |col: u32, row: u32| {
            let i = ((row * 640 + col) * 2) as usize;
            f64::from(u16::from_le_bytes([raw[i], raw[i + 1]]))
        };
        let (cols, rows) = (x + bw / 8..x + bw * 3 / 8, y + bh / 4..y + bh * 3 / 4);
        let count = f64::from(cols.len() as u32 * rows.len() as u32);
        let white: f64 = rows
            .flat_map(|row| cols.clone().map(move |col| (col, row)))
            .map(|(col, row)| luma(col, row))
            .sum::<f64>()
            / count;
        // Limited range, 10 bits: 64 is black, 940 is a signal of 1.
        let want = 64.0 + 876.0 * white_signal / 255.0;
        assert!(
            (white - want).abs() < 8.0,
            "{transfer}: white text's luma is {white:.1}, want {want:.1}"
        );
    }
}

#[test]
fn prores_422_becomes_420_8_bit() {
    let dir = tmp();
    let input = path(dir.path(), "prores.mov");
    let codecs = [
        "-c:v",
        "prores_ks",
        "-profile:v",
        "2",
        "-pix_fmt",
        "yuv422p10le",
        "-colorspace",
        "bt709",
        "-color_primaries",
        "bt709",
        "-color_trc",
        "bt709",
        "-c:a",
        "pcm_s16le",
    ];
    clip_with_tone(
        &input,
        "testsrc2=size=640x360:rate=25:duration=2.5",
        2.5,
        &codecs,
    );
    let (output, w, h) = burn_and_check(dir.path(), &input);
    assert_picture_kept(&input, &output, w, h);
}

/// libx264 at its fastest, as 4:4:4 (`yuv444p`) or 4:2:2 (`yuv422p`), with AAC.
fn x264_as(pix_fmt: &str) -> [&str; 8] {
    [
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        pix_fmt,
        "-c:a",
        "aac",
    ]
}

#[test]
fn odd_721x1281_444_h264_is_cropped_to_720x1280_420() {
    let dir = tmp();
    let input = path(dir.path(), "odd.mp4");
    // libx264 codes an odd size only as 4:4:4.
    let video = "testsrc2=size=721x1281:rate=30:duration=2.5";
    clip_with_tone(&input, video, 2.5, &x264_as("yuv444p"));
    let (output, w, h) = burn_and_check(dir.path(), &input);
    assert_eq!((w, h), (720, 1280));
    assert_picture_kept(&input, &output, w, h);
}

#[test]
fn variable_frame_rate_keeps_its_timestamps() {
    let dir = tmp();
    let input = path(dir.path(), "vfr.mp4");
    // 30 frames at 30 fps, then 15 fps; 4:2:2, so every frame goes through the conversion.
    let codecs = [VFR_30_THEN_15, &["-frames:v", "53"], &x264_as("yuv422p")].concat();
    clip_with_tone(
        &input,
        "testsrc2=size=320x240:rate=30:duration=2.5",
        2.5,
        &codecs,
    );
    let (output, _, _) = burn_and_check(dir.path(), &input);
    let (a, b) = (frame_pts(&input), frame_pts(&output));
    assert!(a.len() >= 50, "{} frames", a.len());
    assert_eq!(a, b);
}

#[test]
fn rotated_phone_clip_keeps_its_display_size_and_gets_the_caption_upright() {
    let dir = tmp();
    // Untagged 360-line video is BT.601 to players, so the output's BT.709 is a real
    // conversion, which `assert_picture_kept` checks.
    let video = "testsrc2=size=640x360:rate=30:duration=2.5";
    let input = rotated_phone_clip(dir.path(), video, 2.5);
    // `burn_and_check` finds the two-coloured caption where a display-upright one must be.
    let (output, w, h) = burn_and_check(dir.path(), &input);
    assert_eq!((w, h), (360, 640));
    assert_picture_kept(&input, &output, w, h);
}
