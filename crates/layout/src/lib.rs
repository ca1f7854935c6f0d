//! Caption layout: words + a style [`Config`](caption_core::Config) + a frame size → a
//! [`Timeline`] of pages, lines and words that answers, for any time `t`, what is on screen
//! ([`Timeline::state_at`]): which words show, their colors, boxes, emoji and effect transforms.
//!
//! Layout is pure and deterministic: it measures text through the [`Measure`] trait, which
//! [`Shaper`] implements with real fonts (rustybuzz shaping, per-glyph fallback) and
//! [`MonoMeasure`] with a fixed advance for tests.

mod breaks;
mod emoji;
mod error;
mod fonts;
mod place;
mod prepare;
mod shape;
mod state;
mod text;
mod timeline;

pub use breaks::PAUSE_S;
pub use emoji::{EmojiLexicon, emoji_for_word, emoji_for_word_in};
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
