//! Server side of SigV4 browser POST uploads: what S3 checks before it stores a file.
//!
//! Checking the HMAC alone is not enough (peers that stopped there let any descriptor upload
//! any size to any key): every condition is evaluated and every submitted field must be
//! covered by one.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::key::ObjectKey;
use crate::s3_error::{S3Error, S3ErrorCode};
use crate::sigv4::{ALGORITHM, signing_key, verify_policy_signature};

/// Fields a policy need not mention (S3's list).
fn exempt_from_coverage(name: &str) -> bool {
    matches!(name, "x-amz-signature" | "file" | "policy") || name.starts_with("x-ignore-")
}

/// Checks POST forms signed for one local "bucket".
#[derive(Clone)]
pub struct PostPolicyVerifier {
    access_key_id: String,
    secret_access_key: String,
    region: String,
    bucket: String,
    max_upload_bytes: u64,
}

impl std::fmt::Debug for PostPolicyVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostPolicyVerifier")
            .field("access_key_id", &self.access_key_id)
            .field("region", &self.region)
            .field("bucket", &self.bucket)
            .field("max_upload_bytes", &self.max_upload_bytes)
            .finish_non_exhaustive()
    }
}

/// A form that passed every check: where the file goes and how big it may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptedUpload {
    /// The key the policy names.
    pub key: ObjectKey,
    /// Smallest file the policy admits, bytes.
    pub min_bytes: u64,
    /// Largest file the policy admits, bytes.
    pub max_bytes: u64,
}

enum Condition {
    Eq { field: String, value: String },
    StartsWith { field: String, prefix: String },
    ContentLengthRange { min: u64, max: u64 },
}

impl PostPolicyVerifier {
    /// `max_upload_bytes` caps every upload, whatever the policy says.
    pub fn new(
        access_key_id: impl Into<String>,
        secret_access_key: impl Into<String>,
        region: impl Into<String>,
        bucket: impl Into<String>,
        max_upload_bytes: u64,
    ) -> Self {
        Self {
            access_key_id: access_key_id.into(),
            secret_access_key: secret_access_key.into(),
            region: region.into(),
            bucket: bucket.into(),
            max_upload_bytes,
        }
    }

    /// Checks the form fields sent before the file (`fields` in the order received, names as
    /// sent; `file_name` is the file part's file name, for `${filename}` in `key`).
    pub fn verify(
        &self,
        fields: &[(String, String)],
        file_name: Option<&str>,
        now: OffsetDateTime,
    ) -> Result<AcceptedUpload, S3Error> {
        let mut form = BTreeMap::new();
        for (name, value) in fields {
            let name = name.to_ascii_lowercase();
            if form.insert(name.clone(), value.as_str()).is_some() {
                return Err(invalid_argument(format!("Duplicate form field '{name}'")));
            }
        }
        let Some(policy_base64) = form.get("policy").copied() else {
            return Err(S3Error::new(
                S3ErrorCode::AccessDenied,
                "Bucket POST must be signed: the form has no 'Policy' field",
            ));
        };
        let required = |name: &str| {
            form.get(name).copied().ok_or_else(|| {
                invalid_argument(format!("Bucket POST must contain a field named '{name}'"))
            })
        };
        let algorithm = required("x-amz-algorithm")?;
        let credential = required("x-amz-credential")?;
        let amz_date = required("x-amz-date")?;
        let signature = required("x-amz-signature")?;
        let key_template = required("key")?;

        if algorithm != ALGORITHM {
            return Err(invalid_argument(format!(
                "X-Amz-Algorithm only supports '{ALGORITHM}'"
            )));
        }
        let scope: Vec<&str> = credential.split('/').collect();
        let [key_id, date, region, service, terminator] = scope[..] else {
            return Err(invalid_argument("X-Amz-Credential is malformed"));
        };
        if key_id != self.access_key_id {
            return Err(S3Error::new(
                S3ErrorCode::InvalidAccessKeyId,
                "The AWS Access Key Id you provided does not exist in our records.",
            ));
        }
        if region != self.region || service != "s3" || terminator != "aws4_request" {
            return Err(invalid_argument(format!(
                "X-Amz-Credential scope is wrong; expecting region '{}', service 's3'",
                self.region
            )));
        }
        if amz_date.len() != 16 || !amz_date.starts_with(date) {
            return Err(invalid_argument(
                "X-Amz-Date must be YYYYMMDDTHHMMSSZ on the credential's date",
            ));
        }

        let signing = signing_key(&self.secret_access_key, date, &self.region);
        if !verify_policy_signature(&signing, policy_base64, signature) {
            return Err(S3Error::new(
                S3ErrorCode::SignatureDoesNotMatch,
                "The request signature we calculated does not match the signature you provided.",
            ));
        }

        // Only now, with the policy known to be ours, is it worth parsing.
        let policy = parse_policy(policy_base64)?;
        if now >= policy.expiration {
            return Err(access_denied(
                "Invalid according to Policy: Policy expired.",
            ));
        }

        let key_text = match file_name {
            Some(file_name) => key_template.replace("${filename}", file_name),
            None => key_template.to_owned(),
        };
        if let Some(bucket) = form.get("bucket")
            && *bucket != self.bucket
        {
            return Err(access_denied(
                "Invalid according to Policy: bucket does not match",
            ));
        }
        let value_of = |field: &str| -> &str {
            match field {
                // The bucket is the one the form was posted to, whatever the form says.
                "bucket" => &self.bucket,
                "key" => &key_text,
                other => form.get(other).copied().unwrap_or(""),
            }
        };

        let mut covered = std::collections::BTreeSet::new();
        let mut min_bytes = 0_u64;
        let mut max_bytes = self.max_upload_bytes;
        for condition in &policy.conditions {
            match condition {
                Condition::Eq { field, value } => {
                    if value_of(field) != value {
                        return Err(condition_failed(&format!(
                            "[\"eq\", \"${field}\", {value:?}]"
                        )));
                    }
                    covered.insert(field.as_str());
                }
                Condition::StartsWith { field, prefix } => {
                    if !value_of(field).starts_with(prefix.as_str()) {
                        return Err(condition_failed(&format!(
                            "[\"starts-with\", \"${field}\", {prefix:?}]"
                        )));
                    }
                    covered.insert(field.as_str());
                }
                Condition::ContentLengthRange { min, max } => {
                    min_bytes = min_bytes.max(*min);
                    max_bytes = max_bytes.min(*max);
                }
            }
        }
        // SigV4 POST requires the policy itself to pin these three to the form's values.
        for field in ["x-amz-algorithm", "x-amz-credential", "x-amz-date"] {
            if !policy
                .conditions
                .iter()
                .any(|c| matches!(c, Condition::Eq { field: f, .. } if f == field))
            {
                return Err(access_denied(format!(
                    "Invalid according to Policy: Policy Condition failed: [\"eq\", \"${field}\"] missing"
                )));
            }
        }
        if let Some(extra) = form
            .keys()
            .find(|name| !exempt_from_coverage(name) && !covered.contains(name.as_str()))
        {
            return Err(access_denied(format!(
                "Invalid according to Policy: Extra input fields: {extra}"
            )));
        }

        let key = ObjectKey::parse(&key_text)
            .map_err(|_| invalid_argument("The key is not one this store hands out"))?;
        Ok(AcceptedUpload {
            key,
            min_bytes,
            max_bytes,
        })
    }
}

struct Policy {
    expiration: OffsetDateTime,
    conditions: Vec<Condition>,
}

fn parse_policy(policy_base64: &str) -> Result<Policy, S3Error> {
    let bad = |why: &str| {
        S3Error::new(
            S3ErrorCode::InvalidPolicyDocument,
            format!("Invalid Policy: {why}"),
        )
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(policy_base64.trim())
        .map_err(|_| bad("not base64"))?;
    let document: Value = serde_json::from_slice(&bytes).map_err(|_| bad("not JSON"))?;
    let expiration = document
        .get("expiration")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("Policy missing expiration"))?;
    let expiration = OffsetDateTime::parse(expiration, &Rfc3339)
        .map_err(|_| bad("Invalid 'expiration' value"))?;
    let list = document
        .get("conditions")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("Policy missing conditions"))?;
    let mut conditions = Vec::with_capacity(list.len());
    for item in list {
        match item {
            Value::Object(map) => {
                for (field, value) in map {
                    let value = value
                        .as_str()
                        .ok_or_else(|| bad("condition value is not a string"))?;
                    conditions.push(Condition::Eq {
                        field: field.to_ascii_lowercase(),
                        value: value.to_owned(),
                    });
                }
            }
            Value::Array(parts) => {
                let op = parts
                    .first()
                    .and_then(Value::as_str)
                    .map(str::to_ascii_lowercase)
                    .ok_or_else(|| bad("condition without operator"))?;
                if parts.len() != 3 {
                    return Err(bad("condition must have three elements"));
                }
                match op.as_str() {
                    "eq" | "starts-with" => {
                        let field = parts[1]
                            .as_str()
                            .and_then(|f| f.strip_prefix('$'))
                            .ok_or_else(|| bad("condition field must start with '$'"))?
                            .to_ascii_lowercase();
                        let value = parts[2]
                            .as_str()
                            .ok_or_else(|| bad("condition value is not a string"))?
                            .to_owned();
                        conditions.push(if op == "eq" {
                            Condition::Eq { field, value }
                        } else {
                            Condition::StartsWith {
                                field,
                                prefix: value,
                            }
                        });
                    }
                    "content-length-range" => {
                        let min =
                            as_u64(&parts[1]).ok_or_else(|| bad("bad content-length-range"))?;
                        let max =
                            as_u64(&parts[2]).ok_or_else(|| bad("bad content-length-range"))?;
                        conditions.push(Condition::ContentLengthRange { min, max });
                    }
                    _ => return Err(bad("unknown condition operator")),
                }
            }
            _ => return Err(bad("condition is neither an object nor a list")),
        }
    }
    Ok(Policy {
        expiration,
        conditions,
    })
}

fn as_u64(value: &Value) -> Option<u64> {
    value
        .as_u64()
        .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
}

fn invalid_argument(message: impl Into<String>) -> S3Error {
    S3Error::new(S3ErrorCode::InvalidArgument, message)
}

fn access_denied(message: impl Into<String>) -> S3Error {
    S3Error::new(S3ErrorCode::AccessDenied, message)
}

fn condition_failed(condition: &str) -> S3Error {
    access_denied(format!(
        "Invalid according to Policy: Policy Condition failed: {condition}"
    ))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::sigv4::{PostCredentials, PostPolicyRequest, presigned_post};

    const NOW: OffsetDateTime = time::macros::datetime!(2026-11-22 06:25:03 UTC);

    fn verifier() -> PostPolicyVerifier {
        PostPolicyVerifier::new("local", "s3cr3t", "local", "local", 1 << 20)
    }

    fn form(max_bytes: u64) -> Vec<(String, String)> {
        let descriptor = presigned_post(
            &PostCredentials {
                access_key_id: "local".into(),
                secret_access_key: "s3cr3t".into(),
                session_token: None,
            },
            &PostPolicyRequest {
                url: "http://127.0.0.1/v1/storage/upload",
                bucket: "local",
                region: "local",
                key: "uploads/abc/clip.mp4",
                max_bytes,
                issued_at: NOW,
                ttl: Duration::from_secs(600),
            },
        );
        descriptor.fields.into_iter().collect()
    }

    fn code(result: Result<AcceptedUpload, S3Error>) -> Option<S3ErrorCode> {
        result.err().map(|e| e.code)
    }

    #[test]
    fn accepts_its_own_descriptor_with_any_field_name_case() {
        let fields: Vec<_> = form(4096)
            .into_iter()
            .map(|(k, v)| (k.to_ascii_uppercase(), v))
            .collect();
        let accepted = verifier().verify(&fields, Some("clip.mp4"), NOW).ok();
        assert_eq!(
            accepted,
            Some(AcceptedUpload {
                key: ObjectKey::parse("uploads/abc/clip.mp4").unwrap_or_else(|e| panic!("{e}")),
                min_bytes: 1,
                max_bytes: 4096,
            })
        );
    }

    #[test]
    fn server_limit_caps_a_generous_policy() {
        let accepted = verifier().verify(&form(u64::MAX), None, NOW);
        assert_eq!(accepted.map(|a| a.max_bytes).ok(), Some(1 << 20));
    }

    #[test]
    fn refuses_every_kind_of_tampering() {
        let v = verifier();
        let set = |name: &str, value: &str| {
            let mut f = form(4096);
            for (k, v) in &mut f {
                if k == name {
                    *v = value.to_owned();
                }
            }
            f
        };
        let without = |name: &str| {
            let mut f = form(4096);
            f.retain(|(k, _)| k != name);
            f
        };
        let sig = form(4096)
            .into_iter()
            .find(|(k, _)| k == "X-Amz-Signature")
            .map(|(_, v)| v)
            .unwrap_or_default();
        let flipped = format!(
            "{}{}",
            if sig.starts_with('0') { "1" } else { "0" },
            &sig[1..]
        );
        assert_eq!(
            code(v.verify(&set("X-Amz-Signature", &flipped), None, NOW)),
            Some(S3ErrorCode::SignatureDoesNotMatch)
        );
        assert_eq!(
            code(v.verify(&set("X-Amz-Signature", "zz"), None, NOW)),
            Some(S3ErrorCode::SignatureDoesNotMatch)
        );
        assert_eq!(
            code(v.verify(&set("key", "uploads/abc/other.mp4"), None, NOW)),
            Some(S3ErrorCode::AccessDenied)
        );
        assert_eq!(
            code(v.verify(&set("bucket", "elsewhere"), None, NOW)),
            Some(S3ErrorCode::AccessDenied)
        );
        assert_eq!(
            code(v.verify(&set("X-Amz-Date", "20261122T062504Z"), None, NOW)),
            Some(S3ErrorCode::AccessDenied)
        );
        assert_eq!(
            code(v.verify(&form(4096), None, NOW + Duration::from_secs(601))),
            Some(S3ErrorCode::AccessDenied)
        );
        for missing in ["key", "X-Amz-Signature", "X-Amz-Date", "X-Amz-Credential"] {
            assert_eq!(
                code(v.verify(&without(missing), None, NOW)),
                Some(S3ErrorCode::InvalidArgument),
                "{missing}"
            );
        }
        assert_eq!(
            code(v.verify(&without("Policy"), None, NOW)),
            Some(S3ErrorCode::AccessDenied)
        );
        let mut extra = form(4096);
        extra.push(("Content-Type".into(), "text/html".into()));
        assert_eq!(
            code(v.verify(&extra, None, NOW)),
            Some(S3ErrorCode::AccessDenied)
        );
        let mut ignored = form(4096);
        ignored.push(("x-ignore-me".into(), "1".into()));
        assert!(v.verify(&ignored, None, NOW).is_ok());
        let mut duplicate = form(4096);
        duplicate.push(("KEY".into(), "uploads/abc/clip.mp4".into()));
        assert_eq!(
            code(v.verify(&duplicate, None, NOW)),
            Some(S3ErrorCode::InvalidArgument)
        );
        let other_secret = PostPolicyVerifier::new("local", "other", "local", "local", 1 << 20);
        assert_eq!(
            code(other_secret.verify(&form(4096), None, NOW)),
            Some(S3ErrorCode::SignatureDoesNotMatch)
        );
    }

    #[test]
    fn a_re_signed_policy_is_still_checked_condition_by_condition() {
        // Someone holding the secret (boto3 in the interop test) may sign any policy; a
        // starts-with on the key and ${filename} must then work as on S3.
        let policy = r#"{"expiration": "2026-11-22T07:00:00.000Z", "conditions": [{"bucket": "local"}, ["starts-with", "$key", "uploads/u1/"], ["content-length-range", 10, 20], ["starts-with", "$Content-Type", "video/"], {"x-amz-algorithm": "AWS4-HMAC-SHA256"}, {"x-amz-credential": "local/20261122/local/s3/aws4_request"}, {"x-amz-date": "20261122T062503Z"}]}"#;
        let policy_base64 = base64::engine::general_purpose::STANDARD.encode(policy);
        let signature =
            crate::sigv4::sign_policy(&signing_key("s3cr3t", "20261122", "local"), &policy_base64);
        let fields = |key: &str, content_type: &str| {
            vec![
                ("key".to_owned(), key.to_owned()),
                ("Content-Type".to_owned(), content_type.to_owned()),
                ("policy".to_owned(), policy_base64.clone()),
                ("x-amz-algorithm".to_owned(), ALGORITHM.to_owned()),
                (
                    "x-amz-credential".to_owned(),
                    "local/20261122/local/s3/aws4_request".to_owned(),
                ),
                ("x-amz-date".to_owned(), "20261122T062503Z".to_owned()),
                ("x-amz-signature".to_owned(), signature.clone()),
            ]
        };
        let v = verifier();
        let accepted = v.verify(
            &fields("uploads/u1/${filename}", "video/mp4"),
            Some("a.mp4"),
            NOW,
        );
        assert_eq!(
            accepted.as_ref().map(|a| a.key.as_str()).ok(),
            Some("uploads/u1/a.mp4")
        );
        assert_eq!(
            accepted.as_ref().map(|a| (a.min_bytes, a.max_bytes)).ok(),
            Some((10, 20))
        );
        assert_eq!(
            code(v.verify(&fields("uploads/u2/a.mp4", "video/mp4"), None, NOW)),
            Some(S3ErrorCode::AccessDenied)
        );
        assert_eq!(
            code(v.verify(&fields("uploads/u1/a.mp4", "text/html"), None, NOW)),
            Some(S3ErrorCode::AccessDenied)
        );
        assert_eq!(
            code(v.verify(&fields("uploads/u1/../../x", "video/mp4"), None, NOW)),
            Some(S3ErrorCode::InvalidArgument)
        );
    }
}
