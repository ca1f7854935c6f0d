//! Commands that need no media: templates, fonts, validate.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use caption_core::{Catalog, CatalogError, ErrorCode, UnknownFields};
use caption_fonts::FontLibrary;

use crate::failure::{Failure, fail, warning_lines};
use crate::style_file;

/// Writes `text` to standard output. A reader that has gone away (`| head -1`) is an error the
/// caller passes on, and `main` ends quietly on it.
pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// The built-in templates, and those of `templates_dir`.
pub fn catalog(templates_dir: Option<&Path>) -> Result<Catalog> {
    let catalog = Catalog::builtin()?;
    let Some(dir) = templates_dir else {
        return Ok(catalog);
    };
    catalog.with_folder(dir).map_err(|e| {
        match e {
            CatalogError::Io { path, source } => {
                let mut failure = Failure::io(&path, "cannot be read", &source);
                if source.kind() == std::io::ErrorKind::NotFound {
                    failure = Failure::new(
                        ErrorCode::NotFound,
                        path.display(),
                        "no such templates folder",
                    );
                }
                failure
            }
            CatalogError::Invalid {
                source_name,
                errors,
            } => Failure::invalid(source_name, &errors),
            CatalogError::Json { source_name, error } => Failure::new(
                ErrorCode::InvalidRequest,
                source_name,
                format!("is not valid JSON: {error}"),
            ),
            other => Failure::new(other.code(), dir.display(), other.to_string()),
        }
        .into()
    })
}

/// `id` when the catalog has that template; otherwise a failure that names the closest ids.
pub fn known_template<'a>(catalog: &Catalog, id: &'a str) -> Result<&'a str> {
    if catalog.get(id).is_some() {
        return Ok(id);
    }
    let ids: Vec<&str> = catalog.templates().iter().map(|t| t.id.as_str()).collect();
    let hint = match caption_core::closest(id, &ids, 1).first() {
        Some(close) => format!("; did you mean {close}?"),
        None => String::new(),
    };
    fail(
        ErrorCode::NotFound,
        id,
        format!("no such template{hint} (`captions templates` lists them)"),
    )
}

pub fn templates(id: Option<&str>, json: bool, templates_dir: Option<&Path>) -> Result<ExitCode> {
    let catalog = catalog(templates_dir)?;
    match id {
        Some(id) => {
            let id = known_template(&catalog, id)?;
            if let Some(template) = catalog.get(id) {
                print(&format!("{}\n", serde_json::to_string_pretty(template)?))?;
            }
        }
        None if json => print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&catalog.summaries())?
        ))?,
        None => {
            let width = catalog
                .templates()
                .iter()
                .map(|t| t.id.len())
                .max()
                .unwrap_or(0);
            let mut text = String::new();
            for t in catalog.templates() {
                text.push_str(&format!("{:width$}  {}\n", t.id, t.name));
            }
            print(&text)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn fonts(lang: Option<&str>) -> Result<ExitCode> {
    let library = FontLibrary::new()?;
    let families = library.families(lang).map_err(|e| match e {
        caption_fonts::Error::UnknownLanguage { .. } => {
            Failure::new(ErrorCode::InvalidRequest, "--lang", e.to_string()).into()
        }
        other => anyhow::Error::from(other),
    })?;
    let mut text = String::new();
    for family in families {
        text.push_str(&family);
        text.push('\n');
    }
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Prints every problem of a style file, errors and warnings together in one voice (the lines
/// `burn --config` prints), and says whether it is valid.
pub fn validate(file: &Path, strict: bool) -> Result<ExitCode> {
    let unknown = if strict {
        UnknownFields::Deny
    } else {
        UnknownFields::Warn
    };
    let found = style_file::check(file, unknown)?;
    let mut lines = Failure::invalid(file.display(), &found.errors).lines();
    lines.extend(warning_lines(file, &found.warnings));
    let summary = if found.errors.is_empty() {
        format!("{}: valid {}", file.display(), found.kind)
    } else {
        format!(
            "{}: {} error(s), {} warning(s)",
            file.display(),
            found.errors.len(),
            found.warnings.len()
        )
    };
    lines.push(summary);
    print(&(lines.join("\n") + "\n"))?;
    Ok(if found.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
