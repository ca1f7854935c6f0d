//! The writer thread: blends each frame's overlay, encodes, and muxes video and audio into
//! the output in the order they arrive.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use ffmpeg::format::context::Output;
use ffmpeg::{Packet, Rational, encoder};
use ffmpeg_next as ffmpeg;

use super::audio::WriterAudio;
use super::messages::{Msg, VideoFrame};
use super::planes::blend_frame;
use crate::ff;
use crate::pool::FramePool;
use crate::{Error, Result};

/// The depth of the queue to the writer, in batches of frames. Every frame in flight keeps a
/// decoded picture (3 MB at 1080x1920) alive, so this stays small: memory then stays at a bare
/// transcode's whatever the length.
const QUEUE_BATCHES: usize = 1;

/// Owns the output: encoders and muxer, on their own thread.
pub(super) struct Writer {
    pub(super) path: PathBuf,
    pub(super) octx: Output,
    pub(super) venc: encoder::Video,
    pub(super) video_out: usize,
    pub(super) video_tb: Rational,
    pub(super) video_out_tb: Rational,
    /// Each frame's duration by its pts, for the packet x264 makes of it (x264 does not set
    /// durations, and the container needs the last one to keep the input's length).
    pub(super) durations: HashMap<i64, i64>,
    pub(super) audio: WriterAudio,
    pub(super) pool: FramePool,
}

/// The reading side's end of a running writer.
pub(super) struct WriterHandle {
    pub(super) tx: SyncSender<Msg>,
    thread: JoinHandle<Result<()>>,
}

impl WriterHandle {
    /// Waits for the writer thread to end; its own result inside.
    pub(super) fn join(self, output: &Path) -> Result<Result<()>> {
        drop(self.tx);
        self.thread.join().map_err(|_| Error::Encode {
            path: output.to_owned(),
            reason: "the encoder thread panicked".to_owned(),
        })
    }
}

impl Writer {
    /// Starts the writer thread, fed through a bounded queue.
    pub(super) fn spawn(self) -> Result<WriterHandle> {
        let path = self.path.clone();
        let (tx, rx) = sync_channel(QUEUE_BATCHES);
        let thread = std::thread::Builder::new()
            .name("caption-media-encode".to_owned())
            .spawn(move || self.run(&rx))
            .map_err(|source| Error::Io { path, source })?;
        Ok(WriterHandle { tx, thread })
    }

    fn run(mut self, rx: &Receiver<Msg>) -> Result<()> {
        while let Ok(msg) = rx.recv() {
            match msg {
                Msg::Video(frames) => self.write_video(frames)?,
                Msg::AudioPacket(packet) => {
                    self.audio
                        .write_packet(packet, &mut self.octx, &self.path)?;
                }
                Msg::AudioFrame(frame) => self.audio.encode(frame, &mut self.octx, &self.path)?,
                Msg::Finish => return self.finish(),
            }
        }
        // The reader gave up: leave the file unfinished, it is about to be removed.
        Ok(())
    }

    fn err(&self, err: &ffmpeg::Error) -> Error {
        ff::encode_error(&self.path, err)
    }

    fn write_video(&mut self, frames: Vec<VideoFrame>) -> Result<()> {
        for VideoFrame {
            mut frame,
            duration,
            overlay,
        } in frames
        {
            if let Some((layout, overlay)) = overlay
                && !blend_frame(&mut frame, layout, &overlay, &self.pool)
            {
                return Err(Error::Encode {
                    path: self.path.clone(),
                    reason: "out of memory copying a frame to blend into".to_owned(),
                });
            }
            if let Some(pts) = frame.pts() {
                self.durations.insert(pts, duration);
            }
            self.venc.send_frame(&frame).map_err(|e| self.err(&e))?;
            self.write_video_packets()?;
        }
        Ok(())
    }

    fn write_video_packets(&mut self) -> Result<()> {
        let mut packet = Packet::empty();
        loop {
            match self.venc.receive_packet(&mut packet) {
                Ok(()) => {}
                Err(ffmpeg::Error::Eof) => return Ok(()),
                Err(ffmpeg::Error::Other { errno }) if errno == ffmpeg::ffi::EAGAIN => {
                    return Ok(());
                }
                Err(err) => return Err(self.err(&err)),
            }
            if let Some(duration) = packet.pts().and_then(|pts| self.durations.remove(&pts))
                && packet.duration() <= 0
            {
                packet.set_duration(duration);
            }
            packet.set_stream(self.video_out);
            packet.rescale_ts(self.video_tb, self.video_out_tb);
            packet
                .write_interleaved(&mut self.octx)
                .map_err(|e| self.err(&e))?;
        }
    }

    fn finish(mut self) -> Result<()> {
        self.venc.send_eof().map_err(|e| self.err(&e))?;
        self.write_video_packets()?;
        self.audio.finish(&mut self.octx, &self.path)?;
        self.octx.write_trailer().map_err(|e| self.err(&e))
    }
}
