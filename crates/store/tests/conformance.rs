//! The `Storage` contract, run against every backend: local disk and S3 (a real s3s-fs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;

use bytes::Bytes;
use caption_store::{
    ByteRange, Error, GetOptions, LinkOptions, LocalStorage, ObjectKey, PutOptions, Storage,
};
use futures_util::StreamExt as _;
use support::{S3sServer, collect, stream_of, test_bytes};

async fn read_all(storage: &dyn Storage, key: &ObjectKey) -> Vec<u8> {
    collect(storage.get(key, GetOptions::default()).await.unwrap().body).await
}

async fn assert_absent(storage: &dyn Storage, key: &ObjectKey) {
    assert!(
        matches!(storage.head(key).await, Err(Error::NotFound { .. })),
        "{key} should not exist"
    );
    assert!(matches!(
        storage.get(key, GetOptions::default()).await,
        Err(Error::NotFound { .. })
    ));
}

/// Everything a backend must do; `storage` must be empty and fresh.
async fn conformance(storage: Arc<dyn Storage>) {
    let storage = storage.as_ref();

    // Small and multi-part bodies come back byte-identical, with their size and type.
    for (len, chunk) in [
        (1_usize, 1_usize),
        (1000, 7),
        (20 * 1024 * 1024 + 13, 64 * 1024),
    ] {
        let key = ObjectKey::new_upload("clip.mp4");
        let bytes = test_bytes(len, len as u32);
        let info = storage
            .put(&key, stream_of(&bytes, chunk), PutOptions::default())
            .await
            .unwrap();
        assert_eq!(info.size_bytes, len as u64);
        assert_eq!(info.content_type, "video/mp4");
        let head = storage.head(&key).await.unwrap();
        assert_eq!(head, info);
        assert!(read_all(storage, &key).await == bytes, "{len} bytes differ");
    }

    // An empty body is a valid object when no minimum is asked for.
    let empty = ObjectKey::new_upload("empty.txt");
    storage
        .put(&empty, stream_of(&[], 1), PutOptions::default())
        .await
        .unwrap();
    assert_eq!(storage.head(&empty).await.unwrap().size_bytes, 0);
    assert!(read_all(storage, &empty).await.is_empty());

    // Never overwrite: the second put fails and the first object is intact.
    let key = ObjectKey::new_upload("once.bin");
    let first = test_bytes(5000, 1);
    storage
        .put(&key, stream_of(&first, 999), PutOptions::default())
        .await
        .unwrap();
    for len in [10, 9 * 1024 * 1024] {
        let again = storage
            .put(
                &key,
                stream_of(&test_bytes(len, 2), 4096),
                PutOptions::default(),
            )
            .await;
        assert!(
            matches!(again, Err(Error::AlreadyExists { .. })),
            "{again:?}"
        );
        assert!(read_all(storage, &key).await == first);
    }

    // Byte ranges.
    let ranged = |range| GetOptions::range(range);
    for (range, expected) in [
        (ByteRange::Bounded(10..20), 10..20),
        (ByteRange::Bounded(4990..9000), 4990..5000),
        (ByteRange::From(4000), 4000..5000),
        (ByteRange::Suffix(100), 4900..5000),
        (ByteRange::Suffix(9000), 0..5000),
    ] {
        let got = storage.get(&key, ranged(range.clone())).await.unwrap();
        assert_eq!(got.range, expected, "{range:?}");
        assert_eq!(got.info.size_bytes, 5000);
        let start = expected.start as usize;
        let end = expected.end as usize;
        assert!(collect(got.body).await == first[start..end], "{range:?}");
    }
    for range in [
        ByteRange::From(5000),
        ByteRange::Bounded(6000..7000),
        ByteRange::Bounded(5..5),
    ] {
        let got = storage.get(&key, ranged(range.clone())).await;
        assert!(
            matches!(
                got,
                Err(Error::RangeNotSatisfiable {
                    size_bytes: 5000,
                    ..
                })
            ),
            "{range:?}: {got:?}"
        );
    }

    // Size bounds: refused bodies leave nothing behind, small (one request) or large
    // (aborted after several parts).
    for len in [101, 20 * 1024 * 1024] {
        let key = ObjectKey::new_upload("big.bin");
        let max_bytes = (len - 1) as u64;
        let put = storage
            .put(
                &key,
                stream_of(&test_bytes(len, 3), 64 * 1024),
                PutOptions::size_range(0, max_bytes),
            )
            .await;
        assert!(matches!(put, Err(Error::TooLarge { .. })), "{put:?}");
        assert_absent(storage, &key).await;
    }
    let exact = ObjectKey::new_upload("exact.bin");
    storage
        .put(
            &exact,
            stream_of(&test_bytes(100, 4), 33),
            PutOptions::size_range(100, 100),
        )
        .await
        .unwrap();
    let small = ObjectKey::new_upload("small.bin");
    let put = storage
        .put(
            &small,
            stream_of(&test_bytes(99, 4), 33),
            PutOptions::size_range(100, 200),
        )
        .await;
    assert!(
        matches!(put, Err(Error::TooSmall { size_bytes: 99, .. })),
        "{put:?}"
    );
    assert_absent(storage, &small).await;

    // A body that fails half-way stores nothing.
    for head_len in [1000, 12 * 1024 * 1024] {
        let key = ObjectKey::new_upload("broken.bin");
        let good = Bytes::from(test_bytes(head_len, 5));
        let body = futures_util::stream::iter(vec![
            Ok(good),
            Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "client went away",
            )),
        ])
        .boxed();
        let put = storage.put(&key, body, PutOptions::default()).await;
        assert!(matches!(put, Err(Error::Body { .. })), "{put:?}");
        assert_absent(storage, &key).await;
    }

    // Delete, and deleting twice.
    storage.delete(&exact).await.unwrap();
    assert_absent(storage, &exact).await;
    storage.delete(&exact).await.unwrap();

    // Descriptors name a fresh upload key each time and carry every SigV4 POST field.
    let a = storage
        .upload_descriptor("../../My Clip.mp4")
        .await
        .unwrap();
    let b = storage
        .upload_descriptor("../../My Clip.mp4")
        .await
        .unwrap();
    assert_ne!(a.file, b.file);
    let key = ObjectKey::parse(&a.file).unwrap();
    assert!(
        a.file.starts_with("uploads/") && a.file.ends_with("/My_Clip.mp4"),
        "{}",
        a.file
    );
    assert_eq!(a.fields["key"], key.as_str());
    for field in [
        "bucket",
        "Policy",
        "X-Amz-Algorithm",
        "X-Amz-Credential",
        "X-Amz-Date",
        "X-Amz-Signature",
    ] {
        assert!(a.fields.contains_key(field), "{field} missing");
    }
    assert_eq!(a.fields["X-Amz-Algorithm"], "AWS4-HMAC-SHA256");
}

#[tokio::test]
async fn local_storage_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("data");
    let local = LocalStorage::open(&root, "http://127.0.0.1:9", LinkOptions::default()).unwrap();
    conformance(Arc::new(local.clone())).await;

    // Nothing but committed objects under uploads/ (no staging leftovers from refused puts),
    // and the secret is private to the owner.
    let staging = root.join(".staging");
    let leftovers = std::fs::read_dir(&staging).map(|d| d.count()).unwrap_or(0);
    assert_eq!(leftovers, 0, "staging files left behind");
    use std::os::unix::fs::PermissionsExt as _;
    let secret = std::fs::metadata(root.join(".signing-secret")).unwrap();
    assert_eq!(secret.permissions().mode() & 0o777, 0o600);
    assert_eq!(secret.len(), 32);

    // The same secret comes back on the next start: old links stay valid.
    let key = ObjectKey::new_upload("x.txt");
    let link = local
        .authority()
        .download_url(&key, time::OffsetDateTime::now_utc());
    // Staged files a crashed process left behind go away on the next start; fresh ones
    // (an upload in flight in another process) stay.
    std::fs::write(staging.join("abandoned"), b"x").unwrap();
    std::fs::write(staging.join("in-flight"), b"x").unwrap();
    let touched = std::process::Command::new("touch")
        .args(["-d", "2 days ago"])
        .arg(staging.join("abandoned"))
        .status()
        .unwrap();
    assert!(touched.success());
    let reopened = LocalStorage::open(&root, "http://127.0.0.1:9", LinkOptions::default()).unwrap();
    assert!(!staging.join("abandoned").exists());
    assert!(staging.join("in-flight").exists());
    let query = link.split_once('?').unwrap().1;
    let expires = query
        .split('&')
        .find_map(|p| p.strip_prefix("expires="))
        .unwrap();
    let sig = query
        .split('&')
        .find_map(|p| p.strip_prefix("sig="))
        .unwrap();
    let verified = reopened.authority().verify_download(
        key.as_str(),
        expires,
        sig,
        time::OffsetDateTime::now_utc(),
    );
    assert_eq!(verified.ok(), Some(key));
}

#[tokio::test]
async fn s3_storage_conforms() {
    let server = S3sServer::start();
    let s3 = server.storage(LinkOptions::default());
    conformance(Arc::new(s3.clone())).await;

    // The presigned GET serves the bytes; a tampered one is refused by the server.
    let key = ObjectKey::new_upload("out.mp4");
    let bytes = test_bytes(3000, 9);
    s3.put(&key, stream_of(&bytes, 1000), PutOptions::default())
        .await
        .unwrap();
    let url = s3.download_url(&key).await.unwrap();
    let (status, body) = support::curl_get(&url);
    assert_eq!(status, 200);
    assert!(body == bytes);
    let tampered = support::flip_last_hex_digit(&url);
    assert_eq!(support::curl_get(&tampered).0, 403);
}
