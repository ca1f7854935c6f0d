//! Object storage for the caption engine.
//!
//! [`Storage`] (held as `Arc<dyn Storage>`) keeps uploads and outputs on local disk or in any
//! S3-compatible bucket through `object_store`: streaming, create-only, atomic puts; ranged
//! streaming gets. It also hands out browser upload descriptors (AWS SigV4 POST policies,
//! real presigned POSTs on S3) and download links (presigned GETs on S3). For local storage,
//! [`LocalAuthority`] signs with a local secret and verifies what the service's own upload
//! and file routes receive, enforcing every policy condition as S3 does.

mod config;
mod error;
mod key;
mod local;
mod open;
mod post_policy;
mod put;
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
pub use s3::{S3Settings, S3Storage};
pub use s3_error::{S3Error, S3ErrorCode};
pub use sigv4::{
    ALGORITHM, PostCredentials, PostPolicyRequest, presigned_post, sign_policy, signing_key,
};
pub use storage::{
    ByteRange, ByteStream, GetObject, GetOptions, ObjectInfo, PutOptions, Storage, StorageKind,
};
