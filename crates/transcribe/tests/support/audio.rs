//! Test and example support: any audio file to 16 kHz mono f32 through the ffmpeg command line,
//! an independent decoder that keeps these tests apart from caption-media's own.

use std::path::Path;
use std::process::Command;

/// Decodes `path` with the `ffmpeg` binary (which must be installed) to 16 kHz mono samples.
pub fn decode_16k_mono(path: &Path) -> anyhow::Result<Vec<f32>> {
    let output = Command::new("ffmpeg")
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
        .output()
        .map_err(|e| anyhow::anyhow!("running ffmpeg (is it installed?): {e}"))?;
    anyhow::ensure!(
        output.status.success(),
        "ffmpeg could not decode {}: {}",
        path.display(),
        String::from_utf8_lossy(&output.stderr).trim()
    );
    Ok(output
        .stdout
        .chunks_exact(2)
        .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0)
        .collect())
}
