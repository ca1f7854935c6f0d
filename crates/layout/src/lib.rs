//! Caption layout: words + a style [`Config`](caption_core::Config) + a frame size → a
//! [`Timeline`] of pages, lines and words that answers, for any time `t`, what is on screen
//! ([`Timeline::state_at`]): which words show, their colors, boxes, emoji and effect transforms.
//!
//! Layout is pure and deterministic: it measures text through the [`Measure`] trait, which
//! [`Shaper`] implements with real fonts (rustybuzz shaping, per-glyph fallback) and
//! [`MonoMeasure`] with a fixed advance for tests.
//!
//! ```
//! use caption_core::{Catalog, Word};
//! use caption_layout::{FrameSize, MonoMeasure, Timeline, Visibility};
//!
//! let words = [
//!     Word::new(0.0, 0.5, "One"),
//!     Word::new(0.5, 1.0, "small"),
//!     Word::new(1.0, 1.5, "step."),
//! ];
//! let style = Catalog::builtin()?.default_config().clone();
//! let frame = FrameSize::new(1080, 1920);
//! let timeline = Timeline::build(&words, &style, frame, &MonoMeasure::default());
//!
//! assert_eq!(timeline.words.len(), 3);
//! assert!(timeline.words.iter().all(|w| w.rect.right() <= frame.width_px as f32));
//! let state = timeline.state_at(0.7);
//! let active: Vec<usize> = state
//!     .words
//!     .iter()
//!     .filter(|w| w.visibility == Visibility::Active)
//!     .map(|w| w.word)
//!     .collect();
//! assert_eq!(active, [1], "\"small\" is being spoken at 0.7 s");
//! assert!(timeline.state_at(60.0).is_empty());
//! # Ok::<(), caption_core::CatalogError>(())
//! ```

#![warn(missing_docs)]

mod breaks;
mod emoji;
mod emphasis;
mod error;
mod fonts;
mod place;
mod prepare;
mod shape;
mod state;
mod subtitles;
mod text;
mod timeline;

pub use breaks::PAUSE_S;
pub use emoji::{EmojiLexicon, emoji_for_word, emoji_for_word_in};
pub use emphasis::{
    FrequencyTable, MIN_SCORE, NAME_BONUS, NUMBER_SCORE, STOP_WORDS, TWO_FROM_WORDS, UNKNOWN_SCORE,
    WordFrequencies,
};
pub use error::{Error, Result};
pub use fonts::{DirFonts, FontData, FontFile, FontSource};
pub use shape::{FaceId, PlacedGlyph, ShapedText, Shaper};
pub use state::{
    BoxKind, BoxState, EmojiState, FrameState, Transform, Visibility, WordState, q_to_px,
};
pub use text::{ends_clause, ends_sentence, joins_without_space, split_unspaced};
pub use timeline::{
    EFFECT_S, FrameSize, LaidLine, LaidPage, LaidWord, Measure, MonoMeasure, RectPx, Timeline,
};
