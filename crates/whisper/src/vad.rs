//! Silero voice activity detection as whisper.cpp runs it.

use std::ffi::{CString, c_int};
use std::path::Path;
use std::ptr::NonNull;

use caption_whisper_sys as sys;

use crate::{Error, Result};

/// A loaded voice activity model, one detection at a time.
#[derive(Debug)]
pub struct VadContext(NonNull<sys::whisper_vad_context>);

// SAFETY: used by one thread at a time (every method that runs the model takes `&mut self`);
// it may move between threads.
unsafe impl Send for VadContext {}

impl Drop for VadContext {
    fn drop(&mut self) {
        // SAFETY: allocated by whisper_vad_init_from_file_with_params, freed once.
        unsafe { sys::whisper_vad_free(self.0.as_ptr()) };
    }
}

/// How probabilities become speech segments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VadParams {
    /// A frame at or above this probability is speech.
    pub threshold: f32,
    /// Shorter speech is dropped, milliseconds.
    pub min_speech_ms: i32,
    /// Shorter pauses do not end a segment, milliseconds.
    pub min_silence_ms: i32,
    /// Added before and after each segment, milliseconds.
    pub speech_pad_ms: i32,
}

/// One stretch of speech, in centiseconds from the start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VadSegment {
    /// Start, centiseconds.
    pub start: f32,
    /// End, centiseconds.
    pub end: f32,
}

impl VadContext {
    /// Loads the ggml Silero model at `path`, run on `threads` threads.
    ///
    /// # Errors
    ///
    /// [`Error::Load`] when whisper.cpp cannot load it.
    pub fn load(path: &Path, threads: usize) -> Result<Self> {
        let c_path = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| Error::Nul { what: "model path" })?;
        // SAFETY: plain values.
        let mut params = unsafe { sys::whisper_vad_default_context_params() };
        params.n_threads = c_int::try_from(threads.max(1)).unwrap_or(1);
        params.use_gpu = false;
        // SAFETY: a NUL-terminated path that outlives the call; the params by value.
        let raw = unsafe { sys::whisper_vad_init_from_file_with_params(c_path.as_ptr(), params) };
        NonNull::new(raw).map(Self).ok_or_else(|| Error::Load {
            path: path.to_path_buf(),
        })
    }

    /// Runs the model over `samples` (16 kHz mono): one probability per 512-sample frame,
    /// read with [`VadContext::probabilities`].
    ///
    /// # Errors
    ///
    /// [`Error::Vad`] when whisper.cpp fails.
    pub fn detect(&mut self, samples: &[f32]) -> Result<()> {
        let len = c_int::try_from(samples.len()).map_err(|_| Error::Vad("too many samples"))?;
        // SAFETY: a live context; the samples outlive the call.
        let ok = unsafe { sys::whisper_vad_detect_speech(self.0.as_ptr(), samples.as_ptr(), len) };
        if ok {
            Ok(())
        } else {
            Err(Error::Vad("whisper_vad_detect_speech"))
        }
    }

    /// The last detection's probability per frame.
    pub fn probabilities(&self) -> &[f32] {
        // SAFETY: a live context; the array is its own, valid until the next detection (which
        // needs `&mut self`).
        unsafe {
            let n = usize::try_from(sys::whisper_vad_n_probs(self.0.as_ptr())).unwrap_or(0);
            let probs = sys::whisper_vad_probs(self.0.as_ptr());
            if probs.is_null() || n == 0 {
                return &[];
            }
            std::slice::from_raw_parts(probs, n)
        }
    }

    /// The last detection's speech segments under `params`.
    ///
    /// # Errors
    ///
    /// [`Error::Vad`] when whisper.cpp fails.
    pub fn segments(&mut self, params: VadParams) -> Result<Vec<VadSegment>> {
        // SAFETY: plain values.
        let mut raw = unsafe { sys::whisper_vad_default_params() };
        raw.threshold = params.threshold;
        raw.min_speech_duration_ms = params.min_speech_ms;
        raw.min_silence_duration_ms = params.min_silence_ms;
        raw.speech_pad_ms = params.speech_pad_ms;
        // SAFETY: a live context after a detection; the segments are freed below.
        let segments = unsafe { sys::whisper_vad_segments_from_probs(self.0.as_ptr(), raw) };
        if segments.is_null() {
            return Err(Error::Vad("whisper_vad_segments_from_probs"));
        }
        // SAFETY: a live segment list, read within its count, then freed once.
        unsafe {
            let n = sys::whisper_vad_segments_n_segments(segments);
            let out = (0..n.max(0))
                .map(|i| VadSegment {
                    start: sys::whisper_vad_segments_get_segment_t0(segments, i),
                    end: sys::whisper_vad_segments_get_segment_t1(segments, i),
                })
                .collect();
            sys::whisper_vad_free_segments(segments);
            Ok(out)
        }
    }
}
