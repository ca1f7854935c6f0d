//! How whole one stream of an input turned out while it was read: packets that would not
//! decode (damage in the middle, worth a warning) and how far its data reached (a truncated
//! file, an error).

use std::path::Path;

use ffmpeg::format::context::Input;
use ffmpeg::{Packet, Rational};
use ffmpeg_next as ffmpeg;

use crate::ff;
use crate::{Error, Result};

/// A truncation shorter than this many seconds (or 2 % of the stream) is not reported: a last
/// frame's or audio packet's duration is rounded differently by muxers.
const TRUNCATION_TOLERANCE_S: f64 = 0.5;

/// How far the packets of all the streams of an input reach: a file cut off stops short in
/// every stream.
#[derive(Debug, Default)]
pub(crate) struct FileReach {
    /// Packets read, of every stream.
    pub(crate) packets: u64,
    /// The latest end (timestamp + duration) of a packet, seconds on the input's clock.
    end_s: Option<f64>,
}

impl FileReach {
    /// Notes a packet of any stream, read from `input`.
    pub(crate) fn packet(&mut self, packet: &Packet, input: &Input) {
        self.packets += 1;
        let Some(time_base) = input.stream(packet.stream()).map(|s| s.time_base()) else {
            return;
        };
        if let Some(ts) = packet.pts().or(packet.dts()) {
            let end_s = ff::ts_to_s(ts.saturating_add(packet.duration().max(0)), time_base);
            self.end_s = Some(self.end_s.map_or(end_s, |e| e.max(end_s)));
        }
    }
}

/// What reading one stream met.
#[derive(Debug)]
pub(crate) struct StreamHealth {
    /// `audio` or `video`.
    pub(crate) stream: &'static str,
    time_base: Rational,
    /// Packets read of this stream.
    pub(crate) packets: u64,
    /// Packets that were damaged (flagged corrupt by the demuxer, or refused by the decoder).
    pub(crate) damaged: u64,
    damaged_span_s: Option<(f64, f64)>,
    /// The latest end (timestamp + duration) of a packet read, in `time_base` units.
    read_end_ts: Option<i64>,
    /// The time of the last packet read, seconds, to place a decoder's complaint.
    last_packet_s: f64,
}

impl StreamHealth {
    pub(crate) fn new(stream: &'static str, time_base: Rational) -> Self {
        Self {
            stream,
            time_base,
            packets: 0,
            damaged: 0,
            damaged_span_s: None,
            read_end_ts: None,
            last_packet_s: 0.0,
        }
    }

    /// Notes a packet of this stream as it is read.
    pub(crate) fn packet(&mut self, packet: &Packet) {
        self.packets += 1;
        if let Some(ts) = packet.pts().or(packet.dts()) {
            let end = ts.saturating_add(packet.duration().max(0));
            self.read_end_ts = Some(self.read_end_ts.map_or(end, |e| e.max(end)));
            self.last_packet_s = ff::ts_to_s(ts, self.time_base);
        }
        if packet.is_corrupt() {
            self.damage();
        }
    }

    /// Notes that the decoder refused the last packet (or a frame came out damaged).
    pub(crate) fn damage(&mut self) {
        self.damaged += 1;
        let t = self.last_packet_s;
        self.damaged_span_s = Some(match self.damaged_span_s {
            None => (t, t),
            Some((a, b)) => (a.min(t), b.max(t)),
        });
    }

    /// A sentence for the report when some of the stream was damaged, `what_follows` saying
    /// what was done about it.
    pub(crate) fn warning(&self, start_s: f64, what_follows: &str) -> Option<String> {
        let (a, b) = self.damaged_span_s?;
        Some(format!(
            "the {} stream is damaged between {:.1} s and {:.1} s ({} of {} packets unreadable); {what_follows}",
            self.stream,
            (a - start_s).max(0.0),
            (b - start_s).max(0.0),
            self.damaged,
            self.packets
        ))
    }

    /// After the last packet: an error when the stream had no packet while others of the file
    /// had some (an empty track), or when its data stops well before the length its header
    /// states (a truncated file). `file` is how far all of the input's packets reached.
    pub(crate) fn check_complete(
        &self,
        input: &Input,
        index: usize,
        path: &Path,
        file: &FileReach,
    ) -> Result<()> {
        if self.packets == 0 && file.packets > 0 {
            return Err(Error::Empty {
                path: path.to_owned(),
                stream: self.stream,
            });
        }
        let Some(stream) = input.stream(index) else {
            return Ok(());
        };
        let start_ts = match stream.start_time() {
            ffmpeg::ffi::AV_NOPTS_VALUE => 0,
            ts => ts,
        };
        let (stated_s, read_s) = if stream.duration() > 0 {
            let read_s = self
                .read_end_ts
                .map_or(0.0, |end| ff::ts_to_s(end - start_ts, self.time_base));
            (ff::ts_to_s(stream.duration(), self.time_base), read_s)
        } else if input.duration() > 0 {
            // Without a length of its own (Matroska, WebM), the stream is held to the
            // container's, which the furthest packet of any stream must reach.
            let read_s = file.end_s.map_or(0.0, |end| end - ff::input_start_s(input));
            (ff::input_duration_s(input), read_s)
        } else {
            return Ok(());
        };
        let read_s = read_s.max(0.0);
        let tolerance_s = TRUNCATION_TOLERANCE_S.max(stated_s * 0.02);
        if stated_s.is_finite() && read_s + tolerance_s < stated_s {
            return Err(Error::Truncated {
                path: path.to_owned(),
                stream: self.stream,
                read_s,
                stated_s,
            });
        }
        Ok(())
    }
}
