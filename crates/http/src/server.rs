//! Running the service: storage, jobs, engine, workers, the listener, graceful shutdown.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use caption_engine::Engine;
use caption_jobs::{EmbeddedJobStore, JobStore, PostgresJobStore};
use caption_store::open_storage;
use tokio::net::TcpListener;

use crate::{ApiKeys, AppState, Error, KeyLimits, Result, ServiceConfig, router};

/// A bound, ready service: [`Server::bind`] opens everything and takes the port, so a caller
/// can print the address before [`Server::run`] starts answering.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    local_addr: SocketAddr,
    public_url: String,
    state: AppState,
    /// Closed when [`Server::run`] ends.
    jobs: Arc<dyn JobStore>,
    /// The job store is shared with other processes (PostgreSQL).
    shared_jobs: bool,
}

impl Server {
    /// Binds `config.bind`, opens storage and the job store, builds the engine. Refuses to
    /// start without an API key: an open service would let anyone burn CPU and fill disks.
    pub async fn bind(config: ServiceConfig) -> Result<Self> {
        let keys = ApiKeys::new(config.resolve_api_keys()?);
        // Inline keys and the key file's, counted once resolved (never printed).
        let key_count = keys.len();
        if keys.is_empty() {
            return Err(Error::Config(
                "no API key: set api_keys or api_key_file (CAPTIONS_API_KEYS, CAPTIONS_API_KEY_FILE)"
                    .to_owned(),
            ));
        }
        std::fs::create_dir_all(&config.data_dir).map_err(|source| Error::Io {
            context: format!("creating the data folder {}", config.data_dir.display()),
            source,
        })?;
        // Everything a client or an operator may look for in the data folder exists before the
        // port opens (a process that checks for the port then reads the folder must find it).
        let webhook_secret = config.resolve_webhook_secret()?;
        let listener = TcpListener::bind(config.bind)
            .await
            .map_err(|source| Error::Io {
                context: format!("listening on {}", config.bind),
                source,
            })?;
        let local_addr = listener.local_addr().map_err(|source| Error::Io {
            context: "reading the bound address".to_owned(),
            source,
        })?;
        let public_url = config
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{local_addr}"))
            .trim_end_matches('/')
            .to_owned();
        let opened = open_storage(&config.storage_options(&public_url))?;
        let jobs: Arc<dyn JobStore> = match &config.database_url {
            Some(url) => Arc::new(PostgresJobStore::connect(url).await?),
            None => Arc::new(EmbeddedJobStore::open(config.data_dir.join("jobs.redb"))?),
        };
        let shared_jobs = config.database_url.is_some();
        let mut options = config.engine_options();
        options.webhooks.secret = webhook_secret.into_bytes();
        let engine = Engine::new(options, opened.storage, Arc::clone(&jobs))?;
        let mut state = AppState::new(engine, keys)
            .with_max_body_bytes(config.max_body_bytes)
            .with_sync_generate_limit(Duration::from_secs(config.sync_generate_limit_s))
            .with_key_limits(KeyLimits::new(
                config.max_queued_jobs_per_key,
                config.max_generates_per_key,
            ));
        if let Some(authority) = opened.local {
            state = state.with_local_storage(authority);
        }
        tracing::info!(
            ?config,
            api_keys = key_count,
            %local_addr,
            %public_url,
            "service ready"
        );
        Ok(Self {
            listener,
            local_addr,
            public_url,
            state,
            jobs,
            shared_jobs,
        })
    }

    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The origin put in local upload and download links.
    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    /// The engine the server runs (for its storage and jobs, in tests and tools).
    pub fn engine(&self) -> &Engine {
        self.state.engine()
    }

    /// Starts the transcription workers and answers requests until `shutdown` completes; then
    /// stops accepting, lets in-flight requests finish and stops the workers (each finishes
    /// or hands back its job, which stays persisted). When it returns the job store is
    /// closed: a service started next on the same data folder opens it at once (axum lets the
    /// last connections drop their handles on the engine a moment after it returns).
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> Result<()> {
        // One process owns the embedded store, so jobs left IN_PROGRESS by a previous run
        // of this process can be queued again at once. A shared store's in-progress jobs may
        // belong to live processes: those come back only when their leases run out.
        let workers = self.state.engine().spawn_workers(!self.shared_jobs).await?;
        let app = router(self.state);
        let served = axum::serve(self.listener, app)
            .with_graceful_shutdown(async move {
                shutdown.await;
                tracing::info!("shutting down: finishing requests in flight");
            })
            .await;
        tracing::info!("stopping transcription workers");
        workers.shutdown().await;
        self.jobs.close().await;
        tracing::info!("stopped");
        served.map_err(|source| Error::Io {
            context: "serving HTTP".to_owned(),
            source,
        })
    }
}

/// Serves `config` until `shutdown` completes (see [`Server::run`]). To know the address
/// before answering (a port of 0 takes a free one), bind and run in two steps:
///
/// ```
/// use std::io::{Read as _, Write as _};
///
/// use caption_http::{ServiceConfig, Server};
///
/// # tokio::runtime::Runtime::new()?.block_on(async {
/// let dir = tempfile::tempdir()?;
/// let mut config = ServiceConfig::from_toml(r#"bind = "127.0.0.1:0"
/// api_keys = ["secret-key"]"#)?;
/// config.data_dir = dir.path().to_owned();
/// let server = Server::bind(config).await?;
/// let address = server.local_addr();
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// let running = tokio::spawn(server.run(async move { stopped.await.ok(); }));
///
/// let reply = tokio::task::spawn_blocking(move || -> std::io::Result<String> {
///     let mut socket = std::net::TcpStream::connect(address)?;
///     socket.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")?;
///     let mut reply = String::new();
///     socket.read_to_string(&mut reply)?;
///     Ok(reply)
/// })
/// .await??;
/// assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
///
/// stop.send(()).ok();
/// running.await??;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// As [`Server::bind`] (no API key, a port in use, storage or job store that cannot be
/// opened) and [`Server::run`].
pub async fn serve(
    config: ServiceConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    Server::bind(config).await?.run(shutdown).await
}
