//! A style file (`--config`, `captions validate`): a config, a template (`{id, name, config}`)
//! or a generate request, checked by the code the HTTP service checks requests with, so every
//! command says the same problems in the same words, errors and warnings together.

use std::path::Path;

use anyhow::Result;
use caption_core::{
    CatalogError, ConfigPatch, ErrorCode, UnknownFields, ValidationErrors, check_config_patch,
    check_generate_request, parse_template,
};
use caption_fonts::FontLibrary;
use serde_json::Value;

use crate::failure::{Failure, fail};
use crate::paths;

/// What a style file holds and every problem found in it.
pub struct Found {
    /// What the file is: `config`, `template` or `generate request`.
    pub kind: &'static str,
    /// Its config, when no rule is broken.
    pub patch: Option<ConfigPatch>,
    /// Every rule broken, the font that is not installed among them.
    pub errors: ValidationErrors,
    /// Every unknown field, with the closest known name.
    pub warnings: ValidationErrors,
}

/// Reads and checks the style file at `path`: unknown fields are warnings (or errors when
/// `unknown` is [`UnknownFields::Deny`]), and a font it names must be installed.
pub fn check(path: &Path, unknown: UnknownFields) -> Result<Found> {
    let text = paths::read_text(path)?;
    let value: Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(e) => {
            return fail(
                ErrorCode::InvalidRequest,
                path.display(),
                format!("is not valid JSON: {e}"),
            );
        }
    };
    let has = |field| value.get(field).is_some();
    let mut found = if has("words") || has("input") {
        let request = check_generate_request(&value, unknown);
        Found {
            kind: "generate request",
            patch: request.value.map(|r| r.config),
            errors: request.errors,
            warnings: request.warnings,
        }
    } else if has("id") && has("config") {
        let config = check_config_patch(&value["config"], "config", unknown);
        let mut errors = config.errors;
        // The template's own rules (an id, a name, a complete config), each said once.
        let template = match parse_template(&path.display().to_string(), &text) {
            Ok(_) => ValidationErrors::default(),
            Err(CatalogError::Invalid { errors, .. }) => errors,
            Err(other) => ValidationErrors::one("", other.to_string()),
        };
        for e in &template {
            if !errors.iter().any(|known| known == e) {
                errors.push(e.path.clone(), e.rule.clone());
            }
        }
        Found {
            kind: "template",
            patch: config.value.filter(|_| errors.is_empty()),
            errors,
            warnings: config.warnings,
        }
    } else {
        let config = check_config_patch(&value, "config", unknown);
        Found {
            kind: "config",
            patch: config.value,
            errors: config.errors,
            warnings: config.warnings,
        }
    };
    let font = value
        .get("config")
        .unwrap_or(&value)
        .get("font")
        .and_then(Value::as_str)
        .filter(|f| !f.trim().is_empty());
    if let Some(font) = font
        && let Some(rule) = FontLibrary::new()?.missing_family_rule(font)?
    {
        found.errors.push("config.font", rule);
        found.patch = None;
    }
    Ok(found)
}

/// The config of the style file at `path` for a command that uses it (burn, preview, batch,
/// an ASS export): its warnings printed, and every problem at once, the uninstalled font
/// among them, as the failure.
pub fn config_patch(path: &Path) -> Result<ConfigPatch> {
    let found = check(path, UnknownFields::Warn)?;
    for line in crate::failure::warning_lines(path, &found.warnings) {
        eprintln!("{line}");
    }
    match found.patch {
        Some(patch) if found.errors.is_empty() => Ok(patch),
        _ => Err(Failure::invalid(path.display(), &found.errors).into()),
    }
}
