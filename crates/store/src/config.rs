use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

/// Where objects live.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum StorageConfig {
    /// Files under `root` (the service's data folder); uploads go through the service's own
    /// upload route, downloads through its signed file route.
    Local {
        /// The data folder.
        root: PathBuf,
    },
    /// Any S3-compatible endpoint, path-style addressing (`{endpoint}/{bucket}/{key}`).
    /// Opening it needs this crate's `s3` feature; the variant is there without it so that a
    /// configuration naming S3 is refused for what the build lacks, not as malformed.
    S3 {
        /// e.g. `https://s3.eu-west-1.amazonaws.com` or `http://127.0.0.1:9000`.
        endpoint: String,
        /// The bucket's name.
        bucket: String,
        /// The bucket's region, e.g. `eu-west-1` (any name for servers that ignore it).
        region: String,
        /// The access key id.
        access_key: String,
        /// The secret access key (never logged).
        secret_key: String,
        /// Permit a plain-http endpoint (test servers, a private network).
        #[serde(default)]
        allow_http: bool,
    },
}

impl fmt::Debug for StorageConfig {
    // The secret key must never reach a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Local { root } => f.debug_struct("Local").field("root", root).finish(),
            Self::S3 {
                endpoint,
                bucket,
                region,
                access_key,
                secret_key: _,
                allow_http,
            } => f
                .debug_struct("S3")
                .field("endpoint", endpoint)
                .field("bucket", bucket)
                .field("region", region)
                .field("access_key", access_key)
                .field("secret_key", &"<redacted>")
                .field("allow_http", allow_http)
                .finish(),
        }
    }
}

/// How long the links this store hands out stay valid, and how big an upload may be.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct LinkOptions {
    /// Lifetime of an upload descriptor (its POST policy's expiration).
    #[serde(with = "seconds")]
    pub upload_ttl: Duration,
    /// Lifetime of a download link.
    #[serde(with = "seconds")]
    pub download_ttl: Duration,
    /// Largest file an upload descriptor admits (`content-length-range` 1..=max).
    pub max_upload_bytes: u64,
}

impl Default for LinkOptions {
    fn default() -> Self {
        Self {
            upload_ttl: Duration::from_secs(15 * 60),
            download_ttl: Duration::from_secs(24 * 60 * 60),
            // S3 caps a single POST like a single PUT at 5 GB; keep well under it.
            max_upload_bytes: 4 * 1024 * 1024 * 1024,
        }
    }
}

impl LinkOptions {
    /// Lifetime of an upload descriptor.
    #[must_use]
    pub fn upload_ttl(mut self, upload_ttl: Duration) -> Self {
        self.upload_ttl = upload_ttl;
        self
    }

    /// Lifetime of a download link.
    #[must_use]
    pub fn download_ttl(mut self, download_ttl: Duration) -> Self {
        self.download_ttl = download_ttl;
        self
    }

    /// Largest file an upload descriptor admits.
    #[must_use]
    pub fn max_upload_bytes(mut self, max_upload_bytes: u64) -> Self {
        self.max_upload_bytes = max_upload_bytes;
        self
    }
}

/// Everything needed to open a [`Storage`](crate::Storage): [`StorageOptions::new`] or
/// [`StorageOptions::local`], then setters.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct StorageOptions {
    /// Where the objects live.
    pub backend: StorageConfig,
    /// The service's public origin, e.g. `https://captions.example.com`; local upload and
    /// download links are `{public_base_url}/v1/storage/...`. Unused by S3.
    pub public_base_url: String,
    /// Lifetimes and size limit of upload descriptors and download links.
    #[serde(default)]
    pub links: LinkOptions,
}

impl StorageOptions {
    /// The `backend`, its links pointing at `public_base_url`, default link options.
    pub fn new(backend: StorageConfig, public_base_url: impl Into<String>) -> Self {
        Self {
            backend,
            public_base_url: public_base_url.into(),
            links: LinkOptions::default(),
        }
    }

    /// Local storage under `root` served at `public_base_url`, default link options.
    pub fn local(root: impl Into<PathBuf>, public_base_url: impl Into<String>) -> Self {
        Self::new(StorageConfig::Local { root: root.into() }, public_base_url)
    }

    /// How long links stay valid and how big an upload may be.
    #[must_use]
    pub fn links(mut self, links: LinkOptions) -> Self {
        self.links = links;
        self
    }
}

mod seconds {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer};

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_secs)
    }
}
