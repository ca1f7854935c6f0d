//! A safe interface to whisper.cpp as `caption-whisper-sys` builds it (a deterministic beam
//! search, 8-bit logits for English-only models, ggml's tiled kernels): what a program that
//! depends on this crate runs is that build, with no settings of its own.
//!
//! - [`Context`]: a loaded model, shared by threads; [`Context::new_state`] gives each
//!   transcription its own working memory ([`State`]).
//! - [`Params`]: one call's decoding settings; [`State::full`] runs it on 16 kHz mono samples,
//!   then [`State::segments`] reads the tokens with their times and probabilities.
//! - [`VadContext`]: Silero voice activity, per 512-sample frame and as speech segments.
//! - [`language_id`] and [`language_code`]: whisper's language table.
//!
//! whisper.cpp's log lines go to `tracing` (target `caption_whisper`) once
//! [`route_logs_to_tracing`] is called.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::{Arc, Once};

use caption_whisper_sys as sys;

mod vad;

pub use vad::{VadContext, VadParams, VadSegment};

/// What went wrong in whisper.cpp.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The model file could not be loaded.
    #[error("whisper.cpp could not load {path}")]
    Load {
        /// The file.
        path: PathBuf,
    },
    /// A path or a string holds a NUL byte, which C cannot take.
    #[error("{what} holds a NUL byte")]
    Nul {
        /// Which argument.
        what: &'static str,
    },
    /// whisper.cpp could not allocate a state (out of memory).
    #[error("whisper.cpp could not allocate a state")]
    State,
    /// No samples were given.
    #[error("no samples to transcribe")]
    NoSamples,
    /// The transcription failed with whisper.cpp's return code (-1: the spectrogram, 7: the
    /// encoder, 8: the decoder; also what an abort callback that stopped it returns).
    #[error("whisper.cpp failed with code {0}")]
    Full(i32),
    /// Voice activity detection failed.
    #[error("voice activity detection failed: {0}")]
    Vad(&'static str),
}

/// Result of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Which of a model's attention heads align text to audio (DTW token times); one per model
/// size, as whisper.cpp names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AlignmentHeads {
    /// tiny.en
    TinyEn,
    /// tiny
    Tiny,
    /// base.en
    BaseEn,
    /// base
    Base,
    /// small.en
    SmallEn,
    /// small
    Small,
    /// medium.en
    MediumEn,
    /// medium
    Medium,
    /// large-v1
    LargeV1,
    /// large-v2
    LargeV2,
    /// large-v3
    LargeV3,
    /// large-v3-turbo
    LargeV3Turbo,
    /// Every head of the decoder's top `layers` layers (a model of unknown shape).
    TopMost {
        /// Text layers from the top.
        layers: i32,
    },
}

impl AlignmentHeads {
    fn preset(self) -> sys::whisper_alignment_heads_preset {
        match self {
            Self::TinyEn => sys::whisper_alignment_heads_preset_WHISPER_AHEADS_TINY_EN,
            Self::Tiny => sys::whisper_alignment_heads_preset_WHISPER_AHEADS_TINY,
            Self::BaseEn => sys::whisper_alignment_heads_preset_WHISPER_AHEADS_BASE_EN,
            Self::Base => sys::whisper_alignment_heads_preset_WHISPER_AHEADS_BASE,
            Self::SmallEn => sys::whisper_alignment_heads_preset_WHISPER_AHEADS_SMALL_EN,
            Self::Small => sys::whisper_alignment_heads_preset_WHISPER_AHEADS_SMALL,
            Self::MediumEn => sys::whisper_alignment_heads_preset_WHISPER_AHEADS_MEDIUM_EN,
            Self::Medium => sys::whisper_alignment_heads_preset_WHISPER_AHEADS_MEDIUM,
            Self::LargeV1 => sys::whisper_alignment_heads_preset_WHISPER_AHEADS_LARGE_V1,
            Self::LargeV2 => sys::whisper_alignment_heads_preset_WHISPER_AHEADS_LARGE_V2,
            Self::LargeV3 => sys::whisper_alignment_heads_preset_WHISPER_AHEADS_LARGE_V3,
            Self::LargeV3Turbo => sys::whisper_alignment_heads_preset_WHISPER_AHEADS_LARGE_V3_TURBO,
            Self::TopMost { .. } => sys::whisper_alignment_heads_preset_WHISPER_AHEADS_N_TOP_MOST,
        }
    }
}

/// How a model is loaded: on the CPU, without flash attention (which turns DTW off), and with
/// DTW token times from `dtw`'s heads when given.
#[derive(Debug, Clone, Copy, Default)]
pub struct ContextOptions {
    /// Flash attention in the encoder and decoder; DTW token times need it off.
    pub flash_attention: bool,
    /// DTW token times (each token's `t_dtw`) from these heads; `None` leaves them off.
    pub dtw: Option<AlignmentHeads>,
}

/// Working memory DTW may use, as whisper.cpp's own examples give it.
const DTW_MEMORY_BYTES: usize = 128 * 1024 * 1024;

/// The loaded model; freed when its last state is gone.
#[derive(Debug)]
struct Model(NonNull<sys::whisper_context>);

// SAFETY: a whisper_context is read-only after loading; every call that changes memory takes a
// whisper_state, which is one thread's at a time (`State` is `Send`, not `Sync`).
unsafe impl Send for Model {}
// SAFETY: as above.
unsafe impl Sync for Model {}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: the pointer came from whisper_init_from_file_with_params_no_state and is
        // freed once, here, after every state (each holds an `Arc` of this) is gone.
        unsafe { sys::whisper_free(self.0.as_ptr()) };
    }
}

/// A loaded whisper model: cheap to clone, shared by threads.
#[derive(Debug, Clone)]
pub struct Context {
    model: Arc<Model>,
}

impl Context {
    /// Loads the ggml model at `path`.
    ///
    /// # Errors
    ///
    /// [`Error::Load`] when whisper.cpp cannot load it, [`Error::Nul`] for a path C cannot
    /// take.
    pub fn load(path: &Path, options: ContextOptions) -> Result<Self> {
        let c_path = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| Error::Nul { what: "model path" })?;
        // SAFETY: plain values, no pointers held.
        let mut params = unsafe { sys::whisper_context_default_params() };
        params.use_gpu = false;
        params.flash_attn = options.flash_attention;
        params.gpu_device = 0;
        params.dtw_token_timestamps = options.dtw.is_some();
        params.dtw_aheads_preset = options.dtw.map_or(
            sys::whisper_alignment_heads_preset_WHISPER_AHEADS_NONE,
            AlignmentHeads::preset,
        );
        params.dtw_n_top = match options.dtw {
            Some(AlignmentHeads::TopMost { layers }) => layers.max(1),
            _ => -1,
        };
        params.dtw_aheads = sys::whisper_aheads {
            n_heads: 0,
            heads: std::ptr::null(),
        };
        params.dtw_mem_size = DTW_MEMORY_BYTES;
        // SAFETY: a NUL-terminated path that outlives the call; the params by value.
        let raw =
            unsafe { sys::whisper_init_from_file_with_params_no_state(c_path.as_ptr(), params) };
        let model = NonNull::new(raw).ok_or_else(|| Error::Load {
            path: path.to_path_buf(),
        })?;
        Ok(Self {
            model: Arc::new(Model(model)),
        })
    }

    fn raw(&self) -> *mut sys::whisper_context {
        self.model.0.as_ptr()
    }

    /// A new state: the working memory of one transcription at a time.
    ///
    /// # Errors
    ///
    /// [`Error::State`] when whisper.cpp cannot allocate it.
    pub fn new_state(&self) -> Result<State> {
        // SAFETY: a live context.
        let raw = unsafe { sys::whisper_init_state(self.raw()) };
        let state = NonNull::new(raw).ok_or(Error::State)?;
        Ok(State {
            context: self.clone(),
            state,
        })
    }

    /// The end-of-text token; every token id at or above it is a special token.
    pub fn token_eot(&self) -> i32 {
        // SAFETY: a live context.
        unsafe { sys::whisper_token_eot(self.raw()) }
    }
}

/// One transcription's working memory, holding its model alive.
#[derive(Debug)]
pub struct State {
    context: Context,
    state: NonNull<sys::whisper_state>,
}

// SAFETY: a whisper_state is used by one thread at a time (every method takes `&mut self` or
// reads results after the call that wrote them); it may move between threads.
unsafe impl Send for State {}

impl Drop for State {
    fn drop(&mut self) {
        // SAFETY: allocated by whisper_init_state, freed once; the context outlives it.
        unsafe { sys::whisper_free_state(self.state.as_ptr()) };
    }
}

/// How the decoder picks tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Strategy {
    /// The most likely token each step; `best_of` candidates when sampling at a temperature.
    Greedy {
        /// Candidates sampled at a raised temperature.
        best_of: i32,
    },
    /// A beam search of `beam_size` beams.
    BeamSearch {
        /// Beams (at least 1).
        beam_size: i32,
        /// whisper.cpp's patience (-1: its default).
        patience: f32,
    },
}

type ProgressFn<'a> = Box<dyn FnMut(i32) + 'a>;
type AbortFn<'a> = Box<dyn FnMut() -> bool + 'a>;

/// One call's decoding settings (whisper.cpp's defaults for the strategy, then what is set).
pub struct Params<'a> {
    raw: sys::whisper_full_params,
    language: Option<CString>,
    initial_prompt: Option<CString>,
    // Boxed twice: the outer box's address is the callback's user data, stable however the
    // `Params` moves.
    progress: Option<Box<ProgressFn<'a>>>,
    abort: Option<Box<AbortFn<'a>>>,
}

impl std::fmt::Debug for Params<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Params")
            .field("strategy", &self.raw.strategy)
            .field("n_threads", &self.raw.n_threads)
            .field("language", &self.language)
            .field("progress", &self.progress.is_some())
            .field("abort", &self.abort.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a> Params<'a> {
    /// whisper.cpp's defaults for `strategy`, nothing printed on stdout.
    pub fn new(strategy: Strategy) -> Self {
        let kind = match strategy {
            Strategy::Greedy { .. } => sys::whisper_sampling_strategy_WHISPER_SAMPLING_GREEDY,
            Strategy::BeamSearch { .. } => {
                sys::whisper_sampling_strategy_WHISPER_SAMPLING_BEAM_SEARCH
            }
        };
        // SAFETY: plain values; the pointers in it are null or static.
        let mut raw = unsafe { sys::whisper_full_default_params(kind) };
        match strategy {
            Strategy::Greedy { best_of } => raw.greedy.best_of = best_of,
            Strategy::BeamSearch {
                beam_size,
                patience,
            } => {
                raw.beam_search.beam_size = beam_size.max(1);
                raw.beam_search.patience = patience;
            }
        }
        raw.print_special = false;
        raw.print_progress = false;
        raw.print_realtime = false;
        raw.print_timestamps = false;
        Self {
            raw,
            language: None,
            initial_prompt: None,
            progress: None,
            abort: None,
        }
    }

    /// Threads of the encoder and decoder.
    pub fn threads(&mut self, threads: usize) -> &mut Self {
        self.raw.n_threads = c_int::try_from(threads.max(1)).unwrap_or(c_int::MAX);
        self
    }

    /// The spoken language's code (`"en"`), or `"auto"` to detect it.
    ///
    /// # Errors
    ///
    /// [`Error::Nul`] for a code holding a NUL byte.
    pub fn language(&mut self, code: &str) -> Result<&mut Self> {
        self.language = Some(CString::new(code).map_err(|_| Error::Nul { what: "language" })?);
        Ok(self)
    }

    /// English words for speech in another language.
    pub fn translate(&mut self, translate: bool) -> &mut Self {
        self.raw.translate = translate;
        self
    }

    /// Text the decoder reads as what came before.
    ///
    /// # Errors
    ///
    /// [`Error::Nul`] for a prompt holding a NUL byte.
    pub fn initial_prompt(&mut self, prompt: &str) -> Result<&mut Self> {
        self.initial_prompt = Some(CString::new(prompt).map_err(|_| Error::Nul {
            what: "initial prompt",
        })?);
        Ok(self)
    }

    /// No text carried over from the state's previous call.
    pub fn no_context(&mut self, no_context: bool) -> &mut Self {
        self.raw.no_context = no_context;
        self
    }

    /// Each token's `t0`/`t1` from the timestamp tokens.
    pub fn token_timestamps(&mut self, on: bool) -> &mut Self {
        self.raw.token_timestamps = on;
        self
    }

    /// No blank at the start of a segment.
    pub fn suppress_blank(&mut self, on: bool) -> &mut Self {
        self.raw.suppress_blank = on;
        self
    }

    /// No non-speech tokens (music notes, brackets, ...).
    pub fn suppress_non_speech(&mut self, on: bool) -> &mut Self {
        self.raw.suppress_nst = on;
        self
    }

    /// The encoder's window in frames (0: the model's whole 30 s).
    pub fn audio_ctx(&mut self, frames: i32) -> &mut Self {
        self.raw.audio_ctx = frames;
        self
    }

    /// The first decoding temperature.
    pub fn temperature(&mut self, temperature: f32) -> &mut Self {
        self.raw.temperature = temperature;
        self
    }

    /// How much the temperature rises on each fallback (0: no fallback).
    pub fn temperature_increment(&mut self, increment: f32) -> &mut Self {
        self.raw.temperature_inc = increment;
        self
    }

    /// Called with the percentage done as the call goes on.
    pub fn on_progress(&mut self, progress: impl FnMut(i32) + 'a) -> &mut Self {
        self.progress = Some(Box::new(Box::new(progress)));
        self
    }

    /// Asked before each step of computation: `true` stops the call, which then fails.
    pub fn abort_when(&mut self, abort: impl FnMut() -> bool + 'a) -> &mut Self {
        self.abort = Some(Box::new(Box::new(abort)));
        self
    }

    /// The raw parameters with the pointers into `self` set; valid while `self` is borrowed.
    fn prepared(&mut self) -> sys::whisper_full_params {
        let mut raw = self.raw;
        raw.language = self
            .language
            .as_ref()
            .map_or(std::ptr::null(), |c| c.as_ptr());
        raw.initial_prompt = self
            .initial_prompt
            .as_ref()
            .map_or(std::ptr::null(), |c| c.as_ptr());
        if let Some(progress) = self.progress.as_mut() {
            raw.progress_callback = Some(progress_trampoline);
            raw.progress_callback_user_data =
                std::ptr::from_mut::<ProgressFn<'a>>(progress.as_mut()).cast();
        }
        if let Some(abort) = self.abort.as_mut() {
            raw.abort_callback = Some(abort_trampoline);
            raw.abort_callback_user_data = std::ptr::from_mut::<AbortFn<'a>>(abort.as_mut()).cast();
        }
        raw
    }
}

unsafe extern "C" fn progress_trampoline(
    _: *mut sys::whisper_context,
    _: *mut sys::whisper_state,
    percent: c_int,
    user_data: *mut c_void,
) {
    // SAFETY: `user_data` is the `ProgressFn` that `Params::prepared` pointed it at, alive and
    // not otherwise borrowed for the whole call (`State::full` holds `&mut Params`).
    let progress = unsafe { &mut *user_data.cast::<ProgressFn<'_>>() };
    // A panic must not unwind into C.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| progress(percent)));
}

unsafe extern "C" fn abort_trampoline(user_data: *mut c_void) -> bool {
    // SAFETY: as in `progress_trampoline`, for the `AbortFn`.
    let abort = unsafe { &mut *user_data.cast::<AbortFn<'_>>() };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(abort)).unwrap_or(true)
}

/// One token of a segment: its id, text and times.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenData {
    /// The token id ([`Context::token_eot`] and above are special).
    pub id: i32,
    /// Its text, bytes as the vocabulary holds them (a character may be split across tokens).
    pub bytes: Vec<u8>,
    /// Start, centiseconds, from the timestamp tokens.
    pub t0: i64,
    /// End, centiseconds.
    pub t1: i64,
    /// When DTW places the token, centiseconds; negative when DTW is off.
    pub t_dtw: i64,
    /// The token's probability.
    pub p: f32,
}

/// One segment of a finished call.
#[derive(Debug)]
pub struct Segment<'s> {
    state: &'s State,
    index: c_int,
}

impl Segment<'_> {
    /// How many tokens it has.
    pub fn n_tokens(&self) -> usize {
        // SAFETY: a live state and a segment index below its count.
        let n =
            unsafe { sys::whisper_full_n_tokens_from_state(self.state.state.as_ptr(), self.index) };
        usize::try_from(n).unwrap_or(0)
    }

    /// Token `i` (below [`Segment::n_tokens`]).
    pub fn token(&self, i: usize) -> Option<TokenData> {
        if i >= self.n_tokens() {
            return None;
        }
        let i = c_int::try_from(i).ok()?;
        let (context, state) = (self.state.context.raw(), self.state.state.as_ptr());
        // SAFETY: live context and state, indices in range; the text pointer is owned by the
        // vocabulary and read at once.
        unsafe {
            let data = sys::whisper_full_get_token_data_from_state(state, self.index, i);
            let text = sys::whisper_full_get_token_text_from_state(context, state, self.index, i);
            let bytes = if text.is_null() {
                Vec::new()
            } else {
                CStr::from_ptr(text).to_bytes().to_vec()
            };
            Some(TokenData {
                id: data.id,
                bytes,
                t0: data.t0,
                t1: data.t1,
                t_dtw: data.t_dtw,
                p: data.p,
            })
        }
    }

    /// How sure the model is that the segment holds no speech.
    pub fn no_speech_probability(&self) -> f32 {
        // SAFETY: a live state and a segment index below its count.
        unsafe {
            sys::whisper_full_get_segment_no_speech_prob_from_state(
                self.state.state.as_ptr(),
                self.index,
            )
        }
    }
}

impl State {
    /// Transcribes `samples` (16 kHz mono, -1..1) with `params`; the result is read with
    /// [`State::segments`].
    ///
    /// # Errors
    ///
    /// [`Error::NoSamples`] for none, [`Error::Full`] when whisper.cpp fails or an abort
    /// callback stopped it.
    pub fn full(&mut self, params: &mut Params<'_>, samples: &[f32]) -> Result<()> {
        if samples.is_empty() {
            return Err(Error::NoSamples);
        }
        let len = c_int::try_from(samples.len()).map_err(|_| Error::Full(-1))?;
        let raw = params.prepared();
        // SAFETY: live context and state; the samples and every pointer in `raw` (strings and
        // callbacks' data in `params`, borrowed mutably here) outlive the call.
        let code = unsafe {
            sys::whisper_full_with_state(
                self.context.raw(),
                self.state.as_ptr(),
                raw,
                samples.as_ptr(),
                len,
            )
        };
        if code == 0 {
            Ok(())
        } else {
            Err(Error::Full(code))
        }
    }

    /// The last call's segments, in order.
    pub fn segments(&self) -> impl Iterator<Item = Segment<'_>> {
        // SAFETY: a live state.
        let n = unsafe { sys::whisper_full_n_segments_from_state(self.state.as_ptr()) };
        (0..n.max(0)).map(move |index| Segment { state: self, index })
    }

    /// The language the last call spoke (detected or forced), as its code.
    pub fn language(&self) -> Option<&'static str> {
        // SAFETY: a live state.
        language_code(unsafe { sys::whisper_full_lang_id_from_state(self.state.as_ptr()) })
    }
}

/// whisper's id for a language code or English name (`"de"`, `"german"`).
pub fn language_id(language: &str) -> Option<i32> {
    let c = CString::new(language).ok()?;
    // SAFETY: a NUL-terminated string that outlives the call.
    let id = unsafe { sys::whisper_lang_id(c.as_ptr()) };
    (id >= 0).then_some(id)
}

/// The code of whisper's language `id` (`2` → `"de"`).
pub fn language_code(id: i32) -> Option<&'static str> {
    if id < 0 {
        return None;
    }
    // SAFETY: whisper.cpp returns null or a pointer into its static language table.
    let code = unsafe { sys::whisper_lang_str(id) };
    if code.is_null() {
        return None;
    }
    // SAFETY: as above; the table lives as long as the program.
    unsafe { CStr::from_ptr(code) }.to_str().ok()
}

/// Sends whisper.cpp's and ggml's log lines to `tracing` (target `caption_whisper`) instead of
/// stderr; once per process, later calls do nothing.
pub fn route_logs_to_tracing() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: a callback of the right type that stays valid for the program's life.
        unsafe {
            sys::whisper_log_set(Some(log_line), std::ptr::null_mut());
            sys::ggml_log_set(Some(log_line), std::ptr::null_mut());
        }
    });
}

unsafe extern "C" fn log_line(level: sys::ggml_log_level, text: *const c_char, _: *mut c_void) {
    if text.is_null() {
        return;
    }
    // SAFETY: whisper.cpp passes a NUL-terminated line that lives for the call.
    let line = unsafe { CStr::from_ptr(text) }.to_string_lossy();
    let line = line.trim_end();
    if line.is_empty() {
        return;
    }
    match level {
        sys::ggml_log_level_GGML_LOG_LEVEL_ERROR => tracing::error!("{line}"),
        sys::ggml_log_level_GGML_LOG_LEVEL_WARN => tracing::warn!("{line}"),
        sys::ggml_log_level_GGML_LOG_LEVEL_INFO => tracing::info!("{line}"),
        _ => tracing::debug!("{line}"),
    }
}
