//! The whisper.cpp backend.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use caption_align::{Aligner, LanguageAligner};
use caption_core::Word;
use caption_whisper::{AlignmentHeads, Context, ContextOptions, Params, State, Strategy};

use crate::align::{self, AlignParams, Estimate};
use crate::chunks::{self, Chunk};
use crate::cores::Cores;
use crate::error::{Error, Result};
use crate::ggml::{self, Hparams};
use crate::given::{self, GivenText};
use crate::hearing::{Hearing, PieceProgress, Share, pieces_at_once};
use crate::lines;
use crate::models;
use crate::on_voice;
use crate::refine::{self, Signal};
use crate::speech::{self, GateParams, Region, SAMPLE_RATE_HZ, round_ms};
use crate::sung;
use crate::transcriber::{TranscribeOptions, Transcriber, Transcript};
use crate::vad::{self, VAD_MODEL_FILE, Vad};
use crate::words::{self, RawWord, Token};

/// Segments the model itself thinks are not speech, with words it is unsure of, are dropped.
const NO_SPEECH_DROP: f32 = 0.6;
const LOW_CONFIDENCE: f32 = 0.4;
/// whisper.cpp refuses inputs shorter than 1 s; short pieces are padded with silence.
const MIN_INPUT_SAMPLES: usize = SAMPLE_RATE_HZ * 3 / 2;
/// Hypotheses whisper keeps while decoding unless told otherwise (faster-whisper's default).
pub const DEFAULT_BEAM_SIZE: usize = 5;
/// Candidates sampled when whisper falls back to a higher temperature (as faster-whisper).
const BEST_OF: i32 = 5;
/// Encoder frames (20 ms each) of silence shown after a piece's audio; see [`audio_ctx`].
const AUDIO_CTX_MARGIN_FRAMES: usize = 400;
/// The languages whose pieces whisper's encoder sees in a short window ([`audio_ctx`]): those
/// where it was measured to keep the words. English on the bench's 123 clips (tiny.en: the
/// median clip 1.75x faster, word error rate 0.110 against 0.111); Spanish, French, Italian,
/// Portuguese and Dutch on its espeak-ng clips (base, one thread, tuning and held-out: about
/// half the CPU time, word error rates 0.34/0.95/0.67/1.02/0.77 against 0.38/0.96/0.72/1.14/0.88
/// with the whole window); Japanese on espeak-ng kana (the same words, a 12.6 s clip 4.9 s
/// against 6.3 s). Not German: its held-out clips lost words (0.73 to 0.81). Not Chinese: on
/// espeak-ng's Mandarin, which base cannot make out, the short window fell into loops
/// ("104-104-…") and put fewer words on a spoken start (0.69 against 0.82). Not Russian: on
/// recorded speech (the bench's festvox-ru tuning sentences, 103 of them) it took 0.58x the
/// time but heard worse (word error rate 0.164 against 0.157; 16 sentences worse, 6 better),
/// mostly at a piece's first words. Other languages, detection and translation keep the whole
/// window until measured.
const SHORT_WINDOW_LANGUAGES: [&str; 7] = ["en", "es", "fr", "it", "pt", "nl", "ja"];
/// The encoder's window is a whole number of these frames. ggml multiplies matrices with its
/// fast kernel (llamafile's tinyBLAS) only when their sides are multiples of 4 and 16 frames;
/// otherwise the encoder's attention falls back to one dot product at a time. Rounded so, the
/// encoder took 8.0 s rather than 9.8 s on five minutes of speech (tiny.en, 2 threads; the
/// whole window of 1500 frames was one of the slow ones).
const AUDIO_CTX_STEP_FRAMES: usize = 16;
/// The context that makes whisper keep fillers: text written the way it was spoken.
const FILLER_PROMPT: &str = "Umm, let me think like, hmm... Okay, here's what I'm, like, \
                             thinking. Uh, so, um, I mean, you know, uh, it was, er, good.";

/// Tuning of the backend (defaults measured with `scripts/bench-transcribe`).
#[derive(Debug, Clone, Copy, Default)]
struct Tuning {
    gate: GateParams,
    align: AlignParams,
}

/// [`Transcriber`] on a whisper.cpp ggml model, with DTW word timings snapped to the signal.
pub struct WhisperTranscriber {
    context: Context,
    hparams: Hparams,
    name: String,
    tuning: Tuning,
    /// Times English words; without it (models not installed) DTW + snap times stay.
    aligner: Option<Arc<Aligner>>,
    /// Keeps music, noise and silence from the model; without it the amplitude gate alone.
    vad: Option<Arc<Vad>>,
}

impl std::fmt::Debug for WhisperTranscriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WhisperTranscriber")
            .field("name", &self.name)
            .field("multilingual", &self.hparams.is_multilingual())
            .field("aligner", &self.aligner.is_some())
            .field("vad", &self.vad.is_some())
            .finish_non_exhaustive()
    }
}

fn dtw_heads(hp: &Hparams) -> AlignmentHeads {
    let multilingual = hp.is_multilingual();
    match (hp.n_audio_layer, hp.n_text_layer, multilingual) {
        (4, _, false) => AlignmentHeads::TinyEn,
        (4, _, true) => AlignmentHeads::Tiny,
        (6, _, false) => AlignmentHeads::BaseEn,
        (6, _, true) => AlignmentHeads::Base,
        (12, _, false) => AlignmentHeads::SmallEn,
        (12, _, true) => AlignmentHeads::Small,
        (24, _, false) => AlignmentHeads::MediumEn,
        (24, _, true) => AlignmentHeads::Medium,
        (32, 4, _) => AlignmentHeads::LargeV3Turbo,
        (32, _, _) if hp.n_vocab >= 51_866 => AlignmentHeads::LargeV3,
        (32, _, _) => AlignmentHeads::LargeV2,
        // A fine-tune of unknown shape: the top half of the decoder's heads.
        _ => AlignmentHeads::TopMost {
            layers: (hp.n_text_layer as i32 / 2).max(1),
        },
    }
}

impl WhisperTranscriber {
    /// Loads a ggml model file (tiny.en: a fraction of a second; base: about a second), with
    /// the forced aligner and the voice activity model when they are installed (a warning is
    /// logged and coarser word times are used when they are not).
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file cannot be read,
    /// [`Error::ModelLoad`](crate::Error::ModelLoad) when it is not a model whisper.cpp loads.
    pub fn open(path: &Path) -> Result<Self> {
        caption_whisper::route_logs_to_tracing();
        let hparams = ggml::read_hparams(path)?;
        let options = ContextOptions {
            // DTW is silently disabled when flash attention is on.
            flash_attention: false,
            dtw: Some(dtw_heads(&hparams)),
        };
        let context = Context::load(path, options).map_err(|e| Error::ModelLoad {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })?;
        let name = path.file_stem().and_then(|s| s.to_str()).map_or_else(
            || "whisper".to_owned(),
            |s| s.trim_start_matches("ggml-").to_owned(),
        );
        tracing::info!(model = %name, multilingual = hparams.is_multilingual(), "whisper model loaded");
        let aligner = match Aligner::open_installed() {
            Ok(aligner) => Some(Arc::new(aligner)),
            Err(error) => {
                tracing::warn!(%error, "no forced aligner: English word times come from DTW alone");
                None
            }
        };
        let vad = match models::models_dir().and_then(|dir| Vad::open(&dir.join(VAD_MODEL_FILE))) {
            Ok(vad) => Some(Arc::new(vad)),
            Err(error) => {
                tracing::warn!(%error, "no voice activity detection: music and noise may give words");
                None
            }
        };
        Ok(Self {
            context,
            hparams,
            name,
            tuning: Tuning::default(),
            aligner,
            vad,
        })
    }

    /// Uses `aligner` for word times (`None`: DTW and the snap onto the signal only).
    pub fn with_aligner(mut self, aligner: Option<Arc<Aligner>>) -> Self {
        self.aligner = aligner;
        self
    }

    /// Loads an installed model by name (`tiny.en`, `base`) from the models folder.
    ///
    /// # Errors
    ///
    /// As [`WhisperTranscriber::open`], and [`Error::ModelMissing`](crate::Error::ModelMissing)
    /// when the model is not installed.
    pub fn open_installed(name: &str) -> Result<Self> {
        Self::open(&models::installed_model_path(name)?)
    }

    /// The language to force, `None` for detection.
    fn resolve_language(&self, requested: &str) -> Result<Option<&'static str>> {
        let requested = requested.trim().to_ascii_lowercase();
        if requested.is_empty() || requested == "auto" {
            return Ok(if self.hparams.is_multilingual() {
                None
            } else {
                Some("en")
            });
        }
        let id =
            caption_whisper::language_id(&requested).ok_or_else(|| Error::InvalidLanguage {
                language: requested.clone(),
            })?;
        let code = caption_whisper::language_code(id).ok_or(Error::InvalidLanguage {
            language: requested.clone(),
        })?;
        if code != "en" && !self.hparams.is_multilingual() {
            return Err(Error::LanguageNotSupported {
                language: requested,
                model: self.name.clone(),
            });
        }
        Ok(Some(code))
    }

    fn run_chunk(
        &self,
        state: &mut State,
        audio: &[f32],
        language: Option<&'static str>,
        threads: usize,
        options: &TranscribeOptions,
        share: Share,
    ) -> Result<(Vec<Vec<Token>>, Option<&'static str>)> {
        let mut params = Params::new(match options.effective_beam_size() {
            1 => Strategy::Greedy { best_of: BEST_OF },
            beams => Strategy::BeamSearch {
                beam_size: beams as i32,
                patience: -1.0,
            },
        });
        // Held until the piece is transcribed (see `cores`).
        let cores = Cores::take(threads);
        params
            .threads(cores.count())
            .language(language.unwrap_or("auto"))
            .map_err(Error::whisper("setting the language"))?
            .translate(options.translate);
        if options.keep_fillers && language == Some("en") && !options.translate {
            // Whisper writes what its context looks like: a verbatim one keeps the fillers.
            params
                .initial_prompt(FILLER_PROMPT)
                .map_err(Error::whisper("setting the prompt"))?;
        }
        // Every piece stands alone: carrying text over lets one hallucination breed more.
        params
            .no_context(true)
            .token_timestamps(true)
            .suppress_blank(true)
            .suppress_non_speech(true);
        if let Some(cancel) = options.cancel.clone() {
            params.abort_when(move || cancel.load(Ordering::Relaxed));
        }
        if let Some(report) = options.progress.clone() {
            let (shared, base, span) = share;
            params.on_progress(move |percent: i32| {
                let within = (percent.clamp(0, 100) as u32 * u32::from(span) / 100) as u8;
                let overall = base.saturating_add(within).min(99);
                if shared.fetch_max(overall, Ordering::Relaxed) < overall {
                    report(overall);
                }
            });
        }

        let padded;
        let input = if audio.len() < MIN_INPUT_SAMPLES {
            padded = [audio, &vec![0.0; MIN_INPUT_SAMPLES - audio.len()]].concat();
            &padded[..]
        } else {
            audio
        };
        if options.short_window
            && language.is_some_and(|code| SHORT_WINDOW_LANGUAGES.contains(&code))
            && !options.translate
            && let Some(frames) = audio_ctx(input.len(), self.hparams.n_audio_ctx)
        {
            params.audio_ctx(frames);
        }
        let started = std::time::Instant::now();
        let outcome = state.full(&mut params, input);
        drop(cores);
        tracing::debug!(
            audio_s = input.len() as f64 / SAMPLE_RATE_HZ as f64,
            elapsed_s = started.elapsed().as_secs_f64(),
            "whisper ran on a piece"
        );
        if let Err(e) = outcome {
            if options.is_cancelled() {
                return Err(Error::Cancelled);
            }
            return Err(Error::whisper("transcribing")(e));
        }
        let detected = state.language();
        let eot = self.context.token_eot();

        let mut segments = Vec::new();
        for segment in state.segments() {
            let mut tokens: Vec<Token> = Vec::new();
            for i in 0..segment.n_tokens() {
                let Some(data) = segment.token(i) else {
                    continue;
                };
                if data.id >= eot {
                    continue;
                }
                tokens.push(Token {
                    bytes: data.bytes,
                    t0_s: data.t0 as f64 / 100.0,
                    t1_s: data.t1 as f64 / 100.0,
                    dtw_s: (data.t_dtw >= 0).then(|| data.t_dtw as f64 / 100.0),
                    probability: data.p,
                });
            }
            let mean_probability =
                tokens.iter().map(|t| t.probability).sum::<f32>() / tokens.len().max(1) as f32;
            let no_speech = segment.no_speech_probability();
            if no_speech > NO_SPEECH_DROP && mean_probability < LOW_CONFIDENCE {
                tracing::debug!(
                    no_speech,
                    mean_probability,
                    "dropping a segment that is probably not speech"
                );
                continue;
            }
            segments.push(tokens);
        }
        Ok((segments, detected))
    }
}

/// How many encoder frames whisper looks at for a piece of English `samples`: its own frames
/// plus [`AUDIO_CTX_MARGIN_FRAMES`] of silence, rounded up to [`AUDIO_CTX_STEP_FRAMES`] and at
/// most the model's whole window (`n_audio_ctx`, 30 s) rounded down to it; `None` (the whole
/// window) when the piece does not fit in that.
///
/// The encoder's work grows with its window (the attention with its square), and whisper pads
/// every piece to 30 s: a 5 s sentence costs the encoder a sixth of that. The model learnt on
/// speech followed by silence, and with too little of it (1 s) it ends early or breaks words
/// ("If the weather stays dry we will walk across the" for a whole sentence). With 8 s, on the
/// word-timing bench's 123 English clips (tiny.en), the median clip is transcribed 1.75x
/// faster and the word error rate is the whole window's (0.110 against 0.111; lower on clean
/// speech, higher under noise, single words differing either way). Before whisper.cpp's beam
/// search took its top candidates (crates/whisper-sys) it cost about 0.01, and JFK's "ask not"
/// became "asked not": the sampled beams changed with any change of the encoder's output. The
/// window always holds the whole piece (whisper.cpp's DTW asserts it).
fn audio_ctx(samples: usize, n_audio_ctx: usize) -> Option<i32> {
    // The encoder halves the mel frames (10 ms) of the audio: 320 samples a frame.
    let own = samples.div_ceil(2 * SAMPLE_RATE_HZ / 100);
    let whole = n_audio_ctx / AUDIO_CTX_STEP_FRAMES * AUDIO_CTX_STEP_FRAMES;
    let frames = (own + AUDIO_CTX_MARGIN_FRAMES).next_multiple_of(AUDIO_CTX_STEP_FRAMES);
    (own <= whole).then_some(frames.min(whole) as i32)
}

fn shift(tokens: &mut [Token], offset_s: f64) {
    for t in tokens {
        t.t0_s += offset_s;
        t.t1_s += offset_s;
        t.dtw_s = t.dtw_s.map(|d| d + offset_s);
    }
}

/// A translated segment's words spread over the segment's time by their length.
///
/// Translated words do not follow the sounds one by one (the word order and the word count
/// differ between the languages), so the per-token times (DTW) bunch several words into a few
/// milliseconds and push others into the pauses. The segment's own span is what whisper times
/// well; inside it the words share the time by their letters, and [`place_words`] then moves
/// the boundaries into the pauses the signal has.
fn spread_over_segment(words: &mut [RawWord], tokens: &[Token]) {
    let (Some(first), Some(last)) = (tokens.first(), tokens.last()) else {
        return;
    };
    let (start_s, end_s) = (first.t0_s, last.t1_s.max(first.t0_s));
    let weight = |w: &RawWord| f64::from(w.estimate.letters.max(1));
    let total: f64 = words.iter().map(weight).sum();
    let mut at_s = start_s;
    for word in words.iter_mut() {
        let length_s = (end_s - start_s) * weight(word) / total;
        word.estimate.start_s = at_s;
        word.estimate.end_s = at_s + length_s;
        word.estimate.start_from_dtw = false;
        at_s += length_s;
    }
}

/// Words of one piece with times snapped onto its regions.
fn place_words(
    raw: Vec<RawWord>,
    regions: &[Region],
    chunk: &Chunk,
    params: &AlignParams,
) -> Vec<Word> {
    let estimates: Vec<Estimate> = raw
        .iter()
        .map(|w| Estimate {
            start_s: w.estimate.start_s.clamp(chunk.start_s, chunk.end_s),
            end_s: w.estimate.end_s.clamp(chunk.start_s, chunk.end_s),
            ..w.estimate
        })
        .collect();
    tracing::trace!(?estimates, ?regions, "aligning");
    let Some(times) = align::align(&estimates, regions, params) else {
        tracing::debug!(
            words = raw.len(),
            "dropping words heard where the signal is silent"
        );
        return Vec::new();
    };
    raw.into_iter()
        .zip(times)
        .map(|(w, (start_s, end_s))| Word {
            start: round_ms(start_s),
            end: round_ms(end_s),
            word: w.word,
            punctuated_word: w.punctuated,
            confidence: Some((f64::from(w.confidence) * 1000.0).round() / 1000.0),
            ..Default::default()
        })
        .collect()
}

impl WhisperTranscriber {
    /// Whisper's words with DTW times snapped onto the signal, the language, and the signal's
    /// sound and voice.
    fn transcribe_rough(
        &self,
        samples: &[f32],
        options: &TranscribeOptions,
    ) -> Result<(Vec<Word>, Option<&'static str>, Signal)> {
        let mut language = self.resolve_language(&options.language)?;
        if options.translate && !self.hparams.is_multilingual() {
            return Err(Error::CannotTranslate {
                model: self.name.clone(),
            });
        }
        if let Some(index) = samples.iter().position(|x| !x.is_finite()) {
            return Err(Error::NonFiniteAudio { index });
        }
        let total_s = samples.len() as f64 / SAMPLE_RATE_HZ as f64;
        let sound = speech::speech_regions(samples, &self.tuning.gate);
        let vad_started = std::time::Instant::now();
        let voice_of = || self.vad.as_ref().map(|vad| vad.voice(samples)).transpose();
        // Silero runs on one thread; the pitch track does not need its voice, so with a
        // second thread it runs beside it (the same notes either way).
        let (voice, pitched) = if self.vad.is_some() && options.effective_threads() >= 2 {
            std::thread::scope(|scope| {
                let pitched = scope.spawn(|| sung::pitched(samples));
                let voice = voice_of();
                let pitched = pitched
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (voice, Some(pitched))
            })
        } else {
            (voice_of(), None)
        };
        let voice = voice?;
        let singing = voice
            .as_ref()
            .map(|voice| {
                let pitched = pitched.unwrap_or_else(|| sung::pitched(samples));
                sung::singing(samples, pitched, voice)
            })
            .unwrap_or_default();
        tracing::debug!(
            elapsed_s = vad_started.elapsed().as_secs_f64(),
            "voice activity"
        );
        let regions = match &voice {
            Some(voice) => vad::restrict(&sound, &voice.regions),
            None => sound.clone(),
        };
        let regions = chunks::split_long_regions(samples, regions);
        let plan = chunks::plan(&regions, total_s);
        tracing::debug!(
            duration_s = total_s,
            regions = regions.len(),
            chunks = plan.len(),
            "transcribing"
        );

        // The states the last window of this input left, or new ones (a state holds its
        // buffers, ~200 MB for tiny.en: made once an input). Each call seeds the state's random
        // generators alike (crates/whisper-sys), so a piece's words are its own whatever the
        // state ran before.
        let mut states: Vec<State> = options
            .carry
            .as_ref()
            .and_then(|carry| carry.lock().unwrap_or_else(PoisonError::into_inner).take())
            .and_then(|states| states.downcast::<Vec<State>>().ok())
            .map(|states| *states)
            .unwrap_or_default();
        let threads = options.effective_threads();
        let at_once = pieces_at_once(threads, plan.len());
        while states.len() < at_once {
            states.push(
                self.context
                    .new_state()
                    .map_err(Error::whisper("creating a state"))?,
            );
        }
        let decode = |state: &mut State,
                      audio: &[f32],
                      language: Option<&'static str>,
                      threads: usize,
                      share: Share| {
            self.run_chunk(state, audio, language, threads, options, share)
        };
        let hearing = Hearing {
            decode: &decode,
            samples,
            options,
            progress: PieceProgress::new(plan.iter().map(|c| c.end_s - c.start_s).sum()),
        };
        let mut heard = Vec::with_capacity(plan.len());
        // Detection needs the first piece's language before the others are decoded in it.
        if language.is_none()
            && let (Some(chunk), Some(state)) = (plan.first(), states.first_mut())
        {
            let piece = hearing.piece(state, chunk, language, threads)?;
            language = piece.language;
            tracing::info!(language = ?language, "language detected");
            heard.push(piece);
        }
        let rest = &plan[heard.len()..];
        let workers = pieces_at_once(threads, rest.len());
        heard.extend(hearing.side_by_side(
            &mut states[..workers],
            rest,
            language,
            (threads / workers.max(1)).max(1),
        )?);
        if let Some(carry) = &options.carry {
            *carry.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(states));
        }

        let mut words = Vec::new();
        for (chunk, piece) in plan.iter().zip(heard) {
            let mut raw = Vec::new();
            let mut segments = piece.segments;
            words::carry_split_characters(&mut segments);
            for mut tokens in segments {
                shift(&mut tokens, chunk.start_s);
                let mut segment = words::assemble(&tokens);
                if options.translate {
                    spread_over_segment(&mut segment, &tokens);
                }
                raw.extend(segment);
            }
            words.extend(place_words(
                raw,
                &regions[chunk.regions.clone()],
                chunk,
                &self.tuning.align,
            ));
        }
        let voice = voice.map(|mut voice| {
            singing.widen_voice(&mut voice);
            voice
        });
        let signal = Signal {
            sound,
            voice,
            singing,
        };
        let words = words::join_leaning_words(words::split_unspaced_words(words));
        Ok((words, language, signal))
    }

    /// The aligner for words of `language`, when there is one and it aligns that language;
    /// for sung words when `sung`.
    fn language_aligner(&self, language: Option<&str>, sung: bool) -> Option<LanguageAligner<'_>> {
        let aligner = self
            .aligner
            .as_deref()
            .zip(language)
            .and_then(|(aligner, language)| aligner.language(language))?;
        Some(if sung { aligner.sung() } else { aligner })
    }

    /// The aligner's times for the words, on up to the options' threads, in the languages it
    /// aligns ([`Aligner::language`]); in others words keep theirs (see [`refine::refine`] for
    /// what `source` changes).
    fn refine(
        &self,
        samples: &[f32],
        words: &mut Vec<Word>,
        language: Option<&str>,
        signal: &Signal,
        source: refine::Source<'_>,
        options: &TranscribeOptions,
    ) {
        if let Some(aligner) = self.language_aligner(language, signal.singing.sung) {
            let started = std::time::Instant::now();
            let failed = refine::refine(
                &aligner,
                samples,
                words,
                signal,
                &self.tuning.gate,
                source,
                options.effective_threads(),
            );
            tracing::debug!(
                failed,
                elapsed_s = started.elapsed().as_secs_f64(),
                "aligned; failed groups kept their DTW times"
            );
        }
    }
}

fn report(options: &TranscribeOptions, percent: u8) {
    if let Some(progress) = &options.progress {
        progress(percent);
    }
}

impl Transcriber for WhisperTranscriber {
    fn transcribe(&self, samples: &[f32], options: &TranscribeOptions) -> Result<Transcript> {
        report(options, 0);
        let (mut words, language, signal) = self.transcribe_rough(samples, options)?;
        self.refine(
            samples,
            &mut words,
            language,
            &signal,
            refine::Source::Heard,
            options,
        );
        caption_core::mark_fillers(&mut words);
        report(options, 100);
        Ok(Transcript {
            words,
            language: language.map(str::to_owned),
        })
    }

    fn align_text(
        &self,
        samples: &[f32],
        text: &GivenText,
        options: &TranscribeOptions,
    ) -> Result<Transcript> {
        report(options, 0);
        let (heard, language, signal) = self.transcribe_rough(samples, options)?;
        let total_s = samples.len() as f64 / SAMPLE_RATE_HZ as f64;
        // A sung text is laid on the voice with its held notes (Silero alone heard 8.7 s of a
        // song sung over 24 s, and its 22 words were put in the first 12 s).
        let voice = signal.voice.as_ref().map(|voice| &voice.regions[..]);
        let given_words = match text {
            GivenText::Plain(text) => text.split_whitespace().count(),
            GivenText::Cues(cues) => caption_core::cues_to_words(cues).len(),
        };
        let voiced = on_voice::voiced_stretches(voice, &signal.sound, total_s, given_words);
        tracing::debug!(
            stretches = ?voiced.iter().map(|r| (round_ms(r.start_s), round_ms(r.end_s))).collect::<Vec<_>>(),
            "the voice a given text may be laid on"
        );
        let mut words = match text {
            GivenText::Plain(text) => given::place_plain(
                text,
                &heard,
                total_s,
                &signal.sound,
                &voiced,
                signal.singing.sung,
            ),
            GivenText::Cues(cues) => given::place_cues(cues, &heard, total_s, &signal.sound),
        };
        let line_starts = match text {
            GivenText::Plain(text) => lines::line_starts(text),
            GivenText::Cues(_) => Vec::new(),
        };
        if let GivenText::Plain(text) = text
            && given::heard_share(text, &heard) < on_voice::HEARD_LITTLE
        {
            let aligner = self.language_aligner(language, signal.singing.sung);
            on_voice::lay_on_voice(aligner.as_ref(), samples, &mut words, &line_starts, &voiced);
        }
        lines::keep_lines_whole(&mut words, &line_starts, &voiced);
        // Cues may run past the audio; words are kept inside it. (`max`/`min`, not `clamp`:
        // a start rounded up past the end must not panic.)
        for word in &mut words {
            word.start = round_ms(word.start.max(0.0).min(total_s));
            word.end = round_ms(word.end.min(total_s)).max(word.start);
        }
        let source = refine::Source::Given {
            line_starts: &line_starts,
        };
        self.refine(samples, &mut words, language, &signal, source, options);
        caption_core::mark_fillers(&mut words);
        report(options, 100);
        Ok(Transcript {
            words,
            language: language.map(str::to_owned),
        })
    }

    fn voice_regions(&self, samples: &[f32]) -> Result<Vec<caption_core::Span>> {
        if let Some(index) = samples.iter().position(|x| !x.is_finite()) {
            return Err(Error::NonFiniteAudio { index });
        }
        let sound = speech::speech_regions(samples, &self.tuning.gate);
        let regions = match &self.vad {
            Some(vad) => vad::restrict(&sound, &vad.speech(samples)?),
            None => sound,
        };
        Ok(regions
            .into_iter()
            .map(|r| caption_core::Span::new(r.start_s, r.end_s))
            .collect())
    }

    fn is_multilingual(&self) -> bool {
        self.hparams.is_multilingual()
    }

    fn model_name(&self) -> &str {
        &self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_encoder_window_is_the_piece_and_eight_seconds_of_silence_in_whole_steps() {
        let seconds = |s: f64| (s * SAMPLE_RATE_HZ as f64) as usize;
        // 250 + 400 and 75 + 400 frames, rounded up to whole steps of 16.
        assert_eq!(audio_ctx(seconds(5.0), 1500), Some(656));
        assert_eq!(audio_ctx(seconds(1.5), 1500), Some(480));
        // A piece of 22 s or more gets the whole window, rounded down to 1488 frames.
        assert_eq!(audio_ctx(seconds(22.0), 1500), Some(1488));
        assert_eq!(audio_ctx(seconds(28.0), 1500), Some(1488));
        // One that does not fit in that gets the model's own 1500.
        assert_eq!(audio_ctx(seconds(29.9), 1500), None);
        // Whatever the length, the window holds all of the piece's 10 ms mel frames, in
        // whole steps.
        for samples in (0..seconds(30.0)).step_by(997) {
            if let Some(frames) = audio_ctx(samples, 1500) {
                assert!(frames as usize * 2 >= samples.div_ceil(160), "{samples}");
                assert_eq!(frames % 16, 0, "{samples}");
            }
        }
    }
}
