//! Browser uploads straight to S3 (a real s3s-fs that verifies POST policies) with the
//! descriptors this crate signs; every tampered form is refused and stores nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use caption_store::{
    Error, GetOptions, LinkOptions, ObjectKey, PostCredentials, PostPolicyRequest, Storage,
    presigned_post,
};
use caption_testkit::upload::{form_fields, with_field, without_field};
use support::{ACCESS_KEY, BUCKET, REGION, S3sServer, SECRET_KEY, collect, curl_form, s3_code};

fn fields(descriptor: &caption_store::UploadDescriptor) -> Vec<(String, String)> {
    form_fields(&descriptor.fields)
}

async fn assert_not_stored(storage: &dyn Storage, server: &S3sServer, key: &str) {
    let key = ObjectKey::parse(key).unwrap();
    assert!(
        matches!(storage.head(&key).await, Err(Error::NotFound { .. })),
        "{key} stored"
    );
    assert!(!server.object_file(key.as_str()).exists(), "{key} on disk");
}

#[tokio::test]
async fn browser_form_upload_to_s3_round_trips_and_tampering_is_refused() {
    let server = S3sServer::start();
    let links = LinkOptions::default().max_upload_bytes(64 * 1024);
    let storage = server.storage(links);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("clip.mp4");
    let bytes = support::test_bytes(50_000, 7);
    std::fs::write(&file, &bytes).unwrap();

    // The happy path: descriptor, curl -F exactly like a browser form, read back.
    let descriptor = storage.upload_descriptor("clip.mp4").await.unwrap();
    assert_eq!(descriptor.url, format!("{}/{BUCKET}", server.endpoint));
    let (status, body) = curl_form(&descriptor.url, &fields(&descriptor), &file);
    assert_eq!(status, 204, "{body}");
    let key = ObjectKey::parse(&descriptor.file).unwrap();
    let got = storage.get(&key, GetOptions::default()).await.unwrap();
    assert_eq!(got.info.size_bytes, bytes.len() as u64);
    assert!(collect(got.body).await == bytes, "read back differs");

    // Each refusal below uses a fresh descriptor, so "nothing stored" is about its own key.
    let fresh = || async { storage.upload_descriptor("clip.mp4").await.unwrap() };

    let d = fresh().await;
    let f = fields(&d);
    let signature = d.fields["X-Amz-Signature"].clone();
    let (status, body) = curl_form(
        &d.url,
        &with_field(
            &f,
            "X-Amz-Signature",
            &support::flip_last_hex_digit(&signature),
        ),
        &file,
    );
    assert_eq!(
        (status, s3_code(&body)),
        (403, "SignatureDoesNotMatch"),
        "{body}"
    );
    assert_not_stored(&storage, &server, &d.file).await;

    // Another key than the one signed for.
    let d = fresh().await;
    let other = ObjectKey::new_upload("other.mp4");
    let (status, body) = curl_form(
        &d.url,
        &with_field(&fields(&d), "key", other.as_str()),
        &file,
    );
    assert!(
        (400..500).contains(&status) && !s3_code(&body).is_empty(),
        "{status} {body}"
    );
    assert_not_stored(&storage, &server, other.as_str()).await;
    assert_not_stored(&storage, &server, &d.file).await;

    // Over the size limit (64 KiB).
    let d = fresh().await;
    let big = dir.path().join("big.bin");
    std::fs::write(&big, support::test_bytes(64 * 1024 + 1, 8)).unwrap();
    let (status, body) = curl_form(&d.url, &fields(&d), &big);
    assert_eq!((status, s3_code(&body)), (400, "EntityTooLarge"), "{body}");
    assert_not_stored(&storage, &server, &d.file).await;

    // Missing fields.
    for missing in ["X-Amz-Signature", "Policy", "X-Amz-Credential"] {
        let d = fresh().await;
        let (status, body) = curl_form(&d.url, &without_field(&fields(&d), missing), &file);
        assert!(
            (400..500).contains(&status) && !s3_code(&body).is_empty(),
            "{missing}: {status} {body}"
        );
        assert_not_stored(&storage, &server, &d.file).await;
    }

    // An extra field the policy does not cover.
    let d = fresh().await;
    let mut extra = fields(&d);
    extra.push(("Content-Type".into(), "text/html".into()));
    let (status, body) = curl_form(&d.url, &extra, &file);
    assert_eq!((status, s3_code(&body)), (403, "AccessDenied"), "{body}");
    assert_not_stored(&storage, &server, &d.file).await;

    // An expired policy, signed by the same code with a past issue time.
    let key = ObjectKey::new_upload("late.mp4");
    let expired = presigned_post(
        &PostCredentials {
            access_key_id: ACCESS_KEY.into(),
            secret_access_key: SECRET_KEY.into(),
            session_token: None,
        },
        &PostPolicyRequest {
            url: &d.url,
            bucket: BUCKET,
            region: REGION,
            key: key.as_str(),
            max_bytes: 64 * 1024,
            issued_at: time::OffsetDateTime::now_utc() - Duration::from_secs(120),
            ttl: Duration::from_secs(60),
        },
    );
    let (status, body) = curl_form(&expired.url, &fields(&expired), &file);
    assert_eq!((status, s3_code(&body)), (403, "AccessDenied"), "{body}");
    assert_not_stored(&storage, &server, key.as_str()).await;
}
