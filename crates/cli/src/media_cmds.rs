//! Commands that read or write media: transcribe, burn, batch, preview, model install.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use caption_core::{Config, ConfigPatch, ErrorCode, ExportOptions, Word};
use caption_engine::{BurnOptions, Captioner, Task};
use caption_render::{CaptionRenderer, FontSource, FrameSize, SheetOptions, SystemFonts};
use caption_transcribe::GivenText;
use indicatif::{ProgressBar, ProgressStyle};

use crate::failure::{Failure, fail};
use crate::formats::{self, Format, read_words};
use crate::{catalog_cmds, interrupt, paths, style_file};

/// The front door for one command-line run: `threads` for each transcription (0: every core,
/// shared with other transcriptions on the machine), `encoder_threads` for x264 (0: x264
/// chooses).
pub fn captioner(
    model: &str,
    templates_dir: Option<&Path>,
    threads: usize,
    encoder_threads: usize,
) -> Result<Captioner> {
    if let Some(dir) = templates_dir {
        // Checked here, so that a bad folder is said as every other failure is.
        catalog_cmds::catalog(Some(dir))?;
    }
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
    let info = caption_media::probe(input.file).map_err(|e| Failure::media(&[input.file], &e))?;
    // The picture's size when the input has one; a portrait frame otherwise.
    let (width_px, height_px) = match info.video {
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
    /// Speakers told apart, and how many.
    pub speakers: Option<caption_engine::SpeakerCount>,
    /// No speech heard is a failure, not a warning.
    pub require_speech: bool,
}

/// What a transcription that heard no words says: a warning (the empty result still written,
/// as `empty` says) or, when speech is required, the failure.
pub fn no_speech(file: &Path, required: bool, empty: &str) -> Result<()> {
    const HEARD: &str = "no speech was heard";
    if required {
        return fail(
            ErrorCode::NoSpeech,
            file.display(),
            format!("{HEARD} (silence, music or noise); nothing was written"),
        );
    }
    eprintln!("warning: {}: {HEARD}; {empty}", file.display());
    Ok(())
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
    let working = interrupt::Working::start();
    let mut task = task(input.lang, &progress)
        .translate(hearing.translate)
        .keep_fillers(hearing.keep_fillers)
        .cancel_with(working.task_cancel());
    if let Some(count) = hearing.speakers {
        task = task.speakers(count);
    }
    let heard = captioner.transcribe(input.file, &task);
    progress.finish_and_clear();
    let words = match heard {
        Err(_) if interrupt::interrupted() => return Ok(interrupt::stopped(&to.unwritten())),
        other => other.map_err(|e| Failure::engine(&[input.file], &e))?,
    };
    drop(working);
    if words.is_empty() {
        let empty = match to.format {
            Format::Json => "the word list is empty",
            _ => "the subtitles are empty",
        };
        no_speech(input.file, hearing.require_speech, empty)?;
    }
    write_words(&captioner, &words, &to)
}

/// The text to align from a file: cues of a subtitle file, or the words of anything else.
fn given_text(path: &Path) -> Result<GivenText> {
    let text = paths::read_text(path)?;
    GivenText::parse(&text, path.extension().and_then(|e| e.to_str()))
        .map_err(|e| Failure::new(ErrorCode::from(e.code()), path.display(), e.to_string()).into())
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
    let working = interrupt::Working::start();
    let aligned = captioner.align(
        input.file,
        &given,
        &task(input.lang, &progress).cancel_with(working.task_cancel()),
    );
    progress.finish_and_clear();
    let words = match aligned {
        Err(_) if interrupt::interrupted() => return Ok(interrupt::stopped(&to.unwritten())),
        other => other.map_err(|e| Failure::engine(&[input.file, text], &e))?,
    };
    drop(working);
    write_words(&captioner, &words, &to)
}

impl Destination<'_> {
    /// What an interruption leaves unwritten: the output file, or the words standard output
    /// would have had.
    fn unwritten(&self) -> String {
        match self.output {
            Some(path) => path.display().to_string(),
            None => "the transcript (standard output)".to_owned(),
        }
    }
}

/// Writes words as `to` says, to its file or standard output.
fn write_words(captioner: &Captioner, words: &[Word], to: &Destination<'_>) -> Result<ExitCode> {
    let text = formats::render(words, to.format, &to.export, captioner)?;
    match to.output {
        Some(path) => paths::write(path, text)?,
        None => catalog_cmds::print(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The config a burn or preview uses: `--config` over `--template` (or the default template).
/// The config file's warnings are printed; its problems, the template's name and the font are
/// checked together.
pub fn style(
    captioner: &Captioner,
    template: Option<&str>,
    config: Option<&Path>,
) -> Result<Config> {
    let template = template
        .map(|id| catalog_cmds::known_template(captioner.catalog(), id))
        .transpose()?;
    let patch = match config {
        None => ConfigPatch::default(),
        Some(path) => style_file::config_patch(path)?,
    };
    captioner.style(template, &patch).map_err(|e| {
        let subject = match (config, template) {
            (Some(path), _) => path.display().to_string(),
            (None, Some(id)) => format!("template {id}"),
            (None, None) => "the default template".to_owned(),
        };
        match &e {
            caption_engine::Error::Invalid(problems) => Failure::invalid(subject, problems),
            other => Failure::new(other.code(), subject, other.to_string()),
        }
        .into()
    })
}

pub struct BurnArgs<'a> {
    pub video: &'a Path,
    pub words: Option<&'a Path>,
    pub transcribe: bool,
    /// With `transcribe`, no speech heard is a failure, not a warning.
    pub require_speech: bool,
    /// With `transcribe`, the speakers told apart.
    pub speakers: Option<caption_engine::SpeakerCount>,
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
    /// The output cropped to this shape, following the speaker's face.
    pub reframe: Option<caption_engine::Reframe>,
    /// Cores; 0: every core.
    pub threads: usize,
    pub templates_dir: Option<&'a Path>,
}

pub fn burn(args: &BurnArgs<'_>) -> Result<ExitCode> {
    // Everything that can be checked is checked before a transcription that may take minutes.
    paths::existing_file(args.video)?;
    paths::output_folder(args.output)?;
    let files = [args.video, args.output];
    let media = |e: caption_media::Error| Failure::media(&files, &e);
    if args.overlay_only {
        caption_media::LayerFormat::for_output(args.output).map_err(media)?;
    } else {
        caption_media::check_output(args.output).map_err(media)?;
    }
    paths::not_the_input(args.video, args.output)?;
    // A check of its own: clap counts --transcribe's default as given.
    if args.require_speech && !args.transcribe {
        return fail(
            ErrorCode::InvalidRequest,
            "--require-speech",
            "is about what a transcription hears: use it with --transcribe",
        );
    }
    if let Some(pause) = args.cut_pauses {
        let range = caption_core::rules::CUT_PAUSES_S;
        if !(f64::from(pause) >= range.min && f64::from(pause) <= range.max) {
            return fail(
                ErrorCode::InvalidRequest,
                "--cut-pauses",
                format!(
                    "must be between {} and {} seconds (got {pause})",
                    range.min, range.max
                ),
            );
        }
    }
    let info = caption_media::probe(args.video).map_err(media)?;
    match &info.video {
        None => {
            return fail(
                ErrorCode::NoVideo,
                args.video.display(),
                "has no video stream (an audio file has no picture to burn captions into)",
            );
        }
        Some(v) if v.is_still_image => {
            let path = args.video.to_owned();
            return Err(media(caption_media::Error::StillImage { path }).into());
        }
        Some(_) => {}
    }
    let given_words = match (args.words, args.transcribe) {
        (Some(path), false) => Some(read_words(path)?),
        (None, true) => None,
        _ => {
            return fail(
                ErrorCode::InvalidRequest,
                "--words",
                "give the words with --words FILE (.json, .srt, .vtt or .ass), or --transcribe \
                 to make them",
            );
        }
    };
    limit_threads(args.threads);
    let captioner = captioner(args.model, args.templates_dir, args.threads, args.threads)?;
    let mut config = style(&captioner, args.template, args.config)?;
    if args.cut_pauses.is_some() {
        config.cut_pauses_s = args.cut_pauses;
    }
    config.cut_fillers |= args.cut_fillers;
    if args.overlay_only && (config.cut_pauses_s.is_some() || config.cut_fillers) {
        return fail(
            ErrorCode::InvalidRequest,
            "--overlay-only",
            "a caption layer keeps the video's timeline, so the config cannot cut pauses or \
             fillers (cutPausesS, cutFillers); cut in the editor instead",
        );
    }
    let unwritten = args.output.display().to_string();
    let working = interrupt::Working::start();
    let words = match given_words {
        Some(words) => words,
        None => {
            let progress = bar("transcribing");
            let mut task = task(args.lang, &progress)
                .keep_fillers(config.cut_fillers)
                .cancel_with(working.task_cancel());
            if let Some(count) = args.speakers {
                task = task.speakers(count);
            }
            let heard = captioner.transcribe(args.video, &task);
            progress.finish_and_clear();
            let words = match heard {
                Err(_) if interrupt::interrupted() => return Ok(interrupt::stopped(&unwritten)),
                other => other.map_err(|e| Failure::engine(&files, &e))?,
            };
            if words.is_empty() {
                no_speech(args.video, args.require_speech, "the video has no captions")?;
            }
            words
        }
    };
    let progress = bar("burning");
    let report = progress.clone();
    let options = BurnOptions::default()
        .with_preset(args.preset)
        .with_crf(args.crf)
        .with_keep_hdr(args.keep_hdr)
        .with_reframe(args.reframe)
        .with_cancel(working.burn_cancel())
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
            Err(_) if interrupt::interrupted() => return Ok(interrupt::stopped(&unwritten)),
            other => other.map_err(|e| Failure::engine(&files, &e))?,
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
        Err(_) if interrupt::interrupted() => return Ok(interrupt::stopped(&unwritten)),
        other => other.map_err(|e| Failure::engine(&files, &e))?,
    };
    for warning in &result.warnings {
        eprintln!("warning: {}: {warning}", args.video.display());
    }
    let cut = if result.cut_s > 0.0 {
        format!(", {:.2} s cut", result.cut_s)
    } else {
        String::new()
    };
    let reframed = match args.reframe {
        Some(shape) => format!(
            ", reframed {shape} to {}x{}",
            result.display_width, result.display_height
        ),
        None => String::new(),
    };
    eprintln!(
        "{} → {} ({} frames, {} words{cut}{reframed}, {:.1} s)",
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
        return fail(
            ErrorCode::InvalidRequest,
            args.output.display(),
            "previews are PNG images; name the file .png",
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
        paths::write(args.output, png)?;
        eprintln!("wrote {}", args.output.display());
        return Ok(ExitCode::SUCCESS);
    }
    let sheets = caption_render::contact_sheets_png(&renderer, fonts, &options)?;
    let tiles = renderer.timeline().words.len();
    let mut written = Vec::with_capacity(sheets.len());
    for (k, png) in sheets.iter().enumerate() {
        let path = sheet_path(args.output, k);
        paths::write(&path, png)?;
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

/// `--reframe`'s shapes, as the generate request spells them.
pub fn parse_reframe(s: &str) -> Result<caption_engine::Reframe, String> {
    caption_engine::Reframe::from_wire(s.trim()).ok_or_else(|| {
        format!(
            "{s:?}: must be one of {}",
            caption_engine::Reframe::NAMES.join(", ")
        )
    })
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
            .map_err(|e| Failure::new(e.code(), format!("model {name}"), e.to_string()))?;
        eprintln!("{name}: {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
