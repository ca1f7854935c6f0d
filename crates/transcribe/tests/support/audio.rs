//! Test and example support: any audio file to 16 kHz mono f32 through the ffmpeg command line,
//! an independent decoder that keeps these tests apart from caption-media's own.

use std::io::Read as _;
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

/// Samples per block handed out by [`Stream`]: one second.
const BLOCK_SAMPLES: usize = 16_000;

/// `path`'s audio as it is decoded by the `ffmpeg` binary (which must be installed), a second
/// at a time, so that a long file is never held whole.
pub struct Stream {
    child: Child,
    stdout: ChildStdout,
    finished: bool,
}

impl Stream {
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        let mut child = Command::new("ffmpeg")
            .args(["-v", "error", "-nostdin", "-i"])
            .arg(path)
            .args([
                "-f",
                "s16le",
                "-acodec",
                "pcm_s16le",
                "-ar",
                "16000",
                "-ac",
                "1",
                "-",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| anyhow::anyhow!("running ffmpeg (is it installed?): {e}"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| anyhow::anyhow!("ffmpeg's output is not piped"))?;
        Ok(Self {
            child,
            stdout,
            finished: false,
        })
    }

    fn finish(&mut self) -> anyhow::Result<()> {
        self.finished = true;
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            pipe.read_to_string(&mut stderr)?;
        }
        let status = self.child.wait()?;
        anyhow::ensure!(
            status.success(),
            "ffmpeg could not decode the input: {}",
            stderr.trim()
        );
        Ok(())
    }
}

impl Iterator for Stream {
    type Item = anyhow::Result<Vec<f32>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        let mut bytes = vec![0u8; BLOCK_SAMPLES * 2];
        let mut filled = 0;
        while filled < bytes.len() {
            match self.stdout.read(&mut bytes[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) => return Some(Err(e.into())),
            }
        }
        if filled < bytes.len()
            && let Err(e) = self.finish()
        {
            return Some(Err(e));
        }
        if filled < 2 {
            return None;
        }
        Some(Ok(bytes[..filled - filled % 2]
            .chunks_exact(2)
            .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0)
            .collect()))
    }
}

/// Decodes the whole of `path` to 16 kHz mono samples.
pub fn decode_16k_mono(path: &Path) -> anyhow::Result<Vec<f32>> {
    let mut samples = Vec::new();
    for block in Stream::open(path)? {
        samples.extend(block?);
    }
    Ok(samples)
}
