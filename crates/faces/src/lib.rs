//! Faces in pictures, and a crop window that follows them.
//!
//! [`FaceDetector`] is BlazeFace, the full-range face detector of mediapipe 0.10.14
//! (Apache-2.0), run in plain Rust on the graph `scripts/setup-wheel-models` converts from the
//! wheel's `face_detection_full_range_sparse.tflite`. It finds faces down to about a twentieth
//! of the picture's longer side (100 pixels in a 1920 x 1080 frame).
//!
//! [`plan_framing`] turns the faces seen in a video's sampled frames into a crop window at
//! another aspect ratio for every frame, moving like a camera operator: still while the face
//! stays in a dead zone, easing to a new position, cutting when the face jumps or the speaker
//! changes.

#![warn(missing_docs)]

mod detector;
mod error;
mod framing;
mod graph;
mod ops;
mod resize;

pub use detector::{Face, FaceDetector, GRAPH_FILE_NAME};
pub use error::{Error, Result};
pub use framing::{
    Aspect, FaceSample, Framing, FramingOptions, SeenFace, Window, crop_size, plan_framing,
};
