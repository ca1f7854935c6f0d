//! AWS Signature V4 for browser POST uploads: the policy document and its signature.
//!
//! The string to sign is the base64 policy itself (no canonical request), so the whole
//! algorithm is the signing-key chain plus one HMAC. The policy is serialised the way boto3's
//! `generate_presigned_post` does (`json.dumps` separators, ASCII escapes, condition order),
//! so the same inputs give byte-identical fields in both.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use time::OffsetDateTime;
use time::macros::format_description;

use caption_core::UploadDescriptor;

type HmacSha256 = Hmac<Sha256>;

/// The only algorithm SigV4 POST knows.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

pub(crate) fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    // HMAC takes keys of any length, so `new_from_slice` cannot fail here.
    let mut mac = match HmacSha256::new_from_slice(key) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC accepts every key length"),
    };
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// `kSigning` = HMAC chain over "AWS4"+secret, the date (`YYYYMMDD`), the region, "s3",
/// "aws4_request".
pub fn signing_key(secret_access_key: &str, date_yyyymmdd: &str, region: &str) -> [u8; 32] {
    let k_secret = format!("AWS4{secret_access_key}");
    let k_date = hmac_sha256(k_secret.as_bytes(), date_yyyymmdd.as_bytes());
    let k_region = hmac_sha256(&k_date, region.as_bytes());
    let k_service = hmac_sha256(&k_region, b"s3");
    hmac_sha256(&k_service, b"aws4_request")
}

/// The `X-Amz-Signature` of a base64 policy: lowercase hex HMAC under the signing key.
pub fn sign_policy(signing_key: &[u8; 32], policy_base64: &str) -> String {
    hex::encode(hmac_sha256(signing_key, policy_base64.as_bytes()))
}

/// Checks a hex signature against a base64 policy in constant time.
pub(crate) fn verify_policy_signature(
    signing_key: &[u8; 32],
    policy_base64: &str,
    signature_hex: &str,
) -> bool {
    let Ok(signature) = hex::decode(signature_hex) else {
        return false;
    };
    let Ok(mut mac) = HmacSha256::new_from_slice(signing_key) else {
        return false;
    };
    mac.update(policy_base64.as_bytes());
    mac.verify_slice(&signature).is_ok()
}

/// The key pair (and session token of temporary credentials) a policy is signed with.
#[derive(Clone, PartialEq, Eq)]
pub struct PostCredentials {
    /// The access key id, written into the policy's credential.
    pub access_key_id: String,
    /// The secret the signing key is derived from (never logged).
    pub secret_access_key: String,
    /// The session token of temporary credentials, sent as `x-amz-security-token`.
    pub session_token: Option<String>,
}

impl fmt::Debug for PostCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// What one upload descriptor admits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostPolicyRequest<'a> {
    /// Where the form is posted (the bucket URL, or the service's upload route).
    pub url: &'a str,
    /// The bucket the policy names.
    pub bucket: &'a str,
    /// The region the signature is scoped to.
    pub region: &'a str,
    /// The exact key; the policy admits no other.
    pub key: &'a str,
    /// `content-length-range` is `1..=max_bytes`.
    pub max_bytes: u64,
    /// The signing time (`X-Amz-Date`); the policy expires `ttl` later.
    pub issued_at: OffsetDateTime,
    /// How long the policy stays valid.
    pub ttl: Duration,
}

/// `YYYYMMDD'T'HHMMSS'Z'`.
pub(crate) fn amz_date(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    at.format(format_description!(
        "[year][month][day]T[hour][minute][second]Z"
    ))
    .unwrap_or_default()
}

/// ISO 8601 without fraction, as boto3 and the JS SDK write `expiration`.
fn expiration(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    at.format(format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second]Z"
    ))
    .unwrap_or_default()
}

/// A JSON string literal as Python's `json.dumps` writes it (non-ASCII as `\uXXXX`).
fn py_json_string(value: &str) -> String {
    let json = serde_json::Value::String(value.to_owned()).to_string();
    let mut out = String::with_capacity(json.len());
    for ch in json.chars() {
        if ch.is_ascii() {
            out.push(ch);
        } else {
            let mut units = [0_u16; 2];
            for unit in ch.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// Builds the policy, signs it and returns the descriptor (`file` = the key).
pub fn presigned_post(
    credentials: &PostCredentials,
    request: &PostPolicyRequest<'_>,
) -> UploadDescriptor {
    let date_time = amz_date(request.issued_at);
    let date = &date_time[..8];
    let credential = format!(
        "{}/{date}/{}/s3/aws4_request",
        credentials.access_key_id, request.region
    );
    let expires_at = request.issued_at + request.ttl;

    let mut conditions = vec![
        format!("[\"content-length-range\", 1, {}]", request.max_bytes),
        exact("bucket", request.bucket),
        exact("key", request.key),
        exact("x-amz-algorithm", ALGORITHM),
        exact("x-amz-credential", &credential),
        exact("x-amz-date", &date_time),
    ];
    if let Some(token) = &credentials.session_token {
        conditions.push(exact("x-amz-security-token", token));
    }
    let policy = format!(
        "{{\"expiration\": {}, \"conditions\": [{}]}}",
        py_json_string(&expiration(expires_at)),
        conditions.join(", ")
    );
    let policy_base64 = base64::engine::general_purpose::STANDARD.encode(policy);
    let key = signing_key(&credentials.secret_access_key, date, request.region);
    let signature = sign_policy(&key, &policy_base64);

    let mut fields = BTreeMap::new();
    fields.insert("key".to_owned(), request.key.to_owned());
    fields.insert("bucket".to_owned(), request.bucket.to_owned());
    fields.insert("Policy".to_owned(), policy_base64);
    fields.insert("X-Amz-Algorithm".to_owned(), ALGORITHM.to_owned());
    fields.insert("X-Amz-Credential".to_owned(), credential);
    fields.insert("X-Amz-Date".to_owned(), date_time);
    fields.insert("X-Amz-Signature".to_owned(), signature);
    if let Some(token) = &credentials.session_token {
        fields.insert("X-Amz-Security-Token".to_owned(), token.clone());
    }
    UploadDescriptor {
        file: request.key.to_owned(),
        url: request.url.to_owned(),
        fields,
    }
}

fn exact(name: &str, value: &str) -> String {
    format!("{{{}: {}}}", py_json_string(name), py_json_string(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AWS's documented example, `sigv4-post-example` (the policy as base64, CRLF lines).
    const AWS_POLICY_BASE64: &str = "eyAiZXhwaXJhdGlvbiI6ICIyMDE1LTEyLTMwVDEyOjAwOjAwLjAwMFoiLA0KICAiY29uZGl0aW9ucyI6IFsNCiAgICB7ImJ1Y2tldCI6ICJzaWd2NGV4YW1wbGVidWNrZXQifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRrZXkiLCAidXNlci91c2VyMS8iXSwNCiAgICB7ImFjbCI6ICJwdWJsaWMtcmVhZCJ9LA0KICAgIHsic3VjY2Vzc19hY3Rpb25fcmVkaXJlY3QiOiAiaHR0cDovL3NpZ3Y0ZXhhbXBsZWJ1Y2tldC5zMy5hbWF6b25hd3MuY29tL3N1Y2Nlc3NmdWxfdXBsb2FkLmh0bWwifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRDb250ZW50LVR5cGUiLCAiaW1hZ2UvIl0sDQogICAgeyJ4LWFtei1tZXRhLXV1aWQiOiAiMTQzNjUxMjM2NTEyNzQifSwNCiAgICB7IngtYW16LXNlcnZlci1zaWRlLWVuY3J5cHRpb24iOiAiQUVTMjU2In0sDQogICAgWyJzdGFydHMtd2l0aCIsICIkeC1hbXotbWV0YS10YWciLCAiIl0sDQoNCiAgICB7IngtYW16LWNyZWRlbnRpYWwiOiAiQUtJQUlPU0ZPRE5ON0VYQU1QTEUvMjAxNTEyMjkvdXMtZWFzdC0xL3MzL2F3czRfcmVxdWVzdCJ9LA0KICAgIHsieC1hbXotYWxnb3JpdGhtIjogIkFXUzQtSE1BQy1TSEEyNTYifSwNCiAgICB7IngtYW16LWRhdGUiOiAiMjAxNTEyMjlUMDAwMDAwWiIgfQ0KICBdDQp9";

    #[test]
    fn reproduces_the_aws_documented_post_example() {
        let key = signing_key(
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "20151229",
            "us-east-1",
        );
        assert_eq!(
            hex::encode(key),
            "cbcef1ebeaefc82cce6530b9f0a9ae598846065f5c5bae0674bd5ebc4ba52d28"
        );
        let signature = sign_policy(&key, AWS_POLICY_BASE64);
        assert_eq!(
            signature,
            "8afdbf4008c03f22c2cd3cdb72e4afbb1f6a588f3255ac628749a66d7f09699e"
        );
        assert!(verify_policy_signature(&key, AWS_POLICY_BASE64, &signature));
        let mut tampered = signature.into_bytes();
        tampered[0] = if tampered[0] == b'8' { b'9' } else { b'8' };
        let tampered = String::from_utf8(tampered).unwrap_or_default();
        assert!(!verify_policy_signature(&key, AWS_POLICY_BASE64, &tampered));
    }

    /// The same inputs boto3 1.44 `generate_presigned_post` was given (vector 2 of the
    /// storage note); the test `boto3_interop` re-derives this live from boto3 itself.
    #[test]
    fn matches_a_boto3_presigned_post_byte_for_byte() {
        let credentials = PostCredentials {
            access_key_id: "AK".into(),
            secret_access_key: "SK".into(),
            session_token: None,
        };
        let issued_at = time::macros::datetime!(2026-11-22 06:25:03 UTC);
        let descriptor = presigned_post(
            &credentials,
            &PostPolicyRequest {
                url: "http://127.0.0.1:1/captions-test",
                bucket: "captions-test",
                region: "us-east-1",
                key: "uploads/abc",
                max_bytes: 1024,
                issued_at,
                ttl: Duration::from_secs(300),
            },
        );
        assert_eq!(
            descriptor.fields["Policy"],
            "eyJleHBpcmF0aW9uIjogIjIwMjYtMTEtMjJUMDY6MzA6MDNaIiwgImNvbmRpdGlvbnMiOiBbWyJjb250ZW50LWxlbmd0aC1yYW5nZSIsIDEsIDEwMjRdLCB7ImJ1Y2tldCI6ICJjYXB0aW9ucy10ZXN0In0sIHsia2V5IjogInVwbG9hZHMvYWJjIn0sIHsieC1hbXotYWxnb3JpdGhtIjogIkFXUzQtSE1BQy1TSEEyNTYifSwgeyJ4LWFtei1jcmVkZW50aWFsIjogIkFLLzIwMjYxMTIyL3VzLWVhc3QtMS9zMy9hd3M0X3JlcXVlc3QifSwgeyJ4LWFtei1kYXRlIjogIjIwMjYxMTIyVDA2MjUwM1oifV19"
        );
        assert_eq!(
            descriptor.fields["X-Amz-Signature"],
            "fe5ebca4fa1e6448dcf34bb7879fe564faf4a0283f4c4733424d79698633eb35"
        );
        assert_eq!(
            descriptor.fields["X-Amz-Credential"],
            "AK/20261122/us-east-1/s3/aws4_request"
        );
        assert_eq!(descriptor.fields["X-Amz-Date"], "20261122T062503Z");
        assert_eq!(descriptor.file, "uploads/abc");
    }

    #[test]
    fn json_strings_are_escaped_like_python() {
        assert_eq!(py_json_string("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(py_json_string("é😀"), r#""\u00e9\ud83d\ude00""#);
    }
}
