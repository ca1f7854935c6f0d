//! Pieces of one input decoded side by side, each on a whisper state of its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};

use caption_whisper::State;

use crate::chunks::Chunk;
use crate::error::{Error, Result};
use crate::transcriber::TranscribeOptions;
use crate::words::Token;

/// A piece's part of the progress: the percent reported so far (shared by the pieces), the
/// percent done when the piece began, and the piece's own share.
pub(crate) type Share = (Arc<AtomicU8>, u8, u8);

/// How one piece is decoded: on a state, its samples, in a language (`None`: detected), on a
/// number of threads, reporting its progress as its [`Share`]; its segments' tokens and the
/// language it was decoded in.
pub(crate) type Decode<'a> = dyn Fn(
        &mut State,
        &[f32],
        Option<&'static str>,
        usize,
        Share,
    ) -> Result<(Vec<Vec<Token>>, Option<&'static str>)>
    + Sync
    + 'a;

/// Pieces decoded at once at most (see [`pieces_at_once`]); each holds a state of its own
/// (about 200 MB with tiny.en).
const MAX_PIECES_AT_ONCE: usize = 4;

/// What whisper heard in one piece: its segments' tokens (times from the piece's start) and the
/// language it was decoded in.
pub(crate) struct Heard {
    pub(crate) segments: Vec<Vec<Token>>,
    pub(crate) language: Option<&'static str>,
}

/// How many pieces are decoded at once on `threads` cores: one a core, up to
/// [`MAX_PIECES_AT_ONCE`] and the number of pieces.
///
/// ggml's threads wait for each other at every operation of a run, and the decoder's steps are
/// small: on two cores a piece took 1.6x less time on two threads than on one, where two pieces
/// side by side, one thread each, take each core whole. Pieces are independent (each stands
/// alone: whisper gets no text from before it), so they are decoded side by side, each on its
/// own state.
pub(crate) fn pieces_at_once(threads: usize, pieces: usize) -> usize {
    threads.min(pieces).min(MAX_PIECES_AT_ONCE)
}

/// Progress of pieces that may run at once: a piece reports from what was done when it began
/// up to its own share, and the done share grows as pieces end.
pub(crate) struct PieceProgress {
    planned_s: f64,
    done_ms: AtomicU64,
    reported: Arc<AtomicU8>,
}

impl PieceProgress {
    pub(crate) fn new(planned_s: f64) -> Self {
        Self {
            planned_s: planned_s.max(f64::EPSILON),
            done_ms: AtomicU64::new(0),
            reported: Arc::default(),
        }
    }

    fn percent(&self, seconds: f64) -> u8 {
        (seconds / self.planned_s * 100.0).clamp(0.0, 100.0) as u8
    }

    /// The shared counter, the percent done when `chunk` begins and its share.
    fn begin(&self, chunk: &Chunk) -> Share {
        let done_s = self.done_ms.load(Ordering::Relaxed) as f64 / 1000.0;
        let share = ((chunk.end_s - chunk.start_s) / self.planned_s * 100.0).ceil() as u8;
        (self.reported.clone(), self.percent(done_s), share)
    }

    fn end(&self, chunk: &Chunk, options: &TranscribeOptions) {
        let piece_ms = ((chunk.end_s - chunk.start_s) * 1000.0).round() as u64;
        let done_ms = self.done_ms.fetch_add(piece_ms, Ordering::Relaxed) + piece_ms;
        let overall = self.percent(done_ms as f64 / 1000.0).min(99);
        if let Some(report) = &options.progress
            && self.reported.fetch_max(overall, Ordering::Relaxed) < overall
        {
            report(overall);
        }
    }
}

/// One input's pieces as whisper hears them: what each piece needs besides its state.
pub(crate) struct Hearing<'a> {
    pub(crate) decode: &'a Decode<'a>,
    pub(crate) samples: &'a [f32],
    pub(crate) options: &'a TranscribeOptions,
    pub(crate) progress: PieceProgress,
}

impl Hearing<'_> {
    /// Decodes the piece `chunk` on `state` with `threads` threads.
    pub(crate) fn piece(
        &self,
        state: &mut State,
        chunk: &Chunk,
        language: Option<&'static str>,
        threads: usize,
    ) -> Result<Heard> {
        if self.options.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let range = chunk.samples(self.samples.len());
        let (segments, detected) = (self.decode)(
            state,
            &self.samples[range],
            language,
            threads,
            self.progress.begin(chunk),
        )?;
        self.progress.end(chunk, self.options);
        Ok(Heard {
            segments,
            language: language.or(detected),
        })
    }

    /// Decodes `pieces` in `language`, as many at once as there are `states` (each piece on
    /// `threads` threads), the longest first as the states come free, so that no state is left
    /// with a long piece while the others wait; what was heard, in the pieces' order. Each
    /// decoding seeds its state's random generators (crates/whisper-sys), so which state
    /// decodes a piece does not change its words. The first error stops the rest.
    pub(crate) fn side_by_side(
        &self,
        states: &mut [State],
        pieces: &[Chunk],
        language: Option<&'static str>,
        threads: usize,
    ) -> Result<Vec<Heard>> {
        let mut longest_first: Vec<usize> = (0..pieces.len()).collect();
        longest_first.sort_by(|&a, &b| {
            let length = |i: usize| pieces[i].end_s - pieces[i].start_s;
            length(b).total_cmp(&length(a))
        });
        let next = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let decode = |state: &mut State| {
            let mut heard = Vec::new();
            loop {
                let taken = next.fetch_add(1, Ordering::Relaxed);
                let Some(&index) = longest_first.get(taken) else {
                    return Ok(heard);
                };
                if failed.load(Ordering::Relaxed) {
                    return Ok(heard);
                }
                match self.piece(state, &pieces[index], language, threads) {
                    Ok(piece) => heard.push((index, piece)),
                    Err(error) => {
                        failed.store(true, Ordering::Relaxed);
                        return Err(error);
                    }
                }
            }
        };
        let outcomes: Vec<Result<Vec<(usize, Heard)>>> = std::thread::scope(|scope| {
            let decode = &decode;
            let handles: Vec<_> = states
                .iter_mut()
                .map(|state| scope.spawn(move || decode(state)))
                .collect();
            handles
                .into_iter()
                .map(|handle| {
                    handle
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        });
        let mut heard = Vec::with_capacity(pieces.len());
        for outcome in outcomes {
            heard.extend(outcome?);
        }
        heard.sort_by_key(|(index, _)| *index);
        Ok(heard.into_iter().map(|(_, piece)| piece).collect())
    }
}
