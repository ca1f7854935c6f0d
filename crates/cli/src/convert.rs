//! `captions convert`: words from one transcript format to another, by extension.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use caption_core::{ErrorCode, ExportOptions};

use crate::failure::{Failure, fail};
use crate::formats::{self, EXTENSIONS, Format};
use crate::media_cmds::{Style, captioner, style};
use crate::paths;

pub struct ConvertArgs<'a> {
    pub input: &'a Path,
    pub output: &'a Path,
    /// The video's size, for an ASS output.
    pub size: Option<(u32, u32)>,
    pub style: Style<'a>,
}

/// The format a file's extension names, or an error that says which extensions are known.
fn format_of(path: &Path) -> Result<Format> {
    Format::from_extension(path).ok_or_else(|| {
        Failure::new(
            ErrorCode::InvalidRequest,
            path.display(),
            format!("the format is read from the extension: {EXTENSIONS}"),
        )
        .into()
    })
}

pub fn convert(args: &ConvertArgs<'_>) -> Result<ExitCode> {
    let from = format_of(args.input)?;
    let to = format_of(args.output)?;
    paths::existing_file(args.input)?;
    paths::output_folder(args.output)?;
    if paths::is_same_file(args.input, args.output) {
        return fail(
            ErrorCode::InvalidRequest,
            args.output.display(),
            "the output would overwrite the input",
        );
    }
    if from == Format::Txt {
        return fail(
            ErrorCode::InvalidRequest,
            args.input.display(),
            format!(
                "plain text has no times, so it cannot become {}; time its words on the video \
                 (captions align VIDEO --text {} -o {})",
                args.output.display(),
                args.input.display(),
                args.output.display()
            ),
        );
    }
    let words = formats::read_words(args.input)?;
    let mut options = ExportOptions::default();
    let captioner = captioner("base", args.style.templates_dir, 0, 0)?;
    if to == Format::Ass {
        options = options.with_config(style(&captioner, args.style.template, args.style.config)?);
    }
    if let Some((width_px, height_px)) = args.size {
        options = options.with_frame_size(width_px, height_px);
    }
    let text = formats::render(&words, to, &options, &captioner)?;
    paths::write(args.output, text)?;
    eprintln!(
        "{} → {} ({} words)",
        args.input.display(),
        args.output.display(),
        words.len()
    );
    Ok(ExitCode::SUCCESS)
}
