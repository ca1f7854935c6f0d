//! Commands that read or write media: transcribe, burn, batch, preview, model install.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use caption_core::{Config, ConfigPatch, GenerateRequest, Word, parse_config_patch, parse_words};
use caption_engine::{BurnOptions, Engine, EngineOptions};
use caption_render::{CaptionRenderer, FrameSize, SystemFonts};
use caption_transcribe::GivenText;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;

use crate::formats::{self, Format};

/// An engine for one command-line run: scratch storage and job store in a temporary folder.
pub struct LocalEngine {
    pub engine: Engine,
    _scratch: tempfile::TempDir,
}

pub fn local_engine(
    model: &str,
    templates_dir: Option<&Path>,
    threads_per_job: usize,
) -> Result<LocalEngine> {
    let scratch = tempfile::tempdir().context("creating a scratch folder")?;
    let options = EngineOptions {
        data_dir: scratch.path().to_owned(),
        model: model.to_owned(),
        templates_dir: templates_dir.map(Path::to_owned),
        threads_per_job,
        ..EngineOptions::default()
    };
    let engine = Engine::open_local(options, "http://127.0.0.1")?;
    Ok(LocalEngine {
        engine,
        _scratch: scratch,
    })
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
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

pub fn transcribe(
    file: &Path,
    lang: &str,
    model: &str,
    format: Option<Format>,
    output: Option<&Path>,
) -> Result<ExitCode> {
    let local = local_engine(model, None, 0)?;
    let progress = bar("transcribing");
    let report = progress.clone();
    let words = runtime()?
        .block_on(
            local
                .engine
                .transcribe_file(file, lang, move |p| report.set_position(u64::from(p))),
        )
        .with_context(|| format!("transcribing {}", file.display()))?;
    progress.finish_and_clear();
    write_words(&words, format, output)
}

/// The text to align from a file: cues of a subtitle file, or the words of anything else.
fn given_text(path: &Path) -> Result<GivenText> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    GivenText::parse(&text, path.extension().and_then(|e| e.to_str()))
        .with_context(|| format!("reading {}", path.display()))
}

pub fn align(
    file: &Path,
    text: &Path,
    lang: &str,
    model: &str,
    format: Option<Format>,
    output: Option<&Path>,
) -> Result<ExitCode> {
    let given = given_text(text)?;
    let local = local_engine(model, None, 0)?;
    let progress = bar("aligning");
    let report = progress.clone();
    let words = runtime()?
        .block_on(local.engine.align_file(file, given, lang, move |p| {
            report.set_position(u64::from(p));
        }))
        .with_context(|| format!("aligning {} on {}", text.display(), file.display()))?;
    progress.finish_and_clear();
    write_words(&words, format, output)
}

/// Writes words in `format` (default: by the output's extension, else JSON) to `output` or
/// standard output.
fn write_words(words: &[Word], format: Option<Format>, output: Option<&Path>) -> Result<ExitCode> {
    let format = format
        .or_else(|| output.and_then(Format::from_extension))
        .unwrap_or(Format::Json);
    let text = formats::render(words, format);
    match output {
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

/// Reads a word list: an array of words, or an object with `words` (a transcript result).
pub fn read_words(path: &Path) -> Result<Vec<Word>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let value: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid JSON", path.display()))?;
    let list = value.get("words").unwrap_or(&value);
    parse_words(list, "words").map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// The config a burn or preview uses: `--config` over `--template` (or the default template).
pub fn style(engine: &Engine, template: Option<&str>, config: Option<&Path>) -> Result<Config> {
    let patch = match config {
        None => ConfigPatch::default(),
        Some(path) => {
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
    let request = GenerateRequest {
        input: String::new(),
        words: vec![],
        config: patch,
        template_id: template.map(str::to_owned),
    };
    Ok(engine.resolve_config(&request)?)
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
    pub templates_dir: Option<&'a Path>,
}

pub fn burn(args: &BurnArgs<'_>) -> Result<ExitCode> {
    let local = local_engine(args.model, args.templates_dir, 0)?;
    let engine = &local.engine;
    let config = style(engine, args.template, args.config)?;
    let words = match (args.words, args.transcribe) {
        (Some(path), false) => read_words(path)?,
        (None, true) => {
            let progress = bar("transcribing");
            let report = progress.clone();
            let words = runtime()?
                .block_on(engine.transcribe_file(args.video, args.lang, move |p| {
                    report.set_position(u64::from(p));
                }))
                .with_context(|| format!("transcribing {}", args.video.display()))?;
            progress.finish_and_clear();
            words
        }
        _ => bail!("give the words with --words WORDS.json, or --transcribe to make them"),
    };
    let progress = bar("burning");
    let report = progress.clone();
    let options = BurnOptions::default()
        .with_preset(args.preset)
        .with_crf(args.crf)
        .with_progress(move |f| report.set_position((f * 100.0).round() as u64));
    let started = Instant::now();
    let result = engine
        .burn_file(args.video, args.output, &words, &config, &options)
        .with_context(|| format!("burning captions into {}", args.video.display()))?;
    progress.finish_and_clear();
    eprintln!(
        "{} → {} ({} frames, {} words, {:.1} s)",
        args.video.display(),
        args.output.display(),
        result.frames,
        words.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

const VIDEO_EXTENSIONS: &[&str] = &[
    "mp4", "mov", "m4v", "mkv", "webm", "avi", "mpg", "mpeg", "ts", "mts", "wmv", "flv", "3gp",
];

/// `*` and `?` wildcards over one file name.
fn wildcard(pattern: &[u8], name: &[u8]) -> bool {
    match (pattern.first(), name.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            wildcard(&pattern[1..], name) || (!name.is_empty() && wildcard(pattern, &name[1..]))
        }
        (Some(b'?'), Some(_)) => wildcard(&pattern[1..], &name[1..]),
        (Some(p), Some(n)) if p == n => wildcard(&pattern[1..], &name[1..]),
        _ => false,
    }
}

/// The videos a batch covers: every video file in a folder, or the files a `*`/`?` pattern
/// (quoted, so the shell leaves it alone) matches, sorted.
pub fn batch_inputs(spec: &str) -> Result<Vec<PathBuf>> {
    let path = Path::new(spec);
    let (dir, pattern) = if path.is_dir() {
        (path.to_owned(), None)
    } else if spec.contains(['*', '?']) {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("*");
        (dir.to_owned(), Some(name.to_owned()))
    } else if path.is_file() {
        return Ok(vec![path.to_owned()]);
    } else {
        bail!("{spec}: no such folder or file, and not a pattern");
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter(|p| match &pattern {
            Some(pattern) => p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| wildcard(pattern.as_bytes(), n.as_bytes())),
            None => p
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| VIDEO_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str())),
        })
        .collect();
    files.sort();
    Ok(files)
}

pub struct BatchArgs<'a> {
    pub inputs: &'a str,
    pub template: Option<&'a str>,
    pub config: Option<&'a Path>,
    pub out_dir: &'a Path,
    pub jobs: usize,
    pub lang: &'a str,
    pub model: &'a str,
    pub templates_dir: Option<&'a Path>,
}

enum Outcome {
    Done,
    Skipped,
    Failed(String),
}

pub fn batch(args: &BatchArgs<'_>) -> Result<ExitCode> {
    let inputs = batch_inputs(args.inputs)?;
    if inputs.is_empty() {
        bail!("{}: no videos found", args.inputs);
    }
    std::fs::create_dir_all(args.out_dir)
        .with_context(|| format!("creating {}", args.out_dir.display()))?;
    let jobs = args.jobs.max(1);
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    // Files run side by side share the cores between their transcriptions.
    let local = local_engine(args.model, args.templates_dir, (cores / jobs).max(1))?;
    let config = style(&local.engine, args.template, args.config)?;
    let overall = if std::io::stderr().is_terminal() {
        ProgressBar::new(inputs.len() as u64)
    } else {
        ProgressBar::hidden()
    };
    let queue = std::sync::Mutex::new(inputs.iter().enumerate());
    let results: std::sync::Mutex<Vec<Option<Outcome>>> =
        std::sync::Mutex::new((0..inputs.len()).map(|_| None).collect());
    let rt = runtime()?;
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(inputs.len()) {
            scope.spawn(|| {
                loop {
                    let next = queue
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .next();
                    let Some((i, input)) = next else { break };
                    let outcome = batch_one(&local.engine, &rt, input, args, &config);
                    let line = match &outcome {
                        Outcome::Done => format!("done     {}", input.display()),
                        Outcome::Skipped => format!("skipped  {} (output exists)", input.display()),
                        Outcome::Failed(why) => format!("FAILED   {}: {why}", input.display()),
                    };
                    overall.println(&line);
                    overall.inc(1);
                    results
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)[i] = Some(outcome);
                }
            });
        }
    });
    overall.finish_and_clear();
    let results = results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (mut done, mut skipped, mut failed) = (0, 0, Vec::new());
    for (input, outcome) in inputs.iter().zip(results) {
        match outcome {
            Some(Outcome::Done) => done += 1,
            Some(Outcome::Skipped) => skipped += 1,
            Some(Outcome::Failed(why)) => failed.push(format!("{}: {why}", input.display())),
            None => failed.push(format!("{}: not processed", input.display())),
        }
    }
    eprintln!(
        "{} videos: {done} captioned, {skipped} skipped (already done), {} failed",
        inputs.len(),
        failed.len()
    );
    for f in &failed {
        eprintln!("  failed: {f}");
    }
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn batch_one(
    engine: &Engine,
    rt: &tokio::runtime::Runtime,
    input: &Path,
    args: &BatchArgs<'_>,
    config: &Config,
) -> Outcome {
    let stem = input
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("video");
    let output = args.out_dir.join(format!("{stem}.mp4"));
    if output.exists() {
        return Outcome::Skipped;
    }
    let words_file = args.out_dir.join(format!("{stem}.words.json"));
    let words = match read_words(&words_file) {
        Ok(words) => words,
        Err(_) => match rt.block_on(engine.transcribe_file(input, args.lang, |_| {})) {
            Ok(words) => {
                // Kept so a re-run after a failed burn need not transcribe again.
                let _ = std::fs::write(&words_file, formats::render(&words, Format::Json));
                words
            }
            Err(e) => return Outcome::Failed(format!("transcription: {e}")),
        },
    };
    match engine.burn_file(input, &output, &words, config, &BurnOptions::default()) {
        Ok(_) => Outcome::Done,
        Err(e) => Outcome::Failed(format!("burn: {e}")),
    }
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
    let local = local_engine("base", args.templates_dir, 0)?;
    let config = style(&local.engine, args.template, args.config)?;
    let words = read_words(args.words)?;
    let fonts = Arc::new(SystemFonts::new()?);
    let renderer = CaptionRenderer::new(
        &words,
        &config,
        FrameSize::new(args.size.0, args.size.1),
        fonts,
    )?;
    let background = caption_core::Color::rgb(40, 44, 52);
    let png = if args.sheet {
        caption_render::contact_sheet_png(&renderer, 4, 270, background)?
    } else {
        caption_render::frame_png(&renderer, args.at_s, background)?
    };
    std::fs::write(args.output, png)
        .with_context(|| format!("writing {}", args.output.display()))?;
    eprintln!("wrote {}", args.output.display());
    Ok(ExitCode::SUCCESS)
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
