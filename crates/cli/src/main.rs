//! `captions`: the caption engine on the command line.

// The binary's job is to print; libraries log through tracing instead.
#![allow(
    clippy::print_stdout,
    reason = "a command-line tool writes its results to stdout"
)]

mod catalog_cmds;

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
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Templates {
            id,
            json,
            templates_dir,
        } => catalog_cmds::templates(id.as_deref(), json, templates_dir.as_deref()),
        Command::Fonts { lang } => catalog_cmds::fonts(lang.as_deref()),
        Command::Validate { file } => catalog_cmds::validate(&file),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
