//! The Rust encoder against the numpy oracle (`scripts/speakers_reference.py`: librosa's mel
//! front end, the network in float64 numpy) on the first 4 s of `fixtures/audio/jfk.wav`.

use caption_speakers::VoiceEncoder;

/// Float32 in Rust against float64 in numpy through 160 steps of three LSTM layers: the largest
/// difference measured is 2.4e-7; forty times that leaves room for another CPU's rounding.
const TOLERANCE: f32 = 1e-5;

#[test]
fn embeddings_match_numpy_reference() -> anyhow::Result<()> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures");
    let reference: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(format!(
        "{root}/speakers/jfk-ge2e.json"
    ))?)?;
    let seconds = reference["seconds"].as_f64().unwrap_or_default();
    let samples: Vec<f32> =
        caption_testkit::speech::read_wav_16k(format!("{root}/audio/jfk.wav").as_ref())?
            .iter()
            .take((seconds * 16_000.0) as usize)
            .map(|&s| f32::from(s) / 32768.0)
            .collect();
    let encoder = VoiceEncoder::open_installed()?;
    let partials = encoder.embed_partials(&samples);
    let expected = reference["partials"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(partials.len(), expected.len());
    let mut worst = 0f32;
    for (ours, theirs) in partials.iter().zip(&expected) {
        for (a, b) in ours.iter().zip(theirs.as_array().into_iter().flatten()) {
            worst = worst.max((a - b.as_f64().unwrap_or(f64::NAN) as f32).abs());
        }
    }
    let utterance = encoder.embed_utterance(&samples);
    for (a, b) in utterance
        .iter()
        .zip(reference["utterance"].as_array().into_iter().flatten())
    {
        worst = worst.max((a - b.as_f64().unwrap_or(f64::NAN) as f32).abs());
    }
    assert!(worst <= TOLERANCE, "largest difference {worst}");
    Ok(())
}
