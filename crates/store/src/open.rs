use std::sync::Arc;

use crate::config::{StorageConfig, StorageOptions};
use crate::error::Result;
use crate::local::{LocalAuthority, LocalStorage};
#[cfg(feature = "s3")]
use crate::s3::{S3Settings, S3Storage};
use crate::storage::Storage;

/// A storage backend ready for use, plus what the service's local routes need (present only
/// for local storage: with S3 the bucket itself takes uploads and serves downloads).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OpenedStorage {
    /// The store.
    pub storage: Arc<dyn Storage>,
    /// The signer and checker of the local routes; `None` for S3.
    pub local: Option<LocalAuthority>,
}

/// Opens the backend `options` describe.
///
/// # Errors
/// [`Error::Config`](crate::Error::Config) for S3 storage when this crate was built without
/// its `s3` feature (the configuration still parses, so that a service says what it lacks
/// rather than that the configuration is malformed).
pub fn open_storage(options: &StorageOptions) -> Result<OpenedStorage> {
    match &options.backend {
        StorageConfig::Local { root } => {
            let local = LocalStorage::open(root, &options.public_base_url, options.links.clone())?;
            let authority = local.authority().clone();
            Ok(OpenedStorage {
                storage: Arc::new(local),
                local: Some(authority),
            })
        }
        #[cfg(not(feature = "s3"))]
        StorageConfig::S3 { .. } => Err(crate::Error::Config(
            "S3 storage needs caption-store's `s3` feature, which this build lacks".into(),
        )),
        #[cfg(feature = "s3")]
        StorageConfig::S3 {
            endpoint,
            bucket,
            region,
            access_key,
            secret_key,
            allow_http,
        } => {
            let settings = S3Settings::new(endpoint, bucket, region, access_key, secret_key)
                .allow_http(*allow_http);
            Ok(OpenedStorage {
                storage: Arc::new(S3Storage::open(&settings, options.links.clone())?),
                local: None,
            })
        }
    }
}
