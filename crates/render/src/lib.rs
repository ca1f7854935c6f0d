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
