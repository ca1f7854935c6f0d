//! Run with `cargo run -p caption-transcribe --release --example install_model -- [tiny.en|base ...]`.
//!
//! Installs the named models (default: all known) into `$CAPTIONS_MODELS` or
//! `~/.cache/caption-engine/models` and prints each path.

#![allow(
    clippy::print_stdout,
    reason = "a command-line example reports on stdout"
)]

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let mut names: Vec<String> = std::env::args().skip(1).collect();
    let force = names.iter().any(|n| n == "--force");
    names.retain(|n| n != "--force");
    if names.is_empty() {
        names = caption_transcribe::KNOWN_MODELS
            .iter()
            .map(|s| s.to_string())
            .collect();
    }
    let options = caption_transcribe::InstallOptions::default().force(force);
    for name in &names {
        let path = caption_transcribe::install_model(name, &options)?;
        println!("{name}: {}", path.display());
    }
    Ok(())
}
