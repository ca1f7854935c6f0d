//! Commands that need no media: templates, fonts, validate.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use caption_core::{
    Catalog, CatalogError, UnknownFields, ValidationErrors, parse_config_patch_with,
    parse_generate_request_with, parse_template,
};
use caption_fonts::FontLibrary;
use serde_json::Value;

pub fn catalog(templates_dir: Option<&Path>) -> Result<Catalog> {
    let catalog = Catalog::builtin()?;
    Ok(match templates_dir {
        Some(dir) => catalog.with_folder(dir)?,
        None => catalog,
    })
}

pub fn templates(id: Option<&str>, json: bool, templates_dir: Option<&Path>) -> Result<ExitCode> {
    let catalog = catalog(templates_dir)?;
    match id {
        Some(id) => {
            let Some(template) = catalog.get(id) else {
                let ids: Vec<&str> = catalog.templates().iter().map(|t| t.id.as_str()).collect();
                bail!("no template {id:?}; templates: {}", ids.join(", "));
            };
            println!("{}", serde_json::to_string_pretty(template)?);
        }
        None if json => println!("{}", serde_json::to_string_pretty(&catalog.summaries())?),
        None => {
            let width = catalog
                .templates()
                .iter()
                .map(|t| t.id.len())
                .max()
                .unwrap_or(0);
            for t in catalog.templates() {
                println!("{:width$}  {}", t.id, t.name);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn fonts(lang: Option<&str>) -> Result<ExitCode> {
    let library = FontLibrary::new()?;
    for family in library.families(lang)? {
        println!("{family}");
    }
    Ok(ExitCode::SUCCESS)
}

/// What a JSON file to validate holds, told apart by its top-level fields: its kind, the
/// unknown fields (warnings, or errors under `strict`), and the font it names, if any.
fn check(
    name: &str,
    value: &Value,
    unknown: UnknownFields,
) -> Result<(&'static str, ValidationErrors), ValidationErrors> {
    let has = |field| value.get(field).is_some();
    if has("words") || has("input") {
        parse_generate_request_with(value, unknown).map(|c| ("generate request", c.warnings))
    } else if has("id") && has("config") {
        let warnings = match parse_config_patch_with(&value["config"], "config", unknown) {
            Ok(checked) => checked.warnings,
            Err(errors) if unknown == UnknownFields::Deny => return Err(errors),
            Err(_) => ValidationErrors::default(),
        };
        match parse_template(name, &value.to_string()) {
            Ok(_) => Ok(("template", warnings)),
            Err(CatalogError::Invalid { errors, .. }) => Err(errors),
            Err(other) => Err(ValidationErrors::one("", other.to_string())),
        }
    } else {
        parse_config_patch_with(value, "config", unknown).map(|c| ("config", c.warnings))
    }
}

/// The font a file names (`config.font`, or `font` of a bare config), if any.
fn named_font(value: &Value) -> Option<(&'static str, &str)> {
    match value.get("config") {
        Some(config) => config.get("font")?.as_str().map(|f| ("config.font", f)),
        None => value.get("font")?.as_str().map(|f| ("config.font", f)),
    }
}

pub fn validate(file: &Path, strict: bool) -> Result<ExitCode> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let value: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid JSON", file.display()))?;
    let unknown = if strict {
        UnknownFields::Deny
    } else {
        UnknownFields::Warn
    };
    let checked = check(&file.display().to_string(), &value, unknown);
    let mut errors = checked.as_ref().err().cloned().unwrap_or_default();
    if let Some((path, font)) = named_font(&value)
        && !font.trim().is_empty()
        && let Some(rule) = FontLibrary::new()?.missing_family_rule(font)?
    {
        errors.push(path, rule);
    }
    if let Ok((_, warnings)) = &checked {
        for w in warnings {
            println!("warning: {w}");
        }
    }
    match checked {
        Ok((kind, _)) if errors.is_empty() => {
            println!("{}: valid {kind}", file.display());
            Ok(ExitCode::SUCCESS)
        }
        _ => {
            for e in &errors {
                println!("{e}");
            }
            eprintln!("{}: {} problem(s)", file.display(), errors.len());
            Ok(ExitCode::from(1))
        }
    }
}
