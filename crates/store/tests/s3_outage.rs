//! The bucket stops in the middle of a multipart upload: the put fails with
//! `storage_unavailable` within seconds, the abort that cannot reach the stopped bucket is
//! tried again in the background, and once the bucket is back the upload's parts are gone.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use caption_core::ErrorCode;
use caption_store::{LinkOptions, ObjectKey, PutOptions, S3Settings, S3Storage, Storage as _};
use futures_util::StreamExt as _;

const ACCESS_KEY: &str = "captions-outage-key";
const SECRET_KEY: &str = "captions-outage-secret";
const BUCKET: &str = "captions-outage";

/// What s3s-fs keeps of multipart uploads in progress: `.upload-<id>.json`, the parts
/// `.upload_id-<id>.part-<n>` and the object's metadata `….upload-<id>.metadata.json`.
fn uploads(root: &Path) -> Vec<String> {
    std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".upload") || name.contains(".upload-"))
        .collect()
}

fn parts(root: &Path) -> Vec<String> {
    let mut parts = uploads(root);
    parts.retain(|name| name.starts_with(".upload_id-"));
    parts
}

async fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready() {
        assert!(Instant::now() < deadline, "{what} within 30 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_multipart_upload_cut_by_an_outage_leaves_no_parts_once_the_bucket_is_back() {
    let mut server = caption_testkit::S3sServer::start(ACCESS_KEY, SECRET_KEY, BUCKET).unwrap();
    let settings = S3Settings::new(
        server.endpoint(),
        BUCKET,
        "us-east-1",
        ACCESS_KEY,
        SECRET_KEY,
    )
    .allow_http(true);
    let storage = S3Storage::open(&settings, LinkOptions::default()).unwrap();
    let key = ObjectKey::new_under("outputs", "long-captioned.mp4");

    // A body the test feeds: two parts' worth (the first is stored while the second is read),
    // then, after the outage, the rest.
    let (feed, chunks) = tokio::sync::mpsc::channel::<std::io::Result<Bytes>>(2);
    let body = futures_util::stream::unfold(chunks, |mut chunks| async move {
        chunks.recv().await.map(|chunk| (chunk, chunks))
    })
    .boxed();
    let put = {
        let (storage, key) = (storage.clone(), key.clone());
        tokio::spawn(async move { storage.put(&key, body, PutOptions::default()).await })
    };
    for _ in 0..2 {
        feed.send(Ok(Bytes::from(vec![1_u8; 8 * 1024 * 1024])))
            .await
            .unwrap();
    }
    feed.send(Ok(Bytes::from(vec![1_u8; 1024 * 1024])))
        .await
        .unwrap();
    let root = server.root().to_path_buf();
    wait_until("the first part stored", || !parts(&root).is_empty()).await;

    server.stop();
    feed.send(Ok(Bytes::from(vec![2_u8; 1024 * 1024])))
        .await
        .unwrap();
    drop(feed);
    let failed = put.await.unwrap().unwrap_err();
    assert_eq!(failed.code(), ErrorCode::StorageUnavailable, "{failed}");
    assert!(
        !parts(&root).is_empty(),
        "the parts stay while the bucket is down"
    );

    server.restart().unwrap();
    wait_until("the upload aborted", || uploads(&root).is_empty()).await;
    assert!(!server.object_file(key.as_str()).exists());
    // The bucket works again.
    let stored = storage
        .put(
            &key,
            futures_util::stream::iter([Ok(Bytes::from_static(b"whole"))]).boxed(),
            PutOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(stored.size_bytes, 5);
}
