//! `captions serve [--config FILE] [--bind ADDR] [--data-dir DIR]`: the HTTP service until
//! SIGTERM or Ctrl-C.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use caption_http::{Server, ServiceConfig};

/// Name of the key file made in the data folder when no key is configured.
const GENERATED_KEY_FILE: &str = "api-key";

/// `captions serve`'s flags; `bind` and `data_dir` win over the file and the variables.
#[derive(Debug, Default)]
pub struct Flags {
    pub config: Option<PathBuf>,
    pub bind: Option<std::net::SocketAddr>,
    pub data_dir: Option<PathBuf>,
}

/// Loads the configuration (`config` plus `CAPTIONS_*` variables, then the flags), makes an API
/// key on first run when none is configured, prints it with a ready curl line and serves until
/// a signal.
pub fn run(flags: Flags) -> anyhow::Result<()> {
    use std::io::IsTerminal as _;
    // whisper.cpp's model-loading chatter arrives as info events of `caption_whisper`: shown only
    // when asked for (RUST_LOG=caption_whisper=debug).
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
                tracing_subscriber::EnvFilter::new("info,caption_whisper=warn")
            }),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let mut config = ServiceConfig::load(flags.config.as_deref())?;
    if let Some(bind) = flags.bind {
        config.bind = bind;
    }
    if let Some(data_dir) = flags.data_dir {
        config.data_dir = data_dir;
    }
    let generated_key = if config.api_keys.is_empty() && config.api_key_file.is_none() {
        let (path, key) = data_folder_key(&config.data_dir)?;
        config.api_key_file = Some(path);
        Some(key)
    } else {
        None
    };
    caption_engine::cap_arenas();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let shutdown = shutdown_signal();
        let server = Server::bind(config).await?;
        let base = format!("http://{}", server.local_addr());
        let key = generated_key.as_deref().unwrap_or("$CAPTIONS_API_KEY");
        let mut out = std::io::stdout().lock();
        writeln!(out, "captions serve: listening on {base}")?;
        writeln!(
            out,
            "studio: open {base}/ in your browser to caption a video"
        )?;
        if let Some(key) = &generated_key {
            writeln!(out, "API key: {key}")?;
        }
        writeln!(out, "try: curl -H 'x-api-key: {key}' {base}/v1/templates")?;
        out.flush()?;
        drop(out);
        server.run(shutdown).await?;
        anyhow::Ok(())
    })
}

/// The key kept in `data_dir/api-key` (mode 0600), made from 32 random bytes if absent.
fn data_folder_key(data_dir: &Path) -> anyhow::Result<(PathBuf, String)> {
    let path = data_dir.join(GENERATED_KEY_FILE);
    if let Ok(text) = std::fs::read_to_string(&path)
        && let Some(key) = text.lines().map(str::trim).find(|l| !l.is_empty())
    {
        return Ok((path, key.to_owned()));
    }
    std::fs::create_dir_all(data_dir)
        .with_context(|| format!("creating the data folder {}", data_dir.display()))?;
    let mut bytes = [0_u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness for a key: {e}"))?;
    let key: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options
        .open(&path)
        .with_context(|| format!("creating the API key file {}", path.display()))?;
    writeln!(file, "{key}").with_context(|| format!("writing {}", path.display()))?;
    tracing::info!(path = %path.display(), "made an API key");
    Ok((path, key))
}

/// Listens for SIGTERM and Ctrl-C (SIGINT) from the moment it is called, which is before the
/// port opens: a signal that arrives right after start-up stops the service cleanly too (a
/// listener set up later left the default action, death by signal, to that moment). The future
/// completes on either signal. Call it inside the runtime.
fn shutdown_signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let listeners = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        );
        async move {
            match listeners {
                (Ok(mut interrupt), Ok(mut terminate)) => tokio::select! {
                    _ = interrupt.recv() => tracing::info!("interrupted"),
                    _ = terminate.recv() => tracing::info!("terminated"),
                },
                (Err(e), _) | (_, Err(e)) => {
                    tracing::warn!(error = %e, "cannot listen for SIGTERM; stopping on Ctrl-C only");
                    let _ = tokio::signal::ctrl_c().await;
                    tracing::info!("interrupted");
                }
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("interrupted");
    }
}
