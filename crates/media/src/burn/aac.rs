//! Audio the output container cannot hold as it is, re-encoded to AAC on the writer thread:
//! resampled to planar f32 at an AAC rate and cut into whole encoder frames.

use std::path::Path;

use ffmpeg::format::context::Output;
use ffmpeg::{Packet, Rational, Rescale as _, codec, encoder, frame};
use ffmpeg_next as ffmpeg;

use super::cuts::{AudioCutter, Cuts};
use crate::ff;
use crate::{Error, Result};

/// The encoder's sample format: planar f32, what FFmpeg's AAC encoder takes.
const PLANAR_F32: ffmpeg::format::Sample =
    ffmpeg::format::Sample::F32(ffmpeg::format::sample::Type::Planar);

pub(super) struct AudioEncoder {
    encoder: encoder::Audio,
    in_tb: Rational,
    out_index: usize,
    out_tb: Rational,
    rate: u32,
    channels: i32,
    frame_size: usize,
    resampler: Option<(
        ffmpeg::software::resampling::Context,
        (ffmpeg::format::Sample, u64, u32),
    )>,
    /// Planar f32 samples waiting for a whole encoder frame (1024 for AAC).
    fifo: Vec<Vec<f32>>,
    next_pts: Option<i64>,
    /// The cuts the samples pass through on their way to the FIFO, and the media's start
    /// (seconds) their times count from.
    cutter: Option<(AudioCutter, f64)>,
}

impl AudioEncoder {
    /// Opens an AAC encoder for what `decoder` decodes from the input stream `ist`, and adds
    /// its stream to `octx` (whose header is not written yet). The samples inside `cuts`
    /// (seconds from the media's start, `start_s` in the input's time) are left out.
    pub(super) fn open(
        decoder: &ffmpeg::decoder::Audio,
        ist: &ffmpeg::format::stream::Stream<'_>,
        octx: &mut Output,
        global_header: bool,
        (cuts, start_s): (&Cuts, f64),
        path: &Path,
    ) -> Result<Self> {
        let encode_err = |err: ffmpeg::Error| ff::encode_error(path, &err);
        let aac = encoder::find(codec::Id::AAC).ok_or_else(|| Error::Encode {
            path: path.to_owned(),
            reason: "this FFmpeg has no AAC encoder".to_owned(),
        })?;
        let rate = aac_rate(decoder.rate());
        let channels = i32::from(decoder.channels().clamp(1, 8));
        let mut aenc = codec::context::Context::new_with_codec(aac)
            .encoder()
            .audio()
            .map_err(encode_err)?;
        aenc.set_rate(rate as i32);
        aenc.set_format(PLANAR_F32);
        aenc.set_time_base(Rational::new(1, rate as i32));
        aenc.set_bit_rate(usize::try_from(64_000 * channels.min(4)).unwrap_or(128_000));
        // SAFETY: the (not yet opened) encoder context is ours; av_channel_layout_default
        // initialises its ch_layout field, which exists in every FFmpeg from 5.1 on.
        unsafe {
            ffmpeg::ffi::av_channel_layout_default(&mut (*aenc.as_mut_ptr()).ch_layout, channels);
        }
        if global_header {
            aenc.set_flags(codec::Flags::GLOBAL_HEADER);
        }
        let aenc = aenc.open_as(aac).map_err(encode_err)?;
        let mut ost = octx.add_stream(aac).map_err(encode_err)?;
        ost.set_parameters(&aenc);
        ost.set_time_base(Rational::new(1, rate as i32));
        ost.set_metadata(ist.metadata().to_owned());
        let frame_size = aenc.frame_size().max(1) as usize;
        Ok(Self {
            encoder: aenc,
            in_tb: ist.time_base(),
            out_index: ost.index(),
            out_tb: Rational::new(0, 1),
            rate,
            channels,
            frame_size,
            resampler: None,
            fifo: vec![Vec::new(); channels as usize],
            next_pts: None,
            cutter: (!cuts.is_empty())
                .then(|| (AudioCutter::new(cuts, rate, channels as usize), start_s)),
        })
    }

    /// Takes the time base the muxer chose for the stream when it wrote the header.
    pub(super) fn header_written(&mut self, octx: &Output) {
        self.out_tb = octx
            .stream(self.out_index)
            .map_or(Rational::new(1, 1000), |s| s.time_base());
    }

    /// Resamples a decoded frame into the FIFO and encodes the whole frames it completes.
    pub(super) fn encode(
        &mut self,
        mut frame: frame::Audio,
        octx: &mut Output,
        path: &Path,
    ) -> Result<()> {
        if frame.samples() == 0 {
            return Ok(());
        }
        let mut layout = frame.channel_layout();
        if layout.is_empty() {
            layout = ffmpeg::ChannelLayout::default(i32::from(frame.channels()));
            frame.set_channel_layout(layout);
        }
        if self.next_pts.is_none() {
            let start = frame.timestamp().or(frame.pts()).unwrap_or(0);
            let start = start.rescale(self.in_tb, Rational::new(1, self.rate as i32));
            self.next_pts = Some(start);
            if let Some((cutter, start_s)) = &mut self.cutter {
                cutter.seek(start - (*start_s * f64::from(self.rate)).round() as i64);
            }
        }
        let from = (frame.format(), layout.bits(), frame.rate());
        if self.resampler.as_ref().is_none_or(|(_, key)| *key != from) {
            let context = ffmpeg::software::resampling::Context::get(
                from.0,
                layout,
                from.2,
                PLANAR_F32,
                ffmpeg::ChannelLayout::default(self.channels),
                self.rate,
            )
            .map_err(|e| ff::encode_error(path, &e))?;
            self.resampler = Some((context, from));
        }
        let capacity = (frame.samples() as u64 * u64::from(self.rate))
            .div_ceil(u64::from(from.2.max(1))) as usize
            + 256;
        let mut out = frame::Audio::new(
            PLANAR_F32,
            capacity,
            ffmpeg::ChannelLayout::default(self.channels),
        );
        if let Some((resampler, _)) = self.resampler.as_mut() {
            resampler
                .run(&frame, &mut out)
                .map_err(|e| ff::encode_error(path, &e))?;
        }
        let samples = out.samples();
        let planes: Vec<&[f32]> = (0..self.fifo.len())
            .map(|ch| {
                let plane: &[f32] = out.plane(ch);
                &plane[..samples.min(plane.len())]
            })
            .collect();
        match &mut self.cutter {
            Some((cutter, _)) => cutter.process(&planes, &mut self.fifo),
            None => {
                for (fifo, plane) in self.fifo.iter_mut().zip(&planes) {
                    fifo.extend_from_slice(plane);
                }
            }
        }
        self.drain_fifo(false, octx, path)
    }

    /// Encodes what is left (the short last frame included) and flushes the encoder.
    pub(super) fn finish(&mut self, octx: &mut Output, path: &Path) -> Result<()> {
        if let Some((cutter, _)) = &mut self.cutter {
            cutter.finish(&mut self.fifo);
        }
        self.drain_fifo(true, octx, path)?;
        self.encoder
            .send_eof()
            .map_err(|e| ff::encode_error(path, &e))?;
        self.write_packets(octx, path)
    }

    /// Encodes whole frames from the FIFO; at the end (`last`) also the short remainder.
    fn drain_fifo(&mut self, last: bool, octx: &mut Output, path: &Path) -> Result<()> {
        loop {
            let available = self.fifo.first().map_or(0, Vec::len);
            let take = if available >= self.frame_size {
                self.frame_size
            } else if last && available > 0 {
                available
            } else {
                return Ok(());
            };
            let mut chunk = frame::Audio::new(
                PLANAR_F32,
                take,
                ffmpeg::ChannelLayout::default(self.channels),
            );
            chunk.set_rate(self.rate);
            for (ch, fifo) in self.fifo.iter_mut().enumerate() {
                let plane: &mut [f32] = chunk.plane_mut(ch);
                plane[..take].copy_from_slice(&fifo[..take]);
                fifo.drain(..take);
            }
            let pts = self.next_pts.unwrap_or(0);
            chunk.set_pts(Some(pts));
            self.next_pts = Some(pts + take as i64);
            self.encoder
                .send_frame(&chunk)
                .map_err(|e| ff::encode_error(path, &e))?;
            self.write_packets(octx, path)?;
        }
    }

    fn write_packets(&mut self, octx: &mut Output, path: &Path) -> Result<()> {
        let mut packet = Packet::empty();
        while self.encoder.receive_packet(&mut packet).is_ok() {
            packet.set_stream(self.out_index);
            packet.rescale_ts(Rational::new(1, self.rate as i32), self.out_tb);
            packet
                .write_interleaved(octx)
                .map_err(|e| ff::encode_error(path, &e))?;
        }
        Ok(())
    }
}

/// AAC's sampling rates; anything else is resampled to the nearest one above (or 48 kHz).
fn aac_rate(input_hz: u32) -> u32 {
    const RATES: [u32; 12] = [
        8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000,
    ];
    RATES
        .iter()
        .copied()
        .find(|&r| r >= input_hz)
        .unwrap_or(48_000)
}
