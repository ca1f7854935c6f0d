//! The captions alone on a transparent background, for editors to lay over the video on their
//! own timeline: ProRes 4444 with alpha in MOV, VP9 with alpha in WebM, or a folder of PNGs.
//!
//! The layer has the input's display size (upright: a rotated phone clip gives an upright
//! layer), each frame at one of the input's frame times (so a variable frame rate is kept) and
//! the input's length. The input's pictures are never decoded: its packets give the times.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use ffmpeg::format::Pixel;
use ffmpeg::util::color::{Primaries, Range, Space, TransferCharacteristic};
use ffmpeg::{Rational, codec, encoder, filter, frame, media};
use ffmpeg_next as ffmpeg;

use crate::burn::BurnOptions;
use crate::ff;
use crate::limits::check_picture_size;
use crate::overlay::{Overlay, OverlaySource};
use crate::{Error, Result};

/// What a caption layer is written as, chosen by the output's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LayerFormat {
    /// `.mov`: Apple ProRes 4444 with an alpha channel (`ap4h`), 10-bit 4:4:4 BT.709.
    ProRes4444,
    /// `.webm`: VP9 with an alpha channel, 4:2:0 BT.709.
    Vp9Alpha,
    /// A folder (a name without an extension): `000001.png`, `000002.png`, ... one RGBA PNG per
    /// frame, straight (not premultiplied) alpha.
    PngSequence,
}

impl LayerFormat {
    /// The format `output`'s name asks for.
    ///
    /// # Errors
    /// [`Error::UnsupportedOutput`] for any other extension.
    ///
    /// ```
    /// use std::path::Path;
    /// use caption_media::LayerFormat;
    ///
    /// assert_eq!(LayerFormat::for_output(Path::new("c.mov"))?, LayerFormat::ProRes4444);
    /// assert_eq!(LayerFormat::for_output(Path::new("c.webm"))?, LayerFormat::Vp9Alpha);
    /// assert_eq!(LayerFormat::for_output(Path::new("frames"))?, LayerFormat::PngSequence);
    /// assert!(LayerFormat::for_output(Path::new("c.mp4")).is_err());
    /// # Ok::<(), caption_media::Error>(())
    /// ```
    pub fn for_output(output: &Path) -> Result<Self> {
        let extension = output
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match extension.as_deref() {
            Some("mov") => Ok(Self::ProRes4444),
            Some("webm") => Ok(Self::Vp9Alpha),
            None => Ok(Self::PngSequence),
            Some(other) => Err(Error::UnsupportedOutput {
                path: output.to_owned(),
                reason: format!(
                    "a caption layer is written as .mov (ProRes 4444 with alpha), .webm (VP9 with \
                     alpha) or a folder of PNGs (a name without an extension), not .{other}"
                ),
            }),
        }
    }

    fn muxer(self) -> &'static str {
        match self {
            Self::ProRes4444 => "mov",
            Self::Vp9Alpha => "webm",
            Self::PngSequence => "image2",
        }
    }

    fn encoder(self) -> &'static str {
        match self {
            // FFmpeg's faster ProRes encoder (5x prores_ks here), which writes 4444 with alpha.
            Self::ProRes4444 => "prores_aw",
            Self::Vp9Alpha => "libvpx-vp9",
            Self::PngSequence => "png",
        }
    }

    fn pixel(self) -> Pixel {
        match self {
            Self::ProRes4444 => Pixel::YUVA444P10LE,
            Self::Vp9Alpha => Pixel::YUVA420P,
            Self::PngSequence => Pixel::RGBA,
        }
    }

    fn is_yuv(self) -> bool {
        self != Self::PngSequence
    }
}

/// What [`write_layer`] wrote.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LayerReport {
    /// The format written.
    pub format: LayerFormat,
    /// Frames written (the input's video frames).
    pub frames: u64,
    /// Frames on which a caption shows.
    pub frames_with_captions: u64,
    /// The layer's size, pixels (the input's display size).
    pub width: u32,
    /// The layer's size, pixels.
    pub height: u32,
    /// Wall time, seconds.
    pub elapsed_s: f64,
}

/// Writes the overlays `overlays` gives for each of `input`'s frames, alone on a transparent
/// background, into `output` ([`LayerFormat::for_output`] picks the format). Overlaid on the
/// input (`ffmpeg -i input -i layer -filter_complex overlay`), it gives what [`crate::burn`]
/// gives. Progress and cancellation come from `options` (its encoder settings are x264's and
/// do not apply). The output is written beside its final name and renamed at the end: on any
/// error, or when cancelled, nothing is left behind.
///
/// # Errors
/// As [`crate::burn`]: [`Error::NotFound`], [`Error::Unreadable`], [`Error::NoVideo`],
/// [`Error::StillImage`], [`Error::Empty`], [`Error::TooLarge`],
/// [`Error::UnsupportedOutput`] (also for [`BurnOptions::cuts`]: a layer cannot be cut),
/// [`Error::Encode`], [`Error::Io`], [`Error::Cancelled`].
pub fn write_layer(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
    overlays: &dyn OverlaySource,
    options: &BurnOptions,
) -> Result<LayerReport> {
    let started = Instant::now();
    let (input, output) = (input.as_ref(), output.as_ref());
    let format = LayerFormat::for_output(output)?;
    if !options.cuts.is_empty() {
        return Err(Error::UnsupportedOutput {
            path: output.to_owned(),
            reason: "a caption layer keeps the input's timeline, so it cannot be cut".to_owned(),
        });
    }
    let timing = FrameTimes::read(input)?;
    let partial = Partial::beside(output, format)?;
    let mut writer = LayerWriter::open(&partial.target, format, &timing)?;
    let count = timing.pts.len();
    let mut last: Option<Option<Arc<Overlay>>> = None;
    let mut picture: Option<frame::Video> = None;
    let mut with_captions = 0;
    for (i, &pts) in timing.pts.iter().enumerate() {
        if options
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            return Err(Error::Cancelled {
                path: output.to_owned(),
            });
        }
        let t_s = ff::ts_to_s(pts, timing.time_base) - timing.start_s;
        let overlay = overlays.overlay_at(t_s, timing.width, timing.height);
        with_captions += u64::from(overlay.is_some());
        let same = match (&last, &overlay) {
            (Some(None), None) => true,
            (Some(Some(a)), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        if !same || picture.is_none() {
            let rgba = straight_rgba(overlay.as_deref(), timing.width, timing.height);
            picture = Some(writer.convert(&rgba).map_err(|e| writer.err(&e))?);
        }
        last = Some(overlay);
        if let Some(picture) = &mut picture {
            let duration = timing.duration_of(i);
            writer
                .encode(picture, pts - timing.pts[0], duration)
                .map_err(|e| writer.err(&e))?;
        }
        if let Some(progress) = &options.progress {
            progress((i + 1) as f64 / count as f64);
        }
    }
    writer.finish().map_err(|e| writer.err(&e))?;
    drop(writer);
    partial.commit(output)?;
    let report = LayerReport {
        format,
        frames: count as u64,
        frames_with_captions: with_captions,
        width: timing.width,
        height: timing.height,
        elapsed_s: started.elapsed().as_secs_f64(),
    };
    tracing::info!(
        input = %input.display(),
        output = %output.display(),
        frames = report.frames,
        elapsed_s = report.elapsed_s,
        "caption layer written"
    );
    Ok(report)
}

/// The input's video frame times, read from its packets (no picture is decoded).
struct FrameTimes {
    /// Presentation times in `time_base`, sorted.
    pts: Vec<i64>,
    time_base: Rational,
    start_s: f64,
    frame_rate: Rational,
    /// Display size (after rotation).
    width: u32,
    height: u32,
}

impl FrameTimes {
    fn read(path: &Path) -> Result<Self> {
        let mut ictx = ff::open_input(path)?;
        let index = ff::best_stream(&ictx, media::Type::Video).ok_or_else(|| Error::NoVideo {
            path: path.to_owned(),
        })?;
        let (time_base, frame_rate, rotation, coded) = {
            let stream = ictx.stream(index).ok_or_else(|| Error::NoVideo {
                path: path.to_owned(),
            })?;
            if ff::is_still_image(&ictx, &stream) {
                return Err(Error::StillImage {
                    path: path.to_owned(),
                });
            }
            let parameters = stream.parameters();
            // SAFETY: reading two plain fields of the stream's codec parameters.
            let coded = unsafe { ((*parameters.as_ptr()).width, (*parameters.as_ptr()).height) };
            let rate = Some(stream.avg_frame_rate())
                .filter(|r| r.numerator() > 0 && r.denominator() > 0)
                .unwrap_or_else(|| stream.rate());
            (
                stream.time_base(),
                rate,
                ff::stream_rotation_cw_deg(&stream),
                coded,
            )
        };
        let (Ok(coded_w), Ok(coded_h)) = (u32::try_from(coded.0), u32::try_from(coded.1)) else {
            return Err(no_size(path));
        };
        if coded_w == 0 || coded_h == 0 {
            return Err(no_size(path));
        }
        check_picture_size(path, coded_w, coded_h)?;
        let (width, height) = if rotation % 180 == 90 {
            (coded_h, coded_w)
        } else {
            (coded_w, coded_h)
        };
        let start_s = ff::input_start_s(&ictx);
        let mut pts = Vec::new();
        for (stream, packet) in ictx.packets() {
            // A packet the container's edit list hides (before the video's start) is no frame.
            let discarded =
                packet.flags().bits() & ffmpeg::ffi::AV_PKT_FLAG_DISCARD as std::ffi::c_int != 0;
            if stream.index() == index
                && !discarded
                && let Some(ts) = packet.pts().or(packet.dts())
            {
                pts.push(ts);
            }
        }
        pts.sort_unstable();
        pts.dedup();
        if pts.is_empty() {
            return Err(Error::Empty {
                path: path.to_owned(),
                stream: "video",
            });
        }
        Ok(Self {
            pts,
            time_base,
            start_s,
            frame_rate,
            width,
            height,
        })
    }

    /// How long frame `i` shows, in `time_base`: to the next frame, the last one a frame
    /// period (at least one tick).
    fn duration_of(&self, i: usize) -> i64 {
        match self.pts.get(i + 1) {
            Some(next) => next - self.pts[i],
            None => {
                let tb = self.time_base;
                let rate = self.frame_rate;
                let ticks = (i64::from(tb.denominator()) * i64::from(rate.denominator()))
                    .checked_div(i64::from(tb.numerator()) * i64::from(rate.numerator()));
                ticks.unwrap_or(1).max(1)
            }
        }
    }
}

fn no_size(path: &Path) -> Error {
    Error::Unreadable {
        path: path.to_owned(),
        reason: "the video stream has no picture size".to_owned(),
    }
}

/// A full frame of straight-alpha RGBA, transparent but for `overlay` (premultiplied, clipped
/// to the frame).
fn straight_rgba(overlay: Option<&Overlay>, width: u32, height: u32) -> Vec<u8> {
    let (w, h) = (width as usize, height as usize);
    let mut out = vec![0_u8; w * h * 4];
    let Some(o) = overlay else {
        return out;
    };
    let src = o.rgba();
    for row in 0..o.height() as usize {
        let y = i64::from(o.y()) + row as i64;
        if y < 0 || y >= h as i64 {
            continue;
        }
        for col in 0..o.width() as usize {
            let x = i64::from(o.x()) + col as i64;
            if x < 0 || x >= w as i64 {
                continue;
            }
            let s = (row * o.width() as usize + col) * 4;
            let alpha = src[s + 3];
            if alpha == 0 {
                continue;
            }
            let d = (y as usize * w + x as usize) * 4;
            for c in 0..3 {
                let straight =
                    (u32::from(src[s + c]) * 255 + u32::from(alpha) / 2) / u32::from(alpha);
                out[d + c] = straight.min(255) as u8;
            }
            out[d + 3] = alpha;
        }
    }
    out
}

/// The output while it is written: a hidden file (or folder, for PNGs) beside the final name.
struct Partial {
    /// The hidden file, or the pattern of the hidden folder's PNGs.
    target: PathBuf,
    /// What is renamed at the end; removed on drop until then.
    temp: Option<tempfile::TempPath>,
    dir: Option<tempfile::TempDir>,
}

impl Partial {
    fn beside(output: &Path, format: LayerFormat) -> Result<Self> {
        let io = |source: std::io::Error| Error::Io {
            path: output.to_owned(),
            source,
        };
        let name = output
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("captions");
        let parent = output
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !parent.is_dir() {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the output folder does not exist",
            )));
        }
        let prefix = format!(".{name}.partial-");
        if format == LayerFormat::PngSequence {
            if output.exists() {
                return Err(io(std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "a PNG sequence is written into a new folder, and this one exists",
                )));
            }
            let dir = crate::partial::builder(&prefix, "", true)
                .tempdir_in(parent)
                .map_err(io)?;
            return Ok(Self {
                target: dir.path().join("%06d.png"),
                temp: None,
                dir: Some(dir),
            });
        }
        let ext = output.extension().and_then(|e| e.to_str()).unwrap_or("mov");
        let suffix = format!(".{ext}");
        let file = crate::partial::builder(&prefix, &suffix, false)
            .tempfile_in(parent)
            .map_err(io)?;
        let temp = file.into_temp_path();
        Ok(Self {
            target: temp.to_path_buf(),
            temp: Some(temp),
            dir: None,
        })
    }

    fn commit(self, output: &Path) -> Result<()> {
        let io = |source: std::io::Error| Error::Io {
            path: output.to_owned(),
            source,
        };
        if let Some(temp) = self.temp {
            temp.persist(output).map_err(|e| io(e.error))?;
        }
        if let Some(dir) = self.dir {
            // The muxer opened the pattern's own name as a file too (empty): not a frame.
            let _ = std::fs::remove_file(&self.target);
            let kept = dir.keep();
            std::fs::rename(&kept, output).map_err(|e| {
                let _ = std::fs::remove_dir_all(&kept);
                io(e)
            })?;
        }
        Ok(())
    }
}

/// The encoder and muxer, and the RGBA-to-output conversion.
struct LayerWriter {
    path: PathBuf,
    octx: ffmpeg::format::context::Output,
    encoder: encoder::Video,
    graph: Option<filter::Graph>,
    time_base: Rational,
    stream_time_base: Rational,
    width: u32,
    height: u32,
    format: LayerFormat,
}

impl LayerWriter {
    fn open(path: &Path, format: LayerFormat, timing: &FrameTimes) -> Result<Self> {
        let err = |e: &ffmpeg::Error| ff::encode_error(path, e);
        let mut octx = ffmpeg::format::output_as(path, format.muxer()).map_err(|e| err(&e))?;
        let codec = encoder::find_by_name(format.encoder()).ok_or_else(|| Error::Encode {
            path: path.to_owned(),
            reason: format!("this FFmpeg has no {} encoder", format.encoder()),
        })?;
        let global_header = octx
            .format()
            .flags()
            .contains(ffmpeg::format::Flags::GLOBAL_HEADER);
        let mut context = codec::context::Context::new_with_codec(codec)
            .encoder()
            .video()
            .map_err(|e| err(&e))?;
        // Every core: ProRes and PNG code frames in parallel, VP9 rows and tiles.
        context.set_threading(codec::threading::Config {
            kind: if format == LayerFormat::Vp9Alpha {
                codec::threading::Type::Slice
            } else {
                codec::threading::Type::Frame
            },
            count: 0,
            ..Default::default()
        });
        context.set_width(timing.width);
        context.set_height(timing.height);
        context.set_format(format.pixel());
        context.set_time_base(timing.time_base);
        context.set_frame_rate(Some(timing.frame_rate));
        if format.is_yuv() {
            context.set_colorspace(Space::BT709);
            context.set_color_range(Range::MPEG);
            // SAFETY: plain fields of the encoder context before it is opened.
            unsafe {
                (*context.as_mut_ptr()).color_primaries = Primaries::BT709.into();
                (*context.as_mut_ptr()).color_trc = TransferCharacteristic::BT709.into();
            }
        }
        if global_header {
            context.set_flags(codec::Flags::GLOBAL_HEADER);
        }
        let mut settings = ffmpeg::Dictionary::new();
        match format {
            LayerFormat::ProRes4444 => {
                // Profile 4: 4444, the one that carries alpha.
                settings.set("profile", "4");
                settings.set("vendor", "apl0");
            }
            LayerFormat::Vp9Alpha => {
                // Constant quality; text edges stay sharp at this level.
                settings.set("crf", "24");
                settings.set("b", "0");
                // The realtime preset: 2.3x as fast as good/4 on a 1080x1920 caption layer,
                // and the laid-over result still within the test's tolerance of the burn.
                settings.set("deadline", "realtime");
                settings.set("cpu-used", "8");
                settings.set("row-mt", "1");
                settings.set("auto-alt-ref", "0");
                // No look-ahead: a layer changes at word boundaries only, and frames wait
                // in memory (25 at 1080x1920 by default) for nothing.
                settings.set("lag-in-frames", "0");
                settings.set("tile-columns", "2");
            }
            LayerFormat::PngSequence => {}
        }
        let encoder = context.open_as_with(codec, settings).map_err(|e| err(&e))?;
        let mut stream = octx.add_stream(codec).map_err(|e| err(&e))?;
        stream.set_parameters(&encoder);
        stream.set_time_base(timing.time_base);
        stream.set_avg_frame_rate(timing.frame_rate);
        octx.write_header().map_err(|e| err(&e))?;
        let stream_time_base = octx.stream(0).map_or(timing.time_base, |s| s.time_base());
        let graph = if format.is_yuv() {
            Some(
                conversion_graph(timing.width, timing.height, format.pixel())
                    .map_err(|e| err(&e))?,
            )
        } else {
            None
        };
        Ok(Self {
            path: path.to_owned(),
            octx,
            encoder,
            graph,
            time_base: timing.time_base,
            stream_time_base,
            width: timing.width,
            height: timing.height,
            format,
        })
    }

    fn err(&self, e: &ffmpeg::Error) -> Error {
        ff::encode_error(&self.path, e)
    }

    /// `rgba` (straight alpha, the layer's size) as the encoder's picture.
    fn convert(&mut self, rgba: &[u8]) -> Result<frame::Video, ffmpeg::Error> {
        let mut source = frame::Video::new(Pixel::RGBA, self.width, self.height);
        let stride = source.stride(0);
        let row = self.width as usize * 4;
        for (y, line) in rgba.chunks_exact(row).enumerate() {
            source.data_mut(0)[y * stride..y * stride + row].copy_from_slice(line);
        }
        let Some(graph) = &mut self.graph else {
            return Ok(source);
        };
        source.set_pts(Some(0));
        let mut input = graph.get("in").ok_or(ffmpeg::Error::FilterNotFound)?;
        input.source().add(&source)?;
        let mut out = frame::Video::empty();
        graph
            .get("out")
            .ok_or(ffmpeg::Error::FilterNotFound)?
            .sink()
            .frame(&mut out)?;
        if self.format.is_yuv() {
            out.set_color_space(Space::BT709);
            out.set_color_range(Range::MPEG);
            out.set_color_primaries(Primaries::BT709);
            out.set_color_transfer_characteristic(TransferCharacteristic::BT709);
        }
        Ok(out)
    }

    fn encode(
        &mut self,
        picture: &mut frame::Video,
        pts: i64,
        duration: i64,
    ) -> Result<(), ffmpeg::Error> {
        picture.set_pts(Some(pts));
        // SAFETY: a plain field of the frame; the encoder copies it onto the packet.
        unsafe {
            (*picture.as_mut_ptr()).pkt_duration = duration;
        }
        self.encoder.send_frame(picture)?;
        self.drain()
    }

    fn drain(&mut self) -> Result<(), ffmpeg::Error> {
        let mut packet = ffmpeg::Packet::empty();
        while self.encoder.receive_packet(&mut packet).is_ok() {
            packet.set_stream(0);
            packet.rescale_ts(self.time_base, self.stream_time_base);
            packet.write_interleaved(&mut self.octx)?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), ffmpeg::Error> {
        self.encoder.send_eof()?;
        self.drain()?;
        self.octx.write_trailer()
    }
}

/// RGBA in, the encoder's YUV with alpha out: BT.709 limited range, as the burn's output is.
fn conversion_graph(width: u32, height: u32, to: Pixel) -> Result<filter::Graph, ffmpeg::Error> {
    let mut graph = filter::Graph::new();
    let args =
        format!("video_size={width}x{height}:pix_fmt=rgba:time_base=1/90000:pixel_aspect=1/1");
    let buffer = filter::find("buffer").ok_or(ffmpeg::Error::FilterNotFound)?;
    let sink = filter::find("buffersink").ok_or(ffmpeg::Error::FilterNotFound)?;
    graph.add(&buffer, "in", &args)?;
    graph.add(&sink, "out", "")?;
    let name = to.descriptor().map_or("yuva444p10le", |d| d.name());
    let chain = format!("scale=out_color_matrix=bt709:out_range=tv,format={name}");
    graph.output("in", 0)?.input("out", 0)?.parse(&chain)?;
    graph.validate()?;
    Ok(graph)
}
