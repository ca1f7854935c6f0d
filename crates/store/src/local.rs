use std::fs;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use futures_util::{StreamExt as _, TryStreamExt as _};
use hmac::{Hmac, Mac};
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt as _};
use sha2::Sha256;
use time::OffsetDateTime;

use crate::config::LinkOptions;
use crate::error::{Error, Result};
use crate::key::ObjectKey;
use crate::post_policy::PostPolicyVerifier;
use crate::put::stream_multipart;
use crate::s3_error::{S3Error, S3ErrorCode};
use crate::sigv4::{PostCredentials, PostPolicyRequest, presigned_post};
use crate::storage::{
    ByteStream, GetObject, GetOptions, ObjectInfo, PutOptions, Storage, StorageKind, resolve_range,
};
use caption_core::UploadDescriptor;

/// The access key id, region and bucket name local descriptors are signed for.
pub const LOCAL_ACCESS_KEY_ID: &str = "local";
/// The region local descriptors are signed for.
pub const LOCAL_REGION: &str = "local";
/// The bucket name local descriptors are signed for.
pub const LOCAL_BUCKET: &str = "local";
/// Route of the service's upload endpoint, below the public base URL.
pub const UPLOAD_ROUTE: &str = "/v1/storage/upload";
/// Route prefix of signed downloads, below the public base URL; the key follows.
pub const FILES_ROUTE: &str = "/v1/storage/files/";

/// Where the signing secret lives in the data folder (a dot name: no key can reach it).
const SECRET_FILE: &str = ".signing-secret";
/// Uploads in progress; hidden from keys for the same reason.
const STAGING_DIR: &str = ".staging";
/// Download links sign this prefix first, so that no download signature can ever equal
/// an upload signature made with the same secret (domain separation).
const DOWNLOAD_DOMAIN: &[u8] = b"caption-store/download/v1\n";

/// The local store's signing secret and link settings: signs descriptors and download links,
/// and verifies them in the service's upload and file routes. Cheap to clone.
#[derive(Clone)]
pub struct LocalAuthority {
    inner: Arc<AuthorityInner>,
}

struct AuthorityInner {
    secret: [u8; 32],
    public_base_url: String,
    links: LinkOptions,
}

impl std::fmt::Debug for LocalAuthority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalAuthority")
            .field("public_base_url", &self.inner.public_base_url)
            .field("links", &self.inner.links)
            .finish_non_exhaustive()
    }
}

impl LocalAuthority {
    /// Reads the secret from `data_dir`, creating 32 random bytes (mode 0600) on first start.
    pub fn load_or_create(
        data_dir: &FsPath,
        public_base_url: &str,
        links: LinkOptions,
    ) -> Result<Self> {
        let secret = load_or_create_secret(data_dir)?;
        Ok(Self::from_secret(secret, public_base_url, links))
    }

    /// An authority over a given secret (tests; several processes sharing a secret).
    pub fn from_secret(secret: [u8; 32], public_base_url: &str, links: LinkOptions) -> Self {
        Self {
            inner: Arc::new(AuthorityInner {
                secret,
                public_base_url: public_base_url.trim_end_matches('/').to_owned(),
                links,
            }),
        }
    }

    /// The lifetimes and size limit of the descriptors and links this authority makes.
    pub fn links(&self) -> &LinkOptions {
        &self.inner.links
    }

    /// `{public_base_url}/v1/storage/upload`.
    pub fn upload_url(&self) -> String {
        format!("{}{UPLOAD_ROUTE}", self.inner.public_base_url)
    }

    /// The SigV4 credentials local descriptors are signed with; the secret key is the hex of
    /// the secret, so any SigV4 client (boto3, the JS SDK) can sign a policy this store takes.
    pub fn post_credentials(&self) -> PostCredentials {
        PostCredentials {
            access_key_id: LOCAL_ACCESS_KEY_ID.to_owned(),
            secret_access_key: hex::encode(self.inner.secret),
            session_token: None,
        }
    }

    /// The checker for forms posted to the upload route.
    pub fn post_verifier(&self) -> PostPolicyVerifier {
        PostPolicyVerifier::new(
            LOCAL_ACCESS_KEY_ID,
            hex::encode(self.inner.secret),
            LOCAL_REGION,
            LOCAL_BUCKET,
            self.inner.links.max_upload_bytes,
        )
    }

    /// A descriptor for one upload to `key`, issued at `now`.
    pub fn upload_descriptor(&self, key: &ObjectKey, now: OffsetDateTime) -> UploadDescriptor {
        let url = self.upload_url();
        presigned_post(
            &self.post_credentials(),
            &PostPolicyRequest {
                url: &url,
                bucket: LOCAL_BUCKET,
                region: LOCAL_REGION,
                key: key.as_str(),
                max_bytes: self.inner.links.max_upload_bytes,
                issued_at: now,
                ttl: self.inner.links.upload_ttl,
            },
        )
    }

    fn download_signature(&self, key: &str, expires_unix: i64) -> Hmac<Sha256> {
        let mut mac = match Hmac::<Sha256>::new_from_slice(&self.inner.secret) {
            Ok(mac) => mac,
            Err(_) => unreachable!("HMAC accepts every key length"),
        };
        mac.update(DOWNLOAD_DOMAIN);
        mac.update(key.as_bytes());
        mac.update(b"\n");
        mac.update(expires_unix.to_string().as_bytes());
        mac
    }

    /// `{public_base_url}/v1/storage/files/{key}?expires=<unix s>&sig=<hex>`.
    pub fn download_url(&self, key: &ObjectKey, now: OffsetDateTime) -> String {
        let expires_unix = (now + self.inner.links.download_ttl).unix_timestamp();
        let sig = hex::encode(
            self.download_signature(key.as_str(), expires_unix)
                .finalize()
                .into_bytes(),
        );
        format!(
            "{}{FILES_ROUTE}{key}?expires={expires_unix}&sig={sig}",
            self.inner.public_base_url
        )
    }

    /// Checks a download link's parts (constant-time signature comparison, then expiry).
    ///
    /// ```
    /// use caption_store::{LinkOptions, LocalAuthority, ObjectKey, S3ErrorCode};
    /// use time::{Duration, OffsetDateTime};
    ///
    /// let authority = LocalAuthority::from_secret([7; 32], "https://captions.example", LinkOptions::default());
    /// let key = ObjectKey::new_under("outputs", "talk.mp4");
    /// let now = OffsetDateTime::now_utc();
    /// let link = authority.download_url(&key, now);
    /// let query = link.split_once('?').expect("a query").1;
    /// let (expires, sig) = query.split_once('&').expect("two parameters");
    /// let (expires, sig) = (&expires["expires=".len()..], &sig["sig=".len()..]);
    ///
    /// assert_eq!(authority.verify_download(key.as_str(), expires, sig, now), Ok(key.clone()));
    /// let forged = authority.verify_download("outputs/other.mp4", expires, sig, now).unwrap_err();
    /// assert_eq!(forged.code, S3ErrorCode::SignatureDoesNotMatch);
    /// let late = authority.verify_download(key.as_str(), expires, sig, now + Duration::days(2));
    /// assert_eq!(late.unwrap_err().code, S3ErrorCode::AccessDenied, "links last a day");
    /// ```
    ///
    /// # Errors
    ///
    /// An [`S3Error`] to answer with: `SignatureDoesNotMatch` for a link this authority did not
    /// sign, `AccessDenied` for a malformed or expired one.
    pub fn verify_download(
        &self,
        key: &str,
        expires: &str,
        sig: &str,
        now: OffsetDateTime,
    ) -> Result<ObjectKey, S3Error> {
        let denied = |message: &str| S3Error::new(S3ErrorCode::AccessDenied, message);
        let expires_unix: i64 = expires
            .parse()
            .map_err(|_| denied("Query-string authentication requires 'expires' and 'sig'"))?;
        let signature = hex::decode(sig).unwrap_or_default();
        if self
            .download_signature(key, expires_unix)
            .verify_slice(&signature)
            .is_err()
        {
            return Err(S3Error::new(
                S3ErrorCode::SignatureDoesNotMatch,
                "The request signature we calculated does not match the signature you provided.",
            ));
        }
        if now.unix_timestamp() >= expires_unix {
            return Err(denied("Request has expired"));
        }
        // A signed key was made by this store, but parse anyway: never trust a path blindly.
        ObjectKey::parse(key).map_err(|e| S3Error::from_storage(&e))
    }
}

fn load_or_create_secret(data_dir: &FsPath) -> Result<[u8; 32]> {
    let path = data_dir.join(SECRET_FILE);
    let io_error = |source| Error::Secret {
        path: path.clone(),
        source,
    };
    match fs::read(&path) {
        Ok(bytes) => {
            return bytes.try_into().map_err(|_| {
                io_error(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "the secret file must hold exactly 32 bytes",
                ))
            });
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(io_error(error)),
    }
    fs::create_dir_all(data_dir).map_err(io_error)?;
    let mut secret = [0_u8; 32];
    getrandom::fill(&mut secret).map_err(|e| io_error(std::io::Error::other(e.to_string())))?;
    // Written whole under a temporary name, then linked into place without replacing
    // (`persist_noclobber`): a second process starting at the same moment either wins the
    // link or reads the complete winner. The temporary file goes either way.
    let written = (|| {
        let mut file = tempfile::Builder::new()
            .prefix(&format!("{SECRET_FILE}."))
            .suffix(".tmp")
            .permissions(fs::Permissions::from_mode(0o600))
            .tempfile_in(data_dir)?;
        file.write_all(&secret)?;
        file.as_file().sync_all()?;
        file.persist_noclobber(&path).map(drop).map_err(|e| e.error)
    })();
    match written {
        Ok(()) => {
            tracing::info!(path = %path.display(), "created the local signing secret");
            Ok(secret)
        }
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            let bytes = fs::read(&path).map_err(io_error)?;
            bytes.try_into().map_err(|_| {
                io_error(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "the secret file must hold exactly 32 bytes",
                ))
            })
        }
        Err(error) => Err(io_error(error)),
    }
}

/// Staged files older than this are leftovers of a process that died mid-upload (a live
/// upload is far shorter: its descriptor expires in minutes).
const STALE_STAGING: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

/// Removes staged uploads abandoned by a crash. Best effort: a failure only costs disk space.
fn sweep_stale_staging(staging: &FsPath) {
    let Ok(entries) = fs::read_dir(staging) else {
        return;
    };
    for entry in entries.flatten() {
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age > STALE_STAGING);
        if stale && entry.file_type().is_ok_and(|t| t.is_file()) {
            match fs::remove_file(entry.path()) {
                Ok(()) => {
                    tracing::info!(path = %entry.path().display(), "removed an abandoned upload");
                }
                Err(error) => {
                    tracing::warn!(path = %entry.path().display(), %error, "cannot remove an abandoned upload");
                }
            }
        }
    }
}

/// Objects as files under a data folder, through object_store's `LocalFileSystem`.
#[derive(Debug, Clone)]
pub struct LocalStorage {
    store: Arc<LocalFileSystem>,
    root: PathBuf,
    authority: LocalAuthority,
}

impl LocalStorage {
    /// Opens (creating if needed) the data folder `root`; links and upload descriptors point
    /// at `public_base_url`, the service's public origin.
    ///
    /// # Errors
    ///
    /// [`Error::DataDir`] when the folder cannot be created, [`Error::Secret`] when its
    /// signing secret cannot be read or written.
    pub fn open(root: &FsPath, public_base_url: &str, links: LinkOptions) -> Result<Self> {
        fs::create_dir_all(root).map_err(|source| Error::DataDir {
            path: root.to_owned(),
            source,
        })?;
        sweep_stale_staging(&root.join(STAGING_DIR));
        let store = LocalFileSystem::new_with_prefix(root)
            .map_err(|e| Error::Config(format!("data folder {}: {e}", root.display())))?
            .with_automatic_cleanup(true);
        let authority = LocalAuthority::load_or_create(root, public_base_url, links)?;
        Ok(Self {
            store: Arc::new(store),
            root: root.to_owned(),
            authority,
        })
    }

    /// The signer/verifier the service's upload and file routes need.
    pub fn authority(&self) -> &LocalAuthority {
        &self.authority
    }

    /// The data folder.
    pub fn root(&self) -> &FsPath {
        &self.root
    }
}

#[async_trait]
impl Storage for LocalStorage {
    fn kind(&self) -> StorageKind {
        StorageKind::Local
    }

    async fn put(
        &self,
        key: &ObjectKey,
        body: ByteStream,
        options: PutOptions,
    ) -> Result<ObjectInfo> {
        // Write under a hidden staging name, then hard-link into place: the link is atomic
        // and fails if the key exists, so no reader sees a partial file and nothing is
        // overwritten (object_store's own multipart commit would rename over an object).
        let staging = Path::from(format!("{STAGING_DIR}/{}", uuid::Uuid::new_v4()));
        let size_bytes = stream_multipart(
            self.store.as_ref(),
            &staging,
            key,
            Vec::new(),
            body,
            &options,
        )
        .await?;
        let committed = self
            .store
            .rename_if_not_exists(&staging, &key.to_path())
            .await;
        if let Err(error) = committed {
            if let Err(cleanup) = self.store.delete(&staging).await {
                tracing::warn!(key = %key, error = %cleanup, "removing a staged upload failed");
            }
            return Err(Error::from_object_store(key.as_str(), error));
        }
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
        Ok(self
            .authority
            .upload_descriptor(&key, OffsetDateTime::now_utc()))
    }

    async fn download_url(&self, key: &ObjectKey) -> Result<String> {
        Ok(self.authority.download_url(key, OffsetDateTime::now_utc()))
    }
}

pub(crate) async fn head_via(store: &dyn ObjectStore, key: &ObjectKey) -> Result<ObjectInfo> {
    let meta = store
        .head(&key.to_path())
        .await
        .map_err(|e| Error::from_object_store(key.as_str(), e))?;
    Ok(ObjectInfo::new(key.clone(), meta.size))
}

pub(crate) async fn delete_via(store: &dyn ObjectStore, key: &ObjectKey) -> Result<()> {
    match store.delete(&key.to_path()).await {
        Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
        Err(error) => Err(Error::from_object_store(key.as_str(), error)),
    }
}

pub(crate) async fn get_via(
    store: &dyn ObjectStore,
    key: &ObjectKey,
    options: GetOptions,
) -> Result<GetObject> {
    // Resolving the range against a head first gives one clear answer for ranges past the
    // end on every backend (object_store's backends disagree on that error).
    let info = head_via(store, key).await?;
    let range = resolve_range(&info, options.range.as_ref())?;
    let result = store
        .get_opts(
            &key.to_path(),
            object_store::GetOptions {
                range: (range != (0..info.size_bytes))
                    .then(|| object_store::GetRange::Bounded(range.clone())),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| Error::from_object_store(key.as_str(), e))?;
    let body = result
        .into_stream()
        .map_err(|e| std::io::Error::other(e.to_string()))
        .boxed();
    Ok(GetObject { info, range, body })
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        reason = "test code: a panic is the failure report"
    )]

    use std::os::unix::fs::PermissionsExt as _;

    use super::{SECRET_FILE, load_or_create_secret};

    #[test]
    fn the_signing_secret_is_made_once_private_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let data_dir = dir.path().join("data");
        let first = load_or_create_secret(&data_dir).unwrap();
        let second = load_or_create_secret(&data_dir).unwrap();
        assert_eq!(first, second);
        let file = data_dir.join(SECRET_FILE);
        assert_eq!(std::fs::read(&file).unwrap(), first);
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // Only the secret is left: no temporary file.
        let names: Vec<_> = std::fs::read_dir(&data_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [SECRET_FILE]);
    }
}
