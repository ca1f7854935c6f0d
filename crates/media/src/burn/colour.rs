//! The output's picture: which format, size and colour every decoded frame is turned into
//! before captions are blended in, and the libavfilter graph that does it.
//!
//! By default the output is what every phone, browser and editor plays: 8-bit 4:2:0 BT.709
//! (limited range), even-sized. HDR inputs (PQ or HLG) are tone-mapped to SDR on the way, so
//! captions are blended into, and keep their colours in, the picture the viewer sees. With
//! [`BurnOptions::keep_hdr`](super::BurnOptions::keep_hdr) an HDR input stays HDR: 10-bit
//! 4:2:0 with its own colour tags, for HEVC.

use std::path::Path;

use ffmpeg::color::{Primaries, Range, Space, TransferCharacteristic};
use ffmpeg::format::Pixel;
use ffmpeg::{filter, frame};
use ffmpeg_next as ffmpeg;

use crate::blend::YuvMatrix;
use crate::{Error, Result};

/// The HDR to SDR chain: PQ or HLG to linear light (a nominal peak of 100 cd/m² for SDR
/// white), BT.2020 to BT.709 primaries, Hable's curve (desaturation off, so saturated
/// highlights keep their hue), back to BT.709 gamma, matrix and limited range. It is the
/// chain FFmpeg's documentation gives for zscale and tonemap, and the one the tests use as
/// the reference; Hable was picked over Mobius and Reinhard because its toe keeps shadow
/// detail and it rolls highlights off without the flat grey Reinhard gives at this peak.
const TONE_MAP: &str = "t=linear:npl=100,format=gbrpf32le,zscale=p=709,\
                        tonemap=tonemap=hable:desat=0,zscale=t=709:m=709:r=tv";

/// Whether a transfer characteristic is an HDR one (PQ or HLG).
pub(super) fn is_hdr(transfer: TransferCharacteristic) -> bool {
    matches!(
        transfer,
        TransferCharacteristic::SMPTE2084 | TransferCharacteristic::ARIB_STD_B67
    )
}

/// What a decoded frame is, as far as turning it into the output's picture goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Picture {
    format: Pixel,
    width: u32,
    height: u32,
    space: Space,
    primaries: Primaries,
    transfer: TransferCharacteristic,
    range: Range,
}

impl Picture {
    fn of(frame: &frame::Video) -> Self {
        let full = matches!(
            frame.format(),
            Pixel::YUVJ420P | Pixel::YUVJ422P | Pixel::YUVJ444P
        );
        Self {
            format: frame.format(),
            width: frame.width(),
            height: frame.height(),
            space: frame.color_space(),
            primaries: frame.color_primaries(),
            transfer: frame.color_transfer_characteristic(),
            range: if full {
                Range::JPEG
            } else {
                frame.color_range()
            },
        }
    }

    fn odd(&self) -> bool {
        self.width % 2 == 1 || self.height % 2 == 1
    }

    fn is_rgb(&self) -> bool {
        self.format.descriptor().is_some_and(|d| {
            // SAFETY: a descriptor points at libavutil's static table; reading its flags.
            let flags = unsafe { (*d.as_ptr()).flags };
            flags & (ffmpeg::ffi::AV_PIX_FMT_FLAG_RGB | ffmpeg::ffi::AV_PIX_FMT_FLAG_PAL) as u64
                != 0
        })
    }

    /// The Y'CbCr matrix the picture was coded with (untagged: BT.709 from 720 lines up,
    /// BT.601 below, as players assume).
    fn matrix(&self) -> YuvMatrix {
        match self.space {
            Space::BT709 => YuvMatrix::Bt709,
            Space::BT470BG | Space::SMPTE170M | Space::FCC => YuvMatrix::Bt601,
            Space::BT2020NCL | Space::BT2020CL => YuvMatrix::Bt2020,
            _ if self.primaries == Primaries::BT2020 => YuvMatrix::Bt2020,
            _ => YuvMatrix::default_for_height(self.height),
        }
    }

    fn wide_gamut(&self) -> bool {
        self.primaries == Primaries::BT2020 || self.matrix() == YuvMatrix::Bt2020
    }

    /// zscale's description of the input (it must not guess: untagged frames would fail).
    fn zscale_input(&self) -> String {
        let transfer = match self.transfer {
            TransferCharacteristic::SMPTE2084 => "smpte2084",
            TransferCharacteristic::ARIB_STD_B67 => "arib-std-b67",
            _ => "709",
        };
        let matrix = match (self.matrix(), self.space) {
            (YuvMatrix::Bt2020, Space::BT2020CL) => "2020_cl",
            (YuvMatrix::Bt2020, _) => "2020_ncl",
            (YuvMatrix::Bt601, _) => "470bg",
            (YuvMatrix::Bt709, _) => "709",
        };
        let primaries = if self.primaries == Primaries::BT709 {
            "709"
        } else {
            "2020"
        };
        let range = if self.range == Range::JPEG {
            "full"
        } else {
            "limited"
        };
        let matrix = if self.is_rgb() {
            String::new()
        } else {
            format!(":min={matrix}")
        };
        format!("zscale=tin={transfer}:pin={primaries}:rin={range}{matrix}")
    }

    /// The filter chain that makes this picture the output's, or `None` when it already is.
    fn chain(&self, keep_hdr: bool) -> Option<String> {
        let mut steps = Vec::new();
        if self.odd() {
            // H.264 and HEVC 4:2:0 need even sizes: one row or column goes rather than the
            // whole picture being rescaled by a fraction of a pixel.
            steps.push(format!(
                "crop=w={}:h={}:x=0:y=0",
                self.width & !1,
                self.height & !1
            ));
        }
        if keep_hdr && is_hdr(self.transfer) {
            if self.format != Pixel::YUV420P10LE {
                steps.push("format=yuv420p10le".to_owned());
            }
        } else if is_hdr(self.transfer) {
            steps.push(format!("{}:{TONE_MAP},format=yuv420p", self.zscale_input()));
        } else if self.wide_gamut() {
            steps.push(format!(
                "{}:p=709:t=709:m=709:r=tv,format=yuv420p",
                self.zscale_input()
            ));
        } else if self.format != Pixel::YUV420P
            || self.range == Range::JPEG
            || (!self.is_rgb() && self.matrix() != YuvMatrix::Bt709)
        {
            let input = if self.is_rgb() {
                String::new()
            } else {
                let matrix = match self.matrix() {
                    YuvMatrix::Bt601 => "bt601",
                    _ => "bt709",
                };
                let range = if self.range == Range::JPEG {
                    "full"
                } else {
                    "limited"
                };
                format!("in_color_matrix={matrix}:in_range={range}:")
            };
            steps.push(format!(
                "scale={input}out_color_matrix=bt709:out_range=limited,format=yuv420p"
            ));
        }
        (!steps.is_empty()).then(|| steps.join(","))
    }
}

/// A built graph for one input picture kind: `None` when frames pass as they are.
struct Graph {
    picture: Picture,
    chain: Option<String>,
    graph: Option<filter::Graph>,
}

/// Turns decoded frames into the output's picture (see the module's documentation), keeping
/// one filter graph while the input's size, format and colour stay.
pub(super) struct Converter {
    keep_hdr: bool,
    current: Option<Graph>,
}

impl Converter {
    pub(super) fn new(keep_hdr: bool) -> Self {
        Self {
            keep_hdr,
            current: None,
        }
    }

    /// `decoded` as the output's picture, with the output's colour tags.
    pub(super) fn convert(
        &mut self,
        mut decoded: frame::Video,
        input_path: &Path,
    ) -> Result<frame::Video> {
        let picture = Picture::of(&decoded);
        let hdr_out = self.keep_hdr && is_hdr(picture.transfer);
        if self.current.as_ref().is_none_or(|g| g.picture != picture) {
            let chain = picture.chain(self.keep_hdr);
            let graph = match &chain {
                Some(chain) => Some(
                    build_graph(&decoded, chain)
                        .map_err(|err| graph_error(input_path, chain, &err))?,
                ),
                None => None,
            };
            tracing::debug!(?picture, ?chain, "output picture conversion");
            self.current = Some(Graph {
                picture,
                chain,
                graph,
            });
        }
        let Some(Graph {
            chain: Some(chain),
            graph: Some(graph),
            ..
        }) = self.current.as_mut()
        else {
            set_output_tags(&mut decoded, &picture, hdr_out);
            return Ok(decoded);
        };
        let mut converted =
            run_graph(graph, &decoded).map_err(|err| graph_error(input_path, chain, &err))?;
        // SAFETY: both frames are valid; this copies metadata (timing, aspect ratio, side
        // data), not pixels; the colour tags are set again below.
        unsafe {
            ffmpeg::ffi::av_frame_copy_props(converted.as_mut_ptr(), decoded.as_ptr());
        }
        set_output_tags(&mut converted, &picture, hdr_out);
        Ok(converted)
    }
}

/// The tags the output says: the input's own when HDR is kept, BT.709 limited otherwise.
fn set_output_tags(frame: &mut frame::Video, input: &Picture, hdr_out: bool) {
    if hdr_out {
        frame.set_color_space(match input.matrix() {
            YuvMatrix::Bt2020 if input.space == Space::BT2020CL => Space::BT2020CL,
            YuvMatrix::Bt2020 => Space::BT2020NCL,
            YuvMatrix::Bt601 => Space::BT470BG,
            YuvMatrix::Bt709 => Space::BT709,
        });
        frame.set_color_primaries(if input.primaries == Primaries::Unspecified {
            Primaries::BT2020
        } else {
            input.primaries
        });
        frame.set_color_transfer_characteristic(input.transfer);
        frame.set_color_range(if input.range == Range::JPEG {
            Range::JPEG
        } else {
            Range::MPEG
        });
    } else {
        frame.set_color_space(Space::BT709);
        frame.set_color_primaries(Primaries::BT709);
        frame.set_color_transfer_characteristic(TransferCharacteristic::BT709);
        frame.set_color_range(Range::MPEG);
    }
}

fn build_graph(first: &frame::Video, chain: &str) -> Result<filter::Graph, ffmpeg::Error> {
    let mut graph = filter::Graph::new();
    let aspect = first.aspect_ratio();
    let (num, den) = if aspect.numerator() > 0 && aspect.denominator() > 0 {
        (aspect.numerator(), aspect.denominator())
    } else {
        (1, 1)
    };
    let format = first
        .format()
        .descriptor()
        .map_or("none", |d| d.name())
        .to_owned();
    // The filters here work frame by frame and ignore time: any time base does.
    let args = format!(
        "video_size={}x{}:pix_fmt={format}:time_base=1/90000:pixel_aspect={num}/{den}",
        first.width(),
        first.height()
    );
    let buffer = filter::find("buffer").ok_or(ffmpeg::Error::FilterNotFound)?;
    let sink = filter::find("buffersink").ok_or(ffmpeg::Error::FilterNotFound)?;
    graph.add(&buffer, "in", &args)?;
    graph.add(&sink, "out", "")?;
    graph.output("in", 0)?.input("out", 0)?.parse(chain)?;
    graph.validate()?;
    Ok(graph)
}

/// One frame through `graph`: every filter in these chains gives one frame for each it takes.
fn run_graph(
    graph: &mut filter::Graph,
    decoded: &frame::Video,
) -> Result<frame::Video, ffmpeg::Error> {
    let mut source = graph.get("in").ok_or(ffmpeg::Error::FilterNotFound)?;
    // SAFETY: `source` is the graph's buffer source and `decoded` a valid frame; KEEP_REF
    // makes the source take a new reference, leaving `decoded` as it was.
    let status = unsafe {
        ffmpeg::ffi::av_buffersrc_add_frame_flags(
            source.as_mut_ptr(),
            decoded.as_ptr().cast_mut(),
            ffmpeg::ffi::AV_BUFFERSRC_FLAG_KEEP_REF as i32,
        )
    };
    if status < 0 {
        return Err(ffmpeg::Error::from(status));
    }
    let mut sink = graph.get("out").ok_or(ffmpeg::Error::FilterNotFound)?;
    let mut converted = frame::Video::empty();
    sink.sink().frame(&mut converted)?;
    Ok(converted)
}

fn graph_error(input_path: &Path, chain: &str, err: &ffmpeg::Error) -> Error {
    Error::Decode {
        path: input_path.to_owned(),
        stream: "video",
        reason: format!(
            "cannot convert the picture to the output's format ({chain}): {}",
            crate::ff::describe(err)
        ),
    }
}
