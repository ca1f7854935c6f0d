use caption_fonts::{FontFace, FontLibrary};
use caption_layout::{FontFile, FontSource};

/// The system's fonts through fontconfig (`caption-fonts`).
#[derive(Debug)]
pub struct SystemFonts {
    library: FontLibrary,
}

impl SystemFonts {
    /// Opens fontconfig.
    ///
    /// # Errors
    ///
    /// [`Error::SystemFonts`](crate::Error::SystemFonts) when fontconfig cannot start.
    pub fn new() -> crate::Result<Self> {
        Ok(Self {
            library: FontLibrary::new()?,
        })
    }
}

fn file(face: FontFace) -> FontFile {
    FontFile {
        path: face.path,
        index: face.index,
    }
}

impl FontSource for SystemFonts {
    fn resolve(&self, family: &str, weight: u16) -> caption_layout::Result<FontFile> {
        self.library
            .resolve(family, weight)
            .map(file)
            .map_err(|_| caption_layout::Error::NoFont {
                family: family.to_owned(),
                weight,
            })
    }

    fn fallback_for(&self, ch: char, weight: u16) -> Option<FontFile> {
        let faces = self.library.fallbacks_for(ch, weight).ok()?;
        faces.into_iter().next().map(file)
    }

    fn emoji_font(&self) -> Option<FontFile> {
        self.library.emoji().map(file)
    }
}
