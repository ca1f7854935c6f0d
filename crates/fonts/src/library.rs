use std::collections::BTreeSet;
use std::ffi::{CStr, CString};
use std::path::PathBuf;

use fontconfig::{Fontconfig, ObjectSet, Pattern};
use fontconfig_sys as sys;

use crate::{Error, Result, css_from_fontconfig_weight};

/// One face of one font file: what a rasterizer needs to open it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FontFace {
    /// The font file (`.ttf`, `.otf` or `.ttc`).
    pub path: PathBuf,
    /// Face index inside a collection (`.ttc`); 0 for single-face files.
    pub index: u32,
    /// The family's primary name.
    pub family: String,
    /// CSS weight of this face, 100–950.
    pub weight: u16,
}

/// A handle on the system's fonts. Cheap to share; every query asks fontconfig afresh, so newly
/// installed fonts appear after [`FontLibrary::new`] is called again.
pub struct FontLibrary {
    fc: Fontconfig,
    known_langs: BTreeSet<String>,
}

impl std::fmt::Debug for FontLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FontLibrary")
            .field("known_langs", &self.known_langs.len())
            .finish()
    }
}

fn query(context: &str) -> impl FnOnce(fontconfig::FontconfigError) -> Error + '_ {
    move |e| Error::Query {
        context: format!("{context}: {e:?}"),
    }
}

fn cstring(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::Query {
        context: format!("{s:?} contains a NUL byte"),
    })
}

/// The face fields a listing asks fontconfig for.
fn face_objects(fc: &Fontconfig) -> Result<ObjectSet> {
    let mut objects = ObjectSet::new(fc).map_err(query("object set"))?;
    for name in [c"family", c"file", c"index", c"weight", c"slant", c"color"] {
        objects.add(name).map_err(query("object set"))?;
    }
    Ok(objects)
}

fn face_of(pattern: &Pattern<'_>) -> Option<FontFace> {
    Some(FontFace {
        path: PathBuf::from(pattern.filename().ok()?),
        index: u32::try_from(pattern.face_index().unwrap_or(0)).unwrap_or(0),
        family: pattern.get_string(c"family").ok()?.to_owned(),
        weight: css_from_fontconfig_weight(pattern.weight().unwrap_or(80)),
    })
}

impl FontLibrary {
    /// Opens fontconfig and reads the languages it knows (a few milliseconds).
    ///
    /// # Errors
    ///
    /// [`Error::Init`] when fontconfig cannot load its configuration.
    pub fn new() -> Result<Self> {
        let fc = Fontconfig::new().ok_or(Error::Init)?;
        let known_langs = fontconfig_langs();
        Ok(Self { fc, known_langs })
    }

    /// Normalises a language code (`zh_CN` → `zh-cn`) and checks that fontconfig knows it,
    /// either exactly or as the prefix of its tags (`zh` covers `zh-cn`, `zh-tw`, ...).
    ///
    /// ```
    /// let fonts = caption_fonts::FontLibrary::new()?;
    /// assert_eq!(fonts.language("zh_CN")?, "zh-cn");
    /// assert!(fonts.language("klingon").is_err());
    /// # Ok::<(), caption_fonts::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::UnknownLanguage`] for a code fontconfig does not know.
    pub fn language(&self, code: &str) -> Result<String> {
        let norm = code.trim().to_ascii_lowercase().replace('_', "-");
        let known = !norm.is_empty()
            && (self.known_langs.contains(&norm)
                || self.known_langs.iter().any(|l| {
                    l.strip_prefix(norm.as_str())
                        .is_some_and(|r| r.starts_with('-'))
                }));
        if known {
            Ok(norm)
        } else {
            Err(Error::UnknownLanguage {
                code: code.to_owned(),
            })
        }
    }

    /// Family names, sorted and deduplicated; only families with a face that covers `lang`
    /// when one is given. A language fontconfig does not know is an error, not an empty list.
    pub fn families(&self, lang: Option<&str>) -> Result<Vec<String>> {
        let lang_tags: Vec<String> = match lang {
            None => Vec::new(),
            Some(code) => {
                let norm = self.language(code)?;
                if self.known_langs.contains(&norm) {
                    vec![norm]
                } else {
                    // A bare code such as `zh`: fontconfig only knows its regional tags, so a
                    // family counts when it covers any of them.
                    let prefix = format!("{norm}-");
                    self.known_langs
                        .iter()
                        .filter(|l| l.starts_with(&prefix))
                        .cloned()
                        .collect()
                }
            }
        };
        let mut objects = ObjectSet::new(&self.fc).map_err(query("object set"))?;
        objects.add(c"family").map_err(query("object set"))?;
        let mut families = BTreeSet::new();
        if lang_tags.is_empty() {
            let pattern = Pattern::new(&self.fc).map_err(query("pattern"))?;
            let fonts = fontconfig::list_fonts(&pattern, Some(&objects)).map_err(query("list"))?;
            families.extend(
                fonts
                    .iter()
                    .filter_map(|p| p.get_string(c"family").ok().map(str::to_owned)),
            );
        } else {
            for tag in lang_tags {
                let mut pattern = Pattern::new(&self.fc).map_err(query("pattern"))?;
                pattern
                    .add_string(c"lang", &cstring(&tag)?)
                    .map_err(query("lang"))?;
                let fonts =
                    fontconfig::list_fonts(&pattern, Some(&objects)).map_err(query("list"))?;
                families.extend(
                    fonts
                        .iter()
                        .filter_map(|p| p.get_string(c"family").ok().map(str::to_owned)),
                );
            }
        }
        Ok(families.into_iter().filter(|f| !f.is_empty()).collect())
    }

    /// `None` when `family` is installed; otherwise the rule a config naming it breaks, with
    /// the closest installed family names ([`FontLibrary::closest_families`]), for a
    /// validation message.
    pub fn missing_family_rule(&self, family: &str) -> Result<Option<String>> {
        match self.resolve(family, 400) {
            Ok(_) => return Ok(None),
            Err(Error::FamilyNotFound { .. }) => {}
            Err(other) => return Err(other),
        }
        let close = self.closest_families(family)?;
        Ok(Some(format!(
            "{family:?} is not an installed font family (closest: {})",
            close.join(", ")
        )))
    }

    /// Up to three installed families to suggest for `family`, best first: those close to it in
    /// spelling ("Robotto" → Roboto); then, when it is (a misspelling of) a well-known family
    /// that is not installed ("Helvetika" → Helvetica), the families fontconfig puts in that
    /// one's place, which share its look (a sans for Helvetica, a serif for Times New Roman);
    /// then the nearest names by edit distance.
    pub fn closest_families(&self, family: &str) -> Result<Vec<String>> {
        const WANTED: usize = 3;
        let installed = self.families(None)?;
        let names: Vec<&str> = installed.iter().map(String::as_str).collect();
        let mut out: Vec<String> = Vec::with_capacity(WANTED);
        let add = |name: &str, out: &mut Vec<String>| {
            if out.len() < WANTED && !out.iter().any(|n| n == name) {
                out.push(name.to_owned());
            }
        };
        for name in caption_core::closest(family, &names, WANTED) {
            add(name, &mut out);
        }
        if let Some(meant) = caption_core::closest(family, WELL_KNOWN_FAMILIES, 1).first() {
            for name in self.substitutes(meant)? {
                if names.contains(&name.as_str()) {
                    add(&name, &mut out);
                }
            }
        }
        for name in caption_core::nearest(family, &names, WANTED) {
            add(name, &mut out);
        }
        Ok(out)
    }

    /// The families fontconfig would draw for `family`, best first (its aliases and generic
    /// class, then the rest), emoji fonts left out.
    fn substitutes(&self, family: &str) -> Result<Vec<String>> {
        let mut pattern = Pattern::new(&self.fc).map_err(query("pattern"))?;
        pattern
            .add_string(c"family", &cstring(family)?)
            .map_err(query("family"))?;
        // `sort_fonts` applies fontconfig's substitutions itself (twice would list the
        // aliases twice, in another order than fontconfig's own `fc-match`).
        let sorted = pattern
            .sort_fonts(fontconfig::UnicodeCoverage::Trim)
            .map_err(query("sort"))?;
        let mut families: Vec<String> = Vec::new();
        for p in sorted.iter().take(24) {
            let Some(face) = face_of(&p) else { continue };
            // An emoji font is no family to set words in.
            if face.family.contains("Emoji") || families.contains(&face.family) {
                continue;
            }
            families.push(face.family);
        }
        Ok(families)
    }

    /// The upright face of `family` whose weight is closest to `css_weight` (ties go to the
    /// heavier face, as captions favour bold). The family must be installed under that name
    /// (letter case aside).
    ///
    /// # Errors
    ///
    /// [`Error::FamilyNotFound`] when no face has that family name.
    pub fn resolve(&self, family: &str, css_weight: u16) -> Result<FontFace> {
        // No family is named with a NUL byte (and fontconfig cannot be asked for one).
        if family.contains('\0') {
            return Err(Error::FamilyNotFound {
                family: family.to_owned(),
            });
        }
        let mut pattern = Pattern::new(&self.fc).map_err(query("pattern"))?;
        pattern
            .add_string(c"family", &cstring(family)?)
            .map_err(query("family"))?;
        let objects = face_objects(&self.fc)?;
        let fonts = fontconfig::list_fonts(&pattern, Some(&objects)).map_err(query("list"))?;
        let mut faces: Vec<(i32, FontFace)> = fonts
            .iter()
            .filter_map(|p| Some((p.slant().unwrap_or(0), face_of(&p)?)))
            .collect();
        // Prefer upright faces; fall back to slanted ones only for italic-only families.
        if faces.iter().any(|(slant, _)| *slant == 0) {
            faces.retain(|(slant, _)| *slant == 0);
        }
        faces
            .into_iter()
            .map(|(_, face)| face)
            .min_by_key(|face| {
                let distance = (i32::from(face.weight) - i32::from(css_weight)).abs();
                (
                    distance,
                    std::cmp::Reverse(face.weight),
                    face.path.clone(),
                    face.index,
                )
            })
            .ok_or_else(|| Error::FamilyNotFound {
                family: family.to_owned(),
            })
    }

    /// Faces that cover `ch`, best first, as fontconfig ranks them for a sans-serif text of
    /// weight `css_weight`. Callers still check the glyph: fontconfig ranks, it does not filter.
    ///
    /// ```
    /// let fonts = caption_fonts::FontLibrary::new()?;
    /// let faces = fonts.fallbacks_for('字', 400)?;
    /// assert!(faces.iter().take(3).any(|face| face.family.contains("CJK")), "{faces:?}");
    /// # Ok::<(), caption_fonts::Error>(())
    /// ```
    pub fn fallbacks_for(&self, ch: char, css_weight: u16) -> Result<Vec<FontFace>> {
        let mut pattern = Pattern::new(&self.fc).map_err(query("pattern"))?;
        pattern
            .add_string(c"family", c"sans-serif")
            .map_err(query("family"))?;
        pattern
            .add_integer(c"weight", crate::fontconfig_from_css_weight(css_weight))
            .map_err(query("weight"))?;
        let mut charset = fontconfig::CharSet::new(&self.fc).map_err(query("charset"))?;
        charset.add_char(ch).map_err(query("charset"))?;
        pattern.add_charset(charset).map_err(query("charset"))?;
        pattern.config_substitute().map_err(query("substitute"))?;
        pattern.default_substitute();
        let sorted = pattern
            .sort_fonts(fontconfig::UnicodeCoverage::Trim)
            .map_err(query("sort"))?;
        Ok(sorted.iter().take(12).filter_map(|p| face_of(&p)).collect())
    }

    /// The color emoji face, if one is installed.
    pub fn emoji(&self) -> Option<FontFace> {
        let mut pattern = Pattern::new(&self.fc).ok()?;
        pattern.add_string(c"lang", c"und-zsye").ok()?;
        let objects = face_objects(&self.fc).ok()?;
        let fonts = fontconfig::list_fonts(&pattern, Some(&objects)).ok()?;
        let mut faces: Vec<FontFace> = fonts.iter().filter_map(|p| face_of(&p)).collect();
        faces.sort_by(|a, b| {
            (!a.family.contains("Color"), &a.path).cmp(&(!b.family.contains("Color"), &b.path))
        });
        faces.into_iter().next()
    }
}

/// Families people name in caption styles that many systems do not have. A name close to one
/// of them is taken as meaning it, and fontconfig's substitutes for it are suggested: its own
/// configuration knows their metric-compatible twins and generic class (sans, serif, mono).
const WELL_KNOWN_FAMILIES: &[&str] = &[
    "Arial",
    "Arial Black",
    "Avenir",
    "Calibri",
    "Comic Sans MS",
    "Courier",
    "Courier New",
    "Futura",
    "Garamond",
    "Georgia",
    "Gotham",
    "Helvetica",
    "Helvetica Neue",
    "Impact",
    "Montserrat",
    "Poppins",
    "Proxima Nova",
    "Segoe UI",
    "Tahoma",
    "Times",
    "Times New Roman",
    "Trebuchet MS",
    "Verdana",
];

/// Every language tag fontconfig has an orthography for.
fn fontconfig_langs() -> BTreeSet<String> {
    let mut langs = BTreeSet::new();
    // SAFETY: FcGetLangs returns a new FcStrSet we own (destroyed below); FcStrListCreate
    // iterates it; every string FcStrListNext yields is a NUL-terminated UTF-8 buffer owned by
    // the set, copied out before the set is destroyed.
    unsafe {
        let set = sys::FcGetLangs();
        if set.is_null() {
            return langs;
        }
        let list = sys::FcStrListCreate(set);
        if !list.is_null() {
            loop {
                let next = sys::FcStrListNext(list);
                if next.is_null() {
                    break;
                }
                if let Ok(s) = CStr::from_ptr(next.cast()).to_str() {
                    langs.insert(s.to_ascii_lowercase());
                }
            }
            sys::FcStrListDone(list);
        }
        sys::FcStrSetDestroy(set);
    }
    langs
}
