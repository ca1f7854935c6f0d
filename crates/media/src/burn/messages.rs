//! What the decoding side hands the writer thread.

use std::sync::Arc;

use ffmpeg::{Packet, frame};
use ffmpeg_next as ffmpeg;

use crate::blend::{PlaneLayout, PreparedOverlay};

/// Messages to the writer thread, in output order per stream.
pub(super) enum Msg {
    Video(Vec<VideoFrame>),
    AudioPacket(Packet),
    AudioFrame(frame::Audio),
    /// Everything was sent: flush the encoders and finish the file. A writer that sees its
    /// channel close without this abandons the file instead.
    Finish,
}

/// A decoded frame on its way to the encoder: its duration in the stream's time base, and the
/// overlay to blend into it.
pub(super) struct VideoFrame {
    pub(super) frame: frame::Video,
    pub(super) duration: i64,
    pub(super) overlay: Option<(PlaneLayout, Arc<PreparedOverlay>)>,
}
