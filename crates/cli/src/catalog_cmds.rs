//! Commands that need no media: templates, fonts, validate.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use caption_core::{
    Catalog, CatalogError, ValidationErrors, parse_config_patch, parse_generate_request,
    parse_template,
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

/// What a JSON file to validate holds, told apart by its top-level fields.
fn check(name: &str, value: &Value) -> Result<&'static str, ValidationErrors> {
    let has = |field| value.get(field).is_some();
    if has("words") || has("input") {
        parse_generate_request(value).map(|_| "generate request")
    } else if has("id") && has("config") {
        match parse_template(name, &value.to_string()) {
            Ok(_) => Ok("template"),
            Err(CatalogError::Invalid { errors, .. }) => Err(errors),
            Err(other) => Err(ValidationErrors::one("", other.to_string())),
        }
    } else {
        parse_config_patch(value, "config").map(|_| "config")
    }
}

pub fn validate(file: &Path) -> Result<ExitCode> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let value: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid JSON", file.display()))?;
    match check(&file.display().to_string(), &value) {
        Ok(kind) => {
            println!("{}: valid {kind}", file.display());
            Ok(ExitCode::SUCCESS)
        }
        Err(errors) => {
            for e in &errors {
                println!("{e}");
            }
            eprintln!("{}: {} problem(s)", file.display(), errors.len());
            Ok(ExitCode::from(1))
        }
    }
}
