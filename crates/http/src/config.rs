//! The service's configuration: one TOML file, then `CAPTIONS_*` environment overrides.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use caption_engine::{EngineOptions, WebhookOptions};
use caption_store::{LinkOptions, StorageConfig, StorageOptions};
use serde::Deserialize;

use crate::{Error, Result};

/// Where uploads and outputs live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StorageKind {
    /// Files under `data_dir/objects`, uploaded and downloaded through this service's own
    /// signed routes.
    Local,
    /// An S3-compatible bucket (`[s3]`).
    S3,
}

/// The bucket of `storage = "s3"`.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct S3Config {
    /// e.g. `https://s3.eu-west-1.amazonaws.com` or `http://127.0.0.1:9000` (plain http is
    /// allowed only for `http://` endpoints, which are then taken as deliberate).
    pub endpoint: String,
    /// The bucket's name.
    pub bucket: String,
    /// The bucket's region, e.g. `eu-west-1`.
    pub region: String,
    /// The access key id.
    pub access_key: String,
    /// The secret access key (never logged).
    pub secret_key: String,
}

impl fmt::Debug for S3Config {
    // The secret must never reach a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Config")
            .field("endpoint", &self.endpoint)
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("access_key", &self.access_key)
            .field("secret_key", &"<redacted>")
            .finish()
    }
}

/// Everything `captions serve` needs. Every field has a default, so an empty file (or none)
/// is a working local service on 127.0.0.1:8080 with its data in `./data`.
///
/// ```toml
/// bind = "127.0.0.1:8080"
/// data_dir = "/var/lib/captions"
/// api_key_file = "/etc/captions/keys"   # one key per line
/// model = "base"
/// storage = "s3"
/// [s3]
/// endpoint = "https://s3.eu-west-1.amazonaws.com"
/// bucket = "captions"
/// region = "eu-west-1"
/// access_key = "..."
/// secret_key = "..."
/// ```
// Non-exhaustive so that a setting can be added: a program starts from `ServiceConfig::default()`
// (or `load`) and sets the fields it wants, which stay public as the TOML keys they mirror.
#[derive(Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct ServiceConfig {
    /// Address to listen on (`CAPTIONS_BIND`).
    pub bind: SocketAddr,
    /// The origin clients reach this service at, used in local upload and download links
    /// (`CAPTIONS_PUBLIC_URL`); default `http://{bound address}`.
    pub public_url: Option<String>,
    /// Jobs database, local files, scratch space (`CAPTIONS_DATA_DIR`).
    pub data_dir: PathBuf,
    /// Accepted `x-api-key` values (`CAPTIONS_API_KEYS`, comma-separated).
    pub api_keys: Vec<String>,
    /// A file with one accepted key per line; `#` starts a comment (`CAPTIONS_API_KEY_FILE`).
    pub api_key_file: Option<PathBuf>,
    /// Installed whisper model for transcription jobs (`CAPTIONS_MODEL`).
    pub model: String,
    /// Transcription jobs run at once (`CAPTIONS_WORKERS`).
    pub workers: usize,
    /// Threads per transcription, 0 = every core (`CAPTIONS_THREADS_PER_JOB`).
    pub threads_per_job: usize,
    /// Generate requests burned at once; more get 429 (`CAPTIONS_GENERATE_SLOTS`).
    pub generate_slots: usize,
    /// x264 threads per burn, 0 = x264 decides (`CAPTIONS_ENCODER_THREADS`).
    pub encoder_threads: usize,
    /// Claims a job may have before it fails for good (`CAPTIONS_MAX_ATTEMPTS`).
    pub max_attempts: u32,
    /// A job whose worker sends no heartbeat for this many seconds is queued again
    /// (`CAPTIONS_LEASE_S`).
    pub lease_s: u64,
    /// Shared PostgreSQL job store, `postgres://user:password@host:port/db`
    /// (`CAPTIONS_DATABASE_URL`). Unset: the embedded store in the data folder, for one process.
    pub database_url: Option<String>,
    /// Extra templates (`*.json`) that add to or replace the built-in ones
    /// (`CAPTIONS_TEMPLATES`).
    pub templates_dir: Option<PathBuf>,
    /// Largest JSON request body; larger ones get 413 (`CAPTIONS_MAX_BODY_BYTES`).
    pub max_body_bytes: usize,
    /// Largest file an upload descriptor admits (`CAPTIONS_MAX_UPLOAD_BYTES`).
    pub max_upload_bytes: u64,
    /// Lifetime of an upload descriptor, seconds (`CAPTIONS_UPLOAD_TTL_S`).
    pub upload_ttl_s: u64,
    /// Lifetime of a download link, seconds (`CAPTIONS_DOWNLOAD_TTL_S`).
    pub download_ttl_s: u64,
    /// `local` or `s3` (`CAPTIONS_STORAGE`).
    pub storage: StorageKind,
    /// The bucket when `storage = "s3"` (`CAPTIONS_S3_ENDPOINT`, `_BUCKET`, `_REGION`,
    /// `_ACCESS_KEY`, `_SECRET_KEY`).
    pub s3: S3Config,
    /// Key of the webhook signatures (`CAPTIONS_WEBHOOK_SECRET`). Unset: a random one is made
    /// on first start and kept in `data_dir/webhook-secret` (every process of a scaled-out
    /// service needs the same one, so set it there).
    pub webhook_secret: Option<String>,
    /// Deliver webhooks to loopback, private, link-local and metadata addresses too
    /// (`CAPTIONS_WEBHOOK_ALLOW_PRIVATE`); for tests and private deployments.
    pub webhook_allow_private: bool,
    /// Wait before the first webhook retry, milliseconds; each retry doubles it, up to an hour
    /// (`CAPTIONS_WEBHOOK_RETRY_BASE_MS`).
    pub webhook_retry_base_ms: u64,
    /// How long an event is retried before it is given up, seconds
    /// (`CAPTIONS_WEBHOOK_RETRY_FOR_S`; default a day).
    pub webhook_retry_for_s: u64,
    /// A synchronous `POST /generate` running longer than this many seconds still completes,
    /// but is logged as one that should have been `"async": true` (proxies often cut
    /// connections at 60 s) (`CAPTIONS_SYNC_GENERATE_LIMIT_S`).
    pub sync_generate_limit_s: u64,
    /// Jobs (transcripts, `"async": true` generates) one API key may have queued or running;
    /// more get 429. 0: no limit (`CAPTIONS_MAX_QUEUED_JOBS_PER_KEY`).
    pub max_queued_jobs_per_key: usize,
    /// Synchronous generates one API key may run at once; more get 429. 0: no limit
    /// (`CAPTIONS_MAX_GENERATES_PER_KEY`).
    pub max_generates_per_key: usize,
}

impl fmt::Debug for ServiceConfig {
    // API keys are secrets: count them, never print them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceConfig")
            .field("bind", &self.bind)
            .field("public_url", &self.public_url)
            .field("data_dir", &self.data_dir)
            .field(
                "api_keys",
                &format_args!("<{} inline keys>", self.api_keys.len()),
            )
            .field("api_key_file", &self.api_key_file)
            .field("model", &self.model)
            .field("workers", &self.workers)
            .field("generate_slots", &self.generate_slots)
            .field("storage", &self.storage)
            .field("s3", &self.s3)
            .field(
                "webhook_secret",
                &self.webhook_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("webhook_allow_private", &self.webhook_allow_private)
            .finish_non_exhaustive()
    }
}

/// Name of the signing secret made in the data folder when none is configured.
const WEBHOOK_SECRET_FILE: &str = "webhook-secret";

/// Defaults chosen for one machine; JSON bodies of 64 MiB hold the 200 000 words the
/// validator allows with room to spare.
const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

impl Default for ServiceConfig {
    fn default() -> Self {
        let engine = EngineOptions::default();
        let links = LinkOptions::default();
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            public_url: None,
            data_dir: PathBuf::from("data"),
            api_keys: Vec::new(),
            api_key_file: None,
            model: engine.model,
            workers: engine.workers,
            threads_per_job: engine.threads_per_job,
            generate_slots: engine.generate_slots,
            encoder_threads: engine.encoder_threads,
            max_attempts: engine.max_attempts,
            lease_s: engine.lease.as_secs(),
            database_url: None,
            templates_dir: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_upload_bytes: links.max_upload_bytes,
            upload_ttl_s: links.upload_ttl.as_secs(),
            download_ttl_s: links.download_ttl.as_secs(),
            storage: StorageKind::Local,
            s3: S3Config::default(),
            webhook_secret: None,
            webhook_allow_private: engine.webhooks.allow_private,
            webhook_retry_base_ms: u64::try_from(engine.webhooks.retry_base.as_millis())
                .unwrap_or(u64::MAX),
            webhook_retry_for_s: engine.webhooks.retry_for.as_secs(),
            sync_generate_limit_s: 50,
            max_queued_jobs_per_key: 20,
            max_generates_per_key: 2,
        }
    }
}

impl ServiceConfig {
    /// Reads `path` (when given), then applies the `CAPTIONS_*` environment variables.
    pub fn load(path: Option<&Path>) -> Result<Self> {
        let config = match path {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
                    context: format!("reading {}", path.display()),
                    source,
                })?;
                Self::from_toml(&text)
                    .map_err(|e| Error::Config(format!("{}: {e}", path.display())))?
            }
            None => Self::default(),
        };
        config.with_env(|name| std::env::var(name).ok())
    }

    /// Parses a TOML document (no environment).
    pub fn from_toml(text: &str) -> Result<Self> {
        toml::from_str(text).map_err(|e| Error::Config(e.to_string()))
    }

    /// Applies overrides from `lookup` (the environment, or a map in tests).
    pub fn with_env(mut self, lookup: impl Fn(&str) -> Option<String>) -> Result<Self> {
        fn parse<T: std::str::FromStr>(name: &str, value: &str) -> Result<T>
        where
            T::Err: fmt::Display,
        {
            value
                .trim()
                .parse()
                .map_err(|e| Error::Config(format!("{name}={value:?}: {e}")))
        }
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        macro_rules! set {
            ($field:expr, $name:literal) => {
                if let Some(v) = get($name) {
                    $field = parse($name, &v)?;
                }
            };
        }
        set!(self.bind, "CAPTIONS_BIND");
        if let Some(v) = get("CAPTIONS_PUBLIC_URL") {
            self.public_url = Some(v);
        }
        if let Some(v) = get("CAPTIONS_DATA_DIR") {
            self.data_dir = PathBuf::from(v);
        }
        if let Some(v) = get("CAPTIONS_API_KEYS") {
            self.api_keys = v
                .split(',')
                .map(str::trim)
                .filter(|k| !k.is_empty())
                .map(str::to_owned)
                .collect();
        }
        if let Some(v) = get("CAPTIONS_API_KEY_FILE") {
            self.api_key_file = Some(PathBuf::from(v));
        }
        if let Some(v) = get("CAPTIONS_MODEL") {
            self.model = v;
        }
        set!(self.workers, "CAPTIONS_WORKERS");
        set!(self.threads_per_job, "CAPTIONS_THREADS_PER_JOB");
        set!(self.generate_slots, "CAPTIONS_GENERATE_SLOTS");
        set!(self.encoder_threads, "CAPTIONS_ENCODER_THREADS");
        set!(self.max_attempts, "CAPTIONS_MAX_ATTEMPTS");
        set!(self.lease_s, "CAPTIONS_LEASE_S");
        if let Some(v) = get("CAPTIONS_DATABASE_URL") {
            self.database_url = Some(v).filter(|v| !v.trim().is_empty());
        }
        if let Some(v) = get("CAPTIONS_TEMPLATES") {
            self.templates_dir = Some(PathBuf::from(v));
        }
        set!(self.max_body_bytes, "CAPTIONS_MAX_BODY_BYTES");
        set!(self.max_upload_bytes, "CAPTIONS_MAX_UPLOAD_BYTES");
        set!(self.upload_ttl_s, "CAPTIONS_UPLOAD_TTL_S");
        set!(self.download_ttl_s, "CAPTIONS_DOWNLOAD_TTL_S");
        if let Some(v) = get("CAPTIONS_WEBHOOK_SECRET") {
            self.webhook_secret = Some(v);
        }
        set!(self.webhook_allow_private, "CAPTIONS_WEBHOOK_ALLOW_PRIVATE");
        set!(self.webhook_retry_base_ms, "CAPTIONS_WEBHOOK_RETRY_BASE_MS");
        set!(self.webhook_retry_for_s, "CAPTIONS_WEBHOOK_RETRY_FOR_S");
        set!(self.sync_generate_limit_s, "CAPTIONS_SYNC_GENERATE_LIMIT_S");
        set!(
            self.max_queued_jobs_per_key,
            "CAPTIONS_MAX_QUEUED_JOBS_PER_KEY"
        );
        set!(self.max_generates_per_key, "CAPTIONS_MAX_GENERATES_PER_KEY");
        if let Some(v) = get("CAPTIONS_STORAGE") {
            self.storage = match v.trim().to_ascii_lowercase().as_str() {
                "local" => StorageKind::Local,
                "s3" => StorageKind::S3,
                other => {
                    return Err(Error::Config(format!(
                        "CAPTIONS_STORAGE={other:?}: expected \"local\" or \"s3\""
                    )));
                }
            };
        }
        for (field, name) in [
            (&mut self.s3.endpoint, "CAPTIONS_S3_ENDPOINT"),
            (&mut self.s3.bucket, "CAPTIONS_S3_BUCKET"),
            (&mut self.s3.region, "CAPTIONS_S3_REGION"),
            (&mut self.s3.access_key, "CAPTIONS_S3_ACCESS_KEY"),
            (&mut self.s3.secret_key, "CAPTIONS_S3_SECRET_KEY"),
        ] {
            if let Some(v) = get(name) {
                *field = v;
            }
        }
        self.check()?;
        Ok(self)
    }

    fn check(&self) -> Result<()> {
        if self.storage == StorageKind::S3 {
            for (value, name) in [
                (&self.s3.endpoint, "s3.endpoint"),
                (&self.s3.bucket, "s3.bucket"),
                (&self.s3.region, "s3.region"),
                (&self.s3.access_key, "s3.access_key"),
                (&self.s3.secret_key, "s3.secret_key"),
            ] {
                if value.is_empty() {
                    return Err(Error::Config(format!(
                        "storage = \"s3\" needs {name} (or CAPTIONS_{})",
                        name.replace('.', "_").to_ascii_uppercase()
                    )));
                }
            }
        }
        if self.max_body_bytes == 0 || self.upload_ttl_s == 0 || self.download_ttl_s == 0 {
            return Err(Error::Config(
                "max_body_bytes, upload_ttl_s and download_ttl_s must be above 0".to_owned(),
            ));
        }
        Ok(())
    }

    /// Every accepted API key: `api_keys` plus the lines of `api_key_file`.
    pub fn resolve_api_keys(&self) -> Result<Vec<String>> {
        let mut keys = self.api_keys.clone();
        if let Some(path) = &self.api_key_file {
            let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
                context: format!("reading the API key file {}", path.display()),
                source,
            })?;
            keys.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(str::to_owned),
            );
        }
        Ok(keys)
    }

    /// The webhook signing key: `webhook_secret`, else the one kept in
    /// `data_dir/webhook-secret` (made from 32 random bytes, mode 0600, on first use).
    pub fn resolve_webhook_secret(&self) -> Result<String> {
        if let Some(secret) = self.webhook_secret.as_ref().filter(|s| !s.is_empty()) {
            return Ok(secret.clone());
        }
        let path = self.data_dir.join(WEBHOOK_SECRET_FILE);
        if let Ok(text) = std::fs::read_to_string(&path)
            && let Some(secret) = text.lines().map(str::trim).find(|l| !l.is_empty())
        {
            return Ok(secret.to_owned());
        }
        std::fs::create_dir_all(&self.data_dir).map_err(|source| Error::Io {
            context: format!("creating the data folder {}", self.data_dir.display()),
            source,
        })?;
        let mut bytes = [0_u8; 32];
        getrandom::fill(&mut bytes)
            .map_err(|e| Error::Config(format!("no randomness for a webhook secret: {e}")))?;
        let secret: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o600);
        }
        let written = options.open(&path).and_then(|mut file| {
            use std::io::Write as _;
            writeln!(file, "{secret}")
        });
        match written {
            Ok(()) => {
                tracing::info!(path = %path.display(), "made a webhook signing secret");
                Ok(secret)
            }
            // Another process made it first: use theirs.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                std::fs::read_to_string(&path)
                    .map(|t| t.trim().to_owned())
                    .map_err(|source| Error::Io {
                        context: format!("reading {}", path.display()),
                        source,
                    })
            }
            Err(source) => Err(Error::Io {
                context: format!("writing {}", path.display()),
                source,
            }),
        }
    }

    pub(crate) fn engine_options(&self) -> EngineOptions {
        EngineOptions::default()
            .data_dir(self.data_dir.clone())
            .model(self.model.clone())
            .workers(self.workers)
            .threads_per_job(self.threads_per_job)
            .max_attempts(self.max_attempts)
            .templates_dir(self.templates_dir.clone())
            .generate_slots(self.generate_slots)
            .encoder_threads(self.encoder_threads)
            .lease(Duration::from_secs(self.lease_s.max(1)))
            .webhooks(
                WebhookOptions::default()
                    .allow_private(self.webhook_allow_private)
                    .retry_base(Duration::from_millis(self.webhook_retry_base_ms.max(1)))
                    .retry_for(Duration::from_secs(self.webhook_retry_for_s)),
            )
    }

    pub(crate) fn storage_options(&self, public_url: &str) -> StorageOptions {
        let backend = match self.storage {
            StorageKind::Local => StorageConfig::Local {
                root: self.data_dir.join("objects"),
            },
            StorageKind::S3 => StorageConfig::S3 {
                endpoint: self.s3.endpoint.clone(),
                bucket: self.s3.bucket.clone(),
                region: self.s3.region.clone(),
                access_key: self.s3.access_key.clone(),
                secret_key: self.s3.secret_key.clone(),
                allow_http: self.s3.endpoint.starts_with("http://"),
            },
        };
        StorageOptions::new(backend, public_url).links(
            LinkOptions::default()
                .upload_ttl(Duration::from_secs(self.upload_ttl_s))
                .download_ttl(Duration::from_secs(self.download_ttl_s))
                .max_upload_bytes(self.max_upload_bytes),
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use std::collections::HashMap;

    use super::*;

    #[test]
    fn empty_file_is_the_default_local_service() {
        let config = ServiceConfig::from_toml("").unwrap();
        assert_eq!(config, ServiceConfig::default());
        assert_eq!(config.bind.to_string(), "127.0.0.1:8080");
        assert_eq!(config.storage, StorageKind::Local);
    }

    #[test]
    fn environment_overrides_the_file() {
        let file = ServiceConfig::from_toml(
            "bind = \"127.0.0.1:9000\"\nmodel = \"base\"\nworkers = 2\n[s3]\nbucket = \"b\"\n",
        )
        .unwrap();
        let env: HashMap<&str, &str> = [
            ("CAPTIONS_BIND", "0.0.0.0:7000"),
            ("CAPTIONS_MODEL", "tiny.en"),
            ("CAPTIONS_API_KEYS", "a, b,,c"),
            ("CAPTIONS_STORAGE", "S3"),
            ("CAPTIONS_S3_ENDPOINT", "http://127.0.0.1:1"),
            ("CAPTIONS_S3_REGION", "us-east-1"),
            ("CAPTIONS_S3_ACCESS_KEY", "ak"),
            ("CAPTIONS_S3_SECRET_KEY", "sk"),
            ("CAPTIONS_DOWNLOAD_TTL_S", "60"),
        ]
        .into();
        let config = file
            .with_env(|name| env.get(name).map(|v| (*v).to_owned()))
            .unwrap();
        assert_eq!(config.bind.to_string(), "0.0.0.0:7000");
        assert_eq!(config.model, "tiny.en");
        assert_eq!(config.workers, 2);
        assert_eq!(config.api_keys, ["a", "b", "c"]);
        assert_eq!(config.storage, StorageKind::S3);
        assert_eq!(config.s3.bucket, "b");
        assert_eq!(config.download_ttl_s, 60);
        let options = config.storage_options("http://x");
        assert_eq!(options.links.download_ttl, Duration::from_secs(60));
        assert!(matches!(
            options.backend,
            StorageConfig::S3 {
                allow_http: true,
                ..
            }
        ));
        assert!(!format!("{config:?}").contains("sk\""));
    }

    #[test]
    fn mistakes_are_reported() {
        assert!(ServiceConfig::from_toml("bindd = \"x\"").is_err());
        let bad_bind = ServiceConfig::default()
            .with_env(|n| (n == "CAPTIONS_BIND").then(|| "nope".to_owned()))
            .unwrap_err();
        assert!(bad_bind.to_string().contains("CAPTIONS_BIND"), "{bad_bind}");
        let s3_without_bucket = ServiceConfig::default()
            .with_env(|n| (n == "CAPTIONS_STORAGE").then(|| "s3".to_owned()))
            .unwrap_err();
        assert!(s3_without_bucket.to_string().contains("s3.endpoint"));
    }

    #[test]
    fn key_file_lines_add_to_the_listed_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys");
        std::fs::write(&path, "# operators\nk1\n\n  k2  \n").unwrap();
        let config = ServiceConfig {
            api_keys: vec!["k0".into()],
            api_key_file: Some(path),
            ..ServiceConfig::default()
        };
        assert_eq!(config.resolve_api_keys().unwrap(), ["k0", "k1", "k2"]);
    }
}
