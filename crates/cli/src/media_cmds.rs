//! Commands that read or write media: transcribe, burn, batch, preview, model install.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use caption_core::{Config, ConfigPatch, ExportOptions, Word, parse_config_patch};
use caption_engine::{BurnOptions, Captioner, Task};
use caption_render::{CaptionRenderer, FontSource, FrameSize, SheetOptions, SystemFonts};
use caption_transcribe::GivenText;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;

use crate::formats::{self, Format, read_words};
use crate::{interrupt, paths};

/// The front door for one command-line run: `threads` for each transcription (0: every core,
/// shared with other transcriptions on the machine), `encoder_threads` for x264 (0: x264
/// chooses).
pub fn captioner(
    model: &str,
    templates_dir: Option<&Path>,
    threads: usize,
    encoder_threads: usize,
) -> Result<Captioner> {
    let mut builder = Captioner::builder()
        .model(model)
        .threads(threads)
        .encoder_threads(encoder_threads);
    if let Some(dir) = templates_dir {
        builder = builder.templates_dir(dir);
    }
    Ok(builder.build()?)
}

/// Caps the drawing threads at `threads` (0: no cap) for the whole run. Set once, before any
/// frame is drawn.
pub fn limit_threads(threads: usize) {
    if threads > 0 {
        // Fails only when the pool already exists, and then it keeps its size.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global();
    }
}

/// A task reporting its percent to `progress`, hearing `lang`.
fn task(lang: &str, progress: &ProgressBar) -> Task {
    let report = progress.clone();
    Task::default()
        .language(lang)
        .on_progress(move |p| report.set_position(u64::from(p.percent)))
}

/// A percent bar on a terminal, nothing otherwise.
fn bar(label: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(100);
    let style =
        ProgressStyle::with_template("{msg:>12} [{bar:40}] {pos:>3}% {elapsed_precise} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
    bar.set_style(style);
    bar.set_message(label.to_owned());
    bar
}

/// The media a transcription or alignment reads.
pub struct Input<'a> {
    pub file: &'a Path,
    pub lang: &'a str,
    pub model: &'a str,
    /// Cores; 0: every core.
    pub threads: usize,
}

/// Where an ASS export takes its style from.
pub struct Style<'a> {
    pub template: Option<&'a str>,
    pub config: Option<&'a Path>,
    pub templates_dir: Option<&'a Path>,
}

/// What a transcript is written as, settled (and checked) before the speech is read.
struct Destination<'a> {
    format: Format,
    output: Option<&'a Path>,
    export: ExportOptions,
}

/// Checks the input and the output, and resolves the ASS style (the template, the config, the
/// video's size) before any long work.
fn destination<'a>(
    captioner: &Captioner,
    input: &Input<'_>,
    format: Option<Format>,
    output: Option<&'a Path>,
    style_args: &Style<'_>,
) -> Result<Destination<'a>> {
    let format = formats::choose(format, output)?;
    if let Some(output) = output {
        paths::output_folder(output)?;
    }
    let config = style(captioner, style_args.template, style_args.config)?;
    // The picture's size when the input has one; a portrait frame otherwise.
    let (width_px, height_px) = match caption_media::probe(input.file)?.video {
        Some(v) if !v.is_still_image => (v.display_width, v.display_height),
        _ => (1080, 1920),
    };
    Ok(Destination {
        format,
        output,
        export: ExportOptions::default()
            .with_frame_size(width_px, height_px)
            .with_config(config),
    })
}

/// What a transcription listens for besides the words.
pub struct Hearing {
    /// English words whatever the language spoken.
    pub translate: bool,
    /// Fillers kept as words.
    pub keep_fillers: bool,
}

pub fn transcribe(
    input: &Input<'_>,
    hearing: Hearing,
    format: Option<Format>,
    output: Option<&Path>,
    style_args: &Style<'_>,
) -> Result<ExitCode> {
    paths::existing_file(input.file)?;
    limit_threads(input.threads);
    let captioner = captioner(input.model, style_args.templates_dir, input.threads, 0)?;
    let to = destination(&captioner, input, format, output, style_args)?;
    let progress = bar("transcribing");
    let words = captioner
        .transcribe(
            input.file,
            &task(input.lang, &progress)
                .translate(hearing.translate)
                .keep_fillers(hearing.keep_fillers),
        )
        .with_context(|| format!("transcribing {}", input.file.display()))?;
    progress.finish_and_clear();
    write_words(&captioner, &words, &to)
}

/// The text to align from a file: cues of a subtitle file, or the words of anything else.
fn given_text(path: &Path) -> Result<GivenText> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    GivenText::parse(&text, path.extension().and_then(|e| e.to_str()))
        .with_context(|| format!("reading {}", path.display()))
}

pub fn align(
    input: &Input<'_>,
    text: &Path,
    format: Option<Format>,
    output: Option<&Path>,
    style_args: &Style<'_>,
) -> Result<ExitCode> {
    paths::existing_file(input.file)?;
    paths::existing_file(text)?;
    limit_threads(input.threads);
    let captioner = captioner(input.model, style_args.templates_dir, input.threads, 0)?;
    let to = destination(&captioner, input, format, output, style_args)?;
    let given = given_text(text)?;
    let progress = bar("aligning");
    let words = captioner
        .align(input.file, &given, &task(input.lang, &progress))
        .with_context(|| format!("aligning {} on {}", text.display(), input.file.display()))?;
    progress.finish_and_clear();
    write_words(&captioner, &words, &to)
}

/// Writes words as `to` says, to its file or standard output.
fn write_words(captioner: &Captioner, words: &[Word], to: &Destination<'_>) -> Result<ExitCode> {
    let text = formats::render(words, to.format, &to.export, captioner)?;
    match to.output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        }
        None => {
            use std::io::Write;
            std::io::stdout().write_all(text.as_bytes())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The config a burn or preview uses: `--config` over `--template` (or the default template).
pub fn style(
    captioner: &Captioner,
    template: Option<&str>,
    config: Option<&Path>,
) -> Result<Config> {
    let patch = match config {
        None => ConfigPatch::default(),
        Some(path) => {
            paths::existing_file(path)?;
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let value: Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not valid JSON", path.display()))?;
            // A whole template file, or just a config.
            let config = value.get("config").unwrap_or(&value);
            parse_config_patch(config, "config")
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
        }
    };
    Ok(captioner.style(template, &patch)?)
}

pub struct BurnArgs<'a> {
    pub video: &'a Path,
    pub words: Option<&'a Path>,
    pub transcribe: bool,
    pub lang: &'a str,
    pub model: &'a str,
    pub template: Option<&'a str>,
    pub config: Option<&'a Path>,
    pub output: &'a Path,
    pub preset: &'a str,
    pub crf: f32,
    /// HDR inputs stay HDR (HEVC 10-bit) instead of being tone-mapped to SDR H.264.
    pub keep_hdr: bool,
    /// The captions alone on a transparent background (the output's name says which format).
    pub overlay_only: bool,
    /// Pauses longer than this are cut to it (`cutPausesS` over the config's).
    pub cut_pauses: Option<f32>,
    /// Fillers are cut (`cutFillers`, or the config's).
    pub cut_fillers: bool,
    /// Cores; 0: every core.
    pub threads: usize,
    pub templates_dir: Option<&'a Path>,
}

pub fn burn(args: &BurnArgs<'_>) -> Result<ExitCode> {
    // Everything that can be checked is checked before a transcription that may take minutes.
    paths::existing_file(args.video)?;
    paths::output_folder(args.output)?;
    if args.overlay_only {
        caption_media::LayerFormat::for_output(args.output)?;
    } else {
        caption_media::check_output(args.output)?;
    }
    paths::not_the_input(args.video, args.output)?;
    if let Some(pause) = args.cut_pauses {
        let range = caption_core::rules::CUT_PAUSES_S;
        if !(f64::from(pause) >= range.min && f64::from(pause) <= range.max) {
            bail!(
                "--cut-pauses: must be between {} and {} seconds (got {pause})",
                range.min,
                range.max
            );
        }
    }
    let info = caption_media::probe(args.video)?;
    let path = args.video.to_owned();
    match &info.video {
        None => {
            return Err(
                anyhow::Error::new(caption_media::Error::NoVideo { path }).context(format!(
                    "{}: has no video stream (an audio file has no picture to burn captions into)",
                    args.video.display()
                )),
            );
        }
        Some(v) if v.is_still_image => {
            return Err(caption_media::Error::StillImage { path }.into());
        }
        Some(_) => {}
    }
    let given_words = match (args.words, args.transcribe) {
        (Some(path), false) => Some(read_words(path)?),
        (None, true) => None,
        _ => bail!(
            "give the words with --words FILE (.json, .srt, .vtt or .ass), or --transcribe to make them"
        ),
    };
    limit_threads(args.threads);
    let captioner = captioner(args.model, args.templates_dir, args.threads, args.threads)?;
    let mut config = style(&captioner, args.template, args.config)?;
    if args.cut_pauses.is_some() {
        config.cut_pauses_s = args.cut_pauses;
    }
    config.cut_fillers |= args.cut_fillers;
    if args.overlay_only && (config.cut_pauses_s.is_some() || config.cut_fillers) {
        bail!(
            "--overlay-only: a caption layer keeps the video's timeline, so the config cannot \
             cut pauses or fillers (cutPausesS, cutFillers); cut in the editor instead"
        );
    }
    let words = match given_words {
        Some(words) => words,
        None => {
            let progress = bar("transcribing");
            let words = captioner
                .transcribe(
                    args.video,
                    &task(args.lang, &progress).keep_fillers(config.cut_fillers),
                )
                .with_context(|| format!("transcribing {}", args.video.display()))?;
            progress.finish_and_clear();
            words
        }
    };
    let progress = bar("burning");
    let report = progress.clone();
    let (_running, cancel) = interrupt::BurnGuard::start();
    let options = BurnOptions::default()
        .with_preset(args.preset)
        .with_crf(args.crf)
        .with_keep_hdr(args.keep_hdr)
        .with_cancel(cancel)
        .with_progress(move |f| report.set_position((f * 100.0).round() as u64));
    let started = Instant::now();
    if args.overlay_only {
        let result = captioner.burn_layer_with(
            args.video,
            args.output,
            &words,
            &config,
            &options,
            &Task::default(),
        );
        progress.finish_and_clear();
        let report = match result {
            Err(_) if interrupt::interrupted() => {
                eprintln!("interrupted: {} was not written", args.output.display());
                return Ok(ExitCode::from(interrupt::interrupted_exit_code()));
            }
            other => other?,
        };
        eprintln!(
            "{} → {} (caption layer, {}x{}, {} frames, {} with captions, {} words, {:.1} s)",
            args.video.display(),
            args.output.display(),
            report.width,
            report.height,
            report.frames,
            report.frames_with_captions,
            words.len(),
            started.elapsed().as_secs_f64()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let result = captioner.burn_with(
        args.video,
        args.output,
        &words,
        &config,
        &options,
        &Task::default(),
    );
    progress.finish_and_clear();
    let result = match result {
        Err(_) if interrupt::interrupted() => {
            eprintln!("interrupted: {} was not written", args.output.display());
            return Ok(ExitCode::from(interrupt::interrupted_exit_code()));
        }
        other => other?,
    };
    for warning in &result.warnings {
        eprintln!("warning: {}: {warning}", args.video.display());
    }
    let cut = if result.cut_s > 0.0 {
        format!(", {:.2} s cut", result.cut_s)
    } else {
        String::new()
    };
    eprintln!(
        "{} → {} ({} frames, {} words{cut}, {:.1} s)",
        args.video.display(),
        args.output.display(),
        result.frames,
        words.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

pub struct PreviewArgs<'a> {
    pub template: Option<&'a str>,
    pub config: Option<&'a Path>,
    pub words: &'a Path,
    pub at_s: f64,
    pub size: (u32, u32),
    pub sheet: bool,
    pub output: &'a Path,
    pub templates_dir: Option<&'a Path>,
}

pub fn preview(args: &PreviewArgs<'_>) -> Result<ExitCode> {
    if paths::extension(args.output).as_deref() != Some("png") {
        bail!(
            "{}: previews are PNG images; name the file .png",
            args.output.display()
        );
    }
    paths::output_folder(args.output)?;
    let captioner = captioner("base", args.templates_dir, 0, 0)?;
    let config = style(&captioner, args.template, args.config)?;
    let words = read_words(args.words)?;
    let fonts: Arc<dyn FontSource> = Arc::new(SystemFonts::new()?);
    let renderer = CaptionRenderer::new(
        &words,
        &config,
        FrameSize::new(args.size.0, args.size.1),
        Arc::clone(&fonts),
    )?;
    let options = SheetOptions::default();
    if !args.sheet {
        let png = caption_render::frame_png(&renderer, args.at_s, options.background)?;
        std::fs::write(args.output, png)
            .with_context(|| format!("writing {}", args.output.display()))?;
        eprintln!("wrote {}", args.output.display());
        return Ok(ExitCode::SUCCESS);
    }
    let sheets = caption_render::contact_sheets_png(&renderer, fonts, &options)?;
    let tiles = renderer.timeline().words.len();
    let mut written = Vec::with_capacity(sheets.len());
    for (k, png) in sheets.iter().enumerate() {
        let path = sheet_path(args.output, k);
        std::fs::write(&path, png).with_context(|| format!("writing {}", path.display()))?;
        written.push(path.display().to_string());
    }
    if written.len() == 1 {
        eprintln!("wrote {} ({tiles} words)", written[0]);
    } else {
        eprintln!(
            "{tiles} words, {} to a sheet: wrote {} sheets: {}",
            options.tiles_per_sheet,
            written.len(),
            written.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The `k`-th sheet's file: `sheet.png`, then `sheet-2.png`, `sheet-3.png`, ...
fn sheet_path(first: &Path, k: usize) -> std::path::PathBuf {
    if k == 0 {
        return first.to_owned();
    }
    let stem = first
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("sheet");
    first.with_file_name(format!("{stem}-{}.png", k + 1))
}

pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("{s:?}: expected WIDTHxHEIGHT, e.g. 1080x1920"))?;
    let parse = |v: &str| {
        v.trim()
            .parse::<u32>()
            .ok()
            .filter(|n| (16..=8192).contains(n))
    };
    match (parse(w), parse(h)) {
        (Some(w), Some(h)) => Ok((w, h)),
        _ => Err(format!(
            "{s:?}: width and height must be whole numbers from 16 to 8192"
        )),
    }
}

pub fn model_install(names: &[String], force: bool) -> Result<ExitCode> {
    let names: Vec<String> = if names.is_empty() {
        vec!["tiny.en".into(), "base".into()]
    } else {
        names.to_vec()
    };
    for name in &names {
        let mut options = caption_transcribe::InstallOptions::default();
        options.force = force;
        let path = caption_transcribe::install_model(name, &options)
            .with_context(|| format!("installing model {name}"))?;
        eprintln!("{name}: {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
