//! `captions batch`: every video of a folder (or a `*` pattern), transcribed and captioned,
//! skipping the ones already captioned with the same style and words.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use caption_core::{Config, ErrorCode, Word};
use caption_engine::{BurnOptions, Captioner, Task};
use globset::GlobBuilder;
use indicatif::ProgressBar;
use sha2::{Digest as _, Sha256};

use crate::failure::{Failure, fail};
use crate::formats::{self, read_words};
use crate::media_cmds::{captioner, limit_threads, style};
use crate::{interrupt, paths};

const VIDEO_EXTENSIONS: &[&str] = &[
    "mp4", "mov", "m4v", "mkv", "webm", "avi", "mpg", "mpeg", "ts", "mts", "wmv", "flv", "3gp",
];

/// The videos a batch covers: every video file in a folder, or the files of one folder whose
/// names a glob pattern (`*`, `?`, `[abc]`, `{mp4,mov}`; quoted, so the shell leaves it alone)
/// matches, sorted.
pub fn batch_inputs(spec: &str) -> Result<Vec<PathBuf>> {
    let path = Path::new(spec);
    let (dir, pattern) = if path.is_dir() {
        (path.to_owned(), None)
    } else if path.is_file() {
        return Ok(vec![path.to_owned()]);
    } else if spec.contains(['*', '?', '[', '{']) {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("*");
        let glob = match GlobBuilder::new(name).literal_separator(true).build() {
            Ok(glob) => glob,
            Err(e) => {
                return fail(
                    ErrorCode::InvalidRequest,
                    spec,
                    format!("not a file name pattern: {}", e.kind()),
                );
            }
        };
        (dir.to_owned(), Some(glob.compile_matcher()))
    } else {
        return fail(
            ErrorCode::InputNotFound,
            spec,
            "no such folder or file, and not a pattern",
        );
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                Failure::new(ErrorCode::InputNotFound, dir.display(), "no such folder")
            }
            _ => Failure::io(&dir, "cannot be read", &e),
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter(|p| match &pattern {
            Some(pattern) => p.file_name().is_some_and(|n| pattern.is_match(n)),
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
    /// Transcribe and burn every video again, whatever was done before.
    pub force: bool,
    /// A video in which no speech is heard fails.
    pub require_speech: bool,
    /// Cores in all; 0: every core.
    pub threads: usize,
}

enum Outcome {
    /// Captioned, with the burn's warnings (damage in the input that did not stop it).
    Done(Vec<String>),
    Skipped,
    Failed(Failure),
    /// Not started, or stopped, because of Ctrl-C or SIGTERM.
    Interrupted,
}

/// What an output was made from: the config and the words, hashed. Kept beside the output as
/// `<name>.fingerprint`, so a run with another template, config or word list re-captions the
/// video instead of skipping it.
fn fingerprint(config: &Config, words: &[Word]) -> Result<String> {
    let mut hash = Sha256::new();
    hash.update(serde_json::to_vec(config).context("serialising the config")?);
    hash.update(b"\0");
    hash.update(serde_json::to_vec(words).context("serialising the words")?);
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

pub fn batch(args: &BatchArgs<'_>) -> Result<ExitCode> {
    let inputs = batch_inputs(args.inputs)?;
    if inputs.is_empty() {
        return fail(ErrorCode::InputNotFound, args.inputs, "no videos found");
    }
    let jobs = args.jobs.max(1);
    limit_threads(args.threads);
    let cores = match args.threads {
        0 => std::thread::available_parallelism().map_or(2, usize::from),
        n => n,
    };
    // Files run side by side share the cores between their transcriptions and encodes.
    let each = (cores / jobs).max(1);
    let captioner = captioner(args.model, args.templates_dir, each, each)?;
    let config = style(&captioner, args.template, args.config)?;
    let folder = OutputFolder::make(args.out_dir)?;
    let overall = if std::io::stderr().is_terminal() {
        ProgressBar::new(inputs.len() as u64)
    } else {
        ProgressBar::hidden()
    };
    let queue = std::sync::Mutex::new(inputs.iter().enumerate());
    let results: std::sync::Mutex<Vec<Option<Outcome>>> =
        std::sync::Mutex::new((0..inputs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(inputs.len()) {
            scope.spawn(|| {
                loop {
                    let next = queue
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .next();
                    let Some((i, input)) = next else { break };
                    let outcome = if interrupt::interrupted() {
                        Outcome::Interrupted
                    } else {
                        batch_one(&captioner, input, args, &config)
                    };
                    let line = match &outcome {
                        Outcome::Done(_) => format!("done     {}", input.display()),
                        Outcome::Skipped => format!(
                            "skipped  {} (already captioned with this style)",
                            input.display()
                        ),
                        Outcome::Failed(why) => {
                            format!("FAILED   {} ({})", input.display(), why.code())
                        }
                        Outcome::Interrupted => format!("stopped  {}", input.display()),
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
    folder.remove_if_empty();
    let results = results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (mut done, mut skipped, mut stopped, mut failed) = (0, 0, 0, Vec::new());
    let mut warned = Vec::new();
    for (input, outcome) in inputs.iter().zip(results) {
        match outcome {
            Some(Outcome::Done(warnings)) => {
                done += 1;
                warned.extend(warnings.iter().map(|w| format!("{}: {w}", input.display())));
            }
            Some(Outcome::Skipped) => skipped += 1,
            Some(Outcome::Interrupted) => stopped += 1,
            Some(Outcome::Failed(why)) => failed.extend(why.lines()),
            None => failed.extend(
                Failure::new(ErrorCode::Internal, input.display(), "not processed").lines(),
            ),
        }
    }
    eprintln!(
        "{} videos: {done} captioned, {skipped} skipped (already done), {} failed",
        inputs.len(),
        failed.len()
    );
    for f in &failed {
        eprintln!("{f}");
    }
    for w in &warned {
        eprintln!("warning: {w}");
    }
    if stopped > 0 {
        eprintln!("interrupted: {stopped} videos not captioned (run again to finish them)");
        return Ok(ExitCode::from(interrupt::interrupted_exit_code()));
    }
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The output folder, made by this run or there before it.
struct OutputFolder<'a> {
    path: &'a Path,
    made: bool,
}

impl<'a> OutputFolder<'a> {
    fn make(path: &'a Path) -> Result<Self> {
        let made = !path.exists();
        std::fs::create_dir_all(path).map_err(|e| Failure::io(path, "cannot be created", &e))?;
        Ok(Self { path, made })
    }

    /// A folder this run made and left empty (every video failed or was stopped) is removed:
    /// no empty output folder stays behind a failed batch.
    fn remove_if_empty(&self) {
        if self.made {
            // Fails, as wanted, when the folder holds anything.
            let _ = std::fs::remove_dir(self.path);
        }
    }
}

fn batch_one(
    captioner: &Captioner,
    input: &Path,
    args: &BatchArgs<'_>,
    config: &Config,
) -> Outcome {
    let stem = input
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("video");
    let output = args.out_dir.join(format!("{stem}.mp4"));
    if paths::is_same_file(input, &output) {
        return Outcome::Failed(Failure::new(
            ErrorCode::InvalidRequest,
            output.display(),
            "the output would replace the input; choose another --out folder",
        ));
    }
    let words_file = args.out_dir.join(format!("{stem}.words.json"));
    let print_file = args.out_dir.join(format!("{stem}.fingerprint"));
    let kept_words = if args.force {
        None
    } else {
        read_words(&words_file).ok()
    };
    if let Some(words) = &kept_words
        && output.exists()
        && let Ok(kept) = std::fs::read_to_string(&print_file)
        && fingerprint(config, words).is_ok_and(|now| now == kept.trim())
    {
        return Outcome::Skipped;
    }
    let words = match kept_words {
        Some(words) => words,
        None => match captioner.transcribe(input, &Task::default().language(args.lang)) {
            Ok(words) => {
                // Kept so a re-run after a failed burn need not transcribe again.
                let _ = std::fs::write(&words_file, formats::json(&words));
                words
            }
            Err(_) if interrupt::interrupted() => return Outcome::Interrupted,
            Err(e) => return Outcome::Failed(Failure::engine(&[input], &e)),
        },
    };
    let mut warnings = Vec::new();
    if words.is_empty() {
        let heard = "no speech was heard";
        if args.require_speech {
            return Outcome::Failed(Failure::new(
                ErrorCode::NoSpeech,
                input.display(),
                format!("{heard} (silence, music or noise); nothing was written"),
            ));
        }
        warnings.push(format!("{heard}; the video has no captions"));
    }
    let working = interrupt::Working::start();
    let options = BurnOptions::default().with_cancel(working.burn_cancel());
    match captioner.burn_with(input, &output, &words, config, &options, &Task::default()) {
        Ok(report) => warnings.extend(report.warnings),
        Err(_) if interrupt::interrupted() => return Outcome::Interrupted,
        Err(e) => return Outcome::Failed(Failure::engine(&[input, &output], &e)),
    }
    let written =
        fingerprint(config, &words).map(|print| std::fs::write(&print_file, print + "\n"));
    match written {
        Ok(Ok(())) => Outcome::Done(warnings),
        Ok(Err(e)) => Outcome::Failed(Failure::io(&print_file, "cannot be written", &e)),
        Err(e) => Outcome::Failed(Failure::new(
            ErrorCode::Internal,
            print_file.display(),
            format!("{e:#}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        reason = "test code: a panic is the failure report"
    )]

    use super::batch_inputs;

    #[test]
    fn inputs_are_a_folder_s_videos_a_file_or_a_glob_over_names() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.mp4", "b.MOV", "c.txt", "d.mp4", "e [1].mp4"] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        let names = |spec: &str| -> Vec<String> {
            batch_inputs(spec)
                .unwrap()
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        let root = dir.path().display().to_string();
        assert_eq!(names(&root), ["a.mp4", "b.MOV", "d.mp4", "e [1].mp4"]);
        assert_eq!(
            names(&format!("{root}/*.mp4")),
            ["a.mp4", "d.mp4", "e [1].mp4"]
        );
        assert_eq!(names(&format!("{root}/?.mp4")), ["a.mp4", "d.mp4"]);
        assert_eq!(names(&format!("{root}/[ab].*")), ["a.mp4", "b.MOV"]);
        assert_eq!(names(&format!("{root}/{{a,c}}.*")), ["a.mp4", "c.txt"]);
        // A file whose name looks like a pattern is that file.
        assert_eq!(names(&format!("{root}/e [1].mp4")), ["e [1].mp4"]);
        assert!(batch_inputs(&format!("{root}/[a.mp4")).is_err());
        assert!(batch_inputs(&format!("{root}/none.mp4")).is_err());
    }
}
