//! whisper.cpp's beam search as this workspace builds it (crates/whisper-sys): each beam is
//! extended by its most likely tokens, so decoding the same audio again on the same state gives
//! the same tokens. As released, whisper.cpp draws the candidates at random from a generator that
//! lives in the state, and the words of a noisy clip changed from one decoding to the next.
//! And each decoding seeds that generator again, so sampling at a raised temperature (whisper's
//! fallback) gives a piece the same tokens whatever the state decoded before.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use caption_testkit::speech::{festival_sentence, mix_pink_noise, read_wav_16k};
use caption_whisper::{Context, ContextOptions, Params, State, Strategy};

/// Festival's kal reading a sentence under pink noise at 10 dB SNR.
fn noisy_sentence() -> Vec<f32> {
    let dir = tempfile::tempdir().unwrap();
    let (clean, noisy) = (dir.path().join("clean.wav"), dir.path().join("noisy.wav"));
    let text = "The fisherman mended his nets by the harbour wall while the gulls argued over \
                the morning catch and his brother counted the crates";
    festival_sentence(text, "kal", &clean).unwrap();
    mix_pink_noise(&clean, &noisy, 10.0).unwrap();
    read_wav_16k(&noisy)
        .unwrap()
        .into_iter()
        .map(|s| f32::from(s) / 32768.0)
        .collect()
}

/// The tokens of decoding `samples` on `state` with `params`.
fn decode(state: &mut State, mut params: Params<'_>, samples: &[f32]) -> Vec<i32> {
    // One thread: the tests of this file run side by side, and ggml's threads spin.
    params.threads(1).language("en").unwrap();
    state.full(&mut params, samples).unwrap();
    state
        .segments()
        .flat_map(|segment| {
            (0..segment.n_tokens())
                .filter_map(|i| segment.token(i).map(|t| t.id))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn tiny_en() -> Context {
    let path = caption_transcribe::installed_model_path("tiny.en").unwrap();
    Context::load(&path, ContextOptions::default()).unwrap()
}

#[test]
fn decoding_the_same_audio_again_gives_the_same_tokens() {
    let samples = noisy_sentence();
    let context = tiny_en();
    let mut state = context.new_state().unwrap();
    let beams = || {
        Params::new(Strategy::BeamSearch {
            beam_size: 5,
            patience: -1.0,
        })
    };
    let first = decode(&mut state, beams(), &samples);
    assert!(first.len() > 10, "{} tokens", first.len());
    for again in 1..4 {
        assert_eq!(
            decode(&mut state, beams(), &samples),
            first,
            "decoding {again} differs"
        );
    }
}

#[test]
fn sampling_again_on_the_same_state_gives_the_same_tokens() {
    let samples = noisy_sentence();
    let context = tiny_en();
    let sampled = || {
        let mut params = Params::new(Strategy::Greedy { best_of: 1 });
        // Every token drawn from the whole distribution by the first decoder's generator.
        params.temperature(1.0).temperature_increment(0.0);
        params
    };
    let mut state = context.new_state().unwrap();
    let first = decode(&mut state, sampled(), &samples);
    assert!(first.len() > 10, "{} tokens", first.len());
    for again in 1..3 {
        assert_eq!(
            decode(&mut state, sampled(), &samples),
            first,
            "sampling {again} differs"
        );
    }
    // A new state draws the same.
    let mut fresh = context.new_state().unwrap();
    assert_eq!(decode(&mut fresh, sampled(), &samples), first);
}
