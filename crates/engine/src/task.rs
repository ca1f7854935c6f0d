//! What a long call is told and tells back: the language to hear, progress, cancellation.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use caption_core::SpeakerCount;

/// The part of the work a [`Progress`] report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Stage {
    /// Speech recognised into words.
    Transcribing,
    /// A given text's words timed on the speech.
    Aligning,
    /// Captions drawn into the video and the video encoded.
    Burning,
}

impl Stage {
    /// The stage's name in lower case: `transcribing`, `aligning`, `burning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Transcribing => "transcribing",
            Self::Aligning => "aligning",
            Self::Burning => "burning",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How far a long call has come: its stage and 0–100 within it. Reports of one stage never go
/// down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// What is being done.
    pub stage: Stage,
    /// How much of it is done, 0 to 100.
    pub percent: u8,
}

/// Stops a long call from another thread: the call ends soon after with
/// [`ErrorCode::Cancelled`](crate::ErrorCode::Cancelled), leaving no partial output file.
///
/// Clones share one flag.
///
/// ```
/// let cancel = caption_engine::Cancel::new();
/// let handle = cancel.clone();
/// handle.cancel();
/// assert!(cancel.is_cancelled());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A flag not yet raised.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks every call holding this flag (or a clone) to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    #[cfg(feature = "service")]
    pub(crate) fn from_flag(flag: Arc<AtomicBool>) -> Self {
        Self(flag)
    }

    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.0)
    }
}

type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// The settings of one long call ([`Captioner::transcribe`](crate::Captioner::transcribe),
/// [`align`](crate::Captioner::align), [`burn`](crate::Captioner::burn)): the language to hear,
/// where progress goes, and the flag that cancels it. `Task::default()` hears any language
/// (English with an English-only model), reports nothing and cannot be cancelled.
///
/// ```
/// use caption_engine::{Cancel, Task};
///
/// let cancel = Cancel::new();
/// let task = Task::default()
///     .language("en")
///     .on_progress(|p| eprintln!("{} {}%", p.stage, p.percent))
///     .cancel_with(cancel.clone());
/// assert_eq!(task.language_code(), "en");
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct Task {
    language: String,
    translate: bool,
    keep_fillers: bool,
    speakers: Option<SpeakerCount>,
    progress: Option<ProgressFn>,
    cancel: Option<Cancel>,
}

impl fmt::Debug for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Task")
            .field("language", &self.language_code())
            .field("translate", &self.translate)
            .field("keep_fillers", &self.keep_fillers)
            .field("speakers", &self.speakers)
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel)
            .finish()
    }
}

impl Task {
    /// The same as `Task::default()`.
    pub fn new() -> Self {
        Self::default()
    }

    /// The spoken language: `auto` (the default) or an ISO 639-1 code such as `es`.
    #[must_use]
    pub fn language(mut self, code: impl Into<String>) -> Self {
        self.language = code.into();
        self
    }

    /// `true` to get English words whatever the language spoken (whisper's translation, which
    /// needs a multilingual model such as `base`). The words are timed by whisper alone: the
    /// forced aligner cannot place English words on speech in another language.
    #[must_use]
    pub fn translate(mut self, translate: bool) -> Self {
        self.translate = translate;
        self
    }

    /// Whether the speech is translated into English.
    pub fn translates(&self) -> bool {
        self.translate
    }

    /// `true` to keep the fillers of English speech ("um", "uh") as words, marked `filler`, so
    /// that a burn with `cutFillers` can cut them: whisper leaves most of them out otherwise.
    /// It costs a little accuracy on the other words, so it is off by default.
    #[must_use]
    pub fn keep_fillers(mut self, keep: bool) -> Self {
        self.keep_fillers = keep;
        self
    }

    /// Whether fillers are kept as words.
    pub fn keeps_fillers(&self) -> bool {
        self.keep_fillers
    }

    /// Tells the speakers apart: every word gets a `speaker` ("S1", "S2", … in order of first
    /// speech), which a style's `speakerColors` colours. [`SpeakerCount::Auto`] estimates how
    /// many there are. Off by default.
    ///
    /// ```
    /// use caption_engine::{SpeakerCount, Task};
    ///
    /// let task = Task::default().speakers(SpeakerCount::Auto);
    /// assert_eq!(task.speaker_count(), Some(SpeakerCount::Auto));
    /// ```
    #[must_use]
    pub fn speakers(mut self, count: SpeakerCount) -> Self {
        self.speakers = Some(count);
        self
    }

    /// How many speakers are told apart, if they are.
    pub fn speaker_count(&self) -> Option<SpeakerCount> {
        self.speakers
    }

    /// Calls `report` as the work goes on (from the working thread: keep it short).
    #[must_use]
    pub fn on_progress(mut self, report: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(report));
        self
    }

    /// Stops the work when `cancel` is raised.
    #[must_use]
    pub fn cancel_with(mut self, cancel: Cancel) -> Self {
        self.cancel = Some(cancel);
        self
    }

    /// The language asked for; `auto` when none was.
    pub fn language_code(&self) -> &str {
        if self.language.trim().is_empty() {
            "auto"
        } else {
            &self.language
        }
    }

    pub(crate) fn cancel_flag(&self) -> Option<Arc<AtomicBool>> {
        self.cancel.as_ref().map(Cancel::flag)
    }

    /// A percent reporter for `stage`, if progress is wanted; the stage starts now, so 0 % is
    /// reported at once. A percentage reaches the callback once, in rising order: a report
    /// that does not move it forward is dropped.
    pub(crate) fn reporter(&self, stage: Stage) -> Option<impl Fn(u8) + Send + Sync + 'static> {
        let report = self.progress.clone()?;
        report(Progress { stage, percent: 0 });
        let last = AtomicU8::new(0);
        Some(move |percent: u8| {
            let percent = percent.min(100);
            if last.fetch_max(percent, Ordering::Relaxed) < percent {
                report(Progress { stage, percent });
            }
        })
    }
}
