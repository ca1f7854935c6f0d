//! The local upload and download routes through a real socket, with curl as the browser.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use caption_http::{StorageRoutes, storage_router};
use caption_store::{
    Error, GetOptions, LOCAL_BUCKET, LOCAL_REGION, LinkOptions, LocalStorage, ObjectKey,
    PostPolicyRequest, Storage, UploadDescriptor, presigned_post,
};
use caption_testkit::upload;
use futures_util::StreamExt as _;

const MAX_BYTES: u64 = 64 * 1024;

struct Service {
    storage: LocalStorage,
    root: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

async fn start() -> Service {
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let root = dir.path().join("data");
    let links = LinkOptions::default().max_upload_bytes(MAX_BYTES);
    let storage = LocalStorage::open(&root, &base, links).unwrap();
    let router = storage_router(StorageRoutes {
        storage: Arc::new(storage.clone()),
        authority: storage.authority().clone(),
    });
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    Service {
        storage,
        root,
        _dir: dir,
    }
}

fn form_fields(descriptor: &UploadDescriptor) -> Vec<(String, String)> {
    upload::form_fields(&descriptor.fields)
}

/// Runs curl off the async runtime (the server lives on it): status, body, lowercase headers.
async fn curl_bytes(args: Vec<String>) -> (u16, Vec<u8>, String) {
    tokio::task::spawn_blocking(move || {
        let headers = tempfile::NamedTempFile::new().unwrap();
        let body = tempfile::NamedTempFile::new().unwrap();
        let output = Command::new("curl")
            .args(["-sS", "-o"])
            .arg(body.path())
            .arg("-D")
            .arg(headers.path())
            .args(["-w", "%{http_code}"])
            .args(&args)
            .output()
            .expect("curl must be installed");
        assert!(output.status.success(), "curl {args:?} failed: {output:?}");
        let status = String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .unwrap();
        let headers = std::fs::read_to_string(headers.path()).unwrap();
        (
            status,
            std::fs::read(body.path()).unwrap(),
            headers.to_ascii_lowercase(),
        )
    })
    .await
    .unwrap()
}

async fn curl(args: Vec<String>) -> (u16, String, String) {
    let (status, body, headers) = curl_bytes(args).await;
    (status, String::from_utf8_lossy(&body).into_owned(), headers)
}

/// POSTs the fields then the file, exactly like a browser form, off the async runtime (the
/// server lives on it).
async fn curl_form(url: &str, fields: &[(String, String)], file: &Path) -> (u16, String) {
    let (url, fields, file) = (url.to_owned(), fields.to_vec(), file.to_owned());
    tokio::task::spawn_blocking(move || {
        upload::curl_form(&url, &fields, &file, "video/mp4").unwrap()
    })
    .await
    .unwrap()
}

fn s3_code(body: &str) -> String {
    upload::s3_error_code(body).to_owned()
}

fn test_bytes(len: usize, seed: u8) -> Vec<u8> {
    upload::test_bytes(len, seed.into())
}

async fn assert_not_stored(service: &Service, key: &str) {
    let key = ObjectKey::parse(key).unwrap();
    assert!(
        matches!(
            service.storage.head(&key).await,
            Err(Error::NotFound { .. })
        ),
        "{key} stored"
    );
    assert!(!service.root.join(key.as_str()).exists());
    let staged = std::fs::read_dir(service.root.join(".staging"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(staged, 0, "a staged upload was left behind");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_form_upload_round_trips_and_download_serves_ranges() {
    let service = start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("My Clip.mp4");
    let bytes = test_bytes(50_000, 3);
    std::fs::write(&file, &bytes).unwrap();

    let descriptor = service
        .storage
        .upload_descriptor("My Clip.mp4")
        .await
        .unwrap();
    assert!(
        descriptor.url.ends_with("/v1/storage/upload"),
        "{}",
        descriptor.url
    );
    let (status, body) = curl_form(&descriptor.url, &form_fields(&descriptor), &file).await;
    assert_eq!(status, 204, "{body}");

    let key = ObjectKey::parse(&descriptor.file).unwrap();
    let got = service
        .storage
        .get(&key, GetOptions::default())
        .await
        .unwrap();
    let mut read = Vec::new();
    let mut stream = got.body;
    while let Some(chunk) = stream.next().await {
        read.extend_from_slice(&chunk.unwrap());
    }
    assert!(read == bytes, "read back differs");

    // The descriptor is spent: the same form again cannot overwrite the object.
    let (status, body) = curl_form(&descriptor.url, &form_fields(&descriptor), &file).await;
    assert_eq!(
        (status, s3_code(&body).as_str()),
        (412, "PreconditionFailed"),
        "{body}"
    );

    // Download: whole file with type and length, a range, an unsatisfiable range.
    let link = service.storage.download_url(&key).await.unwrap();
    let (status, body, headers) = curl_bytes(vec![link.clone()]).await;
    assert_eq!(status, 200);
    assert!(body == bytes, "download differs");
    assert!(headers.contains("content-type: video/mp4"), "{headers}");
    assert!(headers.contains("content-length: 50000"), "{headers}");
    assert!(headers.contains("accept-ranges: bytes"), "{headers}");
    let (status, body, headers) =
        curl_bytes(vec!["-r".into(), "100-199".into(), link.clone()]).await;
    assert_eq!(status, 206);
    assert!(
        headers.contains("content-range: bytes 100-199/50000"),
        "{headers}"
    );
    assert!(headers.contains("content-length: 100"), "{headers}");
    assert!(body == bytes[100..200]);
    let (status, body, headers) = curl(vec!["-r".into(), "60000-".into(), link.clone()]).await;
    assert_eq!((status, s3_code(&body).as_str()), (416, "InvalidRange"));
    assert!(
        headers.contains("content-range: bytes */50000"),
        "{headers}"
    );

    // Refused links: tampered signature, another key, expired.
    let flipped = if link.ends_with('0') { '1' } else { '0' };
    let (status, body, _) = curl(vec![format!("{}{flipped}", &link[..link.len() - 1])]).await;
    assert_eq!(
        (status, s3_code(&body).as_str()),
        (403, "SignatureDoesNotMatch")
    );
    let other = ObjectKey::new_upload("x.mp4");
    let (status, body, _) = curl(vec![link.replace(key.as_str(), other.as_str())]).await;
    assert_eq!(
        (status, s3_code(&body).as_str()),
        (403, "SignatureDoesNotMatch")
    );
    let past = time::OffsetDateTime::now_utc() - Duration::from_secs(2 * 24 * 3600);
    let expired = service.storage.authority().download_url(&key, past);
    let (status, body, _) = curl(vec![expired]).await;
    assert_eq!(
        (status, s3_code(&body).as_str()),
        (403, "AccessDenied"),
        "{body}"
    );
    let (status, _, _) = curl(vec![link.split_once('?').unwrap().0.to_owned()]).await;
    assert_eq!(status, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tampered_expired_misdirected_oversized_and_incomplete_forms_are_refused() {
    let service = start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("clip.mp4");
    std::fs::write(&file, test_bytes(10_000, 1)).unwrap();
    let fresh = || async { service.storage.upload_descriptor("clip.mp4").await.unwrap() };

    let d = fresh().await;
    let sig = &d.fields["X-Amz-Signature"];
    let flipped = format!(
        "{}{}",
        if sig.starts_with('0') { "1" } else { "0" },
        &sig[1..]
    );
    let (status, body) = curl_form(
        &d.url,
        &upload::with_field(&form_fields(&d), "X-Amz-Signature", &flipped),
        &file,
    )
    .await;
    assert_eq!(
        (status, s3_code(&body).as_str()),
        (403, "SignatureDoesNotMatch"),
        "{body}"
    );
    assert_not_stored(&service, &d.file).await;

    let d = fresh().await;
    let other = ObjectKey::new_upload("other.mp4");
    let (status, body) = curl_form(
        &d.url,
        &upload::with_field(&form_fields(&d), "key", other.as_str()),
        &file,
    )
    .await;
    assert_eq!(
        (status, s3_code(&body).as_str()),
        (403, "AccessDenied"),
        "{body}"
    );
    assert_not_stored(&service, other.as_str()).await;
    assert_not_stored(&service, &d.file).await;

    let d = fresh().await;
    let big = dir.path().join("big.bin");
    std::fs::write(&big, test_bytes(MAX_BYTES as usize + 1, 2)).unwrap();
    let (status, body) = curl_form(&d.url, &form_fields(&d), &big).await;
    assert_eq!(
        (status, s3_code(&body).as_str()),
        (400, "EntityTooLarge"),
        "{body}"
    );
    assert_not_stored(&service, &d.file).await;

    let d = fresh().await;
    let empty = dir.path().join("empty.bin");
    std::fs::write(&empty, b"").unwrap();
    let (status, body) = curl_form(&d.url, &form_fields(&d), &empty).await;
    assert_eq!(
        (status, s3_code(&body).as_str()),
        (400, "EntityTooSmall"),
        "{body}"
    );
    assert_not_stored(&service, &d.file).await;

    for (missing, code) in [
        ("X-Amz-Signature", "InvalidArgument"),
        ("key", "InvalidArgument"),
        ("Policy", "AccessDenied"),
        ("X-Amz-Date", "InvalidArgument"),
    ] {
        let d = fresh().await;
        let fields: Vec<_> = form_fields(&d)
            .into_iter()
            .filter(|(k, _)| k != missing)
            .collect();
        let (status, body) = curl_form(&d.url, &fields, &file).await;
        assert_eq!(s3_code(&body), code, "{missing}: {body}");
        assert!((400..500).contains(&status));
        assert_not_stored(&service, &d.file).await;
    }

    let d = fresh().await;
    let mut fields = form_fields(&d);
    fields.push(("Content-Type".into(), "text/html".into()));
    let (status, body) = curl_form(&d.url, &fields, &file).await;
    assert_eq!(
        (status, s3_code(&body).as_str()),
        (403, "AccessDenied"),
        "{body}"
    );
    assert_not_stored(&service, &d.file).await;

    // Expired: a descriptor signed with the real secret, issued long enough ago.
    let key = ObjectKey::new_upload("late.mp4");
    let expired = presigned_post(
        &service.storage.authority().post_credentials(),
        &PostPolicyRequest {
            url: &d.url,
            bucket: LOCAL_BUCKET,
            region: LOCAL_REGION,
            key: key.as_str(),
            max_bytes: MAX_BYTES,
            issued_at: time::OffsetDateTime::now_utc() - Duration::from_secs(120),
            ttl: Duration::from_secs(60),
        },
    );
    let (status, body) = curl_form(&expired.url, &form_fields(&expired), &file).await;
    assert_eq!(
        (status, s3_code(&body).as_str()),
        (403, "AccessDenied"),
        "{body}"
    );
    assert!(body.contains("expired"), "{body}");
    assert_not_stored(&service, key.as_str()).await;

    // Not a form at all.
    let (status, body, _) = curl(vec!["-d".into(), "x=1".into(), d.url.clone()]).await;
    assert_eq!(
        (status, s3_code(&body).as_str()),
        (400, "MalformedPOSTRequest"),
        "{body}"
    );
}
