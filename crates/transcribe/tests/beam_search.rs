//! whisper.cpp's beam search as this workspace builds it (crates/whisper-sys): each beam is
//! extended by its most likely tokens, so decoding the same audio again on the same state gives
//! the same tokens. As released, whisper.cpp draws the candidates at random from a generator that
//! lives in the state, and the words of a noisy clip changed from one decoding to the next.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use caption_testkit::speech::{festival_sentence, mix_pink_noise, read_wav_16k};
use whisper_rs::{FullParams, SamplingStrategy, WhisperContext, WhisperContextParameters};

#[test]
fn decoding_the_same_audio_again_gives_the_same_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let (clean, noisy) = (dir.path().join("clean.wav"), dir.path().join("noisy.wav"));
    let text = "The fisherman mended his nets by the harbour wall while the gulls argued over \
                the morning catch and his brother counted the crates";
    festival_sentence(text, "kal", &clean).unwrap();
    mix_pink_noise(&clean, &noisy, 10.0).unwrap();
    let samples: Vec<f32> = read_wav_16k(&noisy)
        .unwrap()
        .into_iter()
        .map(|s| f32::from(s) / 32768.0)
        .collect();

    let path = caption_transcribe::installed_model_path("tiny.en").unwrap();
    let context = WhisperContext::new_with_params(
        path.to_str().unwrap(),
        WhisperContextParameters::default(),
    )
    .unwrap();
    let mut state = context.create_state().unwrap();
    let decode = |state: &mut whisper_rs::WhisperState| {
        let mut params = FullParams::new(SamplingStrategy::BeamSearch {
            beam_size: 5,
            patience: -1.0,
        });
        params.set_n_threads(2);
        params.set_language(Some("en"));
        params.set_print_progress(false);
        params.set_print_realtime(false);
        state.full(params, &samples).unwrap();
        state
            .as_iter()
            .flat_map(|segment| {
                (0..segment.n_tokens())
                    .filter_map(|i| segment.get_token(i).map(|t| t.token_id()))
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
    };
    let first = decode(&mut state);
    assert!(first.len() > 10, "{} tokens", first.len());
    for again in 1..4 {
        assert_eq!(decode(&mut state), first, "decoding {again} differs");
    }
}
