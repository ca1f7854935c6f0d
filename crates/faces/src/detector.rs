//! BlazeFace: the network's boxes decoded against its anchors, scored, and overlapping boxes
//! merged by mediapipe's weighted non-maximum suppression.

use std::path::Path;

use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::resize::letterbox;

/// The graph file `scripts/setup-wheel-models` converts from mediapipe's
/// `face_detection_full_range_sparse.tflite`.
pub const GRAPH_FILE_NAME: &str = "blazeface-full-range.graph";

/// Values the network gives for each anchor: a box (centre x, centre y, width, height) and six
/// key points (x, y): the eyes, the nose tip, the mouth and the ears.
const BOX_VALUES: usize = 16;
/// The full-range model's threshold in mediapipe's graph (`min_score_thresh`).
const MIN_SCORE: f32 = 0.6;
/// Boxes overlapping the best one by more than this (intersection over union) are merged into
/// it (mediapipe's `min_suppression_threshold`).
const MERGE_IOU: f32 = 0.3;
/// Raw scores are clipped here before the sigmoid (mediapipe's `score_clipping_thresh`).
const SCORE_CLIP: f32 = 100.0;

/// A face found in a picture, in the picture's pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Face {
    /// Confidence, 0 to 1.
    pub score: f32,
    /// Left edge of the face's box.
    pub x0: f32,
    /// Top edge.
    pub y0: f32,
    /// Right edge.
    pub x1: f32,
    /// Bottom edge.
    pub y1: f32,
    /// Key points (x, y): right eye, left eye, nose tip, mouth centre, right ear, left ear
    /// (the person's right and left).
    pub keypoints: [(f32, f32); 6],
}

impl Face {
    /// The centre of the box.
    pub fn centre(&self) -> (f32, f32) {
        ((self.x0 + self.x1) / 2.0, (self.y0 + self.y1) / 2.0)
    }

    /// The box's width.
    pub fn width(&self) -> f32 {
        self.x1 - self.x0
    }

    /// The box's height.
    pub fn height(&self) -> f32 {
        self.y1 - self.y0
    }

    /// The mouth's centre.
    pub fn mouth(&self) -> (f32, f32) {
        self.keypoints[3]
    }

    fn iou(&self, other: &Face) -> f32 {
        let w = (self.x1.min(other.x1) - self.x0.max(other.x0)).max(0.0);
        let h = (self.y1.min(other.y1) - self.y0.max(other.y0)).max(0.0);
        let inter = w * h;
        let union = self.width() * self.height() + other.width() * other.height() - inter;
        if union > 0.0 { inter / union } else { 0.0 }
    }
}

/// The face detector, loaded once and shared (it is `Sync`).
#[derive(Debug)]
pub struct FaceDetector {
    graph: Graph,
    side: usize,
    /// Anchor centres, as fractions of the input square.
    anchors: Vec<(f32, f32)>,
}

impl FaceDetector {
    /// Loads the graph `scripts/setup-wheel-models` installs: [`GRAPH_FILE_NAME`] in the models
    /// folder (`$CAPTIONS_MODELS`, else `~/.cache/caption-engine/models`).
    pub fn open_installed() -> Result<Self> {
        let dir = caption_core::models_dir().ok_or(Error::NoModelsDir)?;
        match dir.join(GRAPH_FILE_NAME) {
            path if path.is_file() => Self::open(&path),
            path => Err(Error::ModelMissing { path }),
        }
    }

    /// Loads a converted BlazeFace graph: the full-range model (192 x 192, one anchor per
    /// 4 x 4 cell) or the short-range one (128 x 128, the anchors of its four layers).
    pub fn open(path: &Path) -> Result<Self> {
        let graph = Graph::open(path)?;
        let bad = |detail: String| Error::Model {
            path: path.to_owned(),
            detail,
        };
        let side = match *graph.input_shape() {
            [1, h, w, 3] if h == w => h,
            ref other => return Err(bad(format!("an input of shape {other:?}"))),
        };
        // mediapipe's SSD anchors with fixed sizes: layers of the same stride share their
        // cells, each layer giving two anchors in the short-range model and one in the other.
        let (strides, per_layer): (&[usize], usize) = match side {
            192 => (&[4], 1),
            128 => (&[8, 16, 16, 16], 2),
            other => {
                return Err(bad(format!(
                    "an input of {other} pixels is not BlazeFace's"
                )));
            }
        };
        let anchors = anchors(side, strides, per_layer);
        let shapes = graph.output_shapes();
        let fits = matches!(
            shapes.as_slice(),
            [[1, n, BOX_VALUES], [1, m, 1]] if *n == anchors.len() && *m == anchors.len()
        );
        if !fits {
            return Err(bad(format!(
                "outputs {shapes:?}, expected boxes and scores for {} anchors",
                anchors.len()
            )));
        }
        Ok(Self {
            graph,
            side,
            anchors,
        })
    }

    /// The side of the square the network sees, pixels: pictures larger than this are
    /// reduced to it first, so there is no use handing it more.
    pub fn input_side(&self) -> u32 {
        u32::try_from(self.side).unwrap_or(u32::MAX)
    }

    /// The faces in a picture (`rgb`: `width` x `height` pixels, 3 bytes each, rows top to
    /// bottom), best first, in the picture's pixels.
    ///
    /// # Errors
    /// [`Error::BadPicture`] when `rgb` does not hold `width` x `height` pixels or a side is 0.
    pub fn detect(&self, width: u32, height: u32, rgb: &[u8]) -> Result<Vec<Face>> {
        let (w, h) = (width as usize, height as usize);
        if w == 0 || h == 0 || rgb.len() != w * h * 3 {
            return Err(Error::BadPicture {
                width,
                height,
                detail: format!("{} bytes, expected {}", rgb.len(), w * h * 3),
            });
        }
        let (input, placement) = letterbox(rgb, w, h, self.side);
        let mut outputs = self.graph.run(input).into_iter();
        let (Some(boxes), Some(scores)) = (outputs.next(), outputs.next()) else {
            return Ok(Vec::new());
        };
        #[allow(clippy::cast_precision_loss, reason = "the input side, 128 or 192")]
        let side = self.side as f32;
        let mut found: Vec<Face> = Vec::new();
        for (i, (&(ax, ay), &raw)) in self.anchors.iter().zip(&scores).enumerate() {
            let score = 1.0 / (1.0 + (-raw.clamp(-SCORE_CLIP, SCORE_CLIP)).exp());
            if score < MIN_SCORE {
                continue;
            }
            let b = &boxes[i * BOX_VALUES..][..BOX_VALUES];
            // Offsets are in input pixels from the anchor's centre.
            let point = |dx: f32, dy: f32| placement.to_picture(dx + ax * side, dy + ay * side);
            let (cx, cy) = point(b[0], b[1]);
            let (half_w, half_h) = (b[2] / 2.0 / placement.scale, b[3] / 2.0 / placement.scale);
            let mut keypoints = [(0.0, 0.0); 6];
            for (k, kp) in keypoints.iter_mut().enumerate() {
                *kp = point(b[4 + 2 * k], b[5 + 2 * k]);
            }
            found.push(Face {
                score,
                x0: cx - half_w,
                y0: cy - half_h,
                x1: cx + half_w,
                y1: cy + half_h,
                keypoints,
            });
        }
        Ok(weighted_nms(found))
    }
}

fn anchors(side: usize, strides: &[usize], per_layer: usize) -> Vec<(f32, f32)> {
    let mut out = Vec::new();
    let mut layer = 0;
    while layer < strides.len() {
        let stride = strides[layer];
        let layers = strides[layer..]
            .iter()
            .take_while(|&&s| s == stride)
            .count();
        let cells = side / stride;
        for y in 0..cells {
            for x in 0..cells {
                #[allow(clippy::cast_precision_loss, reason = "a few dozen cells")]
                let centre = (
                    (x as f32 + 0.5) / cells as f32,
                    (y as f32 + 0.5) / cells as f32,
                );
                out.extend(std::iter::repeat_n(centre, layers * per_layer));
            }
        }
        layer += layers;
    }
    out
}

/// mediapipe's weighted suppression: the best box and every box overlapping it are replaced by
/// their score-weighted mean (with the best one's score), and so on with the boxes left.
fn weighted_nms(mut faces: Vec<Face>) -> Vec<Face> {
    faces.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut merged = Vec::new();
    while let Some(best) = faces.first().copied() {
        let (group, rest): (Vec<Face>, Vec<Face>) =
            faces.into_iter().partition(|f| best.iou(f) > MERGE_IOU);
        faces = rest;
        let total: f32 = group.iter().map(|f| f.score).sum();
        let mean =
            |value: fn(&Face) -> f32| group.iter().map(|f| f.score * value(f)).sum::<f32>() / total;
        let mut keypoints = [(0.0, 0.0); 6];
        for (k, kp) in keypoints.iter_mut().enumerate() {
            *kp = (
                group
                    .iter()
                    .map(|f| f.score * f.keypoints[k].0)
                    .sum::<f32>()
                    / total,
                group
                    .iter()
                    .map(|f| f.score * f.keypoints[k].1)
                    .sum::<f32>()
                    / total,
            );
        }
        merged.push(Face {
            score: best.score,
            x0: mean(|f| f.x0),
            y0: mean(|f| f.y0),
            x1: mean(|f| f.x1),
            y1: mean(|f| f.y1),
            keypoints,
        });
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_match_the_models_outputs() {
        assert_eq!(anchors(192, &[4], 1).len(), 2304);
        assert_eq!(anchors(128, &[8, 16, 16, 16], 2).len(), 896);
        // The short-range model's 16 x 16 layer gives two anchors a cell, then the 8 x 8
        // layers six.
        let short = anchors(128, &[8, 16, 16, 16], 2);
        assert_eq!(short[0], short[1]);
        assert_eq!(short[512], (1.0 / 16.0, 1.0 / 16.0));
        assert_eq!(short[517], short[512]);
        assert_ne!(short[518], short[512]);
    }

    #[test]
    fn overlapping_boxes_merge_into_their_weighted_mean() {
        let face = |score, x0| Face {
            score,
            x0,
            y0: 0.0,
            x1: x0 + 10.0,
            y1: 10.0,
            keypoints: [(x0, 0.0); 6],
        };
        let merged = weighted_nms(vec![face(0.6, 2.0), face(0.9, 0.0), face(0.8, 50.0)]);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].score, 0.9);
        assert!((merged[0].x0 - 0.8).abs() < 1e-5, "{}", merged[0].x0);
        assert_eq!(merged[1].x0, 50.0);
    }
}
