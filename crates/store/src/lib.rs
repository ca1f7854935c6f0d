//! Object storage for the caption engine.
//!
//! [`Storage`] (held as `Arc<dyn Storage>`) keeps uploads and outputs on local disk or in any
//! S3-compatible bucket through `object_store`: streaming, create-only, atomic puts; ranged
//! streaming gets. It also hands out browser upload descriptors (AWS SigV4 POST policies,
//! real presigned POSTs on S3) and download links (presigned GETs on S3). For local storage,
//! [`LocalAuthority`] signs with a local secret and verifies what the service's own upload
//! and file routes receive, enforcing every policy condition as S3 does.
//!
//! ```
//! use bytes::Bytes;
//! use caption_store::{
//!     ByteRange, GetOptions, LinkOptions, LocalStorage, ObjectKey, PutOptions, Storage,
//! };
//! use futures_util::{StreamExt, TryStreamExt, stream};
//!
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! let dir = tempfile::tempdir()?;
//! let storage = LocalStorage::open(dir.path(), "http://127.0.0.1:8080", LinkOptions::default())?;
//! let key = ObjectKey::new_under("outputs", "talk captioned.mp4");
//! let body = stream::iter([Ok(Bytes::from_static(b"hello ")), Ok(Bytes::from_static(b"world"))]);
//! let info = storage.put(&key, body.boxed(), PutOptions::size_range(1, 1024)).await?;
//! assert_eq!(info.size_bytes, 11);
//! assert_eq!(info.content_type, "video/mp4");
//!
//! let tail = storage.get(&key, GetOptions::range(ByteRange::Suffix(5))).await?;
//! let bytes: Vec<Bytes> = tail.body.try_collect().await?;
//! assert_eq!(bytes.concat(), b"world");
//!
//! let again = stream::once(async { Ok(Bytes::from_static(b"other")) });
//! let taken = storage.put(&key, again.boxed(), PutOptions::default()).await;
//! assert!(matches!(taken, Err(caption_store::Error::AlreadyExists { .. })), "never overwrites");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! - `s3` (off by default): `S3Storage` and [`StorageConfig::S3`] through object_store's
//!   `aws` backend. Without it the crate is local disk storage with its upload descriptors and
//!   signed links, and links no HTTP client or TLS.

#![warn(missing_docs)]

mod config;
mod error;
mod key;
mod local;
#[cfg(feature = "s3")]
mod multipart;
mod open;
mod post_policy;
mod put;
#[cfg(feature = "s3")]
mod s3;
mod s3_error;
mod sigv4;
mod storage;

pub use caption_core::UploadDescriptor;
pub use config::{LinkOptions, StorageConfig, StorageOptions};
pub use error::{Error, Result};
pub use key::{ObjectKey, sanitise_file_name};
pub use local::{
    FILES_ROUTE, LOCAL_ACCESS_KEY_ID, LOCAL_BUCKET, LOCAL_REGION, LocalAuthority, LocalStorage,
    UPLOAD_ROUTE,
};
pub use open::{OpenedStorage, open_storage};
pub use post_policy::{AcceptedUpload, PostPolicyVerifier};
#[cfg(feature = "s3")]
pub use s3::{S3Settings, S3Storage};
pub use s3_error::{S3Error, S3ErrorCode};
pub use sigv4::{
    ALGORITHM, PostCredentials, PostPolicyRequest, presigned_post, sign_policy, signing_key,
};
pub use storage::{
    ByteRange, ByteStream, GetObject, GetOptions, ObjectInfo, PutOptions, Storage, StorageKind,
};
