use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt as _;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::signer::{Method, Signer as _};
use object_store::{
    BackoffConfig, ClientOptions, ObjectStore as _, PutMode, PutPayload, RetryConfig,
};
use time::OffsetDateTime;

use crate::config::LinkOptions;
use crate::error::{Error, Result};
use crate::key::ObjectKey;
use crate::local::{delete_via, get_via, head_via};
use crate::multipart::put_create_only;
use crate::put::{PART_BYTES, check_min, count};
use crate::sigv4::{PostCredentials, PostPolicyRequest, presigned_post};
use crate::storage::{
    ByteStream, GetObject, GetOptions, ObjectInfo, PutOptions, Storage, StorageKind,
};
use caption_core::UploadDescriptor;

/// Connection settings of an S3-compatible bucket: [`S3Settings::new`], then
/// [`S3Settings::allow_http`] for a plain-http endpoint.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct S3Settings {
    /// e.g. `https://s3.eu-west-1.amazonaws.com` or `http://127.0.0.1:9000`; buckets are
    /// addressed path-style (`{endpoint}/{bucket}/{key}`).
    pub endpoint: String,
    /// The bucket's name.
    pub bucket: String,
    /// The bucket's region, e.g. `eu-west-1`.
    pub region: String,
    /// The access key id.
    pub access_key: String,
    /// The secret access key (never logged).
    pub secret_key: String,
    /// Permit a plain-http endpoint (test servers, a private network).
    pub allow_http: bool,
}

impl S3Settings {
    /// A bucket at an https `endpoint` (path-style addressing), with static credentials.
    pub fn new(
        endpoint: impl Into<String>,
        bucket: impl Into<String>,
        region: impl Into<String>,
        access_key: impl Into<String>,
        secret_key: impl Into<String>,
    ) -> Self {
        Self {
            endpoint: endpoint.into(),
            bucket: bucket.into(),
            region: region.into(),
            access_key: access_key.into(),
            secret_key: secret_key.into(),
            allow_http: false,
        }
    }

    /// Permits a plain-http endpoint (test servers, a private network).
    #[must_use]
    pub fn allow_http(mut self, allow_http: bool) -> Self {
        self.allow_http = allow_http;
        self
    }
}

impl std::fmt::Debug for S3Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Settings")
            .field("endpoint", &self.endpoint)
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("access_key", &self.access_key)
            .finish_non_exhaustive()
    }
}

/// Objects in an S3 bucket (path-style addressing), through object_store's `AmazonS3`.
#[derive(Debug, Clone)]
pub struct S3Storage {
    store: Arc<AmazonS3>,
    /// For the requests object_store does not make (see `multipart.rs`).
    http: reqwest::Client,
    bucket_url: String,
    bucket: String,
    region: String,
    links: LinkOptions,
}

impl S3Storage {
    /// A client of the bucket `settings` name; nothing is sent until the first call.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for an empty bucket name or settings the S3 client refuses (an
    /// endpoint that is not a URL).
    pub fn open(settings: &S3Settings, links: LinkOptions) -> Result<Self> {
        if settings.bucket.is_empty() {
            return Err(Error::Config("the S3 bucket name is empty".into()));
        }
        let endpoint = settings.endpoint.trim_end_matches('/');
        let store = AmazonS3Builder::new()
            .with_endpoint(endpoint)
            .with_bucket_name(&settings.bucket)
            .with_region(&settings.region)
            .with_access_key_id(&settings.access_key)
            .with_secret_access_key(&settings.secret_key)
            // Before with_allow_http: the client options replace all the earlier ones.
            .with_client_options(client_options())
            .with_allow_http(settings.allow_http)
            .with_virtual_hosted_style_request(false)
            .with_retry(retry_config())
            .build()
            .map_err(|e| Error::Config(format!("S3 bucket {}: {e}", settings.bucket)))?;
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| Error::Config(format!("S3 bucket {}: {e}", settings.bucket)))?;
        Ok(Self {
            store: Arc::new(store),
            http,
            bucket_url: format!("{endpoint}/{}", settings.bucket),
            bucket: settings.bucket.clone(),
            region: settings.region.clone(),
            links,
        })
    }
}

/// Retries of one request: a bucket that stopped answering fails a call within about ten
/// seconds (object_store's default keeps retrying for three minutes, which holds a client's
/// request far past its own timeout); a blip of a second or two is ridden out.
fn retry_config() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(2),
            base: 2.0,
        },
        max_retries: 3,
        retry_timeout: Duration::from_secs(10),
    }
}

/// A connection is given 3 s (loopback or a region's endpoint answers in milliseconds) and a
/// request 60 s, enough for one 8 MiB part on a slow link.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// See [`CONNECT_TIMEOUT`].
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

fn client_options() -> ClientOptions {
    ClientOptions::new()
        .with_connect_timeout(CONNECT_TIMEOUT)
        .with_timeout(REQUEST_TIMEOUT)
}

#[async_trait]
impl Storage for S3Storage {
    fn kind(&self) -> StorageKind {
        StorageKind::S3
    }

    async fn put(
        &self,
        key: &ObjectKey,
        mut body: ByteStream,
        options: PutOptions,
    ) -> Result<ObjectInfo> {
        let path = key.to_path();
        // Read up to one part: a body that fits is one conditional PUT (If-None-Match: *), which
        // S3 makes atomic and create-only.
        let mut head = Vec::new();
        let mut head_bytes = 0_usize;
        let mut size_bytes = 0_u64;
        let mut ended = false;
        while head_bytes < PART_BYTES {
            match body.next().await {
                Some(Ok(chunk)) => {
                    count(key, &mut size_bytes, &chunk, &options)?;
                    head_bytes += chunk.len();
                    head.push(chunk);
                }
                Some(Err(source)) => {
                    return Err(Error::Body {
                        key: key.to_string(),
                        source,
                    });
                }
                None => {
                    ended = true;
                    break;
                }
            }
        }
        if ended {
            check_min(key, size_bytes, &options)?;
            let payload: PutPayload = head.into_iter().collect::<PutPayload>();
            self.store
                .put_opts(&path, payload, PutMode::Create.into())
                .await
                .map_err(|e| Error::from_object_store(key.as_str(), e))?;
            return Ok(ObjectInfo::new(key.clone(), size_bytes));
        }
        // Larger: a multipart upload whose completion is conditional (If-None-Match: *), so
        // that it too is atomic and create-only.
        let size_bytes =
            put_create_only(&self.store, &self.http, &path, key, head, body, &options).await?;
        Ok(ObjectInfo::new(key.clone(), size_bytes))
    }

    async fn get(&self, key: &ObjectKey, options: GetOptions) -> Result<GetObject> {
        get_via(self.store.as_ref(), key, options).await
    }

    async fn head(&self, key: &ObjectKey) -> Result<ObjectInfo> {
        head_via(self.store.as_ref(), key).await
    }

    async fn delete(&self, key: &ObjectKey) -> Result<()> {
        delete_via(self.store.as_ref(), key).await
    }

    async fn upload_descriptor(&self, file_name: &str) -> Result<UploadDescriptor> {
        let key = ObjectKey::new_upload(file_name);
        let credential = self
            .store
            .credentials()
            .get_credential()
            .await
            .map_err(|e| Error::from_object_store(key.as_str(), e))?;
        Ok(presigned_post(
            &PostCredentials {
                access_key_id: credential.key_id.clone(),
                secret_access_key: credential.secret_key.clone(),
                session_token: credential.token.clone(),
            },
            &PostPolicyRequest {
                url: &self.bucket_url,
                bucket: &self.bucket,
                region: &self.region,
                key: key.as_str(),
                max_bytes: self.links.max_upload_bytes,
                issued_at: OffsetDateTime::now_utc(),
                ttl: self.links.upload_ttl,
            },
        ))
    }

    async fn download_url(&self, key: &ObjectKey) -> Result<String> {
        let url = self
            .store
            .signed_url(Method::GET, &key.to_path(), self.links.download_ttl)
            .await
            .map_err(|e| Error::from_object_store(key.as_str(), e))?;
        Ok(url.to_string())
    }
}
