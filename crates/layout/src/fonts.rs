//! Where fonts come from: the [`FontSource`] trait (the system's fontconfig in production, a
//! folder of files for reproducible tests) and [`FontData`], one loaded face.

use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{Error, Result};

/// One face of a font file (`index` selects the face of a `.ttc` collection).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FontFile {
    /// The font file (`.ttf`, `.otf` or `.ttc`).
    pub path: PathBuf,
    /// Face index in the file; 0 for single-face files.
    pub index: u32,
}

/// Finds font faces by family and weight, fallback faces for characters, and the color emoji
/// face. Implementations must be deterministic for a given machine state.
pub trait FontSource: Send + Sync + Debug {
    /// The face of `family` closest to `weight` (100–900).
    fn resolve(&self, family: &str, weight: u16) -> Result<FontFile>;
    /// A face that has a glyph for `ch`, nearest to `weight`; `None` when no face has one.
    fn fallback_for(&self, ch: char, weight: u16) -> Option<FontFile>;
    /// The color emoji face (CBDT bitmaps), if any.
    fn emoji_font(&self) -> Option<FontFile>;
}

/// A loaded face: the file's bytes and the metrics layout needs.
#[derive(Debug)]
pub struct FontData {
    /// Where the face was loaded from.
    pub file: FontFile,
    bytes: Arc<[u8]>,
    /// The typographic family name (empty when the face names none).
    pub family: String,
    /// The face's CSS weight (100–900).
    pub weight: u16,
    /// Font units per em: glyph coordinates are divided by this to get ems.
    pub units_per_em: f32,
    /// Height above the baseline, font units (positive).
    pub ascender: f32,
    /// Depth below the baseline, font units (negative, as the font stores it).
    pub descender: f32,
    /// The face draws glyphs as color bitmaps (CBDT or sbix), not outlines.
    pub is_color: bool,
}

impl FontData {
    /// Reads and parses one face of a font file.
    ///
    /// # Errors
    ///
    /// [`Error::FontIo`] when the file cannot be read, [`Error::FontParse`] when the face is not
    /// a font.
    pub fn load(file: &FontFile) -> Result<Arc<Self>> {
        let bytes: Arc<[u8]> = std::fs::read(&file.path)
            .map_err(|source| Error::FontIo {
                path: file.path.clone(),
                source,
            })?
            .into();
        Self::from_bytes(file.clone(), &bytes)
    }

    /// Parses face `file.index` of `bytes` (the contents of `file.path`), sharing the bytes.
    ///
    /// # Errors
    ///
    /// [`Error::FontParse`] when the face is not a font.
    pub fn from_bytes(file: FontFile, bytes: &Arc<[u8]>) -> Result<Arc<Self>> {
        let parse_err = || Error::FontParse {
            path: file.path.clone(),
            index: file.index,
        };
        let face = ttf_parser::Face::parse(bytes, file.index).map_err(|_| parse_err())?;
        let family = family_name(&face).unwrap_or_default();
        let weight = face.weight().to_number();
        let units_per_em = f32::from(face.units_per_em().max(1));
        let tables = face.tables();
        let is_color = tables.cbdt.is_some() || tables.sbix.is_some();
        let ascender = f32::from(face.ascender());
        let descender = f32::from(face.descender());
        Ok(Arc::new(Self {
            file,
            bytes: bytes.clone(),
            family,
            weight,
            units_per_em,
            ascender,
            descender,
            is_color,
        }))
    }

    /// The whole font file, for a rasterizer to parse.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The parsed face; parsing only reads the table directory, so callers re-parse freely.
    pub fn face(&self) -> Option<ttf_parser::Face<'_>> {
        ttf_parser::Face::parse(&self.bytes, self.file.index).ok()
    }

    /// The face's whole line height in em, as ASS renderers size a font (libass and VSFilter
    /// ask FreeType for a "real" height of OS/2 winAscent + winDescent, else the ascender less
    /// the descender): an ASS font size of `font_px * line_height_em()` draws glyphs `font_px`
    /// to the em, as the burn does.
    pub fn line_height_em(&self) -> f32 {
        let win = self.face().and_then(|face| {
            let os2 = face.tables().os2?;
            let height = i32::from(os2.windows_ascender()) - i32::from(os2.windows_descender());
            (height > 0).then_some(height as f32)
        });
        let height = win.unwrap_or(self.ascender - self.descender);
        if height > 0.0 {
            height / self.units_per_em
        } else {
            1.0
        }
    }

    /// Whether the face has a glyph for `ch`.
    pub fn has_char(&self, ch: char) -> bool {
        self.face().is_some_and(|f| f.glyph_index(ch).is_some())
    }
}

fn family_name(face: &ttf_parser::Face<'_>) -> Option<String> {
    use ttf_parser::name_id;
    let names = face.names();
    for id in [name_id::TYPOGRAPHIC_FAMILY, name_id::FAMILY] {
        if let Some(name) = names
            .into_iter()
            .filter(|n| n.name_id == id)
            .find_map(|n| n.to_string())
        {
            return Some(name);
        }
    }
    None
}

/// Fonts from one folder of `.ttf`/`.otf`/`.ttc` files (goldens use the fonts committed under
/// `fixtures/fonts`, so they render the same on every machine). Files are read once.
#[derive(Debug, Clone)]
pub struct DirFonts {
    faces: Vec<Arc<FontData>>,
    emoji: Option<FontFile>,
}

impl DirFonts {
    /// Loads every face of every font file in `dir`, in file-name order.
    ///
    /// ```
    /// use caption_layout::{DirFonts, FontSource};
    ///
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/fonts");
    /// let fonts = DirFonts::open(dir.as_ref())?;
    /// let black = fonts.resolve("Inter", 900)?;
    /// assert!(black.path.ends_with("Inter-Black.otf"));
    /// let kana = fonts.fallback_for('か', 400).expect("a Japanese face in the folder");
    /// assert!(kana.path.ends_with("sawarabi-gothic-medium.ttf"));
    /// # Ok::<(), caption_layout::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::FontDir`] when the folder cannot be listed, [`Error::FontIo`] or
    /// [`Error::FontParse`] for a font file in it.
    pub fn open(dir: &Path) -> Result<Self> {
        let entries = std::fs::read_dir(dir).map_err(|source| Error::FontDir {
            path: dir.to_owned(),
            source,
        })?;
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                    matches!(e.to_ascii_lowercase().as_str(), "ttf" | "otf" | "ttc")
                })
            })
            .collect();
        paths.sort();
        let mut faces = Vec::new();
        for path in paths {
            let bytes: Arc<[u8]> = std::fs::read(&path)
                .map_err(|source| Error::FontIo {
                    path: path.clone(),
                    source,
                })?
                .into();
            let count = ttf_parser::fonts_in_collection(&bytes).unwrap_or(1);
            for index in 0..count {
                let file = FontFile {
                    path: path.clone(),
                    index,
                };
                faces.push(FontData::from_bytes(file, &bytes)?);
            }
        }
        Ok(Self { faces, emoji: None })
    }

    /// Uses `file` as the color emoji face (for example the system's Noto Color Emoji, too
    /// large to commit).
    pub fn with_emoji_font(mut self, file: FontFile) -> Self {
        self.emoji = Some(file);
        self
    }

    /// Every face loaded, in file-name order.
    pub fn faces(&self) -> &[Arc<FontData>] {
        &self.faces
    }

    fn nearest<'a>(
        faces: impl Iterator<Item = &'a Arc<FontData>>,
        weight: u16,
    ) -> Option<&'a Arc<FontData>> {
        // Nearest weight; on a tie the heavier face, since captions are usually bold.
        faces.min_by_key(|f| {
            let d = (i32::from(f.weight) - i32::from(weight)).unsigned_abs();
            (d, u16::MAX - f.weight)
        })
    }
}

impl FontSource for DirFonts {
    fn resolve(&self, family: &str, weight: u16) -> Result<FontFile> {
        let same_family = self
            .faces
            .iter()
            .filter(|f| !f.is_color && f.family.eq_ignore_ascii_case(family.trim()));
        Self::nearest(same_family, weight)
            .map(|f| f.file.clone())
            .ok_or_else(|| Error::NoFont {
                family: family.to_owned(),
                weight,
            })
    }

    fn fallback_for(&self, ch: char, weight: u16) -> Option<FontFile> {
        let covering = self.faces.iter().filter(|f| !f.is_color && f.has_char(ch));
        Self::nearest(covering, weight).map(|f| f.file.clone())
    }

    fn emoji_font(&self) -> Option<FontFile> {
        self.emoji.clone().or_else(|| {
            self.faces
                .iter()
                .find(|f| f.is_color)
                .map(|f| f.file.clone())
        })
    }
}
