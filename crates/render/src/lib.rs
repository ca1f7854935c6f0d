//! Caption frames. [`CaptionRenderer`] lays words out once (through `caption-layout`) and then
//! turns the state at any time into an [`Overlay`]: the premultiplied RGBA pixels of the
//! caption's bounding box and where it goes on the frame.
//!
//! Text is shaped with rustybuzz and rasterized from the font outlines with tiny-skia (fill and
//! outline from the same path, so they line up exactly); color emoji come from the color font's
//! CBDT bitmaps. Rasterized glyphs, emoji, box coverage, each word's blurred shadow and whole
//! overlays are cached: an unchanged frame costs a hash lookup, and a new one blurs only the
//! shadows of what moved. [`CaptionRenderer::render_many`] renders frames in parallel with rayon
//! and gives the same bytes as a serial render.
//!
//! ```
//! use std::sync::Arc;
//!
//! use caption_core::{Catalog, Word};
//! use caption_render::{CaptionRenderer, FrameSize, SystemFonts};
//!
//! let words = [Word::new(0.0, 0.4, "Hello"), Word::new(0.4, 0.9, "world")];
//! let style = Catalog::builtin()?.default_config().clone();
//! let renderer =
//!     CaptionRenderer::new(&words, &style, FrameSize::new(1280, 720), Arc::new(SystemFonts::new()?))?;
//!
//! let overlay = renderer.render_at(0.2).expect("a caption shows at 0.2 s");
//! assert!(overlay.x >= 0 && overlay.x as u32 + overlay.width <= 1280);
//! assert_eq!(overlay.rgba.len(), (overlay.width * overlay.height * 4) as usize);
//! assert!(overlay.rgba.chunks(4).any(|px| px[3] == 255), "some pixels are opaque");
//! assert!(renderer.render_at(5.0).is_none(), "nothing after the last word");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod cache;
mod emoji;
mod error;
mod overlay;
mod preview;
mod raster;
mod renderer;
mod shadow;
mod system;

pub use error::{Error, Result};
pub use overlay::Overlay;
pub use preview::{SheetOptions, contact_sheets_png, frame_png};
pub use renderer::{CaptionRenderer, RenderStats};
pub use system::SystemFonts;

pub use caption_layout::{DirFonts, FontFile, FontSource, FrameSize, FrameState, Timeline};
