//! boto3's `generate_presigned_post` as an independent SigV4 POST signer: same inputs, same
//! policy and signature as ours; its descriptors pass our local verifier.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

use base64::Engine as _;
use caption_store::{
    LinkOptions, LocalAuthority, ObjectKey, PostCredentials, PostPolicyRequest, S3ErrorCode,
    presigned_post,
};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// `CAPTIONS_PYTHON`, else the venv of scripts/setup-python, else `python3`; it must import
/// boto3.
fn python() -> PathBuf {
    let venv = PathBuf::from(std::env::var_os("HOME").unwrap())
        .join(".cache/caption-engine/venv/bin/python");
    let python = std::env::var_os("CAPTIONS_PYTHON")
        .map(PathBuf::from)
        .or_else(|| venv.is_file().then_some(venv))
        .unwrap_or_else(|| PathBuf::from("python3"));
    let ok = Command::new(&python)
        .args(["-c", "import boto3"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "{} cannot import boto3: run scripts/setup-python (or set CAPTIONS_PYTHON)",
        python.display()
    );
    python
}

const SCRIPT: &str = r#"
import json, sys, boto3
key_id, secret, region, bucket, key, max_bytes, ttl = sys.argv[1:8]
s3 = boto3.client("s3", region_name=region, aws_access_key_id=key_id,
                  aws_secret_access_key=secret, endpoint_url="http://127.0.0.1:9")
post = s3.generate_presigned_post(bucket, key,
    Conditions=[["content-length-range", 1, int(max_bytes)]], ExpiresIn=int(ttl))
print(json.dumps(post))
"#;

/// boto3's descriptor fields for these inputs, signed now.
fn boto3_post(
    credentials: &PostCredentials,
    region: &str,
    bucket: &str,
    key: &str,
    max_bytes: u64,
) -> serde_json::Map<String, serde_json::Value> {
    let output = Command::new(python())
        .args(["-c", SCRIPT])
        .args([&credentials.access_key_id, &credentials.secret_access_key])
        .args([region, bucket, key, &max_bytes.to_string(), "900"])
        .output()
        .unwrap();
    assert!(output.status.success(), "boto3 failed: {output:?}");
    let post: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    post["fields"].as_object().unwrap().clone()
}

fn field<'a>(fields: &'a serde_json::Map<String, serde_json::Value>, name: &str) -> &'a str {
    fields[name].as_str().unwrap()
}

#[test]
fn our_signer_matches_boto3_for_the_same_inputs() {
    let credentials = PostCredentials {
        access_key_id: "AKIDEXAMPLE".into(),
        secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
        session_token: None,
    };
    let key = "uploads/3f2c8a7e-0000-4000-8000-000000000001/clip.mp4";
    let fields = boto3_post(&credentials, "eu-west-3", "captions-bucket", key, 4 << 30);

    // boto3 picked the signing time; take it and the expiration from its own policy.
    let issued_at = time::PrimitiveDateTime::parse(
        field(&fields, "x-amz-date"),
        time::macros::format_description!("[year][month][day]T[hour][minute][second]Z"),
    )
    .unwrap()
    .assume_utc();
    let policy_json = base64::engine::general_purpose::STANDARD
        .decode(field(&fields, "policy"))
        .unwrap();
    let policy: serde_json::Value = serde_json::from_slice(&policy_json).unwrap();
    let expires_at =
        OffsetDateTime::parse(policy["expiration"].as_str().unwrap(), &Rfc3339).unwrap();

    let ours = presigned_post(
        &credentials,
        &PostPolicyRequest {
            url: "http://127.0.0.1:9/captions-bucket",
            bucket: "captions-bucket",
            region: "eu-west-3",
            key,
            max_bytes: 4 << 30,
            issued_at,
            ttl: (expires_at - issued_at).try_into().unwrap(),
        },
    );
    assert_eq!(
        ours.fields["Policy"],
        field(&fields, "policy"),
        "policy text differs"
    );
    assert_eq!(
        ours.fields["X-Amz-Signature"],
        field(&fields, "x-amz-signature")
    );
    assert_eq!(
        ours.fields["X-Amz-Credential"],
        field(&fields, "x-amz-credential")
    );
    assert_eq!(ours.fields["X-Amz-Date"], field(&fields, "x-amz-date"));
    assert_eq!(
        ours.fields["X-Amz-Algorithm"],
        field(&fields, "x-amz-algorithm")
    );
    assert_eq!(ours.fields["key"], field(&fields, "key"));
}

#[test]
fn local_verifier_accepts_boto3_descriptors_and_refuses_forged_ones() {
    let authority =
        LocalAuthority::from_secret([7; 32], "http://127.0.0.1:9", LinkOptions::default());
    let key = ObjectKey::new_upload("clip.mp4");
    let as_form = |fields: serde_json::Map<String, serde_json::Value>| -> Vec<(String, String)> {
        fields
            .into_iter()
            .map(|(k, v)| (k, v.as_str().unwrap().to_owned()))
            .collect()
    };
    let credentials = authority.post_credentials();
    let form = as_form(boto3_post(
        &credentials,
        "local",
        "local",
        key.as_str(),
        1000,
    ));
    let accepted = authority
        .post_verifier()
        .verify(&form, Some("clip.mp4"), OffsetDateTime::now_utc())
        .unwrap();
    assert_eq!(
        (accepted.key, accepted.min_bytes, accepted.max_bytes),
        (key.clone(), 1, 1000)
    );

    // The right key id with a guessed secret.
    let forged = PostCredentials {
        secret_access_key: "0".repeat(64),
        ..credentials
    };
    let form = as_form(boto3_post(&forged, "local", "local", key.as_str(), 1000));
    let refused =
        authority
            .post_verifier()
            .verify(&form, Some("clip.mp4"), OffsetDateTime::now_utc());
    assert_eq!(
        refused.err().map(|e| e.code),
        Some(S3ErrorCode::SignatureDoesNotMatch)
    );
}
