use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{Config, ErrorCode, Template, TemplateSummary, ValidationErrors};

/// The built-in templates, one JSON data file each, compiled in so the binary needs no data
/// folder. The first is the default.
const BUILTIN: &[(&str, &str)] = &[
    (
        "bold-highlight.json",
        include_str!("../templates/bold-highlight.json"),
    ),
    (
        "creator-punch.json",
        include_str!("../templates/creator-punch.json"),
    ),
    (
        "native-box.json",
        include_str!("../templates/native-box.json"),
    ),
    ("karaoke.json", include_str!("../templates/karaoke.json")),
    ("one-word.json", include_str!("../templates/one-word.json")),
    (
        "moving-box.json",
        include_str!("../templates/moving-box.json"),
    ),
    (
        "clean-subtitle.json",
        include_str!("../templates/clean-subtitle.json"),
    ),
    (
        "subtitle-bar.json",
        include_str!("../templates/subtitle-bar.json"),
    ),
    (
        "neon-glow.json",
        include_str!("../templates/neon-glow.json"),
    ),
    (
        "keyword-accent.json",
        include_str!("../templates/keyword-accent.json"),
    ),
    (
        "progressive-reveal.json",
        include_str!("../templates/progressive-reveal.json"),
    ),
    (
        "emoji-hype.json",
        include_str!("../templates/emoji-hype.json"),
    ),
    (
        "typewriter.json",
        include_str!("../templates/typewriter.json"),
    ),
    (
        "shake-impact.json",
        include_str!("../templates/shake-impact.json"),
    ),
    ("page-pop.json", include_str!("../templates/page-pop.json")),
];

/// Why a template source was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// A template file or folder could not be read.
    #[error("cannot read template {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// A template is not JSON.
    #[error("template {source_name} is not valid JSON: {error}")]
    Json {
        /// The template's file name.
        source_name: String,
        /// The parser's error, with line and column.
        error: serde_json::Error,
    },
    /// A template breaks rules of the config.
    #[error("template {source_name} is invalid: {errors}")]
    Invalid {
        /// The template's file name.
        source_name: String,
        /// Every problem, with its field path.
        errors: ValidationErrors,
    },
}

impl CatalogError {
    /// The stable code of this error: a missing folder is [`ErrorCode::NotFound`], one that
    /// cannot be read the machine's fault ([`ErrorCode::Internal`]), a template that is not
    /// JSON or breaks a rule the caller's ([`ErrorCode::InvalidRequest`]).
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                ErrorCode::NotFound
            }
            Self::Io { .. } => ErrorCode::Internal,
            Self::Json { .. } | Self::Invalid { .. } => ErrorCode::InvalidRequest,
        }
    }
}

/// The caption style templates: the built-in ones, plus any from a user folder, which add to
/// them or replace one with the same id.
#[derive(Debug, Clone)]
pub struct Catalog {
    templates: Vec<Template>,
}

impl Catalog {
    /// Id of the template whose values fill every field a request leaves out.
    pub const DEFAULT_ID: &'static str = "bold-highlight";

    /// The built-in templates, each validated.
    pub fn builtin() -> Result<Self, CatalogError> {
        let templates = BUILTIN
            .iter()
            .map(|(name, text)| parse_template(name, text))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { templates })
    }

    /// Adds every `*.json` template in `dir` (sorted by file name); one with an existing id
    /// replaces it. Any invalid file refuses the whole folder, naming the file and every problem.
    pub fn with_folder(mut self, dir: &Path) -> Result<Self, CatalogError> {
        let io = |source| CatalogError::Io {
            path: dir.to_owned(),
            source,
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(io)?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).map_err(|source| CatalogError::Io {
                path: path.clone(),
                source,
            })?;
            let template = parse_template(&path.display().to_string(), &text)?;
            match self.templates.iter_mut().find(|t| t.id == template.id) {
                Some(existing) => *existing = template,
                None => self.templates.push(template),
            }
        }
        Ok(self)
    }

    /// Every template, built-in ones first in their fixed order.
    pub fn templates(&self) -> &[Template] {
        &self.templates
    }

    /// The list response: id and name of each template.
    pub fn summaries(&self) -> Vec<TemplateSummary> {
        self.templates.iter().map(TemplateSummary::from).collect()
    }

    /// The template `id`, `None` when there is none.
    ///
    /// ```
    /// let catalog = caption_core::Catalog::builtin()?;
    /// let karaoke = catalog.get("karaoke").expect("a built-in template");
    /// assert_eq!(karaoke.id, "karaoke");
    /// assert!(karaoke.config.validate().is_ok());
    /// assert!(catalog.get("no-such-template").is_none());
    /// # Ok::<(), caption_core::CatalogError>(())
    /// ```
    pub fn get(&self, id: &str) -> Option<&Template> {
        self.templates.iter().find(|t| t.id == id)
    }

    /// The config every request is merged over when it names no template.
    pub fn default_config(&self) -> &Config {
        // `builtin()` always holds DEFAULT_ID (a unit test checks it) and a folder can only
        // replace it, so the fallback to the first template is never taken in practice.
        self.get(Self::DEFAULT_ID)
            .map_or(&self.templates[0].config, |t| &t.config)
    }
}

/// Parses and validates one template file: `{"id", "name", "config"}` with a complete config.
pub fn parse_template(source_name: &str, text: &str) -> Result<Template, CatalogError> {
    let value: Value = serde_json::from_str(text).map_err(|error| CatalogError::Json {
        source_name: source_name.to_owned(),
        error,
    })?;
    let invalid = |errors| CatalogError::Invalid {
        source_name: source_name.to_owned(),
        errors,
    };
    let mut errors = ValidationErrors::default();
    let id = value.get("id").and_then(Value::as_str).unwrap_or_default();
    if !is_kebab_case(id) {
        errors.push(
            "id",
            "must be kebab-case: lower-case letters and digits joined by single hyphens",
        );
    }
    let name = value
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name.trim().is_empty() {
        errors.push("name", "is required (a non-empty string)");
    }
    let config = match value.get("config") {
        None => {
            errors.push("config", "is required (a complete config)");
            None
        }
        Some(v) => {
            match crate::parse_config_patch(v, "config").and_then(|p| p.into_complete("config")) {
                Ok(config) => Some(config),
                Err(e) => {
                    errors.0.extend(e.0);
                    None
                }
            }
        }
    };
    match config {
        Some(config) if errors.is_empty() => Ok(Template {
            id: id.to_owned(),
            name: name.to_owned(),
            config,
        }),
        _ => Err(invalid(errors)),
    }
}

fn is_kebab_case(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_catalog_loads_and_holds_the_default() {
        let catalog = Catalog::builtin().unwrap();
        assert!(catalog.templates().len() >= 12);
        assert!(catalog.get(Catalog::DEFAULT_ID).is_some());
    }

    #[test]
    fn error_codes_tell_a_missing_folder_from_a_bad_template() {
        let dir = std::env::temp_dir().join(format!("caption-core-catalog-{}", std::process::id()));
        let missing = Catalog::builtin()
            .unwrap()
            .with_folder(&dir.join("missing"));
        assert_eq!(missing.unwrap_err().code(), ErrorCode::NotFound);

        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("broken.json"), "{ not json").unwrap();
        let broken = Catalog::builtin().unwrap().with_folder(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        let broken = broken.unwrap_err();
        assert!(matches!(broken, CatalogError::Json { .. }), "{broken:?}");
        assert_eq!(broken.code(), ErrorCode::InvalidRequest);
    }

    #[test]
    fn kebab_case_ids() {
        for ok in ["a", "bold-highlight", "x2-y3"] {
            assert!(is_kebab_case(ok), "{ok}");
        }
        for bad in ["", "Bold", "a--b", "-a", "a-", "a_b", "a b"] {
            assert!(!is_kebab_case(bad), "{bad}");
        }
    }
}
