//! Set-up shared by the engine's suites: local storage in a test's folder, and a file stored in
//! it as a client's upload.
#![allow(dead_code, reason = "not every suite uses every helper")]
#![allow(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::Path;

use bytes::Bytes;
use caption_store::{LinkOptions, LocalStorage, ObjectKey, PutOptions, Storage};

/// Local storage under `dir/objects`, its links on a loopback port nothing answers.
pub fn local_storage(dir: &Path) -> LocalStorage {
    LocalStorage::open(
        &dir.join("objects"),
        "http://127.0.0.1:9",
        LinkOptions::default(),
    )
    .unwrap()
}

/// Stores the file at `path` under a fresh upload key named after it; returns the key.
pub async fn upload(storage: &dyn Storage, path: &Path) -> ObjectKey {
    let key = ObjectKey::new_upload(path.file_name().unwrap().to_str().unwrap());
    let bytes = Bytes::from(std::fs::read(path).unwrap());
    let body = Box::pin(futures_util::stream::once(async move { Ok(bytes) }));
    storage
        .put(&key, body, PutOptions::default())
        .await
        .unwrap();
    key
}
